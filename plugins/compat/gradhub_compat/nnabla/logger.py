"""nnabla's logger: ``from gradhub_compat.nnabla import logger`` (``from nnabla import logger``).

``logger`` is the standard :class:`logging.Logger` named ``"nnabla"`` (the same object as
``logging.getLogger("nnabla")``, as nnabla's), which the monitors and data iterators of this
layer write to. ``log_console_level`` (``logging.INFO``) and ``log_console_format``
(``"%(asctime)s [%(name)s][%(levelname)s]: %(message)s"``) are nnabla 1.39's defaults.

Importing changes nothing else: nnabla's import calls ``logging.basicConfig`` on the root
logger (and reads its configuration files); this module does not, so a program decides how its
logs are shown. To see them as nnabla prints them::

    import logging
    from gradhub_compat.nnabla.logger import log_console_format, log_console_level
    logging.basicConfig(level=log_console_level, format=log_console_format)

which prints ``2026-11-27 15:29:32,007 [nnabla][INFO]: iter=2 {loss}=0.5``.

Example::

    >>> from gradhub_compat.nnabla import logger
    >>> logger.name, type(logger).__name__
    ('nnabla', 'Logger')
"""

from __future__ import annotations

import logging

__all__ = ["log_console_format", "log_console_level", "logger"]

#: nnabla 1.39's console level (``[LOG] log_console_level = INFO`` of its ``nnabla.conf``).
log_console_level: int = logging.INFO
#: nnabla 1.39's console format (``[LOG] log_console_format`` of its ``nnabla.conf``).
log_console_format: str = "%(asctime)s [%(name)s][%(levelname)s]: %(message)s"

#: The logger named ``"nnabla"``; its level, handlers and propagation are left as they are.
logger: logging.Logger = logging.getLogger("nnabla")

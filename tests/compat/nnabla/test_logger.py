"""``gradhub_compat.nnabla.logger``: the Logger named ``"nnabla"`` (``from ... import logger``
gives the Logger, as nnabla's), nnabla 1.39's console format, and an import that leaves the
global logging configuration alone."""

from __future__ import annotations

import logging
import subprocess
import sys

import gradhub_compat.nnabla as nn
from gradhub_compat.nnabla import logger
from gradhub_compat.nnabla.logger import log_console_format, log_console_level


def test_the_logger_is_the_standard_logger_named_nnabla() -> None:
    assert isinstance(logger, logging.Logger)
    assert logger is logging.getLogger("nnabla")
    assert nn.logger is logger  # nnabla.logger is the Logger too (its __init__ rebinds it)
    from gradhub_compat.nnabla.logger import logger as same

    assert same is logger


def test_console_level_and_format_are_nnabla_s() -> None:
    # nnabla 1.39: nnabla.conf [LOG] log_console_level = INFO, log_console_format = ...
    assert log_console_level == logging.INFO
    assert log_console_format == "%(asctime)s [%(name)s][%(levelname)s]: %(message)s"
    record = logger.makeRecord("nnabla", logging.INFO, __file__, 1, "iter=2 {loss}=0.5", (), None)
    line = logging.Formatter(log_console_format).format(record)
    # nnabla 1.39 prints "2026-11-27 15:29:32,007 [nnabla][INFO]: iter=2 {loss}=0.5"
    assert line.endswith(" [nnabla][INFO]: iter=2 {loss}=0.5")


def test_importing_leaves_the_logging_configuration_alone() -> None:
    code = (
        "import logging\n"
        "root = logging.getLogger()\n"
        "before = (root.level, list(root.handlers))\n"
        "import gradhub_compat.nnabla as nn\n"
        "import gradhub_compat.nnabla.monitor, gradhub_compat.nnabla.utils.data_iterator\n"
        "from gradhub_compat.nnabla import logger\n"
        "assert (root.level, list(root.handlers)) == before, (root.level, root.handlers)\n"
        "assert logger.level == logging.NOTSET and logger.handlers == [] and logger.propagate\n"
        "print('ok')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"

"""nnabla's test helper: ``from gradhub_compat.nnabla.testing import assert_allclose``.

Example::

    >>> import numpy as np
    >>> from gradhub_compat.nnabla.testing import assert_allclose
    >>> assert_allclose(np.float32(1.0000001), 1.0)   # within rtol=1e-5, atol=1e-6
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["assert_allclose"]


def assert_allclose(
    actual: Any,
    desired: Any,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    equal_nan: bool = True,
    err_msg: str = "",
    verbose: bool = True,
) -> None:
    r"""``numpy.testing.assert_allclose`` with ``numpy.allclose``'s tolerances, as nnabla's:
    :math:`|a - d| \le atol + rtol\,|d|` elementwise (rtol=1e-5, atol=1e-6)."""
    np.testing.assert_allclose(
        actual, desired, rtol=rtol, atol=atol, equal_nan=equal_nan, err_msg=err_msg, verbose=verbose
    )

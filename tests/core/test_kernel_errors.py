"""Errors raised inside kernels (numpy's ufunc errors, integer overflow) name the function."""

from __future__ import annotations

import gradhub as gh
import numpy as np
import pytest

V = gh.Variable


def test_kernel_errors_of_private_numpy_types_still_name_the_function() -> None:
    """numpy's ufunc errors cannot be rebuilt from a message; the wrapper raised a TypeError about
    a missing constructor argument instead of naming the function."""
    with pytest.raises(TypeError, match=r"add2\(\) \(Add2"):
        gh.Variable([1.0]) + "a"


def test_integer_overflow_in_a_kernel_names_the_function() -> None:
    u = V(np.array([1, 2], np.uint8), need_grad=False)
    with pytest.raises(OverflowError, match=r"add_scalar\(\).*300"):
        u + 300

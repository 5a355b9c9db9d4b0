"""``x @ y`` and BatchMatmul: dispatch from the operator and the errors naming the mismatched
dims."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest


def _v(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


V = gh.Variable


def raises(fn: Callable[[], Any], exc: type[BaseException], pattern: str) -> None:
    with pytest.raises(exc, match=pattern):
        fn()


# -- linear algebra ----------------------------------------------------------------------------


def test_matmul_operator_dispatches_to_batch_matmul() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    va, vb = _v(a), _v(b)
    y = va @ vb
    assert y.creator is not None and y.creator.fdef.name == "BatchMatmul"
    np.testing.assert_allclose(y.d, a @ b)
    g = rng.standard_normal((2, 3, 5))
    y.backward(g)
    np.testing.assert_allclose(va.g, g @ b.T)
    np.testing.assert_allclose(vb.g, np.einsum("bij,bik->jk", a, g))  # summed over the batch
    v = rng.standard_normal(4)
    np.testing.assert_allclose((_v(v) @ vb).d, v @ b)
    np.testing.assert_allclose((a @ _v(v)).d, a @ v)  # ndarray @ Variable


def test_batch_matmul_mismatch_names_the_function() -> None:
    with pytest.raises(ValueError, match="batch_matmul"):
        F.batch_matmul(_v(np.zeros((2, 3))), _v(np.zeros((2, 3))))


# -- linalg -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sa, sb, ta, tb",
    [
        ((3, 2, 4), (2, 4, 5), False, False),
        ((3, 2, 4), (2, 5, 4), False, True),
        ((2, 3, 2, 4), (2, 4, 5), False, False),
    ],
)
def test_batch_matmul_names_the_batch_dims(
    sa: tuple[int, ...], sb: tuple[int, ...], ta: bool, tb: bool
) -> None:
    with pytest.raises(ValueError) as info:
        F.batch_matmul(V(np.ones(sa)), V(np.ones(sb)), transpose_a=ta, transpose_b=tb)
    msg = str(info.value)
    assert f"batch dims of a {sa} and b {sb} do not broadcast" in msg, msg
    assert "remapped" not in msg


def test_batch_matmul_contracted_dims_named_with_the_shapes_given() -> None:
    raises(
        lambda: F.batch_matmul(V(np.ones((3, 2, 4))), V(np.ones((3, 4, 5))), transpose_b=True),
        ValueError,
        re.escape(
            "contracted dims differ: a (3, 2, 4) (transpose_a=False) and "
            "b (3, 4, 5) (transpose_b=True)"
        ),
    )

"""Variable data: assigning a scalar to ``.d`` fills, ``bool()`` of one and of several elements."""

from __future__ import annotations

import gradhub as gh
import numpy as np
import pytest

V = gh.Variable


def test_assigning_a_scalar_to_d_fills() -> None:
    """x.d = 1.0 turned a (2, 3) Variable into a 0-d one; it fills, as nnabla's x.d = 0."""
    x = gh.Variable(np.zeros((2, 3)))
    y = (x * x).sum()
    x.d = 1.0
    assert x.shape == (2, 3)
    y.forward()
    assert float(y.d) == 6.0


# -- bool(Variable) follows numpy ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (np.array([0.0]), False),
        (np.array([2.0]), True),
        (np.array(0.0), False),
        (np.array(-1.5), True),
        (np.array([[0]], np.int32), False),
        (np.array([True]), True),
    ],
    ids=repr,
)
def test_bool_of_a_single_element(data: np.ndarray, expected: bool) -> None:
    assert bool(V(data, need_grad=False)) is expected
    assert bool(V(data, need_grad=False)) is bool(data)


@pytest.mark.parametrize("shape", [(2,), (0,), (2, 3)])
def test_bool_of_several_elements_is_ambiguous(shape: tuple[int, ...]) -> None:
    with pytest.raises(
        ValueError,
        match=r"truth value of a Variable with \d+ elements .*"
        r"is ambiguous",
    ):
        bool(V(np.zeros(shape)))

"""Variable data: assigning a scalar to ``.d`` fills, ``bool()`` of one and of several elements,
only numeric data is taken (by the constructor and the ``.d``/``.g`` setters), and iteration."""

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


# -- only numeric data ----------------------------------------------------------------------------

_NOT_NUMERIC = [
    (None, "None"),
    (np.array([None, None]), "data of dtype object"),
    (np.array([1.0, None], dtype=object), "data of dtype object"),
    (["1", "2"], "data of dtype <U1"),
    (np.array(["1", "2"]), "data of dtype <U1"),
    ("a", "data of dtype <U1"),
    (np.array([b"1", b"2"]), "data of dtype |S1"),
    (
        np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"),
        r"data of dtype datetime64\[D\]",
    ),
]


@pytest.mark.parametrize(
    ("attr", "value", "what"),
    # (x.g = None clears the gradient)
    [("d", v, w) for v, w in _NOT_NUMERIC]
    + [("g", v, w) for v, w in _NOT_NUMERIC if v is not None],
)
def test_setters_take_only_numeric_data(value: object, what: str, attr: str) -> None:
    """``x.d = None`` gave [nan nan], object arrays holding None became NaN and strings were read
    as numbers: everything that was not complex went through ``astype``."""
    x = V(np.array([1.0, 2.0]))
    x.g = np.array([3.0, 4.0])
    with pytest.raises(
        TypeError,
        match=rf"Variable\.{attr}: expected numeric data \(bool, integer or floating-point\), "
        rf"got {what}",
    ):
        setattr(x, attr, value)
    np.testing.assert_array_equal(x.d, [1.0, 2.0])  # nothing changed
    np.testing.assert_array_equal(x.g, [3.0, 4.0])


@pytest.mark.parametrize(
    "value", [[1, 0], [True, False], np.array([1, 0], np.uint8), np.float16(1.0), 1, np.int64(1)]
)
def test_setters_still_take_bool_integer_and_float_data(value: object) -> None:
    x = V(np.array([0.0, 0.0]))
    x.d = value
    x.g = value
    expected = np.broadcast_to(np.asarray(value, dtype=np.float64), (2,))
    np.testing.assert_array_equal(x.d, expected)
    np.testing.assert_array_equal(x.g, expected)
    assert x.d.dtype == x.g.dtype == np.float64


@pytest.mark.parametrize(("value", "what"), [v for v in _NOT_NUMERIC if v[0] is not None])
def test_variables_of_objects_or_strings_are_refused(value: object, what: str) -> None:
    """An object-dtype Variable was accepted, and an object-dtype output was taken as "needs no
    gradient": ``F.sum(w * Variable(np.array([1., 2.], dtype=object), need_grad=False))``
    left ``w.g`` as None without a word."""
    with pytest.raises(TypeError, match=rf"Variable\(data\): expected numeric data .*got {what}"):
        V(value, need_grad=False)


def test_object_operands_are_refused_naming_the_function_and_input() -> None:
    w = V(np.array([1.0, 2.0]))
    with pytest.raises(
        TypeError, match=r"mul2\(\): input 'x1': expected numeric data .*got data of dtype object"
    ):
        (w * np.array([1.0, 2.0], dtype=object)).sum()


def test_none_is_not_data() -> None:
    with pytest.raises(TypeError, match=r"Variable\(data\): expected numeric data .*got None"):
        V(None)


# -- iteration ------------------------------------------------------------------------------------


def test_iterating_a_0d_variable_raises_as_numpy() -> None:
    """``Variable`` had ``__len__``/``__getitem__`` but no ``__iter__``: ``list()`` of a 0-d
    Variable was ``[]`` (numpy raises TypeError)."""
    with pytest.raises(TypeError, match=r"iteration over a 0-d Variable \(shape \(\)\)"):
        list(V(3.0))
    with pytest.raises(TypeError):
        list(np.array(3.0))


def test_iterating_gives_differentiable_rows() -> None:
    x = V(np.arange(6.0).reshape(3, 2))
    rows = list(x)
    assert len(rows) == 3
    for i, r in enumerate(rows):
        np.testing.assert_array_equal(r.d, x.d[i])
    (rows[0] * 1.0 + rows[2] * 3.0).sum().backward()
    np.testing.assert_array_equal(x.g, [[1.0, 1.0], [0.0, 0.0], [3.0, 3.0]])

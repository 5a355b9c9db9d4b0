"""The mxnet layer's ``NDArray`` (``mx.nd``): constructors and dtypes, copies, indexing (integer
indices give views), arithmetic, ``copyto``, elementwise comparisons, reshape with mxnet's
special codes, ``as_in_context``, ``astype`` and ``asscalar``. Expected values come from mxnet
1.9.1.
"""

from __future__ import annotations

import re

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

_RESHAPES = [  # (codes, shape from mxnet 1.9.1 for an array of shape (2, 3, 4))
    ((0, -1), (2, 12)),
    ((-2,), (2, 3, 4)),
    ((-3, 4), (6, 4)),
    ((2, -4, 1, 3, 4), (2, 1, 3, 4)),
    ((2, -4, -1, 3, 4), (2, 1, 3, 4)),
    ((2, -4, 3, -1, 4), (2, 3, 1, 4)),
    ((-3, -2), (6, 4)),
    ((0, 0, 0), (2, 3, 4)),
    ((0, -3), (2, 12)),
    ((-1,), (24,)),
    ((4, -1), (4, 6)),
    ((2, -1, 2), (2, 6, 2)),
    ((0, 3, -1), (2, 3, 4)),
    ((2, -4, 1, 3, -2), (2, 1, 3, 4)),
    ((0, -4, 3, 1, -2), (2, 3, 1, 4)),
    ((-4, 2, 1, -2), (2, 1, 3, 4)),
    ((0, -2), (2, 3, 4)),
]


def re_tuple(t: tuple[int, ...]) -> str:
    import re

    return re.escape(str(t))


def test_ndarray_constructors_and_dtypes() -> None:
    a = mx.nd.array(np.array([1.0, 2.0]))  # float64 source -> float32, as mxnet
    assert a.dtype == np.float32 and a.shape == (2,) and a.size == 2 and a.ndim == 1
    assert mx.nd.array(mx.nd.array([1, 2], dtype=np.int32)).dtype == np.int32
    assert mx.nd.array([1, 2], dtype="float64").dtype == np.float64
    np.testing.assert_array_equal(mx.nd.ones((2, 3)).asnumpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(mx.nd.zeros(3).asnumpy(), np.zeros(3))
    np.testing.assert_array_equal(mx.nd.full((2,), 7).asnumpy(), [7.0, 7.0])
    assert mx.nd.empty((2, 2)).shape == (2, 2)
    assert mx.nd.ones(1).shape == (1,)
    assert mx.nd.ones(2).context == mx.cpu() and mx.nd.ones(2).ctx == mx.cpu(0)
    with pytest.raises(TypeError, match="ctx must be a Context"):
        mx.nd.ones(2, ctx="cpu")


def test_ndarray_copies_indexing_and_arithmetic() -> None:
    a = mx.nd.array([1.0, 2.0, 3.0])
    host = a.asnumpy()
    host[0] = 100.0
    assert a.asnumpy()[0] == 1.0  # asnumpy copies
    b = a.copy()
    b[:] = 5
    np.testing.assert_array_equal(a.asnumpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(b.asnumpy(), [5.0, 5.0, 5.0])
    a[1:] = mx.nd.array([7.0, 8.0])
    np.testing.assert_array_equal(a.asnumpy(), [1.0, 7.0, 8.0])
    a[0:1] = [0.5]
    np.testing.assert_array_equal((a * 2 + 1).asnumpy(), [2.0, 15.0, 17.0])
    np.testing.assert_array_equal((1 - a).asnumpy(), [0.5, -6.0, -7.0])
    np.testing.assert_array_equal((a / a).asnumpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal((2 / mx.nd.array([4.0])).asnumpy(), [0.5])
    np.testing.assert_array_equal((a**2).asnumpy(), [0.25, 49.0, 64.0])
    np.testing.assert_array_equal((2 ** mx.nd.array([3.0])).asnumpy(), [8.0])
    np.testing.assert_array_equal((-a + a - a).asnumpy(), -a.asnumpy())
    assert (a * 2).dtype == np.float32
    c = mx.nd.ones(2)
    c += 1
    c *= 3
    c -= 1
    c /= 5
    np.testing.assert_allclose(c.asnumpy(), [1.0, 1.0])
    assert mx.nd.array([3.5]).asscalar() == 3.5
    with pytest.raises(ValueError, match="asscalar"):
        a.asscalar()
    assert a[1].asscalar() == 7.0 and len(a) == 3
    assert a.reshape(3, 1).shape == (3, 1) and a.reshape((1, 3)).shape == (1, 3)
    assert mx.nd.ones((2, 3)).T.shape == (3, 2)
    assert a.astype(np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(a), a.asnumpy())
    assert re.search(r"<NDArray 3 @cpu\(0\)>$", repr(a))
    assert "<NDArray 2x3 @cpu(0)>" in repr(mx.nd.ones((2, 3)))
    a.wait_to_read()


def test_ndarray_copyto() -> None:
    a = mx.nd.array([1.0, 2.0])
    dst = mx.nd.zeros(2)
    assert a.copyto(dst) is dst
    np.testing.assert_array_equal(dst.asnumpy(), [1.0, 2.0])
    c = a.copyto(mx.cpu())
    assert c is not a and c.context == mx.cpu()
    with pytest.raises(ValueError, match="shapes differ"):
        a.copyto(mx.nd.zeros(3))


@pytest.mark.parametrize(
    ("expr", "values"),
    [
        ("a == b", [1, 0]),
        ("a != b", [0, 1]),
        ("a < b", [0, 1]),
        ("a <= b", [1, 1]),
        ("a > b", [0, 0]),
        ("a >= b", [1, 0]),
        ("a == 1", [1, 0]),
        ("1 == a", [1, 0]),
        ("1 < a", [0, 1]),
        ("2 >= a", [1, 1]),
        ("a > 1.5", [0, 1]),
    ],
)
def test_comparisons_are_elementwise_in_the_arrays_dtype(expr: str, values: list[int]) -> None:
    env = {"a": mx.nd.array([1, 2]), "b": mx.nd.array([1, 3])}
    r = eval(expr, env)  # mxnet 1.9.1 values; float32 results
    assert isinstance(r, mx.NDArray) and r.dtype == np.float32
    np.testing.assert_array_equal(r.asnumpy(), values)


def test_comparisons_int_dtype_broadcasting_and_errors() -> None:
    i = mx.nd.array([1, 2], dtype="int32")
    r = i == 1.5  # mxnet 1.9.1: [1, 0] int32 (the scalar is converted to int32 first)
    assert r.dtype == np.int32 and r.asnumpy().tolist() == [1, 0]
    assert (i > 1.5).asnumpy().tolist() == [0, 1]
    a, c = mx.nd.array([1, 2]), mx.nd.array([[1], [2]])
    np.testing.assert_array_equal((a == c).asnumpy(), [[1, 0], [0, 1]])
    np.testing.assert_array_equal((a < c).asnumpy(), [[0, 0], [1, 0]])
    with pytest.raises(
        TypeError,
        match=r"NDArray ==: the operands have different dtypes "
        r"float32 and int32",
    ):
        _ = a == i
    for other in (None, "x", [1, 2], np.array([1, 2])):
        with pytest.raises(TypeError, match=r"NDArray ==: type .* not supported"):
            _ = a == other
    with pytest.raises(ValueError, match="truth value of an NDArray with multiple elements"):
        bool(a == a)
    assert bool(mx.nd.array([1])) and not bool(mx.nd.array([0])) and not bool(mx.nd.zeros(0))
    assert len({a, c}) == 2  # still hashable (as mxnet)


@pytest.mark.parametrize(("codes", "expect"), _RESHAPES)
def test_reshape_special_codes_as_mxnet(codes: tuple[int, ...], expect: tuple[int, ...]) -> None:
    assert mx.nd.zeros((2, 3, 4)).reshape(codes).shape == expect


def test_reshape_keywords_reverse_and_view() -> None:
    x = mx.nd.zeros((2, 3, 4))
    assert x.reshape(shape=(4, 6)).shape == (4, 6) and x.reshape(4, 6).shape == (4, 6)
    # mxnet 1.9.1 values
    assert x.reshape(shape=(-1, 0), reverse=True).shape == (6, 4)
    assert x.reshape(shape=(0, -1), reverse=True).shape == (3, 8)
    assert mx.nd.zeros((10, 5, 4)).reshape((-1, 0), reverse=True).shape == (50, 4)
    assert mx.nd.zeros((10, 5, 4)).reshape((-1, 0)).shape == (40, 5)
    y = x.reshape((0, -1))
    y[:] = 1  # a view, as mxnet
    assert x.asnumpy().sum() == 24
    with pytest.raises(TypeError, match="reshape: unknown keyword"):
        x.reshape(shape=(24,), order="F")


@pytest.mark.parametrize(
    "codes", [(-1, -1), (5, -1), (0, 0, 0, 0), (-5,), (-3,), (2, -4, 2, 2, 4), (-3, -3), (6, -2)]
)
def test_reshape_bad_codes_raise_naming_reshape_and_shape(codes: tuple[int, ...]) -> None:
    # every one of these raises in mxnet 1.9.1 too
    with pytest.raises(
        ValueError,
        match=r"NDArray.reshape: cannot reshape an array of shape "
        r"\(2, 3, 4\) into " + re_tuple(codes),
    ):
        mx.nd.zeros((2, 3, 4)).reshape(codes)


def test_integer_index_gives_a_one_element_view() -> None:
    x = mx.nd.array([1, 2, 3])
    e = x[1]
    assert e.shape == (1,)
    e[:] = 9  # mxnet 1.9.1: [1. 9. 3.]
    np.testing.assert_array_equal(x.asnumpy(), [1.0, 9.0, 3.0])
    m = mx.nd.array([[1, 2], [3, 4]])
    e2 = m[1, 0]
    assert e2.shape == (1,) and m[1].shape == (2,)
    e2[:] = 9
    m[-1, -1][:] = 7
    np.testing.assert_array_equal(m.asnumpy(), [[1.0, 2.0], [9.0, 7.0]])
    assert x[-1].asnumpy().tolist() == [3.0]
    with pytest.raises(IndexError):
        x[3]


def test_as_in_context_same_context_returns_the_array() -> None:
    x = mx.nd.array([1, 2, 3])
    y = x.as_in_context(mx.cpu())
    assert y is x and x.as_in_context(mx.cpu(0)) is x
    z = x.as_in_context(mx.cpu(1))
    assert z is not x and z.context == mx.cpu(1)
    z[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), [1.0, 2.0, 3.0])


def test_astype_copy_false_and_asscalar_type() -> None:
    x = mx.nd.array([3])
    assert x.astype("float32", copy=False) is x
    assert x.astype("float32") is not x
    y = x.astype("float64", copy=False)
    assert y is not x and y.dtype == np.float64
    s = x.asscalar()
    assert type(s) is np.float32 and s == 3.0
    i = mx.nd.array([3], dtype="int32").asscalar()
    assert type(i) is np.int32 and i == 3


def test_array_of_a_gradhub_variable_copies_its_values() -> None:
    # regression: mx.nd.array(gh.Variable(...)) raised numpy's "setting an array element with a
    # sequence"
    import gradhub as gh

    v = gh.Variable(np.array([1.0, 2.0]))
    a = mx.nd.array(v)
    np.testing.assert_array_equal(a.asnumpy(), [1.0, 2.0])
    assert a.dtype == np.float32


def test_results_that_mxnet_makes_new_arrays_do_not_alias_their_input() -> None:
    # regression: inside autograd.record() x.copy(), x.astype(same dtype) and x.T returned views
    # of x (the recorded Reshape, Cast and Transpose), mx.nd.split's parts were views always,
    # and a strided slice x[:, 1] was a view: writing into the result changed x, silently
    def fresh_x() -> mx.nd.NDArray:
        x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
        x.attach_grad()
        return x

    makers = {
        "copy": lambda x: x.copy(),
        "astype": lambda x: x.astype("float32"),
        "T": lambda x: x.T,
        "split": lambda x: mx.nd.split(x, 2, axis=1)[0],
    }
    for name, make in makers.items():
        for record in (True, False):
            x = fresh_x()
            if record:
                with mx.autograd.record():
                    y = make(x)
            else:
                y = make(x)
            y[:] = 0
            np.testing.assert_array_equal(x.asnumpy(), [[1, 2], [3, 4]], err_msg=f"{name}")
    x = fresh_x()
    s = x[:, 1]
    s[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), [[1, 2], [3, 4]])
    r = x[1]  # a contiguous slice is a view, as mxnet
    r[:] = 0
    np.testing.assert_array_equal(x.asnumpy(), [[1, 2], [0, 0]])
    # gradients through the copies are unchanged
    x = fresh_x()
    with mx.autograd.record():
        y = (x.T * x.copy().T).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * x.asnumpy())

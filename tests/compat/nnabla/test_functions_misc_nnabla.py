"""nnabla 1.39's small functions the layer composes or records itself: ``F.mish``, ``F.unlink``,
``F.assign``, ``F.bit_shift``, ``F.reduce``, ``F.vat_noise`` and ``F.get_current_context``."""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def _v(a: object, need_grad: bool = False, dtype: object = np.float32) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(a, dtype=dtype), need_grad=need_grad)


def _mish64(x: np.ndarray) -> np.ndarray:
    return x * np.tanh(np.log1p(np.exp(x)))


# -- mish ---------------------------------------------------------------------------------------


def test_mish_values_and_gradient_match_nnabla() -> None:
    x = _v([-30.0, -1.0, 0.5, 2.0], need_grad=True)
    y = F.mish(x)
    y.forward()
    y.backward()
    # nnabla 1.39
    np.testing.assert_allclose(y.d, [0.0, -0.3034014, 0.37524524, 1.943959], rtol=1e-5, atol=1e-11)
    np.testing.assert_allclose(
        x.g, [-2.7137105e-12, 5.9216756e-02, 8.8642442e-01, 1.0693181e00], rtol=1e-5
    )


def test_mish_large_input_has_gradient_one() -> None:
    # nnabla 1.39 gives NaN there (exp overflows in its kernel); the limit is 1
    x = _v([30.0, 100.0], need_grad=True)
    y = F.mish(x)
    y.backward()
    np.testing.assert_array_equal(y.d, [30.0, 100.0])
    np.testing.assert_allclose(x.g, [1.0, 1.0])


def test_mish_second_derivative_matches_finite_differences() -> None:
    xs = np.array([-1.0, 0.5, 2.0])
    x = _v(xs, need_grad=True)
    (g,) = nn.grad([F.sum(F.mish(x))], [x])
    x.g = 0
    F.sum(g).backward()
    h = 1e-4

    def d1(t: np.ndarray) -> np.ndarray:
        return (_mish64(t + h) - _mish64(t - h)) / (2 * h)

    np.testing.assert_allclose(g.d, d1(xs), rtol=1e-4)
    np.testing.assert_allclose(x.g, (d1(xs + h) - d1(xs - h)) / (2 * h), rtol=1e-3, atol=1e-4)


def test_mish_follows_new_data_on_forward() -> None:
    x = _v([0.0, 0.0])
    y = F.mish(x)
    x.d = np.array([1.0, -2.0])
    y.forward()
    np.testing.assert_allclose(y.d, _mish64(np.array([1.0, -2.0])), rtol=1e-6)


# -- unlink -------------------------------------------------------------------------------------


def test_unlink_passes_no_gradient() -> None:
    x = _v([-2.0, -0.5, 0.0, 1.0, 3.0], need_grad=True)
    u = F.unlink(x)
    z = F.sum(u * x)
    z.forward()
    z.backward()
    # nnabla 1.39: x.g = u = x (only the direct path), u.need_grad True, parent "Unlink"
    np.testing.assert_array_equal(x.g, [-2.0, -0.5, 0.0, 1.0, 3.0])
    assert u.need_grad
    assert u.parent.name == "Unlink"


def test_unlink_recomputes_on_forward() -> None:
    x = _v([1.0, 2.0])
    y = F.unlink(x) * 2.0
    x.d = np.array([5.0, 6.0])
    y.forward()
    np.testing.assert_array_equal(y.d, [10.0, 12.0])


# -- assign -------------------------------------------------------------------------------------


def test_assign_static_graph_as_nnabla() -> None:
    d = _v([1.0, 2.0, 3.0], need_grad=True)
    s = _v([10.0, 20.0, 30.0], need_grad=True)
    a = F.assign(d, s)
    # nnabla 1.39: building with auto_forward off leaves dst alone
    np.testing.assert_array_equal(d.d, [1.0, 2.0, 3.0])
    assert a.parent.name == "Assign"
    a.forward()
    np.testing.assert_array_equal(a.d, [10.0, 20.0, 30.0])
    np.testing.assert_array_equal(d.d, [10.0, 20.0, 30.0])
    w = _v([1.0, 2.0, 3.0])
    loss = F.sum(a * w)
    loss.forward()
    d.g = 0
    s.g = 0
    loss.backward()
    # nnabla 1.39: the gradient goes to dst only
    np.testing.assert_array_equal(d.g, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(s.g, [0.0, 0.0, 0.0])
    # a second run reads src's new data and assigns again
    s.d = np.array([7.0, 8.0, 9.0])
    loss.forward()
    np.testing.assert_array_equal(a.d, [7.0, 8.0, 9.0])
    np.testing.assert_array_equal(d.d, [7.0, 8.0, 9.0])
    d.d = np.zeros(3)
    loss.forward()
    np.testing.assert_array_equal(d.d, [7.0, 8.0, 9.0])
    np.testing.assert_array_equal(loss.d, 7.0 + 16.0 + 27.0)


def test_assign_with_auto_forward_assigns_at_build() -> None:
    s = _v([7.0, 8.0])
    with nn.auto_forward():
        d = _v([1.0, 2.0])
        a = F.assign(d, s)
        np.testing.assert_array_equal(d.d, [7.0, 8.0])
        np.testing.assert_array_equal(a.d, [7.0, 8.0])


def test_assign_refuses_other_shapes() -> None:
    with pytest.raises(ValueError, match=r"F\.assign"):
        F.assign(nn.Variable((3,)), nn.Variable((1,)))


# -- bit_shift ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "left", "right"),
    [
        # nnabla 1.39
        (np.uint8, [2, 16, 254, 0, 0, 0], [0, 0, 127, 0, 0, 0]),
        (np.uint16, [2, 16, 510, 3584, 0, 0], [0, 0, 127, 0, 0, 0]),
        (np.uint32, [2, 16, 510, 3584, 2147483648, 0], [0, 0, 127, 0, 0, 0]),
        (np.uint64, [2, 16, 510, 3584, 2147483648, 12884901888], [0, 0, 127, 0, 0, 0]),
    ],
)
def test_bit_shift_matches_nnabla(dtype: object, left: list[int], right: list[int]) -> None:
    x = _v([1, 2, 255, 7, 1, 3], dtype=dtype)
    s = _v([1, 3, 1, 9, 31, 32], dtype=dtype)
    yl = F.bit_shift(x, s, "LEFT")
    yr = F.bit_shift(x, s, "RIGHT")
    yl.forward()
    yr.forward()
    assert yl.d.dtype == dtype and yr.d.dtype == dtype
    np.testing.assert_array_equal(yl.d, left)
    np.testing.assert_array_equal(yr.d, right)


def test_bit_shift_broadcasts_and_recomputes() -> None:
    x = _v([[1, 65535], [3, 8]], dtype=np.uint16)
    s = _v([[1, 16]], dtype=np.uint16)
    y = F.bit_shift(x, s)
    y.forward()
    np.testing.assert_array_equal(y.d, [[2, 0], [6, 0]])  # nnabla 1.39
    r = F.bit_shift(x, s, "RIGHT")
    r.forward()
    np.testing.assert_array_equal(r.d, [[0, 0], [1, 0]])  # nnabla 1.39
    s.d = np.array([[2, 0]], np.uint16)
    y.forward()
    np.testing.assert_array_equal(y.d, [[4, 65535], [12, 8]])


def test_bit_shift_refuses_bad_input() -> None:
    with pytest.raises(TypeError, match=r"F\.bit_shift: x must hold unsigned"):
        F.bit_shift(_v([1, 2], dtype=np.int32), _v([1, 1], dtype=np.int32))
    with pytest.raises(ValueError, match="direction"):
        F.bit_shift(_v([1], dtype=np.uint8), _v([1], dtype=np.uint8), "UP")
    with pytest.raises(ValueError, match="number of axes"):
        F.bit_shift(_v([1, 2], dtype=np.uint8), _v([[1], [2]], dtype=np.uint8))


# -- reduce -------------------------------------------------------------------------------------


def test_reduce_is_sum_or_mean_with_deprecation_warning() -> None:
    x = _v(np.arange(6.0).reshape(2, 3), need_grad=True)
    with pytest.warns(DeprecationWarning, match="Deprecated API"):
        r = F.reduce(x, "sum")
    r.backward()
    assert r.shape == ()
    np.testing.assert_array_equal(r.d, 15.0)
    np.testing.assert_array_equal(x.g, np.ones((2, 3)))
    x.g = 0
    with pytest.warns(DeprecationWarning):
        m = F.reduce(x, "mean")
    m.backward()
    np.testing.assert_allclose(m.d, 2.5)
    np.testing.assert_allclose(x.g, np.full((2, 3), 1 / 6), rtol=1e-6)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match=r"F\.reduce"):
        F.reduce(x, "max")


# -- vat_noise ----------------------------------------------------------------------------------


def test_vat_noise_forward_and_backward_as_nnabla() -> None:
    x = _v([[3.0, 4.0, 0.0], [1e-4, 0.0, 0.0]], need_grad=True)
    w = nn.Variable((2, 3), need_grad=False)
    y = F.vat_noise(x, w, 1, 2.5)
    y.forward()
    # nnabla 1.39 (the 1e-8 in the second row's norm)
    np.testing.assert_allclose(y.d, [[1.5, 2.0, 0.0], [1.767767, 0.0, 0.0]], rtol=1e-6)
    y.backward(np.array([[1, 2, 3], [4, 5, 6]], np.float32))
    # nnabla 1.39: w's data is eps * dy, overwritten; no gradients
    np.testing.assert_array_equal(w.d, [[2.5, 5.0, 7.5], [10.0, 12.5, 15.0]])
    np.testing.assert_array_equal(x.g, np.zeros((2, 3)))
    np.testing.assert_array_equal(w.g, np.zeros((2, 3)))
    y.backward(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(w.d, np.full((2, 3), 2.5))


def test_vat_noise_random_rows_and_base_axis() -> None:
    rng = np.random.RandomState(0)
    a = rng.randn(2, 3, 4).astype(np.float32)
    x = _v(np.zeros((2, 3, 4)), need_grad=True)
    w = nn.Variable((2, 3, 4), need_grad=True)
    y = F.vat_noise(x, w, base_axis=2, eps=1.5)
    x.d = a
    y.forward()
    rows = a.reshape(6, 4).astype(np.float64)
    ref = 1.5 * rows / np.sqrt((rows**2).sum(1, keepdims=True) + 1e-8)
    np.testing.assert_allclose(y.d.reshape(6, 4), ref, rtol=1e-6)
    assert y.parent.name == "VATNoise"


def test_vat_noise_refuses_bad_arguments() -> None:
    x = nn.Variable((2, 3))
    with pytest.raises(ValueError, match=r"F\.vat_noise: w must have"):
        F.vat_noise(x, nn.Variable((6,)))
    with pytest.raises(ValueError, match="base_axis"):
        F.vat_noise(x, nn.Variable((2, 3)), base_axis=0)
    with pytest.raises(ValueError, match="base_axis"):
        F.vat_noise(x, nn.Variable((2, 3)), base_axis=2)
    # nnabla 1.39: TypeError "must be real number" for a string or None, NaN computed with
    for eps in ("a", None, [1.0]):
        with pytest.raises(TypeError, match=r"F\.vat_noise: eps must be a real number"):
            F.vat_noise(x, nn.Variable((2, 3)), eps=eps)
    with pytest.raises(ValueError, match=r"F\.vat_noise: eps must not be NaN"):
        F.vat_noise(x, nn.Variable((2, 3)), eps=float("nan"))
    y = F.vat_noise(_v([[3.0, 4.0]]), _v([[0.0, 0.0]]), eps=np.float64(2.0))
    y.forward()
    np.testing.assert_allclose(y.d, [[1.2, 1.6]], rtol=1e-6)  # nnabla 1.39


# -- get_current_context ------------------------------------------------------------------------


def test_get_current_context_is_the_front_ends() -> None:
    outer = F.get_current_context()
    assert outer is nn.get_current_context()
    ctx = nn.Context(["cpu:float"], "CpuCachedArray", "0")
    with nn.context_scope(ctx):
        inner = F.get_current_context()
        assert inner is nn.get_current_context()
        assert inner.array_class == "CpuCachedArray"
    assert F.get_current_context() is outer


def test_new_names_are_listed() -> None:
    names = dir(F)
    for n in ("mish", "unlink", "assign", "bit_shift", "reduce", "vat_noise"):
        assert n in names
    assert "get_current_context" in names


def test_vat_noise_nn_grad_writes_w_and_gives_zero() -> None:
    # nnabla 1.39 raises NotImplementedError here; the layer runs the same backward
    x = _v([[3.0, 4.0]], need_grad=True)
    w = nn.Variable((1, 2), need_grad=True)
    y = F.vat_noise(x, w, eps=2.0)
    (g,) = nn.grad([y], [x], grad_outputs=[np.array([[1.0, 3.0]])])
    np.testing.assert_array_equal(w.d, [[2.0, 6.0]])
    np.testing.assert_array_equal(g.d, 0.0)


def test_assign_and_unlink_with_nn_grad() -> None:
    d = _v([1.0, 2.0], need_grad=True)
    s = _v([5.0, 6.0], need_grad=True)
    gd, gs = nn.grad([F.sum(F.assign(d, s) ** 2)], [d, s])
    np.testing.assert_array_equal(gd.d, [10.0, 12.0])  # 2 y, y = src after the assignment
    np.testing.assert_array_equal(gs.d, 0.0)
    x = _v([3.0, 4.0], need_grad=True)
    (gx,) = nn.grad([F.sum(F.unlink(x) * x)], [x])
    np.testing.assert_array_equal(gx.d, [3.0, 4.0])


def test_inplace_flags_show_in_info_args_as_nnabla() -> None:
    # nnabla 1.39: {'inplace': True}, {'inplace': False}, {'inplace': True},
    # {'val': 2.0, 'inplace': True}, and x + y is an Add2 with {'inplace': False}
    x, y = nn.Variable((2,)), nn.Variable((2,))
    assert F.add2(x, y, inplace=True).parent.info.args == {"inplace": True}
    assert F.add2(x, y).parent.info.args == {"inplace": False}
    assert F.mul2(x, y, True).parent.info.args == {"inplace": True}
    assert F.add_scalar(x, 2.0, inplace=True).parent.info.args == {"val": 2.0, "inplace": True}
    assert (x + y).parent.info.args == {"inplace": False}


def test_function_api_passes_the_current_context_first() -> None:
    """nnabla 1.39's ``F.function_api``: the decorated function's signature drops ``ctx``, its
    docstring gets nnabla's note, and a function without ``ctx`` raises ``KeyError`` (the
    message as nnabla 1.39's: "'ctx' not found in ['x']")."""
    import inspect

    import gradhub_compat.nnabla as nn

    seen = []

    @F.function_api
    def scaled(ctx: Any, x: Any, k: int = 2, n_outputs: int = -1, outputs: Any = None) -> Any:
        """doc"""
        seen.append(ctx)
        return x * k

    assert list(inspect.signature(scaled).parameters) == ["x", "k", "n_outputs", "outputs"]
    assert scaled.__name__ == "scaled" and scaled.__doc__.startswith("doc\n\n    Note:\n")
    assert scaled(3) == 6 and scaled(3, k=3) == 9
    assert seen == [nn.get_current_context()] * 2
    with pytest.raises(KeyError, match=r"'ctx' not found in \['x'\]"):
        F.function_api(lambda x: x)


def test_batch_normalization_in_out_adapter_as_nnabla() -> None:
    """``F.BatchNormalizationInOutAdapter``: nnabla 1.39 gives shape (2, 5, 12) and
    ``y.d[1, 2, :4] == [62, 67, 72, 77]`` for these inputs, and ``inv`` restores x."""
    a = F.BatchNormalizationInOutAdapter(4, [1, 2])
    x = nn.Variable.from_numpy_array(np.arange(120.0).reshape(2, 3, 4, 5))
    y = a(x)
    y.forward()
    z = a.inv(y)
    z.forward()
    assert y.shape == (2, 5, 12) and z.shape == (2, 3, 4, 5)
    np.testing.assert_array_equal(y.d[1, 2, :4], [62.0, 67.0, 72.0, 77.0])
    np.testing.assert_array_equal(z.d, x.d)
    with pytest.raises(AssertionError):
        F.BatchNormalizationInOutAdapter(4, [1])
    with pytest.raises(AssertionError, match="Wrong shape input given"):
        a(nn.Variable.from_numpy_array(np.zeros((2, 3, 4, 6))))

"""The nnabla layer's ``Variable``: created from a shape (no gradient by default) or with
``from_numpy_array``, ``.g`` always an array, assignment to ``.d``/``.g``, NdArray views,
``apply``, repr, ``parent``, ``persistent`` and ``size_from_axis``. Reference values are derived
by hand or with numpy; behaviour was checked against nnabla 1.39.
"""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import numpy as np
import pytest
from compat.nnabla.helpers import _var


def test_variable_takes_a_shape_and_defaults_to_no_grad() -> None:
    x = nn.Variable((2, 3))
    assert x.shape == (2, 3)
    assert x.d.dtype == np.float32
    assert np.all(x.d == 0)
    assert x.need_grad is False
    assert nn.Variable(4).shape == (4,)
    assert nn.Variable().shape == ()
    assert nn.Variable([2], need_grad=True).need_grad is True
    with pytest.raises(TypeError, match="nnabla Variable: shape"):
        nn.Variable("abc")  # type: ignore[arg-type]


def test_from_numpy_array_copies_casts_floats_and_keeps_labels() -> None:
    src = np.array([1.0, 2.0])
    x = nn.Variable.from_numpy_array(src)
    assert x.d.dtype == np.float32  # nnabla computes in float32
    assert x.need_grad is False
    src[0] = 100.0
    assert x.d[0] == 1.0  # copied
    labels = nn.Variable.from_numpy_array(np.array([[3], [1]]))
    assert labels.d.dtype == np.int64
    y = nn.Variable.from_numpy_array(np.ones(2), grad=np.array([5.0, 6.0]), need_grad=True)
    np.testing.assert_array_equal(y.g, [5.0, 6.0])
    with pytest.raises(ValueError, match="grad has shape"):
        nn.Variable.from_numpy_array(np.ones(2), grad=np.ones(3))


def test_g_is_always_an_array() -> None:
    x = _var([1.0, 2.0])
    y = x * x
    assert isinstance(x.g, np.ndarray) and x.g.dtype == np.float32
    np.testing.assert_array_equal(x.g, [0.0, 0.0])
    np.testing.assert_array_equal(y.g, [0.0, 0.0])
    labels = nn.Variable.from_numpy_array(np.array([1, 2]))
    assert labels.g.dtype == np.float32


def test_d_and_g_assignment_copies_and_broadcasts() -> None:
    x = nn.Variable((2, 2), need_grad=True)
    x.d = 3
    np.testing.assert_array_equal(x.d, np.full((2, 2), 3.0))
    x.d = [1.0, 2.0]  # broadcast along the first axis
    np.testing.assert_array_equal(x.d, [[1.0, 2.0], [1.0, 2.0]])
    arr = np.arange(4.0).reshape(2, 2)
    x.d = arr
    arr[0, 0] = 99.0
    assert x.d[0, 0] == 0.0 and x.d.dtype == np.float32
    x.g = 1.5
    np.testing.assert_array_equal(x.g, np.full((2, 2), 1.5))
    with pytest.raises(ValueError, match=r"Variable\.d: cannot assign an array of shape \(3,\)"):
        x.d = np.ones(3)
    with pytest.raises(ValueError, match=r"nnabla Variable\.g"):
        x.g = np.ones((3, 3))


def test_ndarray_views_zero_fill_and_cast() -> None:
    x = _var([1.0, 2.0])
    x.g = 4.0
    x.grad.zero()
    np.testing.assert_array_equal(x.g, [0.0, 0.0])
    x.grad.fill(2.0)
    np.testing.assert_array_equal(x.g, [2.0, 2.0])
    x.data.data = [5.0, 6.0]
    np.testing.assert_array_equal(x.d, [5.0, 6.0])
    assert x.data.shape == (2,) and x.data.size == 2 and x.data.ndim == 1
    np.testing.assert_array_equal(np.asarray(x.data), [5.0, 6.0])
    x.data.zero()
    np.testing.assert_array_equal(x.d, [0.0, 0.0])
    assert x.data.cast(np.float64).dtype == np.float64
    assert x.d.dtype == np.float64
    x.grad = nn.Variable.from_numpy_array(np.array([7.0, 8.0])).data
    np.testing.assert_array_equal(x.g, [7.0, 8.0])
    assert "NdArray((2,))" in repr(x.grad)


def test_apply_sets_attributes_and_returns_self() -> None:
    x = nn.Variable((2,))
    assert x.apply(need_grad=True, d=2.0) is x
    assert x.need_grad is True
    np.testing.assert_array_equal(x.d, [2.0, 2.0])


def test_repr_parent_persistent_and_size_from_axis() -> None:
    x = nn.Variable((10, 9), need_grad=True)
    assert repr(x).startswith("<Variable((10, 9), need_grad=True) at 0x")
    assert x.parent is None
    y = x * 2.0
    assert y.parent is not None
    y.persistent = True
    assert y.persistent is True
    assert (x.size_from_axis(), x.size_from_axis(0), x.size_from_axis(1)) == (90, 90, 9)


def test_persistent_stores_what_is_set() -> None:
    v = nn.Variable((2,))
    assert v.persistent is False  # nnabla's default
    v.persistent = True
    assert v.persistent is True
    v.persistent = False
    assert v.persistent is False


def test_from_numpy_array_keeps_int_need_grad_and_int_grad() -> None:
    """Regression: ``from_numpy_array(int, need_grad=True)`` raised and an int ``grad`` became
    float32; nnabla 1.39 keeps both: need_grad True with int32 data and float32 zeros in .g;
    ``grad=int32 [3, 4]`` stays int32 [3, 4]."""
    v = nn.Variable.from_numpy_array(np.array([1, 2], np.int32), need_grad=True)
    assert v.need_grad is True
    assert v.d.dtype == np.int32
    assert v.g.dtype == np.float32
    np.testing.assert_array_equal(v.g, [0.0, 0.0])
    v = nn.Variable.from_numpy_array(np.array([1, 2], np.int32), grad=np.array([3, 4], np.int32))
    assert (v.d.dtype, v.g.dtype) == (np.int32, np.int32)
    np.testing.assert_array_equal(v.g, [3, 4])
    v = nn.Variable.from_numpy_array(np.array([1, 2], np.int64), need_grad=True)
    assert (v.d.dtype, v.g.dtype) == (np.int64, np.float32)


def test_integer_data_with_need_grad_gets_nnabla_float32_gradient() -> None:
    """Regression: an integer Variable with need_grad=True got no gradient (its .g stayed
    zeros). nnabla 1.39 (recorded 2026-11-25) computes on it in float32: for v = [1, 2, 3]
    (int64) and w = [1., 2., 3.], sum(v * w) gives v.g = w (float32); sum(v * v) is 14.0
    (float32) with v.g = [2, 4, 6]; an int64 grad [1, 1, 1] given to from_numpy_array becomes
    float32 [2, 3, 4] after accumulating w."""
    import gradhub_compat.nnabla.functions as F

    v = nn.Variable.from_numpy_array(np.array([1, 2, 3]), need_grad=True)
    w = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]), need_grad=True)
    assert v.d.dtype == np.int64 and v.dtype == np.int64 and v.g.dtype == np.float32
    y = F.sum(v * w)
    assert (v * w).d.dtype == np.float32
    y.backward()
    np.testing.assert_array_equal(v.g, [1.0, 2.0, 3.0])
    assert v.g.dtype == np.float32
    v.g = 0
    y = F.sum(v * v)
    assert y.d == 14.0 and y.d.dtype == np.float32
    y.backward()
    np.testing.assert_array_equal(v.g, [2.0, 4.0, 6.0])
    # new data: .d = ... (in place writes are refused rather than left unseen)
    v.d = [3, 3, 3]
    y.forward()
    assert y.d == 27.0 and v.d.dtype == np.int64
    with pytest.raises(ValueError, match="read-only"):
        v.d[0] = 1
    vi = nn.Variable.from_numpy_array(np.array([1, 2, 3]), grad=np.array([1, 1, 1]), need_grad=True)
    assert vi.g.dtype == np.int64
    F.sum(vi * w).backward()
    np.testing.assert_array_equal(vi.g, [2.0, 3.0, 4.0])
    assert vi.g.dtype == np.float32
    (gv,) = nn.grad([F.sum(v * v * w)], [v])  # nn.grad too, differentiable again
    np.testing.assert_array_equal(gv.d, 2 * 3 * w.d)
    np.testing.assert_array_equal(nn.grad([F.sum(gv)], [v])[0].d, 2 * w.d)


def test_need_grad_on_integer_data_after_creation_is_refused_clearly() -> None:
    # (nnabla accepts it; the layer asks for from_numpy_array(data, need_grad=True))
    v = nn.Variable.from_numpy_array(np.array([1, 2, 3]))
    with pytest.raises(TypeError, match="need_grad=True needs floating-point data"):
        v.need_grad = True
    v.need_grad = False  # (no change)


def test_float64_data_computes_and_differentiates_in_float32_as_nnabla() -> None:
    """nnabla 1.39 (recorded 2026-11-25) keeps float64 data in ``.d`` but its functions compute
    in float32: ``v64 * v64`` is float32 and ``v64.g`` float32 ([2, 4, 6] for sum(v * v)). The
    layer stores the float32 values (the documented difference) and gives the same results."""
    import gradhub_compat.nnabla.functions as F

    v = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]), need_grad=True)
    assert v.g.dtype == np.float32 and (v * v).d.dtype == np.float32
    y = F.sum(v * v)
    y.backward()
    np.testing.assert_array_equal(v.g, [2.0, 4.0, 6.0])
    assert v.g.dtype == np.float32 and y.d.dtype == np.float32


@pytest.mark.parametrize("how", ["g0", "zero_grad", "d", "data", "update"])
def test_a_compiled_define_by_run_step_replays_clearing_and_refuses_writes(how: str) -> None:
    # regression: the nnabla layer's .d and .g properties did not tell gradhub.compile's trace:
    # `x.g = 0` (and a solver's zero_grad) inside a compiled step cleared the gradients at the
    # first call only, and a write into .d happened at the first call only, silently
    import gradhub as gh
    import gradhub_compat.nnabla.functions as F
    import gradhub_compat.nnabla.parametric_functions as PF
    import gradhub_compat.nnabla.solvers as S

    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    with nn.auto_forward():
        PF.affine(nn.Variable.from_numpy_array(x), 3, name="fc")
    params = list(nn.get_parameters().values())
    solver = S.Sgd(0.1)
    solver.set_parameters(nn.get_parameters())
    before = [p.d.copy() for p in params]

    def step(xv: nn.Variable) -> nn.Variable:
        with nn.auto_forward():
            if how == "zero_grad":
                solver.zero_grad()
            else:
                for p in params:
                    p.g = 0
            loss = F.mean(PF.affine(xv, 3, name="fc") ** 2)
            loss.backward()
            if how == "d":
                params[0].d[0] = 1.0
            elif how == "data":
                params[0].data.zero()
            elif how == "update":
                solver.update()
        return loss

    fast = gh.compile(step)
    if how in ("g0", "zero_grad"):
        for call in range(3):
            fast(x)
            got = [p.g.copy() for p in params]
            step(nn.Variable.from_numpy_array(x))
            for g, p in zip(got, params):
                np.testing.assert_array_equal(g, p.g, err_msg=f"call {call}")
        return
    with pytest.raises(NotImplementedError, match=r"gradhub.compile: the step (writes|assigns)"):
        fast(x)
    for b, p in zip(before, params):
        np.testing.assert_array_equal(b, p.d)
        assert p.d.flags.writeable


@pytest.mark.parametrize("of", ["variable", "ndarray"])
def test_from_numpy_array_of_a_compiled_steps_argument_follows_the_argument(of: str) -> None:
    # regression: inside a compiled step, Variable.from_numpy_array(x) of an array argument
    # (which arrives as a Variable) made a leaf holding the first call's copy, so every later
    # call computed with the first call's data, silently
    import gradhub as gh
    import gradhub_compat.nnabla.functions as F

    w = nn.Variable.from_numpy_array(np.linspace(-1.0, 1.0, 12).reshape(3, 4), need_grad=True)

    def step(x: gh.Variable) -> nn.Variable:
        # the argument, or the data NdArray of a Variable computed from it
        xv = nn.Variable.from_numpy_array(x if of == "variable" else F.identity(x).data)
        loss = F.sum(F.tanh(xv) * w)
        w.grad.zero()
        loss.backward()
        return loss

    fast = gh.compile(step)
    for call in range(3):
        x = np.random.RandomState(call).randn(3, 4)
        loss = fast(x)
        assert loss.d.dtype == np.float32
        t = np.tanh(x.astype(np.float32))
        np.testing.assert_allclose(w.g, t, rtol=1e-6, err_msg=f"call {call}")
        np.testing.assert_allclose(loss.d, np.sum(t * w.d), rtol=1e-5, err_msg=f"call {call}")

    def needing(x: gh.Variable) -> nn.Variable:
        return F.sum(nn.Variable.from_numpy_array(x, need_grad=True) * w)

    with pytest.raises(NotImplementedError, match="needing a gradient"):
        gh.compile(needing)(np.ones((3, 4)))

    def of_values(x: gh.Variable) -> nn.Variable:  # a copy of h.d: this call's values
        h = F.tanh(x)
        return F.sum(nn.Variable.from_numpy_array(h.d) * w)

    with pytest.raises(NotImplementedError, match=r"taken from a Variable \(\.d"):
        gh.compile(of_values)(np.ones((3, 4)))


def test_taking_a_batched_variables_array_is_refused_inside_vmap() -> None:
    # regression: from_numpy_array, x.d = v and backward(grad=v) of a batched Variable inside
    # gradhub.func.vmap read element 0's values and used them for every element, silently
    import gradhub as gh
    import gradhub.func as ghf

    x = np.arange(6.0).reshape(3, 2)
    target = nn.Variable((2,))

    def assign(a: gh.Variable) -> gh.Variable:
        target.d = a
        return a

    y = nn.Variable.from_numpy_array(np.ones(2), need_grad=True) * 2.0
    for fn in (
        lambda a: nn.Variable.from_numpy_array(a) * 1.0,
        lambda a: nn.NdArray.from_numpy_array(a),
        assign,
        lambda a: y.backward(a),
    ):
        with pytest.raises(TypeError, match=r"vmap: nnabla .* reads the data of a batched"):
            ghf.vmap(fn)(x)

"""The nnabla compatibility layer (``gradhub_compat.nnabla``): nnabla's semantics, option by option.

Reference values are derived by hand (e.g. d(x^3)/dx = 3x^2) or from numpy.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.backward_functions as B
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest
from gradhub.registry import REGISTRY
from gradhub_compat.nnabla.ext_utils import get_extension_context, list_extensions


def _var(values: list[float], need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(values), need_grad=need_grad)


# -- Variable ----------------------------------------------------------------------------------


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
    with pytest.raises(TypeError, match="from_numpy_array: need_grad=True needs floating"):
        nn.Variable.from_numpy_array(np.array([1, 2]), need_grad=True)
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


# -- backward ----------------------------------------------------------------------------------


def test_backward_default_grad_is_one_and_accumulates_into_leaves() -> None:
    x = _var([1.0, 2.0])
    y = x * x * x
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 12.0])
    y.backward()
    np.testing.assert_allclose(x.g, [6.0, 24.0])
    x.grad.zero()
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 12.0])


@pytest.mark.parametrize("kind", ["scalar", "numpy", "NdArray", "Variable"])
def test_backward_grad_argument_forms(kind: str) -> None:
    x = _var([1.0, 2.0])
    y = x * x
    grad: object = {
        "scalar": 2.0,
        "numpy": np.array([2.0, 2.0]),
        "NdArray": nn.Variable.from_numpy_array(np.array([2.0, 2.0])).data,
        "Variable": _var([2.0, 2.0], need_grad=False),
    }[kind]
    y.backward(grad)
    np.testing.assert_allclose(x.g, [4.0, 8.0])
    np.testing.assert_array_equal(y.g, [0.0, 0.0])  # the incoming gradient is not stored


def test_backward_grad_none_uses_the_current_g() -> None:
    x = _var([1.0, 2.0])
    y = x * x
    y.g = [1.0, 0.0]
    y.backward(grad=None)
    np.testing.assert_allclose(x.g, [2.0, 0.0])
    np.testing.assert_array_equal(y.g, [1.0, 0.0])  # unchanged
    with pytest.raises(ValueError, match=r"nnabla Variable\.backward: grad has shape"):
        y.backward(np.ones(3))


def test_backward_keeps_intermediate_grads_unless_clear_buffer() -> None:
    x = _var([1.0, 2.0])
    h = x * x
    y = (h * 3.0).sum()
    y.backward()
    np.testing.assert_allclose(h.g, [3.0, 3.0])
    y.backward()
    np.testing.assert_allclose(h.g, [3.0, 3.0])  # overwritten, not accumulated
    np.testing.assert_allclose(x.g, [12.0, 24.0])  # leaves accumulate

    x2 = _var([1.0, 2.0])
    h2 = x2 * x2
    y2 = (h2 * 3.0).sum()
    y2.backward(clear_buffer=True)
    np.testing.assert_array_equal(h2.g, [0.0, 0.0])
    np.testing.assert_allclose(x2.g, [6.0, 12.0])


def test_backward_on_a_leaf_raises_as_nnabla() -> None:
    x = _var([1.0, 2.0])
    with pytest.raises(RuntimeError, match="has no parent"):  # nnabla 1.39 raises likewise
        x.backward()
    np.testing.assert_array_equal(x.g, [0.0, 0.0])


def test_backward_stops_at_need_grad_false() -> None:
    x = _var([1.0, 2.0])
    c = _var([3.0, 4.0], need_grad=False)
    (x * c).backward()
    np.testing.assert_allclose(x.g, [3.0, 4.0])
    np.testing.assert_array_equal(c.g, [0.0, 0.0])


def test_hooks_and_callbacks_are_refused_clearly() -> None:
    x = _var([1.0])
    y = x * 2.0
    with pytest.raises(NotImplementedError, match="function_pre_hook"):
        y.forward(function_pre_hook=print)
    with pytest.raises(NotImplementedError, match="communicator_callbacks"):
        y.backward(communicator_callbacks=[object()])


# -- forward (static re-execution) -------------------------------------------------------------


def test_forward_reexecutes_the_graph_from_new_data() -> None:
    x = nn.Variable((3,))
    y = x * 2.0 + 1.0
    x.d = [1.0, 2.0, 3.0]
    y.forward(clear_buffer=True, clear_no_need_grad=True)
    np.testing.assert_allclose(y.d, [3.0, 5.0, 7.0])


def test_unlinked_variable_shares_data_and_keeps_need_grad() -> None:
    x = _var([1.0, 2.0])
    y = x * 3.0
    u = y.get_unlinked_variable()
    assert u.parent is None and u.need_grad is True and u.d is y.d
    assert y.get_unlinked_variable(need_grad=False).need_grad is False
    assert y.detach().need_grad is False
    r = y.reshape((2, 1), unlink=True)
    assert r.parent is None and r.shape == (2, 1)
    assert y.reshape((1, 2)).parent is not None


# -- grad --------------------------------------------------------------------------------------


def test_grad_returns_gradients_and_zeros_for_unreachable_inputs() -> None:
    x = _var([1.0, 2.0])
    z = nn.Variable((2,), need_grad=True)
    c = _var([5.0, 5.0], need_grad=False)
    y = x * x * x + c
    gx, gz, gc = nn.grad([y], [x, z, c])
    assert all(isinstance(g, nn.Variable) for g in (gx, gz, gc))
    np.testing.assert_allclose(gx.d, [3.0, 12.0])
    np.testing.assert_array_equal(gz.d, [0.0, 0.0])
    np.testing.assert_array_equal(gc.d, [0.0, 0.0])
    assert gz.parent is None and gz.shape == z.shape  # not connected to the graph
    np.testing.assert_array_equal(x.g, [0.0, 0.0])  # .g untouched


def test_grad_is_differentiable_and_reexecutes_with_forward() -> None:
    x = _var([1.0, 2.0])
    y = x * x * x
    (dx,) = nn.grad(y, x)  # single Variables are accepted
    (ddx,) = nn.grad([dx], [x])
    np.testing.assert_allclose(ddx.d, [6.0, 12.0])
    x.d = [3.0, 4.0]
    ddx.forward()
    np.testing.assert_allclose(ddx.d, [18.0, 24.0])
    ddx.backward()  # third derivative 6 per element
    np.testing.assert_allclose(x.g, [6.0, 6.0])


def test_grad_sums_over_outputs() -> None:
    x = _var([1.0, 2.0])
    (g,) = nn.grad([x * x, x * 3.0], [x])
    np.testing.assert_allclose(g.d, [5.0, 7.0])


@pytest.mark.parametrize("kind", ["scalar", "numpy", "NdArray", "Variable", "list"])
def test_grad_outputs_forms(kind: str) -> None:
    x = _var([1.0, 2.0])
    y = x * x
    go: object = {
        "scalar": 3.0,
        "numpy": np.array([3.0, 3.0]),
        "NdArray": nn.Variable.from_numpy_array(np.array([3.0, 3.0])).data,
        "Variable": _var([3.0, 3.0], need_grad=False),
        "list": [3.0],
    }[kind]
    (g,) = nn.grad([y], [x], grad_outputs=go)
    np.testing.assert_allclose(g.d, [6.0, 12.0])


def test_grad_outputs_errors() -> None:
    x = _var([1.0, 2.0])
    y = x * x
    with pytest.raises(ValueError, match=r"grad_outputs\[0\] has shape \(3,\)"):
        nn.grad([y], [x], grad_outputs=[np.ones(3)])
    with pytest.raises(ValueError, match="grad_outputs has 2 entries but there are 1 outputs"):
        nn.grad([y], [x], grad_outputs=[1.0, 1.0])
    with pytest.raises(ValueError, match=r"grad_outputs\[0\] must be None, a scalar"):
        nn.grad([y], [x], grad_outputs=["one"])
    with pytest.raises(ValueError, match="one entry per output"):
        nn.grad([y, y], [x], grad_outputs=2.0)


def test_grad_with_a_variable_grad_output_is_differentiable_in_it() -> None:
    x = _var([1.0, 2.0])
    v = _var([1.0, 1.0])
    (g,) = nn.grad([x * x], [x], grad_outputs=[v])  # 2 x v
    (gv,) = nn.grad([g], [v])
    np.testing.assert_allclose(gv.d, [2.0, 4.0])


def test_grad_rejects_non_variables() -> None:
    x = _var([1.0])
    with pytest.raises(ValueError, match=r"nnabla.grad: outputs\[0\] must be a Variable"):
        nn.grad([np.ones(1)], [x])
    with pytest.raises(ValueError, match=r"nnabla.grad: inputs\[1\] must be a Variable"):
        nn.grad([x * 2.0], [x, 3.0])


def test_grad_persistent_outputs() -> None:
    x = _var([1.0, 2.0])
    y = x * x
    (g,) = nn.grad([y], [x], persistent_outputs=[True])
    np.testing.assert_allclose(g.d, [2.0, 4.0])
    with pytest.raises(ValueError, match="persistent_outputs has 2 flags but there are 1"):
        nn.grad([y], [x], persistent_outputs=[True, False])


def test_grad_bind_grad_output_binds_reached_inputs_only() -> None:
    x = _var([1.0, 2.0])
    z = _var([0.0, 0.0])
    y = x * x * x
    gx, _ = nn.grad([y], [x, z], bind_grad_output=True)
    np.testing.assert_allclose(x.g, [3.0, 12.0])
    np.testing.assert_array_equal(z.g, [0.0, 0.0])
    x.d = [2.0, 3.0]
    gx.forward()  # the bound gradient follows re-execution
    np.testing.assert_allclose(x.g, [12.0, 27.0])


def test_grad_accepts_dict_values_of_parameters() -> None:
    with nn.parameter_scope("p"):
        w = gh.get_parameter_or_create("w", (2,), lambda s: np.full(s, 2.0, np.float32))
    y = w * w
    (g,) = nn.grad([y], nn.get_parameters().values())
    np.testing.assert_allclose(g.d, [4.0, 4.0])


# -- functions and parametric functions --------------------------------------------------------


def test_functions_return_nnabla_variables() -> None:
    x = _var([0.5, 1.0])
    y = F.sum(x * x, axis=0, keepdims=True)
    assert isinstance(y, nn.Variable)
    np.testing.assert_allclose(y.d, [1.25])
    np.testing.assert_array_equal(y.g, [0.0])  # nnabla semantics on results
    assert F.sum is F.sum  # cached wrapper
    assert "sum" in dir(F) and "constant" in dir(F)
    with pytest.raises(AttributeError, match="has no function 'no_such_function'"):
        _ = F.no_such_function
    c = F.constant(2.5, (2,))
    assert isinstance(c, nn.Variable) and c.need_grad is False
    np.testing.assert_array_equal(c.d, [2.5, 2.5])


def test_operators_return_nnabla_variables() -> None:
    x = _var([1.0, 2.0])
    results = [x + 1.0, 1.0 + x, x - x, 2.0 - x, x * x, x / 2.0, 2.0 / x, x**2.0, -x, x[0],
               x.sum(), sum([x, x])]
    assert all(type(r) is nn.Variable for r in results)


def test_parametric_functions_create_nnabla_parameters() -> None:
    import gradhub_compat.nnabla.parametric_functions as PF

    x = nn.Variable((4, 3))
    with nn.parameter_scope("net"):
        h = PF.affine(x, 5, name="fc")
    assert isinstance(h, nn.Variable) and h.shape == (4, 5)
    params = nn.get_parameters()
    assert list(params) == ["net/fc/affine/W", "net/fc/affine/b"]
    assert params["net/fc/affine/W"].shape == (3, 5)
    assert all(isinstance(p, nn.Variable) for p in params.values())
    np.testing.assert_array_equal(params["net/fc/affine/b"].g, np.zeros(5))
    assert list(nn.get_parameters(path="net/fc")) == ["affine/W", "affine/b"]
    with nn.parameter_scope("net/fc"):
        assert list(nn.get_parameters()) == ["affine/W", "affine/b"]
    assert "affine" in dir(PF)
    with pytest.raises(AttributeError, match="has no function 'nope'"):
        _ = PF.nope
    nn.clear_parameters()
    assert nn.get_parameters() == {}


def test_get_parameters_grad_only() -> None:
    with nn.parameter_scope("s"):
        gh.get_parameter_or_create("a", (1,), np.zeros, need_grad=True)
        gh.get_parameter_or_create("b", (1,), np.zeros, need_grad=False)
    assert list(nn.get_parameters()) == ["s/a"]
    assert list(nn.get_parameters(grad_only=False)) == ["s/a", "s/b"]
    with pytest.raises(NotImplementedError, match="params argument"):
        nn.get_parameters(params={})
    with pytest.raises(NotImplementedError, match="scope argument"), nn.parameter_scope("a", {}):
        pass


# -- backward_functions ------------------------------------------------------------------------


@pytest.fixture
def restore_neg_rule() -> Iterator[None]:
    fdef = REGISTRY.get("Neg")
    rule, overrides, audit = fdef.rule, list(fdef.overrides), dict(fdef.audit)
    yield
    fdef.rule, fdef.overrides, fdef.audit = rule, overrides, audit


def test_register_replaces_a_rule_for_every_engine_user(restore_neg_rule: None) -> None:
    def neg_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):  # type: ignore[no-untyped-def]
        return grad_outputs[0] * -3.0  # deliberately not -1: shows which rule ran

    B.register("Neg", neg_backward)  # no override flag needed, as in nnabla
    x = _var([1.0, 2.0])
    (g,) = nn.grad([-x], [x])
    np.testing.assert_allclose(g.d, [-3.0, -3.0])
    xn = gh.Variable(np.array([1.0, 2.0]))
    (gn,) = gh.grad([-xn], [xn])  # the native engine uses it too
    np.testing.assert_allclose(gn.d, [-3.0, -3.0])
    (-x).backward()
    np.testing.assert_allclose(x.g, [-3.0, -3.0])
    row = next(r for r in gh.registry_table() if r["function"] == "Neg")
    assert row["rule_provider"] == f"module {__name__}"
    assert row["overrides"] and row["overrides"][-1].endswith(f"module {__name__}")
    assert B.registry["Neg"] is neg_backward


def test_register_errors() -> None:
    def old_style(inputs, **kwargs):  # type: ignore[no-untyped-def]
        return inputs

    with pytest.raises(TypeError, match=r"register\('Neg'\): the backward function must take"):
        B.register("Neg", old_style)
    with pytest.raises(TypeError, match="func must be callable"):
        B.register("Neg", 3)  # type: ignore[arg-type]
    with pytest.raises(gh.FunctionNotFoundError, match="NoSuchFunction"):
        B.register("NoSuchFunction", lambda *a, **k: None)


def test_registry_mapping_and_show_registry() -> None:
    assert "Add2" in B.registry and len(B.registry) > 5
    assert "Add2" in list(B.registry)
    assert "backward rule registry" in repr(B.registry)
    buf = io.StringIO()
    B.show_registry(file=buf)
    text = buf.getvalue()
    assert "function" in text.splitlines()[0] and "Add2" in text


# -- contexts ----------------------------------------------------------------------------------


def test_get_extension_context_cpu_and_options() -> None:
    ctx = get_extension_context("cpu")
    assert ctx == gh.Context("cpu", 0, "float")
    ctx = get_extension_context("cpu", device_id="0", type_config="half")
    assert ctx.type_config == "half"
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        get_extension_context("cpu", colour="red")
    assert "cpu" in list_extensions()


def test_get_extension_context_cudnn_without_a_usable_gpu_raises_clearly() -> None:
    if "cudnn" in list_extensions():
        pytest.skip("a usable CUDA device is installed here")
    with pytest.raises(gh.DeviceError, match=r"gradhub-cuda|CuPy"):
        get_extension_context("cudnn")


def test_set_default_context_and_scopes() -> None:
    before = gh.get_default_context()
    try:
        ctx = get_extension_context("cpu", type_config="half")
        nn.set_default_context(ctx)
        assert nn.get_current_context() == ctx
        other = get_extension_context("cpu")
        with nn.context_scope(other):
            assert nn.get_current_context() == other
    finally:
        gh.set_default_context(before)


def test_auto_forward_and_no_grad_helpers() -> None:
    assert nn.get_auto_forward() is False  # nnabla's default
    nn.set_auto_forward(False)
    with nn.auto_forward():
        assert nn.get_auto_forward() is True
        y = _var([1.0]) * 2.0
    assert nn.get_auto_forward() is False
    np.testing.assert_allclose(y.d, [2.0])
    with nn.no_grad():
        z = _var([1.0]) * 2.0
    assert z.need_grad is False
    with pytest.raises(AttributeError):
        _ = nn.not_a_thing


def test_backward_clear_buffer_frees_saved_arrays_until_forward() -> None:
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.functions as NF
    from gradhub.errors import BackwardRuleError

    x = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0]))
    x.need_grad = True
    y = NF.sum(x * x)
    y.backward(clear_buffer=True)
    np.testing.assert_allclose(x.g, 2 * x.d)
    with pytest.raises(BackwardRuleError, match=r"clear_buffer=True\).*forward\(\)"):
        y.backward()
    y.forward()  # recomputes the freed buffers, as in nnabla
    x.g = 0
    y.backward()
    np.testing.assert_allclose(x.g, 2 * x.d)

"""The CUDA rule kernels of gradhub-cuda (``gradhub_cuda.kernels.RULE_KERNELS``).

Each rule kernel is the first-order backward of an existing rule on ``cuda`` in fewer launches;
here each one is compared with the generic rule it replaces (the rule's ``fast_backward`` run on
CuPy) on random inputs in float32 and float64, with the edge cases of its function, and run
through the engine. The registration test needs no GPU; the others skip, all with one reason,
where no usable CUDA device exists.
"""

from __future__ import annotations

import zlib
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from cuda_helpers import gpu
from gradhub.registry import REGISTRY, device_rule, rule_kernels

#: (dtype, rtol, atol): the rule kernels sum the softmax's denominator in another order than
#: CuPy's reduction, so the last bits may differ (2.4e-6 relative seen in float32 over 1000
#: classes on an H200)
TOLERANCES = [(np.float64, 1e-12, 1e-14), (np.float32, 1e-5, 1e-7)]


def test_the_rule_kernels_are_registered_for_their_functions() -> None:
    """Each rule kernel of gradhub_cuda.kernels is the ``cuda`` rule kernel of its function's
    rule, provided by gradhub-cuda (registration needs no GPU)."""
    if "cuda" not in REGISTRY.device_types:
        pytest.skip("gradhub-cuda is not installed")
    from gradhub_cuda.kernels import RULE_KERNELS

    assert set(RULE_KERNELS) == {"ReLU", "SoftmaxCrossEntropy", "Prod"}
    for name, fn in RULE_KERNELS.items():
        fdef = REGISTRY.get(name)
        assert fdef.rule is not None
        assert device_rule(fdef.rule, "cuda").fast is fn, name
        assert device_rule(fdef.rule, "cpu") is fdef.rule, name
        assert rule_kernels(fdef)["cuda"].distribution == "gradhub-cuda"
    rows = {r["function"]: r for r in gh.registry_table()}
    assert rows["ReLU"]["rule_kernels"] == ["cuda"]


def _cp() -> Any:
    import cupy

    return cupy


def _generic(name: str) -> Any:
    rule = REGISTRY.get(name).rule
    assert rule is not None
    return rule.fast


def _close(got: Any, want: Any, rtol: float, atol: float, what: str) -> None:
    g, w = _cp().asnumpy(got), _cp().asnumpy(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, w.shape, g.dtype, w.dtype)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=what)


# -- ReLU ----------------------------------------------------------------------------------------


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_backward_is_the_generic_rule(dtype: type) -> None:
    from gradhub_cuda.kernels import relu_backward

    cp = _cp()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 257)).astype(dtype)
    x[0, :10] = 0.0  # relu'(0) = 0
    x[1, :3] = [-0.0, np.inf, -np.inf]
    g = rng.standard_normal(x.shape).astype(dtype)
    g[2, :4] = [np.nan, np.inf, -np.inf, -0.0]  # NaN and inf gradients behave as g * mask
    g[3, :] = np.where(x[3] > 0, np.inf, -np.inf)
    y = np.maximum(x, 0.0)
    cases = {
        "contiguous": (cp.asarray(g), cp.asarray(y)),
        "transposed": (cp.asarray(g.T.copy()).T, cp.asarray(y)),
        "size 0": (cp.zeros((0, 3), dtype), cp.zeros((0, 3), dtype)),
    }
    for what, (gg, yy) in cases.items():
        args = (cp, [gg], [None], [yy.shape], [yy], [yy.shape])
        (got,) = relu_backward(*args)
        (want,) = _generic("ReLU")(*args)
        # the same products as the generic rule: equal bit for bit (NaN where it has NaN)
        np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(want), err_msg=what)
        assert got.dtype == want.dtype
    # a gradient of another dtype goes to the generic rule
    gy64 = cp.asarray(g.astype(np.float64) if dtype == np.float32 else g.astype(np.float32))
    args = (cp, [gy64], [None], [y.shape], [cp.asarray(y)], [y.shape])
    np.testing.assert_array_equal(
        cp.asnumpy(relu_backward(*args)[0]), cp.asnumpy(_generic("ReLU")(*args)[0])
    )


# -- SoftmaxCrossEntropy -------------------------------------------------------------------------


def _sce_case(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    axis: int | None,
    dtype: type,
    label_dtype: Any = np.int64,
    squeeze: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nd = len(shape)
    ax = nd - 1 if axis is None else axis % nd
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    tshape = tuple(1 if i == ax else n for i, n in enumerate(shape))
    if squeeze:
        tshape = tuple(n for i, n in enumerate(shape) if i != ax)
    t = rng.integers(0, shape[ax], tshape)
    t.flat[0] = 0
    t.flat[-1] = shape[ax] - 1
    g = rng.standard_normal(tshape).astype(dtype)
    return x, t.astype(label_dtype), g


SCE_CASES = [
    ("(N,C), (N,1)", (256, 10), None, np.int64, False),
    ("(N,C), (N,)", (33, 7), None, np.int64, True),
    ("(N,C), int32 labels", (33, 7), 1, np.int32, False),
    ("(N,C), uint8 labels", (33, 7), -1, np.uint8, False),
    ("(N,C), float labels", (33, 7), None, np.float32, False),
    ("(N,C), many classes", (8, 1000), None, np.int64, False),
    ("(N,C), 128 classes: one thread per row", (16, 128), None, np.int64, False),
    ("(N,C), 129 classes: one thread per element", (16, 129), None, np.int64, True),
    ("(N,C,H), many classes, axis=1", (4, 100, 3), 1, np.int32, False),
    ("(N,C,H), axis=1", (4, 5, 6), 1, np.int64, False),
    ("(N,C,H,W), axis=1", (2, 3, 4, 5), 1, np.int64, False),
    ("(C,N), axis=0", (5, 9), 0, np.int64, False),
    ("one class", (6, 1), None, np.int64, False),
]


@gpu
@pytest.mark.parametrize(("dtype", "rtol", "atol"), TOLERANCES)
@pytest.mark.parametrize(
    ("what", "shape", "axis", "label_dtype", "squeeze"), SCE_CASES, ids=[c[0] for c in SCE_CASES]
)
def test_softmax_cross_entropy_backward_is_the_generic_rule(
    what: str,
    shape: tuple[int, ...],
    axis: int | None,
    label_dtype: Any,
    squeeze: bool,
    dtype: type,
    rtol: float,
    atol: float,
) -> None:
    from gradhub_cuda.kernels import softmax_cross_entropy_backward as kernel

    cp = _cp()
    rng = np.random.default_rng(zlib.crc32(what.encode()))
    x, t, g = _sce_case(rng, shape, axis, dtype, label_dtype, squeeze)
    xs = [x.shape, t.shape]
    args = (cp, [cp.asarray(g)], [cp.asarray(x), cp.asarray(t)], xs, [None], [t.shape])
    got = kernel(*args, axis=axis)
    want = _generic("SoftmaxCrossEntropy")(*args, axis=axis)
    assert got[1] is None and want[1] is None
    _close(got[0], want[0], rtol, atol, f"{what} {dtype.__name__}")


@gpu
@pytest.mark.parametrize(("dtype", "rtol", "atol"), TOLERANCES)
def test_softmax_cross_entropy_backward_edge_values(dtype: type, rtol: float, atol: float) -> None:
    """Large logits (the max is subtracted), a row holding NaN, a transposed x, a broadcast
    incoming gradient (the backward of a sum), an empty batch."""
    from gradhub_cuda.kernels import softmax_cross_entropy_backward as kernel

    cp = _cp()
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((16, 6)) * 3).astype(dtype)
    x[0] = [1000.0, 999.0, -1000.0, 0.0, 1000.0, 3.0]
    x[1, 2] = np.nan
    t = rng.integers(0, 6, (16, 1))
    cases = {
        "large and NaN": (cp.asarray(x), cp.asarray(rng.standard_normal((16, 1)).astype(dtype))),
        "transposed": (
            cp.asarray(np.ascontiguousarray(x.T)).T,
            cp.asarray(rng.standard_normal((16, 1)).astype(dtype)),
        ),
        "broadcast gradient": (cp.asarray(x), cp.broadcast_to(cp.asarray(dtype(0.5)), (16, 1))),
    }
    for what, (xx, gg) in cases.items():
        args = (cp, [gg], [xx, cp.asarray(t)], [xx.shape, t.shape], [None], [t.shape])
        got = kernel(*args)
        want = _generic("SoftmaxCrossEntropy")(*args)
        g, w = cp.asnumpy(got[0]), cp.asnumpy(want[0])
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=what)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=what)
    x0, t0 = cp.zeros((0, 4), dtype), cp.zeros((0, 1), np.int64)
    empty = (cp, [cp.zeros((0, 1), dtype)], [x0, t0], [(0, 4), (0, 1)], [None], [(0, 1)])
    got0, want0 = kernel(*empty)[0], _generic("SoftmaxCrossEntropy")(*empty)[0]
    assert got0.shape == want0.shape == (0, 4)


@gpu
def test_softmax_cross_entropy_rejects_negative_labels_on_cuda() -> None:
    """The function has no ignore label: a negative label is refused by the forward pass (so
    the rule kernel never sees one from a graph), as on the CPU."""
    ctx = gh.get_extension_context("cuda")
    with gh.context_scope(ctx):
        x = gh.Variable(np.zeros((3, 4)), need_grad=True)
        t = gh.Variable(np.array([[0], [-1], [2]]), need_grad=False)
        with pytest.raises(ValueError, match=r"labels outside \[0, 4\) \(min -1, max 2\)"):
            F.softmax_cross_entropy(x, t)


# -- through the engine --------------------------------------------------------------------------


def _mlp_grads(device: str, dtype: type, create_graph: bool) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    xa = rng.standard_normal((32, 20)).astype(dtype)
    wa = (rng.standard_normal((20, 10)) * 0.3).astype(dtype)
    ta = rng.integers(0, 10, (32, 1))
    with gh.context_scope(gh.get_extension_context(device)):
        x, w = gh.Variable(xa, need_grad=True), gh.Variable(wa, need_grad=True)
        t = gh.Variable(ta, need_grad=False)
    h = F.relu(F.affine(x, w))
    loss = F.mean(F.softmax_cross_entropy(h, t))
    gs = gh.grad([loss], [x, w], create_graph=create_graph)
    return [np.asarray(g.numpy()) for g in gs]


@gpu
@pytest.mark.parametrize(("dtype", "rtol"), [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_first_order_backward_on_cuda_runs_the_rule_kernels(
    dtype: type, rtol: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """backward on ``cuda`` calls the rule kernels (first order only) and gives the numbers of
    the rules (double-backward graph on cuda, and the CPU)."""
    calls: list[str] = []
    for name in ("ReLU", "SoftmaxCrossEntropy"):
        rule = REGISTRY.get(name).rule
        assert rule is not None and rule.devices is not None
        dev_rule = rule.devices["cuda"]
        kernel = dev_rule.fast

        def spy(*args: Any, _k: Any = kernel, _n: str = name, **kw: Any) -> Any:
            calls.append(_n)
            return _k(*args, **kw)

        monkeypatch.setattr(dev_rule, "fast", spy)
    first = _mlp_grads("cuda", dtype, create_graph=False)
    assert sorted(calls) == ["ReLU", "SoftmaxCrossEntropy"]
    calls.clear()
    graph = _mlp_grads("cuda", dtype, create_graph=True)
    assert calls == []
    cpu = _mlp_grads("cpu", dtype, create_graph=False)
    for a, b, c in zip(first, graph, cpu):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-2)
        np.testing.assert_allclose(a, c, rtol=rtol, atol=rtol * 1e-2)


@gpu
def test_the_audit_checks_the_rule_kernels_on_cuda() -> None:
    """The audit's first order on cuda runs the rule kernels against the differentiable rule."""
    from gradhub.audit import check_function

    for name in ("ReLU", "SoftmaxCrossEntropy"):
        res = check_function(REGISTRY.get(name), "cuda", order=2, record=False)
        assert res.ok, res

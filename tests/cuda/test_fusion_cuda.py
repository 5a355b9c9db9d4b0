"""The elementwise fuser of gradhub-cuda (``gradhub_cuda.fusion``): chains of elementwise
functions in plans on ``cuda`` run as one generated ``ElementwiseKernel``.

The registration and the generated sources need no GPU. On a GPU, plans and compiled steps with
fusion must give the eager (unfused) results bit for bit, NaN, infinities and signed zeros
included, in float32 and float64, with one fused launch per chain and plan run (counted by
``FUSED_CALLS``). The GPU tests skip, all with one reason, where no usable CUDA device exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from cuda_helpers import gpu
from gradhub import fusion
from gradhub.fusion import Chain, FusedOp
from gradhub.registry import REGISTRY


def _fuser() -> Any:
    if "cuda" not in REGISTRY.device_types:
        pytest.skip("gradhub-cuda is not installed")
    import gradhub_cuda.fusion as cf

    return cf


def test_the_fuser_is_registered_for_cuda() -> None:
    cf = _fuser()
    fuser = REGISTRY.fusers["cuda"]  # imports gradhub_cuda.fusion at its first use
    f32 = np.dtype(np.float32)
    assert fuser.accepts("ReLU", {}, f32) == cf.FUSER.accepts("ReLU", {}, f32) is True
    assert fuser.accepts("Softplus", {"beta": 1.0}, f32) is False
    assert REGISTRY.fuser_providers["cuda"].distribution == "gradhub-cuda"
    assert "cpu" not in REGISTRY.fusers


def test_its_expressions_name_existing_functions() -> None:
    cf = _fuser()
    missing = [n for n in cf.EXPRESSIONS if n not in REGISTRY.functions]
    assert not missing, missing
    for name in cf.EXPRESSIONS:
        assert REGISTRY.get(name).elementwise, name


def test_the_generated_source_rounds_each_operation_in_the_dtype() -> None:
    cf = _fuser()
    f64 = np.dtype(np.float64)
    chain = Chain(
        (((3,), f64), ((), f64)),
        (
            FusedOp("Mul2", (), (0, 1)),
            FusedOp("AddScalar", (("val", 0.5),), (2,)),
            FusedOp("Sigmoid", (), (3,)),
            FusedOp("RSubScalar", (("val", 1),), (4,)),
        ),
        (2, 5),
        (3,),
        f64,
    )
    assert cf.kernel_source(chain) == (
        "T x0, T x1",
        "T y0, T y1",
        "T t2 = gh_mul(x0, x1); T t3 = gh_add(t2, T(0.5)); T t4 = gh_sigmoid(t3); "
        "T t5 = gh_sub(T(1.0), t4); y0 = t2; y1 = t5;",
    )
    f32 = np.dtype(np.float32)
    # the scalar as float32 rounds it (CuPy casts a Python scalar to the array's dtype)
    one = Chain((((2,), f32),), (FusedOp("MulScalar", (("val", 0.1),), (0,)),), (1,), (2,), f32)
    assert "T(0.10000000149011612)" in cf.kernel_source(one)[2]
    assert not cf.FUSER.accepts("MulScalar", {"val": float("nan")}, f32)
    assert not cf.FUSER.accepts("PowScalar", {"val": 3.0}, f32)  # (pow: left unfused)
    assert cf.FUSER.accepts("PowScalar", {"val": 2}, f32)
    assert not cf.FUSER.accepts("Softplus", {"beta": 1.0}, f32)


# -- on a GPU ------------------------------------------------------------------------------------


def _cp() -> Any:
    import cupy

    return cupy


@pytest.fixture
def on() -> Iterator[None]:
    from gradhub import capture, plan

    before = plan.set_enabled(True), fusion.set_enabled(True), capture.set_enabled(False)
    yield
    plan.set_enabled(before[0])
    fusion.set_enabled(before[1])
    capture.set_enabled(before[2])


def _data(dtype: Any, shape: tuple[int, ...] = (64, 33)) -> np.ndarray:
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(shape) * 3).astype(dtype)
    flat = a.reshape(-1)
    flat[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -88.5, 90.0]
    return a


CHAINS: dict[str, Callable[[gh.Variable, gh.Variable], gh.Variable]] = {
    "arith": lambda x, b: ((x * 0.7 + 0.1) * b - b / (x + 2.0)) * -1.0,
    "activations": lambda x, b: F.relu(F.sigmoid(F.tanh(x * 0.5) * b) - 0.25),
    "math": lambda x, b: F.exp(F.sin(x) * F.cos(b)) + F.log(F.abs(x) + 1.0),
    "scalars": lambda x, b: 1.0 / (1.0 - x**2) + -(x * b),
    "comparisons": lambda x, b: (
        F.maximum2(F.minimum2(x, b), F.maximum_scalar(F.minimum_scalar(b, val=1.5), val=-0.5))
        * (F.greater(x, b) + F.less_equal(x, b) + F.not_equal(x, b))
        * (F.greater_scalar(x, val=0.25) + F.equal_scalar(x, val=0.0) + F.less_scalar(x))
    ),
}


def _host(a: Any) -> np.ndarray:
    return np.asarray(_cp().asnumpy(a))


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CHAINS))
def test_a_fused_plan_gives_the_eager_results_bit_for_bit(on: None, name: str, dtype: Any) -> None:
    cf = _fuser()
    cp = _cp()
    x = gh.Variable(cp.asarray(_data(dtype)))
    b = gh.Variable(cp.asarray(_data(dtype)[::-1].copy()))
    y = CHAINS[name](x, b)
    eager = _host(y.d)  # built eagerly: one CuPy kernel per function
    before = cf.FUSED_CALLS[0]
    y.forward()  # plans (fused)
    y.forward()
    p = gh.plan.plan_of(y)
    assert p is not None and p.fused, f"{name}: nothing fused"
    groups = len({id(g) for g in p.fused.values()})
    assert cf.FUSED_CALLS[0] - before == 2 * groups
    assert np.array_equal(_host(y.d), eager, equal_nan=True), name
    # new data through the same kernel
    new = _data(dtype) * 0.5
    x.d = cp.asarray(new)
    y.forward()
    x2 = gh.Variable(cp.asarray(new))
    b2 = gh.Variable(cp.asarray(_data(dtype)[::-1].copy()))
    assert np.array_equal(_host(y.d), _host(CHAINS[name](x2, b2).d), equal_nan=True)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_fused_training_step_gives_the_eager_gradients(on: None, dtype: Any) -> None:
    cf = _fuser()
    cp = _cp()
    rng = np.random.default_rng(5)
    w = gh.Variable(cp.asarray(rng.standard_normal((32, 16)).astype(dtype)), need_grad=True)
    v = gh.Variable(cp.asarray(rng.standard_normal((16,)).astype(dtype)), need_grad=True)

    def step(x: gh.Variable) -> Any:
        h = F.affine(x, w)
        a = F.relu(F.tanh(h * 0.5 + 0.1) * 2.0 - 0.3)  # one run (values kept for backward)
        loss = F.sum(a * a)
        gw, gv = gh.grad([loss + F.sum(v * v)], [w, v], create_graph=False)
        return loss, gw, gv

    xs = cp.asarray(rng.standard_normal((8, 32)).astype(dtype))
    want = [_host(o.d) for o in step(gh.Variable(xs))]
    c = gh.compile(step)
    c(xs)  # traced
    before = cf.FUSED_CALLS[0]
    for _ in range(2):
        got = [_host(o.d) for o in c(xs)]
        for g, e in zip(got, want):
            assert np.array_equal(g, e, equal_nan=True)
    assert cf.FUSED_CALLS[0] - before == 2


@gpu
def test_fusion_off_launches_no_fused_kernel(on: None) -> None:
    cf = _fuser()
    cp = _cp()
    fusion.set_enabled(False)
    x = gh.Variable(cp.asarray(_data(np.float32)))
    y = (x * 2.0 + 1.0) * 3.0
    before = cf.FUSED_CALLS[0]
    y.forward()
    y.forward()
    assert cf.FUSED_CALLS[0] == before
    assert gh.plan.plan_of(y).fused == {}  # type: ignore[union-attr]


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_run_of_0d_values_is_one_launch(on: None, dtype: Any) -> None:
    cf = _fuser()
    cp = _cp()
    x = gh.Variable(cp.asarray(_data(dtype)[8:, :]))
    s = F.sum(x)
    y = F.tanh(s * 0.01 + 1.0) * s - F.exp(s * 1e-3)
    eager = _host(y.d)
    before = cf.FUSED_CALLS[0]
    y.forward()
    y.forward()
    p = gh.plan.plan_of(y)
    assert p is not None and len({id(g) for g in p.fused.values()}) == 1
    assert cf.FUSED_CALLS[0] - before == 2
    assert np.array_equal(_host(y.d), eager)


@gpu
def test_inputs_not_c_contiguous_run_by_the_functions_kernels(on: None) -> None:
    cf = _fuser()
    cp = _cp()
    xt = gh.Variable(cp.asfortranarray(cp.asarray(_data(np.float32))))
    b = gh.Variable(cp.asarray(_data(np.float32)[::-1].copy()))
    y = CHAINS["arith"](xt, b)
    eager = y.d.copy(order="K")
    before = cf.FUSED_CALLS[0]
    y.forward()
    y.forward()
    assert cf.FUSED_CALLS[0] == before  # (no fused launch: the functions' own kernels)
    assert np.array_equal(_host(y.d), _host(eager), equal_nan=True)
    assert y.d.flags.f_contiguous == eager.flags.f_contiguous


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_recorded_step_with_fused_kernels_gives_the_eager_results(on: None, dtype: Any) -> None:
    """A compiled step recorded into a CUDA graph (gradhub.capture) records the fused kernel like
    any other: its replays give the eager results bit for bit (no matrix product in the step, so
    nothing goes through cuBLAS directly)."""
    from gradhub import capture

    cf = _fuser()
    cp = _cp()
    capture.set_enabled(True)
    rng = np.random.default_rng(9)
    w = gh.Variable(cp.asarray(rng.standard_normal((64, 33)).astype(dtype)), need_grad=True)

    def step(x: gh.Variable) -> Any:
        a = F.sigmoid(F.tanh(x * w + 0.1) * 2.0) - x * 0.5
        loss = F.sum(a * a)
        (g,) = gh.grad([loss], [w], create_graph=False)
        return loss, g

    xs = [cp.asarray(_data(dtype) * s) for s in (1.0, 0.5, -2.0, 0.25, 3.0)]
    c = gh.compile(step)
    before = cf.FUSED_CALLS[0]
    outs = [[_host(o.d) for o in c(x)] for x in xs]
    assert c.capture_refused is None, c.capture_refused
    tr = list(c.traces.values())[-1]
    assert tr.captured is not None
    assert tr.plan.fused
    assert cf.FUSED_CALLS[0] - before >= 1  # (the plan's run before the recording)
    for x, got in zip(xs, outs):
        want = [_host(o.d) for o in step(gh.Variable(x))]
        for g, e in zip(got, want):
            assert np.array_equal(g, e, equal_nan=True)

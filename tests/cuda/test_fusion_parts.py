"""The parts of gradhub-cuda's elementwise fuser that need no GPU (they run everywhere).

The fused kernel's source (``gradhub_cuda.fusion.kernel_source``) is run here by a stand-in that
reads it as numpy code: each ``gh_add``/``gh_mul``/... one numpy operation rounding in the
array's dtype, ``exp``/``log``/``tanh``... numpy's, ``gh_max`` CuPy's NaN-propagating maximum,
``gh_sigmoid`` the template of the kernel's preamble. Registered as the fuser of a fake device, it
runs through plans, so that what the GPU runs is checked here for its structure: each function's
expression computes what its generic kernel computes on numpy, in the same order, the scalar
attributes rounded to the dtype as the generic kernels round them, bit for bit.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from fake_device import FakeArray, FakeType
from gradhub import fusion, plugins
from gradhub.registry import REGISTRY

cf = pytest.importorskip("gradhub_cuda.fusion")


def _namespace(dtype: Any) -> dict[str, Any]:
    T = np.dtype(dtype).type

    def gh_max(a: Any, b: Any) -> Any:
        return np.where(np.isnan(a) | np.isnan(b), T(np.nan), np.maximum(a, b))

    def gh_min(a: Any, b: Any) -> Any:
        return np.where(np.isnan(a) | np.isnan(b), T(np.nan), np.minimum(a, b))

    def gh_sigmoid(x: Any) -> Any:
        e = np.exp(-np.abs(x))
        r = T(1) / (T(1) + e)
        return np.where(x >= T(0), r, e * r)

    return {
        "T": T,
        "gh_add": lambda a, b: a + b,
        "gh_sub": lambda a, b: a - b,
        "gh_mul": lambda a, b: a * b,
        "gh_div": lambda a, b: a / b,
        "gh_abs": np.abs,
        "gh_max": gh_max,
        "gh_min": gh_min,
        "gh_sigmoid": gh_sigmoid,
        "exp": np.exp,
        "log": np.log,
        "sin": np.sin,
        "cos": np.cos,
        "tanh": np.tanh,
    }


def run_source(src: tuple[str, str, str], dtype: Any, arrays: list[Any]) -> list[Any]:
    """The kernel ``src`` (in_params, out_params, operation) run on numpy ``arrays``."""
    ins = [p.split()[1] for p in src[0].split(", ")]
    outs = [p.split()[1] for p in src[1].split(", ")]
    ns = _namespace(dtype)
    ns.update(zip(ins, arrays))
    for stmt in src[2].split("; "):
        stmt = re.sub(r"^T (t\d+) = ", r"\1 = ", stmt.rstrip(";"))
        with np.errstate(all="ignore"):
            exec(stmt, ns)
    return [np.asarray(ns[o], dtype=dtype) for o in outs]


class StandIn(cf.CudaFuser):  # type: ignore[misc, name-defined]
    """The cuda fuser, its kernels run by :func:`run_source` on the fake device (the fused call
    itself is the cuda fuser's: inputs that are not C-contiguous go through the functions' own
    kernels)."""

    calls = 0
    kind = "fake"

    def compile(self, src: tuple[str, str, str]) -> Any:
        dtype = {"T": None}

        def kernel(*arrays: Any) -> list[Any]:
            StandIn.calls += 1
            plain = [a.view(np.ndarray) for a in arrays]
            dt = dtype["T"] = plain[0].dtype
            return [o.view(FakeArray) for o in run_source(src, dt, plain)]

        return kernel


def _add_fake(register: Any) -> None:
    register.device(FakeType())


def _add_fuser(register: Any) -> None:
    register.fuser("fake", StandIn())


@pytest.fixture(autouse=True)
def _stand_in() -> Iterator[None]:
    dev = types.ModuleType("fake_cuda_fuser")
    dev.gradhub_add_devices = gh.hookimpl(_add_fake)  # type: ignore[attr-defined]
    dev.gradhub_add_kernels = gh.hookimpl(_add_fuser)  # type: ignore[attr-defined]
    plugins.reset()
    plugins.load_plugins(extra=[("fake_cuda_fuser", dev)])
    before = fusion.set_enabled(True)
    StandIn.calls = 0
    yield
    fusion.set_enabled(before)
    plugins.reset()


def _fake(a: Any) -> gh.Variable:
    with gh.context_scope(gh.get_extension_context("fake")):
        return gh.Variable(np.asarray(a))


def _data(dtype: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((16, 9)) * 3).astype(dtype)
    a.reshape(-1)[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -88.5, 90.0]
    return a


CHAINS: dict[str, Callable[[gh.Variable, gh.Variable], gh.Variable]] = {
    "arith": lambda x, b: ((x * 0.7 + 0.1) * b - b / (x + 2.0)) * -1.0,
    "activations": lambda x, b: F.relu(F.sigmoid(F.tanh(x * 0.5) * b) - 0.25),
    "math": lambda x, b: F.exp(F.sin(x) * F.cos(b)) + F.log(F.abs(x) + 1.0),
    "scalars": lambda x, b: 1.0 / (1.0 - x**2) + -(x * b),
    "scalar operand": lambda x, b: (x - b[0, 0]) * b[0, 0] + 1.0 / 3.0,
    "comparisons": lambda x, b: (
        F.maximum2(F.minimum2(x, b), F.maximum_scalar(F.minimum_scalar(b, val=1.5), val=-0.5))
        * (F.greater(x, b) + F.greater_equal(x, b) + F.less(x, b) + F.less_equal(x, b))
        * (F.equal(x, b) + F.not_equal(x, b) + F.greater_scalar(x, val=0.25))
        * (F.greater_equal_scalar(x, val=0.0) + F.less_scalar(x) + F.less_equal_scalar(x))
        * (F.equal_scalar(x, val=0.0) + F.not_equal_scalar(x, val=-0.0))
    ),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CHAINS))
def test_the_cuda_sources_compute_the_generic_kernels_numbers(name: str, dtype: Any) -> None:
    with np.errstate(all="ignore"):
        x, b = _fake(_data(dtype, 1)), _fake(_data(dtype, 2))
        y = CHAINS[name](x, b)
        eager = np.array(y.d.view(np.ndarray))
        y.forward()
        y.forward()
    p = gh.plan.plan_of(y)
    assert p is not None and p.fused, name
    assert StandIn.calls == 2 * len({id(g) for g in p.fused.values()})
    assert np.array_equal(np.asarray(y.d.view(np.ndarray)), eager, equal_nan=True), name


def test_every_expression_is_run_here() -> None:
    """Each function of EXPRESSIONS occurs in a chain above (so its formula is checked)."""
    seen: set[str] = set()
    for f in CHAINS.values():
        y = f(_fake(np.full((2, 3), 3.0)), _fake(np.full((2, 3), 2.0)))
        y.forward()
        seen |= {nd.fdef.name for nd in gh.plan.plan_of(y).nodes}  # type: ignore[union-attr]
    missing = set(cf.EXPRESSIONS) - seen - {"RSubScalar", "Sub2"}
    assert not missing, missing


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_expression_alone(dtype: Any) -> None:
    """Every function of EXPRESSIONS against its generic kernel, through one chain each."""
    x0, x1 = _data(dtype, 3), np.abs(_data(dtype, 4)) + 0.5
    dt = np.dtype(dtype)
    for name in cf.EXPRESSIONS:
        fdef = REGISTRY.get(name)
        attrs = dict(fdef.attrs)
        if "val" in attrs:
            attrs["val"] = 2 if name == "PowScalar" else 0.3
        n_in = len(fdef.inputs)
        args = [x0, x1][:n_in]
        ops = (fusion.FusedOp(name, tuple(attrs.items()), tuple(range(n_in))),)
        chain = fusion.Chain(tuple((a.shape, dt) for a in args), ops, (n_in,), x0.shape, dt)
        src = cf.kernel_source(chain)
        assert src is not None, name
        with np.errstate(all="ignore"):
            want = fdef.forward(np, *args, **attrs)
            (got,) = run_source(src, dtype, list(args))
        assert got.dtype == want.dtype, name
        assert np.array_equal(got, want, equal_nan=True), name


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_fused_training_step_gives_the_eager_gradients(dtype: Any) -> None:
    """The GPU test's compiled step (test_fusion_cuda.py), run here by the stand-in."""
    rng = np.random.default_rng(5)
    with gh.context_scope(gh.get_extension_context("fake")):
        w = gh.Variable(rng.standard_normal((32, 16)).astype(dtype), need_grad=True)
        v = gh.Variable(rng.standard_normal((16,)).astype(dtype), need_grad=True)

    def step(x: gh.Variable) -> Any:
        h = F.affine(x, w)
        a = F.relu(F.tanh(h * 0.5 + 0.1) * 2.0 - 0.3)
        loss = F.sum(a * a)
        gw, gv = gh.grad([loss + F.sum(v * v)], [w, v], create_graph=False)
        return loss, gw, gv

    xs = _fake(rng.standard_normal((8, 32)).astype(dtype)).d
    want = [np.array(o.d.view(np.ndarray)) for o in step(gh.Variable(xs))]
    c = gh.compile(step)
    c(xs)
    for _ in range(2):
        got = [np.array(o.d.view(np.ndarray)) for o in c(xs)]
        for g, e in zip(got, want):
            assert np.array_equal(g, e)
    assert StandIn.calls == 2


def test_a_run_of_0d_values() -> None:
    """The GPU test's 0-d run (a loss's arithmetic), run here by the stand-in."""
    x = _fake(_data(np.float32, 6)[8:, :])
    s = F.sum(x)
    y = F.tanh(s * 0.01 + 1.0) * s - F.exp(s * 1e-3)
    eager = np.array(y.d.view(np.ndarray))
    y.forward()
    y.forward()
    assert StandIn.calls == 2
    assert np.array_equal(np.asarray(y.d.view(np.ndarray)), eager)


def test_inputs_not_c_contiguous_run_by_the_functions_kernels() -> None:
    """A transposed input: the fused call runs the functions' own kernels (their results keep
    the input's layout, as CuPy's do), with the same numbers."""
    xt = _fake(np.ascontiguousarray(_data(np.float64, 7).T).T)  # Fortran order
    b = _fake(_data(np.float64, 8))
    with np.errstate(all="ignore"):
        y = CHAINS["arith"](xt, b)
        eager = y.d.view(np.ndarray).copy(order="K")
        y.forward()
        y.forward()
    p = gh.plan.plan_of(y)
    assert p is not None and p.fused
    assert StandIn.calls == 0
    got = y.d.view(np.ndarray)
    assert np.array_equal(got, eager, equal_nan=True)
    assert got.flags.f_contiguous == eager.flags.f_contiguous


def test_the_recorded_steps_graph_by_the_stand_in() -> None:
    """The GPU test's recorded step (test_fusion_cuda.py) as a plan here (the fake device records
    nothing): the same fused runs, the eager results."""
    rng = np.random.default_rng(9)
    with gh.context_scope(gh.get_extension_context("fake")):
        w = gh.Variable(rng.standard_normal((16, 9)), need_grad=True)

    def step(x: gh.Variable) -> Any:
        a = F.sigmoid(F.tanh(x * w + 0.1) * 2.0) - x * 0.5
        loss = F.sum(a * a)
        (g,) = gh.grad([loss], [w], create_graph=False)
        return loss, g

    c = gh.compile(step)
    for s in (1.0, 0.5, -2.0):
        x = _fake(_data(np.float64, 10) * s).d
        with np.errstate(all="ignore"):
            got = [np.array(o.d.view(np.ndarray)) for o in c(x)]
            want = [np.array(o.d.view(np.ndarray)) for o in step(gh.Variable(x))]
        for g, e in zip(got, want):
            assert np.array_equal(g, e, equal_nan=True)
    assert list(c.traces.values())[-1].plan.fused
    assert StandIn.calls == 2

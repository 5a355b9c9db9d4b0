"""Static graphs recorded as CUDA graphs (gradhub.capture_static): nnabla's loop ``x.d = batch;
solver.zero_grad(); loss.forward(); loss.backward(clear_buffer=...); solver.update()`` and the
same loop with native Variables (``.g`` cleared between steps) on ``cuda``, and mxnet's bound
executor (``forward``, ``backward``: its ``grad()`` walk recorded) on ``gpu``.

The forward is recorded at its third ``forward()``, ``backward()``'s walk (with or without
``retain_grad``) at its third call after that; every step's loss, gradients and parameters must
equal those of the same loop run as a plan (recording off) in the same process: bit for bit for
elementwise graphs, within the recorded products' tolerance (cuBLAS called directly) for an MLP.
A loss or ``.g`` handed out is not changed by later steps. Every test skips, with one reason,
where no usable CUDA device exists.
"""

from __future__ import annotations

from typing import Any

import gradhub as gh
import numpy as np
import pytest
from cuda_helpers import gpu
from gradhub import capture, plan

pytestmark = [gpu, pytest.mark.usefixtures("recording_on")]


def _cp() -> Any:
    import cupy

    return cupy


def _host(a: Any) -> np.ndarray:
    return _cp().asnumpy(a)


def _nnabla_loop(
    graph: str, solver_name: str, clear_buffer: bool, recorded: bool, steps: int
) -> tuple[list[np.ndarray], Any]:
    """nnabla's loop on cuda: each step's loss, gradients and parameters (on the host), and the
    loss Variable."""
    import gradhub_compat.nnabla as nn
    import gradhub_compat.nnabla.functions as F
    import gradhub_compat.nnabla.parametric_functions as PF
    import gradhub_compat.nnabla.solvers as S
    from gradhub_compat.nnabla.ext_utils import get_extension_context

    before = capture.set_enabled(recorded)
    try:
        nn.clear_parameters()
        with nn.context_scope(get_extension_context("cuda")):
            rng = np.random.RandomState(0)
            x = nn.Variable((16, 6))
            t = nn.Variable((16, 1))
            if graph == "elementwise":
                w = nn.Variable.from_numpy_array(rng.randn(6), need_grad=True)
                b = nn.Variable.from_numpy_array(rng.randn(6), need_grad=True)
                h = F.tanh(x * w + b)
                loss = F.mean(h * h)
                params = {"w": w, "b": b}
            else:
                h = F.relu(PF.affine(x, 32, name="fc1", rng=rng))
                loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 3, name="fc2", rng=rng), t))
                params = dict(nn.get_parameters())
            solver = S.Momentum(lr=0.05) if solver_name == "Momentum" else S.Adam(alpha=0.01)
            solver.set_parameters(params)
            out: list[np.ndarray] = []
            kept: list[tuple[Any, np.ndarray]] = []
            for step in range(steps):
                x.d = np.random.RandomState(step).randn(16, 6)
                t.d = np.random.RandomState(step).randint(0, 3, (16, 1))
                solver.zero_grad()
                loss.forward(clear_no_need_grad=True)
                loss.backward(clear_buffer=clear_buffer)
                solver.update()
                handed = [loss.d] + [p.g for p in params.values()]
                kept += [(a, _host(a)) for a in handed]
                out += [_host(a) for a in handed] + [_host(p.d) for p in params.values()]
        for a, host in kept:
            np.testing.assert_array_equal(_host(a), host, err_msg="changed by a later step")
        return out, loss
    finally:
        capture.set_enabled(before)


def _recorded_walk(loss: Any) -> bool:
    p = plan.plan_of(loss)
    return p is not None and any(prog.recorded for prog in p.programs.values())


@pytest.mark.parametrize("solver_name", ["Momentum", "Adam"])
@pytest.mark.parametrize("clear_buffer", [True, False])
def test_nnablas_elementwise_loop_recorded_equals_the_plan_bit_for_bit(
    solver_name: str, clear_buffer: bool
) -> None:
    got, loss = _nnabla_loop("elementwise", solver_name, clear_buffer, True, 8)
    p = plan.plan_of(loss)
    assert p is not None and p.recorded is not None, p and p.capture_refused
    assert p.recorded.graph.launches == 6  # steps 3 to 8
    assert _recorded_walk(loss)  # (clear_buffer=False: a retain_grad walk, recorded too)
    want, _ = _nnabla_loop("elementwise", solver_name, clear_buffer, False, 8)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(a, b, err_msg=f"value {k}")


#: the recorded products run through cuBLAS called directly (gradhub_cuda.cublas_capture),
#: where cuBLAS may pick another algorithm than for CuPy's call
_RTOL = 1e-5


def test_nnablas_mlp_loop_recorded_equals_the_plan() -> None:
    got, loss = _nnabla_loop("mlp", "Momentum", True, True, 6)
    p = plan.plan_of(loss)
    assert p is not None and p.recorded is not None, p and p.capture_refused
    assert _recorded_walk(loss)
    want, _ = _nnabla_loop("mlp", "Momentum", True, False, 6)
    for k, (a, b) in enumerate(zip(got, want)):
        tol = _RTOL * float(np.max(np.abs(b), initial=0.0))
        np.testing.assert_allclose(a, b, rtol=0, atol=tol, err_msg=f"value {k}")


def _native_loop(recorded: bool, steps: int) -> tuple[list[np.ndarray], gh.Variable]:
    """The native API's static loop: ``.g`` cleared, ``forward()``, ``backward(retain_graph=
    False)``, an SGD update (in place, or a new array)."""
    cp = _cp()
    F = gh.functions
    before = capture.set_enabled(recorded)
    try:
        rng = np.random.default_rng(0)
        x = gh.Variable(cp.asarray(rng.standard_normal((16, 6))), need_grad=False)
        w = gh.Variable(cp.asarray(rng.standard_normal(6)))
        b = gh.Variable(cp.asarray(rng.standard_normal(6)))
        h = F.tanh(x * w + b)
        loss = F.sum(F.log(h * h + 1.0))
        out: list[np.ndarray] = []
        kept: list[tuple[Any, np.ndarray]] = []
        for k in range(steps):
            x.d = cp.asarray(np.random.default_rng(k + 1).standard_normal((16, 6)))
            w.cleargrad()
            b.cleargrad()
            loss.forward()
            loss.backward(retain_graph=False)
            handed = [loss.d, w.g, b.g]
            kept += [(a, _host(a)) for a in handed]
            out += [_host(a) for a in handed]
            for p in (w, b):
                if k % 2:
                    p.d -= 0.05 * p.g
                else:
                    p.d = p.d - 0.05 * p.g
        for a, host in kept:
            np.testing.assert_array_equal(_host(a), host, err_msg="changed by a later step")
        return out, loss
    finally:
        capture.set_enabled(before)


def test_the_native_static_loop_recorded_equals_the_plan_bit_for_bit() -> None:
    got, loss = _native_loop(True, 8)
    p = plan.plan_of(loss)
    assert p is not None and p.recorded is not None, p and p.capture_refused
    assert _recorded_walk(loss)
    want, _ = _native_loop(False, 8)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(a, b, err_msg=f"value {k}")


def _mxnet_loop(recorded: bool, steps: int) -> tuple[list[np.ndarray], Any]:
    """mxnet's bound executor on ``gpu``: ``forward(is_train=True, data=..., label=...)``,
    ``backward()``; each step's outputs and gradient arrays (on the host), and the plan."""
    import gradhub_compat.mxnet as mx

    before = capture.set_enabled(recorded)
    try:
        data, label = mx.sym.Variable("data"), mx.sym.Variable("label")
        h = mx.sym.Activation(
            mx.sym.FullyConnected(data, num_hidden=32, name="fc1"), act_type="relu"
        )
        out = mx.sym.FullyConnected(h, num_hidden=3, name="fc2")
        sym = mx.sym.SoftmaxOutput(out, label, name="softmax")
        ex = sym.simple_bind(mx.gpu(), data=(16, 6), label=(16,))
        rng = np.random.RandomState(7)
        for name, arr in ex.arg_dict.items():
            if name not in ("data", "label"):
                arr[:] = rng.randn(*arr.shape).astype(np.float32) * 0.5
        values: list[np.ndarray] = []
        for step in range(steps):
            r = np.random.RandomState(step)
            outs = ex.forward(is_train=True, data=r.randn(16, 6), label=r.randint(0, 3, 16))
            ex.backward()
            values += [o.asnumpy() for o in outs]
            values += [g.asnumpy() for g in ex.grad_arrays if g is not None]
        return values, ex._plan[0] if ex._plan is not None else None
    finally:
        capture.set_enabled(before)


def test_an_mxnet_executor_recorded_equals_the_plan() -> None:
    got, p = _mxnet_loop(True, 8)
    assert p is not None and p.recorded is not None, p and p.capture_refused
    assert p.recorded.graph.launches == 5  # built at step 1, planned at 2-3, recorded at 4
    assert any(prog.recorded for prog in p.programs.values())  # grad()'s walk, from step 6
    want, _ = _mxnet_loop(False, 8)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        tol = _RTOL * float(np.max(np.abs(b), initial=0.0))
        np.testing.assert_allclose(a, b, rtol=0, atol=tol, err_msg=f"value {k}")

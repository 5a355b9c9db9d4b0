"""``backward()`` inside a compiled step recorded as a CUDA graph (gradhub.plan, gradhub.capture).

The step's ``backward()`` walks inside the graph; after each launch the leaves' ``.g`` are set
on the host as ``backward()`` sets them. Over several calls (new inputs, ``.g`` cleared, set to
zeros, kept to accumulate or replaced between calls, parameters updated in place and replaced)
every ``.g``, ``.d`` and loss equals the eager step's: bit for bit for an elementwise step, within
the recorded products' tolerance (cuBLAS called directly) for an MLP. A ``.g`` kept from one call
is not changed by later ones. Every test skips, with one reason, where no usable CUDA device
exists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from cuda_helpers import gpu
from gradhub.optim import SGD

pytestmark = [gpu, pytest.mark.usefixtures("recording_on")]


def _cp() -> Any:
    import cupy

    return cupy


def _host(a: Any) -> np.ndarray:
    return _cp().asnumpy(a)


def _twin(ps: list[gh.Variable]) -> list[gh.Variable]:
    """Parameters with copies of the same data for the eager side."""
    return [gh.Variable(p.d.copy()) for p in ps]


def _trace_of(step: Any) -> Any:
    return list(step.traces.values())[-1]


def _elementwise_step(w: gh.Variable, b: gh.Variable) -> Callable[[Any], Any]:
    F = gh.functions

    def step(x: Any) -> Any:
        h = x * w + b
        loss = F.sum(F.log(h * h + 1.0) * F.tanh(h))
        loss.backward()
        return loss

    return step


def _check_exact(got: list[gh.Variable], want: list[gh.Variable], what: str) -> None:
    for k, (u, v) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(_host(u.d), _host(v.d), err_msg=f"{what}: .d of {k}")
        if v.g is None:
            assert u.g is None, f"{what}: .g of {k}"
            continue
        assert type(u.g) is type(v.g) and u.g.dtype == v.g.dtype, f"{what}: .g of {k}"
        np.testing.assert_array_equal(_host(u.g), _host(v.g), err_msg=f"{what}: .g of {k}")


@pytest.mark.parametrize("between", ["cleared", "zeros", "accumulated", "replaced"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_recorded_backward_step_gives_the_eager_g_bit_for_bit(between: str, dtype: Any) -> None:
    cp = _cp()
    rng = np.random.default_rng(0)
    ps = [gh.Variable(cp.asarray(rng.standard_normal(s).astype(dtype))) for s in [(7,), (7,)]]
    qs = _twin(ps)
    step, eager = gh.compile(_elementwise_step(*ps)), _elementwise_step(*qs)
    held: list[tuple[Any, np.ndarray]] = []
    for k in range(7):
        x = cp.asarray(rng.standard_normal((5, 7)).astype(dtype))
        for p, q in zip(ps, qs):
            if between == "cleared":  # opt.zero_grad() (PyTorch's set_to_none)
                p.cleargrad()
                q.cleargrad()
            elif between == "zeros":  # nnabla's solver.zero_grad()
                p.g, q.g = cp.zeros(p.shape, dtype), cp.zeros(q.shape, dtype)
            elif between == "replaced" and k:
                g = cp.asarray(rng.standard_normal(p.shape).astype(dtype))
                p.g, q.g = g, g.copy()
        loss, loss_eager = step(x), eager(x)
        np.testing.assert_array_equal(_host(loss.d), _host(loss_eager.d), err_msg=f"call {k}")
        _check_exact(ps, qs, f"call {k + 1}")
        held += [(p.g, _host(p.g)) for p in ps]
        for p, q in zip(ps, qs):  # an update in place, then a new array (copied back)
            if k % 2:
                p.d -= 0.05 * p.g
                q.d -= 0.05 * q.g
            else:
                p.d = p.d - 0.05 * p.g
                q.d = q.d - 0.05 * q.g
    assert step.capture_refused is None, step.capture_refused
    assert _trace_of(step).captured.graph.launches == 5
    for k, (g, host) in enumerate(held):  # no .g handed out is written by a later launch
        np.testing.assert_array_equal(_host(g), host, err_msg=f".g #{k} changed")


def _mlp_step(p: list[gh.Variable]) -> Callable[[Any, Any], Any]:
    F = gh.functions

    def step(x: Any, t: Any) -> Any:
        h = F.relu(F.affine(x, p[0], p[1]))
        loss = F.mean(F.softmax_cross_entropy(F.affine(h, p[2], p[3]), t))
        loss.backward()
        return loss

    return step


#: the recorded products run through cuBLAS called directly (gradhub_cuda.cublas_capture),
#: where cuBLAS may pick another algorithm than for CuPy's call
_RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def _close(u: Any, v: Any, what: str) -> None:
    a, b = _host(u), _host(v)
    assert a.dtype == b.dtype and a.shape == b.shape, what
    tol = _RTOL[b.dtype] * float(np.max(np.abs(b), initial=0.0))
    np.testing.assert_allclose(a, b, rtol=0, atol=tol, err_msg=what)


def test_an_mlp_training_loop_with_backward_and_an_optimizer_is_recorded() -> None:
    """``opt.zero_grad(); loss = step(x, t); opt.update()``: PyTorch's loop."""
    cp = _cp()
    rng = np.random.default_rng(1)
    shapes = [(20, 32), (32,), (32, 10), (10,)]
    ps = [gh.Variable(cp.asarray(rng.standard_normal(s).astype(np.float32) * 0.3)) for s in shapes]
    qs = _twin(ps)
    step, eager = gh.compile(_mlp_step(ps)), _mlp_step(qs)
    opt, opt_eager = SGD(ps, lr=0.1), SGD(qs, lr=0.1)
    for k in range(6):
        x = cp.asarray(rng.standard_normal((16, 20)).astype(np.float32))
        t = cp.asarray(rng.integers(0, 10, (16, 1)))
        opt.zero_grad()
        opt_eager.zero_grad()
        loss, loss_eager = step(x, t), eager(x, t)
        _close(loss.d, loss_eager.d, f"call {k + 1}: loss")
        for i, (p, q) in enumerate(zip(ps, qs)):
            _close(p.g, q.g, f"call {k + 1}: .g of {i}")
        opt.update()
        opt_eager.update()
        for i, (p, q) in enumerate(zip(ps, qs)):
            _close(p.d, q.d, f"call {k + 1}: .d of {i}")
            q.d = p.d.copy()  # the next call from the same parameters (no drift)
    assert step.capture_refused is None, step.capture_refused
    assert _trace_of(step).captured.graph.launches == 4

"""CUDA graphs of compiled steps (gradhub_cuda.capture, gradhub.capture) on a GPU.

A compiled step on ``cuda`` is recorded into a CUDA graph at its third call and replayed with one
launch; its results must be those of the eager step, bit for bit (the same kernels in the same
order), for every call, also when parameters change between calls. Every test skips, with one
reason, where no usable CUDA device exists. ``GRADHUB_CAPTURE_REPORT=<file>`` makes the op-matrix
test write which functions' steps were recorded and why the others were not.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from cuda_helpers import agree_within, gpu, host_arrays
from gradhub.audit import samples_of
from gradhub.registry import REGISTRY, _ensure_loaded
from step_helpers import CNN_SHAPES, cnn_penalty

pytestmark = [gpu, pytest.mark.usefixtures("recording_on")]


def _cp() -> Any:
    import cupy

    return cupy


#: how far a recorded step may be from the eager one: the same kernels, except the matrix
#: products, which a recording runs through cuBLAS called directly (gradhub_cuda.cublas_capture)
#: where cuBLAS may pick another algorithm than for CuPy's call
_RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def _same(a: list[np.ndarray], b: list[np.ndarray], what: str) -> bool:
    """Whether ``a`` equals ``b`` bit for bit; asserts they agree within :data:`_RTOL` of each
    array's largest magnitude."""
    return agree_within(a, b, what, _RTOL)


def _mlp_step(p: list[gh.Variable]) -> Callable[[Any, Any], Any]:
    F = gh.functions

    def step(x: Any, t: Any) -> Any:
        h = F.relu(F.affine(x, p[0], p[1]))
        loss = F.mean(F.softmax_cross_entropy(F.affine(h, p[2], p[3]), t))
        return (loss, *gh.grad([loss], p, create_graph=False))

    return step


def _mlp_params(rng: np.random.Generator, dtype: Any = np.float32) -> list[gh.Variable]:
    cp = _cp()
    shapes = [(20, 32), (32,), (32, 10), (10,)]
    return [gh.Variable(cp.asarray(rng.standard_normal(s).astype(dtype) * 0.3)) for s in shapes]


def _batches(rng: np.random.Generator, n: int, dtype: Any = np.float32) -> list[tuple[Any, Any]]:
    cp = _cp()
    return [
        (
            cp.asarray(rng.standard_normal((16, 20)).astype(dtype)),
            cp.asarray(rng.integers(0, 10, (16, 1))),
        )
        for _ in range(n)
    ]


def _trace_of(step: Any) -> Any:
    return list(step.traces.values())[-1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_compiled_mlp_step_is_recorded_and_matches_eager(dtype: Any) -> None:
    rng = np.random.default_rng(0)
    p = _mlp_params(rng, dtype)
    eager = _mlp_step(p)
    step = gh.compile(eager)
    batches = _batches(rng, 6, dtype)
    outs = [host_arrays(step(x, t)) for x, t in batches]
    assert step.capture_refused is None
    tr = _trace_of(step)
    assert tr.captured is not None and tr.captured.graph.launches == 4
    for k, ((x, t), out) in enumerate(zip(batches, outs)):
        _same(out, host_arrays(eager(x, t)), f"call {k + 1}")


def test_results_are_copies_and_parameters_are_followed() -> None:
    rng = np.random.default_rng(1)
    p = _mlp_params(rng)
    eager = _mlp_step(p)
    step = gh.compile(eager)
    (x, t), *_ = _batches(rng, 1)
    kept = []
    for k in range(8):
        out = step(x, t)
        kept.append((out, host_arrays(out)))
        _same(host_arrays(out), host_arrays(eager(x, t)), f"call {k + 1}")
        for v, g in zip(p, out[1:]):
            if k % 2:
                v.d -= 0.1 * g.d  # in place
            else:
                v.d = v.d - 0.1 * g.d  # a new array, copied back into the recorded one
    for out, host in kept:
        _same(host_arrays(out), host, "a result changed by a later call")
    assert _trace_of(step).captured.graph.launches == 6


def test_a_label_out_of_range_raises_after_recording() -> None:
    rng = np.random.default_rng(2)
    p = _mlp_params(rng)
    step = gh.compile(_mlp_step(p))
    batches = _batches(rng, 3)
    for x, t in batches:
        step(x, t)
    assert _trace_of(step).captured is not None
    x, t = batches[0]
    bad = t.copy()
    bad[3, 0] = 10
    with pytest.raises(ValueError, match="labels outside"):
        step(x, bad)
    _same(host_arrays(step(x, t)), host_arrays(_mlp_step(p)(x, t)), "after the error")


def test_a_new_batch_shape_is_traced_and_recorded_again() -> None:
    rng = np.random.default_rng(3)
    p = _mlp_params(rng)
    eager = _mlp_step(p)
    step = gh.compile(eager)
    cp = _cp()
    for n in (16, 16, 16, 8, 8, 8, 16):
        x = cp.asarray(rng.standard_normal((n, 20)).astype(np.float32))
        t = cp.asarray(rng.integers(0, 10, (n, 1)))
        _same(host_arrays(step(x, t)), host_arrays(eager(x, t)), f"batch {n}")
    assert all(tr.captured is not None for tr in step.traces.values())


def test_the_seed_cnn_with_gradient_penalty_is_recorded() -> None:
    cp = _cp()
    rng = np.random.default_rng(4)
    p = [
        gh.Variable(cp.asarray(rng.standard_normal(sh).astype(np.float32) * 0.3))
        for sh in CNN_SHAPES
    ]

    def eager(x: Any, t: Any) -> Any:
        total = cnn_penalty(x, t, p)
        return (total, *gh.grad([total], p, create_graph=False))

    step = gh.compile(eager)
    for k in range(5):
        x = cp.asarray(rng.standard_normal((3, 3, 8, 8)).astype(np.float32))
        t = cp.asarray(rng.integers(0, 5, (3, 1)))
        _same(host_arrays(step(x, t)), host_arrays(eager(x, t)), f"call {k + 1}")
    assert step.capture_refused is None, step.capture_refused
    assert _trace_of(step).captured.graph.launches == 3


def test_host_data_inside_a_recording_is_refused() -> None:
    cp = _cp()
    dev = gh.Variable(cp.zeros(3)).device
    with pytest.raises(gh.CaptureUnsupported, match="copies host data to the GPU"):
        dev.capture(lambda: cp.asarray(np.ones(3)) * 2)
    # the device still works, and asarray is CuPy's own again
    assert float(cp.asarray(np.ones(3)).sum()) == 3.0


def test_a_host_synchronisation_inside_a_recording_is_refused() -> None:
    cp = _cp()
    a = cp.arange(4.0)
    dev = gh.Variable(a).device
    with pytest.raises(gh.CaptureUnsupported):
        dev.capture(lambda: float((a * 2).sum()))
    assert float((a * 2).sum()) == 12.0


def _functions() -> list[str]:
    _ensure_loaded()
    return sorted(REGISTRY.functions)


def test_every_functions_samples_through_recorded_steps() -> None:
    """Each function's samples as a compiled step (a value and its first-order gradients) on
    cuda, four calls with the inputs moved between calls: the results equal the eager step's bit
    for bit, whether the step was recorded or runs as a plan (the report says which)."""
    cp = _cp()
    F = gh.functions
    report, mismatches, inexact = [], [], []
    for name in _functions():
        fdef = REGISTRY.get(name)
        if fdef.kind != "primitive" or fdef.api is None:
            continue
        for s in samples_of(fdef):
            arrays = [np.asarray(a) for a in s.inputs]
            if any(a.dtype.kind not in "biuf" for a in arrays):
                continue
            grad_at = [fdef.differentiable and a.dtype.kind == "f" for a in arrays]
            xs = [gh.Variable(cp.asarray(a), need_grad=g) for a, g in zip(arrays, grad_at)]
            moved = set(s.grad_inputs or range(len(arrays))) if fdef.differentiable else set()

            def eager(*ins: Any, fdef: Any = fdef, attrs: Any = s.attrs, at: Any = grad_at) -> Any:
                res = fdef.api(*ins, **attrs)
                outs = [o for o in (res if isinstance(res, tuple) else (res,))]
                outs = [o for o in outs if o.dtype.kind == "f"]
                if not outs:
                    return tuple(res) if isinstance(res, tuple) else res
                y = sum((F.sum(o * o) for o in outs), start=gh.Variable(cp.zeros(())))
                wrt = [v for v, g in zip(ins, at) if g]
                if not wrt or not y.need_grad:
                    return y
                return (y, *gh.grad([y], wrt, create_graph=False))

            try:
                host_arrays(eager(*xs))
            except Exception as e:  # the sample fails on cuda eagerly: the op matrix reports it
                report.append(f"{name}[{s.name}]: eager failed ({type(e).__name__})")
                continue
            step = gh.compile(eager)
            try:
                for k in range(4):
                    for i, (x, a) in enumerate(zip(xs, arrays)):
                        if i in moved and a.dtype.kind == "f":
                            x.d = cp.asarray(a * (1 + 1e-3 * k))
                    got = host_arrays(step(*xs))
                    try:
                        exact = _same(
                            got, host_arrays(eager(*xs)), f"{name}[{s.name}] call {k + 1}"
                        )
                        if not exact:
                            inexact.append(f"{name}[{s.name}] call {k + 1}")
                    except AssertionError as e:
                        mismatches.append(str(e).splitlines()[0])
                        break
            except Exception as e:
                mismatches.append(f"{name}[{s.name}]: {type(e).__name__}: {e}")
                continue
            why = step.capture_refused
            report.append(f"{name}[{s.name}]: " + ("recorded" if why is None else f"plan ({why})"))
    path = os.environ.get("GRADHUB_CAPTURE_REPORT")
    if path:
        with open(path, "w") as f:
            lines = report + ["", "MISMATCHES:", *mismatches, "", "NOT BIT FOR BIT:", *inexact]
            f.write("\n".join(lines) + "\n")
    recorded = sum(line.endswith(": recorded") for line in report)
    assert not mismatches, "\n".join(mismatches[:20])
    assert recorded > len(report) // 2, f"only {recorded} of {len(report)} recorded"

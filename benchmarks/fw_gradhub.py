"""gradhub adapter for the peer benchmark harness (``../shared/bench/peers/ADAPTERS.md``).

Every workload is written the way a gradhub user writes it: ``gradhub.functions`` (``F.affine``,
``F.convolution``, ``F.max_pooling``, ``F.relu``, ``F.softmax_cross_entropy``, ``F.mean``,
``F.norm``, ``F.sin``, ``F.cos``), the Variable operators, and ``gh.grad`` with
``create_graph=False, retain_graph=False`` for first-order results (``create_graph=True`` only
where a gradient is differentiated again: W4 and W5). Nothing is built from primitives in place
of a library function.

Layouts: gradhub follows nnabla, so the Affine weight is ``(in, out)``; ``make`` stores a
transposed contiguous copy of the harness's ``(out, in)`` weight and ``to_numpy`` transposes that
gradient back. Labels are passed as nnabla expects them, ``(N, 1)`` integers, and the per-sample
losses of ``F.softmax_cross_entropy`` are averaged with ``F.mean``.

Variant ``static`` (the row ``gradhub-static`` of ``benchmarks/run.py``): the same steps compiled
with ``gh.compile``, which traces the first call and replays its plan (a static graph: nnabla's
``forward()``/``backward()`` loop).

Device: ``params["device"]`` (the harness's ``BENCH_DEVICE``) is ``"cpu"`` or ``"cuda"``; on CUDA
the data and parameters are moved once in ``make`` and each step ends with a device
synchronisation. The harness hides GPUs from its children (``CUDA_VISIBLE_DEVICES=""``);
``benchmarks/run.py --device cuda`` passes the original value in ``BENCH_CUDA_VISIBLE_DEVICES``,
which this module restores before gradhub (and through it CuPy) is imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from harness import Unsupported, tiny_ops_sequence

if os.environ.get("BENCH_DEVICE", "cpu") != "cpu" and "BENCH_CUDA_VISIBLE_DEVICES" in os.environ:
    _visible = os.environ["BENCH_CUDA_VISIBLE_DEVICES"]
    if _visible == "<unset>":
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    else:
        os.environ["CUDA_VISIBLE_DEVICES"] = _visible

#: What a user must run before the workloads: import, load the function library, first call.
IMPORT = "import gradhub as gh, gradhub.functions as F; F.sin(gh.Variable([1.0]))"

try:
    import gradhub as gh
    import gradhub.functions as F

    _ERR: str | None = None
except Exception as e:  # reported by available()
    _ERR = repr(e)

#: A step returns ``(values, transposed)``: the Variables of the canonical result and, for each,
#: whether it is an (in, out) Affine weight gradient to transpose back to the harness layout.
Result = tuple[list[Any], tuple[bool, ...]]


def available() -> tuple[bool, str]:
    """Whether gradhub and its function library import here (never raises)."""
    if _ERR is not None:
        return False, _ERR
    return True, ""


def version() -> str:
    """gradhub and gradhub-nn-ops versions."""
    try:
        import gradhub_nn_ops

        lib = gradhub_nn_ops.__version__
    except ImportError:
        lib = "missing"
    return f"{gh.__version__} (nn-ops {lib})"


_DEVICE: dict[str, Any] = {"name": "cpu"}


def info() -> dict[str, Any]:
    """Device, plugins loaded and the numpy BLAS, recorded with each result."""
    try:
        from gradhub.plugins import plugin_report

        plugins = {r.name: r.status for r in plugin_report()}
    except Exception as e:
        plugins = {"error": repr(e)}
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:
        blas = "?"
    return {"device": _DEVICE["name"], "plugins": plugins, "blas": blas}


# -- helpers -------------------------------------------------------------------------------------


def _mover(device: str) -> tuple[Callable[[np.ndarray, bool], Any], Callable[[], None]]:
    """``(make_leaf(array, need_grad), synchronize)`` for the benchmark device."""
    if device == "cpu":
        return (lambda a, need: gh.Variable(a.copy(), need_grad=need)), (lambda: None)
    ctx = gh.get_extension_context(device)  # raises naming gradhub-cuda if it is missing
    _DEVICE["name"] = ctx.device_name

    def leaf(a: np.ndarray, need: bool) -> Any:
        moved = gh.Variable(a.copy(), need_grad=False).to(ctx.device_name)
        return gh.Variable(moved.d, need_grad=need)

    dev = leaf(np.zeros(1, np.float32), False).device
    return leaf, dev.synchronize


def _affine_weight(w: np.ndarray) -> np.ndarray:
    """The harness's (out, in) weight as gradhub's (in, out) layout (a contiguous copy)."""
    return np.ascontiguousarray(w.T)


def _labels(t: np.ndarray) -> np.ndarray:
    """Class labels as nnabla's softmax_cross_entropy takes them: shape (N, 1)."""
    return t.reshape(-1, 1)


def _first_order(outputs: Sequence[Any], inputs: Sequence[Any]) -> list[Any]:
    # the graph is used once: free each node's saved arrays as soon as its rule has run (as
    # PyTorch does by default, and nnabla's adapter with clear_buffer=True)
    return gh.grad(list(outputs), list(inputs), create_graph=False, retain_graph=False)


def _cnn_loss(x: Any, t: Any, p: Sequence[Any]) -> Any:
    h = F.max_pooling(F.relu(F.convolution(x, p[0], p[1], pad=(1, 1))), (2, 2))
    h = F.max_pooling(F.relu(F.convolution(h, p[2], p[3], pad=(1, 1))), (2, 2))
    y = F.affine(h, p[4], p[5])  # base_axis=1 flattens (C, H, W) as the harness does
    return F.mean(F.softmax_cross_entropy(y, t))


# -- workloads -----------------------------------------------------------------------------------


def make(workload: str, params: dict[str, Any]) -> Callable[[], Result]:
    """Build one workload (parameters copied once) and return its zero-argument step; for the
    variant ``"static"`` (the row ``gradhub-static``), the same step through ``gh.compile``:
    traced at its first call, then replayed by a plan (docs/plans.md)."""
    step = _make_eager(workload, params)
    if params.get("variant") != "static":
        return step
    _, sync = _mover(params.get("device", "cpu"))
    flags: dict[str, tuple[bool, ...]] = {}

    def body() -> list[Any]:
        values, flags["of"] = step()
        return values

    compiled = gh.compile(body)

    def step_static() -> Result:
        values = compiled()
        sync()  # (the step's own synchronisation is a side effect: not replayed)
        return values, flags["of"]

    return step_static


def _make_eager(workload: str, params: dict[str, Any]) -> Callable[[], Result]:
    """The eager step of one workload (the graph built anew at each call)."""
    d = params["data"]
    leaf, sync = _mover(params.get("device", "cpu"))

    if workload == "tiny_ops":
        ops = tiny_ops_sequence(params)
        mul, add = float(params["mul"]), float(params["add"])
        x = leaf(d["x"], True)
        flags1 = (False, False)

        def step_tiny() -> Result:
            h = x
            for op in ops:
                if op == "sin":
                    h = F.sin(h)
                elif op == "mul":
                    h = h * mul
                elif op == "add":
                    h = h + add
                else:
                    h = F.cos(h)
            y = h.sum()
            (gx,) = _first_order([y], [x])
            sync()
            return [y, gx], flags1

        return step_tiny

    if workload in ("mlp", "deep_mlp_mem"):
        x = leaf(d["x"], False)
        raw = d["params"]
        ps = [leaf(_affine_weight(a) if i % 2 == 0 else a, True) for i, a in enumerate(raw)]
        n_layers = len(ps) // 2
        t = leaf(_labels(d["t"]), False) if "t" in d else None
        flags = (False,) + tuple(i % 2 == 0 for i in range(len(ps)))

        def step_mlp() -> Result:
            h = x
            for i in range(n_layers):
                h = F.affine(h, ps[2 * i], ps[2 * i + 1])
                if i < n_layers - 1:
                    h = F.relu(h)
            loss = F.mean(F.softmax_cross_entropy(h, t)) if t is not None else F.mean(h * h)
            grads = _first_order([loss], ps)
            sync()
            return [loss, *grads], flags

        return step_mlp

    if workload in ("cnn", "grad_penalty"):
        x, t = leaf(d["x"], False), leaf(_labels(d["t"]), False)
        raw = d["params"]
        ps = [leaf(_affine_weight(a) if i == 4 else a, True) for i, a in enumerate(raw)]
        flags = (False,) + tuple(i == 4 for i in range(len(ps)))

        if workload == "cnn":

            def step_cnn() -> Result:
                loss = _cnn_loss(x, t, ps)
                grads = _first_order([loss], ps)
                sync()
                return [loss, *grads], flags

            return step_cnn

        def step_penalty() -> Result:
            loss = _cnn_loss(x, t, ps)
            gs = gh.grad([loss], ps, create_graph=True)
            total = loss
            for g in gs:
                total = total + F.norm(g)
            grads = _first_order([total], ps)
            sync()
            return [total, *grads], flags

        return step_penalty

    if workload == "nth_sin":
        x = leaf(d["x"], True)
        order = int(params["order"])
        flags5 = (False,) * order

        def step_nth() -> Result:
            cur = F.sin(x)
            outs = []
            for k in range(order):
                (cur,) = gh.grad([cur.sum()], [x], create_graph=k < order - 1)
                outs.append(cur)
            sync()
            return outs, flags5

        return step_nth

    raise Unsupported("unknown workload " + workload)


def to_numpy(result: Result) -> list[np.ndarray]:
    """The canonical list of numpy arrays, Affine weight gradients back in (out, in) layout."""
    values, transposed = result
    out = []
    for v, tr in zip(values, transposed):
        a = v.numpy()
        out.append(np.ascontiguousarray(a.T) if tr else a)
    return out

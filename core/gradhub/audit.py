"""Numeric verification of registered backward rules, per function, device and order.

Used by ``gradhub audit`` and by the op-matrix tests: for each sample a function carries, the
forward result is compared with the function's numpy reference (float64 and float32), then
:func:`gradhub.testing.gradcheck` verifies derivatives up to the requested order, and a native
JVP rule (forward mode) is checked by :func:`check_jvp`. Results are recorded in the registry so
that :func:`gradhub.show_registry` reports them.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import engine
from .device import parse_device_name
from .errors import BackwardRuleError, GradcheckError
from .modes import set_recording
from .registry import REGISTRY, FunctionDef, Sample, _ensure_loaded
from .testing import NothingToCheckError, gradcheck
from .variable import Variable

#: the audit's note for a differentiable function none of whose samples checks a derivative
#: (a rule that is deliberately not the derivative, such as a gradient clip): not verified
NO_DERIVATIVE_CHECKED = "no sample checks a derivative"


@dataclass
class CheckResult:
    """The outcome of auditing one function on one device."""

    function: str
    device: str
    order: int
    verified: int
    failed: int | None
    error: str
    samples: int
    seconds: float

    @property
    def ok(self) -> bool:
        """Nothing failed (a function none of whose samples checks a derivative is ok, and
        unverified)."""
        return self.failed is None and self.error in ("", NO_DERIVATIVE_CHECKED)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, ok=self.ok)


def samples_of(fdef: FunctionDef, seed: int = 0) -> list[Sample]:
    """The function's samples, drawn from a seeded generator."""
    if fdef.samples is None:
        return []
    return list(fdef.samples(np.random.default_rng(seed)))


def _outs(res: Any) -> list[Any]:
    return list(res) if isinstance(res, (list, tuple)) else [res]


def _call(fdef: FunctionDef, sample: Sample, arrays: Sequence[Any], need_grad: bool) -> list[Any]:
    xs = [Variable._new(a, need_grad and a.dtype.kind == "f", None, 0) for a in arrays]
    return _outs(fdef.api(*xs, **sample.attrs))  # type: ignore[misc]


def check_forward(fdef: FunctionDef, sample: Sample, device: Any) -> None:
    """Compare the forward result with the numpy reference in float64 and float32.

    Raises AssertionError naming the function, sample and output on a mismatch, and when float32
    inputs do not give float32 outputs.
    """
    label = f"{fdef.name}[{sample.name}] on {device.name}"
    host = [np.asarray(a) for a in sample.inputs]
    outs = _call(fdef, sample, [device.asarray(a) for a in host], need_grad=False)
    if fdef.reference is not None:
        ref = _outs(fdef.reference(*host, **sample.attrs))
        if len(ref) != len(outs):
            raise AssertionError(f"{label}: {len(outs)} outputs, reference has {len(ref)}")
        for k, (o, r) in enumerate(zip(outs, ref)):
            got = device.to_numpy(o.d)
            r = np.asarray(r)
            if got.shape != r.shape:
                raise AssertionError(
                    f"{label}: output {k} has shape {got.shape}, reference {r.shape}"
                )
            if not np.allclose(got, r, rtol=1e-7, atol=1e-9, equal_nan=True):
                err = np.max(np.abs(got - r)) if got.size else 0.0
                raise AssertionError(
                    f"{label}: output {k} differs from the reference (max abs error {err:.3g})"
                )
    # float32 in, float32 out
    f32 = [a.astype(np.float32) if a.dtype == np.float64 else a for a in host]
    if sample.keeps_float32 and any(a.dtype == np.float32 for a in f32):
        outs32 = _call(fdef, sample, [device.asarray(a) for a in f32], need_grad=False)
        for k, o in enumerate(outs32):
            if o.dtype.kind == "f" and o.dtype != np.float32:
                raise AssertionError(f"{label}: float32 inputs gave output {k} of dtype {o.dtype}")


#: differs from the samples' seed, so that random incoming gradients never equal a sample's input
_GRADCHECK_SEED = 20261122


def check_gradients(fdef: FunctionDef, sample: Sample, device: Any, order: int) -> bool:
    """gradcheck the function on one sample up to ``order`` (in float64); whether a derivative
    was checked.

    A sample with no derivative to check (``grad_inputs=()``, or only integer outputs such as
    ``Max(only_index=True)``) is skipped: its forward pass is what :func:`check_forward` checks.
    """
    attrs = sample.attrs
    if sample.grad_inputs is not None and not len(sample.grad_inputs):
        return False

    def fn(*xs: Variable) -> Any:
        return fdef.api(*xs, **attrs)  # type: ignore[misc]

    try:
        gradcheck(
            fn,
            [device.asarray(np.asarray(a)) for a in sample.inputs],
            order=order,
            seed=_GRADCHECK_SEED,
            grad_inputs=sample.grad_inputs,
            device=device,
            name=f"{fdef.name}[{sample.name}] on {device.name}",
        )
    except NothingToCheckError:
        return False
    return True


#: the batch size of :func:`check_batching`
BATCH = 3


def _variations(a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``BATCH`` copies of a sample input, floating ones each scaled elementwise by a factor
    near 1 (signs, zeros and the order of the values near kinks kept), others (and floats
    holding whole numbers, such as ids) repeated."""
    if a.dtype.kind != "f" or (a.size and np.array_equal(a, np.round(a))):
        return np.stack([a] * BATCH)  # integers, and floats holding ids or counts
    return np.stack([a * (1.0 + 0.01 * k * rng.uniform(-1, 1, a.shape)) for k in range(BATCH)])


def check_batching(fdef: FunctionDef, sample: Sample, device: Any) -> None:
    """Compare the function's batching rule with the loop over the batch on one sample, in
    float64: a batch of :data:`BATCH` variations of the sample's inputs, all of them batched,
    then (for functions of several inputs) each input batched alone, run once through
    :func:`gradhub.batching.apply_batched` (the rule) and once per element (the loop).

    Raises AssertionError naming the function, sample and batched inputs on a mismatch. A
    function whose result differs between two identical calls (random) is not compared.
    """
    from . import batching

    label = f"{fdef.name}[{sample.name}] on {device.name}"
    rng = np.random.default_rng(_GRADCHECK_SEED)
    host = [np.asarray(a) for a in sample.inputs]
    batch = [_variations(a, rng) for a in host]
    n = len(host)
    cases = [tuple(range(n))] + ([(i,) for i in range(n)] if n > 1 else [])
    for which in cases:

        def element(i: int, which: tuple[int, ...] = which) -> list[Any]:
            ins = [batch[k][i] if k in which else host[k] for k in range(n)]
            return _call(fdef, sample, [device.asarray(a) for a in ins], need_grad=False)

        loop = [element(i) for i in range(BATCH)]
        if any(
            not np.array_equal(device.to_numpy(a.d), device.to_numpy(b.d), equal_nan=True)
            for a, b in zip(loop[0], element(0))
        ):
            return  # random: nothing to compare
        level = batching.new_level(BATCH)
        try:
            ins = [
                batching.wrap(Variable._new(device.asarray(batch[k]), False, None, 0), level)
                if k in which
                else Variable._new(device.asarray(host[k]), False, None, 0)
                for k in range(n)
            ]
            with warnings.catch_warnings():  # a rule's own loop fallback is compared as well
                warnings.simplefilter("ignore", UserWarning)
                got = _outs(fdef.api(*ins, **sample.attrs))  # type: ignore[misc]
        finally:
            batching.close_level(level)
        for k, o in enumerate(got):
            want = np.stack([device.to_numpy(r[k].d) for r in loop])
            if isinstance(o, batching.BatchedVariable):
                arr = device.to_numpy(o.value.d)
            else:  # not batched: the same for every element
                arr = np.stack([device.to_numpy(o.d)] * BATCH)
            where = f"{label}, inputs {list(which)} batched: output {k}"
            if arr.shape != want.shape:
                raise AssertionError(
                    f"{where}: the batching rule gives shape {arr.shape}, the loop {want.shape}"
                )
            if arr.dtype != want.dtype:
                raise AssertionError(
                    f"{where}: the batching rule gives dtype {arr.dtype}, the loop {want.dtype}"
                )
            if not np.allclose(arr, want, rtol=1e-7, atol=1e-9, equal_nan=True):
                err = np.max(np.abs(arr - want)) if arr.size else 0.0
                raise AssertionError(
                    f"{where}: the batching rule differs from the loop (max abs error {err:.3g})"
                )


#: the seed of the tangents and weights of :func:`check_jvp`
_JVP_SEED = 20261125


def _differentiated(sample: Sample, host: list[np.ndarray]) -> list[int]:
    """The inputs a sample differentiates: its ``grad_inputs``, else its floating inputs."""
    if sample.grad_inputs is not None:
        return list(sample.grad_inputs)
    return [i for i, a in enumerate(host) if a.dtype.kind == "f"]


def check_jvp(fdef: FunctionDef, sample: Sample, device: Any, order: int = 2) -> None:
    """Verify the native JVP rule of ``fdef`` on one sample, in float64; raise AssertionError
    naming the function, sample and output on a mismatch.

    The output tangents from the rule (:func:`gradhub.engine.forward_tangents`) along a random
    tangent ``t`` must equal (1) central differences ``(f(x + h t) - f(x - h t)) / 2h`` (to
    1e-4 relative); from ``order`` 2 on (the transposition differentiates the backward rule's
    own graph, a second-order use of the backward rules), (2) the transposed backward rule,
    ``(d(J^T u)/du)^T t`` (to 1e-7 relative), and (3) the rule must be differentiable again: the
    gradient of ``<w, J t>`` with respect to the inputs (random ``w``) equals the transposed
    path's (skipped where the sample caps the order at 1 or the backward rule is
    first-order-only); (4) float32 inputs and tangents give float32 tangents (where the sample
    keeps float32); (5) a batch of tangents pushed at once with the primals unbatched (as
    ``jacfwd`` and ``hessian`` push their basis vectors; see :func:`check_batched_tangents`)
    equals each tangent pushed alone.
    """
    if fdef.jvp_rule is None:
        raise ValueError(f"check_jvp: {fdef.name} has no JVP rule")
    label = f"JVP rule of {fdef.name}[{sample.name}] on {device.name}"
    host = [np.asarray(a) for a in sample.inputs]
    diff = _differentiated(sample, host)
    if not diff:
        return
    rng = np.random.default_rng(_JVP_SEED)
    tangents = {i: rng.standard_normal(host[i].shape).astype(host[i].dtype) for i in diff}

    def pushed(arrays: Sequence[np.ndarray], native: bool) -> tuple[list[Any], list[Any], Any]:
        xs = [
            Variable._new(device.asarray(a), i in diff and a.dtype.kind == "f", None, 0)
            for i, a in enumerate(arrays)
        ]
        ins = [xs[i] for i in diff]
        ts = [
            Variable._new(device.asarray(tangents[i].astype(arrays[i].dtype)), False, None, 0)
            for i in diff
        ]
        with set_recording(True):
            outs = _outs(fdef.api(*xs, **sample.attrs))  # type: ignore[misc]
            if native:
                return engine.forward_tangents(outs, ins, ts), ins, outs
            fl = [o for o in outs if o.dtype.kind == "f" and o.need_grad]
            us = [Variable._new(o.device.xp.zeros(o.shape, o.dtype), True, None, 0) for o in fl]
            gs = engine.grad(fl, ins, us, create_graph=True)
            back = engine.grad(gs, us, ts, create_graph=True)
            it = iter(back)
            res = [next(it) if (o.dtype.kind == "f" and o.need_grad) else None for o in outs]
            return res, ins, outs

    first_only = fdef.rule is not None and fdef.rule.first_order_only
    capped = sample.max_order is not None and sample.max_order < 2
    transposed = order >= 2 and not first_only and not capped
    got, ins, outs = pushed(host, True)
    ref, ins_r, _ = pushed(host, False) if transposed else ([None] * len(outs), [], None)
    h = 1e-6
    plus = [a + h * tangents[i] if i in tangents else a for i, a in enumerate(host)]
    minus = [a - h * tangents[i] if i in tangents else a for i, a in enumerate(host)]
    f_plus = _call(fdef, sample, [device.asarray(a) for a in plus], need_grad=False)
    f_minus = _call(fdef, sample, [device.asarray(a) for a in minus], need_grad=False)
    for k, (o, t, r) in enumerate(zip(outs, got, ref)):
        if o.dtype.kind != "f":
            continue
        tg = t.device.to_numpy(t.d)
        if tg.shape != o.shape or t.dtype != o.dtype:
            raise AssertionError(
                f"{label}: output {k}: tangent of shape {tg.shape} and dtype {t.dtype}, "
                f"the output has {o.shape} and {o.dtype}"
            )
        if r is not None:
            tr = r.device.to_numpy(r.d)
            if not np.allclose(tg, tr, rtol=1e-7, atol=1e-9, equal_nan=True):
                err = np.max(np.abs(tg - tr)) if tg.size else 0.0
                raise AssertionError(
                    f"{label}: output {k} differs from the transposed backward rule "
                    f"(max abs error {err:.3g})"
                )
        fp, fm = f_plus[k], f_minus[k]
        fd = (fp.device.to_numpy(fp.d) - fm.device.to_numpy(fm.d)) / (2 * h)
        scale = max(1.0, float(np.max(np.abs(fd)))) if fd.size else 1.0
        if not np.allclose(tg, fd, rtol=1e-4, atol=1e-5 * scale, equal_nan=True):
            err = np.max(np.abs(tg - fd)) if tg.size else 0.0
            raise AssertionError(
                f"{label}: output {k} differs from central differences (max abs error {err:.3g})"
            )
    if transposed:
        w = [
            Variable._new(
                o.device.asarray(rng.standard_normal(o.shape).astype(o.dtype)), False, None, 0
            )
            for o in outs
        ]

        def second(ts: list[Any], xs: list[Any]) -> list[Any]:
            pairs = [
                (t, wk) for t, o, wk in zip(ts, outs, w) if t is not None and o.dtype.kind == "f"
            ]
            with set_recording(True):
                total = None
                for t, wk in pairs:
                    s = (t * wk).sum()
                    total = s if total is None else total + s
            if total is None:
                return []
            return [g.d for g in engine.grad([total], xs, create_graph=False)]  # type: ignore[union-attr]

        for k, (a, b) in enumerate(zip(second(got, ins), second(ref, ins_r))):
            a, b = device.to_numpy(a), device.to_numpy(b)
            if not np.allclose(a, b, rtol=1e-6, atol=1e-8, equal_nan=True):
                raise AssertionError(
                    f"{label}: the derivative of the tangent with respect to input {diff[k]} "
                    f"differs from the transposed backward rule's (max abs error "
                    f"{np.max(np.abs(a - b)):.3g})"
                )
    if sample.keeps_float32 and any(host[i].dtype == np.float64 for i in diff):
        f32 = [a.astype(np.float32) if a.dtype == np.float64 else a for a in host]
        got32, _, outs32 = pushed(f32, True)
        for k, (o, t) in enumerate(zip(outs32, got32)):
            if o.dtype == np.float32 and t.dtype != np.float32:
                raise AssertionError(
                    f"{label}: float32 inputs and tangents gave a tangent of dtype {t.dtype} "
                    f"for output {k}"
                )
    check_batched_tangents(fdef, sample, device)


def check_batched_tangents(fdef: FunctionDef, sample: Sample, device: Any) -> None:
    """Push :data:`BATCH` random tangents through one call of ``fdef`` (float64) at once, as one
    :class:`~gradhub.batching.BatchedVariable` per input at a vmap level of their own with the
    primals unbatched (how ``gradhub.func.jacfwd`` and ``hessian`` push their basis vectors),
    and compare each element with that tangent pushed alone: a JVP rule must compute with
    registered functions (which batch through their batching rules), not with the tangents'
    arrays. Raises AssertionError naming the function, sample and output on a mismatch;
    returns quietly where a function on the path has no batching rule (``jacfwd`` then loops
    over the basis vectors).

    Example::

        >>> from gradhub.audit import check_batched_tangents, samples_of
        >>> from gradhub.registry import REGISTRY
        >>> mul = REGISTRY.get("Mul2")
        >>> check_batched_tangents(mul, samples_of(mul)[0], REGISTRY.device_type("cpu").get(0))
    """
    from . import batching

    label = f"JVP rule of {fdef.name}[{sample.name}] on {device.name}, batched tangents"
    host = [np.asarray(a) for a in sample.inputs]
    diff = _differentiated(sample, host)
    if not diff:
        return
    rng = np.random.default_rng(_JVP_SEED + 1)
    batch = {i: rng.standard_normal((BATCH, *host[i].shape)).astype(host[i].dtype) for i in diff}
    xs = [
        Variable._new(device.asarray(a), i in diff and a.dtype.kind == "f", None, 0)
        for i, a in enumerate(host)
    ]
    with set_recording(True):
        outs = _outs(fdef.api(*xs, **sample.attrs))  # type: ignore[misc]
        plan = engine.forward_plan(outs, [xs[i] for i in diff])
        alone = [
            plan([Variable._new(device.asarray(batch[i][m]), False, None, 0) for i in diff])
            for m in range(BATCH)
        ]
        level = batching.new_level(BATCH)
        try:
            with batching.refuse_loop():
                got = plan(
                    [
                        batching.wrap(
                            Variable._new(device.asarray(batch[i]), False, None, 0), level
                        )
                        for i in diff
                    ]
                )
        except batching.LoopRefused:
            return
        finally:
            batching.close_level(level)
    for k, (o, t) in enumerate(zip(outs, got)):
        if o.dtype.kind != "f":
            continue
        want = np.stack([device.to_numpy(a[k].d) for a in alone])
        if isinstance(t, batching.BatchedVariable) and t.level == level:
            arr = device.to_numpy(t.value.d)
        else:  # not batched: the same for every tangent
            arr = np.stack([device.to_numpy(t.d)] * BATCH)
        if arr.shape != want.shape:
            raise AssertionError(
                f"{label}: output {k}: shape {arr.shape}, one at a time {want.shape}"
            )
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
        if not np.allclose(arr, want, rtol=1e-9, atol=1e-12 * scale, equal_nan=True):
            err = np.max(np.abs(arr - want)) if arr.size else 0.0
            raise AssertionError(
                f"{label}: output {k} differs from the tangents pushed one at a time "
                f"(max abs error {err:.3g})"
            )


def check_function(
    fdef: FunctionDef, device: str = "cpu", order: int = 2, record: bool = True, seed: int = 0
) -> CheckResult:
    """Audit one function on one device up to ``order``; record the result if asked.

    ``device`` is a device kind (``"cpu"``, index 0) or a name with an index (``"cuda:1"``); an
    index the device does not have raises :class:`~gradhub.errors.DeviceError`.
    """
    kind, index = parse_device_name(device)
    dev = REGISTRY.device_type(kind).get(index)
    t0 = time.perf_counter()
    samples = samples_of(fdef, seed)
    verified = order
    failed: int | None = None
    error = ""
    checked = False  # whether any sample checked a derivative
    if not samples:
        error = "no samples"
        verified = 0
    for s in samples:
        try:
            check_forward(fdef, s, dev)
        except Exception as e:  # a mismatch, or a kernel that raises
            msg = str(e) if isinstance(e, AssertionError) else f"raised {type(e).__name__}: {e}"
            return _done(fdef, device, order, 0, 0, msg, len(samples), t0, record)
        if fdef.batch_rule is not None and fdef.kind == "primitive":
            try:
                check_batching(fdef, s, dev)
            except Exception as e:  # a mismatch, or a rule that raises
                msg = str(e) if isinstance(e, AssertionError) else f"raised {type(e).__name__}: {e}"
                return _done(
                    fdef, device, order, 0, 0, f"batching rule: {msg}", len(samples), t0, record
                )
        if not fdef.differentiable:
            continue
        want = min(order, s.max_order or order)
        try:
            checked = check_gradients(fdef, s, dev, want) or checked
        except GradcheckError as e:
            failed = e.order
            verified = min(verified, e.order - 1)
            error = str(e)
            break
        except BackwardRuleError as e:
            # e.g. a first-order-only rule differentiated again: verified below that order
            msg = str(e)
            verified = min(verified, 1 if "first-order-only" in msg else 0)
            if "first-order-only" not in msg:
                failed = 1
                error = msg
                break
        except Exception as e:  # a rule or kernel that raises something else
            failed = 1
            verified = 0
            error = f"raised {type(e).__name__}: {e}"
            break
        if fdef.jvp_rule is not None:
            try:
                check_jvp(fdef, s, dev, want)
            except AssertionError as e:
                failed, verified, error = 1, 0, str(e)
                break
            except Exception as e:  # a JVP rule that raises
                failed, verified = 1, 0
                error = f"JVP rule of {fdef.name}: raised {type(e).__name__}: {e}"
                break
        verified = min(verified, want)
    if not fdef.differentiable:
        verified = 0
    elif samples and not checked and failed is None and not error:
        verified, error = 0, NO_DERIVATIVE_CHECKED
    return _done(fdef, device, order, verified, failed, error, len(samples), t0, record)


def _done(
    fdef: FunctionDef,
    device: str,
    order: int,
    verified: int,
    failed: int | None,
    error: str,
    n: int,
    t0: float,
    record: bool,
) -> CheckResult:
    res = CheckResult(
        fdef.name, device, order, verified, failed, error, n, time.perf_counter() - t0
    )
    if record and fdef.differentiable and error not in ("no samples", NO_DERIVATIVE_CHECKED):
        if failed is None and error:
            failed = 0
        # a wrong (or crashing) forward is recorded as failing at order 0, as the result says:
        # the registry shows it as failed (DEVICE@0), not as a wrong first derivative
        fdef.audit[device] = (verified, failed)
    return res


def audit(
    functions: Iterable[str] | None = None,
    devices: Iterable[str] | None = None,
    order: int = 2,
    progress: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Audit the named functions (default: all) on the named devices (default: all usable)."""
    _ensure_loaded()
    names = sorted(REGISTRY.functions) if functions is None else list(functions)
    if devices is None:
        devices = REGISTRY.usable_devices()  # a device whose probe raises is left out
    results = []
    for dev in devices:
        for name in names:
            r = check_function(REGISTRY.get(name), dev, order)
            results.append(r)
            if progress is not None:
                progress(r)
    return results

"""Write updates_reference.npz: mxnet 1.9.1's fused optimizer update operators over three steps.

Run with mxnet 1.9.1 installed (numpy < 1.24), from any folder:

    python tests/compat/mxnet/data/make_updates_reference.py

Every case starts from the arrays of :func:`inputs` (float32, seeded numpy), calls the operator
three times with ``out=weight`` (as mxnet's optimizers do; the gradients of step ``k`` are
``grad * (k + 1) * (-1) ** k``) and stores the weight and every state after each step as
``<case>/<step>/<array>``. ``<case>/noout`` is the first step's result without ``out=`` (the
weight left alone). Values were written by mxnet 1.9.1 (pip wheel, CPU).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

mx: Any = None  # mxnet, imported by main() (the tests import CASES and inputs() without it)

HERE = os.path.dirname(os.path.abspath(__file__))

CLIP = {"wd": 0.05, "rescale_grad": 0.5, "clip_gradient": 0.75}

# (case, op, state names, weight dtype, params)
CASES = [
    ("sgd", "sgd_update", [], "float32", {"lr": 0.1}),
    ("sgd_clip", "sgd_update", [], "float32", {"lr": 0.1, **CLIP}),
    ("sgd_mom", "sgd_mom_update", ["mom"], "float32", {"lr": 0.1, "momentum": 0.9}),
    ("sgd_mom_clip", "sgd_mom_update", ["mom"], "float32", {"lr": 0.1, "momentum": 0.9, **CLIP}),
    ("nag", "nag_mom_update", ["mom"], "float32", {"lr": 0.1, "momentum": 0.9, "wd": 0.05}),
    ("nag_clip", "nag_mom_update", ["mom"], "float32", {"lr": 0.1, "momentum": 0.9, **CLIP}),
    ("adam", "adam_update", ["mean", "var"], "float32", {"lr": 0.01}),
    ("adam_clip", "adam_update", ["mean", "var"], "float32", {"lr": 0.01, **CLIP}),
    ("rmsprop", "rmsprop_update", ["n"], "float32", {"lr": 0.01}),
    (
        "rmsprop_clip",
        "rmsprop_update",
        ["n"],
        "float32",
        {"lr": 0.01, "clip_weights": 0.8, "gamma1": 0.9, **CLIP},
    ),
    ("rmspropalex", "rmspropalex_update", ["n", "g", "delta"], "float32", {"lr": 0.01}),
    (
        "rmspropalex_clip",
        "rmspropalex_update",
        ["n", "g", "delta"],
        "float32",
        {"lr": 0.01, "clip_weights": 0.8, **CLIP},
    ),
    ("ftrl", "ftrl_update", ["z", "n"], "float32", {"lr": 0.1}),
    ("ftrl_clip", "ftrl_update", ["z", "n"], "float32", {"lr": 0.1, "lamda1": 0.2, **CLIP}),
    ("ftml", "ftml_update", ["d", "v", "z"], "float32", {"lr": 0.1, "t": 1}),
    (
        "ftml_clip",
        "ftml_update",
        ["d", "v", "z"],
        "float32",
        {"lr": 0.1, "t": 1, "wd": 0.05, "rescale_grad": 0.5, "clip_grad": 0.75},
    ),
    ("signsgd", "signsgd_update", [], "float32", {"lr": 0.1, "wd": 0.05}),
    ("signum", "signum_update", ["mom"], "float32", {"lr": 0.1, "momentum": 0.9}),
    (
        "signum_clip",
        "signum_update",
        ["mom"],
        "float32",
        {"lr": 0.1, "momentum": 0.9, "wd_lh": 0.01, **CLIP},
    ),
    ("mp_sgd", "mp_sgd_update", ["weight32"], "float16", {"lr": 0.1, **CLIP}),
    (
        "mp_sgd_mom",
        "mp_sgd_mom_update",
        ["mom", "weight32"],
        "float16",
        {"lr": 0.1, "momentum": 0.9},
    ),
    (
        "mp_nag",
        "mp_nag_mom_update",
        ["mom", "weight32"],
        "float16",
        {"lr": 0.1, "momentum": 0.9, **CLIP},
    ),
    ("sgd_f16", "sgd_update", [], "float16", {"lr": 0.1, **CLIP}),
    ("adam_f64", "adam_update", ["mean", "var"], "float64", {"lr": 0.01, **CLIP}),
]

#: the multi-tensor operators, run by :func:`multi`
MULTI = [
    "multi_sgd_update",
    "multi_sgd_mom_update",
    "multi_mp_sgd_update",
    "multi_mp_sgd_mom_update",
    "preloaded_multi_sgd_update",
    "preloaded_multi_sgd_mom_update",
    "preloaded_multi_mp_sgd_update",
    "preloaded_multi_mp_sgd_mom_update",
]


def inputs(dtype: str) -> dict[str, np.ndarray]:
    rng = np.random.RandomState(0)
    w = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    g = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    return {"weight": w.astype(dtype), "grad": g.astype(dtype), "weight32": w.copy()}


def state0(name: str, arrays: dict[str, np.ndarray]) -> np.ndarray:
    if name == "weight32":
        return arrays["weight32"].copy()
    if name == "n" or name == "v":
        return np.full((2, 3), 0.1, dtype=np.float32)
    return np.zeros((2, 3), dtype=np.float32)


def run_case(op: str, states: list[str], dtype: str, params: dict, out: dict) -> None:
    arrays = inputs(dtype)
    fn = getattr(mx.nd, op)
    wnd = mx.nd.array(arrays["weight"], dtype=dtype)
    st = {
        s: mx.nd.array(
            state0(s, arrays), dtype="float32" if s == "weight32" or dtype == "float16" else dtype
        )
        for s in states
    }
    # first call without out=: the weight is left alone
    gnd = mx.nd.array(arrays["grad"], dtype=dtype)
    stc = {s: v.copy() for s, v in st.items()}
    r = fn(wnd, gnd, *[stc[s] for s in states], **params)
    out["noout/weight"] = r.asnumpy()
    out["noout/input_weight"] = wnd.asnumpy()
    for step in range(3):
        p = dict(params)
        if "t" in p:
            p["t"] = step + 1
        g = mx.nd.array(arrays["grad"] * (step + 1) * (-1) ** step, dtype=dtype)
        fn(wnd, g, *[st[s] for s in states], out=wnd, **p)
        out[f"{step}/weight"] = wnd.asnumpy()
        for s in states:
            out[f"{step}/{s}"] = st[s].asnumpy()


def lamb(out: dict, mp: bool) -> None:
    arrays = inputs("float16" if mp else "float32")
    dt = "float16" if mp else "float32"
    w = mx.nd.array(arrays["weight"], dtype=dt)
    w32 = mx.nd.array(arrays["weight32"])
    mean, var = mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3))
    for step in range(3):
        g = mx.nd.array(arrays["grad"] * (step + 1) * (-1) ** step, dtype=dt)
        kw = dict(
            t=step + 1, wd=0.05, rescale_grad=0.5, clip_gradient=0.75, bias_correction=step != 2
        )
        if mp:
            gg = mx.nd.mp_lamb_update_phase1(w, g, mean, var, w32, **kw)
            r1 = w32.norm()
            r2 = gg.norm()
            mx.nd.mp_lamb_update_phase2(
                w, gg, r1, r2, w32, lr=0.1, lower_bound=0.1, upper_bound=10.0, out=w
            )
        else:
            gg = mx.nd.lamb_update_phase1(w, g, mean, var, **kw)
            r1 = w.norm()
            r2 = gg.norm()
            mx.nd.lamb_update_phase2(w, gg, r1, r2, lr=0.1, out=w)
        out[f"{step}/g"] = gg.asnumpy()
        out[f"{step}/r1"] = r1.asnumpy()
        out[f"{step}/r2"] = r2.asnumpy()
        out[f"{step}/weight"] = w.asnumpy()
        out[f"{step}/mean"] = mean.asnumpy()
        out[f"{step}/var"] = var.asnumpy()
        if mp:
            out[f"{step}/weight32"] = w32.asnumpy()


def multi(out: dict, kind: str) -> None:
    mom = "mom" in kind
    mp = "mp" in kind
    pre = kind.startswith("preloaded")
    dt = "float16" if mp else "float32"
    rng = np.random.RandomState(1)
    shapes = [(2, 3), (4,), (1, 2, 2)]
    ws = [mx.nd.array(rng.uniform(-1, 1, s), dtype=dt) for s in shapes]
    gs0 = [rng.uniform(-2, 2, s).astype(np.float32) for s in shapes]
    moms = [mx.nd.zeros(s) for s in shapes]
    w32s = [w.astype("float32") for w in ws]
    lrs, wds = (0.1, 0.2, 0.05), (0.0, 0.01, 0.1)
    for step in range(3):
        gs = [mx.nd.array(g * (step + 1) * (-1) ** step, dtype=dt) for g in gs0]
        data = []
        for i in range(3):
            data += [ws[i], gs[i]]
            if mom:
                data.append(moms[i])
            if mp:
                data.append(w32s[i])
        kw: dict[str, Any] = dict(rescale_grad=0.5, clip_gradient=1.5, num_weights=3)
        if mom:
            kw["momentum"] = 0.9
        if pre:
            data += [mx.nd.array(lrs), mx.nd.array(wds)]
        else:
            kw.update(lrs=lrs, wds=wds)
        getattr(mx.nd, kind)(*data, out=ws, **kw)
        for i in range(3):
            out[f"{step}/weight{i}"] = ws[i].asnumpy()
            if mom:
                out[f"{step}/mom{i}"] = moms[i].asnumpy()
            if mp:
                out[f"{step}/weight32_{i}"] = w32s[i].asnumpy()


def misc(out: dict) -> None:
    rng = np.random.RandomState(2)
    a = [rng.uniform(-3, 3, s).astype(np.float32) for s in [(5, 7), (33,), (2, 2, 2)]]
    out["sum_sq"] = mx.nd.multi_sum_sq(*[mx.nd.array(x) for x in a], num_arrays=3).asnumpy()
    lrs = mx.nd.array([0.1, 0.2, 0.3, 0.4])
    wsq = mx.nd.array([4.0, 0.0, 2.5, 9.0])
    gsq = mx.nd.array([1.0, 3.0, 0.0, 0.7])
    wds = mx.nd.array([0.01, 0.0, 0.1, 0.001])
    out["lars"] = mx.nd.multi_lars(
        lrs, wsq, gsq, wds, eta=0.001, eps=1e-8, rescale_grad=0.5
    ).asnumpy()
    out["finite_true"] = mx.nd.all_finite(mx.nd.array(a[0])).asnumpy()
    out["finite_false"] = mx.nd.all_finite(mx.nd.array([1.0, np.inf])).asnumpy()
    # mx.optimizer.SGD's step (mxnet 1.9.1 runs multi_sgd_(mom_)update for dense weights)
    rng = np.random.RandomState(4)
    w0, g0 = rng.randn(7).astype(np.float32), rng.randn(7).astype(np.float32)
    for mom in (0.0, 0.9):
        opt = mx.optimizer.SGD(
            learning_rate=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=0.3, momentum=mom
        )
        w = mx.nd.array(w0)
        opt.update(0, w, mx.nd.array(g0), opt.create_state(0, w))
        out[f"optimizer_sgd_{mom}"] = w.asnumpy()
    out["multi_finite"] = mx.nd.multi_all_finite(
        mx.nd.array(a[0]), mx.nd.array([np.nan]), num_arrays=2
    ).asnumpy()


def main() -> None:
    global mx
    import mxnet  # type: ignore[import-not-found]

    mx = mxnet
    data: dict[str, Any] = {}
    for case, op, states, dtype, params in CASES:
        out: dict = {}
        run_case(op, states, dtype, params, out)
        data.update({f"{case}/{k}": v for k, v in out.items()})
    for mp in (False, True):
        out = {}
        lamb(out, mp)
        data.update({f"{'mp_' if mp else ''}lamb/{k}": v for k, v in out.items()})
    for kind in MULTI:
        out = {}
        multi(out, kind)
        data.update({f"{kind}/{k}": v for k, v in out.items()})
    out = {}
    misc(out)
    data.update(out)
    np.savez_compressed(os.path.join(HERE, "updates_reference.npz"), **data)
    print(len(data), "arrays")


if __name__ == "__main__":
    main()

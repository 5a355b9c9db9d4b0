"""Write quantization_inq_reference.npz: nnabla 1.39's ``F.min_max_quantize``,
``F.inq_affine``, ``F.inq_convolution``, ``F.fused_convolution`` and ``PF.min_max_quantize``,
``PF.inq_affine``, ``PF.inq_convolution`` on fixed inputs, for
tests/compat/nnabla/test_functions_quantization_inq.py.

Run with a Python that has nnabla 1.39 (not gradhub), from outside the repository::

    python tests/compat/nnabla/data/make_quantization_inq_reference.py OUT.npz

Each case ``k`` of a function stores its keyword arguments as JSON (``<fn>/<k>/kwargs``), its
inputs and, per execution ``s``, what nnabla computed and updated (``<fn>/<k>/<name>/<s>``):

* ``min_max_quantize``: inputs ``x``, ``qr_min``, ``qr_max``, ``ql_min``, ``ql_max``; per
  ``forward()`` ``y``, ``qr_min``, ``qr_max``; after one ``backward(gy)`` (gradients from 0)
  ``gx``, ``g_qr_min``, ``g_qr_max``.
* ``inq``: inputs ``x``, ``w``, ``b`` (absent: no bias), ``conv`` (0/1); per step ``s`` a
  ``forward()`` (``y``, ``w``, ``ind``), a ``backward`` of ones (``gw``, ``gx``) and the solver
  step ``w -= 0.1 gw``.
* ``fused``: the inputs ``x``, ``w`` and those named by ``inputs`` (JSON: ``bias``, ``beta``,
  ``gamma``, ``mean``, ``variance``, ``z``; stored once, ``fused/<name>``); ``y``,
  ``mean_after``/``variance_after`` and the gradients ``g_<input>`` for the output gradient
  ``cos(0, 1, ...)``.
* ``pf``: the parameters after one ``forward()`` (``param/<name>``, with ``need_grad/<name>``)
  and ``y``.
"""

from __future__ import annotations

import json
import sys

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np

OUT: dict[str, np.ndarray] = {}


def _v(a: object, need_grad: bool = False) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(a, np.float32), need_grad=need_grad)


def _put(prefix: str, **arrays: object) -> None:
    for k, a in arrays.items():
        OUT[f"{prefix}/{k}"] = np.array(a)  # (a copy: nnabla's .d is a view of the buffer)


X_MMQ = [[-1.3, -0.2, 0.0, 0.37], [0.5, 0.81, 1.2, 2.6]]
MMQ = [
    ([[-1.0]], [[1.0]], [[0.0]], [[255.0]], 1, {}),
    ([[-1.0]], [[1.0]], [[0.0]], [[4.0]], 1, {}),
    ([[-1.0]], [[1.0]], [[0.0]], [[4.0]], 1, {"ste_fine_grained": False}),
    ([[-1.0, 0.0, -0.5, 0.3]], [[1.0, 1.0, 2.0, 0.3]], [[0.0] * 4], [[3.0] * 4], 1, {}),
    ([[-1.0], [0.2]], [[1.0], [1.7]], [[0.0], [0.0]], [[7.0], [7.0]], 1, {}),
    ([[-1.0]], [[1.0]], [[0.0]], [[255.0]], 2, {"x_min_max": True}),
    ([[-1.0]], [[1.0]], [[0.0]], [[15.0]], 3, {"x_min_max": True, "ema": True, "decay": 0.9}),
    ([[-1.0]], [[1.0]], [[0.0]], [[15.0]], 2, {"ema": True, "decay": 0.9}),
    ([[0.5, 0.0, 1.0, 0.0]], [[0.5, 1.0, 0.9, 0.001]], [[0.0] * 4], [[3.0] * 4], 1, {"eps": 0.1}),
    ([[0.3]], [[2.0]], [[0.0]], [[10.0]], 1, {}),
    ([[-3.0]], [[-0.5]], [[0.0]], [[10.0]], 1, {}),
]


def min_max_quantize_cases() -> None:
    for k, (lo, hi, qlo, qhi, steps, kw) in enumerate(MMQ):
        p = f"min_max_quantize/{k}"
        OUT[f"{p}/kwargs"] = np.array(json.dumps(kw))
        _put(p, x=X_MMQ, qr_min=lo, qr_max=hi, ql_min=qlo, ql_max=qhi, steps=steps)
        x = _v(X_MMQ, True)
        r = [_v(lo, True), _v(hi, True), _v(qlo), _v(qhi)]
        y = F.min_max_quantize(x, *r, **kw)
        for s in range(steps):
            y.forward()
            _put(p, **{f"y/{s}": y.d, f"qr_min/{s}": r[0].d, f"qr_max/{s}": r[1].d})
        for v in (x, r[0], r[1]):
            v.g = 0
        y.backward(np.arange(1, 9, dtype=np.float32).reshape(2, 4))
        _put(p, gx=x.g, g_qr_min=r[0].g, g_qr_max=r[1].g)


def inq_cases() -> None:
    rs = np.random.RandomState(0)
    xa = np.round(rs.randn(2, 4), 3)
    wa = np.round(rs.randn(4, 3) * 0.5, 3)
    ba = np.round(rs.randn(3), 3)
    xc = np.round(rs.randn(1, 2, 4, 4), 3)
    wc = np.round(rs.randn(3, 2, 3, 3) * 0.3, 3)
    cases = [
        (False, xa, wa, ba, 5, {"inq_iterations": [1, 3]}),
        (False, xa, wa, ba, 5, {"inq_iterations": [0, 1, 2, 4], "num_bits": 2}),
        (False, xa, wa, None, 5, {"inq_iterations": [0, 2], "num_bits": 3}),
        (
            False,
            xa,
            wa,
            ba,
            6,
            {"inq_iterations": [1, 2, 3, 4, 5], "selection_algorithm": "random", "seed": 123},
        ),
        (False, xa, np.zeros((4, 3)), ba, 2, {"inq_iterations": [0, 1]}),
        (
            False,
            np.ones((1, 2)),
            [[0.3, -0.7], [0.1, 0.45]],
            None,
            5,
            {"inq_iterations": [0, 1, 2, 3, 4]},
        ),
        (
            True,
            xc,
            wc,
            [0.1, -0.2, 0.3],
            3,
            {"inq_iterations": [0, 2], "selection_algorithm": "random", "seed": 5, "pad": [1, 1]},
        ),
        (True, xc, wc, None, 3, {"inq_iterations": [1, 2], "stride": [2, 2], "num_bits": 5}),
    ]
    for k, (conv, xv, wv, bv, steps, kw) in enumerate(cases):
        p = f"inq/{k}"
        OUT[f"{p}/kwargs"] = np.array(json.dumps(kw))
        _put(p, x=xv, w=wv, conv=int(conv), steps=steps)
        if bv is not None:
            _put(p, b=bv)
        x, w = _v(xv, True), _v(wv, True)
        i = _v(np.zeros(np.shape(wv)))
        b = _v(bv, True) if bv is not None else None
        y = (F.inq_convolution if conv else F.inq_affine)(x, w, i, b, **kw)
        for s in range(steps):
            y.forward()
            _put(p, **{f"y/{s}": y.d, f"w/{s}": w.d, f"ind/{s}": i.d})
            for v in (x, w, b):
                if v is not None:
                    v.g = 0
            y.backward(np.ones(y.shape, np.float32))
            _put(p, **{f"gw/{s}": w.g, f"gx/{s}": x.g})
            w.d = w.d - 0.1 * w.g


def fused_cases() -> None:
    rs = np.random.RandomState(1)
    arrays = {
        "x": np.round(rs.randn(2, 3, 4, 4), 3),
        "w": np.round(rs.randn(4, 3, 3, 3) * 0.3, 3),
        "z": np.round(rs.randn(2, 4, 4, 4), 3),
        "bias": np.round(rs.randn(4), 3),
        "beta": np.round(rs.randn(1, 4, 1, 1), 3),
        "gamma": np.round(1 + 0.3 * rs.randn(1, 4, 1, 1), 3),
        "mean": np.round(0.1 * rs.randn(1, 4, 1, 1), 3),
        "variance": np.round(1 + 0.2 * rs.rand(1, 4, 1, 1), 3),
    }
    _put("fused", **arrays)
    bn = ["beta", "gamma", "mean", "variance"]
    cases = [
        ([], {}),
        (["bias"], {"nonlinearity": "identity", "pad": [1, 1]}),
        (["bias", "z"], {"pad": [1, 1]}),
        (bn, {"pad": [1, 1]}),
        ([*bn, "z"], {"pad": [1, 1], "nonlinearity": "leaky_relu", "nonlinearity_args": [0.2]}),
        (
            bn,
            {"pad": [1, 1], "batch_stat": False, "nonlinearity": "elu", "nonlinearity_args": [1.5]},
        ),
        ([], {"stride": [2, 2], "pad": [1, 1], "nonlinearity": "sigmoid"}),
        ([], {"dilation": [2, 2], "pad": [2, 2], "nonlinearity": "tanh"}),
        (["bias"], {"nonlinearity": "relu6", "pad": [1, 1]}),
        ([], {"pad": [1, 0, 2, 1], "constant_value": 0.5, "nonlinearity": "identity"}),
        ([], {"pad": [1, 1, 1, 1], "pad_mode": "reflect", "nonlinearity": "identity"}),
        ([], {"pad": [1, 1], "pad_mode": "reflect", "nonlinearity": "identity"}),
        ([], {"pad": [1, 1], "constant_value": 2.0, "nonlinearity": "identity"}),
        ([], {"pad": [1, 1, 1, 1], "pad_mode": "repeat", "nonlinearity": "identity"}),
    ]
    for k, (names, kw) in enumerate(cases):
        p = f"fused/{k}"
        OUT[f"{p}/kwargs"] = np.array(json.dumps(kw))
        OUT[f"{p}/inputs"] = np.array(json.dumps(names))
        vs = {n: _v(arrays[n], n not in ("mean", "variance")) for n in ["x", "w", *names]}
        y = F.fused_convolution(**{"weight" if n == "w" else n: v for n, v in vs.items()}, **kw)
        y.forward()
        _put(p, y=y.d)
        for n in ("mean", "variance"):
            if n in vs:
                _put(p, **{f"{n}_after": vs[n].d})
        for v in vs.values():
            v.g = 0
        y.backward(np.cos(np.arange(y.size)).reshape(y.shape).astype(np.float32))
        for n, v in vs.items():
            if v.need_grad:
                _put(p, **{f"g_{n}": v.g})


def _pf_case(k: int, build: object, x: np.ndarray, kw: dict) -> None:
    p = f"pf/{k}"
    OUT[f"{p}/kwargs"] = np.array(json.dumps(kw))
    nn.clear_parameters()
    nn.seed(313)
    y = build(_v(x), **kw)  # type: ignore[operator]
    y.forward()
    _put(p, x=x, y=y.d)
    for name, v in nn.get_parameters(grad_only=False).items():
        _put(p, **{f"param/{name}": v.d, f"need_grad/{name}": v.need_grad})
    nn.clear_parameters()


def pf_cases() -> None:
    xq = np.array([[-7.0, -0.01, 0.02, 3.0]])
    _pf_case(0, PF.min_max_quantize, xq, {"ql_max": 12, "name": "q"})
    _pf_case(1, PF.min_max_quantize, xq, {"x_min_max": True, "ema": True, "decay": 0.5})
    xa = np.arange(6).reshape(2, 3) / 5
    _pf_case(2, PF.inq_affine, xa, {"n_outmaps": 4, "inq_iterations": [0, 2], "seed": 3})
    xc = np.arange(72).reshape(2, 4, 3, 3) / 50
    kw = {"outmaps": 2, "kernel": [2, 2], "inq_iterations": [0], "num_bits": 3}
    _pf_case(3, PF.inq_convolution, xc, {**kw, "selection_algorithm": "largest_abs"})
    _pf_case(4, PF.inq_affine, xa, {"n_outmaps": [2, 2], "with_bias": False, "name": "l"})


def main() -> None:
    min_max_quantize_cases()
    inq_cases()
    fused_cases()
    pf_cases()
    OUT["nnabla_version"] = np.array(nn.__version__)
    np.savez_compressed(sys.argv[1], **OUT)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

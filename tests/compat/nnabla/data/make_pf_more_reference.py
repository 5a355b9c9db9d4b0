"""Write pf_more_reference.npz: nnabla 1.39's ``PF.pow2_quantized_affine``,
``PF.pow2_quantized_convolution``, ``PF.min_max_quantized_affine``,
``PF.min_max_quantized_convolution``, ``PF.svd_affine``, ``PF.svd_convolution`` and
``PF.cpd3_convolution`` on fixed inputs, for tests/compat/nnabla/test_pf_more.py.

Run with a Python that has nnabla 1.39 (not gradhub), from outside the repository::

    python tests/compat/nnabla/data/make_pf_more_reference.py OUT.npz

Each case ``<fn>/<k>`` stores its keyword arguments as JSON (``kwargs``; the initializers and
generators are named there, see :func:`_arguments`), the input ``x`` (and ``uv_init`` /
``oik_init`` when an array initializes the weight) and:

* ``names``: the parameters in the order of creation (JSON), with ``need_grad/<name>``;
* ``built/<name>``: each parameter's values after the build (before any ``forward()``);
* ``y_shape``; ``param/<name>`` and ``y``: after one ``forward()`` (none for a case nnabla's
  CPU cannot execute: channel_last convolution);
* ``grad/<name>`` and ``gx``: the gradients after one ``backward(gy)`` (all from 0), ``gy`` the
  cosine of 0, 1, 2, ... in the output's shape.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import nnabla as nn
import nnabla.initializer as I
import nnabla.parametric_functions as PF
import numpy as np

OUT: dict[str, np.ndarray] = {}


def _x(shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.7 + 0.3) * 1.5).reshape(shape).astype(np.float32)


def _arguments(kw: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of the call: ``rng`` (a seed) becomes ``RandomState(seed)``,
    ``[lo, hi, seed]`` under a ``*_init`` key ``UniformInitializer((lo, hi),
    RandomState(seed))``; ``kernel`` and the sizes become tuples."""
    out: dict[str, Any] = {}
    for k, v in kw.items():
        if k == "rng":
            out[k] = None if v is None else np.random.RandomState(v)
        elif k.endswith("_init") and isinstance(v, list):
            out[k] = I.UniformInitializer((v[0], v[1]), rng=np.random.RandomState(v[2]))
        elif k in ("kernel", "pad", "stride", "dilation") or (
            k == "n_outmaps" and isinstance(v, list)
        ):
            out[k] = tuple(v)
        else:
            out[k] = v
    return out


def _case(
    fn: str, k: int, x_shape: tuple[int, ...], kw: dict[str, Any], arr: Any = None, run: bool = True
) -> None:
    p = f"{fn}/{k}"
    nn.clear_parameters()
    OUT[f"{p}/kwargs"] = np.array(json.dumps(kw))
    x_data = _x(x_shape)
    OUT[f"{p}/x"] = x_data
    args = _arguments(kw)
    if arr is not None:
        key, value = arr
        OUT[f"{p}/{key}"] = value
        args[key] = value
    x = nn.Variable.from_numpy_array(x_data, need_grad=True)
    y = getattr(PF, fn)(x, **args)
    params = nn.get_parameters(grad_only=False)
    OUT[f"{p}/names"] = np.array(json.dumps(list(params)))
    for name, v in params.items():
        OUT[f"{p}/built/{name}"] = np.array(v.d)
        OUT[f"{p}/need_grad/{name}"] = np.array(v.need_grad)
    OUT[f"{p}/y_shape"] = np.array(y.shape)
    if not run:
        return
    y.forward()
    OUT[f"{p}/y"] = np.array(y.d)
    for name, v in params.items():
        OUT[f"{p}/param/{name}"] = np.array(v.d)
        v.g = 0
    x.g = 0
    gy = np.cos(np.arange(y.size)).reshape(y.shape).astype(np.float32)
    y.backward(gy)
    OUT[f"{p}/gx"] = np.array(x.g)
    for name, v in params.items():
        OUT[f"{p}/grad/{name}"] = np.array(v.g)


def main() -> None:
    # (first: draws from nnabla's global generator, seeded 313, untouched before)
    _case("cpd3_convolution", 0, (1, 2, 4, 4), {"outmaps": 3, "kernel": [2, 2], "r": 2})

    _case("pow2_quantized_affine", 0, (2, 3), {"n_outmaps": 4, "rng": 1, "b_init": [-1, 1, 2]})
    kw: dict[str, Any] = {
        "n_outmaps": [2, 2],
        "base_axis": 2,
        "with_zero_w": True,
        "n_w": 3,
        "m_w": 0,
        "sign_b": False,
        "n_b": 4,
        "m_b": 1,
        "w_init": [-2, 2, 4],
        "b_init": [-3, 3, 5],
        "ste_fine_grained_b": False,
        "name": "p2",
    }
    _case("pow2_quantized_affine", 1, (2, 2, 3), kw)
    kw = {"n_outmaps": 3, "quantize_w": False, "with_bias": False, "fix_parameters": True}
    _case("pow2_quantized_affine", 2, (2, 4), {**kw, "rng": 6})
    kw = {"outmaps": 3, "kernel": [3, 3], "pad": [1, 1], "rng": 7, "b_init": [-1, 1, 8]}
    _case("pow2_quantized_convolution", 0, (2, 2, 5, 5), kw)
    kw = {
        "outmaps": 2,
        "kernel": [2, 2],
        "group": 2,
        "stride": [2, 2],
        "with_zero_w": True,
        "n_w": 4,
        "m_w": 0,
        "quantize_b": False,
        "w_init": [-3, 3, 9],
        "b_init": [-1, 1, 10],
    }
    _case("pow2_quantized_convolution", 1, (1, 4, 4, 4), kw)

    kw = {"n_outmaps": 4, "rng": 11, "b_init": [-1, 1, 12]}
    _case("min_max_quantized_affine", 0, (2, 3), kw)
    kw = {
        "n_outmaps": 4,
        "w_min_max": True,
        "b_min_max": True,
        "ql_max_w": 15,
        "ql_min_b": 2,
        "ql_max_b": 9,
        "eps": 0.05,
        "rng": 13,
        "b_init": [-1, 1, 14],
        "name": "mm",
    }
    _case("min_max_quantized_affine", 1, (3, 2), kw)
    kw = {
        "n_outmaps": 3,
        "quantize_b": False,
        "ste_fine_grained_w": False,
        "ql_max_w": 7,
        "w_init": [-3, 3, 15],
        "qr_min_w_init": [-1.5, -1.0, 16],
        "fix_parameters": True,
    }
    _case("min_max_quantized_affine", 2, (2, 2), kw)
    kw = {"outmaps": 3, "kernel": [3, 3], "pad": [1, 1], "rng": 17, "b_init": [-1, 1, 18]}
    _case("min_max_quantized_convolution", 0, (2, 2, 5, 5), kw)
    kw = {
        "outmaps": 4,
        "kernel": [2, 2],
        "group": 2,
        "channel_last": True,
        "ql_max_w": 31,
        "w_min_max": True,
        "w_init": [-3, 3, 19],
        "b_init": [-8, 8, 20],
    }
    # (nnabla's CPU convolution refuses channel_last: the parameters only)
    _case("min_max_quantized_convolution", 1, (2, 4, 4, 2), kw, run=False)

    _case("svd_affine", 0, (2, 6), {"n_outmaps": 5, "r": 2, "rng": 21, "b_init": [-1, 1, 22]})
    uv = np.random.RandomState(23).randn(6, 2, 3).astype(np.float32)
    kw = {"n_outmaps": [2, 3], "r": 3, "with_bias": False}
    _case("svd_affine", 1, (2, 2, 3), kw, ("uv_init", uv))
    kw = {"n_outmaps": 3, "r": 1, "uv_init": [-1, 1, 24], "fix_parameters": True, "name": "s"}
    _case("svd_affine", 2, (3, 4), kw)
    kw = {
        "outmaps": 4,
        "kernel": [3, 3],
        "r": 2,
        "pad": [1, 1],
        "stride": [2, 2],
        "rng": 25,
        "b_init": [-1, 1, 26],
    }
    _case("svd_convolution", 0, (2, 3, 6, 6), kw)
    uv = np.random.RandomState(27).randn(3, 2, 3).astype(np.float32)
    kw = {"outmaps": 3, "kernel": [3], "r": 1, "dilation": [2]}
    _case("svd_convolution", 1, (1, 2, 7), kw, ("uv_init", uv))

    kw = {"outmaps": 4, "kernel": [3, 3], "r": 3, "pad": [1, 1], "rng": 28, "b_init": [-1, 1, 29]}
    _case("cpd3_convolution", 1, (2, 3, 6, 6), kw)
    kw = {
        "outmaps": 3,
        "kernel": [2, 2],
        "r": 2,
        "max_iter": 20,
        "stopping_criterion": -1.0,
        "lambda_reg": 0.1,
        "rng": 30,
        "with_bias": False,
        "name": "cp",
    }
    _case("cpd3_convolution", 2, (1, 2, 5, 5), kw)
    oik = np.random.RandomState(31).randn(2, 3, 3).astype(np.float32)
    kw = {"outmaps": 2, "kernel": [3], "r": 2, "stride": [2], "fix_parameters": True}
    _case("cpd3_convolution", 3, (2, 3, 7), kw, ("oik_init", oik))

    OUT["nnabla_version"] = np.array(nn.__version__)
    np.savez_compressed(sys.argv[1], **OUT)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

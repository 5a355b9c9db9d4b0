"""Write resize_correlation_reference.npz: nnabla 1.39's ``F.onnx_resize``,
``F.patch_correlation`` and ``F.adaptive_separable_convolution`` on fixed inputs (values, and
the gradients of the latter two for a fixed output gradient), for
tests/compat/nnabla/test_functions_resize_correlation.py.

Run with a Python that has nnabla 1.39 (not gradhub), from outside the repository::

    python tests/compat/nnabla/data/make_resize_correlation_reference.py OUT.npz OUT.nntxt \
        OUT2.nntxt

(the files tests/compat/nnabla/data/resize_correlation_reference.npz,
nnp_resize_correlation.nntxt and nnp_patch_correlation.nntxt, the last two nnabla's ``save``
of :func:`network` and :func:`correlation_network`).

The file holds a JSON ``index`` and one float32 array ``data`` (see :func:`pack`). For each
case ``k`` of a function the index has its keyword arguments as JSON (``<fn>/<k>/kwargs``), and
the shape and offset in ``data`` of its inputs (``<fn>/<k>/in<i>``; the resize cases of one
input shape share one input), its output (``<fn>/<k>/y``) and, for the last two functions, the
output gradient (``<fn>/<k>/gy``) and the input gradients (``<fn>/<k>/g<i>``); the index's
``nnabla_version`` is the version that wrote them.

The test module loads this file for :func:`network`, :func:`correlation_network`,
:func:`contents` and their input shapes (nnabla is imported only where it runs).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

COORDS = [
    "half_pixel",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def resize_cases() -> list[tuple[tuple[int, ...], dict]]:
    cases: list[tuple[tuple[int, ...], dict]] = []
    shape = (1, 2, 4, 5)
    for coord in COORDS:
        for nm in NEAREST:
            cases.append(
                (
                    shape,
                    dict(
                        sizes=[1, 2, 7, 3],
                        mode="nearest",
                        coordinate_transformation_mode=coord,
                        nearest_mode=nm,
                    ),
                )
            )
            cases.append(
                (
                    shape,
                    dict(
                        scales=[1.0, 1.0, 0.6, 2.5],
                        mode="nearest",
                        coordinate_transformation_mode=coord,
                        nearest_mode=nm,
                    ),
                )
            )
        cases.append(
            (shape, dict(sizes=[1, 2, 7, 3], mode="linear", coordinate_transformation_mode=coord))
        )
        cases.append(
            (
                shape,
                dict(
                    scales=[1.0, 1.0, 1.7, 0.8], mode="linear", coordinate_transformation_mode=coord
                ),
            )
        )
        for a in (-0.75, -0.5):
            for ex in (0, 1):
                cases.append(
                    (
                        shape,
                        dict(
                            sizes=[1, 2, 9, 3],
                            mode="cubic",
                            coordinate_transformation_mode=coord,
                            cubic_coeff_a=a,
                            exclude_outside=ex,
                        ),
                    )
                )
        cases.append(
            (shape, dict(sizes=[1, 2, 1, 1], mode="linear", coordinate_transformation_mode=coord))
        )
    for mode in ("nearest", "linear", "cubic"):
        roi = [0, 0, 0.2, -0.3, 1, 1, 0.9, 1.4]
        cases.append(
            (
                shape,
                dict(
                    roi=roi,
                    sizes=[1, 2, 5, 6],
                    mode=mode,
                    coordinate_transformation_mode="tf_crop_and_resize",
                    extrapolation_value=-7.5,
                ),
            )
        )
        cases.append(
            (
                shape,
                dict(
                    roi=[0, 0, 0.3, 0.1, 1, 1, 0.7, 0.6],
                    sizes=[1, 2, 1, 4],
                    mode=mode,
                    coordinate_transformation_mode="tf_crop_and_resize",
                ),
            )
        )
        cases.append(((6,), dict(scales=[1.5], mode=mode)))
        cases.append(((2, 3, 4, 5), dict(scales=[1.0, 2.0, 1.0, 1.0], mode=mode)))
        cases.append(
            (
                (1, 2, 4, 5),
                dict(
                    sizes=[1, 2, 3, 8],
                    mode=mode,
                    exclude_outside=True,
                    coordinate_transformation_mode="pytorch_half_pixel",
                ),
            )
        )
        cases.append(((2, 3, 4, 5), dict(scales=[1.0, 1.5, 0.5, 1.4], mode=mode)))
        cases.append(
            (
                (2, 3, 4, 5),
                dict(sizes=[2, 3, 6, 5], mode=mode, coordinate_transformation_mode="asymmetric"),
            )
        )
        cases.append(
            (
                (1, 2, 3, 4, 3),
                dict(
                    scales=[1.0, 1.0, 2.0, 0.5, 1.5],
                    mode=mode,
                    coordinate_transformation_mode="align_corners",
                ),
            )
        )
    return cases


def correlation_cases() -> list[tuple[tuple[int, ...], dict]]:
    return [
        ((2, 3, 5, 5), dict()),
        ((1, 2, 5, 5), dict(patch=3)),
        ((2, 2, 5, 6), dict(shift=2)),
        ((1, 2, 5, 5), dict(shift=2, shift_step=2)),
        ((1, 1, 5, 5), dict(patch=3, padding=2)),
        ((1, 2, 5, 5), dict(patch=3, patch_step=2, padding=2)),
        ((1, 2, 7, 8), dict(patch=4, patch_step=3)),
        ((2, 2, 4, 4), dict(patch=(3, 3), padding=(1, 2, 2, 1))),
        ((1, 2, 5, 9), dict(patch=(2, 3), shift=(1, 1), patch_step=(2, 3))),
        ((2, 1, 3, 8), dict(patch=(1, 2), patch_step=(2, 3), padding=(1, 1, 0, 0))),
        ((1, 2, 5, 5), dict(shift=(1, 0), shift_step=(1, 2))),
        (
            (1, 3, 6, 7),
            dict(patch=(2, 3), shift=(2, 3), patch_step=(1, 2), shift_step=(2, 1), padding=(0, 1)),
        ),
        ((2, 4, 5, 3), dict(patch=2, shift=1, padding=1, channel_last=True)),
        ((1, 1, 4, 5), dict(patch=(2, 2), shift=(1, 2), shift_step=(1, 2), padding=(1, 0))),
    ]


def adaptive_cases() -> list[tuple[tuple[int, ...], ...]]:
    return [
        ((2, 3, 5, 6), (2, 3, 3, 4), (2, 3, 3, 4)),
        ((1, 2, 6, 6), (1, 4, 4, 6), (1, 2, 5, 5)),
        ((1, 1, 4, 5), (1, 2, 4, 4), (1, 3, 3, 5)),
        ((2, 2, 3, 3), (2, 1, 3, 3), (2, 1, 3, 3)),
    ]


def network(F: Any, a: Any, b: Any, kv: Any, kh: Any) -> dict[str, Any]:
    """The outputs of the network of ``nnp_resize_correlation.nntxt`` (``F``: nnabla's
    functions module or the layer's)."""
    return {
        "y0": F.onnx_resize(
            a,
            sizes=[1, 2, 7, 3],
            mode="cubic",
            coordinate_transformation_mode="align_corners",
            exclude_outside=1,
        ),
        "y1": F.onnx_resize(
            a,
            roi=[0, 0, 0.2, -0.3, 1, 1, 0.9, 1.4],
            sizes=[1, 2, 5, 6],
            mode="linear",
            coordinate_transformation_mode="tf_crop_and_resize",
            extrapolation_value=-7.5,
        ),
        "y2": F.onnx_resize(a, scales=[1, 1, 2, 0.5]),
        "y3": F.patch_correlation(a, b, patch=2, shift=1, padding=(1, 0, 0, 1)),
        "y4": F.adaptive_separable_convolution(a, kv, kh),
    }


#: the shapes of the inputs of :func:`network`
NETWORK_INPUTS = {"a": (1, 2, 4, 5), "b": (1, 2, 4, 5), "kv": (1, 2, 3, 3), "kh": (1, 3, 3, 3)}


def contents(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """The ``save`` contents of ``nnp_resize_correlation.nntxt``."""
    return {
        "networks": [{"name": "rc", "batch_size": 1, "outputs": outputs, "names": inputs}],
        "executors": [
            {
                "name": "runtime",
                "network": "rc",
                "data": list(inputs),
                "output": list(outputs),
            }
        ],
    }


def pack(arrays: dict[str, np.ndarray], texts: dict[str, str]) -> dict[str, np.ndarray]:
    """The float32 ``arrays`` as one flat array ``data`` and a JSON ``index`` of their shapes
    and offsets (with the ``texts``): a small file (one compressed member for all)."""
    index: dict[str, object] = dict(texts)
    flat, offset = [], 0
    for key, a in arrays.items():
        a = np.asarray(a, np.float32)
        index[key] = [list(a.shape), offset]
        flat.append(a.ravel())
        offset += a.size
    return {"index": np.array(json.dumps(index)), "data": np.concatenate(flat)}


def main(path: str) -> None:
    import nnabla as nn
    import nnabla.functions as F

    rng = np.random.RandomState(1234)
    out: dict[str, np.ndarray] = {}
    texts: dict[str, str] = {"nnabla_version": nn.__version__}
    inputs: dict[tuple[int, ...], np.ndarray] = {}
    for k, (shape, kw) in enumerate(resize_cases()):
        if shape not in inputs:  # one input per shape
            inputs[shape] = rng.randn(*shape).astype(np.float32)
        x = inputs[shape]
        y = F.onnx_resize(nn.Variable.from_numpy_array(x), **kw)
        y.forward()
        texts[f"onnx_resize/{k}/kwargs"] = json.dumps(kw)
        out[f"onnx_resize/{k}/in0"] = x
        out[f"onnx_resize/{k}/y"] = y.d.copy()
    for k, (shape, kw) in enumerate(correlation_cases()):
        xs = [rng.randn(*shape).astype(np.float32) for _ in range(2)]
        vs = [nn.Variable.from_numpy_array(a, need_grad=True) for a in xs]
        y = F.patch_correlation(*vs, **kw)
        y.forward()
        gy = rng.randn(*y.shape).astype(np.float32)
        for v in vs:
            v.g = np.zeros(v.shape, np.float32)  # (nnabla accumulates into these)
        y.backward(gy)
        texts[f"patch_correlation/{k}/kwargs"] = json.dumps(kw)
        for i, (a, v) in enumerate(zip(xs, vs)):
            out[f"patch_correlation/{k}/in{i}"] = a
            out[f"patch_correlation/{k}/g{i}"] = v.g.copy()
        out[f"patch_correlation/{k}/y"] = y.d.copy()
        out[f"patch_correlation/{k}/gy"] = gy
    for k, shapes in enumerate(adaptive_cases()):
        xs = [rng.randn(*s).astype(np.float32) for s in shapes]
        vs = [nn.Variable.from_numpy_array(a, need_grad=True) for a in xs]
        y = F.adaptive_separable_convolution(*vs)
        y.forward()
        gy = rng.randn(*y.shape).astype(np.float32)
        for v in vs:
            v.g = np.zeros(v.shape, np.float32)  # (kernel entries nnabla does not write stay 0)
        y.backward(gy)
        texts[f"adaptive_separable_convolution/{k}/kwargs"] = "{}"
        for i, (a, v) in enumerate(zip(xs, vs)):
            out[f"adaptive_separable_convolution/{k}/in{i}"] = a
            out[f"adaptive_separable_convolution/{k}/g{i}"] = v.g.copy()
        out[f"adaptive_separable_convolution/{k}/y"] = y.d.copy()
        out[f"adaptive_separable_convolution/{k}/gy"] = gy
    nin = {
        k: nn.Variable.from_numpy_array(rng.randn(*s).astype(np.float32))
        for k, s in NETWORK_INPUTS.items()
    }
    for k, v in nin.items():
        out[f"nnp/{k}"] = v.d.copy()
    for k, y in network(F, **nin).items():
        y.forward()
        out[f"nnp/{k}"] = y.d.copy()
    packed = pack(out, texts)
    np.savez_compressed(path, index=packed["index"], data=packed["data"])


def correlation_network(F: Any, a: Any, b: Any, c: Any) -> dict[str, Any]:
    """The outputs of the network of ``nnp_patch_correlation.nntxt`` (NCHW with several
    channels and with one, NHWC)."""
    return {
        "y0": F.patch_correlation(a, b, patch=2, shift=(1, 2), shift_step=(1, 2), padding=(1, 0)),
        "y1": F.patch_correlation(c, c, patch=(2, 1), patch_step=2),
        "y2": F.patch_correlation(a, b, shift=1, padding=(0, 1, 1, 0), channel_last=True),
    }


#: the shapes of the inputs of :func:`correlation_network`
CORRELATION_INPUTS = {"a": (1, 3, 4, 3), "b": (1, 3, 4, 3), "c": (2, 1, 4, 5)}


def write_nntxt(path: str, correlation_path: str) -> None:
    """Write ``nnp_resize_correlation.nntxt`` and ``nnp_patch_correlation.nntxt``: nnabla's
    ``save`` of :func:`network` and of :func:`correlation_network`."""
    import nnabla as nn
    import nnabla.functions as F
    from nnabla.utils.save import save

    xs = {k: nn.Variable(s) for k, s in NETWORK_INPUTS.items()}
    save(path, contents(xs, network(F, **xs)))
    xs = {k: nn.Variable(s) for k, s in CORRELATION_INPUTS.items()}
    save(correlation_path, contents(xs, correlation_network(F, **xs)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "resize_correlation_reference.npz")
    write_nntxt(
        sys.argv[2] if len(sys.argv) > 2 else "nnp_resize_correlation.nntxt",
        sys.argv[3] if len(sys.argv) > 3 else "nnp_patch_correlation.nntxt",
    )

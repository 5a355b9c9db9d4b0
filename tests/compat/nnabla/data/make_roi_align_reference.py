"""Writes ``roi_align_reference.npz``: nnabla 1.39's ``F.roi_align`` (CPU, float32) on fixed
inputs, its output and the gradient of its input for a fixed output gradient, which
``tests/compat/nnabla/test_functions_roi_align.py`` compares with the layer.

For each case ``<name>`` the file holds ``<name>/x``, ``<name>/boxes``, ``<name>/dy`` (the
inputs), ``<name>/y`` (nnabla's output), ``<name>/dx`` (nnabla's ``x.g`` after
``y.backward(dy)``) and ``<name>/boxes_g`` (``boxes.g``, which nnabla's backward leaves as it
was: zeros). nnabla's CPU kernel refuses ``channel_last=True``, so every case is NCHW.

It also writes ``nnp_roi_align.nntxt``, nnabla's ``save`` of the network ``x, boxes ->
F.roi_align(x, boxes, (2, 3), (0.5, 0.75), 2)`` (:func:`network`), which the layer's ``save``
must reproduce and its ``NnpLoader`` run.

Run it with the Python of an environment that has nnabla 1.39.0, from the checkout::

    /path/to/nnabla-venv/bin/python tests/compat/nnabla/data/make_roi_align_reference.py
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

#: boxes (batch index, x1, y1, x2, y2) in the coordinates of a (6, 7) image
BOXES = [
    [0.0, 1.2, 0.7, 4.9, 5.3],  # inside
    [1.0, 0.3, 2.1, 6.6, 3.9],  # inside, wide
    [0.0, -2.3, -1.7, 3.1, 8.4],  # partly outside (before the start, past the end)
    [1.0, 5.5, 4.2, 9.9, 7.7],  # partly outside, past the far edges
    [1.0, -6.0, -5.0, -2.5, -3.0],  # wholly outside
    [0.0, 2.0, 1.0, 2.6, 1.3],  # smaller than a pixel
]

# name -> (x shape, boxes, keyword arguments)
CASES: dict[str, tuple[tuple[int, ...], list[list[float]], dict[str, object]]] = {
    "adaptive": ((2, 3, 6, 7), BOXES, {"output_size": (2, 3)}),
    "ratio2": ((2, 3, 6, 7), BOXES, {"output_size": (3, 2), "sampling_ratio": 2}),
    "ratio3_one_cell": ((2, 3, 6, 7), BOXES, {"output_size": (1, 1), "sampling_ratio": 3}),
    "scale": (
        (2, 2, 6, 7),
        [[b[0], 2 * b[1], 1.5 * b[2], 2 * b[3], 1.5 * b[4]] for b in BOXES],
        {"output_size": (2, 2), "spatial_scale": (0.5, 0.75)},
    ),
    "scale_ratio1": (
        (2, 2, 6, 7),
        BOXES,
        {"output_size": (4, 3), "spatial_scale": (1.5, 0.8), "sampling_ratio": 1},
    ),
    "large_boxes": (
        (1, 2, 12, 10),
        [[0.0, 0.0, 0.0, 11.0, 9.0], [0.0, 1.5, 2.25, 9.75, 11.5], [0.0, -4.0, 3.0, 14.0, 5.0]],
        {"output_size": (2, 3)},
    ),
    "fractional_batch_index": (
        (2, 2, 6, 7),
        [[0.7, 1.2, 0.7, 4.9, 5.3], [1.7, 0.3, 2.1, 6.6, 3.9], [-0.5, 2.0, 2.0, 5.0, 4.0]],
        {"output_size": (2, 2)},
    ),
    "zero_width_adaptive": (
        (2, 2, 6, 7),
        [[0.0, 2.0, 1.0, 2.0, 4.0], [1.0, 1.0, 1.0, 3.0, 3.0]],
        {"output_size": (2, 2)},
    ),
    "zero_width_ratio2": (
        (2, 2, 6, 7),
        [[0.0, 2.0, 1.0, 2.0, 4.0], [1.0, 1.0, 1.0, 3.0, 3.0]],
        {"output_size": (2, 2), "sampling_ratio": 2},
    ),
}


def inputs(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """``x``, ``boxes``, ``dy`` (float32) and the output shape of case ``name``."""
    shape, boxes, kw = CASES[name]
    rng = np.random.RandomState(sum(map(ord, name)))
    x = rng.randn(*shape).astype(np.float32)
    b = np.array(boxes, dtype=np.float32)
    size: Any = kw["output_size"]
    out = (len(boxes), shape[1], int(size[0]), int(size[1]))
    dy = rng.randn(*out).astype(np.float32)
    return x, b, dy, out


def network(F: object, x: object, boxes: object) -> object:
    """The network of ``nnp_roi_align.nntxt`` (``F``: nnabla's functions module or the
    layer's)."""
    return F.roi_align(x, boxes, (2, 3), (0.5, 0.75), 2)  # type: ignore[attr-defined]


def contents(x: object, boxes: object, y: object) -> dict[str, object]:
    """The ``save`` contents of ``nnp_roi_align.nntxt``."""
    return {
        "networks": [
            {
                "name": "roi",
                "batch_size": 2,
                "outputs": {"y": y},
                "names": {"x": x, "boxes": boxes},
            }
        ],
        "executors": [
            {"name": "runtime", "network": "roi", "data": ["x", "boxes"], "output": ["y"]}
        ],
    }


def main() -> None:
    import nnabla as nn
    import nnabla.functions as F

    assert nn.__version__ == "1.39.0", nn.__version__
    arrays: dict[str, np.ndarray] = {}
    for name, (_, _, kw) in CASES.items():
        x, b, dy, _ = inputs(name)
        xv = nn.Variable.from_numpy_array(x, need_grad=True)
        bv = nn.Variable.from_numpy_array(b, need_grad=True)
        y = F.roi_align(xv, bv, **kw)
        y.forward()
        xv.grad.zero()
        bv.grad.zero()
        y.backward(dy)
        for key, value in (
            ("x", x),
            ("boxes", b),
            ("dy", dy),
            ("y", y.d.copy()),
            ("dx", xv.g.copy()),
            ("boxes_g", bv.g.copy()),
        ):
            arrays[f"{name}/{key}"] = value
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "roi_align_reference.npz")
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]
    print(f"wrote {path}: {len(CASES)} cases")

    from nnabla.utils.save import save

    x = nn.Variable((2, 3, 6, 7))
    boxes = nn.Variable((len(BOXES), 5))
    y = network(F, x, boxes)
    path = os.path.join(here, "nnp_roi_align.nntxt")
    save(path, contents(x, boxes, y))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

"""Writes ``deformable_convolution_reference.npz``: nnabla 1.39's ``F.deformable_convolution``
and ``PF.deformable_convolution`` on fixed inputs (float32), their outputs and the gradients of
``sum(y * dy)`` with respect to every input, which
``tests/compat/nnabla/test_functions_deformable_convolution.py`` compares with gradhub's.

Every input of a case needs a gradient (nnabla computes the mask's share of the other gradients
only when the mask needs one). Run it with the Python of an environment that has nnabla 1.39.0,
from the checkout::

    /path/to/nnabla-venv/bin/python \\
        tests/compat/nnabla/data/make_deformable_convolution_reference.py
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

# name -> (x shape, outmaps, kernel, with mask, with bias, keyword arguments)
CASES: dict[str, tuple[tuple[int, ...], int, tuple[int, int], bool, bool, dict[str, object]]] = {
    "v1": ((2, 2, 4, 5), 3, (3, 3), False, True, {"pad": (1, 1)}),
    "v2": ((2, 2, 4, 5), 3, (3, 3), True, True, {"pad": (1, 1)}),
    "v2_no_bias": ((1, 3, 5, 4), 2, (2, 3), True, False, {"pad": (0, 1)}),
    "group2": ((1, 4, 4, 4), 4, (3, 3), True, True, {"pad": (1, 1), "group": 2}),
    "deformable_group2": (
        (1, 4, 4, 4),
        2,
        (3, 3),
        True,
        True,
        {"pad": (1, 1), "deformable_group": 2},
    ),
    "v1_groups": (
        (1, 4, 4, 5),
        4,
        (2, 2),
        False,
        True,
        {"group": 2, "deformable_group": 2},
    ),
    "stride_pad_dilation": (
        (1, 2, 6, 7),
        2,
        (3, 3),
        True,
        True,
        {"pad": (1, 2), "stride": (2, 1), "dilation": (1, 2)},
    ),
    "whole_offsets": ((1, 2, 4, 4), 2, (3, 3), True, True, {"pad": (1, 1)}),
}

#: cases whose offsets are whole pixels (the kinks: nnabla's gradient is the one-sided
#: derivative from the cell above and to the right of the sample, floor(h) to floor(h) + 1)
WHOLE = {"whole_offsets"}


def _offsets(rng: np.random.RandomState, shape: tuple[int, ...]) -> np.ndarray:
    """Offsets in about [-2.5, 2.5] pixels (some samples leave the image), away from whole
    pixels (the kinks of bilinear sampling)."""
    return (np.round(rng.uniform(-2.5, 2.5, shape) * 8) / 8 + 1 / 37).astype(np.float32)


def pf_layer(PF: Any, x: Any, offset: Any, mask: Any) -> Any:
    """The ``pf`` case: ``PF.deformable_convolution`` (``PF``: nnabla's module, or the
    front-end's in the test) with groups and initial weights drawn from ``RandomState(7)``."""
    return PF.deformable_convolution(
        x,
        6,
        (3, 3),
        offset,
        mask,
        pad=(1, 1),
        group=2,
        deformable_group=2,
        rng=np.random.RandomState(7),
        name="dc",
    )


def main() -> None:
    import nnabla as nn
    import nnabla.functions as F
    import nnabla.parametric_functions as PF

    assert nn.__version__ == "1.39.0", nn.__version__
    out: dict[str, Any] = {}
    for i, (name, (shape, outmaps, kernel, with_mask, with_bias, kw)) in enumerate(CASES.items()):
        rng = np.random.RandomState(100 + i)
        nb, c, h, w = shape
        dg = int(kw.get("deformable_group", 1))  # type: ignore[call-overload]
        g = int(kw.get("group", 1))  # type: ignore[call-overload]
        nk = kernel[0] * kernel[1]
        arrays = {
            "x": rng.standard_normal(shape).astype(np.float32),
            "w": rng.standard_normal((outmaps, c // g, *kernel)).astype(np.float32),
            "offset": _offsets(rng, (nb, 2 * nk * dg, h, w)),
        }
        if name in WHOLE:
            arrays["offset"] = rng.randint(-2, 3, (nb, 2 * nk * dg, h, w)).astype(np.float32)
        if with_mask:
            arrays["mask"] = rng.uniform(0.0, 1.0, (nb, nk * dg, h, w)).astype(np.float32)
        if with_bias:
            arrays["b"] = rng.standard_normal(outmaps).astype(np.float32)
        vs = {k: nn.Variable.from_numpy_array(a, need_grad=True) for k, a in arrays.items()}
        y = F.deformable_convolution(
            vs["x"], vs["w"], vs["offset"], vs.get("mask"), vs.get("b"), **kw
        )
        dy = rng.standard_normal(y.shape).astype(np.float32)
        loss = F.sum(y * nn.Variable.from_numpy_array(dy))
        loss.forward()
        for v in vs.values():
            v.grad.zero()
        loss.backward(clear_buffer=False)
        for k, a in arrays.items():
            out[f"{name}/{k}"] = a
            out[f"{name}/g{k}"] = vs[k].g.copy()
        out[f"{name}/dy"] = dy
        out[f"{name}/y"] = y.d.copy()

    # PF: parameter names and shapes, initial weights drawn from the given rng
    nn.clear_parameters()
    rng = np.random.RandomState(5)
    x = nn.Variable.from_numpy_array(rng.standard_normal((2, 4, 5, 5)).astype(np.float32))
    offset = nn.Variable.from_numpy_array(_offsets(rng, (2, 36, 5, 5)))
    mask = nn.Variable.from_numpy_array(rng.uniform(0, 1, (2, 18, 5, 5)).astype(np.float32))
    y = pf_layer(PF, x, offset, mask)
    y.forward()
    params = nn.get_parameters()
    out["pf/x"], out["pf/offset"], out["pf/mask"] = x.d, offset.d, mask.d
    out["pf/names"] = np.array(list(params))
    out["pf/W"] = params["dc/deformable_conv/W"].d.copy()
    out["pf/b"] = params["dc/deformable_conv/b"].d.copy()
    out["pf/y"] = y.d.copy()
    nn.clear_parameters()
    y = PF.deformable_convolution(
        x, 2, (3, 3), offset[:, :18], None, pad=(1, 1), with_bias=False, name="nb"
    )
    out["pf_no_bias/names"] = np.array(list(nn.get_parameters()))
    out["pf_no_bias/shape"] = np.array(y.shape)

    here = os.path.dirname(os.path.abspath(__file__))
    np.savez_compressed(os.path.join(here, "deformable_convolution_reference.npz"), **out)


if __name__ == "__main__":
    main()

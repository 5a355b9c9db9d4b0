"""nnabla's ``F.roi_align`` in the layer against nnabla 1.39.

The expected arrays in ``data/roi_align_reference.npz`` and the file ``data/nnp_roi_align.nntxt``
were written by nnabla 1.39.0 (CPU, float32) with ``data/make_roi_align_reference.py``: for each
case the inputs, nnabla's output, the gradient of ``x`` for a fixed output gradient and that of
the boxes (nnabla leaves it at zero). Boxes inside, partly and wholly outside the image and
smaller than a pixel; ``sampling_ratio`` -1 (the adaptive grid), 1, 2 and 3; ``spatial_scale``
other than 1; fractional batch indices; zero-width boxes (nnabla's adaptive grid then has no
sample: its output is NaN and its backward adds nothing). nnabla's CPU kernel refuses
``channel_last=True``; the layer's channel-last results are checked against the same nnabla
arrays transposed. nnabla 1.39's ``nn.grad`` through ``RoiAlign`` raises ``NotImplementedError``
("roi_align_backward is not implemented"); the layer's second derivatives are checked against
the identities of a linear function.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest
from gradhub_compat.nnabla.utils.nnp_graph import NnpLoader
from gradhub_compat.nnabla.utils.save import save

DATA = Path(__file__).parent / "data"
REF = np.load(DATA / "roi_align_reference.npz")
CASES = sorted({k.split("/")[0] for k in REF.files})

#: the keyword arguments of each case (as in data/make_roi_align_reference.py)
KWARGS: dict[str, dict[str, Any]] = {
    "adaptive": {"output_size": (2, 3)},
    "ratio2": {"output_size": (3, 2), "sampling_ratio": 2},
    "ratio3_one_cell": {"output_size": (1, 1), "sampling_ratio": 3},
    "scale": {"output_size": (2, 2), "spatial_scale": (0.5, 0.75)},
    "scale_ratio1": {"output_size": (4, 3), "spatial_scale": (1.5, 0.8), "sampling_ratio": 1},
    "large_boxes": {"output_size": (2, 3)},
    "fractional_batch_index": {"output_size": (2, 2)},
    "zero_width_adaptive": {"output_size": (2, 2)},
    "zero_width_ratio2": {"output_size": (2, 2), "sampling_ratio": 2},
}


def _case(name: str) -> tuple[np.ndarray, ...]:
    return tuple(REF[f"{name}/{k}"] for k in ("x", "boxes", "dy", "y", "dx", "boxes_g"))


def test_every_recorded_case_is_tested() -> None:
    assert sorted(KWARGS) == CASES


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("channel_last", [False, True])
def test_values_and_gradients_equal_nnabla(name: str, channel_last: bool) -> None:
    x, boxes, dy, y_nn, dx_nn, boxes_g_nn = _case(name)
    to = (lambda a: a.transpose(0, 2, 3, 1)) if channel_last else (lambda a: a)
    xv = nn.Variable.from_numpy_array(to(x), need_grad=True)
    bv = nn.Variable.from_numpy_array(boxes, need_grad=True)
    y = F.roi_align(xv, bv, channel_last=channel_last, **KWARGS[name])
    y.forward()
    assert y.d.dtype == np.float32
    np.testing.assert_allclose(y.d, to(y_nn), rtol=1e-5, atol=1e-6, equal_nan=True)
    xv.grad.zero()
    bv.grad.zero()
    y.backward(to(dy))
    np.testing.assert_allclose(xv.g, to(dx_nn), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(bv.g, boxes_g_nn)


def test_positional_arguments_and_ndarrays() -> None:
    x, boxes, _, y_nn, _, _ = _case("scale")
    y = F.roi_align(
        nn.NdArray.from_numpy_array(x),
        nn.NdArray.from_numpy_array(boxes),
        (2, 2),
        (0.5, 0.75),
        -1,
        False,
    )
    assert isinstance(y, nn.NdArray)
    np.testing.assert_allclose(y.data, y_nn, rtol=1e-5, atol=1e-6)


def test_forward_reads_the_new_data_and_the_parent_is_nnablas() -> None:
    x, boxes, _, y_nn, _, _ = _case("ratio2")
    xv = nn.Variable(x.shape)
    bv = nn.Variable(boxes.shape)
    y = F.roi_align(xv, bv, (3, 2), sampling_ratio=2, channel_last=None)
    assert y.shape == y_nn.shape
    assert y.parent.name == "RoiAlign"
    assert y.parent.info.args == {
        "output_size": [3, 2],
        "spatial_scale": (1.0, 1.0),
        "sampling_ratio": 2,
        "channel_last": False,
    }
    xv.d = x
    bv.d = boxes
    y.forward()
    np.testing.assert_allclose(y.d, y_nn, rtol=1e-5, atol=1e-6)
    # nnabla's None for sampling_ratio is -1
    x2, boxes2, _, y2_nn, _, _ = _case("adaptive")
    xv.d = x2
    bv.d = boxes2
    z = F.roi_align(xv, bv, (2, 3), sampling_ratio=None)
    z.forward()
    np.testing.assert_allclose(z.d, y2_nn, rtol=1e-5, atol=1e-6)


def test_higher_order_gradients_through_nn_grad() -> None:
    """The gradient of ``x`` is linear in the output gradient and independent of ``x``: its own
    derivative in ``x`` is zero, and in ``dy`` it is RoI Align again."""
    x, boxes, dy, y_nn, dx_nn, _ = _case("adaptive")
    xv = nn.Variable.from_numpy_array(x, need_grad=True)
    bv = nn.Variable.from_numpy_array(boxes)
    dyv = nn.Variable.from_numpy_array(dy, need_grad=True)
    y = F.roi_align(xv, bv, (2, 3))
    (gx,) = nn.grad([y], [xv], grad_outputs=[dyv])
    gx.forward()
    np.testing.assert_allclose(gx.d, dx_nn, rtol=1e-5, atol=1e-5)
    # d<gx, x> / d dy = roi_align(x)
    (gdy,) = nn.grad([F.sum(gx * xv)], [dyv])
    gdy.forward()
    np.testing.assert_allclose(gdy.d, y_nn, rtol=1e-5, atol=1e-5)


def test_nnp_file_equals_nnablas_and_runs() -> None:
    x, boxes = nn.Variable((2, 3, 6, 7)), nn.Variable((6, 5))
    y = F.roi_align(x, boxes, (2, 3), (0.5, 0.75), 2)
    contents = {
        "networks": [
            {"name": "roi", "batch_size": 2, "outputs": {"y": y}, "names": {"x": x, "boxes": boxes}}
        ],
        "executors": [
            {"name": "runtime", "network": "roi", "data": ["x", "boxes"], "output": ["y"]}
        ],
    }
    text = io.StringIO()
    save(text, contents, extension=".nntxt")
    assert text.getvalue() == (DATA / "nnp_roi_align.nntxt").read_text()

    net = NnpLoader(str(DATA / "nnp_roi_align.nntxt")).get_network("roi")
    xr, br, _, _, _, _ = _case("adaptive")
    net.inputs["x"].d = xr
    net.inputs["boxes"].d = br
    out = net.outputs["y"]
    out.forward()
    want = F.roi_align(
        nn.NdArray.from_numpy_array(xr), nn.NdArray.from_numpy_array(br), (2, 3), (0.5, 0.75), 2
    )
    np.testing.assert_allclose(out.d, want.data, rtol=1e-6)
    assert out.parent.name == "RoiAlign"


@pytest.mark.parametrize(
    ("x_shape", "b_shape", "kwargs", "error", "match"),
    [
        ((2, 3, 6), (2, 5), {"output_size": (2, 2)}, ValueError, "input must be 4-D"),
        ((2, 3, 6, 7), (2, 4), {"output_size": (2, 2)}, ValueError, r"boxes must have shape"),
        ((2, 3, 6, 7), (2, 5), {"output_size": (2,)}, ValueError, "output_size must be a"),
        ((2, 3, 6, 7), (2, 5), {"output_size": (0, 2)}, ValueError, "output_size must be pos"),
        ((2, 3, 6, 7), (2, 5), {"output_size": 2}, TypeError, "output_size must be a"),
        (
            (2, 3, 6, 7),
            (2, 5),
            {"output_size": (2, 2), "spatial_scale": (1.0,)},
            ValueError,
            "spatial_scale must be a",
        ),
        (
            (2, 3, 6, 7),
            (2, 5),
            {"output_size": (2, 2), "sampling_ratio": "2"},
            TypeError,
            "sampling_ratio must be an int",
        ),
        (
            (2, 3, 6, 7),
            (2, 5),
            {"output_size": (2, 2), "channel_last": "yes"},
            TypeError,
            "channel_last must be a bool",
        ),
    ],
)
def test_bad_arguments_name_the_function(
    x_shape: tuple[int, ...],
    b_shape: tuple[int, ...],
    kwargs: dict[str, Any],
    error: type,
    match: str,
) -> None:
    with pytest.raises(error, match=f"^nnabla F.roi_align: {match}"):
        F.roi_align(nn.Variable(x_shape), nn.Variable(b_shape), **kwargs)


def test_a_batch_index_out_of_range_raises_when_computed() -> None:
    x = nn.Variable.from_numpy_array(np.zeros((2, 1, 4, 4), np.float32))
    b = nn.Variable.from_numpy_array(np.array([[2.0, 0.0, 0.0, 1.0, 1.0]], np.float32))
    with pytest.raises(ValueError, match=r"batch index .* must be in \[0, 2\)"):
        F.roi_align(x, b, (1, 1)).forward()

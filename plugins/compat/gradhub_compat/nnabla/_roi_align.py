"""nnabla's ``F.roi_align`` on gradhub-nn-ops' ``RoIAlign``.

The arguments are checked here with messages naming ``nnabla F.roi_align``; the graph holds one
``RoIAlign`` node (:mod:`gradhub_nn_ops.roi`), shown as nnabla's ``RoiAlign`` (``y.parent.name``,
NNP files). ``forward()`` runs it again on the inputs' current data; the batch indices of the
boxes are checked when it runs (they are data).
"""

from __future__ import annotations

from typing import Any

from gradhub import functions as _native
from gradhub.variable import Variable as NativeVariable

WHERE = "nnabla F.roi_align"


def _shape_of(v: Any, arg: str) -> tuple[int, ...]:
    if not isinstance(v, NativeVariable):
        raise TypeError(f"{WHERE}: {arg} must be a Variable or NdArray, got {type(v).__name__}")
    return tuple(int(d) for d in v.shape)


def roi_align_graph(
    input: Any,
    boxes: Any,
    output_size: Any,
    spatial_scale: Any,
    sampling_ratio: Any,
    channel_last: Any,
) -> Any:
    """Check the arguments as nnabla's ``RoiAlign::setup_impl`` does (plus their types) and
    build the ``RoIAlign`` node, recorded as nnabla's ``RoiAlign``. ``sampling_ratio`` and
    ``channel_last`` None are -1 and False, as nnabla's."""
    from gradhub_nn_ops.roi import check_args

    from ._hooks import record_as

    if sampling_ratio is None:
        sampling_ratio = -1
    if channel_last is None:
        channel_last = False
    x_shape = _shape_of(input, "input")
    b_shape = _shape_of(boxes, "boxes")
    size, scale, ratio = check_args(
        WHERE, x_shape, b_shape, output_size, spatial_scale, sampling_ratio, channel_last
    )
    y = _native.roi_align(input, boxes, size, scale, ratio, bool(channel_last))
    record_as(y, "RoiAlign")
    return y

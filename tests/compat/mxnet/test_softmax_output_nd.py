"""``SoftmaxOutput`` on data of more than 2 axes without ``multi_output``/``preserve_shape``.

mxnet's kernel (``src/operator/softmax_output-inl.h``) infers the label shape as data's shape
without the last axis, softmaxes data viewed as (n, rest), lets row ``i`` read entry ``i`` of the
flattened label, and normalizes ``"batch"``/``"valid"`` over every label entry. Expected values
are mxnet 1.9.1's outputs (quoted) or derived by hand from that kernel (and agree with mxnet
1.9.1).
"""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

_X = ((np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 5) / 4).astype(np.float32)
_LABEL = np.array([[5.0, 1.0, 2.0], [7.0, 3.0, 4.0]], dtype=np.float32)


def _softmax_rows() -> np.ndarray:
    """softmax of ``_X`` viewed as (2, 12)."""
    e = np.exp(_X.reshape(2, 12).astype(np.float64))
    return e / e.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


def _run(label: np.ndarray, **kw: object) -> tuple[np.ndarray, np.ndarray]:
    """Forward and gradient (both viewed as (2, 12)) of SoftmaxOutput on ``_X``."""
    net = mx.sym.SoftmaxOutput(mx.sym.Variable("data"), name="sm", **kw)  # type: ignore[arg-type]
    g = mx.nd.zeros((2, 3, 4))
    ex = net.bind(mx.cpu(), {"data": mx.nd.array(_X), "sm_label": mx.nd.array(label)}, {"data": g})
    out = ex.forward(is_train=True)[0].asnumpy()
    ex.backward()
    return out.reshape(2, 12), g.asnumpy().reshape(2, 12)


def test_label_shape_is_data_shape_without_the_last_axis() -> None:
    net = mx.sym.SoftmaxOutput(mx.sym.Variable("data"), name="sm")
    # mxnet 1.9.1's infer_shape / infer_shape_partial / simple_bind
    assert net.infer_shape(data=(2, 3, 4)) == ([(2, 3, 4), (2, 3)], [(2, 3, 4)], [])
    assert net.infer_shape(data=(2, 3, 2, 2))[0] == [(2, 3, 2, 2), (2, 3, 2)]
    assert net.infer_shape(data=(2, 1, 4))[0] == [(2, 1, 4), (2, 1)]
    assert net.infer_shape(data=(2, 4))[0] == [(2, 4), (2,)]
    assert net.infer_shape_partial(data=(0, 3, 4)) == ([(0, 3, 4), (0, 3)], [(0, 3, 4)], [])
    assert net.infer_shape_partial(data=(2, 0, 4)) == ([(2, 0, 4), (2, 0)], [(2, 0, 4)], [])
    ex = net.simple_bind(mx.cpu(), data=(2, 3, 4))
    assert ex.arg_dict["sm_label"].shape == (2, 3)


@pytest.mark.parametrize("shape", [(2,), (6,), (3, 2), (2, 3, 1)])
def test_other_label_shapes_are_rejected(shape: tuple[int, ...]) -> None:
    # mxnet 1.9.1: "Error in operator sm: Shape inconsistent, Provided = [2], inferred
    # shape=[2,3]"
    provided = ",".join(str(d) for d in shape)
    with pytest.raises(
        mx.base.MXNetError,
        match=rf"Error in operator sm: Shape inconsistent, Provided = \[{provided}\], "
        r"inferred shape=\(2,3\)",
    ):
        _run(np.zeros(shape, dtype=np.float32))


def test_forward_and_batch_gradient_as_mxnet() -> None:
    out, g = _run(_LABEL, normalization="batch")
    # mxnet 1.9.1 (rounded to 7 digits)
    np.testing.assert_allclose(
        out[0],
        [0.050454, 0.064784, 0.083184, 0.106811, 0.137148, 0.050454]
        + [0.064784, 0.083184, 0.106811, 0.137148, 0.050454, 0.064784],
        atol=1e-6,
    )
    np.testing.assert_allclose(
        g[0],
        [0.008409, 0.0107973, 0.0138641, 0.0178018, 0.022858, -0.1582577]
        + [0.0107973, 0.0138641, 0.0178018, 0.022858, 0.008409, 0.0107973],
        atol=1e-6,
    )
    # row 1 reads flattened label entry 1 (class 1), not entry 3; "batch" divides by 6
    np.testing.assert_allclose(g[1, 1], -0.150103, atol=1e-6)


@pytest.mark.parametrize(
    ("kw", "scale", "zero_rows"),
    [
        ({}, 1.0, []),
        ({"normalization": "batch"}, 1 / 6, []),
        ({"normalization": "valid"}, 1 / 6, []),
        ({"normalization": "batch", "grad_scale": 3.0}, 3 / 6, []),
        # entry 4 (not read by any row) equals ignore_label: it only lowers "valid"'s count
        ({"normalization": "valid", "ignore_label": 3.0}, 1 / 5, []),
        ({"normalization": "valid", "ignore_label": 3.0, "use_ignore": True}, 1 / 5, []),
        # entry 0 (row 0's class) is ignored
        ({"normalization": "batch", "ignore_label": 5.0, "use_ignore": True}, 1 / 6, [0]),
        ({"normalization": "valid", "ignore_label": 5.0, "use_ignore": True}, 1 / 5, [0]),
        # entry 3 (7, not read) is ignored: no row is zeroed
        (
            {"normalization": "null", "ignore_label": 7.0, "use_ignore": True, "grad_scale": 0.5},
            0.5,
            [],
        ),
    ],
)
def test_gradient_with_each_normalization(
    kw: dict[str, object], scale: float, zero_rows: list[int]
) -> None:
    out, g = _run(_LABEL, **kw)
    p = _softmax_rows()
    np.testing.assert_allclose(out, p, rtol=1e-5)
    expect = (p - np.eye(12)[[5, 1]]) * scale  # rows read flattened entries 0 and 1
    expect[zero_rows] = 0.0
    np.testing.assert_allclose(g, expect, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    ("label", "kw", "scale"),
    [
        # the unread entries may be anything: mxnet 1.9.1 reads them only to count "valid"
        ([[5, 1, 99], [-3, 100, 2]], {"normalization": "batch"}, 1 / 6),
        ([[5, 1, -1], [-1, -1, 2]], {"normalization": "valid"}, 1 / 3),
        ([[5, 1, -1], [-1, -1, -1]], {"normalization": "valid", "grad_scale": 2.0}, 1.0),
    ],
)
def test_unread_label_entries(label: list[list[int]], kw: dict[str, object], scale: float) -> None:
    _, g = _run(np.array(label, dtype=np.float32), **kw)
    expect = (_softmax_rows() - np.eye(12)[[5, 1]]) * scale
    np.testing.assert_allclose(g, expect, rtol=1e-5, atol=1e-7)


def test_every_label_ignored_gives_zeros() -> None:
    _, g = _run(np.full((2, 3), -1.0, dtype=np.float32), normalization="valid", use_ignore=True)
    np.testing.assert_array_equal(g, np.zeros((2, 12)))  # mxnet 1.9.1: zeros (valid count 1)


def test_a_read_label_out_of_range_raises() -> None:
    # mxnet 1.9.1 gives row 0 no target; the layer refuses a label it cannot one-hot
    with pytest.raises(ValueError, match=r"SoftmaxOutput 'sm': labels must be class indices"):
        _run(np.array([[50, 1, 1], [7, 1, 2]], dtype=np.float32), normalization="batch")


def test_four_axes() -> None:
    x4 = (np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) % 7) / 3
    label = np.arange(1, 13, dtype=np.float32).reshape(2, 3, 2) % 12
    net = mx.sym.SoftmaxOutput(mx.sym.Variable("data"), name="sm", normalization="batch")
    g = mx.nd.zeros((2, 3, 2, 2))
    ex = net.bind(mx.cpu(), {"data": mx.nd.array(x4), "sm_label": mx.nd.array(label)}, {"data": g})
    ex.forward(is_train=True)
    ex.backward()
    # mxnet 1.9.1: row 0 reads class 1, row 1 class 2, divided by 6 * 2 = 12 labels
    np.testing.assert_allclose(
        g.asnumpy().reshape(2, 12)[:, :3],
        [[0.002423, -0.079952, 0.004719], [0.010876, 0.015179, -0.081279]],
        atol=1e-6,
    )
    e = np.exp(x4.reshape(2, 12).astype(np.float64))
    expect = (e / e.sum(axis=1, keepdims=True) - np.eye(12)[[1, 2]]) / 12
    np.testing.assert_allclose(g.asnumpy().reshape(2, 12), expect, rtol=1e-5, atol=1e-7)

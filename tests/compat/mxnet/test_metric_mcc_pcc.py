"""mxnet's correlation metrics ``mx.metric.MCC``, ``PearsonCorrelation`` (``"pearsonr"``) and
``PCC``: the values after each update (local and global), after ``reset_local`` and after a
further update, for both ``average`` modes; the expected numbers were printed by mxnet 1.9.1
on the same inputs (``_batches``), and the closed forms are checked against numpy formulas.
"""

from __future__ import annotations

import math

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def _batches() -> tuple[list, list, list]:
    rs = np.random.RandomState(0)
    binary = []
    for b in range(3):
        n = 5 + b
        lab = (rs.rand(n) > 0.5).astype(np.float32)
        binary.append((lab, rs.rand(n, 2).astype(np.float32)))
    pairs = [(rs.rand(4, 3).astype(np.float32), rs.rand(4, 3).astype(np.float32)) for _ in range(3)]
    classes = [
        (rs.randint(0, 3 + b, size=6).astype(np.float32), rs.rand(6, 3 + b).astype(np.float32))
        for b in range(3)
    ]
    return binary, pairs, classes


def _upd(m: mx.metric.EvalMetric, label: np.ndarray, pred: np.ndarray) -> None:
    m.update([mx.nd.array(label)], [mx.nd.array(pred)])


# mxnet 1.9.1: (get, get_global) after each update, after reset_local, after one more update
MCC_EXPECTED = {
    "macro": (
        [0.6123724356957946, 0.3061862178478973, 0.32197527542968946],
        [0.6123724356957946, 0.3061862178478973, 0.32197527542968946],
        (0.32197527542968946, 0.6123724356957946, 0.3945745654962157),
    ),
    "micro": (
        [0.6123724356957946, 0.375, 0.3779644730092272],
        [0.6123724356957946, 0.375, 0.3779644730092272],
        (0.3779644730092272, 0.6123724356957946, 0.4225771273642583),
    ),
}


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_mcc_sequence_matches_mxnet(average: str) -> None:
    binary, _, _ = _batches()
    m = mx.metric.create("mcc", average=average)
    local, glob, (after_reset_global, again, again_global) = MCC_EXPECTED[average]
    counts = [5, 11, 18] if average == "micro" else [1, 2, 3]  # mxnet 1.9.1
    for i, (lab, pred) in enumerate(binary):
        _upd(m, lab, pred)
        assert m.get()[1] == pytest.approx(local[i], rel=1e-12)
        assert m.get_global()[1] == pytest.approx(glob[i], rel=1e-12)
        assert m.num_inst == counts[i]
    m.reset_local()
    assert math.isnan(m.get()[1])
    assert m.get_global()[1] == pytest.approx(after_reset_global, rel=1e-12)
    _upd(m, *binary[0])
    assert m.get()[1] == pytest.approx(again, rel=1e-12)
    assert m.get_global()[1] == pytest.approx(again_global, rel=1e-12)
    m.reset()
    assert math.isnan(m.get()[1]) and math.isnan(m.get_global()[1])


def test_mcc_formula_and_zero_factors() -> None:
    lab = np.array([1, 0, 1, 1, 0, 0, 1], np.float32)
    pred = np.array([[0.2, 0.8], [0.3, 0.7], [0.9, 0.1], [0.4, 0.6], [0.6, 0.4], [1, 0], [0, 1]])
    m = mx.metric.MCC()
    _upd(m, lab, pred)
    p = pred.argmax(1)
    tp = float(((p == 1) & (lab == 1)).sum())
    tn = float(((p == 0) & (lab == 0)).sum())
    fp = float(((p == 1) & (lab == 0)).sum())
    fn = float(((p == 0) & (lab == 1)).sum())
    want = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert m.get()[1] == pytest.approx(want, rel=1e-12)
    # one class only: the factors that are 0 count as 1, so the value is 0 (mxnet 1.9.1)
    m = mx.metric.MCC()
    _upd(m, np.array([0, 0], np.float32), np.array([[0.9, 0.1], [0.8, 0.2]], np.float32))
    assert m.get()[1] == 0.0
    with pytest.raises(ValueError, match="binary"):
        _upd(mx.metric.MCC(), np.array([0, 1, 2], np.float32), np.ones((3, 2), np.float32))


# mxnet 1.9.1
PEARSON_EXPECTED = {
    "macro": (
        [0.40574106552603795, 0.30444966151012964, 0.017230470929764003],
        [0.40574106552603795, 0.30444966151012964, 0.017230470929764003],
        0.017230470929764003,
    ),
    # micro: get_global reads counters that mxnet 1.9.1 never fills (0.0)
    "micro": (
        [0.4057410655260377, 0.23727532463166187, 0.20132903375052538],
        [0.0, 0.0, 0.0],
        0.0,
    ),
}


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_pearson_sequence_matches_mxnet(average: str) -> None:
    _, pairs, _ = _batches()
    m = mx.metric.PearsonCorrelation(average=average)
    local, glob, after_reset_global = PEARSON_EXPECTED[average]
    for i, (lab, pred) in enumerate(pairs):
        _upd(m, lab, pred)
        assert m.get()[1] == pytest.approx(local[i], rel=1e-12)
        assert m.get_global()[1] == pytest.approx(glob[i], rel=1e-12, abs=1e-300)
    m.reset_local()
    assert math.isnan(m.get()[1])
    assert m.get_global()[1] == pytest.approx(after_reset_global, rel=1e-12, abs=1e-300)


def test_pearson_matches_numpy_corrcoef() -> None:
    _, pairs, _ = _batches()
    lab, pred = pairs[0]
    m = mx.metric.create("pearsonr")
    _upd(m, lab, pred)
    want = np.corrcoef(pred.ravel().astype(np.float64), lab.ravel().astype(np.float64))[0, 1]
    assert m.get()[1] == want
    # micro over one array is the same correlation (Welford's sums)
    m = mx.metric.PearsonCorrelation(average="micro")
    _upd(m, lab, pred)
    assert m.get()[1] == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="Shape of labels"):
        _upd(mx.metric.PearsonCorrelation(), lab, pred[:, :2])


def test_pcc_sequence_matches_mxnet() -> None:
    _, _, classes = _batches()
    m = mx.metric.PCC()
    # mxnet 1.9.1: the value after each update and the size of the confusion matrix
    want = [0.22727272727272727, 0.2970442628930023, 0.1977304860984855]
    for i, (lab, pred) in enumerate(classes):
        _upd(m, lab, pred)
        assert m.get()[1] == pytest.approx(want[i], rel=1e-12)
        assert m.get_global()[1] == pytest.approx(want[i], rel=1e-12)
        assert m.k == 3 + i
    m.reset_local()
    assert math.isnan(m.get()[1])
    assert m.get_global()[1] == pytest.approx(want[-1], rel=1e-12)
    # predictions of the labels' shape are class indices (mxnet 1.9.1: 1.0 and 0.378...)
    _upd(m, classes[0][0], classes[0][0])
    assert m.get()[1] == 1.0
    assert m.get_global()[1] == pytest.approx(0.37821321569690136, rel=1e-12)


def test_pcc_reference_formula_multiclass() -> None:
    cm = np.array([[23, 13, 3], [7, 19, 11], [2, 5, 17]])
    labels, preds = [], []
    for i in range(3):
        for j in range(3):
            labels += [i] * int(cm[i, j])
            preds += [np.eye(3)[j]] * int(cm[i, j])
    m = mx.metric.create("pcc")
    _upd(m, np.array(labels, np.int32), np.array(preds, np.float32))
    c = cm.T.astype(np.float64)  # rows predicted, columns labels
    n, x, y = c.sum(), c.sum(1), c.sum(0)
    want = (np.diag(c) * n - x * y).sum() / math.sqrt((x * (n - x)).sum() * (y * (n - y)).sum())
    assert m.get()[1] == pytest.approx(want, rel=1e-12)
    # binary: the same as MCC
    lab = np.array([0, 1, 1, 0, 1], np.float32)
    pred = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7], [0.1, 0.9]], np.float32)
    pcc, mcc = mx.metric.PCC(), mx.metric.MCC()
    _upd(pcc, lab, pred)
    _upd(mcc, lab, pred)
    assert pcc.get()[1] == pytest.approx(mcc.get()[1], rel=1e-12)


def test_configs_round_trip() -> None:
    for name, kw in (("mcc", {"average": "micro"}), ("pearsonr", {}), ("pcc", {})):
        m = mx.metric.create(name, **kw)
        # mxnet 1.9.1: the configs hold the class name and no averaging option
        assert m.get_config() == {
            "metric": type(m).__name__,
            "name": m.name,
            "output_names": None,
            "label_names": None,
        }
        assert mx.metric.create(m.get_config()).get_config() == m.get_config()

"""mxnet's metrics (``mx.metric``): the values after one and two updates, after
``reset_local`` (global values kept) and ``reset``, for every metric; the expected numbers
were printed by mxnet 1.9.1 on the same inputs (``_inputs``).
"""

from __future__ import annotations

import math

import gradhub_compat.mxnet as mx
import numpy as np
import pytest


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.RandomState(0)
    d = {}
    d["P1"] = rng.rand(6, 3).astype(np.float32)
    d["P1"] /= d["P1"].sum(1, keepdims=True)
    d["L1"] = np.array([0, 2, 1, 1, 0, 2], dtype=np.float32)
    d["P2"] = rng.rand(5, 3).astype(np.float32)
    d["P2"] /= d["P2"].sum(1, keepdims=True)
    d["L2"] = np.array([2, 2, 0, 1, 0], dtype=np.float32)
    d["B1"] = rng.rand(6, 2).astype(np.float32)
    d["LB1"] = np.array([0, 1, 1, 0, 1, 1], np.float32)
    d["B2"] = rng.rand(4, 2).astype(np.float32)
    d["LB2"] = np.array([1, 0, 0, 1], np.float32)
    d["R1"] = rng.randn(6).astype(np.float32)
    d["RL1"] = rng.randn(6).astype(np.float32)
    d["R2"] = rng.randn(3, 2).astype(np.float32)
    d["RL2"] = rng.randn(3, 2).astype(np.float32)
    return d


D = _inputs()
CLS = [(["L1"], ["P1"]), (["L2"], ["P2"])]
BIN = [(["LB1"], ["B1"]), (["LB2"], ["B2"])]
REG = [(["RL1"], ["R1"]), (["RL2"], ["R2"])]


def _run(m: mx.metric.EvalMetric, batches: list) -> list[tuple]:
    out = []
    for labs, preds in batches:
        m.update([mx.nd.array(D[k]) for k in labs], [mx.nd.array(D[k]) for k in preds])
        out.append((m.get()[1], m.get_global()[1]))
    m.reset_local()
    out.append((m.get()[1], m.get_global()[1]))
    m.reset()
    out.append((m.get()[1], m.get_global()[1]))
    return out


def _check(got: list[tuple], first: float, second: float) -> None:
    assert got[0] == pytest.approx((first, first), rel=1e-6)
    assert got[1] == pytest.approx((second, second), rel=1e-6)
    assert math.isnan(got[2][0]) and got[2][1] == pytest.approx(second, rel=1e-6)
    assert math.isnan(got[3][0]) and math.isnan(got[3][1])


# (metric, batches, value after one update, after two) -- mxnet 1.9.1
CASES = [
    (lambda: mx.metric.create("acc"), CLS, 0.5, 0.36363636363636365),
    (
        lambda: mx.metric.create("top_k_accuracy", top_k=2),
        CLS,
        0.8333333333333334,
        0.7272727272727273,
    ),
    (lambda: mx.metric.TopKAccuracy(top_k=3), CLS, 1.0, 1.0),
    (lambda: mx.metric.create("ce"), CLS, 0.8309635321299235, 1.0890577056191184),
    (lambda: mx.metric.NegativeLogLikelihood(), CLS, 0.8309635321299235, 1.0890577056191184),
    (lambda: mx.metric.Perplexity(ignore_label=None), CLS, 2.2955293090161586, 2.9714724932396783),
    (lambda: mx.metric.Perplexity(ignore_label=2), CLS, 2.683447609738244, 3.613936177496325),
    (lambda: mx.metric.F1(), BIN, 0.8571428571428571, 0.6285714285714286),
    (lambda: mx.metric.F1(average="micro"), BIN, 0.8571428571428571, 0.6666666666666666),
    (lambda: mx.metric.create("mae"), REG, 0.4186946451663971, 0.7199535518884659),
    (lambda: mx.metric.MSE(), REG, 0.3441675007343292, 0.8888060003519058),
    (lambda: mx.metric.RMSE(), REG, 0.5866578817367554, 0.8919616341590881),
    (
        lambda: mx.metric.create(lambda lab, p: (float((lab == p.argmax(1)).sum()), len(lab))),
        CLS,
        0.5,
        0.36363636363636365,
    ),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_metric_values_as_mxnet(case: int) -> None:
    make, batches, first, second = CASES[case]
    _check(_run(make(), batches), first, second)


def test_loss_ignores_labels() -> None:
    m = mx.metric.Loss()
    m.update(None, [mx.nd.array(D["R1"])])
    # mxnet 1.9.1
    assert m.get()[1] == pytest.approx(-0.4590721130371094, rel=1e-6)
    m.update(None, mx.nd.array(D["R2"]))
    assert m.get()[1] == pytest.approx(0.035629073778788246, rel=1e-5)
    assert m.get()[1] == pytest.approx((D["R1"].sum() + D["R2"].sum()) / 12, rel=1e-5)


def test_accuracy_independent_formula_and_same_shape_predictions() -> None:
    m = mx.metric.Accuracy()
    m.update([mx.nd.array(D["L1"])], [mx.nd.array(D["P1"].argmax(1))])
    assert m.get()[1] == (D["P1"].argmax(1) == D["L1"]).mean()
    m = mx.metric.Accuracy(axis=0)
    m.update([mx.nd.array([1, 0])], [mx.nd.array([[0.2, 0.9], [0.8, 0.1]])])
    assert m.get()[1] == 1.0


def test_composite_and_names() -> None:
    m = mx.metric.CompositeEvalMetric(["acc", "ce"])
    for labs, preds in CLS:
        m.update([mx.nd.array(D[k]) for k in labs], [mx.nd.array(D[k]) for k in preds])
    names, values = m.get()
    assert names == ["accuracy", "cross-entropy"]
    assert values == pytest.approx([0.36363636363636365, 1.0890577056191184])  # mxnet 1.9.1
    assert m.get_metric(1).name == "cross-entropy"
    assert [n for n, _ in m.get_name_value()] == names
    assert isinstance(mx.metric.create(["acc", "mse"]), mx.metric.CompositeEvalMetric)
    got = [mx.metric.create(n).name for n in ["acc", "accuracy", "ce", "nll_loss", "mae"]]
    assert got == ["accuracy", "accuracy", "cross-entropy", "nll-loss", "mae"]  # mxnet 1.9.1
    assert mx.metric.create("top_k_acc", top_k=5).name == "top_k_accuracy_5"
    acc = mx.metric.Accuracy()
    assert mx.metric.create(acc) is acc


def test_np_wrapper_str_config_update_dict() -> None:
    def myerr(label: np.ndarray, pred: np.ndarray) -> float:
        return float(np.abs(label - pred.argmax(1)).mean())

    m = mx.metric.np(myerr)
    assert m.name == "myerr"
    vals = _run(m, CLS)
    assert vals[1][0] == pytest.approx(0.75)  # mxnet 1.9.1
    assert str(mx.metric.Accuracy()) == "EvalMetric: {'accuracy': nan}"
    assert mx.metric.create("acc").get_config() == {
        "axis": 1,
        "metric": "Accuracy",
        "name": "accuracy",
        "output_names": None,
        "label_names": None,
    }
    m = mx.metric.create("acc")
    m.update_dict({"softmax_label": mx.nd.array(D["L1"])}, {"out": mx.nd.array(D["P1"])})
    assert m.get() == ("accuracy", 0.5)
    with pytest.raises(NotImplementedError, match="cannot be serialized"):
        mx.metric.CustomMetric(myerr).get_config()


def test_errors() -> None:
    with pytest.raises(ValueError, match="is not registered") as e:
        mx.metric.create("nope")
    assert isinstance(e.value, AssertionError)
    with pytest.raises(ValueError, match="does not match shape of predictions"):
        mx.metric.Accuracy().update([mx.nd.array([1]), mx.nd.array([1])], [mx.nd.array([1])])
    with pytest.raises(ValueError, match="only supports binary"):
        mx.metric.F1().update([mx.nd.array([0, 1, 2])], [mx.nd.ones((3, 2))])
    with pytest.raises(ValueError, match="Please use Accuracy"):
        mx.metric.TopKAccuracy(top_k=1)

"""chainer.links in gradhub's chainer layer: Linear, Convolution2D, BatchNormalization (train,
test, finetune), Classifier and F.accuracy; expected values recorded with chainer 7.8.1
(2026-11-25); gradients checked against float64 finite differences."""

from __future__ import annotations

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import optimizers


def test_linear_defaults_match_chainer_initial_values() -> None:
    np.random.seed(0)
    lin = L.Linear(3, 2)
    # chainer 7.8.1 after numpy.random.seed(0): LeCunNormal = N(0, 1/3)
    expected = np.random.RandomState(0).normal(0, np.sqrt(1 / 3), (2, 3)).astype(np.float32)
    np.testing.assert_array_equal(lin.W.array, expected)
    np.testing.assert_array_equal(lin.b.array, np.zeros(2, np.float32))
    assert str(lin) == "Linear(in_size=3, out_size=2, nobias=False)"


def test_linear_deferred_shape_and_n_batch_axes() -> None:
    lin = L.Linear(4)  # Linear(out_size): in_size from the first call
    assert lin.in_size is None and lin.W.array is None
    y = lin(np.ones((2, 3, 5), np.float32))
    assert lin.W.shape == (4, 15) and y.shape == (2, 4)
    lin2 = L.Linear(None, 2, nobias=True)
    y2 = lin2(np.ones((2, 3, 5), np.float32), n_batch_axes=2)
    assert lin2.W.shape == (2, 5) and y2.shape == (2, 3, 2) and lin2.b is None


def test_convolution2d_shapes_and_value() -> None:
    conv = L.Convolution2D(2, 3, ksize=None)  # (out_channels=2, ksize=3), in from the call
    assert conv.in_channels is None and conv.out_channels == 2 and conv.ksize == 3
    x = np.ones((1, 4, 5, 5), np.float32)
    y = conv(x)
    assert conv.W.shape == (2, 4, 3, 3) and y.shape == (1, 2, 3, 3)
    np.testing.assert_allclose(y.array[0, :, 1, 1], conv.W.array.sum(axis=(1, 2, 3)), rtol=1e-5)
    g = L.Convolution2D(4, 6, 3, pad=1, groups=2, initialW=1.0, initial_bias=0.5)
    assert g.W.shape == (6, 2, 3, 3)
    np.testing.assert_allclose(g(x).array[0, :, 2, 2], np.full(6, 18.5))
    with pytest.raises(ValueError, match="divisible by the number of groups"):
        L.Convolution2D(3, 4, 3, groups=2)


def test_batch_normalization_train_test_and_finetune_match_chainer() -> None:
    bn = L.BatchNormalization(2)
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    y = bn(x)
    # chainer 7.8.1
    col = np.array([-1.3416381, -0.4472127, 0.4472127, 1.3416381], np.float32)
    np.testing.assert_allclose(y.array, np.stack([col, col], 1), rtol=1e-6)
    np.testing.assert_allclose(bn.avg_mean, [0.3, 0.4], rtol=1e-6)
    np.testing.assert_allclose(bn.avg_var, [1.5666666, 1.5666666], rtol=1e-6)
    bn(x, finetune=True)
    assert bn.N == 1
    np.testing.assert_allclose(bn.avg_mean, [3.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(bn.avg_var, [6.666667, 6.666667], rtol=1e-6)
    with chainer.using_config("train", False):
        yt = bn(x)
    col = np.array([-1.1618932, -0.38729775, 0.38729775, 1.1618932], np.float32)
    np.testing.assert_allclose(yt.array, np.stack([col, col], 1), rtol=1e-6)
    with pytest.raises(ValueError, match="test argument is not supported anymore"):
        bn(x, test=True)


def test_batch_normalization_gradients_against_finite_differences() -> None:
    rng = np.random.RandomState(0)
    x0 = rng.randn(5, 3, 2).astype(np.float64)
    g0, b0 = rng.rand(3) + 0.5, rng.randn(3)
    w = rng.randn(5, 3, 2)

    def f(xa: np.ndarray, ga: np.ndarray, ba: np.ndarray) -> chainer.Variable:
        y = F.batch_normalization(xa, ga, ba, eps=1e-3)
        return F.sum(y * w)

    x, g, b = (chainer.Variable(a.copy()) for a in (x0, g0, b0))
    f(x, g, b).backward()
    for k, (var, base) in enumerate(((x, x0), (g, g0), (b, b0))):
        num = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            d = np.zeros_like(base)
            d[i] = 1e-6
            args = [x0, g0, b0]
            args[k] = base + d
            hi = f(*args).array
            args[k] = base - d
            lo = f(*args).array
            num[i] = (hi - lo) / 2e-6
        np.testing.assert_allclose(var.grad, num, rtol=1e-5, atol=1e-7)


def test_batch_normalization_axis_and_deferred_size() -> None:
    bn = L.BatchNormalization(axis=(0, 2))
    x = np.random.RandomState(1).randn(4, 3, 5).astype(np.float32)
    y = bn(x)
    assert bn.gamma.shape == (3,) and bn.avg_mean.shape == (3,)
    np.testing.assert_allclose(y.array.mean(axis=(0, 2)), 0, atol=1e-6)
    with pytest.raises(RuntimeError, match="size or axis is required"):
        L.BatchNormalization()


def test_classifier_attributes_and_label_key() -> None:
    pred = L.Linear(2, 3, initialW=np.array([[1, 0], [0, 1], [0, 0]], np.float32))
    model = L.Classifier(pred)
    x = np.array([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0]], np.float32)
    t = np.array([0, 0, 2], np.int32)
    loss = model(x, t)
    assert loss is model.loss
    np.testing.assert_allclose(loss.array, F.softmax_cross_entropy(model.y, t).array, rtol=1e-7)
    assert float(model.accuracy.array) == pytest.approx(1 / 3)
    model.compute_accuracy = False
    model(x, t)
    assert model.accuracy is None
    kw = L.Classifier(pred, label_key="t")
    kw(x, t=t)
    with pytest.raises(ValueError, match='Label key "t" is not found'):
        kw(x, t)
    with pytest.raises(ValueError, match="Label key 5 is out of bounds"):
        L.Classifier(pred, label_key=5)(x, t)
    with pytest.raises(TypeError, match="label_key must be int or str"):
        L.Classifier(pred, label_key=1.0)  # type: ignore[arg-type]


def test_accuracy_matches_chainer() -> None:
    y = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], np.float32)
    acc = F.accuracy(y, np.array([1, -1, 0], np.int32), ignore_label=-1)
    assert acc.array.dtype == np.float32 and float(acc.array) == 0.5  # chainer 7.8.1
    assert float(F.accuracy(y, np.array([1, 0, 1], np.int32)).array) == 1.0
    assert float(F.accuracy(y, np.array([-1, -1, -1]), ignore_label=-1).array) == 0.0
    with pytest.raises(TypeError, match=r"F\.accuracy: y must be floating point and t integer"):
        F.accuracy(y, y)
    with pytest.raises(ValueError, match=r"F\.accuracy: the shapes"):
        F.accuracy(y, np.array([1, 0], np.int32))


def test_from_params_copies_the_arrays() -> None:
    W = np.arange(6, dtype=np.float32).reshape(2, 3)
    lin = L.Linear.from_params(chainer.Variable(W), np.ones(2, np.float32))
    assert (lin.in_size, lin.out_size) == (3, 2) and lin.W.array is not W
    np.testing.assert_array_equal(lin.W.array, W)
    with pytest.raises(ValueError, match="`out_size` does not match the size of `b`"):
        L.Linear.from_params(W, np.ones(3, np.float32))
    Wc = np.ones((4, 1, 3, 3), np.float32)
    conv = L.Convolution2D.from_params(Wc, pad=1, groups=2)
    assert conv.in_channels == 2 and conv.W.shape == (4, 1, 3, 3) and conv.b is not None
    np.testing.assert_array_equal(conv.b.array, 0)


def test_unsupported_training_api_names_the_page() -> None:
    for name in ("LinkHook", "link_hooks"):
        with pytest.raises(NotImplementedError, match=rf"chainer\.{name} .*migration-chainer"):
            getattr(chainer, name)


def test_reporter_collects_the_classifier_values_as_chainer() -> None:
    model = L.Classifier(L.Linear(2, 3))
    x, t = np.ones((2, 2), np.float32), np.array([0, 1], np.int32)
    model(x, t)  # no current reporter: nothing happens
    reporter = chainer.Reporter()
    reporter.add_observers("main", model.namedlinks(skipself=True))
    reporter.add_observer("main", model)
    obs: dict[str, object] = {}
    with reporter.scope(obs):
        loss = model(x, t)
        assert chainer.get_current_reporter() is reporter
        chainer.report({"extra": 1.5})
        chainer.report({"w": model.predictor.W}, model.predictor)
    assert sorted(obs) == ["extra", "main/accuracy", "main/loss", "main/predictor/w"]
    reported = obs["main/loss"]
    assert reported is not loss and reported.array is loss.array  # type: ignore[attr-defined]
    assert reported.creator is None  # type: ignore[attr-defined]  # the graph is not kept
    with pytest.raises(KeyError, match="Given observer is not registered to the reporter"):
        with reporter:
            chainer.report({"a": 1}, object())
    with pytest.raises(IndexError):
        chainer.get_current_reporter()


def test_embed_id_as_chainer() -> None:
    # chainer 7.8.1's values: np.random.seed(3), EmbedID(5, 3, ignore_label=-1), one SGD(0.1)
    # update of sum(e(x) ** 2)
    np.random.seed(3)
    e = L.EmbedID(5, 3, ignore_label=-1)
    assert e.W.array.dtype == np.float32
    np.testing.assert_array_equal(
        e.W.array.ravel()[:4],
        np.array(
            [1.7886284589767456, 0.4365098476409912, 0.09649746865034103, -1.863492727279663],
            np.float32,
        ),
    )
    x = np.array([[0, 4, -1], [2, 2, 1]], np.int32)
    y = e(x)
    assert y.shape == (2, 3, 3)
    np.testing.assert_array_equal(y.array[0, 2], [0.0, 0.0, 0.0])  # the ignored label
    opt = optimizers.SGD(0.1).setup(e)
    opt.update(lambda: F.sum(e(x) ** 2))
    np.testing.assert_array_equal(
        e.W.array.ravel()[[0, 3, 6, 14]],
        np.array(
            [1.4309027194976807, -1.4907941818237305, -0.049644891172647476, 0.040026914328336716],
            np.float32,
        ),
    )
    e2 = L.EmbedID.from_params(np.ones((2, 2), np.float32))
    np.testing.assert_array_equal(e2(np.array([1], np.int32)).array, [[1.0, 1.0]])
    assert str(e) == "EmbedID()"

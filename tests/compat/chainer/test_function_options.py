"""Options of chainer functions beyond the defaults: ``softmax_cross_entropy``'s
``class_weight``, soft targets (``soft_target_loss``), ``ignore_label``, ``reduce``,
``normalize``; ``convolution_2d(cover_all=True)``; ``max_pooling_2d(return_indices=True)``.
Values and gradients recorded from chainer 7.8.1 (2026-11-25); gradients also against float64
finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from gradhub.testing import gradcheck
from gradhub_compat import chainer
from gradhub_compat.chainer import functions as F

_RNG = np.random.RandomState(0)
_X = _RNG.normal(size=(3, 4))
_T = np.array([1, -1, 3])
_CW = np.array([0.5, 2.0, 1.0, 3.0])
_SOFT = np.abs(_RNG.normal(size=(3, 4)))
_SOFT /= _SOFT.sum(1, keepdims=True)


def _loss_and_grad(**kw: object) -> tuple[object, np.ndarray]:
    """The loss and d(sum(loss * [1, 2, ...]))/dx, as the script run on chainer 7.8.1."""
    x = chainer.Variable(_X.copy())
    t = kw.pop("t", _T)
    y = F.softmax_cross_entropy(x, t, **kw)
    if y.ndim:
        weights = chainer.Variable(np.arange(1.0, y.size + 1).reshape(y.shape))
        F.sum(y * weights).backward()
    else:
        y.backward()
    return y.array.tolist(), x.grad.ravel()


_CASES = [  # (options, chainer 7.8.1's loss, its gradient)
    (
        {"class_weight": _CW},
        3.4732347406521247,
        [0.300967637562669, -0.9230537131572719, 0.1372341211366923, 0.4848519544579104]
        + [0.0] * 4
        + [0.17243206231508668, 0.2882478415420737, 0.2208018604234282, -0.6814817642805887],
    ),
    (
        {"class_weight": _CW, "normalize": False},
        2.315489827101416,
        [0.20064509170844597, -0.6153691421048479, 0.09148941409112821, 0.3232346363052736]
        + [0.0] * 4
        + [0.11495470821005778, 0.1921652276947158, 0.14720124028228546, -0.45432117618705914],
    ),
    (
        {"class_weight": _CW, "reduce": "no"},
        [5.129295348034196, 0.0, 1.817174133270053],
        [0.601935275125338, -1.8461074263145438, 0.2744682422733846, 0.9697039089158208]
        + [0.0] * 4
        + [1.03459237389052, 1.7294870492524423, 1.3248111625405692, -4.088890585683532],
    ),
    (
        {"t": np.array([1, 0, 3]), "ignore_label": 3},
        1.5143392503433926,
        [0.1504838187813345, -0.46152685657863596, 0.06861706056834616, 0.2424259772289552]
        + [-0.18562791396027883, 0.018278790556609668, 0.1256006839056719, 0.04174843949799735]
        + [0.0] * 4,
    ),
    (
        {"t": _SOFT},
        1.5310429457017367,
        [-0.05247323526794763, 0.001219711560087618, -0.04337101891355272, 0.09462454262141265]
        + [0.03583515061284951, -0.011671964553397795, 0.047327191366986966]
        + [-0.0714903774264386, -0.13848615654948176, 0.018789466903284886]
        + [-0.010798461142986732, 0.13049515078918364],
    ),
    (
        {"t": _SOFT, "soft_target_loss": "kl-divergence", "reduce": "no"},
        [0.19057085326885528, 0.23844492849015275, 0.6047676109536189],
        [-0.1574197058038429, 0.0036591346802628544, -0.13011305674065815, 0.283873627864238]
        + [0.21501090367709708, -0.07003178732038677, 0.2839631482019218]
        + [-0.42894226455863166, -1.246375408945336, 0.16910520212956398]
        + [-0.0971861502868806, 1.174456357102653],
    ),
    (
        {"t": _SOFT, "soft_target_loss": "kl-divergence"},
        0.3445944642375423,
        None,  # the gradient of the cross-entropy case (the entropy of t is a constant)
    ),
]


@pytest.mark.parametrize(("options", "loss", "grad"), _CASES)
def test_softmax_cross_entropy_matches_chainer(options: dict, loss: object, grad: object) -> None:
    got_loss, got_grad = _loss_and_grad(**dict(options))
    np.testing.assert_allclose(got_loss, loss, rtol=1e-12)
    if grad is None:
        grad = _loss_and_grad(t=_SOFT)[1]
    np.testing.assert_allclose(got_grad, grad, rtol=1e-10, atol=1e-15)


def test_softmax_cross_entropy_spatial_and_float32() -> None:
    rng = np.random.RandomState(0)
    rng.normal(size=(3, 4))
    rng.normal(size=(3, 4))
    x3 = rng.normal(size=(2, 3, 2))
    t3 = np.array([[0, 2], [1, -1]])
    x = chainer.Variable(x3.copy())
    y = F.softmax_cross_entropy(x, t3, class_weight=np.array([1.0, 2.0, 0.5]))
    y.backward()
    np.testing.assert_allclose(y.array, 1.3332148306232074, rtol=1e-12)  # chainer 7.8.1
    np.testing.assert_allclose(
        x.grad.ravel()[:4],
        [-0.12325836500631389, 0.00719591039167586, 0.022725061636980546, 0.025551465881711147],
        rtol=1e-10,
    )
    s3 = np.abs(rng.normal(size=(2, 3, 2)))
    s3 /= s3.sum(1, keepdims=True)
    x = chainer.Variable(x3.copy())
    y = F.softmax_cross_entropy(x, s3)
    np.testing.assert_allclose(y.array, 1.173328689492735, rtol=1e-12)  # chainer 7.8.1
    # float32 scores with float64 class weights stay float32 (chainer 7.8.1: 3.4732347)
    y32 = F.softmax_cross_entropy(_X.astype(np.float32), _T, class_weight=_CW)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32.array, 3.4732347, rtol=1e-6)


def test_softmax_cross_entropy_options_match_finite_differences() -> None:
    t3 = np.array([[0, 2], [1, -1]])
    cw = np.array([1.0, 2.0, 0.5])
    gradcheck(
        lambda v: F.softmax_cross_entropy(v, t3, class_weight=cw),
        [_RNG.normal(size=(2, 3, 2))],
        order=2,
    )
    gradcheck(lambda v: F.softmax_cross_entropy(v, _SOFT, reduce="no"), [_X], order=2)
    gradcheck(
        lambda v: F.softmax_cross_entropy(v, _SOFT, soft_target_loss="kl-divergence"), [_X], order=2
    )


def test_softmax_cross_entropy_errors() -> None:
    x = chainer.Variable(_X)
    # chainer 7.8.1's messages
    with pytest.raises(ValueError, match=r"class_weight.ndim should be 1"):
        F.softmax_cross_entropy(x, _T, class_weight=_CW.reshape(2, 2))
    with pytest.raises(ValueError, match=r"the dtype of class_weight should be 'f'"):
        F.softmax_cross_entropy(x, _T, class_weight=np.array([1, 2, 3, 4]))
    with pytest.raises(ValueError, match=r"class_weight should be a numpy.ndarray or cupy"):
        F.softmax_cross_entropy(x, _T, class_weight=chainer.Variable(_CW))
    with pytest.raises(ValueError, match=r"soft_target_loss must be 'cross-entropy' or 'kl-d"):
        F.softmax_cross_entropy(x, _T, soft_target_loss="x")
    with pytest.raises(ValueError, match=r"class_weight must have shape \(4,\)"):
        F.softmax_cross_entropy(x, _T, class_weight=np.ones(3))
    with pytest.raises(ValueError, match=r"soft targets t \(float labels\) must have x's shape"):
        F.softmax_cross_entropy(x, _SOFT[:, :3])
    # chainer 7.8.1 reads label -1 as the last class unless ignored (its debug mode raises)
    with pytest.raises(ValueError, match=r"0 <= t < x.shape\[1\] \(4\) or t == ignore_label"):
        F.softmax_cross_entropy(x, _T, ignore_label=3)


_CONV_CASES = [  # options, chainer 7.8.1: y.shape, sum(y), sum(gx), sum(gx**2), sum(gW), sum(gb)
    (
        {"stride": 2},
        (2, 3, 3, 3),
        3.067639973323299,
        56.26202132211984,
        24134.92565446542,
        62.276793451808615,
        6.135279946646605,
    ),
    (
        {"stride": (3, 2), "pad": 1},
        (2, 3, 3, 4),
        -14.908612030418704,
        -69.61638391450228,
        17792.034668066208,
        180.88514026366005,
        -29.81722406083741,
    ),
    (
        {"stride": 2, "dilate": 2},
        (2, 3, 2, 2),
        0.5461475227072912,
        11.071759959546618,
        4555.45482357449,
        23.94590344764219,
        1.092295045414584,
    ),
    (
        {"stride": 1},
        (2, 3, 4, 4),
        -10.931280000969334,
        -34.101454447264786,
        96922.08802218593,
        368.77128352672935,
        -21.862560001938647,
    ),
]


@pytest.mark.parametrize("case", _CONV_CASES)
def test_convolution_2d_cover_all_matches_chainer(case: tuple) -> None:
    options, shape, *sums = case
    rng = np.random.RandomState(1)
    x0, w0, b0 = rng.normal(size=(2, 2, 5, 6)), rng.normal(size=(3, 2, 2, 3)), rng.normal(size=3)
    x, w, b = chainer.Variable(x0), chainer.Variable(w0), chainer.Variable(b0)
    y = F.convolution_2d(x, w, b, cover_all=True, **options)
    F.sum(y * y).backward()
    assert y.shape == shape
    got = [y.array.sum(), x.grad.sum(), (x.grad**2).sum(), w.grad.sum(), b.grad.sum()]
    np.testing.assert_allclose(got, sums, rtol=1e-12)
    gradcheck(
        lambda v, u: F.convolution_2d(v, u, cover_all=True, **options), [x0[:1], w0[:2]], order=2
    )


_POOL_CASES = [  # options, chainer 7.8.1's indexes
    ({"ksize": 2}, (1, 2, 3, 3), [2, 2, 2, 2, 1, 2, 0, 1, 0, 3, 3, 2, 2, 2, 2, 0, 1, 0]),
    (
        {"ksize": 3, "stride": 2, "pad": 1},
        (1, 2, 3, 3),
        [7, 7, 7, 1, 5, 3, 1, 1, 4, 8, 8, 6, 2, 2, 7, 1, 1, 1],
    ),
    ({"ksize": 2, "cover_all": False}, (1, 2, 2, 2), [2, 2, 2, 1, 3, 3, 2, 2]),
    (
        {"ksize": (2, 3), "stride": (1, 2)},
        (1, 2, 4, 2),
        [5, 5, 2, 4, 5, 1, 2, 0, 4, 4, 1, 1, 3, 5, 0, 2],
    ),
]


@pytest.mark.parametrize(("options", "shape", "indexes"), _POOL_CASES)
def test_max_pooling_2d_return_indices_matches_chainer(
    options: dict, shape: tuple, indexes: list
) -> None:
    rng = np.random.RandomState(1)
    for size in ((2, 2, 5, 6), (3, 2, 2, 3), (3,)):
        rng.normal(size=size)
    x1 = rng.normal(size=(1, 2, 5, 5))
    x1[0, 0, 0, 1] = x1[0, 0, 0, 0]  # a tie: the first maximum is taken
    x = chainer.Variable(x1)
    y, idx = F.max_pooling_2d(x, return_indices=True, **options)
    assert type(y) is chainer.Variable and type(idx) is np.ndarray
    assert idx.dtype == np.int64 and idx.shape == shape == y.shape
    assert idx.ravel().tolist() == indexes
    np.testing.assert_array_equal(y.array, F.max_pooling_2d(x1, **options).array)

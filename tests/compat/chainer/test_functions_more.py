"""The chainer functions of the category modules of ``gradhub_compat.chainer._functions``
(sequences, metrics, crelu, noise, linear algebra, im2col and unpooling, CRF, CTC, ROI,
normalizations, spatial transformer and the rest) against chainer 7.8.1 and float64 finite
differences.

Every expected number comes from ``data/functions_more_reference.npz``, written by chainer 7.8.1
(``data/make_functions_more_reference.py``, whose docstring says how; the cases are its
``CASES`` and ``ERRORS``): each case's outputs (values, dtypes, shapes), its first derivatives
for fixed upstream gradients and its second derivatives, and the exception chainer raises for
each bad input. The finite-difference tests check the gradients and second derivatives of the
differentiable functions independently of chainer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from compat.chainer.helpers import _reference_script
from gradhub_compat import chainer
from gradhub_compat.chainer.utils.type_check import InvalidType

_DATA = Path(__file__).parent / "data"
_ref = _reference_script("make_functions_more_reference")
CASES = _ref.CASES
ERRORS = _ref.ERRORS
weights = _ref.weights

# chainer 7.8.1
_CHAINER = dict(np.load(_DATA / "functions_more_reference.npz", allow_pickle=False))

# the metrics: chainer's outputs have a creator (an old-style Function without backward),
# gradhub's are constants; neither needs a gradient
_METRICS = {
    "binary_accuracy",
    "binary_accuracy_all_ignored",
    "classification_summary",
    "classification_summary_args",
    "precision",
    "recall",
    "f1_score",
    "r2_score",
    "r2_score_raw",
}

_EXCEPTIONS: dict[str, type[BaseException]] = {
    "InvalidType": InvalidType,
    "ValueError": ValueError,
    "TypeError": TypeError,
    "RuntimeError": RuntimeError,
    "NotImplementedError": NotImplementedError,
    "LinAlgError": np.linalg.LinAlgError,
}


def _check(got: Any, key: str, what: str) -> None:
    want = _CHAINER.get(key)
    if want is None:
        assert got is None or not np.any(np.asarray(got.array)), what
        return
    assert got is not None, what
    a = np.asarray(got.array if isinstance(got, chainer.Variable) else got)
    assert a.dtype == want.dtype, f"{what}: dtype {a.dtype} != {want.dtype}"
    assert a.shape == want.shape, f"{what}: shape {a.shape} != {want.shape}"
    if a.dtype.kind in "iub":
        np.testing.assert_array_equal(a, want, err_msg=what)
    else:
        rtol = 1e-12 if a.dtype == np.float64 else 2e-5
        atol = 1e-12 if a.dtype == np.float64 else 2e-6
        np.testing.assert_allclose(a, want, rtol=rtol, atol=atol, err_msg=what)


def _train(fn: Any) -> Any:
    with chainer.using_config("train", True):
        return fn()


# gradhub's gradient is hand-written (chainer's formula) and refuses to be differentiated again;
# chainer's gives None (the gradient node does not connect to x), a wrong zero
_FIRST_ORDER_ONLY = {"decorrelated_batch_normalization"}
# chainer's gradient is computed from the arrays, not connected to the inputs: its second
# derivatives are None (a wrong zero); gradhub's are the derivatives (checked against finite
# differences below)
_CHAINER_DISCONNECTED = {"local_convolution_2d"}


def _run(name: str, expr: str, inputs: dict[str, str], seed: int | None) -> tuple[Any, dict]:
    vs = {k: chainer.Variable(eval(v, {"np": np})) for k, v in inputs.items()}
    env: dict[str, Any] = {"np": np, "F": F, "TRAIN": _train, **vs}
    if seed is not None:
        np.random.seed(seed)
    with chainer.using_config("train", False):
        y = eval(expr, env)
    return y, vs


@pytest.mark.parametrize(
    ("name", "expr", "inputs", "diff", "seed"), CASES, ids=[c[0] for c in CASES]
)
def test_values_and_gradients_match_chainer(
    name: str, expr: str, inputs: dict[str, str], diff: list[str], seed: int | None
) -> None:
    y, vs = _run(name, expr, inputs, seed)
    assert isinstance(y, tuple) == bool(_CHAINER[f"{name}/tuple"]), name
    ys = list(y) if isinstance(y, tuple) else [y]
    assert len(ys) == int(_CHAINER[f"{name}/n"]), name
    for i, v in enumerate(ys):
        _check(v, f"{name}/y{i}", f"{name} y[{i}]")
        if isinstance(v, chainer.Variable):
            wants_grad = bool(diff) and name not in _METRICS
            assert v.requires_grad == wants_grad or not diff, f"{name} y[{i}].requires_grad"
            if name in _METRICS:
                assert not v.requires_grad and v.creator is None, name
    if not diff:
        return
    xs = [vs[k] for k in diff]
    gys = [chainer.Variable(weights(v.shape, v.dtype, 1)) for v in ys]
    with chainer.using_config("train", False):
        gs = chainer.grad(ys, xs, grad_outputs=gys, enable_double_backprop=True)
    for j, g in enumerate(gs):
        _check(g, f"{name}/g{j}", f"{name} d/d{diff[j]}")
    if f"{name}/gg_error" in _CHAINER or name in _CHAINER_DISCONNECTED:
        return  # (gradhub can: test_gradients_match_finite_differences checks it)
    terms = [F.sum(g * weights(g.shape, g.dtype, 2)) for g in gs if g is not None]
    z = terms[0]
    for t in terms[1:]:
        z = z + t
    if name in _FIRST_ORDER_ONLY:
        with pytest.raises(RuntimeError):
            chainer.grad([z], xs)
        return
    with chainer.using_config("train", False):
        ggs = chainer.grad([z], xs)
    for j, g in enumerate(ggs):
        _check(g, f"{name}/gg{j}", f"{name} second derivative d/d{diff[j]}")


def _zeros(*shape: int, dt: Any = np.float32) -> np.ndarray:
    return np.zeros(shape, dt)


def _eye(n: int) -> np.ndarray:
    return np.eye(n, dtype=np.float32)


# where gradhub checks what chainer leaves to its debug mode or gets wrong (see the docs)
_STRICTER: dict[str, type[BaseException]] = {}
# where gradhub raises another exception than chainer (see the docs): these are chainer's bare
# ``assert`` statements
_OTHER: dict[str, type[BaseException]] = {
    "crf1d_labels": ValueError,
    "ctc_blank_range": ValueError,
    "ctc_x_3d": ValueError,
}


@pytest.mark.parametrize(("name", "expr"), ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input_raises_as_chainer(name: str, expr: str) -> None:
    raised = str(_CHAINER[f"error/{name}"])
    env = {"np": np, "F": F, "Z": _zeros, "E": _eye, "TRAIN": _train}
    if not raised:
        with pytest.raises(_STRICTER[name]):
            eval(expr, env)
        return
    if name in _OTHER:
        with pytest.raises(_OTHER[name]):
            eval(expr, env)
        return
    with pytest.raises(_EXCEPTIONS[raised]):
        eval(expr, env)


# -- independent checks: float64 finite differences ---------------------------------------------

_FD_CASES: list[tuple[str, Any, list[np.ndarray]]] = [
    (
        "pad_sequence",
        lambda a, b: F.pad_sequence([a, b], length=4, padding=2.0),
        [np.linspace(-1, 1, 6).reshape(3, 2), np.linspace(0.5, 2, 2).reshape(1, 2)],
    ),
    (
        "transpose_sequence",
        lambda a, b: F.concat(F.transpose_sequence([a, b]), axis=0),
        [np.linspace(-1, 1, 3), np.linspace(0.5, 2, 2)],
    ),
    (
        "separate",
        lambda x: F.stack(F.separate(x, axis=1)[::-1], axis=0),
        [np.sin(np.arange(6.0)).reshape(2, 3)],
    ),
    (
        "permutate",
        lambda x: F.permutate(x, np.array([1, 2, 0], np.int32), 1, True),
        [np.sin(np.arange(6.0)).reshape(2, 3)],
    ),
    ("crelu", lambda x: F.crelu(x) * F.crelu(x), [np.array([[-1.5, 0.3, 2.0], [0.7, -0.2, 1.1]])]),
    (
        "gaussian",
        lambda m, v: F.gaussian(m, v, eps=np.array([0.5, -1.0, 2.0])) ** 2,
        [np.linspace(-1, 1, 3), np.linspace(-0.5, 0.5, 3)],
    ),
    ("inv", F.inv, [np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, 0.4, 3.0]])]),
    ("batch_inv", F.batch_inv, [np.eye(2) * 2 + np.sin(np.arange(8.0)).reshape(2, 2, 2) * 0.5]),
    ("det", F.det, [np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, 0.4, 3.0]])]),
    ("batch_det", F.batch_det, [np.eye(3) * 2 + np.sin(np.arange(18.0)).reshape(2, 3, 3)]),
    (
        "linear_interpolate",
        lambda p, x, y: F.linear_interpolate(p, x, y) ** 2,
        [np.linspace(0, 1, 3), np.linspace(-1, 1, 3), np.linspace(2, -0.5, 3)],
    ),
    (
        "im2col",
        lambda x: F.im2col(x, (2, 3), stride=(2, 1), pad=(1, 2), dilate=(1, 2), cover_all=True),
        [np.sin(np.arange(20.0)).reshape(1, 1, 4, 5)],
    ),
    (
        "unpooling_nd",
        lambda x: F.unpooling_nd(x, 3, stride=2, pad=1, cover_all=False) ** 2,
        [np.sin(np.arange(12.0)).reshape(1, 2, 2, 3)],
    ),
    (
        "spatial_pyramid_pooling_2d",
        lambda x: F.spatial_pyramid_pooling_2d(x, 2, pooling="max"),
        [np.sin(np.arange(30.0) * 1.3).reshape(1, 1, 5, 6)],
    ),
    (
        "crf1d",
        lambda cost, a, b: F.crf1d(
            cost, [a, b], [np.array([0, 2], np.int32), np.array([1], np.int32)], reduce="no"
        ),
        [
            np.sin(np.arange(9.0) * 0.7).reshape(3, 3),
            np.cos(np.arange(6.0)).reshape(2, 3),
            np.sin(np.arange(3.0) * 1.7).reshape(1, 3),
        ],
    ),
    (
        "connectionist_temporal_classification",
        lambda a, b, c: F.connectionist_temporal_classification(
            [a, b, c],
            np.array([[1, 1], [2, 0]], np.int32),
            0,
            np.array([3, 2], np.int32),
            np.array([2, 1], np.int32),
            reduce="no",
        ),
        [np.sin(np.arange(6.0) * k).reshape(2, 3) for k in (1.0, 2.0, 3.0)],
    ),
    (
        "roi_pooling_2d",
        lambda x: F.roi_pooling_2d(
            x, np.array([[0, 1, 0.6, 5.2, 4], [1, 0, 2, 3.4, 5.9]]), 3, 2, 1.0
        ),
        [np.sin(np.arange(168.0) * 1.3).reshape(2, 2, 6, 7)],
    ),
    (
        "roi_max_pooling_2d",
        lambda x: F.roi_max_pooling_2d(
            x, np.array([[0.6, 1, 4, 5.2], [2, 0, 5.9, 3.4]]), np.array([1, 0], np.int32), 2, 1.0
        ),
        [np.sin(np.arange(168.0) * 1.3).reshape(2, 2, 6, 7)],
    ),
    (
        "roi_average_pooling_2d",
        lambda x: (
            F.roi_average_pooling_2d(
                x,
                np.array([[0.6, 1, 4, 5.2], [2, 0, 5.9, 3.4]]),
                np.array([1, 0], np.int32),
                3,
                1.0,
            )
            ** 2
        ),
        [np.sin(np.arange(84.0) * 1.3).reshape(2, 1, 6, 7)],
    ),
    # rmax=1 and dmax=0 make r = 1 and d = 0, constants whatever x: then the gradient, which
    # holds r and d constant, is the derivative of the function
    (
        "batch_renormalization",
        lambda x, g, b: (
            _train(
                lambda: F.batch_renormalization(
                    x, g, b, 1.0, 0.0, running_mean=np.zeros(3), running_var=np.ones(3)
                )
            )
            ** 2
        ),
        [np.sin(np.arange(12.0) * 1.7).reshape(2, 3, 2), np.linspace(0.5, 1.5, 3), np.ones(3)],
    ),
    (
        "decorrelated_batch_normalization",
        lambda x: F.decorrelated_batch_normalization(x, groups=2),
        [np.sin(np.arange(24.0) * 1.7).reshape(3, 4, 2)],
    ),
    (
        "fixed_decorrelated_batch_normalization",
        lambda x, m, p: F.fixed_decorrelated_batch_normalization(x, m, p, groups=2) ** 2,
        [
            np.sin(np.arange(24.0) * 1.7).reshape(3, 4, 2),
            np.array([[0.1, -0.2], [0.3, 0.0]]),
            np.array([[[1, 0.5], [0.2, 2]], [[1.5, 0], [0.3, 0.7]]]),
        ],
    ),
    (
        "spatial_transformer",
        lambda x, theta: F.spatial_transformer_sampler(
            x, F.spatial_transformer_grid(theta, (3, 4))
        ),
        [
            np.sin(np.arange(40.0) * 1.1).reshape(2, 1, 4, 5),
            # (no sample point on a pixel boundary, where the sampler has a kink)
            np.array(
                [[[0.9, 0.2, 0.07], [-0.3, 1.1, -0.23]], [[1.3, -0.1, 0.05], [0.4, 0.8, 0.3]]]
            ),
        ],
    ),
    (
        "cross_covariance",
        lambda y, z: F.cross_covariance(y, z),
        [np.sin(np.arange(12.0)).reshape(4, 3), np.cos(np.arange(8.0)).reshape(4, 2)],
    ),
    ("decov", lambda h: F.decov(h, reduce="no") ** 2, [np.sin(np.arange(12.0)).reshape(4, 3)]),
    (
        "fft",
        lambda r, i: F.concat(F.ifft(F.fft((r * r, i))), axis=0),
        [np.sin(np.arange(8.0)).reshape(2, 4), np.cos(np.arange(8.0)).reshape(2, 4)],
    ),
    (
        "shift",
        lambda x: F.shift(x, ksize=(3, 1), dilate=(2, -1)) ** 2,
        [np.sin(np.arange(36.0)).reshape(1, 4, 3, 3)],
    ),
    (
        "simplified_dropconnect",
        lambda x, w, b: (
            F.simplified_dropconnect(x, w, b, mask=np.arange(24).reshape(2, 4, 3) % 3 > 0) ** 2
        ),
        [np.sin(np.arange(6.0)).reshape(2, 3), np.cos(np.arange(12.0)).reshape(4, 3), np.ones(4)],
    ),
    (
        "local_convolution_2d",
        lambda x, w, b: F.local_convolution_2d(x, w, b, stride=(2, 1)) ** 2,
        [
            np.sin(np.arange(50.0)).reshape(1, 2, 5, 5),
            np.cos(np.arange(144.0)).reshape(3, 2, 2, 2, 2, 3),
            np.arange(12.0).reshape(3, 2, 2),
        ],
    ),
    (
        "black_out",
        lambda x, w: F.black_out(
            x, np.array([0, 3], np.int32), w, np.array([[1, 2], [4, 1]], np.int32), reduce="no"
        ),
        [np.sin(np.arange(6.0)).reshape(2, 3), np.cos(np.arange(15.0)).reshape(5, 3)],
    ),
    (
        "tree_lstm",
        lambda c1, c2, x: F.concat(F.tree_lstm(c1, c2, x), axis=0),
        [
            np.sin(np.arange(6.0)).reshape(2, 3),
            np.cos(np.arange(6.0)).reshape(2, 3),
            np.sin(np.arange(30.0) * 0.7).reshape(2, 15),
        ],
    ),
    (
        "discriminative_margin_based_clustering_loss",
        lambda e: F.stack(
            F.discriminative_margin_based_clustering_loss(
                e, np.array([[[1, 1, 2], [0, 3, 2]]], np.int32), 0.2, 0.8, 3
            )
        ),
        [np.sin(np.arange(18.0) * 0.9).reshape(1, 3, 2, 3)],
    ),
    (
        "negative_sampling",
        lambda x, w: F.negative_sampling(
            x,
            np.array([3, 1], np.int32),
            w,
            lambda s: (np.arange(s[0] * s[1]).reshape(s) % 5).astype(np.int32),
            3,
            reduce="no",
        ),
        [np.sin(np.arange(6.0)).reshape(2, 3), np.cos(np.arange(15.0)).reshape(5, 3)],
    ),
    ("as_strided", lambda x: F.as_strided(x, (2, 3), (1, 2), 1) ** 2, [np.sin(np.arange(8.0))]),
    # chainer's gradient of cholesky is the symmetrized one: differentiate a function of the
    # symmetric part, so the finite differences see the same derivative
    (
        "cholesky",
        lambda a: F.cholesky((a + a.T) * 0.5),
        [np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])],
    ),
]


def _scalar(fn: Any, xs: list[np.ndarray], w: np.ndarray) -> float:
    with chainer.no_backprop_mode():
        y = fn(*[chainer.Variable(x.copy()) for x in xs])
    return float(np.sum(np.asarray(y.array) * w))


def _numeric(f: Any, xs: list[np.ndarray], eps: float = 1e-6) -> list[np.ndarray]:
    out = []
    for i, x in enumerate(xs):
        g = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            plus = [a.copy() for a in xs]
            minus = [a.copy() for a in xs]
            plus[i][k] += eps
            minus[i][k] -= eps
            g[k] = (f(plus) - f(minus)) / (2 * eps)
        out.append(g)
    return out


@pytest.mark.parametrize(("name", "fn", "xs"), _FD_CASES, ids=[c[0] for c in _FD_CASES])
def test_gradients_match_finite_differences(name: str, fn: Any, xs: list[np.ndarray]) -> None:
    vs = [chainer.Variable(x.copy()) for x in xs]
    y = fn(*vs)
    w = weights(y.shape, np.float64, 1)
    gs = chainer.grad([y], vs, grad_outputs=[chainer.Variable(w)], enable_double_backprop=True)
    want = _numeric(lambda a: _scalar(fn, a, w), xs)
    for g, n in zip(gs, want, strict=True):
        np.testing.assert_allclose(g.array, n, rtol=1e-6, atol=1e-7, err_msg=name)
    if name in _FIRST_ORDER_ONLY:
        return
    # second derivatives: the gradient of sum(g * w2), against differences of the gradient
    w2 = [weights(x.shape, np.float64, 2) for x in xs]

    def first(a: list[np.ndarray]) -> float:
        us = [chainer.Variable(x.copy()) for x in a]
        gg = chainer.grad([fn(*us)], us, grad_outputs=[chainer.Variable(w)])
        return float(sum(np.sum(g.array * c) for g, c in zip(gg, w2, strict=True)))

    z = F.sum(gs[0] * w2[0])
    for g, c in zip(gs[1:], w2[1:], strict=True):
        z = z + F.sum(g * c)
    ggs = chainer.grad([z], vs)
    want2 = _numeric(first, xs, eps=1e-5)
    for g, n in zip(ggs, want2, strict=True):
        got = np.zeros_like(n) if g is None else g.array
        np.testing.assert_allclose(got, n, rtol=1e-5, atol=1e-6, err_msg=f"{name} (second)")


# -- behaviours ---------------------------------------------------------------------------------


def test_gaussian_and_gumbel_softmax_draw_from_numpys_generator() -> None:
    m = np.zeros(3, np.float32)
    np.random.seed(11)
    y, eps = F.gaussian(m, m, return_eps=True)
    np.random.seed(11)
    assert eps.dtype == np.float32
    np.testing.assert_array_equal(eps, np.random.standard_normal(3).astype(np.float32))
    np.testing.assert_array_equal(y.array, eps)
    np.random.seed(2)
    g = np.random.gumbel(size=(1, 3)).astype(np.float32)
    np.random.seed(2)
    s = F.gumbel_softmax(np.zeros((1, 3), np.float32), tau=0.5)
    want = np.exp(g / np.float32(0.5)) / np.exp(g / np.float32(0.5)).sum()
    np.testing.assert_allclose(s.array, want, rtol=1e-6)
    one = F.gumbel_softmax(np.zeros((), np.float32))
    assert one.array == 1.0 and not one.requires_grad


def test_forget_wraps_arrays_and_returns_one_variable() -> None:
    x = np.array([1.0, 2.0])
    y = F.forget(lambda a: a * 2, x)
    assert isinstance(y, chainer.Variable) and y.requires_grad
    assert y.array.tolist() == [2.0, 4.0]
    ys = F.forget(lambda a: (a, a * 3), x)
    assert isinstance(ys, tuple) and len(ys) == 2
    assert ys[1].array.tolist() == [3.0, 6.0]


def test_permutate_refuses_a_non_permutation() -> None:
    with pytest.raises(ValueError, match="not a permutation"):
        F.permutate(np.zeros(3, np.float32), np.array([0, 0, 1], np.int32))
    x = chainer.Variable(np.arange(6.0).reshape(2, 3))
    y = F.permutate(x, np.array([2, 0, 1], np.int32), axis=-1)
    assert y.array.tolist() == [[2.0, 0.0, 1.0], [5.0, 3.0, 4.0]]


def test_classification_summary_label_num_too_small() -> None:
    y = np.array([[0.1, 0.9], [0.8, 0.2]], np.float32)
    with pytest.raises(ValueError, match="label_num"):
        F.classification_summary(y, np.array([1, 3], np.int32), label_num=2)


def test_fixed_batch_renormalization_is_deprecated_fixed_batch_normalization() -> None:
    x = np.sin(np.arange(12.0)).reshape(4, 3).astype(np.float32)
    g, b = np.linspace(0.5, 1.5, 3).astype(np.float32), np.ones(3, np.float32)
    m, v = np.full(3, 0.1, np.float32), np.full(3, 2.0, np.float32)
    with pytest.warns(DeprecationWarning, match="fixed_batch_renormalization is deprecated"):
        y = F.fixed_batch_renormalization(x, g, b, m, v, eps=1e-3)
    want = (x - m) / np.sqrt(v + np.float32(1e-3)) * g + b
    np.testing.assert_allclose(y.array, want, rtol=1e-6)


def test_batch_renormalization_needs_training_mode_and_statistics() -> None:
    x, one = np.ones((2, 1), np.float32), np.ones(1, np.float32)
    with chainer.using_config("train", False), pytest.raises(RuntimeError, match="training mode"):
        F.batch_renormalization(x, one, one, 1, 0, running_mean=one, running_var=one)
    with pytest.raises(TypeError, match="running_var is required"):
        _train(lambda: F.batch_renormalization(x, one, one, 1, 0, running_mean=one))


def test_crelu_gradient_at_zero_is_zero() -> None:
    # chainer 7.8.1: gy_former * (x > 0) - gy_latter * (x < 0), 0 at x = 0
    x = chainer.Variable(np.array([[0.0, 1.0]], np.float32))
    (g,) = chainer.grad(
        [F.crelu(x)], [x], grad_outputs=[chainer.Variable(np.ones((1, 4), np.float32))]
    )
    assert g.array.tolist() == [[0.0, 1.0]]


def test_sparse_matmul_is_refused_naming_the_docs() -> None:
    with pytest.raises(NotImplementedError, match=r"migration-chainer\.md"):
        F.sparse_matmul(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32))


def test_det_of_float16_is_computed_in_float32() -> None:
    a = np.array([[1.5, 0.25], [0.5, 2.0]], np.float16)
    d = F.det(a)
    assert d.dtype == np.float16 and d.shape == ()
    assert float(d.array) == float(np.float16(np.linalg.det(a.astype(np.float32))))
    i = F.inv(a)
    assert i.dtype == np.float16

"""The chainer links BatchRenormalization, DecorrelatedBatchNormalization, LocalConvolution2D,
MLPConvolution2D, SimplifiedDropconnect, Swish, DeformableConvolution2D, BlackOut and CRF1d,
and the functions F.deformable_convolution_2d_sampler and F.add, against chainer 7.8.1 and
float64 finite differences.

Every expected number comes from ``data/links_more2_reference.npz``, written by chainer 7.8.1
(``data/make_links_more2_reference.py``, whose docstring says how; the cases are its ``CASES``
and ``ERRORS``, which run unchanged here): initial parameters (after the same
``numpy.random.seed``), parameter names, outputs, the gradients of the inputs and of every
parameter, running statistics, the entries ``save_npz`` writes, and the exception chainer
raises for each bad input. The finite-difference tests check the gradients (and the second
derivatives of the deformable sampler) independently of chainer.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from compat.chainer.helpers import _check_fd, _numeric, _reference_script
from gradhub_compat import chainer
from gradhub_compat.chainer.utils.type_check import InvalidType

_DATA = Path(__file__).parent / "data"
_ref = _reference_script("make_links_more2_reference")
CASES = _ref.CASES
ERRORS = _ref.ERRORS

# chainer 7.8.1
_CHAINER = dict(np.load(_DATA / "links_more2_reference.npz", allow_pickle=False))

_EXCEPTIONS: dict[str, type[BaseException]] = {
    "InvalidType": InvalidType,
    "ValueError": ValueError,
    "TypeError": TypeError,
    "RuntimeError": RuntimeError,
}


def _expected(name: str) -> dict[str, np.ndarray]:
    prefix = f"{name}/"
    return {k[len(prefix) :]: v for k, v in _CHAINER.items() if k.startswith(prefix)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_chainer(name: str) -> None:
    got = CASES[name](chainer, F, L)
    expected = _expected(name)
    assert sorted(got) == sorted(expected)
    for key, e in expected.items():
        a = np.asarray(got[key])
        assert a.shape == e.shape, key
        if key.startswith("npz/N") or key == "N" or key == "N_restarted":
            assert a.dtype.kind == e.dtype.kind == "i" and int(a) == int(e), key
            continue
        assert a.dtype == e.dtype, key
        if e.dtype.kind == "f":
            rtol, atol = (1e-10, 1e-12) if e.dtype == np.float64 else (2e-5, 2e-6)
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"{name}: {key}")
        else:
            np.testing.assert_array_equal(a, e, err_msg=f"{name}: {key}")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_matches_chainer(name: str) -> None:
    expected = str(_CHAINER[f"error/{name}"])
    assert expected
    with pytest.raises(_EXCEPTIONS[expected]):
        ERRORS[name](chainer, F, L)


# -- finite differences (float64) ------------------------------------------------------------


def _r64(shape: Any, seed: int, scale: float = 1.0) -> np.ndarray:
    return np.random.RandomState(seed).uniform(-1, 1, shape) * scale


class _Call(chainer.Chain):
    """``link(*xs, **kwargs)`` as a link of the inputs only (for ``_check_fd``)."""

    def __init__(self, link: Any, **kwargs: Any) -> None:
        super().__init__()
        self.kwargs = kwargs
        with self.init_scope():
            self.link = link

    def forward(self, *xs: Any) -> Any:
        return self.link(*xs, **self.kwargs)


def _fd_links() -> dict[str, Callable[[], tuple[Any, list[np.ndarray]]]]:
    def local_conv() -> tuple[Any, list[np.ndarray]]:
        np.random.seed(0)
        return L.LocalConvolution2D(2, 2, (3, 4), 2), [_r64((2, 2, 3, 4), 1)]

    def mlp_conv() -> tuple[Any, list[np.ndarray]]:
        np.random.seed(1)
        link = L.MLPConvolution2D(2, (3, 2), 2, pad=1, activation=F.tanh)
        return link, [_r64((1, 2, 2, 3), 2)]

    def dropconnect() -> tuple[Any, list[np.ndarray]]:
        np.random.seed(2)
        mask = np.random.RandomState(3).uniform(0, 1, (2, 3, 4)) > 0.4
        return _Call(L.SimplifiedDropconnect(4, 3), mask=mask), [_r64((2, 4), 4)]

    def swish() -> tuple[Any, list[np.ndarray]]:
        link = L.Swish((3,), beta_init=0.7)
        return link, [_r64((2, 3, 2), 5, 3.0)]

    def deformable() -> tuple[Any, list[np.ndarray]]:
        np.random.seed(6)
        link = L.DeformableConvolution2D(
            2, 2, 2, stride=(1, 2), pad=1, deform_initialW=chainer.initializers.Normal(0.5)
        )
        return link, [_r64((1, 2, 3, 4), 7, 2.0)]

    def batch_renorm() -> tuple[Any, list[np.ndarray]]:
        # rmax=1, dmax=0 (chainer's defaults): r = 1 and d = 0, batch normalization
        link = L.BatchRenormalization(3, dtype=np.float64)
        link.gamma.array[...] = [1.0, -0.5, 2.0]
        return link, [_r64((4, 3), 8, 2.0)]

    def decorrelated() -> tuple[Any, list[np.ndarray]]:
        return L.DecorrelatedBatchNormalization(4, groups=2, dtype=np.float64), [
            _r64((5, 4, 2), 9, 2.0)
        ]

    def black_out() -> tuple[Any, list[np.ndarray]]:
        link = L.BlackOut(3, [1, 2, 3, 4], 2)
        link.W.array[...] = _r64((4, 3), 10)
        link.sample_data = np.array([[1, 2], [3, 0], [2, 2]], np.int32)
        return _Call(link, t=np.array([0, 1, 3], np.int32)), [_r64((3, 3), 11)]

    return {
        "local_convolution_2d": local_conv,
        "mlp_convolution_2d": mlp_conv,
        "simplified_dropconnect": dropconnect,
        "swish": swish,
        "deformable_convolution_2d": deformable,
        "batch_renormalization": batch_renorm,
        "decorrelated_batch_normalization": decorrelated,
        "black_out": black_out,
    }


@pytest.mark.parametrize("name", sorted(_fd_links()))
def test_link_gradients_match_finite_differences(name: str) -> None:
    link, arrays = _fd_links()[name]()
    _check_fd(link, *arrays)


def test_crf1d_gradients_match_finite_differences() -> None:
    link = L.CRF1d(3)
    link.cost.array = _r64((3, 3), 12)
    xs = [_r64((n, 3), 13 + n, 2.0) for n in (3, 1, 2)]
    ys = [np.array([0, 2, 1][:n], np.int32) for n in (3, 1, 2)]
    vs = [chainer.Variable(x) for x in xs]
    r = _r64((3,), 20)
    link.cleargrads()
    F.sum(link(vs, ys, reduce="no", transpose=True) * r).backward()

    def f() -> float:
        return float(np.sum(link(xs, ys, reduce="no", transpose=True).array * r))

    for arr, grad in [(v.array, v.grad) for v in vs] + [(link.cost.array, link.cost.grad)]:
        np.testing.assert_allclose(grad, _numeric(f, arr), rtol=1e-6, atol=1e-8)


def _sampler_inputs() -> list[np.ndarray]:
    return [
        _r64((1, 2, 3, 4), 30, 2.0),  # x
        _r64((1, 8, 3, 3), 31, 1.7),  # offset (some samples outside)
        _r64((2, 2, 2, 2), 32),  # W
        _r64((2,), 33),  # b
    ]


def _sampler(x: Any, offset: Any, W: Any, b: Any) -> Any:
    return F.deformable_convolution_2d_sampler(x, offset, W, b, stride=(1, 2), pad=(1, 1))


def test_deformable_sampler_gradients_match_finite_differences() -> None:
    arrays = _sampler_inputs()
    vs = [chainer.Variable(a) for a in arrays]
    y = _sampler(*vs)
    r = _r64(y.shape, 34)
    F.sum(y * r).backward()

    def f() -> float:
        return float(np.sum(_sampler(*arrays).array * r))

    for arr, v in zip(arrays, vs, strict=True):
        np.testing.assert_allclose(v.grad, _numeric(f, arr), rtol=1e-6, atol=1e-8)


def test_deformable_sampler_second_derivatives_match_finite_differences() -> None:
    arrays = _sampler_inputs()
    y0 = _sampler(*arrays)
    r = _r64(y0.shape, 35)
    r2 = [_r64(a.shape, 36 + i) for i, a in enumerate(arrays)]

    def first(arrs: list[np.ndarray]) -> tuple[list[Any], list[Any]]:
        vs = [chainer.Variable(a) for a in arrs]
        gs = chainer.grad([F.sum(_sampler(*vs) * r)], vs, enable_double_backprop=True)
        return vs, gs

    vs, gs = first(arrays)
    total = sum(F.sum(g * w) for g, w in zip(gs, r2, strict=True))
    vs_grads = chainer.grad([total], vs)

    def f() -> float:
        _, g = first(arrays)
        return float(sum(np.sum(gi.array * w) for gi, w in zip(g, r2, strict=True)))

    for arr, gg in zip(arrays, vs_grads, strict=True):
        got = np.zeros_like(arr) if gg is None else gg.array  # (None: b's, no dependence)
        np.testing.assert_allclose(got, _numeric(f, arr), rtol=1e-5, atol=1e-7)


def test_add_gradients_match_finite_differences() -> None:
    arrays = [_r64((2, 3), 40), _r64((3,), 41), _r64((2, 1), 42)]
    vs = [chainer.Variable(a) for a in arrays]
    r = _r64((2, 3), 43)
    F.sum(F.add(*vs) * r).backward()
    for v, a in zip(vs, arrays, strict=True):
        np.testing.assert_allclose(v.grad, _numeric(lambda: float(np.sum(sum(arrays) * r)), a))


# -- behaviour -------------------------------------------------------------------------------


def test_decorrelated_batch_normalization_refuses_double_backward() -> None:
    link = L.DecorrelatedBatchNormalization(2, groups=1)
    x = chainer.Variable(_r64((4, 2), 50).astype(np.float32))
    (gx,) = chainer.grad(
        [F.sum(link(x) * _r64((4, 2), 51).astype(np.float32))], [x], enable_double_backprop=True
    )
    with pytest.raises(RuntimeError, match="first-order-only"):
        chainer.grad([F.sum(gx * gx)], [x])


def test_batch_renormalization_under_forget_updates_the_statistics_once() -> None:
    x = _r64((4, 2), 52, 2.0).astype(np.float32)
    plain = L.BatchRenormalization(2, rmax=2.0, dmax=0.5)
    plain.avg_var[...] = [0.5, 3.0]
    forgotten = plain.copy("copy")
    xv = chainer.Variable(x)
    F.sum(plain(xv) * x).backward()
    xf = chainer.Variable(x)
    F.sum(F.forget(forgotten, xf) * x).backward()
    np.testing.assert_allclose(forgotten.avg_mean, plain.avg_mean, rtol=1e-6)
    np.testing.assert_allclose(forgotten.avg_var, plain.avg_var, rtol=1e-6)
    np.testing.assert_allclose(xf.grad, xv.grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(forgotten.gamma.grad, plain.gamma.grad, rtol=1e-5, atol=1e-6)


def test_save_and_load_npz_round_trip_with_chainer_entries() -> None:
    # the entries chainer 7.8.1 wrote for the case's links load into fresh links
    for name, make in [
        ("batch_renormalization", lambda: L.BatchRenormalization(3)),
        ("decorrelated_batch_normalization", lambda: L.DecorrelatedBatchNormalization(4, 2)),
        ("deformable_convolution_2d", lambda: L.DeformableConvolution2D(2, 3, 3)),
        ("mlp_convolution_2d", lambda: L.MLPConvolution2D(3, (4, 2, 3), 2)),
        ("crf1d", lambda: L.CRF1d(3)),
    ]:
        exp = _expected(name)
        entries = {k[len("npz/") :]: v for k, v in exp.items() if k.startswith("npz/")}
        buf = io.BytesIO()
        np.savez(buf, **entries)  # type: ignore[arg-type]
        buf.seek(0)
        link = make()
        chainer.serializers.load_npz(buf, link)
        out = io.BytesIO()
        chainer.serializers.save_npz(out, link)
        out.seek(0)
        back = dict(np.load(out))
        assert sorted(back) == sorted(entries), name
        for k, v in entries.items():
            np.testing.assert_array_equal(back[k], v, err_msg=f"{name}: {k}")


def test_decorrelated_batch_normalization_loads_chainer_older_statistics() -> None:
    for groups in (1, 2):
        buf = io.BytesIO()
        np.savez(
            buf,
            avg_mean=np.array([0.5, -1.0], np.float32),
            avg_projection=np.array([[2.0, 0.1], [0.1, 3.0]], np.float32),
            N=np.array(3),
        )
        buf.seek(0)
        link = L.DecorrelatedBatchNormalization(2 * groups, groups=groups)
        if groups == 1:
            chainer.serializers.load_npz(buf, link)
        else:
            with pytest.warns(UserWarning, match="old DecorrelatedBatchNormalization"):
                chainer.serializers.load_npz(buf, link)
        assert link.avg_mean.shape == (groups, 2)
        np.testing.assert_array_equal(link.avg_mean[-1], [0.5, -1.0])
        np.testing.assert_array_equal(
            link.avg_projection[-1], np.array([[2.0, 0.1], [0.1, 3.0]], np.float32)
        )
        assert link.N == 3


def test_module_paths_and_names() -> None:
    basic_math = importlib.import_module("gradhub_compat.chainer.functions.math.basic_math")
    sampler = importlib.import_module(
        "gradhub_compat.chainer.functions.connection.deformable_convolution_2d_sampler"
    )
    assert basic_math.add is F.add
    assert sampler.deformable_convolution_2d_sampler is F.deformable_convolution_2d_sampler
    for name in (
        "BatchRenormalization",
        "DecorrelatedBatchNormalization",
        "LocalConvolution2D",
        "MLPConvolution2D",
        "SimplifiedDropconnect",
        "Swish",
        "DeformableConvolution2D",
        "BlackOut",
        "CRF1d",
    ):
        assert name in L.__all__ and isinstance(getattr(L, name), type)
    assert "add" in F.__all__ and "deformable_convolution_2d_sampler" in F.__all__


def test_add_argument_errors() -> None:
    a = np.ones(2, np.float32)
    with pytest.raises(IndexError):
        F.add()
    with pytest.raises(AttributeError):
        F.add(2.0, a)
    with pytest.raises(TypeError, match="Value must be a scalar"):
        F.add(a, [1.0, 2.0])


def test_deformable_sampler_refuses_mixed_dtypes() -> None:
    x = np.ones((1, 1, 3, 3), np.float32)
    with pytest.raises(InvalidType, match=r"offset\.dtype == x\.dtype"):
        F.deformable_convolution_2d_sampler(x, np.zeros((1, 2, 3, 3)), np.ones((1, 1, 1, 1)))


def test_mlp_convolution_2d_unknown_keyword() -> None:
    with pytest.raises(TypeError, match="unexpected keyword"):
        L.MLPConvolution2D(1, (2,), 1, initialW=1.0)

"""``F.min_max_quantize``, ``F.inq_affine``, ``F.inq_convolution``, ``F.fused_convolution`` and
``PF.min_max_quantize``, ``PF.inq_affine``, ``PF.inq_convolution`` against nnabla 1.39 (its
values written by data/make_quantization_inq_reference.py in
data/quantization_inq_reference.npz): values, the arrays updated in place at each execution,
straight-through gradients, parameters; finite differences where the function is smooth; bad
inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gradhub as gh
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub.testing import gradcheck
from gradhub_compat.nnabla._inq import mt19937_bernoulli

_REF = np.load(Path(__file__).parent / "data" / "quantization_inq_reference.npz")


def _cases(fn: str) -> list[int]:
    return sorted(
        {
            int(k.split("/")[1])
            for k in _REF.files
            if k.startswith(fn + "/") and k.split("/")[1].isdigit()
        }
    )


def _kw(fn: str, k: int) -> dict[str, Any]:
    return dict(json.loads(str(_REF[f"{fn}/{k}/kwargs"])))


def _v(a: Any, need_grad: bool = False) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(a, np.float32), need_grad=need_grad)


def test_reference_is_nnabla_1_39() -> None:
    assert str(_REF["nnabla_version"]).startswith("1.39")


# -- min_max_quantize ---------------------------------------------------------------------------


@pytest.mark.parametrize("k", _cases("min_max_quantize"))
def test_min_max_quantize_matches_nnabla(k: int) -> None:
    p = f"min_max_quantize/{k}"
    x = _v(_REF[f"{p}/x"], True)
    r = [_v(_REF[f"{p}/{n}"], n.startswith("qr")) for n in ("qr_min", "qr_max", "ql_min", "ql_max")]
    y = F.min_max_quantize(x, *r, **_kw("min_max_quantize", k))
    assert y.parent.name == "MinMaxQuantize"
    np.testing.assert_array_equal(r[0].d, np.float32(_REF[f"{p}/qr_min"]))  # (not executed)
    for s in range(int(_REF[f"{p}/steps"])):
        y.forward()
        for name, got in (("y", y.d), ("qr_min", r[0].d), ("qr_max", r[1].d)):
            np.testing.assert_allclose(got, _REF[f"{p}/{name}/{s}"], rtol=0, atol=1e-6)
    for v in (x, r[0], r[1]):
        v.g = 0
    y.backward(np.arange(1, 9, dtype=np.float32).reshape(2, 4))
    for name, got in (("gx", x.g), ("g_qr_min", r[0].g), ("g_qr_max", r[1].g)):
        np.testing.assert_array_equal(got, _REF[f"{p}/{name}"])


def test_min_max_quantize_updates_ranges_at_execution_only() -> None:
    x = _v([[-2.0, 0.5, 3.0]])
    lo, hi, qlo, qhi = _v([[-1.0]]), _v([[1.0]]), _v([[0.0]]), _v([[15.0]])
    y = F.min_max_quantize(x, lo, hi, qlo, qhi, decay=0.5, x_min_max=True, ema=True)
    assert (lo.d.item(), hi.d.item()) == (-1.0, 1.0)  # built, not executed (as nnabla)
    y.forward()
    assert (lo.d.item(), hi.d.item()) == (-1.5, 2.0)
    nn.set_auto_forward(True)
    F.min_max_quantize(x, lo, hi, qlo, qhi, decay=0.5, x_min_max=True, ema=True)
    assert (lo.d.item(), hi.d.item()) == (-1.75, 2.5)  # executed when built
    assert F.min_max_quantize(x, lo, hi, qlo, qhi, quantize=False) is x  # (as nnabla)
    q = F.min_max_quantize(x.data, lo.data, hi.data, qlo.data, qhi.data, 0.5, True, True)
    assert isinstance(q, nn.NdArray) and lo.d.item() == -1.875  # NdArrays: at once


def test_min_max_quantize_rules_agree_and_second_order_is_zero() -> None:
    rng = np.random.default_rng(0)
    x = gh.Variable(rng.standard_normal((3, 4)), need_grad=True)
    lo = gh.Variable(np.full((1, 4), -0.5), need_grad=True)
    hi = gh.Variable(np.full((1, 4), 0.8), need_grad=True)
    ql = gh.Variable(np.zeros((1, 4)), need_grad=False)
    qh = gh.Variable(np.full((1, 4), 5.0), need_grad=False)
    gy = rng.standard_normal((3, 4))
    y0 = F.min_max_quantize(x, lo, hi, ql, qh)
    fast = gh.grad([y0], [x, lo, hi], [gy], create_graph=False)
    y = F.min_max_quantize(x, lo, hi, ql, qh)
    slow = gh.grad([y], [x, lo, hi], [gh.Variable(gy)], create_graph=True)
    for a, b in zip(fast, slow):
        assert a is not None and b is not None
        np.testing.assert_array_equal(a.d, b.d)
    gx = slow[0]
    assert gx is not None
    (gg,) = gh.grad([F.sum(gx * gx)], [x])  # (unreachable: zeros)
    assert gg is not None and not np.any(gg.d)


def test_min_max_quantize_bad_inputs() -> None:
    x = _v(np.zeros((2, 4)))
    one = _v([[0.0]])
    with pytest.raises(ValueError, match=r"F\.min_max_quantize: qr_min, qr_max, ql_min"):
        F.min_max_quantize(x, one, one, _v([[0.0, 1.0]]), one)
    with pytest.raises(ValueError, match="each of size 1 or x's"):
        F.min_max_quantize(x, *[_v([[0.0, 0.0, 0.0]])] * 4)
    with pytest.raises(ValueError, match="x's number of axes"):  # (nnabla 1.39: NaN)
        F.min_max_quantize(x, *[_v([0.0])] * 4)
    with pytest.raises(TypeError, match="decay must be a real number"):
        F.min_max_quantize(x, one, one, one, one, decay="0.9")
    with pytest.raises(NotImplementedError, match="outputs="):
        F.min_max_quantize(x, one, one, one, one, outputs=[x])
    xg = _v(np.zeros((2, 4)), True)
    y = F.min_max_quantize(xg, _v([[-1.0]]), _v([[1.0]]), _v([[0.0]], True), _v([[255.0]]))
    with pytest.raises(RuntimeError, match="gradient with respect to ql_min"):  # as nnabla
        y.backward()


# -- inq_affine / inq_convolution ---------------------------------------------------------------


@pytest.mark.parametrize("k", _cases("inq"))
def test_inq_layers_match_nnabla_step_by_step(k: int) -> None:
    p = f"inq/{k}"
    x, w = _v(_REF[f"{p}/x"], True), _v(_REF[f"{p}/w"], True)
    ind = _v(np.zeros(w.shape))
    b = _v(_REF[f"{p}/b"], True) if f"{p}/b" in _REF.files else None
    fn = F.inq_convolution if int(_REF[f"{p}/conv"]) else F.inq_affine
    y = fn(x, w, ind, b, **_kw("inq", k))
    np.testing.assert_array_equal(w.d, _REF[f"{p}/w"].astype(np.float32))
    assert not ind.d.any()
    for s in range(int(_REF[f"{p}/steps"])):
        y.forward()
        np.testing.assert_array_equal(ind.d, _REF[f"{p}/ind/{s}"])  # (nnabla's are int32)
        np.testing.assert_allclose(w.d, _REF[f"{p}/w/{s}"], rtol=1e-6, atol=0)
        np.testing.assert_allclose(y.d, _REF[f"{p}/y/{s}"], rtol=1e-6, atol=1e-6)
        for v in (x, w, b):
            if v is not None:
                v.g = 0
        y.backward(np.ones(y.shape, np.float32))
        np.testing.assert_allclose(w.g, _REF[f"{p}/gw/{s}"], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(x.g, _REF[f"{p}/gx/{s}"], rtol=1e-6, atol=1e-6)
        w.d = w.d - 0.1 * w.g


def test_inq_build_is_not_an_execution() -> None:
    w0 = np.array([[0.3, -0.7], [0.1, 0.45]], np.float32)
    x, w, ind = _v(np.ones((1, 2))), _v(w0), _v(np.zeros((2, 2)))
    y = F.inq_affine(x, w, ind, inq_iterations=(1,))
    np.testing.assert_array_equal(w.d, w0)
    y.forward()  # execution 0: nothing fixed
    np.testing.assert_array_equal(w.d, w0)
    y.forward()  # execution 1, the last of inq_iterations: all fixed, as powers of two
    np.testing.assert_array_equal(w.d, [[0.25, -0.5], [0.125, 0.5]])
    nn.set_auto_forward(True)
    w2, ind2 = _v(w0), _v(np.zeros((2, 2)))
    y2 = F.inq_affine(x, w2, ind2, inq_iterations=(0,))  # executed when built
    assert ind2.d.all()
    y2.forward()
    np.testing.assert_array_equal(w2.d, [[0.25, -0.5], [0.125, 0.5]])


def test_mt19937_bernoulli_is_libstdcxx() -> None:
    # std::bernoulli_distribution(0.5) on std::mt19937(7), g++ 12 / libstdc++
    got = "".join(str(int(b)) for b in mt19937_bernoulli(7, 20))
    assert got == "11011111100110001010"
    np.testing.assert_array_equal(mt19937_bernoulli(7, 15, skip=10), mt19937_bernoulli(7, 20)[5:])


def test_inq_random_without_seed_follows_nn_seed() -> None:
    def indicator() -> np.ndarray:
        ind = _v(np.zeros((8, 8)))
        F.inq_affine(_v(np.ones((1, 8))), _v(np.ones((8, 8))), ind, None, 1, 4, (0, 1), "random")
        return ind.d.copy()

    nn.set_auto_forward(True)
    nn.seed(11)
    a = indicator()
    nn.seed(11)
    np.testing.assert_array_equal(indicator(), a)
    assert 0 < a.sum() < 64


@pytest.mark.parametrize("conv", [False, True])
def test_inq_gradients_against_finite_differences(conv: bool) -> None:
    rng = np.random.default_rng(1)
    if conv:
        x, w, b = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((3, 2, 2, 2)), [0.1] * 3
        fn = F.inq_convolution
    else:
        x, w, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 2)), [0.1, -0.2]
        fn = F.inq_affine

    def layer(xv: Any, bv: Any) -> Any:
        ind = gh.Variable(np.zeros(w.shape))
        return fn(xv, gh.Variable(w.copy()), ind, bv, inq_iterations=(0,), num_bits=3)

    assert gradcheck(layer, [x, np.array(b)], order=2)


def test_inq_bad_inputs() -> None:
    x, w = _v(np.ones((1, 2))), _v(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"F\.inq_affine: indicator_fixedweights must have"):
        F.inq_affine(x, w, _v(np.zeros((3, 2))))
    with pytest.raises(ValueError, match="selection_algorithm must be"):
        F.inq_affine(x, w, _v(np.zeros((2, 3))), selection_algorithm="foo")
    with pytest.raises(TypeError, match="num_bits must be an int"):
        F.inq_convolution(
            _v(np.ones((1, 1, 3, 3))),
            _v(np.ones((1, 1, 2, 2))),
            _v(np.zeros((1, 1, 2, 2))),
            num_bits=2.5,
        )
    with pytest.raises(TypeError, match="inq_iterations must be a sequence of ints"):
        F.inq_affine(x, w, _v(np.zeros((2, 3))), inq_iterations=3)
    with pytest.raises(NotImplementedError, match="outputs="):
        F.inq_affine(x, w, _v(np.zeros((2, 3))), outputs=[x])


# -- fused_convolution --------------------------------------------------------------------------


@pytest.mark.parametrize("k", _cases("fused"))
def test_fused_convolution_matches_nnabla(k: int) -> None:
    p = f"fused/{k}"
    names = ["x", "w", *json.loads(str(_REF[f"{p}/inputs"]))]
    vs = {n: _v(_REF[f"fused/{n}"], n not in ("mean", "variance")) for n in names}
    args = {"weight" if n == "w" else n: v for n, v in vs.items()}
    y = F.fused_convolution(**args, **_kw("fused", k))
    y.forward()
    np.testing.assert_allclose(y.d, _REF[f"{p}/y"], rtol=1e-5, atol=1e-5)
    for n in ("mean", "variance"):
        if n in vs:
            np.testing.assert_allclose(vs[n].d, _REF[f"{p}/{n}_after"], rtol=1e-5, atol=1e-6)
    for v in vs.values():
        v.g = 0
    y.backward(np.cos(np.arange(y.size)).reshape(y.shape).astype(np.float32))
    for n, v in vs.items():
        if v.need_grad:
            np.testing.assert_allclose(v.g, _REF[f"{p}/g_{n}"], rtol=1e-5, atol=1e-5)


def test_fused_convolution_gradients_against_finite_differences() -> None:
    rng = np.random.default_rng(2)
    x, w, z = (rng.standard_normal(s) for s in ((2, 2, 3, 3), (2, 2, 2, 2), (2, 2, 4, 2)))
    beta, gamma = rng.standard_normal((1, 2, 1, 1)), 1 + 0.1 * rng.standard_normal((1, 2, 1, 1))

    def fused(xv: Any, wv: Any, bv: Any, gv: Any, zv: Any) -> Any:
        mean, var = gh.Variable(np.zeros((1, 2, 1, 1))), gh.Variable(np.ones((1, 2, 1, 1)))
        return F.fused_convolution(
            xv, wv, None, bv, gv, mean, var, zv, pad=(1, 0), nonlinearity="tanh"
        )

    assert gradcheck(fused, [x, w, beta, gamma, z], order=2)


def test_fused_convolution_bad_inputs() -> None:
    x, w = _v(np.ones((1, 1, 3, 3))), _v(np.ones((1, 1, 2, 2)))
    s = _v(np.ones((1, 1, 1, 1)))
    with pytest.raises(ValueError, match="bias and the batch normalization"):
        F.fused_convolution(x, w, _v([0.0]), s, s, s, s)
    with pytest.raises(ValueError, match="variance missing"):
        F.fused_convolution(x, w, None, s, s, s)
    with pytest.raises(ValueError, match="takes one value in nonlinearity_args"):
        F.fused_convolution(x, w, nonlinearity="leaky_relu")
    with pytest.raises(NotImplementedError, match="nonlinearity 'gelu'"):
        F.fused_convolution(x, w, nonlinearity="gelu")
    with pytest.raises(ValueError, match="pad must have one value per spatial axis"):
        F.fused_convolution(x, w, pad=(1, 1, 1))
    with pytest.raises(ValueError, match="pad_mode must be"):
        F.fused_convolution(x, w, pad=(1, 1), pad_mode="edge")


# -- parametric functions -----------------------------------------------------------------------

_PF = [PF.min_max_quantize, PF.min_max_quantize, PF.inq_affine, PF.inq_convolution, PF.inq_affine]


@pytest.mark.parametrize("k", _cases("pf"))
def test_parametric_functions_match_nnabla(k: int) -> None:
    p = f"pf/{k}"
    nn.seed(313)
    y = _PF[k](_v(_REF[f"{p}/x"]), **_kw("pf", k))
    y.forward()
    np.testing.assert_allclose(y.d, _REF[f"{p}/y"], rtol=1e-6, atol=1e-6)
    params = nn.get_parameters(grad_only=False)
    names = [n[len(p) + 7 :] for n in _REF.files if n.startswith(f"{p}/param/")]
    assert list(params) == names
    for n, v in params.items():
        np.testing.assert_allclose(v.d, _REF[f"{p}/param/{n}"], rtol=1e-6, atol=1e-7)
        assert v.need_grad == bool(_REF[f"{p}/need_grad/{n}"]), n


def test_pf_min_max_quantize_fix_parameters_and_given_levels() -> None:
    x = _v([[-7.0, -0.01, 0.02, 3.0]], True)
    ql, qh = _v(np.zeros((1, 4))), _v(np.full((1, 4), 3.0))
    init = nn.initializer.ConstantInitializer(-1.0)
    y = PF.min_max_quantize(x, ql, qh, fix_parameters=True, qr_min_init=init)
    params = nn.get_parameters(grad_only=False)
    assert [(k, v.shape, v.need_grad) for k, v in params.items()] == [
        ("min_max_quantize/qr_min", (1, 4), True),
        ("min_max_quantize/qr_max", (1, 4), True),
    ]
    y.forward()
    y.backward()
    np.testing.assert_allclose(y.d, [[0.0, 0.0, 0.0, 7 / 3]], rtol=1e-7)  # nnabla 1.39
    assert not nn.get_parameters()["min_max_quantize/qr_min"].g.any()  # (not in this call)


def test_names_are_listed() -> None:
    for name in ("min_max_quantize", "inq_affine", "inq_convolution", "fused_convolution"):
        assert name in dir(F)
    for name in ("min_max_quantize", "inq_affine", "inq_convolution"):
        assert name in dir(PF)
    assert not hasattr(PF, "fused_convolution")  # (nnabla 1.39 has none either)

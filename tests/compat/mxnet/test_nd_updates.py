"""mxnet 1.9.1's fused optimizer update operators of ``mx.nd`` (``sgd_update``,
``adam_update``, ``multi_sgd_mom_update``, ``lamb_update_phase1``...) against values written by
mxnet 1.9.1 (``data/make_updates_reference.py`` -> ``data/updates_reference.npz``): three steps
of every operator, compared bit for bit (float16, float32 and float64 weights).
"""

from __future__ import annotations

import importlib.util
import math
import pathlib
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

DATA = pathlib.Path(__file__).parent / "data"
REF = np.load(DATA / "updates_reference.npz")


def _load_maker() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_updates_reference", DATA / "make_updates_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKER = _load_maker()
MULTI = [
    "multi_sgd_update",
    "multi_sgd_mom_update",
    "multi_mp_sgd_update",
    "multi_mp_sgd_mom_update",
    "preloaded_multi_sgd_update",
    "preloaded_multi_sgd_mom_update",
    "preloaded_multi_mp_sgd_update",
    "preloaded_multi_mp_sgd_mom_update",
]


def _same(key: str, got: mx.nd.NDArray) -> None:
    expected = REF[key]  # written by mxnet 1.9.1
    value = got.asnumpy()
    assert value.dtype == expected.dtype and value.shape == expected.shape, key
    np.testing.assert_array_equal(value, expected, err_msg=key)


@pytest.mark.parametrize("case", MAKER.CASES, ids=[c[0] for c in MAKER.CASES])
def test_update_matches_mxnet_bit_for_bit(case: Any) -> None:
    name, op, states, dtype, params = case
    arrays = MAKER.inputs(dtype)
    fn = getattr(mx.nd, op)
    w = mx.nd.array(arrays["weight"], dtype=dtype)
    sdt = {s: "float32" if s == "weight32" or dtype == "float16" else dtype for s in states}
    st = {s: mx.nd.array(MAKER.state0(s, arrays), dtype=sdt[s]) for s in states}
    copies = {s: v.copy() for s, v in st.items()}
    r = fn(w, mx.nd.array(arrays["grad"], dtype=dtype), *[copies[s] for s in states], **params)
    assert r is not w
    _same(f"{name}/noout/weight", r)
    _same(f"{name}/noout/input_weight", w)  # without out= the weight is left alone
    for step in range(3):
        p = dict(params)
        if "t" in p:
            p["t"] = step + 1
        g = mx.nd.array(arrays["grad"] * (step + 1) * (-1) ** step, dtype=dtype)
        assert fn(w, g, *[st[s] for s in states], out=w, **p) is w
        _same(f"{name}/{step}/weight", w)
        for s in states:
            _same(f"{name}/{step}/{s}", st[s])


@pytest.mark.parametrize("mp", [False, True])
def test_lamb_matches_mxnet(mp: bool) -> None:
    pre = "mp_lamb" if mp else "lamb"
    dt = "float16" if mp else "float32"
    arrays = MAKER.inputs(dt)
    w = mx.nd.array(arrays["weight"], dtype=dt)
    w32 = mx.nd.array(arrays["weight32"])
    mean, var = mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3))
    for step in range(3):
        g = mx.nd.array(arrays["grad"] * (step + 1) * (-1) ** step, dtype=dt)
        kw: dict[str, Any] = dict(
            t=step + 1, wd=0.05, rescale_grad=0.5, clip_gradient=0.75, bias_correction=step != 2
        )
        if mp:
            gg = mx.nd.mp_lamb_update_phase1(w, g, mean, var, w32, **kw)
            r1, r2 = w32.norm(), gg.norm()
            _same(f"{pre}/{step}/r1", r1)
            mx.nd.mp_lamb_update_phase2(
                w, gg, r1, r2, w32, lr=0.1, lower_bound=0.1, upper_bound=10.0, out=w
            )
            _same(f"{pre}/{step}/weight32", w32)
        else:
            gg = mx.nd.lamb_update_phase1(w, g, mean, var, **kw)
            r1, r2 = w.norm(), gg.norm()
            _same(f"{pre}/{step}/r1", r1)
            mx.nd.lamb_update_phase2(w, gg, r1, r2, lr=0.1, out=w)
        for key, v in (("g", gg), ("weight", w), ("mean", mean), ("var", var)):
            _same(f"{pre}/{step}/{key}", v)


@pytest.mark.parametrize("kind", MULTI)
def test_multi_updates_match_mxnet(kind: str) -> None:
    mom, mp, pre = "mom" in kind, "mp" in kind, kind.startswith("preloaded")
    dt = "float16" if mp else "float32"
    rng = np.random.RandomState(1)
    shapes = [(2, 3), (4,), (1, 2, 2)]
    ws = [mx.nd.array(rng.uniform(-1, 1, s), dtype=dt) for s in shapes]
    gs0 = [rng.uniform(-2, 2, s).astype(np.float32) for s in shapes]
    moms = [mx.nd.zeros(s) for s in shapes]
    w32s = [w.astype("float32") for w in ws]
    lrs, wds = (0.1, 0.2, 0.05), (0.0, 0.01, 0.1)
    for step in range(3):
        data: list[Any] = []
        for i in range(3):
            data += [ws[i], mx.nd.array(gs0[i] * (step + 1) * (-1) ** step, dtype=dt)]
            data += [moms[i]] if mom else []
            data += [w32s[i]] if mp else []
        kw: dict[str, Any] = dict(rescale_grad=0.5, clip_gradient=1.5, num_weights=3)
        if mom:
            kw["momentum"] = 0.9
        if pre:
            data += [mx.nd.array(lrs), mx.nd.array(wds)]
        else:
            kw.update(lrs=lrs, wds=wds)
        res = getattr(mx.nd, kind)(*data, out=ws, **kw)
        assert all(r is w for r, w in zip(res, ws, strict=True))
        for i in range(3):
            _same(f"{kind}/{step}/weight{i}", ws[i])
            if mom:
                _same(f"{kind}/{step}/mom{i}", moms[i])
            if mp:
                _same(f"{kind}/{step}/weight32_{i}", w32s[i])


def test_helpers_match_mxnet() -> None:
    rng = np.random.RandomState(2)
    a = [rng.uniform(-3, 3, s).astype(np.float32) for s in [(5, 7), (33,), (2, 2, 2)]]
    _same("sum_sq", mx.nd.multi_sum_sq(*[mx.nd.array(x) for x in a], num_arrays=3))
    lars = mx.nd.multi_lars(
        mx.nd.array([0.1, 0.2, 0.3, 0.4]),
        mx.nd.array([4.0, 0.0, 2.5, 9.0]),
        mx.nd.array([1.0, 3.0, 0.0, 0.7]),
        mx.nd.array([0.01, 0.0, 0.1, 0.001]),
        eta=0.001,
        eps=1e-8,
        rescale_grad=0.5,
    )
    _same("lars", lars)
    _same("finite_true", mx.nd.all_finite(mx.nd.array(a[0])))
    _same("finite_false", mx.nd.all_finite(mx.nd.array([1.0, np.inf])))
    both = mx.nd.multi_all_finite(mx.nd.array(a[0]), mx.nd.array([np.nan]), num_arrays=2)
    _same("multi_finite", both)
    # init_output=False keeps a 0 already in out
    flag = mx.nd.zeros(1)
    assert mx.nd.all_finite(mx.nd.ones(2), init_output=False, out=flag) is flag
    assert flag.asnumpy()[0] == 0.0


def test_float64_steps_follow_the_formulas() -> None:
    """Independent of mxnet's values: the documented formulas in float64 (the parameters are
    float32 numbers, as mxnet's, so exactly representable ones are used)."""
    rng = np.random.RandomState(3)
    w0, g = rng.randn(5), rng.randn(5) * 3
    w = mx.nd.array(w0, dtype="float64")
    mom = mx.nd.array(np.full(5, 0.25), dtype="float64")
    kw: dict[str, Any] = dict(lr=0.125, momentum=0.875, wd=2.0**-7, rescale_grad=0.5)
    mx.nd.sgd_mom_update(w, mx.nd.array(g, dtype="float64"), mom, clip_gradient=1.0, out=w, **kw)
    m = 0.875 * 0.25 - 0.125 * 2.0**-7 * w0 - 0.125 * np.clip(0.5 * g, -1, 1)
    np.testing.assert_allclose(mom.asnumpy(), m, rtol=1e-13)
    np.testing.assert_allclose(w.asnumpy(), w0 + m, rtol=1e-13)
    mean, var = mx.nd.zeros(5, dtype="float64"), mx.nd.zeros(5, dtype="float64")
    b1, b2, eps = 0.875, 1 - 2.0**-10, 2.0**-27
    r = mx.nd.adam_update(
        mx.nd.array(w0, dtype="float64"),
        mx.nd.array(g, dtype="float64"),
        mean,
        var,
        lr=2.0**-6,
        beta1=b1,
        beta2=b2,
        epsilon=eps,
    )
    gm, gv = (1 - b1) * g, (1 - b2) * g * g
    np.testing.assert_allclose(r.asnumpy(), w0 - 2.0**-6 * gm / (np.sqrt(gv) + eps), rtol=1e-13)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_matches_mxnets_sgd_optimizer_step(momentum: float) -> None:
    """mxnet 1.9.1's ``mx.optimizer.SGD`` runs ``multi_sgd_(mom_)update`` on dense weights."""
    rng = np.random.RandomState(4)
    w0, g0 = rng.randn(7).astype(np.float32), rng.randn(7).astype(np.float32)
    kw: dict[str, Any] = dict(lrs=(0.1,), wds=(0.01,), rescale_grad=0.5, clip_gradient=0.3)
    if momentum:
        w = mx.nd.multi_sgd_mom_update(
            mx.nd.array(w0), mx.nd.array(g0), mx.nd.zeros(7), momentum=momentum, **kw
        )
    else:
        w = mx.nd.multi_sgd_update(mx.nd.array(w0), mx.nd.array(g0), **kw)
    _same(f"optimizer_sgd_{momentum}", w)


def test_reset_arrays_and_out_forms() -> None:
    a, b = mx.nd.ones((2, 2)), mx.nd.ones(3)
    assert mx.nd.reset_arrays(a, b, num_arrays=2) == []
    assert not a.asnumpy().any() and not b.asnumpy().any()
    w, g = mx.nd.array([1.0, 2.0]), mx.nd.array([1.0, 1.0])
    res = mx.nd.multi_sgd_update(w, g, w.copy(), g, lrs=(0.5, 1.0), wds=(0.0, 0.0), num_weights=2)
    assert [r.asnumpy().tolist() for r in res] == [[0.5, 1.5], [0.0, 1.0]]
    assert w.asnumpy().tolist() == [1.0, 2.0]
    target = mx.nd.zeros(2)
    assert mx.nd.sgd_update(w, g, lr=1.0, out=target) is target
    assert target.asnumpy().tolist() == [0.0, 1.0]
    assert math.isclose(mx.nd.multi_sum_sq(mx.nd.array([3.0, 4.0]), num_arrays=1).asscalar(), 25)


def test_errors_name_the_operator() -> None:
    w, g = mx.nd.ones(3), mx.nd.ones(3)
    with pytest.raises(mx.base.MXNetError, match=r"Required parameter lr .*sgd_update"):
        mx.nd.sgd_update(w, g)
    with pytest.raises(mx.base.MXNetError, match=r"Cannot find argument 'foo'.*sgd_update"):
        mx.nd.sgd_update(w, g, lr=0.1, foo=1)
    with pytest.raises(mx.base.MXNetError, match=r"sgd_update: .*1-th input \(grad\).*\[4\]"):
        mx.nd.sgd_update(w, mx.nd.ones(4), lr=0.1)
    with pytest.raises(mx.base.MXNetError, match="expected float32, got float16"):
        mx.nd.sgd_update(w, g.astype("float16"), lr=0.1)
    with pytest.raises(mx.base.MXNetError, match="sgd_mom_update expects 3 inputs"):
        mx.nd.sgd_mom_update(w, g, lr=0.1)
    with pytest.raises(mx.base.MXNetError, match=r"mp_sgd_update.*expected float32"):
        mx.nd.mp_sgd_update(w.astype("float16"), g.astype("float16"), w.astype("float16"), lr=1)
    with pytest.raises(mx.base.MXNetError, match="multi_sgd_update expects 4 inputs"):
        mx.nd.multi_sgd_update(w, g, lrs=(0.1, 0.1), wds=(0, 0), num_weights=2)
    with pytest.raises(mx.base.MXNetError, match="Required parameter num_arrays"):
        mx.nd.multi_sum_sq(w)
    with pytest.raises(mx.base.MXNetError, match="lamb_update_phase2: r1 must be"):
        mx.nd.lamb_update_phase2(w, g, w, g, lr=0.1)
    with pytest.raises(TypeError, match=r"mx\.nd\.adam_update: mean must be an NDArray"):
        mx.nd.adam_update(w, g, 0, g, lr=0.1)

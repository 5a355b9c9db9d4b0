"""mxnet 1.9.1's fused optimizer update operators of ``mx.nd`` (``sgd_update``,
``adam_update``, ``multi_sgd_mom_update``, ``lamb_update_phase1``...) against values written by
mxnet 1.9.1 (``data/make_updates_reference.py`` -> ``data/updates_reference.npz``): three steps
of every operator, compared bit for bit (float16, float32 and float64 weights).
"""

from __future__ import annotations

import math
import pathlib
from collections.abc import Callable
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from compat.mxnet.helpers import _reference_script

DATA = pathlib.Path(__file__).parent / "data"
REF = np.load(DATA / "updates_reference.npz")


MAKER: Any = _reference_script("make_updates_reference")
MAKER.mx = mx  # the script's procedures run on gradhub_compat.mxnet here


def _same(key: str, got: mx.nd.NDArray) -> None:
    expected = REF[key]  # written by mxnet 1.9.1
    value = got.asnumpy()
    assert value.dtype == expected.dtype and value.shape == expected.shape, key
    np.testing.assert_array_equal(value, expected, err_msg=key)


def _replay(
    prefix: str, procedure: Callable[[dict[str, Any]], None], approx: tuple[str, ...] = ()
) -> None:
    """Runs a procedure of the reference script (which stored ``REF``'s ``<prefix>/...`` arrays
    with mxnet 1.9.1) on gradhub_compat.mxnet and compares every array it stores, bit for bit
    (the arrays named in ``approx``: to float32 rounding)."""
    out: dict[str, Any] = {}
    procedure(out)
    assert len(out) == sum(k.startswith(f"{prefix}/") for k in REF.files), prefix
    for key, value in out.items():
        expected = REF[f"{prefix}/{key}"]  # written by mxnet 1.9.1
        assert value.dtype == expected.dtype and value.shape == expected.shape, key
        if key.rsplit("/", 1)[-1] in approx:
            np.testing.assert_allclose(value, expected, rtol=1e-6, err_msg=f"{prefix}/{key}")
        else:
            np.testing.assert_array_equal(value, expected, err_msg=f"{prefix}/{key}")


@pytest.mark.parametrize("case", MAKER.CASES, ids=[c[0] for c in MAKER.CASES])
def test_update_matches_mxnet_bit_for_bit(case: Any) -> None:
    name, op, states, dtype, params = case
    _replay(name, lambda out: MAKER.run_case(op, states, dtype, params, out))


@pytest.mark.parametrize("mp", [False, True])
def test_lamb_matches_mxnet(mp: bool) -> None:
    # r2, the norm of phase 1's result, sums in another order than mxnet's
    _replay("mp_lamb" if mp else "lamb", lambda out: MAKER.lamb(out, mp), approx=("r2",))


@pytest.mark.parametrize("kind", MAKER.MULTI)
def test_multi_updates_match_mxnet(kind: str) -> None:
    _replay(kind, lambda out: MAKER.multi(out, kind))


@pytest.mark.parametrize("case", MAKER.CASES, ids=[c[0] for c in MAKER.CASES])
def test_update_returns_out_or_a_new_array(case: Any) -> None:
    _name, op, states, dtype, params = case
    arrays = MAKER.inputs(dtype)
    fn = getattr(mx.nd, op)
    w, g = mx.nd.array(arrays["weight"], dtype=dtype), mx.nd.array(arrays["grad"], dtype=dtype)
    sdt = {s: "float32" if s == "weight32" or dtype == "float16" else dtype for s in states}
    st = [mx.nd.array(MAKER.state0(s, arrays), dtype=sdt[s]) for s in states]
    assert fn(w, g, *[v.copy() for v in st], **params) is not w
    assert fn(w, g, *st, out=w, **params) is w


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
    ws = [w.copy(), w.copy()]
    res = mx.nd.multi_sgd_update(
        ws[0], g, ws[1], g, out=ws, lrs=(0.5, 1.0), wds=(0, 0), num_weights=2
    )
    assert all(r is v for r, v in zip(res, ws, strict=True))
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


def test_multi_sum_sq_of_float16_squares_in_float16() -> None:
    """mxnet 1.9.1 squares float16 data in float16, then adds in float32: 78.7103042602539 for
    numpy's RandomState(1).randn(100) (it was squared in float32: 78.71194...)."""
    v = mx.nd.array(np.random.RandomState(1).randn(100), dtype="float16")
    assert mx.nd.multi_sum_sq(v, num_arrays=1).asnumpy().tolist() == [78.7103042602539]

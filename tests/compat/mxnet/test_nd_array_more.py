"""mx.nd's array/math operators and linear algebra (``_nd_array_more``, ``_nd_linalg``): values
and gradients against mxnet 1.9.1, gradients against float64 finite differences, second
derivatives, errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradhub as gh
import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub.testing import gradcheck
from gradhub_compat.mxnet.base import MXNetError

# expected values written by mxnet 1.9.1 (data/make_array_more_reference.py)
_REF = np.load(Path(__file__).parent / "data" / "array_more_reference.npz")
_CASES: list[dict[str, Any]] = json.loads(str(_REF["cases"]))
_rng = np.random.default_rng(3)


def _fn(name: str) -> Callable[..., Any]:
    fn: Any = mx.nd
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn


def _run_case(case: dict[str, Any]) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    name = case["name"]
    leaves: list[tuple[str, Any]] = []

    def arg(a: Any) -> Any:
        if isinstance(a, dict):
            return a["num"]
        if isinstance(a, list) and a and isinstance(a[0], str):
            return [arg(b) for b in a]
        if isinstance(a, list):
            return tuple(a)
        v = _REF[f"input/{a}"]
        nd = mx.nd.array(v, dtype=v.dtype)
        if case["grad"] and v.dtype.kind == "f" and f"{name}/grad/{a}" in _REF:
            nd.attach_grad()
            leaves.append((a, nd))
        return nd

    args = [arg(a) for a in case["args"]]
    kw = case.get("kw", {})
    fn = _fn(case["fn"])
    grads: dict[str, np.ndarray] = {}
    if case["grad"]:
        with mx.autograd.record():
            res = fn(*args, **kw)
            outs = list(res) if isinstance(res, (list, tuple)) else [res]
            loss = None
            for i, o in enumerate(outs):
                term = (o * mx.nd.array(_REF[f"{name}/head{i}"])).sum()
                loss = term if loss is None else loss + term
        assert loss is not None
        loss.backward()
        grads = {k: v.grad.asnumpy() for k, v in leaves}
    else:
        res = fn(*args, **kw)
        outs = list(res) if isinstance(res, (list, tuple)) else [res]
    return [o.asnumpy() if hasattr(o, "asnumpy") else np.asarray(o) for o in outs], grads


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_against_mxnet(case: dict[str, Any]) -> None:
    """Outputs (shape, dtype, values) and input gradients as mxnet 1.9.1 on the same inputs."""
    name = case["name"]
    outs, grads = _run_case(case)
    n_ref = len([k for k in _REF.files if k.startswith(f"{name}/out")])
    assert len(outs) == n_ref
    for i, o in enumerate(outs):
        want = _REF[f"{name}/out{i}"]
        assert o.shape == want.shape, (i, o.shape, want.shape)
        assert o.dtype == want.dtype, (i, o.dtype, want.dtype)
        np.testing.assert_allclose(o, want, rtol=2e-5, atol=2e-5)
    for k, g in grads.items():
        np.testing.assert_allclose(g, _REF[f"{name}/grad/{k}"], rtol=2e-4, atol=2e-5)


def _native(fn: Callable[..., Any], index: int = 0) -> Callable[..., Any]:
    """``fn`` (of NDArrays) as a function of gradhub Variables, recorded through mx.autograd."""

    def f(*vs: Any) -> Any:
        with mx.autograd.record():
            arrays = [mx.nd.NDArray(v._data, mx.cpu(), v) for v in vs]
            r = fn(*arrays)
        r = r[index] if isinstance(r, (list, tuple)) else r
        return r._var

    return f


def _var(*shape: int) -> gh.Variable:
    return gh.Variable(_rng.standard_normal(shape), need_grad=True)


def _spd(n: int) -> gh.Variable:
    m = _rng.standard_normal((2, n, n))
    return gh.Variable(m @ m.transpose(0, 2, 1) + n * np.eye(n), need_grad=True)


def _tri(n: int) -> gh.Variable:
    m = _rng.standard_normal((2, n, n))
    return gh.Variable(np.tril(m) + 3 * np.eye(n), need_grad=True)


_FD_CASES: list[tuple[str, Callable[..., Any], Callable[[], list[gh.Variable]], int]] = [
    (
        "broadcast_mod",
        lambda a, b: mx.nd.broadcast_mod(a, b),
        lambda: [_var(2, 3), gh.Variable(np.array([[2.5, -1.5, 3.0]]), need_grad=True)],
        0,
    ),
    (
        "broadcast_hypot",
        lambda a, b: mx.nd.broadcast_hypot(a, b),
        lambda: [_var(2, 3), _var(1, 3)],
        0,
    ),
    ("cumsum", lambda a: mx.nd.cumsum(a, axis=1), lambda: [_var(2, 3)], 0),
    ("diag", lambda a: mx.nd.diag(a, k=1), lambda: [_var(3)], 0),
    ("moments_var", lambda a: mx.nd.moments(a, axes=(1,)), lambda: [_var(2, 4)], 1),
    ("im2col", lambda a: mx.nd.im2col(a, kernel=(2, 2), pad=(1, 0)), lambda: [_var(1, 2, 3, 3)], 0),
    (
        "col2im",
        lambda a: mx.nd.col2im(a, output_size=(3, 3), kernel=(2, 2), pad=(1, 0)),
        lambda: [_var(1, 8, 8)],
        0,
    ),
    (
        "gemm",
        lambda a, b, c: mx.nd.linalg.gemm(a, b, c, alpha=0.5, beta=2.0),
        lambda: [_var(2, 2, 3), _var(2, 3, 2), _var(2, 2, 2)],
        0,
    ),
    # (mxnet's gradient is the symmetric one: checked along symmetric directions)
    (
        "potrf",
        lambda a: mx.nd.linalg.potrf(0.5 * (a + mx.nd.swapaxes(a, 1, 2))),
        lambda: [_spd(3)],
        0,
    ),
    ("potri", lambda a: mx.nd.linalg.potri(a), lambda: [_tri(3)], 0),
    (
        "trsm",
        lambda a, b: mx.nd.linalg.trsm(a, b, transpose=True, alpha=2.0),
        lambda: [_tri(3), _var(2, 3, 2)],
        0,
    ),
    (
        "trmm",
        lambda a, b: mx.nd.linalg.trmm(a, b, rightside=True, lower=False),
        lambda: [_tri(3), _var(2, 2, 3)],
        0,
    ),
    ("syrk", lambda a: mx.nd.linalg.syrk(a, transpose=True), lambda: [_var(2, 3, 2)], 0),
    ("gelqf_q", lambda a: mx.nd.linalg.gelqf(a), lambda: [_var(2, 2, 3)], 0),
    ("gelqf_l", lambda a: mx.nd.linalg.gelqf(a), lambda: [_var(2, 2, 3)], 1),
    ("sumlogdiag", lambda a: mx.nd.linalg.sumlogdiag(a), lambda: [_spd(3)], 0),
    ("maketrian", lambda a: mx.nd.linalg.maketrian(a, offset=1), lambda: [_var(2, 3)], 0),
    (
        "extracttrian",
        lambda a: mx.nd.linalg.extracttrian(a, lower=False),
        lambda: [_var(2, 3, 3)],
        0,
    ),
    ("inverse", lambda a: mx.nd.linalg.inverse(a), lambda: [_spd(3)], 0),
    ("det", lambda a: mx.nd.linalg.det(a), lambda: [_var(2, 3, 3)], 0),
    ("slogdet", lambda a: mx.nd.linalg.slogdet(a), lambda: [_spd(3)], 1),
]


@pytest.mark.parametrize("name,fn,make,index", _FD_CASES, ids=[c[0] for c in _FD_CASES])
def test_gradients_finite_differences(
    name: str, fn: Callable[..., Any], make: Callable[[], list[gh.Variable]], index: int
) -> None:
    """First derivatives against float64 central differences."""
    assert gradcheck(_native(fn, index), make())


@pytest.mark.parametrize(
    "name,fn,make,index",
    [
        c
        for c in _FD_CASES
        if c[0]
        in (
            "broadcast_hypot",
            "moments_var",
            "potrf",
            "trsm",
            "gelqf_l",
            "det",
            "slogdet",
            "im2col",
        )
    ],
    ids=lambda c: c if isinstance(c, str) else "",
)
def test_second_derivatives(
    name: str, fn: Callable[..., Any], make: Callable[[], list[gh.Variable]], index: int
) -> None:
    """Second derivatives (mxnet has none for these) by gh.gradgradcheck."""
    assert gradcheck(_native(fn, index), make(), order=2)


def test_comparisons_record_zero_gradient() -> None:
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.equal(x, 2.0) + mx.nd.logical_not(x) + mx.nd.greater(3, x) + x
    y.backward()
    g = x.grad
    assert g is not None
    np.testing.assert_array_equal(g.asnumpy(), np.ones((2, 2)))


def test_numbers_only() -> None:
    assert mx.nd.add(1, 2) == 3
    assert mx.nd.equal(1, 2) == 0
    assert mx.nd.lesser(1, 2) == 1
    assert mx.nd.modulo(-7, 3) == 2


def test_int_dtypes_keep_dtype() -> None:
    a = mx.nd.array([[5, -5, 7]], dtype="int32")
    b = mx.nd.array([[3, 3, -4]], dtype="int32")
    r = mx.nd.modulo(a, b)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r.asnumpy(), [[2, 1, -1]])
    assert mx.nd.equal(a, b).dtype == np.int32
    np.testing.assert_array_equal(
        mx.nd.diag(mx.nd.array([1, 2], dtype="int32")).asnumpy(), np.diag([1, 2])
    )


def test_errors_name_the_operator() -> None:
    with pytest.raises(MXNetError, match=r"linalg_potrf"):
        mx.nd.linalg.potrf(mx.nd.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(MXNetError, match=r"linalg_det.*floating point"):
        mx.nd.linalg.det(mx.nd.array([[1, 0], [0, 1]], dtype="int32"))
    with pytest.raises(MXNetError, match=r"linalg_inverse.*square"):
        mx.nd.linalg.inverse(mx.nd.ones((2, 3)))
    with pytest.raises(MXNetError, match=r"linalg_gemm"):
        mx.nd.linalg.gemm(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))
    with pytest.raises(MXNetError, match=r"broadcast_mod"):
        mx.nd.broadcast_mod(mx.nd.ones((2,)), mx.nd.ones((3,)))
    with pytest.raises(MXNetError, match=r"depth_to_space"):
        mx.nd.depth_to_space(mx.nd.ones((1, 3, 2, 2)), 2)
    with pytest.raises(MXNetError, match=r"col2im.*output size"):
        mx.nd.col2im(mx.nd.ones((1, 4, 9)), output_size=(4, 4), kernel=(2, 2), pad=(1, 1))
    with pytest.raises(MXNetError, match=r"moments: Empty axes"):
        mx.nd.moments(mx.nd.ones((2, 2)))
    with pytest.raises(MXNetError, match=r"batch_take"):
        mx.nd.batch_take(mx.nd.ones((2, 2)), mx.nd.array([0, 1]))
    with pytest.raises(TypeError, match=r"mx.nd.add"):
        mx.nd.add(mx.nd.ones((2,)), "x")
    with pytest.raises(MXNetError, match=r"gather_nd.*out of range"):
        mx.nd.gather_nd(mx.nd.ones((2, 2)), mx.nd.array([[2], [0]]))


def test_gather_nd_negative_indices() -> None:
    x = mx.nd.array(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(
        mx.nd.gather_nd(x, mx.nd.array([[1, -1], [-1, 0]])).asnumpy(), [5.0, 3.0]
    )


def test_split_v2_single_part_and_concatenate_no_copy() -> None:
    x = mx.nd.ones((4, 2))
    assert isinstance(mx.nd.split_v2(x, 1), mx.nd.NDArray)
    assert mx.nd.concatenate([x], always_copy=False) is x


def test_onehot_encode_writes_out() -> None:
    out = mx.nd.zeros((2, 3))
    r = mx.nd.onehot_encode(mx.nd.array([2, 0]), out)
    assert r is out
    np.testing.assert_array_equal(out.asnumpy(), [[0, 0, 1], [1, 0, 0]])


def test_shuffle_permutes_rows() -> None:
    mx.random.seed(1)
    x = mx.nd.array(np.arange(12.0).reshape(6, 2))
    y = mx.nd.shuffle(x).asnumpy()
    assert sorted(y[:, 0].tolist()) == x.asnumpy()[:, 0].tolist()
    np.testing.assert_array_equal(y[:, 1] - y[:, 0], np.ones(6))


def test_numpy_and_dlpack_share_memory() -> None:
    a = np.arange(4, dtype=np.float32)
    x = mx.nd.from_numpy(a)
    a[0] = 9.0
    assert x.asnumpy()[0] == 9.0
    y = mx.nd.from_dlpack(mx.nd.to_dlpack_for_write(x))
    assert y.context == mx.cpu()
    y[1] = 7.0
    assert x.asnumpy()[1] == 7.0
    z = mx.nd.from_dlpack(np.ones((2, 2)))
    assert z.shape == (2, 2) and z.dtype == np.float64


def test_max_min_axis_aliases() -> None:
    x = mx.nd.array([[1.0, 5.0], [4.0, 2.0]])
    np.testing.assert_array_equal(mx.nd.max_axis(x, axis=1).asnumpy(), [5.0, 4.0])
    np.testing.assert_array_equal(mx.nd.min_axis(x, axis=0).asnumpy(), [1.0, 2.0])


def test_linalg_namespace() -> None:
    for short in ("gemm", "gemm2", "potrf", "potri", "trmm", "trsm", "syrk", "gelqf", "sumlogdiag"):
        assert getattr(mx.nd.linalg, short) is getattr(mx.nd, f"linalg_{short}")
    for short in (
        "extractdiag",
        "makediag",
        "extracttrian",
        "maketrian",
        "inverse",
        "det",
        "slogdet",
    ):
        assert getattr(mx.nd.linalg, short) is getattr(mx.nd, f"linalg_{short}")


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((2, 3, 7), {"kernel": (3,), "stride": (2,), "pad": (1,)}),
        (
            (1, 2, 5, 4, 3),
            {"kernel": (2, 2, 2), "stride": (2, 1, 1), "pad": (1, 0, 1), "dilate": (1, 2, 1)},
        ),
    ],
)
def test_im2col_col2im_adjoint_other_ranks(shape: tuple[int, ...], kw: dict[str, Any]) -> None:
    """1-D and 3-D kernels (mxnet 1.9.1 fails on them): col2im is the adjoint of im2col."""
    x = _rng.standard_normal(shape)
    cols = mx.nd.im2col(mx.nd.array(x, dtype="float64"), **kw)
    c = _rng.standard_normal(cols.shape)
    back = mx.nd.col2im(mx.nd.array(c, dtype="float64"), output_size=shape[2:], **kw)
    assert back.shape == shape
    np.testing.assert_allclose((cols.asnumpy() * c).sum(), (x * back.asnumpy()).sum(), rtol=1e-12)


def test_dlpack_for_read_is_read_only_in_numpy() -> None:
    x = mx.nd.ones((3,))
    y = mx.nd.from_dlpack(mx.nd.to_dlpack_for_read(x))
    with pytest.raises(ValueError, match="read-only"):
        y[0] = 2.0

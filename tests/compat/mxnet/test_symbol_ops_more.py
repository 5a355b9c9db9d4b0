"""``mx.sym``'s elementwise math, broadcast comparisons, reductions, indexing, array makers and
sampling operators (``_sym_ops_more``): the arguments, inferred shapes, JSON nodes, outputs and
gradients of an executor compared with mxnet 1.9.1's (data/sym_ops_more_reference.json and
.npz, written by mxnet 1.9.1 through data/make_sym_ops_more_reference.py), the JSON text mxnet
1.9.1 wrote loaded back and run, float64 gradients against finite differences, and errors.
"""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
import pytest

DATA = pathlib.Path(__file__).parent / "data"
# expected values written by mxnet 1.9.1 (make_sym_ops_more_reference.py)
REF = json.loads((DATA / "sym_ops_more_reference.json").read_text(encoding="utf-8"))["cases"]
ARR = dict(np.load(DATA / "sym_ops_more_reference.npz"))
IDS = sorted(REF)
#: ``mx.sym`` (its operators of _sym_ops_more are installed at import, unseen by mypy)
SYM: Any = mx.sym
#: cases whose values are compared more loosely (float32 special functions)
_LOOSE = {
    "rnn_lstm",
    "rnn_gru_bi",
    "rnn_relu",
    "gamma",
    "gammaln",
    "erfinv",
    "arccosh",
    "tan",
    "rcbrt",
    "cbrt",
    "norm",
    "norm_axis",
}


def _build(case: dict[str, Any], named: bool = True) -> tuple[Any, dict[str, np.ndarray]]:
    syms: list[Any] = []
    vals: dict[str, np.ndarray] = {}
    for i, (shape, kind) in enumerate(case["inputs"]):
        if not shape:
            syms.append(float(kind))
            continue
        syms.append(mx.sym.var(f"x{i}"))
    f: Any = mx.sym
    for part in case["fn"].split("."):
        f = getattr(f, part)
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    if case["fn"] in ("hypot", "pow", "power") or not named:
        sym = f(*syms, **kwargs)
    else:
        sym = f(*syms, name="n", **kwargs)
    return sym, vals


def _run(sym: Any, cid: str, case: dict[str, Any]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    args = {n: mx.nd.array(ARR[f"{cid}/{n}"]) for n in sym.list_arguments() if f"{cid}/{n}" in ARR}
    grads = {n: mx.nd.zeros(args[n].shape) for n in case["grads"]}
    reqs = {n: ("write" if n in grads else "null") for n in args}
    ex = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=reqs)
    out = ex.forward(is_train=True)[0]
    value = out.asnumpy()
    if case["grads"]:
        ex.backward([mx.nd.array(ARR[f"{cid}/head"], dtype=value.dtype)])
    return value, {n: g.asnumpy() for n, g in grads.items()}


@pytest.mark.parametrize("cid", IDS)
def test_matches_mxnet(cid: str) -> None:
    case = REF[cid]
    sym, _ = _build(case)
    if case["fn"] not in ("hypot", "pow", "power"):
        assert sym.list_outputs() == case["outputs"]
    assert sym.list_arguments() == case["arguments"]
    shapes = {n: ARR[f"{cid}/{n}"].shape for n in sym.list_arguments()}
    arg_shapes, out_shapes, _ = sym.infer_shape(**shapes)
    assert [list(s) for s in arg_shapes] == case["arg_shapes"]
    assert [list(s) for s in out_shapes] == case["out_shapes"]
    nodes = [[n["op"], n.get("attrs", {})] for n in json.loads(sym.tojson())["nodes"]]
    assert [n for n in nodes if n[0] != "null"] == case["nodes"]
    mine, theirs = json.loads(sym.tojson()), json.loads(case["json"])
    assert mine["node_row_ptr"] == theirs["node_row_ptr"]
    value, grads = _run(sym, cid, case)
    tol = 2e-4 if cid in _LOOSE else 1e-5
    assert value.dtype.name == case["out_dtype"]
    np.testing.assert_allclose(value, ARR[f"{cid}/out"], rtol=tol, atol=tol)
    for n, g in grads.items():
        np.testing.assert_allclose(g, ARR[f"{cid}/grad_{n}"], rtol=tol, atol=tol)


@pytest.mark.parametrize("cid", IDS)
def test_loads_mxnet_json(cid: str) -> None:
    case = REF[cid]
    sym = mx.sym.load_json(case["json"])
    assert sym.list_arguments() == case["arguments"]
    again = json.loads(mx.sym.load_json(sym.tojson()).tojson())["nodes"]
    assert [[n["op"], n.get("attrs", {})] for n in again if n["op"] != "null"] == case["nodes"]
    value, grads = _run(sym, cid, case)
    tol = 2e-4 if cid in _LOOSE else 1e-5
    np.testing.assert_allclose(value, ARR[f"{cid}/out"], rtol=tol, atol=tol)
    for n, g in grads.items():
        np.testing.assert_allclose(g, ARR[f"{cid}/grad_{n}"], rtol=tol, atol=tol)


def _fd_check(sym: Any, inputs: dict[str, np.ndarray], wrt: list[str]) -> None:
    """The executor's float64 gradients of ``sum(out * head)`` against central differences."""
    args = {n: mx.nd.array(v, dtype="float64") for n, v in inputs.items()}
    grads = {n: mx.nd.zeros(v.shape, dtype="float64") for n, v in inputs.items() if n in wrt}
    reqs = {n: ("write" if n in grads else "null") for n in args}
    ex = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=reqs)
    out = ex.forward(is_train=True)[0].asnumpy()
    head = np.random.RandomState(3).randn(*out.shape)
    ex.backward([mx.nd.array(head, dtype="float64")])

    def f(name: str, v: np.ndarray) -> float:
        a = {**args, name: mx.nd.array(v, dtype="float64")}
        e = sym.bind(mx.cpu(), a, grad_req="null")
        return float((e.forward()[0].asnumpy() * head).sum())

    eps = 1e-6
    for n in wrt:
        x = inputs[n].astype(np.float64)
        num = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            p, m = x.copy(), x.copy()
            p[i] += eps
            m[i] -= eps
            num[i] = (f(n, p) - f(n, m)) / (2 * eps)
        np.testing.assert_allclose(grads[n].asnumpy(), num, rtol=1e-5, atol=1e-6)


_FD = [
    ("arccos", [((2, 3), "u")], {}),
    ("gammaln", [((2, 3), "p")], {}),
    ("rsqrt", [((2, 3), "p")], {}),
    ("hard_sigmoid", [((2, 3), "n")], {}),
    ("smooth_l1", [((2, 3), "n")], {"scalar": 0.7}),
    ("L2Normalization", [((2, 3, 2), "n")], {"mode": "spatial"}),
    ("prod", [((2, 3), "p")], {"axis": 1}),
    ("norm", [((2, 3), "n")], {"axis": 0}),
    ("take", [((4, 3), "n"), ((2,), "i4")], {"axis": 0}),
    ("batch_dot", [((2, 2, 3), "n"), ((2, 3, 2), "n")], {}),
    ("linalg_gemm2", [((2, 3), "n"), ((3, 2), "n")], {"alpha": 0.5}),
    ("tile", [((2, 3), "n")], {"reps": (2, 2)}),
    ("repeat", [((2, 3), "n")], {"repeats": 3}),
    ("slice_axis", [((4, 3), "n")], {"axis": 0, "begin": 1, "end": 3}),
    ("broadcast_to", [((1, 3), "n")], {"shape": (2, 3)}),
    ("stack", [((2, 3), "n"), ((2, 3), "n")], {"axis": 2}),
    ("hypot", [((2, 3), "n"), ((1, 3), "n")], {}),
    ("SequenceLast", [((3, 2, 2), "n"), ((2,), "l")], {"use_sequence_length": True}),
    (
        "RNN",
        [((2, 1, 2), "n"), ((12,), "n"), ((1, 1, 2), "n")],
        {"state_size": 2, "num_layers": 1, "mode": "rnn_tanh"},
    ),
]


@pytest.mark.parametrize("fn, inputs, kwargs", _FD, ids=[c[0] for c in _FD])
def test_float64_gradients_against_finite_differences(
    fn: str, inputs: list[Any], kwargs: dict[str, Any]
) -> None:
    vals = _fd_inputs(inputs, 0)
    sym = getattr(mx.sym, fn)(*[mx.sym.var(n) for n in vals], **kwargs)
    wrt = [n for (_, kind), n in zip(inputs, vals) if kind in "nup"]
    _fd_check(sym, vals, wrt)


def _fd_inputs(inputs: list[Any], seed: int) -> dict[str, np.ndarray]:
    """float64 inputs ``x0, x1...`` of the finite-difference cases by kind: ``u`` in
    (-0.8, 0.8), ``p`` in (0.5, 2), ``l`` lengths 1..3, ``i<n>`` indices below n, ``spd`` a
    symmetric positive definite matrix, ``tril`` a lower triangle with a diagonal of 1.5, ``d``
    two distinct index pairs, otherwise normal."""
    rng = np.random.RandomState(seed)
    vals: dict[str, np.ndarray] = {}
    for i, (shape, kind) in enumerate(inputs):
        if kind == "u":
            vals[f"x{i}"] = rng.uniform(-0.8, 0.8, shape)
        elif kind == "p":
            vals[f"x{i}"] = rng.uniform(0.5, 2.0, shape)
        elif kind == "l":
            vals[f"x{i}"] = rng.randint(1, 4, shape).astype(np.float64)
        elif kind.startswith("i"):
            vals[f"x{i}"] = rng.randint(0, int(kind[1:]), shape).astype(np.float64)
        elif kind == "spd":
            m = rng.randn(*shape)
            vals[f"x{i}"] = m @ m.T + shape[-1] * np.eye(shape[-1])
        elif kind == "tril":
            vals[f"x{i}"] = np.tril(rng.randn(*shape), -1) + 1.5 * np.eye(shape[-1])
        elif kind == "d":  # (distinct index pairs)
            vals[f"x{i}"] = np.array([[0.0, 1.0], [1.0, 0.0]])
        else:
            vals[f"x{i}"] = rng.randn(*shape)
    return vals


def test_second_derivative_through_executor_graph() -> None:
    """``mx.autograd.grad(create_graph=True)`` on the ``mx.nd`` form runs the same native
    functions; the symbol's first derivative matches it."""
    x = mx.nd.array([0.3, -0.2, 0.5], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.arcsin(x)
        (g,) = mx.autograd.grad(y, [x], create_graph=True)
    g.backward()
    v = x.asnumpy()
    np.testing.assert_allclose(g.asnumpy(), 1 / np.sqrt(1 - v * v), rtol=1e-12)
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.asnumpy(), v / (1 - v * v) ** 1.5, rtol=1e-12)
    sym = SYM.arcsin(mx.sym.var("x"))
    gx = mx.nd.zeros((3,), dtype="float64")
    ex = sym.bind(mx.cpu(), {"x": x}, args_grad={"x": gx})
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones((3,), dtype="float64")])
    np.testing.assert_allclose(gx.asnumpy(), g.asnumpy(), rtol=1e-12)


def test_partial_shapes_and_free_inputs() -> None:
    y = SYM.arccos(name="a")  # (data becomes the variable a_data, as mxnet)
    assert y.list_arguments() == ["a_data"]
    z = SYM.arccos(mx.sym.var("x")) + mx.sym.var("w")
    arg, out, _ = z.infer_shape_partial(w=(2, 3))
    assert arg == [(2, 3), (2, 3)] and out == [(2, 3)]
    m = SYM.SequenceMask(mx.sym.var("d"), use_sequence_length=True, name="sm")
    assert m.list_arguments() == ["d", "sm_sequence_length"]
    assert m.infer_shape(d=(5, 2, 3))[0] == [(5, 2, 3), (2,)]


def test_random_and_sampling() -> None:
    mx.random.seed(0)
    r = SYM.random.normal(loc=1.0, scale=0.5, shape=(200,), name="r")
    assert json.loads(r.tojson())["nodes"][0]["op"] == "_random_normal"
    assert r.infer_shape()[1] == [(200,)]
    v = r.bind(mx.cpu(), {}).forward()[0].asnumpy()
    assert v.shape == (200,) and abs(v.mean() - 1.0) < 0.2 and 0.3 < v.std() < 0.7
    u = SYM.random_uniform(low=-1, high=2, shape=(2, 50), name="u")
    w = u.bind(mx.cpu(), {}).forward()[0].asnumpy()
    assert w.shape == (2, 50) and w.min() >= -1 and w.max() < 2
    p = SYM.sample_multinomial(mx.sym.var("p"), shape=4)
    s = p.bind(mx.cpu(), {"p": mx.nd.array([[0.0, 1.0, 0.0]])}).forward()[0].asnumpy()
    assert s.shape == (1, 4) and (s == 1).all()


def test_errors_name_the_operator() -> None:
    x = mx.sym.var("x")
    with pytest.raises(mx.base.MXNetError, match="operator n"):
        SYM.slice_axis(x, axis=3, begin=0, end=1, name="n").infer_shape(x=(2, 3))
    with pytest.raises(mx.base.MXNetError, match="operator t"):
        SYM.broadcast_equal(x, mx.sym.var("y"), name="t").infer_shape(x=(2, 3), y=(4,))
    with pytest.raises(NotImplementedError, match="ret_typ='both'"):
        SYM.topk(x, k=2, ret_typ="both")
    with pytest.raises(mx.base.MXNetError, match="shape"):
        SYM.zeros()
    with pytest.raises(mx.base.MXNetError, match="num_args"):
        SYM.stack(x, x, num_args=3)
    with pytest.raises(TypeError, match=r"mx\.sym\.take: indices must be a Symbol"):
        SYM.take(x, 3)


def test_builtin_names_still_work() -> None:
    """``SYM.max``/``min``/``slice``/``round`` are operators; ``maximum`` of two numbers is
    still Python's."""
    assert SYM.maximum(2, 3) == 3 and mx.sym.minimum(2, 3) == 2
    assert SYM.max(mx.sym.var("x"), axis=0).infer_shape(x=(2, 3))[1] == [(3,)]


def test_infer_type_as_mxnet() -> None:
    """Output dtypes that follow a parameter, not the input (values printed by mxnet 1.9.1's
    ``infer_type(x=np.float32)``)."""
    x, y = mx.sym.var("x"), mx.sym.var("y")
    expected = [
        (SYM.cast(x, dtype="float16"), ["float32"], ["float16"]),
        (SYM.argsort(x), ["float32"], ["float32"]),
        (SYM.argsort(x, dtype="float64"), ["float32"], ["float64"]),
        (SYM.shape_array(x), ["float32"], ["int64"]),
        (SYM.one_hot(x, depth=3), ["float32"], ["float32"]),
        (SYM.topk(x, k=1), ["float32"], ["float32"]),
        (SYM.cast(x, dtype="float64") + y, ["float32", "float64"], ["float64"]),
        (SYM.argmax(x, axis=0), ["float32"], ["float32"]),
        (SYM.broadcast_equal(x, y), ["float32", "float32"], ["float32"]),
    ]
    cast16 = SYM.cast(x, dtype=np.float16)  # (a numpy type is written by name)
    assert json.loads(cast16.tojson())["nodes"][1]["attrs"] == {"dtype": "float16"}
    expected.append((cast16, ["float32"], ["float16"]))
    for sym, args, outs in expected:
        a, o, _ = sym.infer_type(x=np.float32)
        assert [np.dtype(t).name for t in a] == args
        assert [np.dtype(t).name for t in o] == outs


class _Picked(mx.gluon.HybridBlock):
    def hybrid_forward(self, F: Any, x: Any) -> Any:
        y = F.take(x, F.argmax(x, axis=1), axis=0)
        z = F.max(F.tile(F.arccos(F.clip(y, -0.5, 0.5)), reps=(1, 2)), axis=1)
        return z + F.sum_axis(F.flip(x, axis=0), axis=1)


def test_hybridized_block_matches_mxnet() -> None:
    """A Gluon block of these operators, hybridized (run as a symbol graph): output and input
    gradient as mxnet 1.9.1 printed them for the same input."""
    net = _Picked()
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (3, 3)))
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward()
    # written by mxnet 1.9.1
    np.testing.assert_allclose(y.asnumpy(), [3.3101323, 1.9248126, 2.4294808], rtol=1e-6)
    want = [[1.0, 1.0, 1.0], [1.0, -1.02373, 1.0], [-3.0315318, 1.0, 1.0]]
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)


def test_partial_shape_inference_as_mxnet() -> None:
    """``infer_shape_partial`` (shapes printed by mxnet 1.9.1 for the same symbols)."""
    x, y, z = mx.sym.var("x"), mx.sym.var("y"), mx.sym.var("z")
    cases: list[tuple[Any, dict[str, Any], list[Any], list[Any]]] = [
        (SYM.add_n(x, y, z), {"y": (2, 3)}, [(2, 3)] * 3, [(2, 3)]),
        (SYM.max(x, axis=1, exclude=True), {"x": (2, 3, 4)}, [(2, 3, 4)], [(3,)]),
        (SYM.prod(x, axis=(0, 2), keepdims=True), {"x": (2, 3, 4)}, [(2, 3, 4)], [(1, 3, 1)]),
        (SYM.nansum(x), {"x": (2, 3)}, [(2, 3)], [(1,)]),
        (SYM.arccos(x) + y, {"y": (2, 3)}, [(2, 3), (2, 3)], [(2, 3)]),
        (SYM.broadcast_greater(x, y), {"x": (2, 1), "y": (1, 3)}, [(2, 1), (1, 3)], [(2, 3)]),
        (
            SYM.SequenceMask(x, y, use_sequence_length=True, axis=1),
            {"x": (2, 5, 3)},
            [(2, 5, 3), (2,)],
            [(2, 5, 3)],
        ),
        (
            SYM.SequenceReverse(x, y, use_sequence_length=True),
            {"x": (5, 2, 3)},
            [(5, 2, 3), (2,)],
            [(5, 2, 3)],
        ),
    ]
    for sym, given, args, outs in cases:
        a, o, _ = sym.infer_shape_partial(**given)
        assert [tuple(s) for s in a] == args and [tuple(s) for s in o] == outs


def test_axis_none_mask_dtype_names_and_number_extremes_as_mxnet() -> None:
    """Values mxnet 1.9.1 gives: ``axis=None`` of sort/argsort/topk is the flattened array
    (it was dropped: the last axis), written to JSON; topk's mask has the data's dtype;
    unnamed nodes are named in lower case (``rnn0_parameters``, so mxnet's checkpoints load);
    ``maximum``/``minimum`` of numbers take mxnet's side on NaN."""
    x = SYM.var("x")
    data = mx.nd.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])

    def ev(s: Any) -> Any:
        return s.bind(mx.cpu(), {"x": data}).forward()[0].asnumpy().tolist()

    assert ev(SYM.sort(x, axis=None)) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert ev(SYM.argsort(x, axis=None)) == [3.0, 1.0, 2.0, 0.0, 5.0, 4.0]
    assert ev(SYM.topk(x, axis=None, k=2, ret_typ="value")) == [5.0, 4.0]
    assert SYM.topk(x, axis=None, k=2).tojson().count('"axis"') == 1
    assert SYM.topk(x, k=1, ret_typ="mask").infer_type(x="float64")[1] == [np.float64]
    args = SYM.RNN(x, state_size=4, num_layers=1, mode="gru").list_arguments()
    assert args[1].startswith("rnn") and args[1].endswith("_parameters")
    assert (
        SYM.SequenceMask(x, use_sequence_length=True).list_arguments()[1].startswith("sequencemask")
    )
    hi, lo = SYM.maximum(1, float("nan")), SYM.minimum(float("nan"), 1)
    assert np.isnan(hi) and lo == 1


# -- vision, array and linear algebra operators (sym_ops_more2_reference) -------------------------

# expected values written by mxnet 1.9.1 (make_sym_ops_more2_reference.py)
REF2 = json.loads((DATA / "sym_ops_more2_reference.json").read_text(encoding="utf-8"))["cases"]
ARR2 = dict(np.load(DATA / "sym_ops_more2_reference.npz"))
#: cases compared more loosely (float32 sums of products, factorizations, bilinear weights)
_LOOSE2 = {"lrn", "potrf", "potri", "trsm", "inverse", "det", "det_ns", "sumlogdiag", "spatial"}


def _run2(sym: Any, cid: str, case: dict[str, Any]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    args = {n: mx.nd.array(ARR2[f"{cid}/{n}"]) for n in sym.list_arguments()}
    grads = {n: mx.nd.zeros(args[n].shape) for n in case["grads"]}
    reqs = {n: ("write" if n in grads else "null") for n in args}
    ex = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=reqs)
    value = ex.forward(is_train=True)[0].asnumpy()
    if case["grads"]:
        ex.backward([mx.nd.array(ARR2[f"{cid}/head"], dtype=value.dtype)])
    return value, {n: g.asnumpy() for n, g in grads.items()}


def _check2(sym: Any, cid: str, case: dict[str, Any]) -> None:
    value, grads = _run2(sym, cid, case)
    tol = 1e-4 if cid in _LOOSE2 else 1e-5
    assert value.dtype.name == case["out_dtype"]
    np.testing.assert_allclose(value, ARR2[f"{cid}/out"], rtol=tol, atol=tol)
    for n, g in grads.items():
        np.testing.assert_allclose(g, ARR2[f"{cid}/grad_{n}"], rtol=tol, atol=tol)


@pytest.mark.parametrize("cid", sorted(REF2))
def test_more2_matches_mxnet(cid: str) -> None:
    case = REF2[cid]
    sym, _ = _build(case)
    assert sym.list_outputs() == case["outputs"]
    assert sym.list_arguments() == case["arguments"]
    shapes = {n: ARR2[f"{cid}/{n}"].shape for n in sym.list_arguments()}
    arg_shapes, out_shapes, _ = sym.infer_shape(**shapes)
    assert [list(s) for s in arg_shapes] == case["arg_shapes"]
    assert [list(s) for s in out_shapes] == case["out_shapes"]
    mine, theirs = json.loads(sym.tojson()), json.loads(case["json"])
    assert [[n["op"], n.get("attrs", {})] for n in mine["nodes"] if n["op"] != "null"] == case[
        "nodes"
    ]
    assert mine["node_row_ptr"] == theirs["node_row_ptr"]
    _check2(sym, cid, case)


@pytest.mark.parametrize("cid", sorted(REF2))
def test_more2_loads_mxnet_json(cid: str) -> None:
    case = REF2[cid]
    sym = mx.sym.load_json(case["json"])
    assert sym.list_arguments() == case["arguments"]
    assert sym.list_outputs() == case["outputs"]
    again = json.loads(mx.sym.load_json(sym.tojson()).tojson())["nodes"]
    assert [[n["op"], n.get("attrs", {})] for n in again if n["op"] != "null"] == case["nodes"]
    _check2(sym, cid, case)


_FD2 = [
    ("LRN", [((1, 4, 2, 2), "n")], {"nsize": 3, "alpha": 0.1}),
    ("UpSampling", [((1, 1, 2, 2), "n")], {"scale": 2, "sample_type": "nearest"}),
    ("Crop", [((1, 1, 4, 4), "n")], {"h_w": (2, 3), "offset": (1, 0)}),
    ("Correlation", [((1, 2, 3, 3), "n"), ((1, 2, 3, 3), "n")], {"pad_size": 1}),
    ("GridGenerator", [((1, 6), "n")], {"transform_type": "affine", "target_shape": (2, 3)}),
    ("BilinearSampler", [((1, 1, 3, 3), "n"), ((1, 2, 2, 2), "u")], {}),
    (
        "SpatialTransformer",
        [((1, 1, 3, 3), "n"), ((1, 6), "u")],
        {"target_shape": (2, 2), "transform_type": "affine", "sampler_type": "bilinear"},
    ),
    ("cumsum", [((2, 3), "n")], {"axis": 0}),
    ("diag", [((3, 3), "n")], {"k": -1}),
    ("depth_to_space", [((1, 4, 1, 2), "n")], {"block_size": 2}),
    ("space_to_depth", [((1, 1, 2, 4), "n")], {"block_size": 2}),
    ("gather_nd", [((3, 2), "n"), ((1, 4), "i3")], {}),
    ("scatter_nd", [((2,), "n"), ((2, 2), "d")], {"shape": (2, 2)}),
    ("linalg_gemm", [((2, 3), "n"), ((3, 2), "n"), ((2, 2), "n")], {"beta": 0.5}),
    ("linalg_potri", [((3, 3), "tril")], {}),
    ("linalg_trmm", [((2, 2), "tril"), ((2, 3), "n")], {"transpose": True}),
    ("linalg_trsm", [((3, 3), "tril"), ((3, 2), "n")], {"alpha": 2.0}),
    ("linalg_syrk", [((2, 3), "n")], {}),
    ("linalg_sumlogdiag", [((3, 3), "spd")], {}),
    ("linalg_inverse", [((3, 3), "spd")], {}),
    ("linalg_det", [((2, 2, 2), "n")], {}),
    ("linalg_extractdiag", [((3, 3), "n")], {}),
    ("linalg_makediag", [((2,), "n")], {"offset": 1}),
]


@pytest.mark.parametrize("fn, inputs, kwargs", _FD2, ids=[c[0] for c in _FD2])
def test_more2_float64_gradients_against_finite_differences(
    fn: str, inputs: list[Any], kwargs: dict[str, Any]
) -> None:
    vals = _fd_inputs(inputs, 1)
    sym = getattr(mx.sym, fn)(*[mx.sym.var(n) for n in vals], **kwargs)
    wrt = [n for (_, kind), n in zip(inputs, vals) if kind in ("n", "u", "tril")]
    if fn in ("linalg_sumlogdiag", "linalg_inverse"):
        wrt = ["x0"]  # (an spd matrix, small perturbations keep it definite)
    _fd_check(sym, vals, wrt)


def test_more2_potrf_gradient_is_symmetric() -> None:
    """``linalg_potrf`` reads the lower triangle of ``A``; its gradient is mxnet's symmetric
    one (``G + G^T - diag(G)`` restricted to the lower triangle is the derivative along the
    lower triangle's entries, checked against float64 finite differences)."""
    m = np.random.RandomState(2).randn(3, 3)
    a = m @ m.T + 3 * np.eye(3)
    head = np.random.RandomState(3).randn(3, 3)
    x = mx.nd.array(a, dtype="float64")
    gx = mx.nd.zeros((3, 3), dtype="float64")
    ex = SYM.linalg_potrf(mx.sym.var("a")).bind(mx.cpu(), {"a": x}, args_grad={"a": gx})
    ex.forward(is_train=True)
    ex.backward([mx.nd.array(head, dtype="float64")])
    g = gx.asnumpy()
    np.testing.assert_allclose(g, g.T, rtol=1e-12)

    def f(v: np.ndarray) -> float:
        return float((np.linalg.cholesky(np.tril(v) + np.tril(v, -1).T) * head).sum())

    num = np.zeros_like(a)
    for i in zip(*np.tril_indices(3)):
        p, q = a.copy(), a.copy()
        p[i] += 1e-6
        q[i] -= 1e-6
        num[i] = (f(p) - f(q)) / 2e-6
    np.testing.assert_allclose(np.tril(g + g.T - np.diag(np.diag(g))), num, atol=1e-7, rtol=1e-5)


def test_more2_second_derivative_of_linalg_det() -> None:
    """The executor's gradient of ``linalg_det`` is the ``mx.nd`` one, which differentiates
    again: d/dA of ``sum(grad det(A))`` against finite differences."""
    a = np.array([[1.0, 0.3, -0.2], [0.1, 2.0, 0.4], [0.5, -0.3, 1.5]])
    x = mx.nd.array(a, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        (g,) = mx.autograd.grad(mx.nd.linalg_det(x), [x], create_graph=True)
        s = g.sum()
    s.backward()
    gx = mx.nd.zeros((3, 3), dtype="float64")
    ex = SYM.linalg.det(mx.sym.var("a")).bind(mx.cpu(), {"a": x}, args_grad={"a": gx})
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones((1,), dtype="float64")])
    np.testing.assert_allclose(gx.asnumpy(), g.asnumpy(), rtol=1e-12)
    np.testing.assert_allclose(g.asnumpy(), np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-10)

    def first(m: np.ndarray) -> float:
        return float((np.linalg.det(m) * np.linalg.inv(m).T).sum())

    num = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        p, m = a.copy(), a.copy()
        p[i] += 1e-6
        m[i] -= 1e-6
        num[i] = (first(p) - first(m)) / 2e-6
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-5, atol=1e-7)


def test_more2_names_types_and_errors() -> None:
    """Unnamed nodes are named as mxnet 1.9.1 names them (``lrn0``, ``cumsum0``,
    ``linalg_gemm0``, ``gemm0`` for ``mx.sym.linalg.gemm``), ``cumsum``'s ``dtype`` sets the
    output dtype, and bad shapes raise mxnet's infer_shape error naming the operator."""
    x, y, z = mx.sym.var("x"), mx.sym.var("y"), mx.sym.var("z")
    names = {
        "lrn": SYM.LRN(x, nsize=3),
        "roipooling": SYM.ROIPooling(x, y, pooled_size=(2, 2), spatial_scale=1.0),
        "upsampling": SYM.UpSampling(x, scale=2, sample_type="nearest"),
        "crop": SYM.Crop(x, y),
        "cumsum": SYM.cumsum(x),
        "correlation": SYM.Correlation(x, y),
        "linalg_gemm": SYM.linalg_gemm(x, y, z),
        "gemm": SYM.linalg.gemm(x, y, z),
        "gemm2": SYM.linalg.gemm2(x, y),
        "det": SYM.linalg.det(x),
        "linalg_det": SYM.linalg_det(x),
    }
    for hint, s in names.items():
        assert re.fullmatch(hint + r"\d+", s.name), (hint, s.name)
    assert SYM.linalg_det(x, name="d").list_outputs() == ["d_output0"]  # (as mxnet)
    assert SYM.Correlation(name="c").list_arguments() == ["c_data1", "c_data2"]
    assert SYM.cumsum(x, dtype="float64").infer_type(x=np.float32)[1] == [np.float64]
    assert SYM.cumsum(x).infer_type(x=np.float64)[1] == [np.float64]
    with pytest.raises(mx.base.MXNetError, match=r"operator d: .*block_size"):
        SYM.depth_to_space(x, block_size=3, name="d").infer_shape(x=(1, 8, 2, 2))
    with pytest.raises(mx.base.MXNetError, match="operator g"):
        SYM.linalg_gemm(x, x, x, name="g").infer_shape(x=(2, 3))
    with pytest.raises(mx.base.MXNetError, match="operator r: rois"):
        SYM.ROIPooling(x, y, pooled_size=2, spatial_scale=1.0, name="r").infer_shape(
            x=(1, 2, 4, 4), y=(3, 4)
        )
    with pytest.raises(NotImplementedError, match="sample_type='nearest'"):
        SYM.UpSampling(x, scale=2, sample_type="bilinear", num_filter=1)
    with pytest.raises(mx.base.MXNetError, match="num_args"):
        SYM.Crop(x, y, num_args=1)
    assert SYM.gather_nd(x, y).infer_shape(x=(3, 4, 2), y=(2, 5))[1] == [(5, 2)]
    assert SYM.scatter_nd(x, y, shape=(3, 3)).infer_shape(x=(4,), y=(2, 4))[1] == [(3, 3)]

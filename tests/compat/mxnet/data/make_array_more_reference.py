"""Write array_more_reference.npz: values and gradients of mxnet 1.9.1's array, math and linear
algebra operators (tests/compat/mxnet/test_nd_array_more.py).

Run with mxnet 1.9.1 (numpy < 1.24) from this folder:
``python make_array_more_reference.py``. Each case names an ``mx.nd`` function (``linalg.X`` for
the namespace), its positional arguments (an input array's key, or ``{"num": v}`` for a number),
its keyword arguments and whether its gradient is recorded; the inputs, the outputs, the head
gradients and the input gradients are stored under ``<case>/...`` keys, the case table as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

CASES: list[dict[str, Any]] = [
    # arithmetic, comparison, logical front-ends
    {"name": "add_bc", "fn": "add", "args": ["a23", "b13"], "grad": True},
    {"name": "add_num", "fn": "add", "args": ["a23", {"num": 2.5}], "grad": True},
    {"name": "subtract_rnum", "fn": "subtract", "args": [{"num": 2.0}, "a23"], "grad": True},
    {"name": "multiply_bc", "fn": "multiply", "args": ["a23", "b21"], "grad": True},
    {"name": "divide_bc", "fn": "divide", "args": ["a23", "pos13"], "grad": True},
    {
        "name": "true_divide_rnum",
        "fn": "true_divide",
        "args": [{"num": 3.0}, "pos13"],
        "grad": True,
    },
    {"name": "modulo_bc", "fn": "modulo", "args": ["m23", "d13"], "grad": True},
    {"name": "modulo_num", "fn": "modulo", "args": ["m23", {"num": 3.0}], "grad": True},
    {"name": "modulo_rnum", "fn": "modulo", "args": [{"num": 7.0}, "d13"], "grad": True},
    {"name": "broadcast_mod", "fn": "broadcast_mod", "args": ["m23", "d13"], "grad": True},
    {"name": "broadcast_mod_int", "fn": "broadcast_mod", "args": ["i23", "id13"], "grad": False},
    {"name": "broadcast_hypot", "fn": "broadcast_hypot", "args": ["a23", "b13"], "grad": True},
    {"name": "equal_bc", "fn": "equal", "args": ["c23", "c13"], "grad": True},
    {"name": "not_equal_num", "fn": "not_equal", "args": ["c23", {"num": 1.0}], "grad": True},
    {"name": "greater_rnum", "fn": "greater", "args": [{"num": 1.0}, "c23"], "grad": True},
    {"name": "greater_equal", "fn": "greater_equal", "args": ["c23", "c13"], "grad": True},
    {"name": "lesser", "fn": "lesser", "args": ["c23", "c13"], "grad": True},
    {"name": "lesser_equal_num", "fn": "lesser_equal", "args": ["c23", {"num": 1.0}], "grad": True},
    {"name": "logical_and", "fn": "logical_and", "args": ["c23", "c13"], "grad": True},
    {"name": "logical_or_num", "fn": "logical_or", "args": ["c23", {"num": 0.0}], "grad": True},
    {"name": "logical_xor", "fn": "logical_xor", "args": ["c23", "c13"], "grad": True},
    {"name": "logical_not", "fn": "logical_not", "args": ["c23"], "grad": True},
    # arrays
    {"name": "concatenate", "fn": "concatenate", "args": [["a23", "b13"]], "grad": False},
    {"name": "cumsum_flat", "fn": "cumsum", "args": ["a23"], "grad": True},
    {"name": "cumsum_ax1", "fn": "cumsum", "args": ["a234"], "kw": {"axis": 1}, "grad": True},
    {
        "name": "cumsum_int",
        "fn": "cumsum",
        "args": ["i23"],
        "kw": {"axis": 1, "dtype": "float64"},
        "grad": False,
    },
    {"name": "diag_vec_k1", "fn": "diag", "args": ["v3"], "kw": {"k": 1}, "grad": True},
    {"name": "diag_vec_km2", "fn": "diag", "args": ["v3"], "kw": {"k": -2}, "grad": True},
    {"name": "diag_mat", "fn": "diag", "args": ["a34"], "kw": {"k": -1}, "grad": True},
    {
        "name": "diag_3d",
        "fn": "diag",
        "args": ["a234"],
        "kw": {"k": 1, "axis1": 2, "axis2": 0},
        "grad": True,
    },
    {"name": "gather_nd", "fn": "gather_nd", "args": ["a234", "gidx"], "grad": True},
    {
        "name": "scatter_nd",
        "fn": "scatter_nd",
        "args": ["v3", "sidx"],
        "kw": {"shape": [2, 4]},
        "grad": True,
    },
    {
        "name": "depth_to_space",
        "fn": "depth_to_space",
        "args": ["x4822"],
        "kw": {"block_size": 2},
        "grad": True,
    },
    {
        "name": "space_to_depth",
        "fn": "space_to_depth",
        "args": ["x1244"],
        "kw": {"block_size": 2},
        "grad": True,
    },
    {"name": "moveaxis", "fn": "moveaxis", "args": ["a234", {"num": 0}, {"num": -1}], "grad": True},
    {"name": "max_axis", "fn": "max_axis", "args": ["a234"], "kw": {"axis": 1}, "grad": True},
    {
        "name": "min_axis",
        "fn": "min_axis",
        "args": ["a234"],
        "kw": {"axis": [0, 2], "keepdims": True},
        "grad": True,
    },
    {"name": "moments", "fn": "moments", "args": ["a234"], "kw": {"axes": [0, 2]}, "grad": True},
    {
        "name": "moments_keep",
        "fn": "moments",
        "args": ["a234"],
        "kw": {"axes": [1], "keepdims": True},
        "grad": True,
    },
    {"name": "batch_take", "fn": "batch_take", "args": ["a34", "bt_idx"], "grad": False},
    {
        "name": "choose_element_0index",
        "fn": "choose_element_0index",
        "args": ["a34", "ch_idx"],
        "grad": True,
    },
    {
        "name": "fill_element_0index",
        "fn": "fill_element_0index",
        "args": ["a34", "v3", "ch_idx"],
        "grad": False,
    },
    {"name": "khatri_rao", "fn": "khatri_rao", "args": ["a23", "a33"], "grad": False},
    {
        "name": "ravel_multi_index",
        "fn": "ravel_multi_index",
        "args": ["rmi"],
        "kw": {"shape": [3, 4]},
        "grad": False,
    },
    {
        "name": "unravel_index",
        "fn": "unravel_index",
        "args": ["uri"],
        "kw": {"shape": [3, 4]},
        "grad": False,
    },
    {
        "name": "split_v2",
        "fn": "split_v2",
        "args": ["a234", [1, 3]],
        "kw": {"axis": 2},
        "grad": True,
    },
    {
        "name": "split_v2_sq",
        "fn": "split_v2",
        "args": ["a234", {"num": 2}],
        "kw": {"squeeze_axis": True},
        "grad": True,
    },
    {"name": "softmin", "fn": "softmin", "args": ["a234"], "kw": {"axis": 1}, "grad": True},
    {
        "name": "softmin_t",
        "fn": "softmin",
        "args": ["a23"],
        "kw": {"temperature": 2.0},
        "grad": True,
    },
    {
        "name": "softmax_cross_entropy",
        "fn": "softmax_cross_entropy",
        "args": ["a34", "sce_label"],
        "grad": True,
    },
    {
        "name": "im2col",
        "fn": "im2col",
        "args": ["x2355"],
        "kw": {"kernel": [3, 2], "stride": [2, 1], "dilate": [1, 2], "pad": [1, 1]},
        "grad": True,
    },
    {
        "name": "col2im",
        "fn": "col2im",
        "args": ["cols"],
        "kw": {
            "output_size": [5, 5],
            "kernel": [3, 2],
            "stride": [2, 1],
            "dilate": [1, 2],
            "pad": [1, 1],
        },
        "grad": True,
    },
    {
        "name": "histogram",
        "fn": "histogram",
        "args": ["a234"],
        "kw": {"bins": 4, "range": [-1.5, 1.5]},
        "grad": False,
    },
    {"name": "eye", "fn": "eye", "args": [{"num": 3}, {"num": 4}, {"num": -1}], "grad": False},
    # linear algebra
    {
        "name": "gemm",
        "fn": "linalg.gemm",
        "args": ["L234", "L243", "L233"],
        "kw": {"alpha": 0.5, "beta": 2.0, "transpose_b": False},
        "grad": True,
    },
    {
        "name": "gemm_t",
        "fn": "linalg_gemm",
        "args": ["L243", "L234", "L233"],
        "kw": {"transpose_a": True, "transpose_b": True},
        "grad": True,
    },
    {
        "name": "gemm2",
        "fn": "linalg.gemm2",
        "args": ["L234", "L243"],
        "kw": {"alpha": 2.0},
        "grad": True,
    },
    {"name": "potrf", "fn": "linalg.potrf", "args": ["spd"], "grad": True},
    {"name": "potri", "fn": "linalg.potri", "args": ["chol"], "grad": True},
    {
        "name": "trmm",
        "fn": "linalg.trmm",
        "args": ["tri", "L233"],
        "kw": {"alpha": 2.0},
        "grad": True,
    },
    {
        "name": "trmm_r_up_t",
        "fn": "linalg.trmm",
        "args": ["tri", "L233"],
        "kw": {"rightside": True, "lower": False, "transpose": True},
        "grad": True,
    },
    {
        "name": "trsm",
        "fn": "linalg.trsm",
        "args": ["tri", "L233"],
        "kw": {"alpha": 0.5},
        "grad": True,
    },
    {
        "name": "trsm_r_up_t",
        "fn": "linalg.trsm",
        "args": ["tri", "L233"],
        "kw": {"rightside": True, "lower": False, "transpose": True},
        "grad": True,
    },
    {"name": "syrk", "fn": "linalg.syrk", "args": ["L234"], "kw": {"alpha": 1.5}, "grad": True},
    {
        "name": "syrk_t",
        "fn": "linalg.syrk",
        "args": ["L234"],
        "kw": {"transpose": True},
        "grad": True,
    },
    {"name": "gelqf", "fn": "linalg.gelqf", "args": ["L234"], "grad": True},
    {"name": "sumlogdiag", "fn": "linalg.sumlogdiag", "args": ["spd"], "grad": True},
    {"name": "sumlogdiag2", "fn": "linalg_sumlogdiag", "args": ["spd2"], "grad": True},
    {
        "name": "extractdiag",
        "fn": "linalg.extractdiag",
        "args": ["L233"],
        "kw": {"offset": 1},
        "grad": True,
    },
    {
        "name": "makediag",
        "fn": "linalg.makediag",
        "args": ["L233"],
        "kw": {"offset": -1},
        "grad": True,
    },
    {"name": "extracttrian", "fn": "linalg.extracttrian", "args": ["sq44"], "grad": True},
    {
        "name": "extracttrian_up",
        "fn": "linalg.extracttrian",
        "args": ["sq44"],
        "kw": {"lower": False},
        "grad": True,
    },
    {
        "name": "extracttrian_o1",
        "fn": "linalg.extracttrian",
        "args": ["sq44"],
        "kw": {"offset": 1},
        "grad": True,
    },
    {
        "name": "extracttrian_om1",
        "fn": "linalg.extracttrian",
        "args": ["sq44"],
        "kw": {"offset": -1},
        "grad": True,
    },
    {"name": "maketrian", "fn": "linalg.maketrian", "args": ["v6"], "grad": True},
    {
        "name": "maketrian_o1",
        "fn": "linalg.maketrian",
        "args": ["v6"],
        "kw": {"offset": 1},
        "grad": True,
    },
    {
        "name": "maketrian_up",
        "fn": "linalg.maketrian",
        "args": ["v6"],
        "kw": {"lower": False, "offset": -1},
        "grad": True,
    },
    {"name": "inverse", "fn": "linalg.inverse", "args": ["L233"], "grad": True},
    {"name": "det", "fn": "linalg.det", "args": ["L233"], "grad": True},
    {"name": "det2", "fn": "linalg_det", "args": ["spd2"], "grad": True},
    {"name": "slogdet", "fn": "linalg.slogdet", "args": ["L233"], "grad": True},
]


#: inputs holding indices or labels: no gradient is asked for them
INDEX_INPUTS = ("gidx", "sidx", "ch_idx", "sce_label", "bt_idx")


def inputs() -> dict[str, np.ndarray]:
    """The input arrays (float32 unless integer), from a fixed seed."""
    rng = np.random.RandomState(7)

    def f(*shape: int) -> np.ndarray:
        return rng.randn(*shape).astype(np.float32)

    x: dict[str, np.ndarray] = {
        "a23": f(2, 3),
        "b13": f(1, 3),
        "b21": f(2, 1),
        "pos13": rng.uniform(0.5, 2.0, (1, 3)).astype(np.float32),
        "m23": np.array([[5.5, -5.5, 4.0], [-7.25, 2.0, 0.5]], np.float32),
        "d13": np.array([[3.0, -2.5, 1.5]], np.float32),
        "i23": np.array([[5, -5, 7], [-7, 2, 9]], np.int32),
        "id13": np.array([[3, -3, 4]], np.int32),
        "c23": np.array([[0.0, 1.0, 2.0], [1.0, 0.0, -1.0]], np.float32),
        "c13": np.array([[1.0, 1.0, 0.0]], np.float32),
        "a234": f(2, 3, 4),
        "a34": f(3, 4),
        "a33": f(3, 3),
        "v3": f(3),
        "v6": f(6),
        "gidx": np.array([[1, 0, 1], [2, 1, 0]], np.float32),
        "sidx": np.array([[1, 0, 0], [3, 0, 2]], np.float32),
        "x4822": f(1, 8, 2, 2),
        "x1244": f(1, 2, 4, 4),
        "bt_idx": np.array([3, 0, 2], np.int32),
        "ch_idx": np.array([3, 0, 2], np.float32),
        "rmi": np.array([[0, 1, 2], [3, 0, 1]], np.float32),
        "uri": np.array([0, 5, 11, 7], np.float32),
        "sce_label": np.array([1, 3, 0], np.float32),
        "x2355": f(2, 3, 5, 5),
        "L234": f(2, 3, 4),
        "L243": f(2, 4, 3),
        "L233": f(2, 3, 3) + 2.0 * np.eye(3, dtype=np.float32),
        "sq44": f(4, 4),
    }
    m = f(2, 3, 3)
    x["spd"] = (m @ m.transpose(0, 2, 1) + 3 * np.eye(3)).astype(np.float32)
    m2 = f(4, 4)
    x["spd2"] = (m2 @ m2.T + 4 * np.eye(4)).astype(np.float32)
    x["chol"] = np.linalg.cholesky(x["spd"].astype(np.float64)).astype(np.float32)
    t = f(2, 3, 3)
    x["tri"] = (t + 3.0 * np.sign(np.diagonal(t, 0, 1, 2))[..., None] * np.eye(3)).astype(
        np.float32
    )
    # im2col of x2355 (kernel 3x2, stride 2x1, dilate 1x2, pad 1x1): (2, 18, 3 * 5)
    x["cols"] = f(2, 18, 15)
    return x


def main() -> None:
    import mxnet as mx  # type: ignore[import-not-found]  # mxnet 1.9.1

    x = inputs()
    rng = np.random.RandomState(11)
    out: dict[str, np.ndarray] = {f"input/{k}": v for k, v in x.items()}
    for case in CASES:
        name = case["name"]
        fn: Any = mx.nd
        for part in case["fn"].split("."):
            fn = getattr(fn, part)
        leaves: list[tuple[str, Any]] = []

        def arg(a: Any, case: dict[str, Any] = case, leaves: list[Any] = leaves) -> Any:
            if isinstance(a, dict):
                return a["num"]
            if isinstance(a, list) and a and isinstance(a[0], str):
                return [arg(b) for b in a]
            if isinstance(a, list):
                return tuple(a)
            v = mx.nd.array(x[a], dtype=x[a].dtype)
            if case["grad"] and x[a].dtype.kind == "f" and a not in INDEX_INPUTS:
                v.attach_grad()
                leaves.append((a, v))
            return v

        args = [arg(a) for a in case["args"]]
        kw = case.get("kw", {})
        if case["grad"]:
            with mx.autograd.record():
                res = fn(*args, **kw)
                outs = list(res) if isinstance(res, (list, tuple)) else [res]
                heads = [rng.randn(*o.shape).astype(np.float32) for o in outs]
                loss = sum((o * mx.nd.array(h)).sum() for o, h in zip(outs, heads))
            loss.backward()
            for i, h in enumerate(heads):
                out[f"{name}/head{i}"] = h
            for k, v in leaves:
                out[f"{name}/grad/{k}"] = v.grad.asnumpy()
        else:
            res = fn(*args, **kw)
            outs = list(res) if isinstance(res, (list, tuple)) else [res]
        for i, o in enumerate(outs):
            out[f"{name}/out{i}"] = o.asnumpy() if hasattr(o, "asnumpy") else np.asarray(o)
    out["cases"] = np.array(json.dumps(CASES))
    out["version"] = np.array(mx.__version__)
    path = Path(__file__).with_name("array_more_reference.npz")
    np.savez_compressed(path, **out)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

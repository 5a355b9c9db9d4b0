"""Steps recorded into CUDA graphs since 2026-11-26: batched products, index checks, pooling, pad.

Compiled steps holding BatchMatmul, Einsum, Embed (and EmbedBackward), OneHot, AveragePooling,
Pad (constant, reflect, repeat), GetItem with integer-array keys and Prod on ``cuda`` are
recorded at their third call (``capture_refused`` is None) and give the eager step's results over
several calls with changed inputs; an index out of range raises, from a recorded step, the error
the eager step raises. Batched products inside a recording go through ``cublasGemmStridedBatchedEx``
(:mod:`gradhub_cuda.cublas_capture`): :func:`test_batched_products_against_cupy` compares them
with ``cupy.matmul`` and reports which shapes agree bit for bit
(``GRADHUB_PRODUCTS_REPORT=<file>`` writes the report; ``-s`` prints it). Every test skips, with
one reason, where no usable CUDA device exists.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from cuda_helpers import agree_within, gpu, host_arrays

pytestmark = [gpu, pytest.mark.usefixtures("recording_on")]

F = gh.functions


def _cp() -> Any:
    import cupy

    return cupy


#: a recorded step's products run through cuBLAS called directly, where cuBLAS may pick another
#: kernel than for CuPy's call: results agree within this fraction of each array's largest value
_RTOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-13}


def _agree(got: list[np.ndarray], want: list[np.ndarray], what: str) -> bool:
    """Whether ``got`` equals ``want`` bit for bit; asserts they agree within :data:`_RTOL`."""
    return agree_within(got, want, what, _RTOL)


def _params(rng: np.random.Generator, shapes: list[tuple[int, ...]], dtype: Any) -> list[Any]:
    cp = _cp()
    return [gh.Variable(cp.asarray(rng.standard_normal(s).astype(dtype) * 0.5)) for s in shapes]


def _with_grads(p: list[gh.Variable], f: Callable[..., Any]) -> Callable[..., Any]:
    """The step ``x -> (loss, d loss / d p)`` with ``loss = sum(f(x, *p) ** 2)``."""

    def step(*xs: Any) -> Any:
        y = f(*xs, *p)
        loss = F.sum(y * y)
        return (loss, *gh.grad([loss], p, create_graph=False))

    return step


def _recorded_like_eager(
    eager: Callable[..., Any], calls: list[tuple[Any, ...]], what: str
) -> tuple[Any, int]:
    """Run ``gh.compile(eager)`` on ``calls``; assert it was recorded, replayed from the third
    call on, and agrees with ``eager`` on every call; returns the step and how many calls were
    bit for bit."""
    step = gh.compile(eager)
    exact = 0
    for k, args in enumerate(calls):
        got = host_arrays(step(*args))
        exact += _agree(got, host_arrays(eager(*args)), f"{what}, call {k + 1}")
    assert step.capture_refused is None, f"{what}: {step.capture_refused}"
    trace = list(step.traces.values())[-1]
    assert trace.captured is not None
    assert trace.captured.graph.launches == len(calls) - 2
    return step, exact


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("a_shape", "w_shape", "ta", "tb"),
    [
        ((4, 3, 5), (4, 5, 6), False, False),
        ((4, 5, 3), (4, 6, 5), True, True),
        ((2, 3, 4, 5), (5, 6), False, False),
        ((3, 4, 5), (1, 5, 2), False, False),
    ],
    ids=["batched", "transposed", "matrix weight", "broadcast weight"],
)
def test_a_batch_matmul_step_is_recorded(
    dtype: Any, a_shape: tuple[int, ...], w_shape: tuple[int, ...], ta: bool, tb: bool
) -> None:
    cp = _cp()
    rng = np.random.default_rng(0)
    p = _params(rng, [w_shape], dtype)
    eager = _with_grads(p, lambda a, w: F.batch_matmul(a, w, transpose_a=ta, transpose_b=tb))
    calls = [(cp.asarray(rng.standard_normal(a_shape).astype(dtype)),) for _ in range(5)]
    _recorded_like_eager(eager, calls, "BatchMatmul")


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
        ("ij,jk->ik", [(4, 5), (5, 3)]),
        ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),
    ],
    ids=["batched", "matrix", "attention scores"],
)
def test_an_einsum_step_is_recorded(equation: str, shapes: list[tuple[int, ...]]) -> None:
    cp = _cp()
    rng = np.random.default_rng(1)
    p = _params(rng, [shapes[1]], np.float32)
    eager = _with_grads(p, lambda a, b: F.einsum(a, b, equation=equation))
    calls = [(cp.asarray(rng.standard_normal(shapes[0]).astype(np.float32)),) for _ in range(5)]
    _recorded_like_eager(eager, calls, f"Einsum {equation}")


def _ids(rng: np.random.Generator, vocab: int, shape: tuple[int, ...]) -> Any:
    """Distinct ids (EmbedBackward adds duplicates with atomics, in no fixed order)."""
    n = int(np.prod(shape))
    return _cp().asarray(rng.permutation(vocab)[:n].reshape(shape))


def _raises_as_eager(step: Any, eager: Callable[..., Any], args: tuple[Any, ...]) -> str:
    """``step(*args)`` raises the ValueError ``eager(*args)`` raises; returns its message."""
    with pytest.raises(ValueError) as want:
        eager(*args)
    with pytest.raises(ValueError) as got:
        step(*args)
    assert str(got.value) == str(want.value)
    return str(got.value)


def test_an_embed_step_is_recorded_and_a_bad_id_raises_as_eager() -> None:
    cp = _cp()
    rng = np.random.default_rng(2)
    p = _params(rng, [(10, 4)], np.float32)
    eager = _with_grads(p, lambda ids, w: F.embed(ids, w))
    calls = [(_ids(rng, 10, (2, 3)),) for _ in range(4)]
    step, _ = _recorded_like_eager(eager, calls, "Embed")
    bad = calls[0][0].copy()
    bad[1, 2] = 10
    assert "ids in x0 must be in [0, 10)" in _raises_as_eager(step, eager, (bad,))
    negative = calls[1][0].copy()
    negative[0, 0] = -1
    _raises_as_eager(step, eager, (negative,))
    # good ids again: a plan run, then recorded again
    for k, args in enumerate(calls + calls[:1]):
        _agree(
            host_arrays(step(*args)),
            host_arrays(eager(*args)),
            f"Embed after the error, call {k + 1}",
        )
    assert step.capture_refused is None
    assert list(step.traces.values())[-1].captured is not None
    floats = (cp.asarray(cp.asnumpy(calls[0][0]).astype(np.float32)),)
    _recorded_like_eager(eager, [floats] * 3, "Embed of float ids")


def test_a_one_hot_step_is_recorded_and_a_bad_label_raises_as_eager() -> None:
    cp = _cp()
    rng = np.random.default_rng(3)
    p = _params(rng, [(12, 3)], np.float32)

    def f(labels: Any, w: Any) -> Any:
        return F.affine(F.reshape(F.one_hot(labels, (3, 4)), (5, 12)), w)

    eager = _with_grads(p, f)
    calls = [
        (cp.asarray(np.stack([rng.integers(0, 3, 5), rng.integers(0, 4, 5)], axis=1)),)
        for _ in range(4)
    ]
    step, _ = _recorded_like_eager(eager, calls, "OneHot")
    bad = calls[0][0].copy()
    bad[2, 1] = 4
    assert "x[..., 1] must be in [0, 4)" in _raises_as_eager(step, eager, (bad,))
    for k, args in enumerate(calls):
        _agree(
            host_arrays(step(*args)),
            host_arrays(eager(*args)),
            f"OneHot after the error, call {k + 1}",
        )
    assert list(step.traces.values())[-1].captured is not None


@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel": (2, 2)},
        {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "including_pad": False},
    ],
    ids=["plain", "padded, excluding the padding"],
)
def test_an_average_pooling_step_is_recorded(attrs: dict[str, Any]) -> None:
    cp = _cp()
    rng = np.random.default_rng(4)
    p = _params(rng, [(1, 3, 1, 1)], np.float32)
    eager = _with_grads(p, lambda x, s: F.average_pooling(x * s, **attrs))
    calls = [(cp.asarray(rng.standard_normal((2, 3, 6, 6)).astype(np.float32)),) for _ in range(4)]
    _recorded_like_eager(eager, calls, "AveragePooling")


@pytest.mark.parametrize(
    ("attrs", "grads"),
    [
        ({"pad_width": (1, 2, 0, 1), "mode": "constant", "constant_value": 0.5}, True),
        ({"pad_width": (2, 1, 1, 1), "mode": "reflect"}, True),
        ({"pad_width": (1, 3), "mode": "repeat"}, True),
        ({"pad_width": (2, 1, 1, 1), "mode": "reflect"}, False),
    ],
    ids=["constant", "reflect", "repeat", "reflect, no gradient"],
)
def test_a_pad_step_is_recorded(attrs: dict[str, Any], grads: bool) -> None:
    cp = _cp()
    rng = np.random.default_rng(5)
    p = _params(rng, [(1, 4)], np.float32)
    if grads:
        eager = _with_grads(p, lambda x, s: F.pad(x * s, **attrs))
    else:

        def eager(x: Any) -> Any:
            return F.pad(x * p[0], **attrs)

    calls = [(cp.asarray(rng.standard_normal((3, 4)).astype(np.float32)),) for _ in range(4)]
    _recorded_like_eager(eager, calls, f"Pad {attrs['mode']}")


@pytest.mark.parametrize(
    "key",
    [np.array([2, 0, 2, 1]), (slice(None), np.array([3, 0]))],
    ids=["rows", "columns after a slice"],
)
def test_a_get_item_step_with_an_array_key_is_recorded(key: Any) -> None:
    cp = _cp()
    rng = np.random.default_rng(7)
    p = _params(rng, [(1, 4)], np.float32)
    eager = _with_grads(p, lambda x, s: (x * s)[key])
    calls = [(cp.asarray(rng.standard_normal((3, 4)).astype(np.float32)),) for _ in range(4)]
    _recorded_like_eager(eager, calls, "GetItem")


def test_a_prod_step_is_recorded_with_and_without_zeros() -> None:
    cp = _cp()
    rng = np.random.default_rng(8)
    p = _params(rng, [(1, 4, 1)], np.float64)
    eager = _with_grads(p, lambda x, s: F.prod(x * s, axis=1))
    calls = []
    for k in range(6):
        x = rng.standard_normal((3, 4, 2))
        if k % 2:
            x[1, 2, 0] = 0.0  # the other formula, chosen on the device at each launch
        calls.append((cp.asarray(x),))
    _recorded_like_eager(eager, calls, "Prod")


_PRODUCTS = [
    ((8, 16, 32), (8, 32, 24)),
    ((2, 3, 64, 48), (2, 3, 48, 64)),
    ((8, 16, 32), (32, 24)),
    ((16, 32), (8, 32, 24)),
    ((8, 1, 16, 32), (1, 4, 32, 24)),
    ((32,), (8, 32, 24)),
    ((8, 16, 32), (32,)),
    ((1, 256, 256), (1, 256, 256)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_products_against_cupy(dtype: Any) -> None:
    """``cublas_capture.batched_gemm`` and the same product recorded into a CUDA graph against
    ``cupy.matmul`` (outside a recording): bit for bit where cuBLAS runs the same kernel, else
    within :data:`_RTOL`; the report says which."""
    from gradhub_cuda import cublas_capture

    cp = _cp()
    rng = np.random.default_rng(6)
    dev = gh.Variable(cp.zeros(1)).device
    report = []
    for sa, sb in _PRODUCTS:
        a = cp.asarray(rng.standard_normal(sa).astype(dtype))
        b = cp.asarray(rng.standard_normal(sb).astype(dtype))
        want = cp.asnumpy(cp.matmul(a, b))
        direct = cp.asnumpy(cublas_capture.batched_gemm(cp, a, b))
        box: list[Any] = []
        graph = dev.capture(lambda a=a, b=b, box=box: box.append(cp.matmul(a, b)))
        assert graph.launch()
        recorded = cp.asnumpy(box[0])
        for how, got in (("direct", direct), ("recorded", recorded)):
            exact = _agree([got], [want], f"{sa} @ {sb} {how}")
            report.append(
                f"{np.dtype(dtype).name} {sa} @ {sb} {how}: "
                + ("bit for bit" if exact else "within tolerance, not bit for bit")
            )
    print("\n".join(report))
    path = os.environ.get("GRADHUB_PRODUCTS_REPORT")
    if path:
        with open(path, "a") as f:
            f.write("\n".join(report) + "\n")

"""mxnet's ``mx.test_utils`` comparison helpers, as mxnet 1.9.1 defines them.

``assert_almost_equal(a, b)`` passes where ``|a - b| <= atol + rtol * |b|`` elementwise
(numpy's ``allclose``); without ``rtol``/``atol`` the tolerances are the larger of the two
operands' dtype defaults (float16: rtol 1e-2, atol 1e-1; float32: 1e-4, 1e-3; float64: 1e-5,
1e-20; integers and bool: 0), as mxnet's. NDArrays are compared through ``asnumpy()``. A failure
raises ``AssertionError`` with mxnet's message (``Error 2.000000 exceeds tolerance rtol=...``).

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> mx.test_utils.assert_almost_equal(mx.nd.array([1.0, 2.0]), [1.00001, 2.0])
    >>> mx.test_utils.same(mx.nd.ones((2,)).asnumpy(), [1.0, 1.0])
    True
"""

from __future__ import annotations

import contextlib
import numbers
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

import gradhub_compat.mxnet as mx  # noqa: F401  (exported by ``import *``, as mxnet's)

from .context import Context, cpu
from .ndarray import NDArray, array

# No ``__all__``: as mxnet's module, ``from mxnet.test_utils import *`` also gives ``np``, ``mx``
# and ``NDArray``.

_INT_KINDS = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)


def default_context() -> Context:
    """The context tests run on: ``mx.cpu()``."""
    return cpu()


def default_dtype() -> type:
    """``numpy.float32``, mxnet's default dtype."""
    return np.float32


def default_rtols() -> dict[np.dtype, float]:
    """mxnet 1.9.1's relative tolerances per dtype (float16 1e-2, float32 1e-4, float64 1e-5)."""
    tols: dict[np.dtype, float] = {
        np.dtype(np.float16): 1e-2,
        np.dtype(np.float32): 1e-4,
        np.dtype(np.float64): 1e-5,
    }
    tols.update({np.dtype(t): 0.0 for t in _INT_KINDS})
    return tols


def default_atols() -> dict[np.dtype, float]:
    """mxnet 1.9.1's absolute tolerances per dtype (float16 1e-1, float32 1e-3, float64 1e-20)."""
    tols: dict[np.dtype, float] = {
        np.dtype(np.float16): 1e-1,
        np.dtype(np.float32): 1e-3,
        np.dtype(np.float64): 1e-20,
    }
    tols.update({np.dtype(t): 0.0 for t in _INT_KINDS})
    return tols


def get_atol(atol: float | None = None, dtype: Any = np.float64) -> float:
    """``atol``, or the default absolute tolerance of ``dtype`` (float64: 1e-20)."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_rtol(rtol: float | None = None, dtype: Any = np.float64) -> float:
    """``rtol``, or the default relative tolerance of ``dtype`` (float64: 1e-5)."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def _np(x: Any) -> np.ndarray:
    return x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)


def _tol(x: np.ndarray, tol: Any, defaults: dict[np.dtype, float]) -> float:
    if isinstance(tol, numbers.Number):
        return float(tol)  # type: ignore[arg-type]
    if isinstance(tol, dict) and x.dtype in tol:
        return float(tol[x.dtype])
    return defaults.get(x.dtype, 0.0)


def same(a: Any, b: Any) -> bool:
    """Whether two arrays have the same shape and elements (``numpy.array_equal``)."""
    return bool(np.array_equal(_np(a), _np(b)))


def almost_equal(
    a: Any,
    b: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    use_broadcast: bool = True,
) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (defaults: float64's tolerances)."""
    x, y = _np(a), _np(b)
    if not use_broadcast and x.shape != y.shape:
        return False
    return bool(np.allclose(x, y, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def assert_almost_equal(
    a: Any,
    b: Any,
    rtol: Any = None,
    atol: Any = None,
    names: tuple[str, str] = ("a", "b"),
    equal_nan: bool = False,
    use_broadcast: bool = True,
    mismatches: tuple[int, int] = (10, 10),
) -> None:
    """Raise ``AssertionError`` unless ``|a - b| <= atol + rtol * |b|`` elementwise, the
    tolerances defaulting to the larger of the operands' dtype defaults (mxnet 1.9.1)."""
    x, y = _np(a), _np(b)
    if not use_broadcast and x.shape != y.shape:
        raise AssertionError(
            f"assert_almost_equal: {names[0]}.shape = {x.shape} and {names[1]}.shape = "
            f"{y.shape} are not equal"
        )
    r = max(_tol(x, rtol, default_rtols()), _tol(y, rtol, default_rtols()))
    t = max(_tol(x, atol, default_atols()), _tol(y, atol, default_atols()))
    if x.dtype == np.bool_ and y.dtype == np.bool_:
        np.testing.assert_equal(x, y)
        return
    try:
        if np.allclose(x, y, rtol=r, atol=t, equal_nan=equal_nan):
            return
    except ValueError as e:  # shapes that do not broadcast
        raise AssertionError(f"assert_almost_equal: {names[0]} and {names[1]}: {e}") from None
    xb, yb = np.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
    absdiff = np.where(np.equal(xb, yb), 0.0, np.abs(xb - yb))
    violation = absdiff / (t + r * np.abs(yb) + 1e-20)
    violation = np.where(np.isnan(violation), np.inf, violation)
    idx = (
        tuple(int(i) for i in np.unravel_index(int(np.argmax(violation)), violation.shape))
        if violation.ndim
        else ()
    )
    bad = int(np.count_nonzero(~np.isclose(xb, yb, rtol=r, atol=t, equal_nan=equal_nan)))
    raise AssertionError(
        "Items are not equal:\n"
        f"Error {float(np.max(violation)):f} exceeds tolerance rtol={r:e}, atol={t:e} "
        f"(mismatch {100.0 * bad / max(xb.size, 1):f}%).\n"
        f"Location of maximum error: {idx}, {names[0]}={float(xb[idx]):.8f}, "
        f"{names[1]}={float(yb[idx]):.8f}"
    )


def assert_allclose(
    a: Any, b: Any, rtol: float = 1e-07, atol: float = 0, equal_nan: bool = True
) -> None:
    """``assert_almost_equal`` with numpy's ``assert_allclose`` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_exception(
    f: Any, exception_type: type[BaseException], *args: Any, **kwargs: Any
) -> None:
    """Raise ``AssertionError`` unless ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"assert_exception: {f!r} did not raise {exception_type.__name__}")


@contextlib.contextmanager
def discard_stderr() -> Iterator[None]:
    """Discard what is written to the standard error stream (file descriptor 2) inside the
    ``with`` block."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple[int, int]:
    """A random 2-D shape with sizes in ``[1, dim]`` (``[0, dim]`` with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return int(np.random.randint(low, dim0 + 1)), int(np.random.randint(low, dim1 + 1))


def rand_shape_3d(
    dim0: int = 10, dim1: int = 10, dim2: int = 10, allow_zero_size: bool = False
) -> tuple[int, int, int]:
    """A random 3-D shape with sizes in ``[1, dim]``."""
    low = 0 if allow_zero_size else 1
    return tuple(int(np.random.randint(low, d + 1)) for d in (dim0, dim1, dim2))  # type: ignore[return-value]


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple[int, ...]:
    """A random ``num_dim``-D shape with sizes in ``[1, dim]``."""
    low = 0 if allow_zero_size else 1
    return tuple(int(s) for s in np.random.randint(low, dim + 1, size=num_dim))


def random_arrays(*shapes: Any) -> Any:
    """float32 numpy arrays of standard normal draws (numpy's global generator), one per shape;
    a shape ``()`` gives a 0-d array. One shape gives the array itself, several give a list (as
    mxnet's ``random_arrays``).

    >>> import numpy as np
    >>> from gradhub_compat.mxnet.test_utils import random_arrays
    >>> a, b = random_arrays((2, 3), ())
    >>> a.shape, a.dtype, b.shape
    ((2, 3), dtype('float32'), ())
    """
    arrays: list[np.ndarray] = [
        np.array(np.random.randn(), dtype=default_dtype())
        if len(s) == 0
        else np.random.randn(*s).astype(default_dtype())
        for s in shapes
    ]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(
    *shapes: Any, low: float = 0.0, high: float = 1.0, dtype: Any = None
) -> list[np.ndarray]:
    """A list of numpy arrays (float32 unless ``dtype``) of uniform draws from ``[low, high)``,
    one per shape, always a list (as mxnet's ``random_uniform_arrays``)."""
    dt = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dt) for s in shapes]


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: Any = None, atol: Any = None) -> None:
    """:func:`assert_almost_equal` on two optimizer states: NDArrays, or tuples of them compared
    item by item; ``None`` on either side passes (as mxnet's)."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(
    opt1: Any,
    opt2: Any,
    shape: Any,
    dtype: Any,
    w_stype: str = "default",
    g_stype: str = "default",
    rtol: float = 1e-4,
    atol: float = 1e-5,
    compare_states: bool = True,
    ntensors: int = 1,
) -> None:
    """mxnet's ``compare_optimizer``: one ``update_multi_precision`` step of two optimizers
    from the same uniform weight and gradient (``mx.random.uniform`` of ``shape`` and
    ``dtype``), their states and weights compared with :func:`assert_almost_equal`. Sparse
    ``w_stype``/``g_stype`` and a list of shapes (multi-tensor updates) raise
    NotImplementedError."""
    from . import random as _random

    if isinstance(shape, list):
        raise NotImplementedError(
            "mx.test_utils.compare_optimizer: multi-tensor updates (a list of shapes) are not "
            "supported by gradhub_compat.mxnet (docs/migration-mxnet.md)"
        )
    for what, st in (("w_stype", w_stype), ("g_stype", g_stype)):
        if st != "default":
            raise NotImplementedError(
                f"mx.test_utils.compare_optimizer: {what}={st!r}: sparse storage is not "
                "supported by gradhub_compat.mxnet (docs/migration-mxnet.md)"
            )
    w2 = _random.uniform(shape=shape, ctx=default_context(), dtype=dtype)
    w1 = w2.copyto(default_context())
    g2 = _random.uniform(shape=shape, ctx=default_context(), dtype=dtype)
    g1 = g2.copyto(default_context())
    state1 = opt1.create_state_multi_precision(0, w1)
    state2 = opt2.create_state_multi_precision(0, w2)
    if compare_states:
        compare_ndarray_tuple(state1, state2)
    opt1.update_multi_precision(0, w1, g1, state1)
    opt2.update_multi_precision(0, w2, g2, state2)
    if compare_states:
        compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
    assert_almost_equal(w1, w2, rtol=rtol, atol=atol)


def rand_ndarray(
    shape: Any,
    stype: str = "default",
    density: Any = None,
    dtype: Any = None,
    modifier_func: Any = None,
    shuffle_csr_indices: bool = False,
    distribution: Any = None,
    ctx: Any = None,
) -> NDArray:
    """A dense NDArray of ``shape`` with uniform draws from [-1, 1) (numpy's global generator,
    as mxnet's ``rand_ndarray``); sparse ``stype`` raises NotImplementedError."""
    if stype != "default":
        raise NotImplementedError(
            f"mx.test_utils.rand_ndarray: stype={stype!r}: sparse storage is not supported by "
            "gradhub_compat.mxnet (docs/migration-mxnet.md)"
        )
    dt = np.dtype(np.float32 if dtype is None else dtype)
    data = np.random.uniform(-1, 1, size=shape)
    if modifier_func is not None:
        data = modifier_func(data)
    return array(data, ctx=ctx, dtype=dt)


def default_numeric_eps() -> dict[np.dtype, float]:
    """mxnet 1.9.1's finite-difference steps per dtype (float16 2^-6, float32 2^-9, float64
    2^-14)."""
    return {
        np.dtype(np.float16): 2.0**-6,
        np.dtype(np.float32): 2.0**-9,
        np.dtype(np.float64): 2.0**-14,
    }


def _location(sym: Any, location: Any, ctx: Any, dtype: Any, fn: str) -> dict[str, NDArray]:
    names = sym.list_arguments()
    if isinstance(location, dict):
        if set(location) != set(names):
            raise ValueError(
                f"mx.test_utils.{fn}: Symbol arguments and keys of the given location do not "
                f"match. symbol args:{set(names)}, location.keys():{set(location)}"
            )
    elif isinstance(location, (list, tuple)):
        location = dict(zip(names, location))
    else:
        raise TypeError(f"mx.test_utils.{fn}: location must be a dict, list or tuple")
    out: dict[str, NDArray] = {}
    for k, v in location.items():
        if isinstance(v, NDArray):
            out[k] = v
        else:
            v = np.asarray(v)
            out[k] = array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
    return out


def _no_aux(aux_states: Any, fn: str) -> None:
    if aux_states:
        raise NotImplementedError(
            f"mx.test_utils.{fn}: aux_states are not supported by gradhub_compat.mxnet "
            "(docs/migration-mxnet.md)"
        )


def check_symbolic_forward(
    sym: Any,
    location: Any,
    expected: Any,
    rtol: Any = None,
    atol: Any = None,
    aux_states: Any = None,
    ctx: Any = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> list[NDArray]:
    """Bind ``sym`` to ``location`` (arrays per argument, a list in ``list_arguments()`` order
    or a dict), run ``forward(is_train=False)`` and :func:`assert_almost_equal` each output to
    ``expected`` (a list, or a dict by output name); returns the outputs (mxnet 1.9.1).

    Example::

        >>> import numpy as np, gradhub_compat.mxnet as mx
        >>> x = mx.sym.Variable("x")
        >>> _ = mx.test_utils.check_symbolic_forward(2 * x, [np.ones(3)], [2 * np.ones(3)])
    """
    _no_aux(aux_states, "check_symbolic_forward")
    ctx = ctx or default_context()
    loc = _location(sym, location, ctx, dtype, "check_symbolic_forward")
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    grads = {k: NDArray(np.zeros_like(v._arr), v.context) for k, v in loc.items()}
    ex = sym.bind(ctx=ctx, args=loc, args_grad=grads)
    ex.forward(is_train=False)
    for name, want, got in zip(sym.list_outputs(), expected, ex.outputs):
        assert_almost_equal(
            want, got, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"), equal_nan=equal_nan
        )
    return list(ex.outputs)


def check_symbolic_backward(
    sym: Any,
    location: Any,
    out_grads: Any,
    expected: Any,
    rtol: Any = None,
    atol: Any = None,
    aux_states: Any = None,
    grad_req: Any = "write",
    ctx: Any = None,
    grad_stypes: Any = None,
    equal_nan: bool = False,
    dtype: Any = np.float32,
) -> dict[str, NDArray]:
    """Bind ``sym`` to ``location`` with gradient arrays for the arguments in ``expected``
    (random normal values first, as mxnet), run forward and ``backward(out_grads)`` and compare
    each gradient with ``expected`` (a list in argument order or a dict): ``"write"`` the
    gradient itself, ``"add"`` what was added, ``"null"`` the unchanged array (mxnet 1.9.1).

    Example::

        >>> import numpy as np, gradhub_compat.mxnet as mx
        >>> x = mx.sym.Variable("x")
        >>> _ = mx.test_utils.check_symbolic_backward(
        ...     x * x, [np.array([1.0, 2.0])], [np.ones(2)], [np.array([2.0, 4.0])])
    """
    _no_aux(aux_states, "check_symbolic_backward")
    if grad_stypes and any(v not in (None, "default") for v in grad_stypes.values()):
        raise NotImplementedError(
            "mx.test_utils.check_symbolic_backward: sparse grad_stypes are not supported "
            "(docs/migration-mxnet.md)"
        )
    ctx = ctx or default_context()
    names = sym.list_arguments()
    loc = _location(sym, location, ctx, dtype, "check_symbolic_backward")
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(names, expected))
    expected = {k: _np(v) for k, v in expected.items()}
    start = {k: np.random.normal(size=v.shape) for k, v in sorted(expected.items())}
    grads = {
        k: array(v, ctx=ctx, dtype=expected[k].dtype if dtype == "asnumpy" else dtype)
        for k, v in start.items()
    }
    if isinstance(grad_req, str):
        grad_req = dict.fromkeys(names, grad_req)
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(names, grad_req))
    ex = sym.bind(ctx=ctx, args=loc, args_grad=grads, grad_req=grad_req)
    ex.forward(is_train=True)

    def conv(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
        return v

    if isinstance(out_grads, (list, tuple)):
        out_grads = [conv(v) for v in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = {k: conv(v) for k, v in out_grads.items()}
    elif out_grads is not None:
        raise TypeError("mx.test_utils.check_symbolic_backward: out_grads must be a list or dict")
    ex.backward(out_grads)
    for name, want in expected.items():
        req = grad_req.get(name, "null")
        label = (f"EXPECTED_{name}", f"BACKWARD_{name}")
        got = grads[name].asnumpy()
        if req in ("write", "inplace"):
            assert_almost_equal(want, got, rtol, atol, label, equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(want, got - start[name], rtol, atol, label, equal_nan=equal_nan)
        elif req == "null":
            assert_almost_equal(start[name], got, rtol, atol, label, equal_nan=equal_nan)
        else:
            raise ValueError(f"Invalid grad_req {req} for argument {name}")
    return grads


def check_numeric_gradient(
    sym: Any,
    location: Any,
    aux_states: Any = None,
    numeric_eps: Any = None,
    rtol: Any = None,
    atol: Any = None,
    grad_nodes: Any = None,
    use_forward_train: bool = True,
    ctx: Any = None,
    grad_stype_dict: Any = None,
    dtype: Any = np.float32,
) -> None:
    """Compare the gradients of ``sum(sym(location) * p)`` (``p`` random in [0.1, 1.1), as
    mxnet) from ``backward`` with central differences
    ``(f(x + eps/2) - f(x - eps/2)) / eps`` per element, ``eps`` mxnet's default step for
    the dtype (float32: 2^-9); ``grad_nodes`` (names, or a dict name -> grad_req) default to
    every argument. ``sym`` must have one output (mxnet 1.9.1).

    Example::

        >>> import numpy as np, gradhub_compat.mxnet as mx
        >>> x = mx.sym.Variable("x")
        >>> mx.test_utils.check_numeric_gradient(x * x * x, [np.array([0.5, 1.0])])
    """
    _no_aux(aux_states, "check_numeric_gradient")
    if grad_stype_dict:
        raise NotImplementedError(
            "mx.test_utils.check_numeric_gradient: grad_stype_dict (sparse gradients) is not "
            "supported (docs/migration-mxnet.md)"
        )
    if np.dtype(dtype) not in (np.float16, np.float32, np.float64):
        raise ValueError(f"mx.test_utils.check_numeric_gradient: dtype {dtype} is not a float")
    ctx = ctx or default_context()
    loc = _location(sym, location, ctx, dtype, "check_numeric_gradient")
    if len(sym.list_outputs()) != 1:
        raise ValueError("mx.test_utils.check_numeric_gradient: sym must have one output")
    if grad_nodes is None:
        grad_req = dict.fromkeys(sym.list_arguments(), "write")
    elif isinstance(grad_nodes, (list, tuple)):
        grad_req = dict.fromkeys(grad_nodes, "write")
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
    else:
        raise ValueError("mx.test_utils.check_numeric_gradient: grad_nodes must be a list or dict")
    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in loc.items()})
    proj = array(np.random.rand(*out_shapes[0]) + 0.1, ctx=ctx, dtype=dtype)
    start = {k: np.random.normal(0, 0.01, size=loc[k].shape) for k in grad_req}
    grads = {k: array(v, ctx=ctx, dtype=dtype) for k, v in start.items()}
    ex = sym.bind(ctx=ctx, args=loc, args_grad=grads, grad_req=grad_req)
    ex.forward(is_train=True)
    eps = _tol(ex.outputs[0].asnumpy(), numeric_eps, default_numeric_eps())
    ex.backward([proj])
    p = proj.asnumpy().astype(np.float64)

    def loss() -> float:
        ex.forward(is_train=use_forward_train)
        return float((ex.outputs[0].asnumpy().astype(np.float64) * p).sum())

    for name, req in grad_req.items():
        arr = ex.arg_dict[name]
        base = arr.asnumpy().copy()
        if base.dtype.kind != "f":
            continue
        num = np.zeros(base.shape, dtype=dtype)  # as mxnet: the tolerances of dtype
        for i in range(base.size):
            v = base.copy()
            v.ravel()[i] += eps / 2.0
            arr[:] = v
            hi = loss()
            v.ravel()[i] -= eps
            arr[:] = v
            num.ravel()[i] = (hi - loss()) / eps
        arr[:] = base
        got = grads[name].asnumpy()
        label = (f"NUMERICAL_{name}", f"BACKWARD_{name}")
        if req in ("write", "inplace"):
            assert_almost_equal(num, got, rtol, atol, label)
        elif req == "add":
            assert_almost_equal(num, got - start[name], rtol, atol, label)
        elif req == "null":
            assert_almost_equal(start[name], got, rtol, atol, label)
        else:
            raise ValueError(f"Invalid grad_req {req} for argument {name}")


def check_consistency(*args: Any, **kwargs: Any) -> Any:
    """mxnet's ``check_consistency`` (comparing contexts and dtypes): not provided; raises
    NotImplementedError."""
    raise NotImplementedError(
        "mx.test_utils.check_consistency is not provided by gradhub_compat.mxnet "
        "(docs/migration-mxnet.md); compare with check_symbolic_forward/backward"
    )


def check_speed(*args: Any, **kwargs: Any) -> Any:
    """mxnet's ``check_speed`` (timing an executor): not provided; raises NotImplementedError."""
    raise NotImplementedError(
        "mx.test_utils.check_speed is not provided by gradhub_compat.mxnet "
        "(docs/migration-mxnet.md); time code with benchmarks/ (docs/performance.md)"
    )

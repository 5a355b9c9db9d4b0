"""gradhub-nn-ops' compiled CPU kernels: direct convolution and filter gradient (stride 1),
2x2 max pooling, ReLU.

The C extension ``gradhub_nn_ops._native_kernels`` (source in ``_native/``, built when the
distribution is installed, optional: without a C compiler the install goes on without it) holds
kernels in float32 and float64, each compiled for the default x86-64 and for AVX2/FMA (chosen by
the CPU at the call). For 1-d and 2-d convolutions with stride 1 and any padding, dilation and
group:

- forward: ``y[n, o, i, j] = b[o] + sum_{c,p,q} w[o, c, p, q] xpad[n, gC + c, i + p dh, j + q dw]``
  computed directly, the sums of a block of ``2 x 8`` outputs (float32) of four output maps held
  in registers, instead of a column matrix copied from the input and a BLAS product;
- filter gradient: ``gw[o, c, p, q] = sum_{n, i, j} dy[n, o, i, j] xpad[n, gC + c, i + p dh,
  j + q dw]``, four output maps times three taps per block of sums.

ReLU's forward ``y = max(x, 0)`` (NaN kept, as numpy's maximum) and backward ``g * (y > 0)``
(:func:`relu`, :func:`relu_backward`): one pass each, where numpy's backward makes the mask
first; the same bits as the numpy kernels.

For max pooling with 2x2 windows and stride 2 that cover the input exactly, on rows of windows
(:func:`pool`): the maxima, the first-maximum mask, the backward (``dy`` times the mask, the mask
never stored), the masked gather of another input-shaped array, the unpooling and the masked
pooling by a given mask, each a vector of windows at a time; the same results as the numpy
kernels bit for bit (same comparisons, ties and NaN rules, same order of additions).

Batch normalization over axis 1 of ``(N, C, *spatial)`` arrays (:func:`bn_forward`,
:func:`bn_backward`): per channel, the mean and variance (two passes, sums in double), the
normalization with gamma and beta, the backward sums ``S_g``, ``S_gxc`` and the input gradient,
a channel's values read by one call (its later passes from the cache); chunks of channels run on
the threads.

:mod:`gradhub_nn_ops.conv` and :mod:`gradhub_nn_ops.pooling` use them on the CPU (numpy arrays)
for these shapes, chunk by chunk on :mod:`gradhub.parallel`'s threads (the library is called
through :mod:`ctypes`, which releases the interpreter lock); every other case, and every device,
goes through the numpy kernels. Each sum runs in an order fixed by the shapes alone, so results
do not depend on the number of threads. ``GRADHUB_NATIVE=0`` in the environment (read at the
first kernel call) or :func:`set_enabled` turns them off. Loading the library happens at the
first call, not at import.

Example::

    >>> import numpy as np
    >>> from gradhub_nn_ops import native
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> w = np.ones((1, 1, 3, 3))
    >>> y = np.empty((1, 1, 2, 2))
    >>> if native.available():  # the sum of each 3x3 window
    ...     native.conv_forward(x, w, None, y, pad=(0, 0), dilation=(1, 1), group=1)
    ...     print(y[0, 0])
    ... else:
    ...     print(np.array([[45.0, 54.0], [81.0, 90.0]]))
    [[45. 54.]
     [81. 90.]]
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from gradhub.parallel import parallel_for

__all__ = [
    "available",
    "bn_backward",
    "bn_forward",
    "conv_forward",
    "dtype_usable",
    "filter_grad",
    "pool",
    "relu",
    "relu_backward",
    "set_enabled",
    "standardize",
    "standardize_backward",
    "target",
    "usable",
]

_lock = threading.Lock()
_lib: Any = None
_loaded = False
_enabled: bool | None = None  # None: GRADHUB_NATIVE not read yet
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
#: the C functions by (name, dtype): ``gh_<name>_f32`` / ``gh_<name>_f64`` (filled by _load)
_KERNELS: dict[tuple[str, np.dtype[Any]], Any] = {}
#: the pooling kernels' names (``pool_<name>``) and their numbers of array arguments
_POOL_ARRAYS = {"max": 2, "mask": 3, "backward": 3, "gather": 3, "unpool": 3, "masked": 3}
#: every kernel: name, array (pointer) arguments, size arguments, whether it returns a status
_SIGNATURES = [
    ("conv_fwd", 4, 14, True),
    ("conv_filter", 3, 14, True),
    *((f"pool_{name}", count, 2, False) for name, count in _POOL_ARRAYS.items()),
    ("relu", 2, 1, False),
    ("relu_backward", 3, 1, False),
    ("standardize", 4, 2, False),
    ("standardize_backward", 6, 2, False),
    ("bn_forward", 6, 6, False),
    ("bn_backward", 8, 7, False),
]
#: kernels that take a double after their sizes (``eps``)
_DOUBLE_LAST = ("standardize", "standardize_backward", "bn_forward", "bn_backward")


def _load() -> Any:
    """The ctypes library of ``gradhub_nn_ops._native_kernels``, or None where it was not built."""
    global _lib, _loaded
    if _loaded:
        return _lib
    with _lock:
        if _loaded:
            return _lib
        lib = None
        spec = importlib.util.find_spec(__package__ + "._native_kernels")
        if spec is not None and spec.origin is not None:
            try:
                lib = ctypes.CDLL(spec.origin)
            except OSError:
                lib = None
        if lib is not None:
            for name, pointers, sizes, status in _SIGNATURES:
                for suffix, dtype in (("f32", _DTYPES[0]), ("f64", _DTYPES[1])):
                    fn = getattr(lib, f"gh_{name}_{suffix}")
                    last = [ctypes.c_double] if name in _DOUBLE_LAST else []
                    fn.argtypes = [ctypes.c_void_p] * pointers + [ctypes.c_long] * sizes + last
                    fn.restype = ctypes.c_int if status else None
                    _KERNELS[name, dtype] = fn
            lib.gh_target.restype = ctypes.c_int
            lib.gh_target.argtypes = []
        _lib = lib
        _loaded = True
        return lib


def available() -> bool:
    """Whether the compiled kernels are built, loadable and turned on.

    Example::

        >>> from gradhub_nn_ops import native
        >>> native.available() in (True, False)
        True
    """
    global _enabled
    if _enabled is None:
        _enabled = os.environ.get("GRADHUB_NATIVE", "1") != "0"
    return _enabled and _load() is not None


def set_enabled(flag: bool) -> bool:
    """Turn the compiled kernels on or off for this process; returns the previous setting.

    Example::

        >>> from gradhub_nn_ops import native
        >>> before = native.set_enabled(False)
        >>> native.available()
        False
        >>> _ = native.set_enabled(before)
    """
    global _enabled
    was = available() if _enabled is None else _enabled
    _enabled = bool(flag)
    return was


def target() -> str:
    """The instruction set the kernels run with on this CPU (``"avx2"`` or ``"default"``), or
    ``"none"`` where the library is not built.

    Example::

        >>> from gradhub_nn_ops import native
        >>> native.target() in ("avx2", "default", "none")
        True
    """
    lib = _load()
    if lib is None:
        return "none"
    return "avx2" if lib.gh_target() else "default"


def usable(xp: Any, dtype: Any, nd: int, stride: Sequence[int]) -> bool:
    """Whether the compiled kernels serve a convolution of ``nd`` spatial axes with ``stride``
    computed in ``dtype`` on the array module ``xp`` (numpy, float32/float64, 1-d or 2-d,
    stride 1), and are available.

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> native.usable(np, np.float32, 2, (2, 2))  # stride 2: the numpy kernels
        False
    """
    return (
        xp is np
        and nd in (1, 2)
        and np.dtype(dtype) in _DTYPES
        and all(s == 1 for s in stride)
        and available()
    )


def _kernel(name: str, dtype: np.dtype[Any], what: str) -> Any:
    """The C function ``name`` for ``dtype``; RuntimeError where the library is not built,
    TypeError for a dtype it has no kernel for (both naming ``native.<what>()``)."""
    _load()
    fn = _KERNELS.get((name, dtype))
    if fn is None:
        if _lib is None:
            raise RuntimeError(
                f"gradhub-nn-ops: native.{what}(): the compiled kernels are not built "
                "(gradhub_nn_ops._native_kernels is missing: install gradhub-nn-ops with a C "
                "compiler)"
            )
        raise TypeError(f"gradhub-nn-ops: native.{what}(): dtype {dtype} is not float32 or float64")
    return fn


def dtype_usable(dtype: Any) -> bool:
    """Whether the compiled 2x2 max-pooling and ReLU kernels serve numpy arrays of ``dtype``
    (float32 or float64), and are available.

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> native.dtype_usable(np.float16)
        False
    """
    return np.dtype(dtype) in _DTYPES and available()


def pool(name: str, *arrays: Any) -> None:
    """Run the 2x2 max-pooling kernel ``name`` on C-contiguous numpy arrays of rows of windows:
    input-shaped ``(r, 2, w)`` (``bool`` masks included) and output-shaped ``(r, w // 2)``, the
    last one written:

    - ``max``: ``(x, y)``, the windows' maxima;
    - ``mask``: ``(x, y, m)``, the first element of each window equal to ``y``'s value (the
      first NaN where that is NaN): with ``y`` the maxima, the first-maximum mask (bool);
    - ``backward``: ``(x, dy, dx)``, ``dy`` over each window times x's first-maximum mask;
    - ``gather``: ``(x, g, out)``, each window's sum of ``g`` times x's first-maximum mask;
    - ``unpool``: ``(dy, m, dx)`` and ``masked``: ``(g, m, out)``, the same with a given mask.

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> x = np.array([[[1.0, 4.0], [4.0, 2.0]]])  # one window: 4.0 twice, the first wins
        >>> dx = np.empty_like(x)
        >>> if native.dtype_usable(x.dtype):
        ...     native.pool("backward", x, np.array([[5.0]]), dx)
        ... else:
        ...     dx = np.array([[[0.0, 5.0], [0.0, 0.0]]])
        >>> dx
        array([[[0., 5.],
                [0., 0.]]])
    """
    arrays_in = _POOL_ARRAYS.get(name)
    if arrays_in != len(arrays):
        raise TypeError(
            f"gradhub-nn-ops: native.pool(): name must be one of {sorted(_POOL_ARRAYS)} with its "
            f"arrays, got {name!r} with {len(arrays)}"
        )
    _writable("pool", out=arrays[-1])
    dtype = next(a.dtype for a in arrays if a.dtype != np.bool_)
    r, _, w = next(a.shape for a in arrays if a.ndim == 3)
    for a in arrays:
        want = (r, 2, w) if a.ndim == 3 else (r, w // 2)
        if (
            tuple(a.shape) != want
            or not a.flags.c_contiguous
            or a.dtype not in (dtype, np.dtype(np.bool_))
        ):
            raise ValueError(
                f"gradhub-nn-ops: native.pool({name!r}): arrays must be C-contiguous {dtype} (or "
                f"bool masks) of shapes (r, 2, w) and (r, w // 2), got {a.dtype} {a.shape}"
            )
    _kernel(f"pool_{name}", dtype, "pool")(*(a.ctypes.data for a in arrays), r, w)


def _alike(what: str, arrays: Sequence[Any]) -> Any:
    """The first of ``arrays``, after checking that all are C-contiguous numpy arrays of one
    shape and dtype (a ValueError naming ``native.<what>()`` otherwise)."""
    a0 = arrays[0]
    for a in arrays:
        if a.shape != a0.shape or a.dtype != a0.dtype or not a.flags.c_contiguous:
            raise ValueError(
                f"gradhub-nn-ops: native.{what}(): arrays must be C-contiguous, of one shape and "
                f"dtype; got {a0.dtype} {a0.shape} and {a.dtype} {a.shape}"
            )
    return a0


def _writable(what: str, **outputs: Any) -> None:
    """Raise a ValueError naming ``native.<what>()`` where an output array (None: left out)
    cannot be written (a read-only view, an array over ``bytes``): the kernels write through
    its address, which numpy's own flag would not stop."""
    for k, v in outputs.items():
        if v is not None and not v.flags.writeable:
            raise ValueError(f"gradhub-nn-ops: native.{what}(): {k} is read-only")


def _elementwise(what: str, *arrays: Any) -> None:
    """The kernel ``what`` on C-contiguous numpy ``arrays`` of one shape and dtype (ValueError
    otherwise), with their size."""
    a0 = _alike(what, arrays)
    _writable(what, out=arrays[-1])
    _kernel(what, a0.dtype, what)(*(a.ctypes.data for a in arrays), a0.size)


def relu(x: Any, y: Any) -> None:
    """``y = max(x, 0)`` elementwise (NaN stays NaN, -0.0 gives 0.0: numpy's ``maximum``), for
    C-contiguous float32/float64 arrays of one shape.

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> x = np.array([-1.5, 0.0, 2.0, np.nan])
        >>> y = np.empty_like(x)
        >>> if native.available():
        ...     native.relu(x, y)
        ... else:
        ...     y = np.maximum(x, 0)
        >>> y
        array([ 0.,  0.,  2., nan])
    """
    _elementwise("relu", x, y)


def relu_backward(g: Any, y: Any, out: Any) -> None:
    """``out = g * (y > 0)`` elementwise (the 0/1 value of the comparison times ``g``, so an
    infinite ``g`` gives NaN where ``y <= 0``), for C-contiguous float32/float64 arrays of one
    shape.

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> g, y = np.array([3.0, 4.0, 5.0]), np.array([1.0, 0.0, -2.0])
        >>> out = np.empty_like(g)
        >>> if native.available():
        ...     native.relu_backward(g, y, out)
        ... else:
        ...     out = g * (y > 0)
        >>> out
        array([3., 0., 0.])
    """
    _elementwise("relu_backward", g, y, out)


#: values per chunk of rows that :func:`standardize` and :func:`standardize_backward` hand to a
#: thread (fixed by the shapes alone, so the sums do not depend on the number of threads)
_ROW_CHUNK = 1 << 16


#: the most chunks :func:`standardize_backward` cuts when it sums the parameters' gradients
#: (each chunk has its own row of sums: a bound on their memory, fixed like the chunks)
_SUM_CHUNKS = 16


def _row_chunks(rows: int, m: int, most: int | None = None) -> list[tuple[int, int]]:
    """``(start, stop)`` row ranges of about :data:`_ROW_CHUNK` values each (at most ``most``
    ranges: consecutive ones joined), fixed by the shape alone."""
    per = max(1, _ROW_CHUNK // m)
    if most is not None:
        per = max(per, -(-rows // most))
    return [(r, min(r + per, rows)) for r in range(0, rows, per)]


def _rows_of(a: Any, m: int, start: int, stop: int) -> Any:
    """The address of row ``start`` of ``a`` (rows of ``m`` values), None for None."""
    return None if a is None else a.ctypes.data + start * m * a.itemsize


def _row_params(what: str, m: int, a0: Any, **params: Any) -> None:
    """Check that the per-row parameters are C-contiguous arrays of ``m`` values of ``a0``'s
    dtype (``dgamma``/``dbeta``: float64), given both or neither (ValueError naming
    ``native.<what>()``)."""
    given = [k for k, v in params.items() if v is not None]
    if given and len(given) != len(params):
        raise ValueError(
            f"gradhub-nn-ops: native.{what}(): {' and '.join(params)} are given together; "
            f"got only {given[0]}"
        )
    for k, v in params.items():
        want = np.dtype(np.float64) if k.startswith("d") else a0.dtype
        if v is not None and (v.size != m or v.dtype != want or not v.flags.c_contiguous):
            raise ValueError(
                f"gradhub-nn-ops: native.{what}(): {k} must be a C-contiguous {want} array of "
                f"{m} values (a row), got {v.dtype} {v.shape}"
            )


def standardize(x: Any, y: Any, m: int, eps: float, gamma: Any = None, beta: Any = None) -> None:
    """``y`` = each row of ``m`` values of ``x`` centred and scaled to unit variance,
    ``(x - mean) / sqrt(var + eps)`` (sums in double), for C-contiguous float32/float64 arrays
    of one shape whose size ``m`` divides; with ``gamma`` and ``beta`` (``m`` values each, the
    same dtype), ``y * gamma + beta`` in the same pass. Chunks of rows run on
    :mod:`gradhub.parallel`'s threads.

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> x = np.array([[1.0, 3.0], [2.0, 6.0]])
        >>> y = np.empty_like(x)
        >>> if native.available():
        ...     native.standardize(x, y, 2, 0.0, np.array([1.0, 2.0]), np.array([0.0, 1.0]))
        ... else:
        ...     y = np.array([[-1.0, 3.0], [-1.0, 3.0]])
        >>> y
        array([[-1.,  3.],
               [-1.,  3.]])
    """
    fn = _rows("standardize", m, x, y)
    _writable("standardize", y=y)
    _row_params("standardize", m, x, gamma=gamma, beta=beta)
    gp, bp = _rows_of(gamma, m, 0, 0), _rows_of(beta, m, 0, 0)
    chunks = _row_chunks(x.size // m, m)
    eps = float(eps)

    def body(i: int) -> None:
        start, stop = chunks[i]
        fn(_rows_of(x, m, start, stop), gp, bp, _rows_of(y, m, start, stop), stop - start, m, eps)

    parallel_for(len(chunks), body)


def standardize_backward(
    x: Any,
    g: Any,
    dx: Any,
    m: int,
    eps: float,
    gamma: Any = None,
    dgamma: Any = None,
    dbeta: Any = None,
) -> None:
    """The gradients of :func:`standardize` for the output gradient ``g``, row by row: ``dx``
    (None: not computed) ``= r (h - mean(h)) - (x - mu) r^3 mean(h (x - mu))`` with
    ``r = 1 / sqrt(var + eps)`` and ``h = g gamma`` (``g`` without ``gamma``); ``dgamma`` and
    ``dbeta`` (float64 rows of ``m`` values, both or neither) get the sums over the rows of
    ``g (x - mu) r`` and of ``g`` added. Chunks of rows run on :mod:`gradhub.parallel`'s
    threads, each with its own sums, added in order (results do not depend on the threads).

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> x, g = np.array([[1.0, 3.0]]), np.array([[1.0, 1.0]])
        >>> dx = np.empty_like(x)
        >>> if native.available():
        ...     native.standardize_backward(x, g, dx, 2, 0.0)
        ... else:
        ...     dx = np.zeros_like(x)
        >>> dx
        array([[0., 0.]])
    """
    fn = _rows("standardize_backward", m, x, g, *(() if dx is None else (dx,)))
    _writable("standardize_backward", dx=dx, dgamma=dgamma, dbeta=dbeta)
    _row_params("standardize_backward", m, x, gamma=gamma)
    _row_params("standardize_backward", m, x, dgamma=dgamma, dbeta=dbeta)
    gp = _rows_of(gamma, m, 0, 0)
    chunks = _row_chunks(x.size // m, m, None if dgamma is None else _SUM_CHUNKS)
    sums = None if dgamma is None else np.zeros((len(chunks), 2, m))
    eps = float(eps)

    def body(i: int) -> None:
        start, stop = chunks[i]
        dg = db = None
        if sums is not None:
            dg, db = sums[i, 0].ctypes.data, sums[i, 1].ctypes.data
        fn(
            _rows_of(x, m, start, stop),
            _rows_of(g, m, start, stop),
            gp,
            _rows_of(dx, m, start, stop),
            dg,
            db,
            stop - start,
            m,
            eps,
        )

    parallel_for(len(chunks), body)
    if sums is not None:
        for part in sums:  # in order
            dgamma += part[0]
            dbeta += part[1]


def _rows(what: str, m: int, *arrays: Any) -> Any:
    """The kernel ``what`` for rows of ``m`` values of ``arrays`` (checked: C-contiguous, one
    shape and dtype, a size ``m`` divides)."""
    a0 = _alike(what, arrays)
    if m < 1 or a0.size % m:
        raise ValueError(
            f"gradhub-nn-ops: native.{what}(): rows of {m} values do not divide an array of "
            f"{a0.size}"
        )
    return _kernel(what, a0.dtype, what)


#: kernel flags of ``gh_bn_backward``: compute the statistics, compute the sums, training dx
_BN_STATS, _BN_SUMS, _BN_TRAIN = 1, 2, 4


def _bn_arrays(what: str, x: Any, others: Sequence[Any], **params: Any) -> tuple[Any, int, int]:
    """The kernel ``what`` for ``x`` of shape ``(N, C, *spatial)`` and its sizes ``(N, C, S)``,
    after checking that ``x`` and ``others`` (None: left out) are C-contiguous arrays of one shape
    and dtype, and that each parameter (None: left out) holds the ``C`` values of one channel
    each, C-contiguous, of ``x``'s dtype (``gamma``, ``beta``) or float64 (the others); a
    ValueError naming ``native.<what>()`` otherwise."""
    _alike(what, [x, *(a for a in others if a is not None)])
    if x.ndim < 2:
        raise ValueError(
            f"gradhub-nn-ops: native.{what}(): x must have a batch and a channel axis "
            f"(N, C, *spatial), got shape {x.shape}"
        )
    c = int(x.shape[1])
    for k, v in params.items():
        want = x.dtype if k in ("gamma", "beta") else np.dtype(np.float64)
        if v is not None and (v.size != c or v.dtype != want or not v.flags.c_contiguous):
            raise ValueError(
                f"gradhub-nn-ops: native.{what}(): {k} must be a C-contiguous {want} array of "
                f"{c} values (one per channel), got {v.dtype} {v.shape}"
            )
    spatial = x.size // max(1, int(x.shape[0]) * c)
    return _kernel(what, x.dtype, what), int(x.shape[0]), spatial


def _bn_given(what: str, **arrays: Any) -> None:
    """Raise a ValueError naming ``native.<what>()`` where one of ``arrays`` is None."""
    for k, v in arrays.items():
        if v is None:
            raise ValueError(f"gradhub-nn-ops: native.{what}(): {k} is needed, got None")


def _channel_chunks(channels: int, per_channel: int) -> list[tuple[int, int]]:
    """``(start, stop)`` channel ranges of about :data:`_ROW_CHUNK` values each (a channel's
    values are always in one range)."""
    per = max(1, _ROW_CHUNK // max(1, per_channel))
    return [(c, min(c + per, channels)) for c in range(0, channels, per)]


def _address(a: Any) -> Any:
    return None if a is None else a.ctypes.data


def bn_forward(
    x: Any, y: Any, gamma: Any, beta: Any, mean: Any, var: Any, eps: float, stats: bool = True
) -> None:
    """Batch normalization over the channels (axis 1) of a C-contiguous float32/float64 array
    ``x`` of shape ``(N, C, *spatial)``: with ``stats``, each channel's mean ``mu`` and biased
    variance ``sigma^2`` over its ``N * prod(spatial)`` values are written to ``mean`` and
    ``var`` (float64, ``C`` values each), else read from them; ``y`` (None: not computed, the
    statistics only) gets ``(x - mu) gamma / sqrt(sigma^2 + eps) + beta`` (``gamma``, ``beta``:
    ``C`` values of ``x``'s dtype). Sums and arithmetic in double; channels in chunks on
    :mod:`gradhub.parallel`'s threads, each channel summed by one thread in an order fixed by
    the shape (results do not depend on the number of threads).

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> x = np.array([[[1.0, 3.0]], [[5.0, 7.0]]])  # N=2, C=1, 2 values per sample
        >>> y, mean, var = np.empty_like(x), np.empty(1), np.empty(1)
        >>> if native.available():
        ...     native.bn_forward(x, y, np.ones(1), np.zeros(1), mean, var, 0.0)
        ... else:
        ...     mean[0], var[0] = 4.0, 5.0
        >>> mean, var
        (array([4.]), array([5.]))
    """
    fn, n, s = _bn_arrays("bn_forward", x, [y], gamma=gamma, beta=beta, mean=mean, var=var)
    _writable("bn_forward", y=y, **({"mean": mean, "var": var} if stats else {}))
    _bn_given(
        "bn_forward", mean=mean, var=var, **({} if y is None else {"gamma": gamma, "beta": beta})
    )
    c = int(x.shape[1])
    chunks = _channel_chunks(c, n * s)
    args = (_address(gamma), _address(beta), mean.ctypes.data, var.ctypes.data, _address(y))
    eps, flag = float(eps), int(bool(stats))

    def body(i: int) -> None:
        fn(x.ctypes.data, *args, n, c, s, *chunks[i], flag, eps)

    parallel_for(len(chunks), body)


def bn_backward(
    x: Any,
    g: Any,
    dx: Any,
    gamma: Any,
    mean: Any,
    var: Any,
    sg: Any,
    sgxc: Any,
    eps: float,
    stats: bool = True,
    sums: bool = True,
    count: int | None = None,
) -> None:
    """Batch normalization's first-order backward over the channels of ``x`` and its output
    gradient ``g`` (C-contiguous float32/float64 arrays of shape ``(N, C, *spatial)``), per
    channel: with ``stats``, the mean and biased variance are computed into ``mean`` and ``var``
    (float64, ``C`` values), else read; with ``sums``, ``S_g = sum g`` and
    ``S_gxc = sum g (x - mu)`` are computed into ``sg`` and ``sgxc``, else read (the sums over
    several processes, say); ``dx`` (None: not computed) gets, with ``r = (sigma^2 + eps)^{-1/2}``
    and ``a = gamma r``, ``a g - a S_g / count - (x - mu) a r^2 S_gxc / count`` (training: the
    statistics were taken over ``count`` values) or ``a g`` (``count`` None: inference).
    Channels run as in :func:`bn_forward` (results do not depend on the number of threads).

    Example::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> x, g = np.array([[[1.0, 3.0]]]), np.array([[[2.0, 2.0]]])
        >>> dx, m, v, sg, sgxc = np.empty_like(x), *np.empty((4, 1))
        >>> if native.available():
        ...     native.bn_backward(x, g, dx, np.ones(1), m, v, sg, sgxc, 0.0, count=2)
        ... else:
        ...     sg[0], sgxc[0], dx[...] = 4.0, 0.0, 0.0
        >>> sg, sgxc, dx
        (array([4.]), array([0.]), array([[[0., 0.]]]))
    """
    _bn_given("bn_backward", g=g, mean=mean, var=var, sg=sg, sgxc=sgxc)
    fn, n, s = _bn_arrays(
        "bn_backward", x, [g, dx], gamma=gamma, mean=mean, var=var, sg=sg, sgxc=sgxc
    )
    _writable(
        "bn_backward",
        dx=dx,
        **({"mean": mean, "var": var} if stats else {}),
        **({"sg": sg, "sgxc": sgxc} if sums else {}),
    )
    if dx is not None:
        _bn_given("bn_backward", gamma=gamma)
    if count is not None and count < 1:
        raise ValueError(f"gradhub-nn-ops: native.bn_backward(): count must be >= 1, got {count}")
    c = int(x.shape[1])
    chunks = _channel_chunks(c, n * s)
    flags = (_BN_STATS if stats else 0) | (_BN_SUMS if sums else 0)
    flags |= 0 if count is None else _BN_TRAIN
    args = (
        _address(gamma),
        mean.ctypes.data,
        var.ctypes.data,
        sg.ctypes.data,
        sgxc.ctypes.data,
        _address(dx),
    )
    eps, total = float(eps), 0 if count is None else int(count)

    def body(i: int) -> None:
        fn(x.ctypes.data, g.ctypes.data, *args, n, c, s, *chunks[i], flags, total, eps)

    parallel_for(len(chunks), body)


def _sizes(
    x: Any,
    o: int,
    group: int,
    kernel: Sequence[int],
    pad: Sequence[int],
    dilation: Sequence[int],
    out: Sequence[int],
) -> tuple[int, ...]:
    """The 14 size arguments of the C kernels, ``n, C, H, W, O, G, KH, KW, ph, pw, dh, dw, OH,
    OW`` (a 1-d convolution as a 2-d one of height 1)."""
    if len(kernel) == 1:
        spatial = (1, x.shape[2], 1, kernel[0], 0, pad[0], 1, dilation[0], 1, out[0])
    else:
        spatial = (*x.shape[2:4], *kernel, *pad, *dilation, *out)
    h, w, kh, kw, ph, pw, dh, dw, oh, ow = spatial
    return (x.shape[0], x.shape[1], h, w, o, group, kh, kw, ph, pw, dh, dw, oh, ow)


def conv_forward(
    x: Any,
    w: Any,
    bias: Any,
    y: Any,
    pad: Sequence[int],
    dilation: Sequence[int],
    group: int,
) -> None:
    """``y = conv(x, w) + bias`` (stride 1) written into ``y``, C-contiguous arrays of one dtype:
    ``x`` ``(N, C, *spatial)``, ``w`` ``(O, C // group, *kernel)``, ``bias`` ``(O,)`` or
    None, ``y`` ``(N, O, *out)``. Raises MemoryError where the kernel's scratch buffers cannot
    be allocated.

    ``y[n, o, i, j] = bias[o] + sum_{c,p,q} w[o, c, p, q] xpad[n, g C/G + c, i + p dh, j + q dw]``

    Example (a 1-d convolution: moving sums of 2 with a bias of 0.5)::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> x = np.arange(5.0).reshape(1, 1, 5)
        >>> y = np.empty((1, 1, 4))
        >>> if native.available():
        ...     native.conv_forward(x, np.ones((1, 1, 2)), np.array([0.5]), y, (0,), (1,), 1)
        ... else:
        ...     y[...] = [0.5 + 1.0, 0.5 + 3.0, 0.5 + 5.0, 0.5 + 7.0]
        >>> y
        array([[[1.5, 3.5, 5.5, 7.5]]])
    """
    _writable("conv_forward", y=y)
    sizes = _sizes(x, w.shape[0], group, w.shape[2:], pad, dilation, y.shape[2:])
    bp = None if bias is None else bias.ctypes.data
    rc = _kernel("conv_fwd", x.dtype, "conv_forward")(
        x.ctypes.data, w.ctypes.data, bp, y.ctypes.data, *sizes
    )
    if rc:
        raise MemoryError("gradhub-nn-ops: native convolution: cannot allocate scratch buffers")


def filter_grad(
    x: Any,
    dy: Any,
    gw: Any,
    kernel: Sequence[int],
    pad: Sequence[int],
    dilation: Sequence[int],
    group: int,
) -> None:
    """``gw += filter gradient of conv(x, w)`` for ``dy`` (stride 1), C-contiguous arrays of one
    dtype: ``x`` ``(N, C, *spatial)``, ``dy`` ``(N, O, *out)``, ``gw`` ``(O, C // group, *kernel)``.

    ``gw[o, c, p, q] += sum_{n,i,j} dy[n, o, i, j] xpad[n, g C/G + c, i + p dh, j + q dw]``

    Example (1-d: the kernel tap ``p`` sums ``dy[i] * x[i + p]``)::

        >>> import numpy as np
        >>> from gradhub_nn_ops import native
        >>> x = np.arange(5.0).reshape(1, 1, 5)
        >>> gw = np.zeros((1, 1, 2))
        >>> if native.available():
        ...     native.filter_grad(x, np.ones((1, 1, 4)), gw, (2,), (0,), (1,), 1)
        ... else:
        ...     gw[...] = [0 + 1 + 2 + 3, 1 + 2 + 3 + 4]
        >>> gw
        array([[[ 6., 10.]]])
    """
    _writable("filter_grad", gw=gw)
    sizes = _sizes(x, dy.shape[1], group, kernel, pad, dilation, dy.shape[2:])
    rc = _kernel("conv_filter", x.dtype, "filter_grad")(
        x.ctypes.data, dy.ctypes.data, gw.ctypes.data, *sizes
    )
    if rc:
        raise MemoryError("gradhub-nn-ops: native filter gradient: cannot allocate scratch buffers")

"""More of chainer's functions (re-exported by :mod:`gradhub_compat.chainer.functions`): the
sequence helpers, the evaluation metrics, ``crelu``, the noise functions, the linear algebra,
im2col and the unpoolings, the linear-chain CRF, CTC, the ROI poolings and aligns, the
normalizations, the spatial transformer and the rest of chainer 7.8.1's ``chainer.functions``
(``sparse_matmul`` raises NotImplementedError: it needs chainer's ``CooMatrix``).

Each follows chainer 7.8.1's ``chainer/functions/`` code: the arguments and defaults, the
output shapes and dtypes, the errors (chainer's ``InvalidType`` where its ``check_type_forward``
raises one) and the gradients. Most are compositions of the registered gradhub functions behind
:mod:`gradhub_compat.chainer.functions` (every order of gradient comes from the native engine);
the linear algebra and ``fft``/``ifft`` are :class:`~gradhub_compat.chainer.FunctionNode`
subclasses whose ``backward`` is chainer's, written with chainer functions, so it can be
differentiated again; ``decorrelated_batch_normalization`` keeps chainer's hand-written gradient,
which refuses to be differentiated again. The metrics are not differentiable.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.functions as F
    >>> F.pad_sequence([np.array([1.0, 2.0], np.float32), np.array([3.0], np.float32)])
    variable([[1., 2.],
              [3., 0.]])
"""

from __future__ import annotations

from builtins import max as builtins_max
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from gradhub.modes import is_recording
from gradhub.remat import checkpoint
from gradhub.variable import Variable as _NativeVariable

from . import Variable, using_config
from . import functions as F
from .function_node import FunctionNode
from .functions import _arr, _call, _dtype, _out, _shape
from .utils.type_check import InvalidType

__all__: list[str] = [
    "argmax_crf1d",
    "as_strided",
    "batch_det",
    "batch_inv",
    "batch_renormalization",
    "binary_accuracy",
    "black_out",
    "cholesky",
    "classification_summary",
    "connectionist_temporal_classification",
    "crelu",
    "crf1d",
    "cross_covariance",
    "decorrelated_batch_normalization",
    "decov",
    "det",
    "discriminative_margin_based_clustering_loss",
    "f1_score",
    "fft",
    "fixed_batch_renormalization",
    "fixed_decorrelated_batch_normalization",
    "forget",
    "gaussian",
    "gumbel_softmax",
    "ifft",
    "im2col",
    "inv",
    "linear_interpolate",
    "local_convolution_2d",
    "negative_sampling",
    "pad_sequence",
    "permutate",
    "precision",
    "r2_score",
    "recall",
    "roi_average_align_2d",
    "roi_average_pooling_2d",
    "roi_max_align_2d",
    "roi_max_pooling_2d",
    "roi_pooling_2d",
    "separate",
    "shift",
    "simplified_dropconnect",
    "sparse_matmul",
    "spatial_pyramid_pooling_2d",
    "spatial_transformer_grid",
    "spatial_transformer_sampler",
    "transpose_sequence",
    "tree_lstm",
    "unpooling_1d",
    "unpooling_3d",
    "unpooling_nd",
    "zoneout",
]

_PAGE = "docs/migration-chainer.md"


def _invalid(label: str, expect: str, actual: str) -> InvalidType:
    """chainer's ``InvalidType`` of the ``check_type_forward`` of the function ``label``."""
    return InvalidType(
        expect,
        actual,
        f"\nInvalid operation is performed in: {label} (Forward)\n\nExpect: {expect}\n"
        f"Actual: {actual}",
    )


def _kind(x: Any) -> str:
    dt = _dtype(x)
    if dt is None:
        dt = np.asarray(x).dtype
    return str(np.dtype(dt).kind)


def _data(x: Any, where: str) -> Any:
    """The array of a Variable or an array (read in Python by ``where``)."""
    return _arr(x, where)


def _constant(value: Any) -> Variable:
    """A result that is not differentiable: a Variable without a creator needing no gradient."""
    return Variable(value, requires_grad=False)


# -- sequences ---------------------------------------------------------------------------------


def pad_sequence(xs: Sequence[Any], length: int | None = None, padding: Any = 0) -> Variable:
    """The arrays ``xs`` (shapes ``(l_i, ...)`` with the same trailing axes and dtype) stacked
    into shape ``(len(xs), length, ...)``, each padded after its end with ``padding`` (cast to
    their dtype); ``length`` defaults to the longest ``l_i``. The gradient of each input is the
    output's gradient at its own positions.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.pad_sequence([np.arange(3, dtype=np.float32), np.ones(1, np.float32)], padding=-1)
        variable([[ 0.,  1.,  2.],
                  [ 1., -1., -1.]])
    """
    xs = list(xs)
    label = "PadSequence"
    if not xs:
        raise _invalid(label, "in_types.size > 0", "0 <= 0")
    shapes = [_shape(x) for x in xs]
    dtypes = [_dtype(x) if _dtype(x) is not None else np.asarray(x).dtype for x in xs]
    for i, (s, dt) in enumerate(zip(shapes, dtypes)):
        if len(s) == 0:
            raise _invalid(label, f"x{i}.ndim > 0", f"{len(s)} <= 0")
        if s[1:] != shapes[0][1:]:
            raise _invalid(label, f"x{i}.shape[1:] == x0.shape[1:]", f"{s[1:]} != {shapes[0][1:]}")
        if dt != dtypes[0]:
            raise _invalid(label, f"x{i}.dtype == x0.dtype", f"{dt} != {dtypes[0]}")
    if length is not None:
        for i, s in enumerate(shapes):
            if s[0] > length:
                raise _invalid(label, f"x{i}.shape[0] <= {length}", f"{s[0]} > {length}")
    n = max(s[0] for s in shapes) if length is None else int(length)
    dt = np.dtype(dtypes[0])
    rows = []
    for x, s in zip(xs, shapes):
        x = x if isinstance(x, _NativeVariable) else Variable(np.asarray(x), requires_grad=False)
        if s[0] < n:
            fill = np.full((n - s[0], *s[1:]), padding).astype(dt)
            pad = F._const(fill, x)
            x = F.concat([x, pad], axis=0) if s[0] else _out(pad)
        rows.append(x)
    return F.stack(rows, axis=0)


def transpose_sequence(xs: Sequence[Any]) -> tuple[Variable, ...]:
    """The list of sequences ``xs`` (lengths not increasing, same trailing shape) transposed:
    output ``t`` stacks the ``t``-th element of every sequence longer than ``t``, so
    ``[(0, 1, 2, 3), (4, 5), (6,)]`` gives ``((0, 4, 6), (1, 5), (2,), (3,))``; an empty list
    gives ``()``. The gradient is transposed back.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> xs = [np.array([1.0, 1.0, 1.0]), np.array([2.0, 2.0]), np.array([3.0])]
        >>> F.transpose_sequence(xs)
        (variable([1., 2., 3.]), variable([1., 2.]), variable([1.]))
    """
    xs = list(xs)
    if not xs:
        return ()
    shapes = [_shape(x) for x in xs]
    for i in range(len(xs) - 1):
        p, q = shapes[i], shapes[i + 1]
        if len(p) == 0 or len(q) == 0:
            raise _invalid("TransposeSequence", f"xs[{i}].ndim > 0", "0-d input")
        if p[0] < q[0]:
            raise _invalid(
                "TransposeSequence", f"xs[{i}].shape[0] >= xs[{i + 1}].shape[0]", f"{p[0]} < {q[0]}"
            )
        if p[1:] != q[1:]:
            raise _invalid(
                "TransposeSequence", f"xs[{i}].shape[1:] == xs[{i + 1}].shape[1:]", f"{p} {q}"
            )
    if len(shapes[0]) == 0:
        raise _invalid("TransposeSequence", "xs[0].ndim > 0", "0-d input")
    outs = []
    for t in range(shapes[0][0]):
        items = [F.get_item(x, t) for x, s in zip(xs, shapes) if s[0] > t]
        outs.append(F.stack(items, axis=0))
    return tuple(outs)


def separate(x: Any, axis: int = 0) -> tuple[Variable, ...]:
    """The slices of ``x`` along ``axis``, each without that axis (a tuple of
    ``x.shape[axis]`` Variables; the inverse of :func:`stack`).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.separate(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), axis=1)
        (variable([1., 3.]), variable([2., 4.]))
    """
    shape = _shape(x)
    nd = len(shape)
    if (axis >= 0 and axis >= nd) or (axis < 0 and -axis > nd):
        raise _invalid(
            "Separate",
            f"axis {'<' if axis >= 0 else '>= -'} x.ndim",
            f"axis {axis}, x.ndim {nd}",
        )
    ax = axis % nd
    return tuple(
        F.get_item(x, (slice(None),) * ax + (i,))  # type: ignore[arg-type]
        for i in range(shape[ax])
    )


def permutate(x: Any, indices: Any, axis: int = 0, inv: bool = False) -> Variable:
    """x permuted along ``axis``: ``y[..., i, ...] = x[..., indices[i], ...]`` (with
    ``inv=True``, ``y[..., indices[i], ...] = x[..., i, ...]``). ``indices`` is a 1-d integer
    array (or Variable, whose array is used) holding a permutation of ``range(x.shape[axis])``.
    The gradient is permuted back.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.permutate(np.array([1.0, 2.0, 3.0]), np.array([2, 0, 1], np.int32))
        variable([3., 1., 2.])
    """
    ind_dtype = _dtype(indices) if _dtype(indices) is not None else np.asarray(indices).dtype
    if np.dtype(ind_dtype).kind != "i" or len(_shape(indices)) != 1:
        raise ValueError("indices should be a one-dimensional int array")
    ind = np.asarray(_data(indices, "permutate")).astype(np.int64)
    shape = _shape(x)
    nd = len(shape)
    if (axis >= 0 and axis >= nd) or (axis < 0 and -axis > nd):
        raise _invalid("Permutate", "axis < x.ndim", f"axis {axis}, x.ndim {nd}")
    ax = axis % nd
    if len(ind) != shape[ax] or sorted(ind.tolist()) != list(range(shape[ax])):
        raise ValueError(
            f"chainer F.permutate: indices {ind.tolist()} are not a permutation of "
            f"range({shape[ax]}) (the length of axis {axis})"
        )
    if inv:
        r = np.empty_like(ind)
        r[ind] = np.arange(len(ind))
        ind = r
    return F.get_item(x, (slice(None),) * ax + (ind,))  # type: ignore[arg-type]


def forget(func: Callable[..., Any], *xs: Any) -> Any:
    """``func(*xs)`` without keeping its intermediate results: chainer's ``F.forget``, on
    :func:`gradhub.checkpoint`. The forward pass keeps only the inputs; the backward pass calls
    ``func`` again (with ``chainer.config.in_recomputing`` True) and differentiates it. The array
    inputs become Variables that require a gradient; ``func`` returns a Variable or a tuple of
    Variables (else chainer's ``RuntimeError``), and a tuple of one gives that Variable, as in
    chainer. Parameters that ``func`` reads (a link's) receive their gradients too. Unlike
    chainer's, the gradients can be differentiated again (chainer raises), and random functions
    inside ``func`` (``F.dropout``) draw the same numbers in the recomputation (chainer does not
    support them).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.functions as F
        >>> x = chainer.Variable(np.array([2.0]))
        >>> y = F.forget(lambda a, b: a * b + a, x, np.array([3.0]))
        >>> y
        variable([8.])
        >>> F.sum(y).backward(); x.grad
        array([4.])
    """
    if not callable(func):
        raise TypeError("func must be callable")
    vs = tuple(x if isinstance(x, _NativeVariable) else Variable(x, requires_grad=True) for x in xs)
    calls = [0]

    def run(*args: Any) -> tuple[Any, ...]:
        # the first call and a replay of the graph (recording off) are forward passes, the
        # others the backward pass's recomputation (chainer's two configuration flags)
        again = calls[0] > 0 and is_recording()
        calls[0] += 1
        with (
            using_config("in_recomputing", again),
            using_config("_will_recompute", not again),
        ):
            outs = func(*(_out(a) for a in args))
        if isinstance(outs, tuple):
            for i, out in enumerate(outs):
                if isinstance(out, _NativeVariable):
                    continue
                n = i + 1
                suffix = {1: "st", 2: "nd", 3: "rd"}.get(n if n < 20 else n % 10, "th")
                raise RuntimeError(
                    f"{n}{suffix} element of a returned tuple is not Variable, but is {type(out)}"
                )
            return outs
        if isinstance(outs, _NativeVariable):
            return (outs,)
        raise RuntimeError(
            f"A tuple of Variables or a Variable are expected, but {type(outs)} is returned."
        )

    res = tuple(_out(o) for o in checkpoint(run, *vs))
    return res[0] if len(res) == 1 else res


# -- activations and noise ---------------------------------------------------------------------


def crelu(x: Any, axis: int = 1) -> Variable:
    """Concatenated ReLU: ``concat((relu(x), relu(-x)), axis)`` (the output is twice as long
    along ``axis``); x floating point.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.crelu(np.array([[-1.0, 2.0]], np.float32))
        variable([[0., 2., 1., 0.]])
    """
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError("axis must be an integer value")
    nd = len(_shape(x))
    if _kind(x) != "f":
        raise _invalid("CReLU", "x.dtype.kind == f", f"{_dtype(x)} != f")
    if not (nd > axis and nd >= -axis):
        raise _invalid("CReLU", f"x.ndim > {axis}, x.ndim >= {-axis}", f"x.ndim {nd}")
    return F.concat([F.relu(x), F.relu(_call("Neg", x))], axis=int(axis))


def gaussian(mean: Any, ln_var: Any, **kwargs: Any) -> Any:
    """A sample ``mean + exp(ln_var / 2) * eps`` of N(mean, exp(ln_var)), ``eps`` drawn from
    numpy's global generator (``numpy.random.standard_normal(ln_var.shape)`` cast to mean's
    dtype, as chainer on the CPU; so after the same ``numpy.random.seed`` the sample is
    chainer's), or the given ``eps=``; ``return_eps=True`` returns ``(y, eps)``. It samples in
    test mode too, as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> m = np.zeros(2, np.float32)
        >>> F.gaussian(m, m, eps=np.array([0.5, -1.0], np.float32))
        variable([ 0.5, -1. ])
    """
    eps = kwargs.pop("eps", None)
    return_eps = kwargs.pop("return_eps", False)
    if kwargs:
        raise TypeError(f"gaussian() got unexpected keyword argument(s) {', '.join(kwargs)}")
    mdt, vdt = _dtype(mean), _dtype(ln_var)
    if mdt is None or np.dtype(mdt).kind != "f":
        raise _invalid("Gaussian", "mean.dtype.kind == f", f"{mdt} != f")
    if mdt != vdt:
        raise _invalid("Gaussian", "mean.dtype == ln_var.dtype", f"{mdt} != {vdt}")
    if _shape(mean) != _shape(ln_var):
        raise _invalid(
            "Gaussian", "mean.shape == ln_var.shape", f"{_shape(mean)} != {_shape(ln_var)}"
        )
    if eps is None:
        eps = np.random.standard_normal(_shape(ln_var)).astype(mdt, copy=False)
        like = ln_var if isinstance(ln_var, _NativeVariable) else mean
        dev = like.device if isinstance(like, _NativeVariable) else None
        if dev is not None and dev.xp is not np:
            eps = dev.asarray(eps)
    noise = _call("Mul2", F.exp(_call("MulScalar", ln_var, val=0.5)), F._const(eps, ln_var))
    y = _out(_call("Add2", mean, noise))
    return (y, eps) if return_eps else y


def gumbel_softmax(log_pi: Any, tau: float = 0.1, axis: int = 1) -> Variable:
    """A sample of the Gumbel-softmax distribution: ``softmax((log_pi + g) / tau, axis)``, the
    Gumbel noise ``g`` drawn from numpy's global generator
    (``numpy.random.gumbel(size=log_pi.shape)``, as chainer on the CPU); a 0-d ``log_pi``
    gives a constant 1.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.gumbel_softmax(np.log(np.full((1, 3), 1 / 3, np.float32))).shape
        (1, 3)
    """
    dt = getattr(log_pi, "dtype", None)
    if dt is None:
        raise TypeError("chainer F.gumbel_softmax: log_pi must be a Variable or an array")
    if len(_shape(log_pi)) < 1:
        return _constant(np.ones((), dt))
    g = np.random.gumbel(size=_shape(log_pi)).astype(dt)
    z = _out(_call("Add2", log_pi, F._const(g, log_pi)))
    return F.softmax(z / tau, axis=axis)  # (chainer's operator: tau cast to the dtype)


# -- evaluation (not differentiable) -----------------------------------------------------------


def binary_accuracy(y: Any, t: Any) -> Variable:
    """The fraction of the labels ``t`` (integers of y's shape; -1 is ignored) that the sign of
    ``y`` predicts (``y >= 0`` for 1), in y's dtype. Not differentiable.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.binary_accuracy(np.array([-1.0, 2.0, 0.5], np.float32), np.array([0, 1, 0]))
        variable(0.6666667)
    """
    ya, ta = _data(y, "binary_accuracy"), _data(t, "binary_accuracy")
    if ya.dtype.kind != "f":
        raise _invalid("BinaryAccuracy", "x.dtype.kind == f", f"{ya.dtype.kind} != f")
    if ta.dtype.kind != "i":
        raise _invalid("BinaryAccuracy", "t.dtype.kind == i", f"{ta.dtype.kind} != i")
    if ta.shape != ya.shape:
        raise _invalid("BinaryAccuracy", "t.shape == x.shape", f"{ta.shape} != {ya.shape}")
    c = ya.ravel() >= 0
    tt = ta.ravel()
    count = max(1, int((tt != -1).sum()))
    return _constant(np.asarray(int((c == tt).sum()) / count, dtype=ya.dtype))


def _summary(
    fname: str, y: Any, t: Any, label_num: int | None, beta: float, ignore_label: int
) -> tuple[Variable, Variable, Variable, Variable]:
    ya, ta = _data(y, fname), _data(t, fname)
    label = "ClassificationSummary"
    if ya.dtype.kind != "f":
        raise _invalid(label, "x.dtype.kind == f", f"{ya.dtype.kind} != f")
    if ta.dtype.kind != "i":
        raise _invalid(label, "t.dtype.kind == i", f"{ta.dtype.kind} != i")
    if (
        ya.ndim < ta.ndim
        or ya.shape[0] != ta.shape[0]
        or ya.shape[2 : ta.ndim + 1] != ta.shape[1:]
        or any(s != 1 for s in ya.shape[ta.ndim + 1 :])
    ):
        raise _invalid(
            label,
            "x.ndim >= t.ndim, x.shape[0] == t.shape[0], x.shape[2:t.ndim + 1] == t.shape[1:]",
            f"x.shape {ya.shape}, t.shape {ta.shape}",
        )
    ya, ta = np.asarray(ya), np.asarray(ta).astype(np.int32)
    n = int(ta.max()) + 1 if label_num is None else int(label_num)
    if label_num is not None and (ta[ta != ignore_label] >= n).any():
        raise ValueError(f"chainer F.{fname}: a label of t is not below label_num={label_num}")
    mask = (ta == ignore_label).ravel()
    pred = np.where(mask, n, ya.argmax(axis=1).ravel())
    true = np.where(mask, n, ta.ravel())
    support = np.bincount(true, minlength=n + 1)[:n]
    relevant = np.bincount(pred, minlength=n + 1)[:n]
    tp = np.bincount(np.where(pred == true, true, n), minlength=n + 1)[:n]
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = tp / relevant
        rec = tp / support
        b2 = beta * beta
        fbeta = ((1 + b2) * prec * rec / (b2 * prec + rec)).astype(prec.dtype, copy=False)
    return _constant(prec), _constant(rec), _constant(fbeta), _constant(support)


def classification_summary(
    y: Any, t: Any, label_num: int | None = None, beta: float = 1.0, ignore_label: int = -1
) -> tuple[Variable, Variable, Variable, Variable]:
    """Per-class ``(precision, recall, fbeta, support)`` of the predictions ``y.argmax(axis=1)``
    against the labels ``t`` (labels equal to ``ignore_label`` left out), for the classes
    ``0 .. label_num - 1`` (default: up to the largest label): float64 ``tp / predicted``,
    ``tp / support`` and ``(1 + beta**2) p r / (beta**2 p + r)`` (nan where a count is 0, as
    chainer) and the int64 counts of each class. Not differentiable.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> y = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], np.float32)
        >>> p, r, f, s = F.classification_summary(y, np.array([1, 1, 0], np.int32))
        >>> p.array, r.array, s.array
        (array([0. , 0.5]), array([0. , 0.5]), array([1, 2]))
    """
    return _summary("classification_summary", y, t, label_num, beta, ignore_label)


def precision(
    y: Any, t: Any, label_num: int | None = None, ignore_label: int = -1
) -> tuple[Variable, Variable]:
    """``(precision, support)`` of :func:`classification_summary`."""
    r = _summary("precision", y, t, label_num, 1.0, ignore_label)
    return r[0], r[3]


def recall(
    y: Any, t: Any, label_num: int | None = None, ignore_label: int = -1
) -> tuple[Variable, Variable]:
    """``(recall, support)`` of :func:`classification_summary`."""
    r = _summary("recall", y, t, label_num, 1.0, ignore_label)
    return r[1], r[3]


def f1_score(
    y: Any, t: Any, label_num: int | None = None, ignore_label: int = -1
) -> tuple[Variable, Variable]:
    """``(f1, support)`` of :func:`classification_summary` (``beta=1``)."""
    r = _summary("f1_score", y, t, label_num, 1.0, ignore_label)
    return r[2], r[3]


def r2_score(
    pred: Any, true: Any, sample_weight: Any = None, multioutput: str = "uniform_average"
) -> Variable:
    """The coefficient of determination ``1 - SS_res / SS_tot`` along axis 0 (0 where
    ``SS_tot`` is 0), of pred's dtype: its mean (``multioutput="uniform_average"``) or one per
    output (``"raw_values"``). ``sample_weight`` is not supported (``NotImplementedError``, as
    chainer). Not differentiable.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.r2_score(np.array([1.0, 2.0, 3.5], np.float32), np.array([1.0, 2.0, 3.0], np.float32))
        variable(0.875)
    """
    if sample_weight is not None:
        raise NotImplementedError(
            f"chainer F.r2_score: sample_weight is not supported; see {_PAGE}"
        )
    if multioutput not in ("uniform_average", "raw_values"):
        raise ValueError("invalid multioutput argument")
    p, t = _data(pred, "r2_score"), _data(true, "r2_score")
    if p.dtype.kind != "f" or t.dtype.kind != "f":
        raise _invalid(
            "R2_score", "pred.dtype.kind == f, true.dtype.kind == f", f"{p.dtype}, {t.dtype}"
        )
    if p.shape != t.shape:
        raise _invalid("R2_score", "pred.shape == true.shape", f"{p.shape} != {t.shape}")
    p, t = np.asarray(p), np.asarray(t)
    ss_res = np.asarray(np.sum((p - t) ** 2, axis=0))
    ss_tot = np.asarray(np.sum((t - np.mean(t, axis=0)) ** 2, axis=0))
    zero = ss_tot == 0
    ss_tot[zero] = 1
    ret = np.where(zero, 0.0, 1 - ss_res / ss_tot).astype(p.dtype, copy=False)
    if multioutput == "uniform_average":
        return _constant(np.asarray(ret.mean()))
    return _constant(ret)


# -- linear algebra ----------------------------------------------------------------------------


def _fp16_mixed(fn: Callable[[Any], Any], a: Any) -> Any:
    """``fn(a)``, computed in float32 for a float16 ``a`` and cast back (chainer's
    ``_fp16_mixed_precision_helper``)."""
    if a.dtype == np.float16:
        return np.asarray(fn(a.astype(np.float32))).astype(np.float16)
    return np.asarray(fn(a))


def _xp_of(a: Any) -> Any:
    """numpy for a numpy array, else the module of the device array (cupy)."""
    if isinstance(a, (np.ndarray, np.generic)):
        return np
    import importlib

    return importlib.import_module(type(a).__module__.split(".")[0])


def _square_check(label: str, a: Any, ndim: int) -> None:
    shape = _shape(a)
    if _kind(a) != "f":
        raise _invalid(label, "a.dtype.kind == f", f"{_dtype(a)} != f")
    if len(shape) != ndim:
        raise _invalid(label, f"a.ndim == {ndim}", f"{len(shape)} != {ndim}")
    if shape[-1] != shape[-2]:
        raise _invalid(label, "a.shape[-1] == a.shape[-2]", f"{shape[-1]} != {shape[-2]}")


class _Inv(FunctionNode):
    """chainer's ``Inv``/``BatchInv``: ``numpy.linalg.inv``; the gradient
    ``-inv(a)^T gy inv(a)^T`` (chainer functions, so differentiable again)."""

    def __init__(self, batched: bool) -> None:
        self.batched = batched

    @property
    def label(self) -> str:
        return "BatchInv" if self.batched else "Inv"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        self.retain_outputs((0,))
        xp = _xp_of(inputs[0])
        try:
            return (_fp16_mixed(xp.linalg.inv, inputs[0]),)
        except np.linalg.LinAlgError:
            raise ValueError("Input has singular matrices.") from None

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        invx = cast(Variable, self.get_retained_outputs()[0])
        (gy,) = grad_outputs
        if self.batched:
            ret = F.matmul(-invx, gy, transa=True)
            return (F.matmul(ret, invx, transb=True),)
        invxt = F.transpose(invx)
        return (F.matmul(F.matmul(-invxt, gy), invxt),)


def inv(a: Any) -> Variable:
    """The inverse of the square matrix ``a`` (floating point, 2-d); a singular matrix raises
    ``ValueError("Input has singular matrices.")``, as chainer. float16 is computed in float32.
    The gradient ``-inv(a)^T gy inv(a)^T`` is chainer's, differentiable again.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.inv(np.array([[2.0, 0.0], [0.0, 4.0]], np.float32))
        variable([[0.5 , 0.  ],
                  [0.  , 0.25]])
    """
    _square_check("Inv", a, 2)
    return _Inv(False).apply((a,))[0]


def batch_inv(a: Any) -> Variable:
    """The inverses of the square matrices ``a[i]`` (a of shape (N, n, n)); as :func:`inv`."""
    _square_check("BatchInv", a, 3)
    return _Inv(True).apply((a,))[0]


class _BatchDet(FunctionNode):
    """chainer's ``BatchDet``: ``numpy.linalg.det``; the gradient
    ``gy * det(a) * batch_inv(a^T)`` (chainer functions, so differentiable again)."""

    @property
    def label(self) -> str:
        return "det"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        xp = _xp_of(inputs[0])
        return (_fp16_mixed(xp.linalg.det, inputs[0]),)

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        (x,) = self.get_retained_inputs()
        (detx,) = self.get_retained_outputs()
        (gy,) = grad_outputs
        inv_x = batch_inv(F.transpose(x, (0, 2, 1)))
        gy = F.broadcast_to(F.reshape(gy, (-1, 1, 1)), inv_x.shape)
        detx = F.broadcast_to(F.reshape(detx, (-1, 1, 1)), inv_x.shape)
        return (gy * detx * inv_x,)


def batch_det(a: Any) -> Variable:
    """The determinants of the square matrices ``a[i]`` (a floating point of shape (N, n, n)),
    shape (N,). float16 is computed in float32. The gradient ``gy det(a) inv(a)^T`` is
    chainer's, differentiable again (through :func:`batch_inv`, so a singular matrix raises
    ``ValueError`` there).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.batch_det(np.array([[[2.0, 1.0], [1.0, 3.0]]], np.float32))
        variable([5.])
    """
    _square_check("det", a, 3)
    return _BatchDet().apply((a,))[0]


def det(a: Any) -> Variable:
    """The determinant of the square matrix ``a`` (2-d), a 0-d Variable: :func:`batch_det` of
    ``a`` reshaped to (1, n, n).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.det(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32))
        variable(5.)
    """
    shape = _shape(a)
    if len(shape) < 2:
        raise IndexError(f"chainer F.det: a must be a 2-d matrix, got shape {shape}")
    batched = F.reshape(a, (1, shape[0], shape[1]))
    _square_check("det", batched, 3)
    return F.reshape(_BatchDet().apply((batched,))[0], ())


class _Cholesky(FunctionNode):
    """chainer's ``Cholesky``: ``numpy.linalg.cholesky``; chainer's gradient (differentiable
    again)."""

    @property
    def label(self) -> str:
        return "cholesky"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        self.retain_outputs((0,))
        xp = _xp_of(inputs[0])
        return (xp.linalg.cholesky(inputs[0]),)

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        (gy,) = grad_outputs
        y = cast(Variable, self.get_retained_outputs()[0])
        n = y.shape[0]
        dtype = y.dtype
        xp = _xp_of(y.array)
        y_inv = inv(y)
        mask = xp.tri(n, dtype=dtype) - 0.5 * xp.eye(n, dtype=dtype)
        phi = mask * F.matmul(y, gy, transa=True)
        s = F.matmul(F.matmul(y_inv, phi, transa=True), y_inv)
        return (0.5 * (s + s.T),)


def cholesky(a: Any) -> Variable:
    """The lower-triangular Cholesky factor ``L`` of the symmetric positive-definite matrix
    ``a`` (``a = L L^T``; 2-d, floating point; ``numpy.linalg.LinAlgError`` when ``a`` is not
    positive definite, as chainer). Only the lower triangle of ``a`` is read (numpy's); the
    gradient is chainer's symmetrized one, ``(S + S^T) / 2`` with
    ``S = L^-T Phi(L^T gy) L^-1`` (``Phi`` halves the diagonal and drops the upper triangle),
    differentiable again.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]], np.float32))
        variable([[2., 0.],
                  [1., 2.]])
    """
    shape = _shape(a)
    if _kind(a) != "f":
        raise _invalid("cholesky", "a.dtype.kind == f", f"{_dtype(a)} != f")
    if len(shape) != 2:
        raise _invalid("cholesky", "a.ndim == 2", f"{len(shape)} != 2")
    return _Cholesky().apply((a,))[0]


# -- interpolation, im2col, unpooling, spatial pyramid pooling ---------------------------------


def linear_interpolate(p: Any, x: Any, y: Any) -> Variable:
    """Elementwise ``p * x + (1 - p) * y`` (p, x and y of one floating dtype and one shape).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.linear_interpolate(np.array([0.25], np.float32), np.array([4.0], np.float32),
        ...                      np.array([0.0], np.float32))
        variable([1.])
    """
    label = "LinearInterpolate"
    if _kind(p) != "f":
        raise _invalid(label, "p.dtype.kind == f", f"{_dtype(p)} != f")
    for what, v in (("x", x), ("y", y)):
        if _dtype(v) != _dtype(p):
            raise _invalid(label, f"{what}.dtype == p.dtype", f"{_dtype(v)} != {_dtype(p)}")
        if _shape(v) != _shape(p):
            raise _invalid(label, f"p.shape == {what}.shape", f"{_shape(p)} != {_shape(v)}")
    px = _call("Mul2", p, x)
    qy = _call("Mul2", _call("RSubScalar", p, val=1.0), y)
    return _out(_call("Add2", px, qy))  # type: ignore[no-any-return]


def _tuple_n(v: Any, n: int) -> tuple[int, ...]:
    """chainer's ``_pair``/``as_tuple``: an int repeated, else the sequence's ints."""
    if hasattr(v, "__getitem__"):
        return tuple(int(a) for a in v)
    return (int(v),) * n


def im2col(
    x: Any, ksize: Any, stride: Any = 1, pad: Any = 0, cover_all: bool = False, dilate: Any = 1
) -> Variable:
    """The patches of x (N, C, H, W) as channels: ``y[n, c * kh * kw + i * kw + j, oy, ox] =
    x_padded[n, c, oy * sy + i * dy, ox * sx + j * dx]`` (zero padding ``pad``; with
    ``cover_all`` the extra windows covering the whole input read zeros past its end), of
    shape (N, C kh kw, out_h, out_w) with chainer's ``get_conv_outsize``. A composition of
    padding and strided slices (the gradient adds the patches back, every order).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
        >>> F.im2col(x, 2).shape
        (1, 4, 2, 2)
    """
    label = "Im2Col"
    shape = _shape(x)
    if _kind(x) != "f":
        raise _invalid(label, "x.dtype.kind == f", f"{_dtype(x)} != f")
    if len(shape) != 4:
        raise _invalid(label, "x.ndim == 4", f"{len(shape)} != 4")
    kh, kw = _tuple_n(ksize, 2)
    sy, sx = _tuple_n(stride, 2)
    ph, pw = _tuple_n(pad, 2)
    dy, dx = _tuple_n(dilate, 2)
    n, c, h, w = shape
    out_h = F._conv_outsize(h, kh, sy, ph, cover_all, dy)
    out_w = F._conv_outsize(w, kw, sx, pw, cover_all, dx)
    if out_h <= 0 or out_w <= 0:
        raise ValueError(f"chainer F.im2col: the output size ({out_h}, {out_w}) is not positive")
    end_h = builtins_max(dy * (kh - 1) + sy * (out_h - 1) + 1 - (h + 2 * ph), 0)
    end_w = builtins_max(dx * (kw - 1) + sx * (out_w - 1) + 1 - (w + 2 * pw), 0)
    xp = x
    if ph or pw or end_h or end_w:
        xp = _call(
            "Pad",
            x,
            pad_width=(ph, ph + end_h, pw, pw + end_w),
            mode="constant",
            constant_value=0.0,
        )
    cols = []
    for i in range(kh):
        for j in range(kw):
            key = (
                slice(None),
                slice(None),
                slice(i * dy, i * dy + sy * (out_h - 1) + 1, sy),
                slice(j * dx, j * dx + sx * (out_w - 1) + 1, sx),
            )
            cols.append(_call("GetItem", xp, key=key))
    col = _call("Stack", *cols, axis=2)  # (n, c, kh * kw, out_h, out_w)
    return _out(_call("Reshape", col, shape=(n, c * kh * kw, out_h, out_w)))  # type: ignore[no-any-return]


def unpooling_nd(
    x: Any,
    ksize: Any,
    stride: Any = None,
    pad: Any = 0,
    outsize: Any = None,
    cover_all: bool = True,
) -> Variable:
    """The inverse of pooling over the spatial axes of x (N, C, d_1, ..., d_n): each element
    copied over its ``ksize`` window (stride defaults to ksize; overlapping copies add up), the
    result seen from ``pad`` on (chainer's ``col2im_nd``), of size ``outsize`` or
    ``s (d - 1) + k - 2 p`` (``- s + 1`` with ``cover_all``); ``outsize`` must map back to x's
    size (chainer's ``InvalidType``). A composition of gradhub functions (every order).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.unpooling_nd(np.array([[[1.0, 2.0]]], np.float32), 2, cover_all=False)
        variable([[[1., 1., 2., 2.]]])
    """
    shape = _shape(x)
    nd = len(shape) - 2
    if nd <= 0:
        raise ValueError("pooling operation requires at least one spatial dimension.")
    k = _tuple_n(ksize, nd)
    s = _tuple_n(ksize if stride is None else stride, nd)
    p = _tuple_n(pad, nd)
    if len(k) != nd or len(s) != nd or len(p) != nd:
        raise ValueError(
            f"chainer F.unpooling_nd: ksize, stride and pad must have {nd} entries (x's spatial "
            f"axes), got {k}, {s}, {p}"
        )
    label = "UnpoolingND"
    if _kind(x) != "f":
        raise _invalid(label, "x.dtype.kind == f", f"{_dtype(x)} != f")
    dims = shape[2:]
    if outsize is None:
        out = tuple(
            F._deconv_outsize(d, kk, ss, pp, cover_all) for d, kk, ss, pp in zip(dims, k, s, p)
        )
    else:
        out = _tuple_n(outsize, nd)
        expected = tuple(
            F._conv_outsize(o, kk, ss, pp, cover_all) for o, kk, ss, pp in zip(out, k, s, p)
        )
        if expected != dims:
            raise _invalid(label, f"x.shape[2:] == {expected}", f"{dims} != {expected}")
    c = shape[1]
    ones = F._const(np.ones((c, 1, *k), dtype=np.dtype(_dtype(x))), x)
    y = _call("Deconvolution", x, ones, None, base_axis=1, pad=(0,) * nd, stride=s, group=c)
    full = _shape(y)[2:]
    need = tuple(builtins_max(pp + o - f, 0) for pp, o, f in zip(p, out, full))
    if any(need):
        y = _call("Pad", y, pad_width=tuple(v for e in need for v in (0, e)), mode="constant")
    key = (slice(None), slice(None), *(slice(pp, pp + o) for pp, o in zip(p, out)))
    return _out(_call("GetItem", y, key=key))  # type: ignore[no-any-return]


def _unpool_fixed(fname: str, nd: int) -> Callable[..., Variable]:
    def fn(
        x: Any,
        ksize: Any,
        stride: Any = None,
        pad: Any = 0,
        outsize: Any = None,
        cover_all: bool = True,
    ) -> Variable:
        got = len(_shape(x)[2:])
        if got != nd:
            raise ValueError(
                "The number of dimensions under channel dimension of the input 'x' should be "
                f"{nd}. But the actual ndim was {got}."
            )
        return unpooling_nd(x, ksize, stride, pad, outsize, cover_all)

    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f""":func:`unpooling_nd` of x with {nd} spatial axes (another number raises
    chainer's ``ValueError``)."""
    return fn


unpooling_1d = _unpool_fixed("unpooling_1d", 1)
unpooling_3d = _unpool_fixed("unpooling_3d", 3)


def spatial_pyramid_pooling_2d(x: Any, pyramid_height: int, pooling: str | None = None) -> Variable:
    """chainer's spatial pyramid pooling of x (N, C, H, W): for each level ``l <
    pyramid_height``, :func:`max_pooling_2d` into ``2 ** l`` bins per axis (window
    ``ceil(H / 2 ** l)``, padding half the remainder, ``cover_all=True``), flattened to
    (N, C 4 ** l, 1, 1), all levels concatenated along axis 1. ``pooling`` must be ``"max"``
    (chainer's ``ValueError`` otherwise, its default None included).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> F.spatial_pyramid_pooling_2d(x, 2, pooling="max").shape
        (1, 5, 1, 1)
    """
    import math

    _c, bh, bw = _shape(x)[1:]
    ys = []
    for level in range(pyramid_height):
        n_bins = int(2**level)
        kh = math.ceil(bh / float(n_bins))
        kw = math.ceil(bw / float(n_bins))
        ph = (kh * n_bins - bh) // 2
        pw = (kw * n_bins - bw) // 2
        if pooling != "max":
            raise ValueError("Unsupported pooling operation: ", pooling)
        y = F.max_pooling_2d(x, ksize=(kh, kw), stride=None, pad=(ph, pw), cover_all=True)
        n, c, h, w = y.shape
        ys.append(F.reshape(y, (n, c * h * w, 1, 1)))
    return F.concat(ys)


# -- linear-chain CRF --------------------------------------------------------------------------


def crf1d(cost: Any, xs: Sequence[Any], ys: Sequence[Any], reduce: str = "mean") -> Variable:
    """The negative log-likelihood of a linear-chain CRF: ``cost`` (K, K) the transition
    scores, ``xs`` the time steps (``xs[t]`` of shape (B_t, K), batch sizes not increasing, as
    :func:`transpose_sequence` gives them), ``ys`` the label sequences (``ys[t]`` int32 of
    shape (B_t,)); per sequence ``log Z - score(y)`` (the forward algorithm with
    :func:`logsumexp`), averaged over ``B_0`` (``reduce="mean"``) or one per sequence
    (``"no"``). chainer's composition of functions, so every order of gradient.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> cost = np.zeros((2, 2), np.float32)
        >>> xs = [np.zeros((1, 2), np.float32)] * 2
        >>> ys = [np.zeros(1, np.int32)] * 2
        >>> F.crf1d(cost, xs, ys)
        variable(1.3862944)
    """
    if reduce not in ("mean", "no"):
        raise ValueError(f"only 'mean' and 'no' are valid for 'reduce', but '{reduce}' is given")
    xs = list(xs)
    ys = list(ys)
    if not xs or _shape(xs[0])[1] != _shape(cost)[0]:
        raise ValueError(
            "chainer F.crf1d: xs[0].shape[1] must equal cost.shape[0] (the number of labels), "
            f"got xs[0] of shape {_shape(xs[0]) if xs else None} and cost {_shape(cost)}"
        )
    n_label = _shape(cost)[0]
    n_batch = _shape(xs[0])[0]
    alpha = xs[0]
    alphas = []
    for x in xs[1:]:
        batch = _shape(x)[0]
        if _shape(alpha)[0] > batch:
            alpha, alpha_rest = F.split_axis(alpha, [batch], axis=0)
            alphas.append(alpha_rest)
        b_alpha, b_cost = F.broadcast(F.expand_dims(alpha, 2), cost)
        alpha = F.logsumexp(b_alpha + b_cost, axis=1) + x
    if alphas:
        alphas.append(alpha)
        alpha = F.concat(alphas[::-1], axis=0)
    logz = F.logsumexp(alpha, axis=1)
    cost = F.reshape(cost, (n_label * n_label, 1))
    score: Any = F.select_item(xs[0], ys[0])
    scores = []
    for x, y, y_prev in zip(xs[1:], ys[1:], ys[:-1]):
        batch = _shape(x)[0]
        ya = np.asarray(_data(y, "crf1d"))
        yp = np.asarray(_data(y_prev, "crf1d"))
        if _shape(score)[0] > batch:
            yp = yp[:batch]
            score, score_rest = F.split_axis(score, [batch], axis=0)
            scores.append(score_rest)
        trans = F.reshape(F.embed_id(yp * n_label + ya, cost), (batch,))
        score = score + (F.select_item(x, y) + trans)
    if scores:
        scores.append(score)
        score = F.concat(scores[::-1], axis=0)
    loss = logz - score
    if reduce == "mean":
        return _out(F.sum(loss) / n_batch)  # type: ignore[no-any-return]
    return _out(loss)  # type: ignore[no-any-return]


def argmax_crf1d(cost: Any, xs: Sequence[Any]) -> tuple[Variable, list[Any]]:
    """The best label sequences of a linear-chain CRF (Viterbi; arguments as :func:`crf1d`):
    ``(score, path)``, ``score`` the Variable of each sequence's best score (shape (B_0,),
    differentiable), ``path`` a list of int arrays, ``path[t]`` the labels at step t (length
    B_t). Ties go to the first label, as chainer's ``argmax``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> cost = np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)
        >>> xs = [np.array([[1.0, 0.0]], np.float32), np.array([[1.0, 0.0]], np.float32)]
        >>> score, path = F.argmax_crf1d(cost, xs)
        >>> score, [p.tolist() for p in path]
        (variable([2.]), [[0], [0]])
    """
    xs = list(xs)
    alpha = xs[0]
    alphas: list[Any] = []
    max_inds = []
    for x in xs[1:]:
        batch = _shape(x)[0]
        if _shape(alpha)[0] > batch:
            alpha, alpha_rest = F.split_axis(alpha, [batch], axis=0)
            alphas.append(alpha_rest)
        else:
            alphas.append(None)
        b_alpha, b_cost = F.broadcast(F.expand_dims(alpha, 2), cost)
        scores = b_alpha + b_cost
        max_inds.append(np.asarray(F.argmax(scores, axis=1).array))
        alpha = F.max(scores, axis=1) + x
    inds = np.asarray(F.argmax(alpha, axis=1).array)
    path = [inds]
    for m, a in zip(max_inds[::-1], alphas[::-1]):
        inds = m[np.arange(len(inds)), inds]
        if a is not None:
            inds = np.concatenate([inds, np.asarray(F.argmax(a, axis=1).array)], axis=0)
        path.append(inds)
    path.reverse()
    score = F.max(alpha, axis=1)
    for a in alphas[::-1]:
        if a is None:
            continue
        score = F.concat([score, F.max(a, axis=1)], axis=0)
    return _out(score), path


# -- connectionist temporal classification ------------------------------------------------------


def connectionist_temporal_classification(
    x: Sequence[Any],
    t: Any,
    blank_symbol: int,
    input_length: Any = None,
    label_length: Any = None,
    reduce: str = "mean",
) -> Variable:
    """The CTC loss ``-log p(t | x)``: ``x`` a list of T Variables (B, V) (the unnormalized
    scores of each time step, softmax over V), ``t`` int32 labels (B, L) (padded),
    ``blank_symbol`` the blank's index, ``input_length`` (B,) int32 the number of time steps of
    each sequence (default T), ``label_length`` (B,) int32 the number of labels (default L);
    the mean over the batch (``reduce="mean"``) or one loss per sequence (``"no"``).

    The forward algorithm over the label path with blanks (``2 L + 1`` states, log domain,
    chainer's ``-1e10`` for log 0; ``-1e4`` for float16), a composition of gradhub functions,
    so the gradient is the derivative of the loss (chainer's ``softmax(x) - posterior``, 0
    past each sequence's input length) and can be differentiated again (chainer's CTC is an
    old-style Function: first order only).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = [np.zeros((1, 2), np.float32)] * 2
        >>> F.connectionist_temporal_classification(x, np.array([[1]], np.int32), 0)
        variable(0.2876821)
    """
    from collections.abc import Sequence as _Seq

    if not isinstance(x, _Seq):
        raise TypeError("x must be a list of Variables")
    if not isinstance(blank_symbol, int):
        raise TypeError("blank_symbol must be non-negative integer.")
    if reduce not in ("mean", "no"):
        raise ValueError(f"only 'mean' and 'no' are valid for 'reduce', but '{reduce}' is given")
    fname = "connectionist_temporal_classification"
    xs = list(x)
    if not xs or len(_shape(xs[0])) != 2:
        raise ValueError(f"chainer F.{fname}: x must be a non-empty list of 2-d (B, V) Variables")
    n_batch, n_vocab = _shape(xs[0])
    if not 0 <= blank_symbol < n_vocab:
        raise ValueError(
            f"chainer F.{fname}: blank_symbol {blank_symbol} is not in [0, {n_vocab}) (x's V)"
        )
    ta = np.asarray(_data(t, fname))
    n_steps = len(xs)
    if input_length is None:
        input_length = np.full(n_batch, n_steps, dtype=np.int32)
    if label_length is None:
        label_length = np.full(len(ta), ta.shape[1] if ta.ndim == 2 else 0, dtype=np.int32)
    il = np.asarray(_data(input_length, fname))
    ll = np.asarray(_data(label_length, fname))
    label = "ConnectionistTemporalClassification"
    for what, a, nd in (("input_length", il, 1), ("label_length", ll, 1), ("t", ta, 2)):
        if a.dtype != np.int32 or a.ndim != nd:
            raise _invalid(
                label, f"{what}.dtype == int32, {what}.ndim == {nd}", f"{a.dtype}, {a.ndim}"
            )
    xv = F.stack(xs)  # (T, B, V), as chainer
    if _kind(xv) != "f":
        raise _invalid(label, "x.dtype.kind == f", f"{xv.dtype} != f")
    for what, a in (("t", ta), ("input_length", il), ("label_length", ll)):
        if a.shape[0] != n_batch:
            raise _invalid(label, f"{what}.shape[0] == {n_batch}", f"{a.shape[0]} != {n_batch}")
    if (il > n_steps).any() or (il < 1).any():
        raise ValueError(f"chainer F.{fname}: input_length must be in [1, {n_steps}], got {il}")
    if (ll > ta.shape[1]).any() or (ll < 0).any():
        raise ValueError(
            f"chainer F.{fname}: label_length must be in [0, {ta.shape[1]}], got {ll.tolist()}"
        )
    dt = np.dtype(xv.dtype)
    zero = -10000.0 if dt == np.float16 else -10000000000.0
    n_state = ta.shape[1] * 2 + 1
    path = np.full((n_batch, n_state), blank_symbol, dtype=np.int64)
    path[:, 1::2] = ta
    path_length = 2 * ll.astype(np.int64) + 1
    inside = np.arange(n_state)[None, :] < path_length[:, None]  # (B, S)
    skip = np.zeros((n_batch, n_state), bool)
    skip[:, 2:] = path[:, :-2] != path[:, 2:]
    logy = F.log_softmax(xv, axis=2)
    emit = F.get_item(logy, (slice(None), np.arange(n_batch)[:, None], path))  # (T, B, S)

    def const(a: Any) -> Any:
        return F._const(np.asarray(a, dtype=dt), xv)

    pad = const(np.full((n_batch, n_state), zero))
    col1 = const(np.full((n_batch, 1), zero))
    col2 = const(np.full((n_batch, 2), zero))
    start = np.zeros((n_batch, n_state), bool)
    start[:, :2] = True
    alpha = F.where(start & inside, emit[0], pad)
    for step in range(1, n_steps):
        a1 = F.concat([col1, alpha[:, :-1]], axis=1) if n_state > 1 else pad
        a2 = F.concat([col2, alpha[:, :-2]], axis=1) if n_state > 2 else pad
        a2 = F.where(skip, a2, pad)
        new = F.logsumexp(F.stack([alpha, a1, a2]), axis=0) + emit[step]
        new = F.where(inside, new, pad)
        live = np.broadcast_to((step < il)[:, None], (n_batch, n_state))
        alpha = F.where(live, new, alpha)
    end = np.zeros((n_batch, n_state), bool)
    end[np.arange(n_batch), path_length - 1] = True
    has_two = path_length >= 2
    end[np.arange(n_batch)[has_two], (path_length - 2)[has_two]] = True
    loss = -F.logsumexp(F.where(end, alpha, pad), axis=1)
    if reduce == "mean":
        return F.mean(loss)
    return _out(loss)  # type: ignore[no-any-return]


# -- regions of interest -----------------------------------------------------------------------


def _roi_slice(size: int, stride: float, max_size: int, roi_offset: int) -> tuple[int, int]:
    """chainer's ``_roi_pooling_slice``: the (start, end) of bin ``size``."""
    start = int(np.floor(size * stride))
    end = int(np.ceil((size + 1) * stride))
    start = min(max(start + roi_offset, 0), max_size)
    end = min(max(end + roi_offset, 0), max_size)
    return start, end


def _outsize_pair(outsize: Any) -> tuple[int, int]:
    import numbers

    outh, outw = outsize if hasattr(outsize, "__iter__") else (outsize, outsize)
    if not (isinstance(outh, numbers.Integral) and int(outh) > 0):
        raise TypeError(f"outsize[0] must be positive integer: {type(outh)}, {outh}")
    if not (isinstance(outw, numbers.Integral) and int(outw) > 0):
        raise TypeError(f"outsize[1] must be positive integer: {type(outw)}, {outw}")
    return int(outh), int(outw)


def _scale_check(spatial_scale: Any) -> float:
    import numbers

    if isinstance(spatial_scale, numbers.Integral):
        spatial_scale = float(spatial_scale)
    if not (isinstance(spatial_scale, numbers.Real) and float(spatial_scale) > 0):
        raise TypeError(
            f"spatial_scale must be a positive float number: {type(spatial_scale)}, {spatial_scale}"
        )
    return float(spatial_scale)


def _roi_check(
    label: str, x: Any, rois: Any, roi_indices: Any, n_coords: int, float32_only: bool = False
) -> tuple[Any, Any]:
    xs, rs = _shape(x), _shape(rois)
    xdt, rdt = _dtype(x), _dtype(rois)
    if rdt is None:
        rdt = np.asarray(rois).dtype
    if float32_only:
        if xdt != np.float32 or rdt != np.float32:
            raise _invalid(label, "x.dtype == rois.dtype == float32", f"{xdt}, {rdt}")
    elif _kind(x) != "f" or xdt != rdt:
        raise _invalid(label, "x.dtype.kind == f, x.dtype == rois.dtype", f"{xdt}, {rdt}")
    if len(xs) != 4:
        raise _invalid(label, "x.ndim == 4", f"{len(xs)} != 4")
    if len(rs) != 2 or rs[1] != n_coords:
        raise _invalid(label, f"rois.ndim == 2, rois.shape[1] == {n_coords}", f"{rs}")
    ra = np.asarray(_data(rois, label))
    if roi_indices is None:
        return ra, None
    ia = np.asarray(_data(roi_indices, label))
    if ia.dtype != np.int32 or ia.ndim != 1 or ia.shape[0] != rs[0]:
        raise _invalid(
            label,
            "roi_indices.dtype == int32, roi_indices.ndim == 1, rois.shape[0] == "
            "roi_indices.shape[0]",
            f"{ia.dtype}, {ia.shape}, {rs}",
        )
    return ra, ia


def _pick(x: Any, flat: np.ndarray, fill: float) -> Any:
    """``x.ravel()[flat]`` with the entries ``-1`` of ``flat`` given ``fill`` (a gather, so the
    gradient goes to the picked elements)."""
    dt = np.dtype(_dtype(x))
    xf = F.reshape(x, (-1,))
    ext = F.concat([xf, F._const(np.full((1,), fill, dt), x)], axis=0)
    idx = np.where(flat < 0, int(np.prod(_shape(x))), flat)
    return F.get_item(ext, idx)


def _weighted(x: Any, pos: np.ndarray, w: np.ndarray) -> Any:
    """``sum_l x[n, c, h, w at pos[..., l]] * w[..., l]`` for each channel: ``pos`` (..., L)
    flat positions in (N, H, W) (``-1``: none), ``w`` their weights; shape (..., C)."""
    n, c, h, wd = _shape(x)
    dt = np.dtype(_dtype(x))
    xt = F.reshape(F.transpose(x, (0, 2, 3, 1)), (n * h * wd, c))
    ext = F.concat([xt, F._const(np.zeros((1, c), dt), x)], axis=0)
    idx = np.where(pos < 0, n * h * wd, pos)
    g = F.get_item(ext, idx)  # (..., L, C)
    wv = F._const(w.astype(dt)[..., None], x)
    return F.sum(g * F.broadcast_to(wv, g.shape), axis=len(pos.shape) - 1)


def _roi_bins(
    ra: np.ndarray,
    ia: np.ndarray | None,
    outh: int,
    outw: int,
    scale: float,
    height: int,
    width: int,
) -> list[tuple[int, int, int, int, int, int, int]]:
    """For each roi and bin of chainer's ROI poolings: (roi, bin, image, h0, h1, w0, w1)
    (empty bins left out). ``ia`` None: ``roi_pooling_2d``'s rois (index, xmin, ymin, xmax,
    ymax) and sizes ``max + 1 - min``; else (ymin, xmin, ymax, xmax) and ``max - min``."""
    out = []
    for r in range(ra.shape[0]):
        if ia is None:
            idx, xmin, ymin, xmax, ymax = ra[r]
            plus = 1
        else:
            idx = ia[r]
            ymin, xmin, ymax, xmax = ra[r]
            plus = 0
        xmin = int(np.rint(xmin * scale))
        xmax = int(np.rint(xmax * scale))
        ymin = int(np.rint(ymin * scale))
        ymax = int(np.rint(ymax * scale))
        roi_w = max(xmax - xmin + plus, 1)
        roi_h = max(ymax - ymin + plus, 1)
        sh = 1.0 * roi_h / outh
        sw = 1.0 * roi_w / outw
        for oh in range(outh):
            h0, h1 = _roi_slice(oh, sh, height, ymin)
            if h1 <= h0:
                continue
            for ow in range(outw):
                w0, w1 = _roi_slice(ow, sw, width, xmin)
                if w1 <= w0:
                    continue
                out.append((r, oh * outw + ow, int(idx), h0, h1, w0, w1))
    return out


def _roi_max(x: Any, bins: list[Any], n_rois: int, outh: int, outw: int, fill: float) -> Variable:
    xa = np.asarray(_data(x, "roi_pooling"))
    _n, c, h, w = xa.shape
    flat = np.full((n_rois, c, outh * outw), -1, np.int64)
    for r, b, idx, h0, h1, w0, w1 in bins:
        region = xa[idx, :, h0:h1, w0:w1].reshape(c, -1)
        am = region.argmax(axis=1)
        hh = am // (w1 - w0) + h0
        ww = am % (w1 - w0) + w0
        flat[r, :, b] = ((idx * c + np.arange(c)) * h + hh) * w + ww
    return F.reshape(_pick(x, flat, fill), (n_rois, c, outh, outw))


def roi_pooling_2d(x: Any, rois: Any, outh: int, outw: int, spatial_scale: float) -> Variable:
    """Fast R-CNN's ROI max pooling: ``rois`` (R, 5) rows ``(image, xmin, ymin, xmax, ymax)``
    in input coordinates (times ``spatial_scale``, rounded), each divided into ``outh x outw``
    bins whose maximum is taken (0 for an empty bin), shape (R, C, outh, outw). As chainer on
    the CPU (the bins of ``_roi_pooling_slice``); the gradient goes to each bin's first
    maximum (rois get none). x's data is read in Python to find the maxima.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 0, 3, 3]], np.float32)
        >>> F.roi_pooling_2d(x, rois, 2, 2, 1.0)
        variable([[[[ 5.,  7.],
                    [13., 15.]]]])
    """
    ra, _ = _roi_check("ROIPooling2D", x, rois, None, 5)
    _n, _c, h, w = _shape(x)
    bins = _roi_bins(ra, None, outh, outw, spatial_scale, h, w)
    return _roi_max(x, bins, ra.shape[0], outh, outw, 0.0)


def roi_max_pooling_2d(
    x: Any, rois: Any, roi_indices: Any, outsize: Any, spatial_scale: float
) -> Variable:
    """ROI max pooling with ``rois`` (R, 4) rows ``(ymin, xmin, ymax, xmax)`` and
    ``roi_indices`` (R,) int32 their images; ``outsize`` an int or (outh, outw); an empty bin
    is ``-inf``, as chainer. The gradient goes to each bin's first maximum.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 4, 4]], np.float32)
        >>> F.roi_max_pooling_2d(x, rois, np.array([0], np.int32), 2, 1.0)
        variable([[[[ 5.,  7.],
                    [13., 15.]]]])
    """
    n_rois, bins, outh, outw = _roi_pooling_bins(
        "ROIMaxPooling2D", x, rois, roi_indices, outsize, spatial_scale
    )
    return _roi_max(x, bins, n_rois, outh, outw, -np.inf)


def _roi_pooling_bins(
    label: str, x: Any, rois: Any, roi_indices: Any, outsize: Any, spatial_scale: float
) -> tuple[int, Any, int, int]:
    """``(n_rois, bins, outh, outw)`` of roi_max/average_pooling_2d: the arguments checked and
    the bins of each (ymin, xmin, ymax, xmax) roi of ``rois`` on its image of ``x``."""
    outh, outw = _outsize_pair(outsize)
    scale = _scale_check(spatial_scale)
    ra, ia = _roi_check(label, x, rois, roi_indices, 4)
    _n, _c, h, w = _shape(x)
    return ra.shape[0], _roi_bins(ra, ia, outh, outw, scale, h, w), outh, outw


def roi_average_pooling_2d(
    x: Any, rois: Any, roi_indices: Any, outsize: Any, spatial_scale: float
) -> Variable:
    """ROI average pooling (arguments as :func:`roi_max_pooling_2d`): each bin's mean (0 for
    an empty bin); the gradient spreads evenly over the bin.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 4, 4]], np.float32)
        >>> F.roi_average_pooling_2d(x, rois, np.array([0], np.int32), 2, 1.0)
        variable([[[[ 2.5,  4.5],
                    [10.5, 12.5]]]])
    """
    n_rois, bins, outh, outw = _roi_pooling_bins(
        "ROIAveragePooling2D", x, rois, roi_indices, outsize, spatial_scale
    )
    _n, c, h, w = _shape(x)
    longest = max([(h1 - h0) * (w1 - w0) for _, _, _, h0, h1, w0, w1 in bins], default=1)
    pos = np.full((n_rois, outh * outw, longest), -1, np.int64)
    wt = np.zeros((n_rois, outh * outw, longest))
    for r, b, idx, h0, h1, w0, w1 in bins:
        hh, ww = np.meshgrid(np.arange(h0, h1), np.arange(w0, w1), indexing="ij")
        p = ((idx * h + hh) * w + ww).ravel()
        pos[r, b, : p.size] = p
        wt[r, b, : p.size] = 1.0 / p.size
    y = _weighted(x, pos, wt)  # (R, bins, C)
    return F.reshape(F.transpose(y, (0, 2, 1)), (n_rois, c, outh, outw))


def _get_bounds(p: float, limit: int) -> tuple[Any, Any, Any]:
    if p < -1 or p > limit:
        return None, None, None
    low = int(np.floor(p))
    if low == limit:
        low = low - 1
    high = low + 1
    if low <= -1:
        p = 0
    elif high >= limit:
        p = limit - 1
    return p, low, high


def _align_samples(
    ra: np.ndarray,
    ia: np.ndarray,
    outh: int,
    outw: int,
    scale: float,
    sampling_ratio: tuple[Any, Any],
    height: int,
    width: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """chainer's ROI-align sample points: for each roi, bin and sample, the 4 flat positions
    in (N, H, W) and bilinear weights (``-1``/0 where chainer adds nothing), whether the
    sample counts, and each bin's sample count."""
    n_rois = ra.shape[0]
    grids = []
    for r in range(n_rois):
        sh, sw, eh, ew = (ra[r, k] * scale for k in range(4))
        rh = max(eh - sh, 1.0)
        rw = max(ew - sw, 1.0)
        gh = int(np.ceil(rh / outh)) if sampling_ratio[0] is None else sampling_ratio[0]
        gw = int(np.ceil(rw / outw)) if sampling_ratio[1] is None else sampling_ratio[1]
        grids.append((sh, sw, rh / outh, rw / outw, gh, gw))
    n_samples = max(g[4] * g[5] for g in grids) if grids else 1
    pos = np.full((n_rois, outh * outw, n_samples, 4), -1, np.int64)
    wt = np.zeros((n_rois, outh * outw, n_samples, 4))
    valid = np.zeros((n_rois, outh * outw, n_samples), bool)
    count = np.ones((n_rois, outh * outw))
    for r, (sh, sw, bh, bw, gh, gw) in enumerate(grids):
        img = int(ia[r])
        for ph in range(outh):
            for pw in range(outw):
                b = ph * outw + pw
                count[r, b] = gh * gw
                for iy in range(gh):
                    y = sh + ph * bh + (iy + 0.5) * bh / gh
                    y, yl, yh = _get_bounds(y, height)
                    if y is None or yl is None or yh is None:
                        continue
                    for ix in range(gw):
                        x = sw + pw * bw + (ix + 0.5) * bw / gw
                        x, xl, xh = _get_bounds(x, width)
                        if x is None or xl is None or xh is None:
                            continue
                        s = iy * gw + ix
                        valid[r, b, s] = True
                        ly, lx = y - yl, x - xl
                        hy, hx = yh - y, xh - x
                        corners = (
                            (hy * hx, yl >= 0 and xl >= 0, yl, xl),
                            (hy * lx, yl >= 0 and xh <= width - 1, yl, xh),
                            (ly * hx, yh <= height - 1 and xl >= 0, yh, xl),
                            (ly * lx, yh <= height - 1 and xh <= width - 1, yh, xh),
                        )
                        for k, (wk, ok, yy, xx) in enumerate(corners):
                            if wk > 0 and ok:
                                pos[r, b, s, k] = (img * height + yy) * width + xx
                                wt[r, b, s, k] = wk
    return pos, wt, valid, count


def _align_args(
    label: str, x: Any, rois: Any, roi_indices: Any, outsize: Any, spatial_scale: Any, sr: Any
) -> tuple[Any, ...]:
    import numbers

    outh, outw = _outsize_pair(outsize)
    scale = _scale_check(spatial_scale)
    pair = tuple(sr) if hasattr(sr, "__iter__") else (sr, sr)
    if not all((isinstance(s, numbers.Integral) and int(s) >= 1) or s is None for s in pair):
        raise TypeError(f"sampling_ratio must be integer >= 1 or a pair of it: {pair}")
    ra, ia = _roi_check(label, x, rois, roi_indices, 4, float32_only=True)
    _n, c, h, w = _shape(x)
    pos, wt, valid, count = _align_samples(ra, ia, outh, outw, scale, pair, h, w)
    return outh, outw, c, pos, wt, valid, count


def roi_average_align_2d(
    x: Any,
    rois: Any,
    roi_indices: Any,
    outsize: Any,
    spatial_scale: float,
    sampling_ratio: Any = None,
) -> Variable:
    """Mask R-CNN's ROI Align, averaging: ``rois`` (R, 4) rows ``(ymin, xmin, ymax, xmax)``
    (times ``spatial_scale``, not rounded), ``roi_indices`` (R,) int32; each of the
    ``outsize`` bins is the mean of ``sampling_ratio`` (default ``ceil(bin size)``) bilinear
    samples per axis, chainer's CPU sampling. x and rois float32, as chainer. A linear function
    of x (a weighted gather), so every order of gradient; rois get none.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 4, 4]], np.float32)
        >>> F.roi_average_align_2d(x, rois, np.array([0], np.int32), 2, 1.0)
        variable([[[[ 5.  ,  6.75],
                    [12.  , 13.75]]]])
    """
    outh, outw, c, pos, wt, _valid, count = _align_args(
        "ROIAverageAlign2D", x, rois, roi_indices, outsize, spatial_scale, sampling_ratio
    )
    n_rois = pos.shape[0]
    w = wt / count[:, :, None, None]
    y = _weighted(x, pos.reshape(n_rois, outh * outw, -1), w.reshape(n_rois, outh * outw, -1))
    return F.reshape(F.transpose(y, (0, 2, 1)), (n_rois, c, outh, outw))


def roi_max_align_2d(
    x: Any,
    rois: Any,
    roi_indices: Any,
    outsize: Any,
    spatial_scale: float,
    sampling_ratio: Any = None,
) -> Variable:
    """ROI Align taking each bin's largest bilinear sample (arguments as
    :func:`roi_average_align_2d`; ``-inf`` for a bin without samples, as chainer); the
    gradient goes to the first largest sample's four neighbours. x's data is read in Python to
    find the maxima.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        >>> rois = np.array([[0, 0, 4, 4]], np.float32)
        >>> F.roi_max_align_2d(x, rois, np.array([0], np.int32), 2, 1.0)
        variable([[[[ 7.5,  9. ],
                    [13.5, 15. ]]]])
    """
    outh, outw, c, pos, wt, valid, _count = _align_args(
        "ROIMaxAlign2D", x, rois, roi_indices, outsize, spatial_scale, sampling_ratio
    )
    n_rois, n_bins, _n_samples, _ = pos.shape
    xa = np.asarray(_data(x, "roi_max_align_2d"))
    n, _c, h, w = xa.shape
    xt = np.concatenate([xa.transpose(0, 2, 3, 1).reshape(n * h * w, c), np.zeros((1, c))])
    vals = (xt[np.where(pos < 0, n * h * w, pos)] * wt[..., None]).sum(axis=3)  # (R, B, S, C)
    vals = np.where(valid[..., None], vals, -np.inf)
    best = vals.argmax(axis=2)  # (R, B, C): the first largest sample
    empty = ~valid.any(axis=2)  # (R, B)
    r_i, b_i = np.meshgrid(np.arange(n_rois), np.arange(n_bins), indexing="ij")
    sel_pos = pos[r_i[..., None], b_i[..., None], best]  # (R, B, C, 4)
    sel_w = wt[r_i[..., None], b_i[..., None], best]
    # one weighted gather per channel: positions of (n, h, w) into the (N*H*W, C) layout
    dt = np.dtype(_dtype(x))
    xt_v = F.reshape(F.transpose(x, (0, 2, 3, 1)), (n * h * w * c,))
    ext = F.concat([xt_v, F._const(np.zeros((1,), dt), x)], axis=0)
    ch = np.arange(c)[None, None, :, None]
    flat = np.where(sel_pos < 0, n * h * w * c, sel_pos * c + ch)
    g = F.get_item(ext, flat)  # (R, B, C, 4)
    y = F.sum(g * F._const(sel_w.astype(dt), x), axis=3)  # (R, B, C)
    y = F.where(
        np.broadcast_to(empty[..., None], y.shape), F._const(np.full(y.shape, -np.inf, dt), x), y
    )
    return F.reshape(F.transpose(y, (0, 2, 1)), (n_rois, c, outh, outw))


# -- normalizations ----------------------------------------------------------------------------


def batch_renormalization(
    x: Any,
    gamma: Any,
    beta: Any,
    rmax: float,
    dmax: float,
    eps: float = 2e-5,
    running_mean: Any = None,
    running_var: Any = None,
    decay: float = 0.9,
    update_statistics: bool = False,
) -> Variable:
    """Batch renormalization (training mode only, as chainer): with the batch statistics
    ``mean``, ``var`` over every axis but those of ``gamma`` (which follow the batch axis) and
    ``std = sqrt(var + eps)``, ``r = clip(std / sqrt(running_var + eps), 1 / rmax, rmax)`` and
    ``d = clip((mean - running_mean) / sqrt(running_var + eps), -dmax, dmax)``,
    ``y = gamma ((x - mean) / std * r + d) + beta``; ``r`` and ``d`` are constants of the
    gradient, as chainer's. ``running_mean`` and ``running_var`` (arrays of gamma's shape) are
    required; with ``update_statistics`` they are updated in place afterwards
    (``decay * old + (1 - decay) * batch``, the variance unbiased), as chainer. A composition of
    gradhub functions, so the gradient (chainer's) can be differentiated again (chainer's, an
    old-style Function, cannot).

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0], [3.0]], np.float32)
        >>> one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
        >>> with chainer.using_config("train", True):
        ...     y = F.batch_renormalization(x, one, zero, 1.0, 0.0, eps=0.0,
        ...                                 running_mean=zero.copy(), running_var=one.copy())
        >>> y
        variable([[-1.],
                  [ 1.]])
    """
    from . import config

    if running_mean is None:
        raise TypeError("running_mean is required")
    if running_var is None:
        raise TypeError("running_var is required")
    label = "BatchRenormalizationFunction"
    xs, gs = _shape(x), _shape(gamma)
    m_nd = len(gs)
    if (
        _kind(x) != "f"
        or len(xs) < m_nd + 1
        or xs[1 : 1 + m_nd] != gs
        or _kind(gamma) != "f"
        or _dtype(gamma) != _dtype(beta)
        or gs != _shape(beta)
    ):
        raise _invalid(
            label,
            "x.dtype.kind == f, x.ndim >= gamma.ndim + 1, x.shape[1:1 + M] == gamma.shape, "
            "gamma.dtype == beta.dtype, gamma.shape == beta.shape",
            f"x {xs} {_dtype(x)}, gamma {gs} {_dtype(gamma)}, beta {_shape(beta)} {_dtype(beta)}",
        )
    if not config.train:
        raise RuntimeError(
            "chainer F.batch_renormalization computes in training mode only "
            "(chainer.config.train is False; chainer asserts it)"
        )
    gdt = np.dtype(_dtype(gamma))
    head = m_nd + 1
    axes = (0, *range(head, len(xs)))
    expand = (1, *gs) + (1,) * (len(xs) - head)
    xc = x if np.dtype(_dtype(x)) == gdt else F.cast(x, gdt)
    mean = F.mean(xc, axis=axes)
    diff = xc - F.broadcast_to(F.reshape(mean, expand), xs)
    var = F.mean(diff * diff, axis=axes)
    std = F.sqrt(var + eps)
    rm = np.asarray(running_mean)
    rv = np.asarray(running_var)
    running_sigma = np.sqrt(rv + eps, dtype=rm.dtype)
    r = np.clip(np.asarray(std.array) / running_sigma, 1.0 / rmax, rmax)
    d = np.clip((np.asarray(mean.array) - rm) / running_sigma, -dmax, dmax)
    x_hat = diff / F.broadcast_to(F.reshape(std, expand), xs)
    renorm = x_hat * F.broadcast_to(F._const(r.astype(gdt).reshape(expand), x), xs)
    renorm = renorm + F.broadcast_to(F._const(d.astype(gdt).reshape(expand), x), xs)
    y = F.broadcast_to(F.reshape(gamma, expand), xs) * renorm
    y = y + F.broadcast_to(F.reshape(beta, expand), xs)
    if update_statistics:
        m = int(np.prod(xs)) // int(np.prod(gs))
        adjust = m / max(m - 1.0, 1.0)
        running_mean *= decay
        running_mean += np.asarray(mean.array) * (1 - decay)
        running_var *= decay
        running_var += np.asarray(var.array) * ((1 - decay) * adjust)
    return cast(Variable, y) if y.dtype == np.dtype(_dtype(x)) else F.cast(y, _dtype(x))


def fixed_batch_renormalization(
    x: Any, gamma: Any, beta: Any, mean: Any, var: Any, eps: float = 2e-5
) -> Variable:
    """Deprecated in chainer (its ``DeprecationWarning``): :func:`fixed_batch_normalization`
    in test mode."""
    import warnings

    from . import using_config
    from ._training_functions import fixed_batch_normalization

    warnings.warn(
        "fixed_batch_renormalization is deprecated. Use fixed_batch_normalization instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    with using_config("train", False):
        return fixed_batch_normalization(x, gamma, beta, mean, var, eps)


def _group_layout(shape: tuple[int, ...], groups: int) -> tuple[tuple[int, ...], int, int]:
    b, c = shape[:2]
    spatial = tuple(range(2, len(shape)))
    m = b
    for i in spatial:
        m *= shape[i]
    return spatial, m, c // groups


def _decorrelated_check(label: str, x: Any, groups: int) -> None:
    s = _shape(x)
    if _kind(x) != "f" or len(s) < 2 or s[1] % groups:
        raise _invalid(label, f"x.dtype.kind == f, x.ndim >= 2, x.shape[1] % {groups} == 0", f"{s}")


class _DecorrelatedBN(FunctionNode):
    """chainer's ``DecorrelatedBatchNormalization``: ZCA whitening per group of channels with
    the batch covariance (``numpy.linalg.eigh``), its hand-written gradient (first order only:
    it refuses to be differentiated again, as chainer's raises NotImplementedError)."""

    _first_order_only = True

    def __init__(self, groups: int, eps: float, mean: Any, projection: Any, decay: float) -> None:
        self.groups = groups
        self.eps = eps
        self.running_mean = mean
        self.running_projection = projection
        self.decay = decay

    @property
    def label(self) -> str:
        return "DecorrelatedBatchNormalization"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        # x is kept so that the gradient is connected to it: differentiating the gradient again
        # then raises (chainer's gives None, a wrong zero)
        self.retain_inputs((0,))
        (x,) = inputs
        xp = _xp_of(x)
        shape = x.shape
        b, c = shape[:2]
        g = self.groups
        spatial, m, cg = _group_layout(shape, g)
        x_hat = x.transpose((1, 0, *spatial)).reshape(g, cg, m)
        mean = x_hat.mean(axis=2, keepdims=True)
        x_hat = x_hat - mean
        eps = x.dtype.type(self.eps)
        cov = xp.matmul(x_hat, x_hat.transpose(0, 2, 1)) / x.dtype.type(m) + eps * xp.eye(
            cg, dtype=x.dtype
        )
        self.eigvals, self.eigvectors = xp.linalg.eigh(cov)
        u = xp.matmul(_batch_diag(self.eigvals**-0.5, xp), self.eigvectors.transpose(0, 2, 1))
        self.y_hat_pca = xp.matmul(u, x_hat)
        y_hat = xp.matmul(self.eigvectors, self.y_hat_pca)
        y = y_hat.reshape((c, b, *shape[2:])).transpose((1, 0, *spatial))
        if self.running_mean is not None:
            self.running_mean *= self.decay
            self.running_mean += (1 - self.decay) * mean.squeeze(axis=2)
        if self.running_projection is not None:
            adjust = m / max(m - 1.0, 1.0)
            self.running_projection *= self.decay
            proj = xp.matmul(self.eigvectors, u)
            self.running_projection += (1 - self.decay) * adjust * proj
        return (xp.ascontiguousarray(y),)

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        (gyv,) = grad_outputs
        gy = gyv.array
        xp = _xp_of(gy)
        shape = gy.shape
        b, c = shape[:2]
        g = self.groups
        spatial, m, cg = _group_layout(shape, g)
        ar = np.arange(cg)
        gy_hat = gy.transpose((1, 0, *spatial)).reshape(g, cg, m)
        ev, vec, ypca = self.eigvals, self.eigvectors, self.y_hat_pca
        gy_pca = xp.matmul(vec.transpose(0, 2, 1), gy_hat)
        f = gy_pca.mean(axis=2, keepdims=True)
        k = ev[:, :, None] - ev[:, None, :]
        valid = k != 0
        k[valid] = xp.reciprocal(k[valid])
        v = _batch_diag(ev, xp)
        v_sqrt = _batch_diag(ev**0.5, xp)
        v_invsqrt = _batch_diag(ev**-0.5, xp)
        f_c = xp.matmul(gy_pca, ypca.transpose(0, 2, 1)) / gy.dtype.type(m)
        mm = xp.zeros_like(f_c)
        mm[:, ar, ar] = f_c[:, ar, ar]
        mat = k.transpose(0, 2, 1) * (
            xp.matmul(v, f_c.transpose(0, 2, 1)) + xp.matmul(xp.matmul(v_sqrt, f_c), v_sqrt)
        )
        s = mat + mat.transpose(0, 2, 1)
        r = gy_pca - f + xp.matmul((s - mm).transpose(0, 2, 1), ypca)
        gx_hat = xp.matmul(
            xp.matmul(r.transpose(0, 2, 1), v_invsqrt), vec.transpose(0, 2, 1)
        ).transpose(0, 2, 1)
        gx = gx_hat.reshape((c, b, *shape[2:])).transpose((1, 0, *spatial))
        return (Variable(xp.ascontiguousarray(gx).astype(gy.dtype), requires_grad=False),)


def _batch_diag(a: Any, xp: Any) -> Any:
    s0, s1 = a.shape
    ret = xp.zeros((s0, s1, s1), a.dtype)
    ar = np.arange(s1)
    ret[:, ar, ar] = a
    return ret


def decorrelated_batch_normalization(x: Any, **kwargs: Any) -> Variable:
    """Decorrelated batch normalization (ZCA whitening of each group of ``x.shape[1] /
    groups`` channels over the batch and spatial axes), chainer's keywords ``groups=16``,
    ``eps=2e-5``, ``running_mean=None`` (g, C / g), ``running_projection=None`` (g, C / g,
    C / g) (updated in place when given, as chainer), ``decay=0.9``. chainer's forward and its
    hand-written gradient, first order only (differentiating it again raises, as chainer).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0, 2.0], [-1.0, -2.0]], np.float32)
        >>> F.decorrelated_batch_normalization(x, groups=2).array.round(3)
        array([[ 1.,  1.],
               [-1., -1.]], dtype=float32)
    """
    allowed = {"groups", "eps", "running_mean", "running_projection", "decay"}
    extra = set(kwargs) - allowed
    if extra:
        raise TypeError(f"got unexpected keyword argument(s): {', '.join(sorted(extra))}")
    groups = kwargs.get("groups", 16)
    _decorrelated_check("DecorrelatedBatchNormalization", x, groups)
    node = _DecorrelatedBN(
        groups,
        kwargs.get("eps", 2e-5),
        kwargs.get("running_mean"),
        kwargs.get("running_projection"),
        kwargs.get("decay", 0.9),
    )
    return node.apply((x,))[0]


def fixed_decorrelated_batch_normalization(
    x: Any, mean: Any, projection: Any, groups: int = 16
) -> Variable:
    """Decorrelated batch normalization with given statistics: for each group of channels,
    ``projection[g] @ (x_g - mean[g])`` (``mean`` (g, C / g), ``projection`` (g, C / g, C / g),
    of x's dtype). A composition of gradhub functions: the derivatives with respect to x, mean
    and projection, of every order.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[1.0, 2.0]], np.float32)
        >>> proj = np.array([[[2.0]], [[3.0]]], np.float32)
        >>> F.fixed_decorrelated_batch_normalization(x, np.zeros((2, 1), np.float32), proj,
        ...                                          groups=2)
        variable([[2., 6.]])
    """
    label = "FixedDecorrelatedBatchNormalization"
    if _kind(x) != "f" or _dtype(mean) != _dtype(x) or _dtype(projection) != _dtype(x):
        raise _invalid(
            label,
            "x.dtype.kind == f, mean.dtype == x.dtype, projection.dtype == x.dtype",
            f"{_dtype(x)}, {_dtype(mean)}, {_dtype(projection)}",
        )
    shape = _shape(x)
    if len(shape) < 2:
        raise _invalid(label, "x.ndim >= 2", f"{len(shape)} < 2")
    _decorrelated_check(label, x, groups)
    b, c = shape[:2]
    spatial, m, cg = _group_layout(shape, groups)
    x_hat: Any = F.reshape(F.transpose(x, (1, 0, *spatial)), (groups, cg, m))
    x_hat = x_hat - F.broadcast_to(F.expand_dims(mean, 2), (groups, cg, m))
    y_hat = F.matmul(projection, x_hat)
    return F.transpose(F.reshape(y_hat, (c, b, *shape[2:])), (1, 0, *spatial))


# -- spatial transformer -----------------------------------------------------------------------


def _no_cudnn_kwargs(kwargs: dict[str, Any]) -> None:
    if "use_cudnn" in kwargs:
        raise ValueError(
            'The argument "use_cudnn" is not supported anymore. Use '
            "chainer.using_config('use_cudnn', value) context where value can be `always`, "
            "`never`, or `auto`."
        )
    if kwargs:
        raise TypeError(f"got unexpected keyword argument(s): {', '.join(sorted(kwargs))}")


def spatial_transformer_grid(theta: Any, output_shape: Any, **kwargs: Any) -> Variable:
    """The sampling grid of a spatial transformer: ``theta`` (B, 2, 3) affine maps applied to
    the points ``(x, y, 1)`` of an ``output_shape`` (H, W) grid over [-1, 1]^2 (``x`` along W),
    shape (B, 2, H, W) (row 0 the x coordinates). Linear in theta (every order of gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], np.float32)
        >>> F.spatial_transformer_grid(theta, (2, 2)).array[0, 0]
        array([[-1.,  1.],
               [-1.,  1.]], dtype=float32)
    """
    _no_cudnn_kwargs(kwargs)
    s = _shape(theta)
    if _kind(theta) != "f" or len(s) != 3 or s[1:] != (2, 3):
        raise _invalid(
            "SpatialTransformerGrid",
            "theta.dtype.kind == f, theta.ndim == 3, theta.shape[1:] == (2, 3)",
            f"{_dtype(theta)}, {s}",
        )
    h, w = (int(v) for v in output_shape)
    dt = np.dtype(_dtype(theta))
    ys, xs = np.meshgrid(
        np.linspace(-1, 1, h, dtype=dt), np.linspace(-1, 1, w, dtype=dt), indexing="ij"
    )
    coords = np.concatenate([xs[None], ys[None], np.ones((1, h, w), dtype=dt)], axis=0)
    grid = F.tensordot(theta, F._const(coords.reshape(3, h * w), theta), axes=1)
    return F.reshape(grid, (s[0], 2, h, w))


def spatial_transformer_sampler(x: Any, grid: Any, **kwargs: Any) -> Variable:
    """Bilinear sampling of x (B, C, H, W) at ``grid`` (B, 2, out_H, out_W) (x and y
    coordinates in [-1, 1]; points outside read zeros, the image being padded by one pixel),
    shape (B, C, out_H, out_W), as chainer's CPU code. A composition of gradhub functions
    (gathers weighted by the bilinear weights, which depend on the grid), so the gradients
    with respect to x and grid are chainer's (the grid's is 0 where a coordinate is clipped)
    and can be differentiated again (chainer's cannot). The pixel indices are read from the
    grid's data in Python.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
        >>> grid = np.zeros((1, 2, 1, 1), np.float32)
        >>> F.spatial_transformer_sampler(x, grid)
        variable([[[[1.5]]]])
    """
    _no_cudnn_kwargs(kwargs)
    xs, gs = _shape(x), _shape(grid)
    if (
        _kind(x) != "f"
        or _dtype(grid) != _dtype(x)
        or len(xs) != 4
        or len(gs) != 4
        or gs[1] != 2
        or xs[0] != gs[0]
    ):
        raise _invalid(
            "SpatialTransformerSampler",
            "x.dtype.kind == f, grid.dtype == x.dtype, x.ndim == 4, grid.ndim == 4, "
            "grid.shape[1] == 2, x.shape[0] == grid.shape[0]",
            f"x {xs} {_dtype(x)}, grid {gs} {_dtype(grid)}",
        )
    b, c, h, w = xs
    out_h, out_w = gs[2:]
    dt = np.dtype(_dtype(x))
    g = F.reshape(grid, (b, 2, out_h * out_w))
    u: Any = (g[:, 0] + 1) * (w - 1) / 2 + 1
    v: Any = (g[:, 1] + 1) * (h - 1) / 2 + 1
    ua, va = np.asarray(u.array), np.asarray(v.array)
    u_in = (ua > 0) & (ua < w + 1)
    v_in = (va > 0) & (va < h + 1)
    uc = F.where(u_in, u, F._const(ua.clip(0, w + 1).astype(dt), x))
    vc = F.where(v_in, v, F._const(va.clip(0, h + 1).astype(dt), x))
    uca, vca = ua.clip(0, w + 1), va.clip(0, h + 1)
    u0 = np.floor(uca).astype(np.int64).clip(0, w)
    v0 = np.floor(vca).astype(np.int64).clip(0, h)
    u1, v1 = u0 + 1, v0 + 1
    wu0 = uc - F._const(u0.astype(dt), x)
    wu1 = F._const(u1.astype(dt), x) - uc
    wv0 = vc - F._const(v0.astype(dt), x)
    wv1 = F._const(v1.astype(dt), x) - vc
    x_pad = F.transpose(F.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), "constant"), (0, 2, 3, 1))
    bi = np.arange(b)[:, None]

    def corner(vv: np.ndarray, uu: np.ndarray) -> Any:
        return F.get_item(x_pad, (bi, vv, uu))  # (B, HW, C)

    def weighted(wa: Any, wb: Any, vv: np.ndarray, uu: np.ndarray) -> Any:
        wt = F.expand_dims(wa * wb, 2)
        return F.broadcast_to(wt, (b, out_h * out_w, c)) * corner(vv, uu)

    y = weighted(wu1, wv1, v0, u0) + weighted(wu0, wv1, v0, u1)
    y = y + weighted(wu1, wv0, v1, u0) + weighted(wu0, wv0, v1, u1)
    return F.transpose(F.reshape(y, (b, out_h, out_w, c)), (0, 3, 1, 2))


# -- covariance losses, fft, shift, noise, local convolution, blackout -------------------------


def _reduce_hss(label: str, reduce: str, what: str = "Only") -> None:
    if reduce not in ("half_squared_sum", "no"):
        raise ValueError(
            f"{what} 'half_squared_sum' and 'no' are valid for 'reduce', but '{reduce}' is given"
        )


def cross_covariance(y: Any, z: Any, reduce: str = "half_squared_sum") -> Variable:
    """The cross-covariance of y (N, M) and z (N, K): ``C = (y - mean(y))^T (z - mean(z)) / N``
    (means over the batch axis); ``reduce="half_squared_sum"`` gives ``sum(C ** 2) / 2``,
    ``"no"`` C itself. A composition of gradhub functions (every order of gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> y = np.array([[1.0], [-1.0]], np.float32)
        >>> F.cross_covariance(y, y, reduce="no")
        variable([[1.]])
    """
    _reduce_hss("CrossCovariance", reduce)
    ys, zs = _shape(y), _shape(z)
    if _kind(y) != "f" or _dtype(y) != _dtype(z) or len(ys) != 2 or len(zs) != 2 or ys[0] != zs[0]:
        raise _invalid(
            "CrossCovariance",
            "y.dtype.kind == f, y.dtype == z.dtype, y.ndim == 2, z.ndim == 2, "
            "y.shape[0] == z.shape[0]",
            f"y {ys} {_dtype(y)}, z {zs} {_dtype(z)}",
        )
    n = ys[0]
    yc = y - F.broadcast_to(F.mean(y, axis=0, keepdims=True), ys)
    zc = z - F.broadcast_to(F.mean(z, axis=0, keepdims=True), zs)
    cov = F.matmul(yc, zc, transa=True) / n
    if reduce == "half_squared_sum":
        return cast(Variable, F.sum(cov * cov) * 0.5)
    return cast(Variable, cov)


def decov(h: Any, reduce: str = "half_squared_sum") -> Variable:
    """The DeCov loss of h (N, M): ``C`` the covariance of the columns with its diagonal set
    to 0; ``sum(C ** 2) / 2`` (``reduce="half_squared_sum"``) or C (``"no"``). A composition of
    gradhub functions, so, unlike chainer's old-style function, it can be differentiated twice.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> h = np.array([[1.0, 1.0], [-1.0, -1.0]], np.float32)
        >>> F.decov(h)
        variable(1.)
    """
    _reduce_hss("DeCov", reduce, "only")
    hs = _shape(h)
    if _kind(h) != "f" or len(hs) != 2:
        raise _invalid("DeCov", "h.dtype.kind == f, h.ndim == 2", f"h {hs} {_dtype(h)}")
    n, m = hs
    hc = h - F.broadcast_to(F.mean(h, axis=0, keepdims=True), hs)
    off = F._const((1 - np.eye(m)).astype(np.dtype(_dtype(h))), h)
    cov = F.matmul(hc, hc, transa=True) * off / n
    if reduce == "half_squared_sum":
        return cast(Variable, F.sum(cov * cov) * 0.5)
    return cast(Variable, cov)


class _FFT(FunctionNode):
    """chainer's ``FFT``: ``numpy.fft.fft``/``ifft`` of ``real + 1j * imag`` along the last
    axis, split back into real and imaginary parts of the inputs' dtype; the backward is the
    same transform of ``(gi, gr)`` with the outputs swapped (differentiable again)."""

    def __init__(self, method: str) -> None:
        self._method = method

    @property
    def label(self) -> str:
        return "FFT"

    def forward(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        real, imag = inputs
        xp = _xp_of(real)
        y = getattr(xp.fft, self._method)(real + imag * 1j)
        return (
            xp.ascontiguousarray(y.real.astype(real.dtype)),
            xp.ascontiguousarray(y.imag.astype(imag.dtype)),
        )

    def backward(self, indexes: tuple[int, ...], grad_outputs: tuple[Any, ...]) -> tuple[Any, ...]:
        gr, gi = grad_outputs
        if gr is None:
            gr = Variable(np.zeros_like(gi.array), requires_grad=False)
        if gi is None:
            gi = Variable(np.zeros_like(gr.array), requires_grad=False)
        gxi, gxr = _FFT(self._method).apply((gi, gr))
        return gxr, gxi


def _fft(method: str, x: Any) -> tuple[Variable, Variable]:
    real, imag = x
    label = "FFT"
    rs, is_ = _shape(real), _shape(imag)
    if _kind(real) != "f" or len(rs) == 0 or rs != is_ or _dtype(real) != _dtype(imag):
        raise _invalid(
            label,
            "real.dtype.kind == f, real.ndim > 0, real.shape == imag.shape, "
            "real.dtype == imag.dtype",
            f"real {rs} {_dtype(real)}, imag {is_} {_dtype(imag)}",
        )
    yr, yi = _FFT(method).apply((real, imag))
    return yr, yi


def fft(x: tuple[Any, Any]) -> tuple[Variable, Variable]:
    """The discrete Fourier transform along the last axis of the complex array given as
    ``x = (real, imag)`` (one floating dtype and shape): ``(real, imag)`` of
    ``numpy.fft.fft(real + 1j * imag)`` in that dtype. Differentiable, every order.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.fft((np.array([1.0, 0.0], np.float32), np.zeros(2, np.float32)))
        (variable([1., 1.]), variable([0., 0.]))
    """
    return _fft("fft", x)


def ifft(x: tuple[Any, Any]) -> tuple[Variable, Variable]:
    """The inverse of :func:`fft` (``numpy.fft.ifft``), as chainer."""
    return _fft("ifft", x)


def shift(x: Any, ksize: Any = 3, dilate: Any = 1) -> Variable:
    """chainer's shift (zero-FLOP convolution): the channels of x (N, C, H, W) split into
    ``kh * kw`` groups (C >= kh kw; the centre group last), each shifted by its offset in the
    ``ksize`` window (times ``dilate``), zeros shifted in. kh and kw must be odd. A composition
    of padding and slicing (every order of gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.arange(9, dtype=np.float32).reshape(1, 9, 1, 1)
        >>> F.shift(x).shape
        (1, 9, 1, 1)
    """
    kh, kw = _tuple_n(ksize, 2)
    if kh % 2 != 1:
        raise ValueError("kh must be odd")
    if kw % 2 != 1:
        raise ValueError("kw must be odd")
    dy, dx = _tuple_n(dilate, 2)
    s = _shape(x)
    if _kind(x) != "f" or len(s) != 4 or s[1] < kh * kw:
        raise _invalid(
            "Shift",
            f"x.dtype.kind == f, x.ndim == 4, x.shape[1] >= {kh * kw}",
            f"x {s} {_dtype(x)}",
        )
    _b, c, h, w = s
    py = kh // 2 * abs(dy)
    px = kw // 2 * abs(dx)
    xp = F.pad(x, ((0, 0), (0, 0), (py, py), (px, px)), "constant")
    n_groups = kh * kw
    group_size = c // n_groups
    parts = []
    for i in range(n_groups):
        g = i
        if g == (n_groups - 1) // 2:
            g = n_groups - 1
        elif g == n_groups - 1:
            g = (n_groups - 1) // 2
        ky = (g // kw) - py // abs(dy)
        kx = (g % kw) - px // abs(dx)
        hs = py - ky * dy
        ws = px - kx * dx
        cs = i * group_size
        ce = (i + 1) * group_size if i < n_groups - 1 else c
        parts.append(
            F.get_item(xp, (slice(None), slice(cs, ce), slice(hs, hs + h), slice(ws, ws + w)))
        )
    return F.concat(parts, axis=1)


def zoneout(h: Any, x: Any, ratio: float = 0.5, **kwargs: Any) -> Variable:
    """Zoneout: in training mode each element is ``h`` with probability ``ratio``, else ``x``
    (the mask ``numpy.random.rand(*x.shape) >= ratio`` picks x, numpy's global generator, as
    chainer on the CPU); in test mode ``x`` itself. The gradients go to the picked operand.

    Example::

        >>> import numpy as np
        >>> from gradhub_compat import chainer
        >>> import gradhub_compat.chainer.functions as F
        >>> with chainer.using_config("train", False):
        ...     F.zoneout(np.zeros(2, np.float32), np.ones(2, np.float32))
        array([1., 1.], dtype=float32)
    """
    from . import config

    if "train" in kwargs:
        raise ValueError("train argument is not supported anymore. Use chainer.using_config")
    if kwargs:
        raise TypeError(f"got unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
    if not config.train:
        return x  # type: ignore[no-any-return]
    flag_x = np.random.rand(*_shape(x)) >= ratio
    return F.where(flag_x, x, h)


def simplified_dropconnect(
    x: Any,
    W: Any,
    b: Any = None,
    ratio: float = 0.5,
    train: bool = True,
    mask: Any = None,
    use_batchwise_mask: bool = True,
) -> Variable:
    """Linear layer with DropConnect on the weights: ``y[i] = (W * mask[i] / (1 - ratio)) x[i]
    (+ b)``, x (N, ...) flattened to (N, in), W (out, in); the mask (N, out, in) (or (out, in)
    with ``use_batchwise_mask=False``) is ``numpy.random.rand(*shape) >= ratio`` (numpy's
    global generator, as chainer on the CPU) unless given; ``train=False`` means ratio 0 (as
    chainer, this function reads its ``train`` argument, not ``chainer.config.train``).
    A composition of gradhub functions (every order of gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 2), np.float32)
        >>> W = np.ones((1, 2), np.float32)
        >>> F.simplified_dropconnect(x, W, train=False)
        variable([[2.]])
    """
    if not train:
        ratio = 0
    label = "SimplifiedDropconnect"
    xs, ws = _shape(x), _shape(W)
    if (
        _kind(x) != "f"
        or _kind(W) != "f"
        or len(xs) < 2
        or len(ws) != 2
        or int(np.prod(xs[1:])) != ws[1]
    ):
        raise _invalid(
            label,
            "x.dtype.kind == f, W.dtype.kind == f, x.ndim >= 2, W.ndim == 2, "
            "prod(x.shape[1:]) == W.shape[1]",
            f"x {xs} {_dtype(x)}, W {ws} {_dtype(W)}",
        )
    if b is not None and (_dtype(b) != _dtype(x) or _shape(b) != (ws[0],)):
        raise _invalid(
            label, "b.dtype == x.dtype, b.shape == (W.shape[0],)", f"b {_shape(b)} {_dtype(b)}"
        )
    mshape = (xs[0], ws[0], ws[1]) if use_batchwise_mask else (ws[0], ws[1])
    if mask is None:
        m = np.random.rand(*mshape) >= ratio
    else:
        m = np.asarray(cast(Any, mask).array if isinstance(mask, _NativeVariable) else mask)
        if m.shape != mshape:
            raise _invalid(label, f"mask.shape == {mshape}", f"{m.shape}")
    wdt = np.dtype(_dtype(W))
    scale = wdt.type(1.0 / (1 - ratio))
    xm = F.reshape(x, (xs[0], ws[1]))
    wm = W * scale * F._const(m.astype(wdt), W)  # (N, out, in) or (out, in)
    y: Any
    if use_batchwise_mask:
        y = F.matmul(wm, F.expand_dims(xm, 2))  # (N, out, 1)
    else:
        y = F.matmul(xm, wm, transb=True)
    y = F.reshape(y, (xs[0], ws[0]))
    if y.dtype != np.dtype(_dtype(x)):
        y = F.cast(y, _dtype(x))
    if b is not None:
        y = y + F.broadcast_to(b, y.shape)
    return y


def local_convolution_2d(x: Any, W: Any, b: Any = None, stride: Any = 1) -> Variable:
    """Locally connected 2-d layer (unshared weights): ``y[n, o, i, j] = sum_{c, k, l}
    x[n, c, i sy + k, j sx + l] W[o, i, j, c, k, l] (+ b[o, i, j])``, W of shape
    (out, out_h, out_w, C, kh, kw), no padding, as chainer. A composition of gradhub functions
    (every order of gradient; chainer's gradient cannot be differentiated again).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.ones((1, 1, 2, 2), np.float32)
        >>> W = np.ones((1, 1, 1, 1, 2, 2), np.float32)
        >>> F.local_convolution_2d(x, W)
        variable([[[[4.]]]])
    """
    sy, sx = _tuple_n(stride, 2)
    xs, ws = _shape(x), _shape(W)
    label = "LocalConvolution2DFunction"
    if _kind(x) != "f" or _kind(W) != "f" or len(xs) != 4 or len(ws) != 6 or xs[1] != ws[3]:
        raise _invalid(
            label,
            "x.dtype.kind == f, W.dtype.kind == f, x.ndim == 4, W.ndim == 6, "
            "x.shape[1] == W.shape[3]",
            f"x {xs} {_dtype(x)}, W {ws} {_dtype(W)}",
        )
    if b is not None and (_dtype(b) != _dtype(x) or _shape(b) != ws[:3]):
        raise _invalid(label, "b.dtype == x.dtype, b.shape == W.shape[:3]", f"{_shape(b)}")
    _o, oh, ow, _c, kh, kw = ws
    rows = []
    for k in range(kh):
        cols = []
        for l in range(kw):
            cols.append(
                F.get_item(
                    x,
                    (
                        slice(None),
                        slice(None),
                        slice(k, k + sy * (oh - 1) + 1, sy),
                        slice(l, l + sx * (ow - 1) + 1, sx),
                    ),
                )
            )
        rows.append(F.stack(cols, axis=2))  # (N, C, kw, oh, ow)
    patches = F.stack(rows, axis=2)  # (N, C, kh, kw, oh, ow)
    y: Any = F.einsum("ncklij,oijckl->noij", patches, W)
    if y.dtype != np.dtype(_dtype(x)):
        y = F.cast(y, _dtype(x))
    if b is not None:
        y = y + F.broadcast_to(F.expand_dims(b, 0), y.shape)
    return y


def black_out(x: Any, t: Any, W: Any, samples: Any, reduce: str = "mean") -> Variable:
    """BlackOut loss: x (B, D) the features, t (B,) int32 the targets, W (V, D) the output
    embeddings, ``samples`` (B, S) int32 the negative samples; with ``pos = W[t] . x`` and
    ``neg = W[samples] . x``, ``logz = logsumexp([pos, neg])``, the loss is
    ``-(pos - logz + sum(log(1 - exp(neg - logz))))``, averaged (``"mean"``) or per sample
    (``"no"``). chainer's composition of functions (every order of gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.zeros((1, 2), np.float32)
        >>> W = np.zeros((3, 2), np.float32)
        >>> F.black_out(x, np.array([0], np.int32), W, np.array([[1, 2]], np.int32))
        variable(1.9095427)
    """
    batch_size = _shape(x)[0]
    neg_emb = F.embed_id(samples, W)
    neg_y = F.matmul(neg_emb, F.expand_dims(x, 2))
    neg_y = F.reshape(neg_y, neg_y.shape[:-1])
    pos_emb = F.expand_dims(F.embed_id(t, W), 1)
    pos_y = F.matmul(pos_emb, F.expand_dims(x, 2))
    pos_y = F.reshape(pos_y, pos_y.shape[:-1])
    logz = F.logsumexp(F.concat([pos_y, neg_y]), axis=1)
    blogz, bneg_y = F.broadcast(F.reshape(logz, (batch_size, 1)), neg_y)
    ny = F.log(1 - F.exp(bneg_y - blogz))
    py = F.reshape(pos_y, (batch_size,))
    loss: Any = -(py - logz + F.sum(ny, axis=1))
    if reduce == "mean":
        loss = F.average(loss)
    return cast(Variable, loss)


# -- tree LSTM, clustering loss, negative sampling, strided views ------------------------------


def tree_lstm(*inputs: Any) -> tuple[Variable, Variable]:
    """The N-ary tree LSTM: ``inputs = (c_1, ..., c_n, x)``, the children's cells (B, H, ...)
    and x (B, (3 + n) H, ...) holding the gates in blocks ``a, i, o, f_1, ..., f_n``;
    ``c = tanh(a) sigmoid(i) + sum_k sigmoid(f_k) c_k``, ``h = sigmoid(o) tanh(c)``; returns
    ``(c, h)``. chainer's tanh form of the sigmoid; a composition of gradhub functions (every
    order of gradient; chainer's is first order only).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> c, h = F.tree_lstm(np.ones((1, 1), np.float32), np.zeros((1, 4), np.float32))
        >>> c
        variable([[0.5]])
    """
    if len(inputs) < 2:
        raise _invalid("TreeLSTM", "in_types.size() >= 2", f"{len(inputs)} < 2")
    cs, x = inputs[:-1], inputs[-1]
    n_ary = len(cs)
    xs = _shape(x)
    for k, c in enumerate(cs):
        s = _shape(c)
        if (
            _kind(c) != "f"
            or _dtype(x) != _dtype(c)
            or len(s) < 2
            or len(s) != len(xs)
            or xs[0] != s[0]
            or xs[1] != (3 + n_ary) * s[1]
            or xs[2:] != s[2:]
        ):
            raise _invalid(
                "TreeLSTM",
                f"c{k}.dtype.kind == f, x.dtype == c{k}.dtype, x.shape[0] == c{k}.shape[0], "
                f"x.shape[1] == (3 + n_ary) * c{k}.shape[1], x.shape[2:] == c{k}.shape[2:]",
                f"x {xs} {_dtype(x)}, c{k} {s} {_dtype(c)}",
            )
    r = F.reshape(x, (xs[0], 3 + n_ary, xs[1] // (3 + n_ary), *xs[2:]))
    gates = [r[:, k] for k in range(3 + n_ary)]
    a = F.tanh(gates[0])
    i = _out(F._lstm_sigmoid(gates[1]))
    o = _out(F._lstm_sigmoid(gates[2]))
    c_new = a * i
    for f, c in zip(gates[3:], cs):
        c_new = c_new + _out(F._lstm_sigmoid(f)) * c
    h = o * F.tanh(c_new)
    return c_new, h


def discriminative_margin_based_clustering_loss(
    embeddings: Any,
    labels: Any,
    delta_v: float,
    delta_d: float,
    max_embedding_dim: int,
    norm: int = 1,
    alpha: float = 1.0,
    beta: float = 1.0,
    gamma: float = 0.001,
) -> tuple[Any, Any, Any]:
    """The discriminative loss for instance segmentation (De Brabandere et al.):
    ``embeddings`` (B, max_embedding_dim, H, W), ``labels`` (B, H, W) integer instance labels
    (1 .. max_embedding_dim; 0 the background); returns ``(alpha * l_var, beta * l_dist,
    gamma * l_reg)`` with the variance (``delta_v``), distance (``delta_d``) and
    regularization terms and the L1 (``norm=1``) or L2 (``norm=2``) norm. chainer's
    composition of functions (every order of gradient); as chainer, ``l_dist`` is the float
    0.0 when there is a single instance label.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> emb = np.zeros((1, 2, 1, 2), np.float32)
        >>> labels = np.array([[[1, 2]]], np.int32)
        >>> l_var, l_dist, l_reg = F.discriminative_margin_based_clustering_loss(
        ...     emb, labels, 0.5, 1.5, 2)
        >>> l_dist
        variable(9.)
    """
    if max_embedding_dim <= 0:
        raise ValueError("Max number of embeddings has to be positive!")
    if norm == 1:

        def nrm(v: Any, axis: Any = None) -> Any:
            return F.sum(F.absolute(v), axis=axis)

    elif norm == 2:

        def nrm(v: Any, axis: Any = None) -> Any:
            return F.sqrt(F.sum(v**2, axis=axis))

    else:
        raise ValueError(
            f"For discriminative loss, norm can only be 1 or 2. Obtained the value : {norm}"
        )
    es = _shape(embeddings)
    if len(es) != 4 or es[1] != max_embedding_dim:
        raise ValueError(
            "chainer F.discriminative_margin_based_clustering_loss: embeddings must have shape "
            f"(B, max_embedding_dim={max_embedding_dim}, H, W), got {es}"
        )
    la = np.asarray(_data(labels, "discriminative_margin_based_clustering_loss"))
    emb = F.expand_dims(embeddings, 0)
    emb = F.broadcast_to(emb, (es[0], es[0], es[1], es[2], es[3]))
    ms = np.stack([np.expand_dims(la == c + 1, 1) for c in range(max_embedding_dim)], 0)
    mns = F.sum(emb * ms, axis=(3, 4))
    mns = mns / np.maximum(np.sum(ms, (2, 3, 4))[:, :, None], 1)
    mns_exp = mns[:, :, :, None, None]
    l_reg: Any = F.sum(nrm(mns, (1, 2)))
    l_reg = l_reg / (max_embedding_dim * es[0])
    l_var = nrm((mns_exp - emb) * ms, 2)
    l_var = F.relu(l_var - delta_v) ** 2
    l_var = F.sum(l_var, (1, 2, 3))
    l_var = l_var / np.maximum(np.sum(ms, (1, 2, 3, 4)), 1)
    l_var = F.sum(l_var) / max_embedding_dim
    l_dist: Any = 0.0
    count = 0
    for c_a in range(len(mns)):
        for c_b in range(c_a + 1, len(mns)):
            dist = nrm(mns[c_a] - mns[c_b], 1)
            l_dist = l_dist + F.sum(F.relu(2 * delta_d - dist) ** 2)
            count += 1
    l_dist = l_dist / max(count * es[0], 1)
    return alpha * l_var, beta * l_dist, gamma * l_reg


def negative_sampling(
    x: Any,
    t: Any,
    W: Any,
    sampler: Callable[[tuple[int, int]], Any],
    sample_size: int,
    reduce: str = "sum",
    **kwargs: Any,
) -> Any:
    """Negative sampling loss: x (B, D), t (B,) int32 (-1 ignored), W (V, D); the samples
    ``sampler((B, sample_size + 1))`` with column 0 set to t (the positive);
    ``loss_i = sum_k softplus(s_k W[samples[i, k]] . x[i])`` with ``s_0 = -1`` and
    ``s_k = 1`` else, 0 for an ignored row; the sum (``"sum"``) or one per row (``"no"``);
    ``return_samples=True`` also returns the samples. float16 is computed in float32, as
    chainer. A composition of gradhub functions (every order of gradient).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.zeros((1, 2), np.float32)
        >>> W = np.zeros((3, 2), np.float32)
        >>> sampler = lambda shape: np.ones(shape, np.int32)
        >>> F.negative_sampling(x, np.array([0], np.int32), W, sampler, 2)
        variable(2.0794415)
    """
    if reduce not in ("sum", "no"):
        raise ValueError(f"only 'sum' and 'no' are valid for 'reduce', but '{reduce}' is given")
    return_samples = kwargs.pop("return_samples", False)
    if kwargs:
        raise TypeError(f"got unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
    xs, ws = _shape(x), _shape(W)
    ta = np.asarray(_data(t, "negative_sampling"))
    if (
        _kind(x) != "f"
        or len(xs) != 2
        or ta.dtype != np.int32
        or ta.ndim != 1
        or xs[0] != ta.shape[0]
        or _dtype(W) != _dtype(x)
        or len(ws) != 2
    ):
        raise _invalid(
            "NegativeSamplingFunction",
            "x.dtype.kind == f, x.ndim == 2, t.dtype == int32, t.ndim == 1, "
            "x.shape[0] == t.shape[0], W.dtype == x.dtype, W.ndim == 2",
            f"x {xs} {_dtype(x)}, t {ta.shape} {ta.dtype}, W {ws} {_dtype(W)}",
        )
    samples = np.array(sampler((int(ta.shape[0]), sample_size + 1)))
    samples[:, 0] = ta
    dt = np.dtype(_dtype(x))
    xc, wc = (F.cast(x, np.float32), F.cast(W, np.float32)) if dt == np.float16 else (x, W)
    keep = ta != -1
    w = F.embed_id(np.where(keep[:, None], samples, 0), wc)  # (B, S + 1, D)
    wx = F.sum(F.broadcast_to(F.expand_dims(xc, 1), w.shape) * w, axis=2)
    sign = np.ones(samples.shape, np.dtype(wx.dtype))
    sign[:, 0] = -1
    per = F.softplus(wx * F._const(sign, x))
    loss = F.sum(
        per * F._const(np.broadcast_to(keep[:, None], per.shape).astype(sign.dtype), x), axis=1
    )
    if reduce == "sum":
        loss = F.sum(loss)
    if loss.dtype != dt:
        loss = F.cast(loss, dt)
    return (loss, samples) if return_samples else loss


def as_strided(
    x: Any, shape: Sequence[int], strides: Sequence[int], storage_offset: Any = None
) -> Variable:
    """A strided view of x's elements: ``y[i_1, ..., i_n] = flat[storage_offset + sum_k i_k
    strides[k]]`` (strides and offset counted in elements, as chainer), ``flat`` the C-order
    elements of x (chainer reads the buffer of x's base array: the same for an x that owns
    its data); an index outside x raises chainer's ``ValueError``. A gather, so the gradient
    adds up over overlapping positions, as chainer's, and can be differentiated again.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.as_strided(np.arange(4, dtype=np.float32), (3, 2), (1, 1))
        variable([[0., 1.],
                  [1., 2.],
                  [2., 3.]])
    """
    shape = tuple(int(s) for s in shape)
    strides = tuple(int(s) for s in strides)
    offset = 0 if storage_offset is None else int(storage_offset)
    size = int(np.prod(_shape(x)))
    idx = np.full(shape, offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        idx = idx + (np.arange(n) * s).reshape((1,) * k + (n,) + (1,) * (len(shape) - k - 1))
    if idx.size and idx.min() < 0:
        raise ValueError("Out of buffer: too small index was specified")
    if idx.size and idx.max() >= size:
        raise ValueError("Out of buffer: too large index was specified")
    return F.get_item(F.reshape(x, (size,)), idx)


def sparse_matmul(a: Any, b: Any, transa: bool = False, transb: bool = False) -> Variable:
    """Not supported: chainer's ``sparse_matmul`` takes a ``chainer.utils.CooMatrix``, which
    the layer does not provide (NotImplementedError)."""
    raise NotImplementedError(
        "chainer F.sparse_matmul is not supported by gradhub (chainer.utils.CooMatrix is not "
        f"part of the layer); multiply the dense matrices with F.matmul; see {_PAGE}"
    )

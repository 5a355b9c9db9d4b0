"""chainer 7.8.1's ``chainer/functions/loss`` functions beyond the core of
:mod:`gradhub_compat.chainer.functions` (which re-exports them): ``squared_difference``,
``huber_loss``, ``hinge``, ``contrastive``, ``triplet``, the VAE losses
(``gaussian_kl_divergence``, ``gaussian_nll``, ``bernoulli_nll``), the linear-chain CRF
(``crf1d``, ``argmax_crf1d``), connectionist temporal classification, ``cross_covariance``,
``decov``, ``black_out``, ``discriminative_margin_based_clustering_loss`` and
``negative_sampling``.

Each is a composition of the registered gradhub functions, so every order of gradient comes from
the native engine; the labels of ``crf1d`` and CTC and ``negative_sampling``'s samples are read
in Python."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from ..._common import call_native as _call
from ..._common import device_array, host_array
from .. import Variable
from .. import functions as F
from ..functions import (
    _arr,
    _check_float,
    _const,
    _dtype,
    _match,
    _out,
    _shape,
    exp,
    mean,
    softplus,
    sum,
)
from ._common import _data, _fdtype, _invalid, _kind, _xp_of

__all__ = [
    "argmax_crf1d",
    "bernoulli_nll",
    "black_out",
    "connectionist_temporal_classification",
    "contrastive",
    "crf1d",
    "cross_covariance",
    "decov",
    "discriminative_margin_based_clustering_loss",
    "gaussian_kl_divergence",
    "gaussian_nll",
    "hinge",
    "huber_loss",
    "negative_sampling",
    "squared_difference",
    "triplet",
]


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
        ya = device_array(_data(y, "crf1d"))
        yp = device_array(_data(y_prev, "crf1d"))
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
        max_inds.append(device_array(F.argmax(scores, axis=1).array))
        alpha = F.max(scores, axis=1) + x
    inds = device_array(F.argmax(alpha, axis=1).array)
    path = [inds]
    for m, a in zip(max_inds[::-1], alphas[::-1]):
        inds = m[_xp_of(m).arange(len(inds)), inds]
        if a is not None:
            inds = _xp_of(inds).concatenate([inds, F.argmax(a, axis=1).array], axis=0)
        path.append(inds)
    path.reverse()
    score = F.max(alpha, axis=1)
    for a in alphas[::-1]:
        if a is None:
            continue
        score = F.concat([score, F.max(a, axis=1)], axis=0)
    return _out(score), path


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
    ta = host_array(_data(t, fname))  # (host tables; F._const puts them on x's device)
    n_steps = len(xs)
    if input_length is None:
        input_length = np.full(n_batch, n_steps, dtype=np.int32)
    if label_length is None:
        label_length = np.full(len(ta), ta.shape[1] if ta.ndim == 2 else 0, dtype=np.int32)
    il = host_array(_data(input_length, fname))
    ll = host_array(_data(label_length, fname))
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
    la = device_array(_data(labels, "discriminative_margin_based_clustering_loss"))  # (masks: xp)
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
    ta = host_array(_data(t, "negative_sampling"))  # (host tables, put on x's device)
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
    samples = np.array(host_array(sampler((int(ta.shape[0]), sample_size + 1))))
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


def squared_difference(x1: Any, x2: Any) -> Variable:
    """Elementwise ``(x1 - x2) ** 2`` of two floating arrays of one dtype.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.squared_difference(np.array([3.0], np.float32), np.array([1.0], np.float32))
        variable([4.])
    """
    _check_float("squared_difference", x1=x1, x2=x2)
    d = _call("Sub2", *_match("squared_difference", x1, x2))
    return _out(_call("Mul2", d, d))  # type: ignore[no-any-return]


def _reduce_check(fname: str, reduce: str, valid: tuple[str, ...]) -> None:
    if reduce not in valid:
        opts = ", ".join(repr(v) for v in valid)
        raise ValueError(
            f"chainer F.{fname}: only {opts} are valid for 'reduce', but {reduce!r} is given"
        )


def _same_float(fname: str, **ops: Any) -> None:
    """chainer's ``check_type_forward`` of a loss: floating operands of one dtype."""
    _check_float(fname, **ops)
    _match(fname, *ops.values())


def huber_loss(x: Any, t: Any, delta: float, reduce: str = "sum_along_second_axis") -> Variable:
    """The Huber loss of ``a = x - t``: ``a ** 2 / 2`` where ``|a| <= delta``, else
    ``delta * (|a| - delta / 2)``; summed along axis 1 (``reduce="sum_along_second_axis"``,
    the default) or elementwise (``"no"``). The gradient is ``clip(a, -delta, delta)``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x = np.array([[0.5, 3.0]], np.float32)
        >>> F.huber_loss(x, np.zeros_like(x), 1.0)
        variable([2.625])
    """
    _reduce_check("huber_loss", reduce, ("sum_along_second_axis", "no"))
    _same_float("huber_loss", x=x, t=t)
    y = _call("MulScalar", _call("HuberLoss", x, t, delta=float(delta)), val=0.5)
    if reduce == "sum_along_second_axis":
        y = _call("Sum", y, axis=1)
    return _out(y)  # type: ignore[no-any-return]


def hinge(x: Any, t: Any, norm: str = "L1", reduce: str = "mean") -> Variable:
    """The hinge loss of scores x (N, K) and integer labels t (N,): with
    ``d[n, k] = max(0, 1 - s x[n, k])`` (``s = 1`` for ``k = t[n]``, else -1), the loss is
    ``sum(d)`` (``norm="L1"``) or ``sum(d ** 2)`` (``"L2"``) divided by N (``reduce="mean"``),
    or ``d`` (``d ** 2``) itself (``"no"``). Differentiable with respect to x.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.hinge(np.array([[2.0, -1.0]], np.float32), np.array([0], np.int32))
        variable(0.)
    """
    if norm not in ("L1", "L2"):
        raise NotImplementedError("norm should be either 'L1' or 'L2'")
    _reduce_check("hinge", reduce, ("mean", "no"))
    _check_float("hinge", x=x)
    xs = _shape(x)
    labels = _arr(t, "hinge (its labels t)")
    if labels.dtype.kind != "i" or len(xs) != 2 or labels.shape != (xs[0],):
        raise TypeError(
            f"chainer F.hinge: x must be 2-d (N, K) and t signed integer labels (N,), got "
            f"shapes {xs} and {labels.shape}, t of dtype {labels.dtype}"
        )
    sgn = np.ones(xs, dtype=_fdtype(x))
    sgn[np.arange(xs[0]), labels] = -1
    d = _call("ReLU", _call("AddScalar", _call("Mul2", x, _const(sgn, x)), val=1.0))
    if norm == "L2":
        d = _call("Mul2", d, d)
    if reduce == "no":
        return _out(d)  # type: ignore[no-any-return]
    return _out(_call("MulScalar", _call("Sum", d), val=1.0 / xs[0]))  # type: ignore[no-any-return]


def contrastive(x0: Any, x1: Any, y: Any, margin: float = 1, reduce: str = "mean") -> Variable:
    """The contrastive loss of pairs x0, x1 (N, K) with integer labels y (N,) (1: similar,
    0: dissimilar): with ``d = ||x0 - x1||``,
    ``L = (y d ** 2 + (1 - y) max(margin - d, 0) ** 2) / 2``, summed and divided by N
    (``reduce="mean"``) or per pair (``"no"``). In the second term the distance is
    ``sqrt(max(d ** 2, eps ** 2))``, ``eps = 1e-7`` (5e-3 for float16), so that its gradient
    stays finite, as chainer's (which uses ``max(d, eps)`` in the gradient only).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> x0 = np.array([[0.0, 0.0]], np.float32)
        >>> F.contrastive(x0, np.array([[0.6, 0.8]], np.float32), np.array([1], np.int32))
        variable(0.5)
    """
    if margin <= 0:
        raise ValueError("chainer F.contrastive: margin should be positive value.")
    _reduce_check("contrastive", reduce, ("mean", "no"))
    _same_float("contrastive", x0=x0, x1=x1)
    s0, s1 = _shape(x0), _shape(x1)
    labels = _arr(y, "contrastive (its labels y)")
    if (
        labels.dtype.kind != "i"
        or s0 != s1
        or len(s0) != 2
        or labels.shape[:1] != s0[:1]
        or s0[0] == 0
    ):
        raise TypeError(
            f"chainer F.contrastive: x0 and x1 must be 2-d of one shape (N, K), N > 0, and y "
            f"signed integer labels (N,); got shapes {s0}, {s1} and {labels.shape}"
        )
    dt = _fdtype(x0)
    eps = 5e-3 if dt == np.float16 else 1e-7
    diff = _call("Sub2", x0, x1)
    dist_sq = _call("Sum", _call("Mul2", diff, diff), axis=1)
    dist = _call("Sqrt", _call("MaximumScalar", dist_sq, val=eps * eps))
    mdist = _call("ReLU", _call("RSubScalar", dist, val=float(margin)))
    yf = _const(labels.astype(dt), diff)
    loss = _call(
        "MulScalar",
        _call(
            "Add2",
            _call("Mul2", yf, dist_sq),
            _call("Mul2", _call("RSubScalar", yf, val=1.0), _call("Mul2", mdist, mdist)),
        ),
        val=0.5,
    )
    if reduce == "no":
        return _out(loss)  # type: ignore[no-any-return]
    return _out(_call("MulScalar", _call("Sum", loss), val=1.0 / s0[0]))  # type: ignore[no-any-return]


def triplet(
    anchor: Any, positive: Any, negative: Any, margin: float = 0.2, reduce: str = "mean"
) -> Variable:
    """The triplet loss ``max(||a - p|| ** 2 - ||a - n|| ** 2 + margin, 0)`` of rows of
    anchor, positive and negative (N, K): the mean over N (``reduce="mean"``) or per row
    (``"no"``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> a = np.zeros((1, 2), np.float32)
        >>> F.triplet(a, a, a + 1)
        variable(0.)
    """
    if margin <= 0:
        raise ValueError("chainer F.triplet: margin should be positive value.")
    _reduce_check("triplet", reduce, ("mean", "no"))
    _same_float("triplet", anchor=anchor, positive=positive, negative=negative)
    sa, sp, sn = _shape(anchor), _shape(positive), _shape(negative)
    if not sa == sp == sn:
        raise TypeError(
            f"chainer F.triplet: anchor, positive and negative must have one shape, got "
            f"{sa}, {sp} and {sn}"
        )
    dp = _call("Sub2", anchor, positive)
    dn = _call("Sub2", anchor, negative)
    d = _call("Sum", _call("Sub2", _call("Mul2", dp, dp), _call("Mul2", dn, dn)), axis=1)
    hinge_ = _call("ReLU", _call("AddScalar", d, val=float(margin)))
    if reduce == "no":
        return _out(hinge_)  # type: ignore[no-any-return]
    return _out(_call("MulScalar", _call("Sum", hinge_), val=1.0 / sa[0]))  # type: ignore[no-any-return]


def _reduce_vae(loss: Any, reduce: str) -> Variable:
    if reduce == "sum":
        return sum(loss)
    if reduce == "mean":
        return mean(loss)
    return loss  # type: ignore[no-any-return]


def gaussian_kl_divergence(mean: Any, ln_var: Any, reduce: str = "sum") -> Variable:
    """The KL divergence of N(mean, exp(ln_var)) from N(0, 1), elementwise
    ``(mean ** 2 + exp(ln_var) - ln_var - 1) / 2``: summed (``reduce="sum"``), averaged
    (``"mean"``) or not (``"no"``); computed with chainer's operators, as chainer.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> F.gaussian_kl_divergence(np.zeros(2, np.float32), np.zeros(2, np.float32))
        variable(0.)
    """
    _reduce_check("gaussian_kl_divergence", reduce, ("sum", "mean", "no"))
    _check_float("gaussian_kl_divergence", ln_var=ln_var)
    var = exp(ln_var)
    mean_square = mean * mean
    loss = (mean_square + var - ln_var - 1) * 0.5
    return _reduce_vae(loss, reduce)


def gaussian_nll(x: Any, mean: Any, ln_var: Any, reduce: str = "sum") -> Variable:
    """The negative log-likelihood of x under N(mean, exp(ln_var)), elementwise
    ``(ln_var + log(2 pi)) / 2 + (x - mean) ** 2 exp(-ln_var) / 2``: summed (``"sum"``),
    averaged (``"mean"``) or not (``"no"``); computed with chainer's operators.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> z = np.zeros(1, np.float32)
        >>> round(float(F.gaussian_nll(z, z, z).array), 4)
        0.9189
    """
    _reduce_check("gaussian_nll", reduce, ("sum", "mean", "no"))
    _check_float("gaussian_nll", ln_var=ln_var)
    x_prec = exp(-ln_var)
    x_diff = x - mean
    x_power = (x_diff * x_diff) * x_prec * -0.5
    loss = (ln_var + math.log(2 * math.pi)) / 2 - x_power
    return _reduce_vae(loss, reduce)


def bernoulli_nll(x: Any, y: Any, reduce: str = "sum") -> Variable:
    """The negative log-likelihood of x under Bernoulli(sigmoid(y)), elementwise
    ``softplus(y) - x y``: summed (``"sum"``), averaged (``"mean"``) or not (``"no"``).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.chainer.functions as F
        >>> round(float(F.bernoulli_nll(np.ones(1, np.float32), np.zeros(1, np.float32)).array), 4)
        0.6931
    """
    _reduce_check("bernoulli_nll", reduce, ("sum", "mean", "no"))
    _check_float("bernoulli_nll", y=y)
    loss = softplus(y) - x * y
    return _reduce_vae(loss, reduce)

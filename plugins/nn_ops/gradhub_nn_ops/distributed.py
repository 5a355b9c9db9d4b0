"""gradhub-nn-ops: functions across processes (data-parallel training).

Each function takes a communicator as its attribute ``comm``: any object with ``size`` and
``all_reduce(values, division=False, inplace=True)``, as :func:`gradhub.distributed.communicator`
returns (``"mpi"`` on CPU arrays, ``"nccl"`` on CUDA arrays, from gradhub-mpi). Every process
of the job calls them in the same order, as every collective.

* ``AllReduce`` sums ``x`` over the processes (divided by their number with ``division``). With
  one loss per process and the gradients of the sum of the losses, the gradient of every copy
  of the sum is the sum of the copies' gradients: the rule is ``AllReduce`` again (as
  ``torch.distributed.nn.all_reduce``).
* ``DistributedMean`` is the mean over ``axis`` of the values of all processes together,
  :math:`\\frac{1}{\\sum_r n_r} \\sum_r \\sum_i x_{r,i}`; the processes may hold different numbers
  of values (one collective carries the sums and the counts).
* ``SyncBatchNormalization`` is batch normalization whose batch statistics are taken over the
  processes' batches together (nnabla's ``sync_batch_normalization``, chainermn's
  ``MultiNodeBatchNormalization``, PyTorch's ``SyncBatchNorm``): its kernel is
  ``BatchNormalization``'s with :class:`DistributedMean` statistics (running statistics
  included, the variance unbiased by the total count), its rule ``BatchNormalization``'s with
  ``DistributedMean`` in place of ``Mean``. Its rules are written with registered functions, so
  its gradients can be differentiated again; gradients of the parameters are each process's
  part, summed by the data-parallel all-reduce of the gradients.

The samples of the op matrix run with :class:`_OneProcess`, a communicator of one process (the
collectives return their input): with it the functions are ``Identity``, ``Mean`` and
``BatchNormalization``. Their results across processes are tested under ``mpiexec -n 2``
against the same functions of one process on the whole batch (tests/mpi).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from gradhub import Sample
from gradhub.memory import output_array
from gradhub.ops import call
from gradhub.variable import keep_in_trace

from .math import float_input, norm_axes, to_kept
from .normalization import (
    _batch_normalization_ref,
    _bn_samples,
    _centered,
    bn_fast,
    bn_rule,
    normalize,
)


class _OneProcess:
    """A communicator of one process: the samples' (a sum over one process is its value)."""

    rank = 0
    size = 1
    local_rank = 0

    def all_reduce(self, values: Any, division: bool = False, inplace: bool = True) -> Any:
        if inplace:
            return values
        if isinstance(values, (list, tuple)):
            return [v.copy() for v in values]
        return values.copy()

    def __repr__(self) -> str:
        return "_OneProcess()"


ONE_PROCESS = _OneProcess()


def _checked_comm(fname: str, comm: Any) -> Any:
    """``comm``, or a TypeError naming ``fname`` when it is not a communicator."""
    if comm is None:
        raise TypeError(
            f"{fname}(): argument 'comm' is required: a communicator, such as "
            "gradhub.distributed.communicator('mpi') (gradhub-mpi), in every process"
        )
    if not callable(getattr(comm, "all_reduce", None)) or not isinstance(
        getattr(comm, "size", None), int
    ):
        raise TypeError(
            f"{fname}(): argument 'comm' must be a communicator (with size and all_reduce), "
            f"such as gradhub.distributed.communicator('mpi'); got {type(comm).__name__}"
        )
    return comm


def _summed(fname: str, comm: Any, buf: Any) -> Any:
    """``buf`` (a contiguous array this module made) summed over the processes, in place."""
    _checked_comm(fname, comm).all_reduce(buf, division=False, inplace=True)
    return buf


def _accumulator(x: Any) -> np.dtype[Any]:
    """The dtype sums of ``x`` are taken in: float32 for float16 (as ``Mean``), else x's."""
    return np.dtype(np.float32) if x.dtype == np.float16 else x.dtype


def _sums_and_count(fname: str, xp: Any, comm: Any, x: Any, axes: Any, keepdims: bool) -> Any:
    """``(sums, total)``: the sums of ``x`` over ``axes`` added over the processes, and the
    number of values they add up (one collective for both)."""
    acc = _accumulator(x)
    s = xp.asarray(x.sum(axis=axes, keepdims=keepdims, dtype=acc))
    buf = xp.empty(s.size + 1, dtype=acc)
    buf[:-1] = s.reshape(-1)
    buf[-1] = math.prod(x.shape[a] for a in axes)
    _summed(fname, comm, buf)
    return buf[:-1].reshape(s.shape), round(float(buf[-1]))


def _inverse(total: int) -> float:
    return 1.0 / total if total else math.nan


# -- AllReduce -----------------------------------------------------------------------------------


def _all_reduce(xp: Any, x: Any, comm: Any = None, division: bool = False) -> Any:
    if x.dtype.kind != "f":
        raise TypeError(f"all_reduce(): input 'x' must be floating-point, got dtype {x.dtype}")
    buf = xp.array(x, order="C", copy=True)
    _checked_comm("all_reduce", comm).all_reduce(buf, division=bool(division), inplace=True)
    return buf


def _all_reduce_bw(gy, inputs, in_shapes, outputs, out_shapes, comm, division):  # type: ignore[no-untyped-def]
    return [keep_in_trace(call("AllReduce", gy[0], comm=comm, division=division))]


def _all_reduce_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    yield Sample((n((3, 4)),), {"comm": ONE_PROCESS}, name="(3, 4)")
    yield Sample((n(()),), {"comm": ONE_PROCESS, "division": True}, name="0-d, division")
    yield Sample((n((4, 3)).T,), {"comm": ONE_PROCESS}, name="non-contiguous")
    yield Sample((n((2, 0)),), {"comm": ONE_PROCESS}, name="size-0")


def _all_reduce_ref(x: np.ndarray, comm: Any = None, division: bool = False) -> np.ndarray:
    # the sum over the processes of one process
    return np.array(x, copy=True)


_DOC_ALL_REDUCE = """all_reduce(x, comm, division=False): ``x`` summed over the processes of
    ``comm`` (divided by their number with ``division``); every process gets the result.

    .. math:: y = \\sum_{r=0}^{p-1} x_r \\quad (\\text{or } \\frac{1}{p} \\sum_r x_r)

    Gradient: with one loss per process, the gradient of the sum of the losses; each process's
    gradient of ``x`` is the all-reduce of the gradients of ``y`` (the rule is ``AllReduce``),
    so it can be differentiated again. Float16/32/64.

    Example (one process; under ``mpiexec -n 2`` each process gets the sum of both)::

        >>> import gradhub as gh, gradhub.functions as F
        >>> from gradhub_nn_ops.distributed import ONE_PROCESS
        >>> F.all_reduce(gh.Variable([1.0, 2.0]), ONE_PROCESS).d
        array([1., 2.], dtype=float32)
    """


# -- DistributedMean -----------------------------------------------------------------------------


def _distributed_mean(
    xp: Any, x: Any, comm: Any = None, axis: Any = None, keepdims: bool = False
) -> Any:
    x = float_input(x)
    axes = norm_axes("distributed_mean", axis, x.ndim)
    sums, total = _sums_and_count("distributed_mean", xp, comm, x, axes, keepdims)
    y = sums * _inverse(total)
    return y.astype(x.dtype) if y.dtype != x.dtype else y


def _distributed_mean_bw(gy, inputs, in_shapes, outputs, out_shapes, comm, axis, keepdims):  # type: ignore[no-untyped-def]
    # d/dx_r of the mean over every process's values: the sum of the processes' incoming
    # gradients over the total count (this process's count from the shape the node has now, as
    # Mean's rule), both summed by AllReduce, a recorded function: a compiled step replays both
    # collectives, whatever the shapes were when it was traced
    from gradhub import Variable

    shape = tuple(in_shapes[0])
    axes = norm_axes("distributed_mean", axis, len(shape))
    g = gy[0]
    xp = g.device.xp
    half = g.dtype == np.float16  # (a float16 count is exact only to 2048)
    with g.device.activate():
        n = float(math.prod(shape[a] for a in axes))
        count = Variable(xp.asarray(n, dtype=np.float32 if half else g.dtype), need_grad=False)
    total = keep_in_trace(call("AllReduce", count, comm=comm))
    g = keep_in_trace(call("AllReduce", g, comm=comm))
    dx = call("BroadcastTo", to_kept(g, shape, axes), shape=shape) / total
    return [call("Cast", dx, dtype="float16") if half else dx]


def _distributed_mean_samples(rng: np.random.Generator) -> Iterator[Sample]:
    n = rng.standard_normal
    one = ONE_PROCESS
    yield Sample((n((3, 4)),), {"comm": one, "axis": 0, "keepdims": True}, name="axis 0 kept")
    yield Sample((n((2, 3, 2)),), {"comm": one, "axis": (0, 2)}, name="two axes")
    yield Sample((n((3, 4)),), {"comm": one}, name="all axes")
    yield Sample((n((4, 3)).T,), {"comm": one, "axis": 1}, name="non-contiguous")


def _distributed_mean_ref(
    x: np.ndarray, comm: Any = None, axis: Any = None, keepdims: bool = False
) -> np.ndarray:
    return np.mean(x, axis=axis, keepdims=keepdims)


_DOC_DISTRIBUTED_MEAN = """distributed_mean(x, comm, axis=None, keepdims=False): the mean over
    ``axis`` of the values of every process of ``comm`` together.

    .. math:: y = \\frac{1}{\\sum_r n_r} \\sum_{r=0}^{p-1} \\sum_{i \\in \\mathrm{axis}} x_{r,i}

    The processes may hold different numbers of values ``n_r``; the result is the same in every
    process. Gradient: each process's ``x`` gets the sum of the processes' incoming gradients
    divided by the total count, written with ``AllReduce`` (differentiable again).

    Example (one process: the mean)::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> from gradhub_nn_ops.distributed import ONE_PROCESS
        >>> F.distributed_mean(gh.Variable(np.array([[1.0, 2.0], [3.0, 6.0]])), ONE_PROCESS, 0).d
        array([2., 4.])
    """


# -- SyncBatchNormalization ----------------------------------------------------------------------


def _moments_over(comm: Any) -> Any:
    """The batch statistics of a normalization over the processes of ``comm`` (two collectives:
    the sums and counts, then the squared deviations from the common mean)."""

    def moments(xp: Any, x: Any, red: tuple[int, ...], n: int) -> tuple[Any, Any, Any, int]:
        fname = "sync_batch_normalization"
        sums, total = _sums_and_count(fname, xp, comm, x, red, True)
        scale = _inverse(total)
        m = sums * scale
        xc = _centered(xp, x, m)
        sq = xp.multiply(xc, xc, out=output_array(xp, xc.shape, xc.dtype))
        sq = xp.array(sq.sum(axis=red, keepdims=True), order="C", copy=True)
        return m, xc, _summed(fname, comm, sq) * scale, total

    def combine(xp: Any, x: Any, mean: Any, var: Any, n: int) -> tuple[Any, Any, int]:
        # for the compiled kernels (normalization.Combine): the same two collectives, of the
        # same sizes and dtype, from this process's per-channel mean and variance (float64)
        fname = "sync_batch_normalization"
        acc = _accumulator(x)
        buf = np.empty(mean.size + 1, dtype=acc)
        buf[:-1] = mean * n
        buf[-1] = n
        _summed(fname, comm, buf)
        total = round(float(buf[-1]))
        scale = _inverse(total)
        m = buf[:-1].astype(np.float64) * scale
        # this process's squared deviations from the common mean: n (var + (mean - m)^2)
        sq = np.array(n * (var + (mean - m) ** 2), dtype=acc)
        return m, _summed(fname, comm, sq).astype(np.float64) * scale, total

    moments.combine = combine  # type: ignore[attr-defined]
    return moments


def _sync_batch_normalization(
    xp: Any,
    x: Any,
    beta: Any,
    gamma: Any,
    mean: Any,
    variance: Any,
    comm: Any = None,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
) -> Any:
    fname = "sync_batch_normalization"
    moments = _moments_over(_checked_comm(fname, comm))
    return normalize(
        xp, fname, x, beta, gamma, mean, variance, axes, decay_rate, eps, batch_stat, moments
    )


def _mean_over(comm: Any) -> Any:
    def mean_of(v: Any, red: tuple[int, ...]) -> Any:
        # (kept in a compiled step's plan: a collective runs in every process, needed or not)
        return keep_in_trace(call("DistributedMean", v, comm=comm, axis=red, keepdims=True))

    return mean_of


def _sync_batch_normalization_bw(  # type: ignore[no-untyped-def]
    gy, inputs, in_shapes, outputs, out_shapes, comm, axes, decay_rate, eps, batch_stat
):
    return bn_rule(gy, inputs, in_shapes[0], axes, eps, batch_stat, _mean_over(comm))


def _sync_batch_normalization_fast(  # type: ignore[no-untyped-def]
    xp, gy, x, xs, y, ys, comm, axes, decay_rate, eps, batch_stat, need_grads
):
    # BatchNormalization's array rule, its statistics and the sums of dx over the processes
    # (three collectives: the statistics' two, then S_g and S_gxc together)
    return bn_fast(
        xp,
        gy,
        x,
        xs,
        axes,
        eps,
        batch_stat,
        need_grads,
        _moments_over(comm),
        lambda buf: _summed("sync_batch_normalization", comm, buf),
    )


def sync_batch_normalization_jvp(
    ins: Any,
    outs: Any,
    ts: Any,
    comm: Any = None,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
) -> tuple[Any]:
    """The JVP rule of ``SyncBatchNormalization``: ``BatchNormalization``'s, its means over the
    processes (``DistributedMean``)."""
    from .jvp import bn_jvp

    return bn_jvp(ins, outs, ts, axes, eps, batch_stat, _mean_over(comm))


def _sync_bn_samples(rng: np.random.Generator) -> Iterator[Sample]:
    for s in _bn_samples(rng):
        yield Sample(
            s.inputs,
            {"comm": ONE_PROCESS, **s.attrs},
            grad_inputs=s.grad_inputs,
            max_order=s.max_order,
            name=s.name,
            keeps_float32=s.keeps_float32,
        )


def _sync_batch_normalization_ref(
    x: np.ndarray,
    beta: np.ndarray,
    gamma: np.ndarray,
    mean: np.ndarray,
    variance: np.ndarray,
    comm: Any = None,
    axes: Any = (1,),
    decay_rate: float = 0.9,
    eps: float = 1e-5,
    batch_stat: bool = True,
) -> np.ndarray:
    # batch normalization of the one process's batch
    return _batch_normalization_ref(
        x, beta, gamma, mean, variance, axes, decay_rate, eps, batch_stat
    )


_DOC_SYNC_BN = """sync_batch_normalization(x, beta, gamma, mean, variance, comm, axes=(1,),
    decay_rate=0.9, eps=1e-5, batch_stat=True): batch normalization whose batch statistics are
    taken over the batches of every process of ``comm`` together (nnabla's
    ``sync_batch_normalization``, PyTorch's ``SyncBatchNorm``).

    .. math:: y = \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} \\gamma + \\beta, \\quad
       \\mu = \\frac{1}{N} \\sum_r \\sum_i x_{r,i}, \\quad
       \\sigma^2 = \\frac{1}{N} \\sum_r \\sum_i (x_{r,i} - \\mu)^2, \\quad N = \\sum_r n_r

    In training (``batch_stat``) the running ``mean`` and ``variance`` are updated in place with
    the common statistics (the variance unbiased, ``N / (N - 1)``), the same in every process;
    in inference it is ``batch_normalization`` with the running statistics. The processes'
    batches may differ in size. Gradients: ``x``'s is that of the sum of the processes' losses;
    ``beta``'s and ``gamma``'s are this process's part (the data-parallel all-reduce of the
    gradients adds them). Written with registered functions: differentiable again.

    Example (one process: batch normalization)::

        >>> import numpy as np, gradhub as gh, gradhub.functions as F
        >>> from gradhub_nn_ops.distributed import ONE_PROCESS
        >>> x = gh.Variable(np.array([[1.0, 2.0], [3.0, 6.0]]))
        >>> beta, gamma = np.zeros((1, 2)), np.ones((1, 2))
        >>> mean, var = np.zeros((1, 2)), np.ones((1, 2))
        >>> y = F.sync_batch_normalization(x, beta, gamma, mean, var, ONE_PROCESS, eps=1e-8)
        >>> y.d.round(4)
        array([[-1., -1.],
               [ 1.,  1.]])
        >>> mean
        array([[0.2, 0.4]])
    """


def _all_reduce_batching(args: tuple[Any, ...], dims: tuple[Any, ...], **attrs: Any) -> Any:
    # elementwise over the processes: the batch axis stays where it is
    return call("AllReduce", args[0], **attrs), dims[0]


def register_functions(register: Any) -> None:
    """Register the functions across processes."""
    register.function(
        "AllReduce",
        _all_reduce,
        inputs=("x",),
        attrs={"comm": None, "division": False},
        rule=_all_reduce_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_all_reduce_samples,
        reference=_all_reduce_ref,
        batch_rule=_all_reduce_batching,
        doc=_DOC_ALL_REDUCE,
    )
    register.function(
        "DistributedMean",
        _distributed_mean,
        inputs=("x",),
        attrs={"comm": None, "axis": None, "keepdims": False},
        rule=_distributed_mean_bw,
        need_inputs=(),
        need_outputs=(),
        samples=_distributed_mean_samples,
        reference=_distributed_mean_ref,
        doc=_DOC_DISTRIBUTED_MEAN,
    )
    register.function(
        "SyncBatchNormalization",
        _sync_batch_normalization,
        inputs=("x", "beta", "gamma", "mean", "variance"),
        attrs={"comm": None, "axes": (1,), "decay_rate": 0.9, "eps": 1e-5, "batch_stat": True},
        rule=_sync_batch_normalization_bw,
        fast_backward=_sync_batch_normalization_fast,
        need_inputs=(0, 2, 3, 4),
        need_outputs=(),
        samples=_sync_bn_samples,
        reference=_sync_batch_normalization_ref,
        doc=_DOC_SYNC_BN,
    )

"""chainermn's ``create_multi_node_optimizer`` over the chainer layer's optimizers
(chainermn 7.8.1, ``chainermn/optimizers.py``)."""

from __future__ import annotations

from typing import Any


class _MultiNodeOptimizer:
    """Wraps an optimizer: ``update`` averages the gradients over the ranks before the update;
    every other attribute is the wrapped optimizer's."""

    def __init__(self, actual_optimizer: Any, communicator: Any, zero_fill: bool) -> None:
        object.__setattr__(self, "communicator", communicator)
        object.__setattr__(self, "actual_optimizer", actual_optimizer)
        object.__setattr__(self, "target_params", [])
        object.__setattr__(self, "zero_fill", zero_fill)

    def update(self, lossfun: Any = None, *args: Any, **kwds: Any) -> None:
        """chainermn's update: with ``lossfun``, ``loss = lossfun(*args, **kwds)``, the
        gradients are cleared and ``loss.backward()`` fills them. When the set of (initialized)
        parameters changed since the last call (the first call, or a link initialized lazily),
        rank 0's parameters are broadcast and nothing is updated; otherwise the gradients are
        averaged over the ranks (``multi_node_mean_grad``) and the wrapped optimizer updates."""
        target = self.actual_optimizer.target
        if lossfun is not None:
            loss = lossfun(*args, **kwds)
            if getattr(self.actual_optimizer, "_use_cleargrads", True):
                target.cleargrads()
            else:
                target.zerograds()
            loss.backward()
            del loss
        if self.is_changed(target):
            self.communicator.bcast_data(target)
        else:
            self.communicator.multi_node_mean_grad(target, self.zero_fill)
            self.actual_optimizer.update(None, *args, **kwds)

    def is_changed(self, target: Any) -> bool:
        """Whether the parameters' names or initialization changed since the last call."""
        previous = self.target_params
        current = [(name, p.array is not None) for name, p in sorted(target.namedparams())]
        object.__setattr__(self, "target_params", current)
        return current != previous

    def setup(self, link: Any) -> _MultiNodeOptimizer:
        """Set the wrapped optimizer up on ``link``; returns this optimizer."""
        self.actual_optimizer.setup(link)
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self.actual_optimizer, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.actual_optimizer, name, value)


def create_multi_node_optimizer(
    actual_optimizer: Any, communicator: Any, double_buffering: bool = False, zero_fill: bool = True
) -> Any:
    """chainermn's multi-node optimizer: ``actual_optimizer`` (a ``gradhub_compat.chainer``
    optimizer) whose ``update`` first averages the gradients over the ranks of
    ``communicator`` (from :func:`gradhub_compat.chainermn.create_communicator`).

    .. math:: g \\leftarrow \\frac{1}{p} \\sum_{r=0}^{p-1} g_r

    so that with each rank's loss the mean over its part of the global batch, every rank
    applies the update of the mean over the whole batch. As in chainermn, the first ``update``
    (and one after the parameter set changes) broadcasts rank 0's parameters instead of
    updating. ``zero_fill``: parameters without a gradient take part with zeros.
    ``double_buffering=True`` (chainermn: update with the previous step's gradients while this
    step's are all-reduced) is refused: gradhub's data-parallel callback overlaps the all-reduce
    with backward without the stale step (``gh.distributed``, docs/distributed.md).

    Example (one process: a communicator of size 1)::

        >>> import numpy as np
        >>> from gradhub_compat import chainermn
        >>> from gradhub_compat.chainer import optimizers
        >>> try:
        ...     create = chainermn.create_multi_node_optimizer
        ...     create(optimizers.SGD(), None, double_buffering=True)
        ... except NotImplementedError as e:
        ...     print(str(e)[:62])
        chainermn.create_multi_node_optimizer: double_buffering=True i
    """
    if double_buffering:
        raise NotImplementedError(
            "chainermn.create_multi_node_optimizer: double_buffering=True is not supported (it "
            "updates with the previous step's gradients); gradhub overlaps the all-reduce with "
            "backward instead: comm.all_reduce_callback in docs/distributed.md"
        )
    if not hasattr(communicator, "multi_node_mean_grad"):
        raise TypeError(
            "chainermn.create_multi_node_optimizer: argument 'communicator' must be a chainermn "
            "communicator (gradhub_compat.chainermn.create_communicator), got "
            f"{type(communicator).__name__}"
        )
    return _MultiNodeOptimizer(actual_optimizer, communicator, zero_fill)

"""chainermn's links on gradhub: ``chainermn.links.MultiNodeBatchNormalization``.

The link is chainer's ``L.BatchNormalization`` (gradhub_compat.chainer) whose training mode
takes the batch statistics over every process of the communicator: gradhub-nn-ops'
``SyncBatchNormalization`` function (see docs/distributed.md).
"""

from __future__ import annotations

from typing import Any

from ..chainer._training_functions import batch_normalization_over
from ..chainer.links import BatchNormalization
from .communicators import Communicator

#: chainermn's ``communication_backend`` values
BACKENDS = ("auto", "mpi", "nccl")


class MultiNodeBatchNormalization(BatchNormalization):
    """``MultiNodeBatchNormalization(size, comm, decay=0.9, eps=2e-5, dtype=None,
    use_gamma=True, use_beta=True, initial_gamma=None, initial_beta=None,
    communication_backend='auto')``: batch normalization whose training-mode statistics are
    those of the batches of every process of ``comm`` together (chainermn's).

    .. math:: y = \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} \\gamma + \\beta, \\quad
       \\mu, \\sigma^2 \\text{ over all processes' batches}

    ``avg_mean``/``avg_var`` are updated with the common statistics (the same in every
    process; the variance unbiased by the total count); evaluation mode
    (``chainer.using_config('train', False)``) uses them and communicates nothing. ``x``'s
    gradient is that of the sum of the processes' losses. ``gamma``'s and ``beta``'s
    gradients are this process's part (chainermn gives every process their mean over the
    processes): after ``create_multi_node_optimizer``'s mean of the gradients both are the
    same. ``communication_backend`` is checked as chainermn does (``"nccl"`` needs a
    ``"pure_nccl"`` communicator); the communicator's own collective is used.

    Example (one process, a communicator of one process)::

        >>> import numpy as np
        >>> from gradhub_compat.chainermn.links import MultiNodeBatchNormalization
        >>> from gradhub_compat.chainermn.communicators import Communicator
        >>> from gradhub_nn_ops.distributed import ONE_PROCESS
        >>> bn = MultiNodeBatchNormalization(2, Communicator(ONE_PROCESS, "naive"), eps=1e-8)
        >>> bn(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)).array.round(4)
        array([[-1., -1.],
               [ 1.,  1.]], dtype=float32)
        >>> bn.avg_mean
        array([0.2, 0.4], dtype=float32)
    """

    def __init__(
        self,
        size: Any,
        comm: Communicator,
        decay: float = 0.9,
        eps: float = 2e-5,
        dtype: Any = None,
        use_gamma: bool = True,
        use_beta: bool = True,
        initial_gamma: Any = None,
        initial_beta: Any = None,
        communication_backend: str = "auto",
    ) -> None:
        if communication_backend not in BACKENDS:
            raise ValueError(
                f"MultiNodeBatchNormalization does not support {communication_backend}."
            )
        if not isinstance(comm, Communicator):
            raise TypeError(
                "chainermn MultiNodeBatchNormalization: comm must be a chainermn communicator "
                f"(chainermn.create_communicator), got {type(comm).__name__}"
            )
        if communication_backend == "nccl" and comm.name != "pure_nccl":
            raise ValueError(
                f"nccl is not supported in MultiNodeBatchNormalization when using "
                f"{comm.name!r} (a 'pure_nccl' communicator is needed)"
            )
        super().__init__(
            size,
            decay=decay,
            eps=eps,
            dtype=dtype,
            use_gamma=use_gamma,
            use_beta=use_beta,
            initial_gamma=initial_gamma,
            initial_beta=initial_beta,
        )
        self.comm = comm
        self._communication_backend = communication_backend

    def _normalize_by_batch(
        self, x: Any, gamma: Any, beta: Any, avg_mean: Any, avg_var: Any, decay: float
    ) -> Any:
        return batch_normalization_over(
            self.comm.gradhub_comm, x, gamma, beta, self.eps, avg_mean, avg_var, decay, self.axis
        )


__all__ = ["MultiNodeBatchNormalization"]

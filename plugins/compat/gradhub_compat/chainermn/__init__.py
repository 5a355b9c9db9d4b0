"""chainermn's front-end for the chainer layer: ``from gradhub_compat import chainermn``
replaces ``import chainermn``.

::

    from gradhub_compat import chainer, chainermn

    comm = chainermn.create_communicator("naive")  # "flat": MPI; "pure_nccl": NCCL on GPUs
    train = chainermn.scatter_dataset(train, comm, shuffle=True, seed=0)
    optimizer = chainermn.create_multi_node_optimizer(chainer.optimizers.MomentumSGD(), comm)
    optimizer.setup(model)
    optimizer.update(lossfun, x, t)  # the gradients' mean over the ranks, then the update
    evaluator = chainermn.create_multi_node_evaluator(my_evaluator, comm)
    evaluator.evaluate()  # each metric's mean over the ranks

Programs start under ``mpiexec -n N`` as chainermn's. The communicators are gradhub-mpi's
(``gh.distributed.communicator``): ``"naive"`` and ``"flat"`` map to ``"mpi"``, ``"pure_nccl"``
to ``"nccl"``. Nothing is pickled: ``bcast_obj`` sends JSON, ``scatter_dataset`` needs the dataset
on every rank (see docs/migration-chainer.md, "chainermn").
"""

from __future__ import annotations

from . import links
from .communicators import Communicator, create_communicator
from .datasets import SubDataset, scatter_dataset, scatter_index
from .evaluators import create_multi_node_evaluator
from .optimizers import create_multi_node_optimizer

CommunicatorBase = Communicator

__all__ = [
    "Communicator",
    "CommunicatorBase",
    "SubDataset",
    "create_communicator",
    "create_multi_node_evaluator",
    "create_multi_node_optimizer",
    "links",
    "scatter_dataset",
    "scatter_index",
]

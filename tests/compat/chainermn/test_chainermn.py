"""``gradhub_compat.chainermn`` (chainermn's front-end for the chainer layer).

Under ``mpiexec -n 2`` (tests/mpi/scripts/chainermn_training.py), for "naive" and "flat": the
ranks, the array and object collectives, ``scatter_dataset`` and 20 MomentumSGD updates of a
float64 MLP through ``create_multi_node_optimizer``, each rank on half of every batch, equal to
one process on the whole batch (1e-10) after the first update broadcast rank 0's parameters;
``create_multi_node_evaluator`` averaging each metric over the ranks (the loss over the whole
data), and refusing on every rank different names or a value that cannot be averaged. In
one process: the refused names and options, and the dataset split against chainermn 7.8.1's
values. On a GPU (skipped elsewhere with one reason): "pure_nccl" of size 1 trains a float64 MLP
on the GPU as the plain optimizer does (tests/mpi/scripts/chainermn_nccl.py).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from gradhub_compat import chainermn
from mpi_helpers import nccl_reason, needs_mpi, run, run_alone


@needs_mpi
@pytest.mark.parametrize("name", ["naive", "flat"])
def test_two_ranks_on_half_batches_equal_one_process_on_the_whole_batch(name: str) -> None:
    res = run("chainermn_training.py", name)
    assert res.returncode == 0, res.stdout
    for r in (0, 1):
        for what in ("ranks", "arrays", "objects", "scatter_dataset", "bcast_data", "evaluator"):
            assert f"rank {r} ok {what}" in res.stdout, res.stdout
    number = r"([0-9.]+e[+-][0-9]+)"  # the ranks' lines may run together
    found = re.findall(rf"rank (\d) diff {number} moved {number}", res.stdout)
    assert sorted(int(r) for r, _, _ in found) == [0, 1], res.stdout
    for _, diff, moved in found:
        assert float(diff) < 1e-10
        assert float(moved) > 0.5  # the training moved the parameters


_GPU = nccl_reason()


@pytest.mark.skipif(bool(_GPU), reason=f"the 'nccl' communicator cannot run: {_GPU}")
def test_pure_nccl_trains_on_one_gpu_as_the_plain_optimizer() -> None:
    res = run_alone("chainermn_nccl.py")
    assert res.returncode == 0, res.stdout
    for line in ("ok arrays", "ok bcast_data", "ok training", "chainermn nccl done"):
        assert line in res.stdout, res.stdout


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("hierarchical", "'hierarchical' is not supported by gradhub_compat.chainermn"),
        ("non_cuda_aware", "'non_cuda_aware' is not supported by gradhub_compat.chainermn"),
        ("dummy", "'dummy' is not supported"),
        (
            "nccl",
            "unrecognized communicator 'nccl'; the supported communicators are 'naive', "
            "'flat', 'pure_nccl'",
        ),
    ],
)
def test_unsupported_communicators_are_named(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"chainermn.create_communicator: {message}")):
        chainermn.create_communicator(name)


def test_refused_options() -> None:
    with pytest.raises(ValueError, match="allreduce_grad_dtype is only available at 'pure_nccl'"):
        chainermn.create_communicator("naive", allreduce_grad_dtype=np.float16)
    with pytest.raises(ValueError, match="gradients in their own dtype"):
        chainermn.create_communicator("pure_nccl", allreduce_grad_dtype=np.float16)
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['foo'\]"):
        chainermn.create_communicator("naive", foo=1)
    with pytest.raises(NotImplementedError, match="double_buffering=True is not supported"):
        chainermn.create_multi_node_optimizer(object(), object(), double_buffering=True)
    with pytest.raises(TypeError, match="'communicator' must be a chainermn communicator"):
        chainermn.create_multi_node_optimizer(object(), object())


class _Comm:
    def __init__(self, rank: int, size: int) -> None:
        self.rank, self.size = rank, size


@pytest.mark.parametrize(
    ("n", "p", "equal", "parts"),
    [  # chainermn 7.8.1's chainermn.datasets.scatter._scatter_index
        (11, 3, True, [(0, 4), (3, 7), (7, 11)]),
        (11, 3, False, [(0, 4), (4, 8), (8, 11)]),
        (10, 4, True, [(0, 3), (2, 5), (5, 8), (7, 10)]),
        (10, 4, False, [(0, 3), (3, 6), (6, 8), (8, 10)]),
        (5, 2, True, [(0, 3), (2, 5)]),
        (5, 2, False, [(0, 3), (3, 5)]),
    ],
)
def test_scatter_index_is_chainermns(n: int, p: int, equal: bool, parts: list) -> None:
    got = [chainermn.scatter_index(n, _Comm(r, p), force_equal_length=equal) for r in range(p)]
    assert got == parts


def test_sub_dataset_reads_through_the_order() -> None:
    # chainer 7.8.1: SubDataset(list(range(10)), 2, 6, order=[9..0]) -> len 4, [0] 7, [-1] 4
    d = chainermn.SubDataset(list(range(10)), 2, 6, order=list(range(9, -1, -1)))
    assert (len(d), d[0], d[-1], d[1:3], list(d)) == (4, 7, 4, [6, 5], [7, 6, 5, 4])
    with pytest.raises(IndexError, match="index 4 out of range for 4 items"):
        d[4]
    with pytest.raises(ValueError, match=r"subset range \[2, 12\) is out of the dataset of 10"):
        chainermn.SubDataset(list(range(10)), 2, 12)


def test_scatter_dataset_needs_the_dataset_on_every_rank() -> None:
    with pytest.raises(ValueError, match="every rank passes the dataset"):
        chainermn.scatter_dataset(None, _Comm(0, 2))
    with pytest.raises(TypeError, match="'comm' must be a chainermn communicator"):
        chainermn.scatter_dataset([1, 2], _Comm(0, 2))


def test_create_multi_node_evaluator_checks_its_arguments() -> None:
    class Local:
        def evaluate(self) -> dict:
            return {"loss": 1.0}

    with pytest.raises(TypeError, match="'communicator' must be a chainermn communicator"):
        chainermn.create_multi_node_evaluator(Local(), _Comm(0, 2))
    comm = object.__new__(chainermn.Communicator)  # no MPI needed to reach the check
    with pytest.raises(TypeError, match="'actual_evaluator' needs an evaluate\\(\\) method"):
        chainermn.create_multi_node_evaluator(object(), comm)

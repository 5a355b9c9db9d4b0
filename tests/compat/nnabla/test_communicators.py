"""``gradhub_compat.nnabla.communicators`` with nnabla's calls under ``mpiexec -n 2``
(``MultiProcessDataParalellCommunicator(ctx)``, ``init()``, ``all_reduce``, ``bcast``,
``all_gather`` on NdArrays, ``backward(communicator_callbacks=all_reduce_callback(...))``), and
the errors before ``init()``."""

from __future__ import annotations

import pytest
from mpi_helpers import needs_mpi, run


@needs_mpi
def test_nnabla_calls_on_two_ranks() -> None:
    res = run("nnabla_communicator.py")
    assert res.returncode == 0, res.stdout
    for r in (0, 1):
        assert f"ok collectives {r}" in res.stdout and f"ok callback {r}" in res.stdout


def test_using_the_communicator_before_init_is_an_error() -> None:
    import gradhub_compat.nnabla.communicators as C

    comm = C.MultiProcessDataParalellCommunicator(None)
    with pytest.raises(RuntimeError, match=r"call init\(\) before using the communicator"):
        _ = comm.rank
    with pytest.raises(TypeError, match="all_reduce: expected an NdArray"):
        C.Communicator.all_reduce(comm, 3)


def test_a_cuda_context_takes_the_nccl_communicator() -> None:
    import gradhub as gh
    import gradhub_compat.nnabla.communicators as C

    assert C.MultiProcessDataParalellCommunicator(gh.Context("cudnn")).name == "nccl"
    assert C.MultiProcessDataParalellCommunicator(gh.Context("cuda", 1)).name == "nccl"
    assert C.MultiProcessDataParalellCommunicator(gh.Context("cpu")).name == "mpi"
    assert C.MultiProcessDataParalellCommunicator(None).name == "mpi"

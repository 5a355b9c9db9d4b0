"""Rank 1 builds a parameter of another shape (argv[1] "shape") or one more parameter ("extra"):
broadcast_parameters raises on both ranks, naming the difference."""

import sys

import gradhub as gh
import numpy as np
from gradhub_mpi import broadcast_parameters

comm = gh.distributed.communicator("mpi")
r = comm.rank
params = {"fc/W": gh.Variable(np.zeros((3, 4))), "fc/b": gh.Variable(np.zeros(4))}
if r == 1 and sys.argv[1] == "shape":
    params["fc/b"] = gh.Variable(np.zeros(5))
if r == 1 and sys.argv[1] == "extra":
    params["fc2/W"] = gh.Variable(np.zeros((4, 2), dtype=np.float32))
try:
    broadcast_parameters(comm, params)
except ValueError as e:
    print(f"rank {r} error: {e}", flush=True)
else:
    print(f"rank {r} no error", flush=True)

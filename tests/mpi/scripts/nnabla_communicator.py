"""nnabla's communicator calls on 2 ranks: init, rank/size/local_rank, all_reduce, bcast,
all_gather on NdArrays, and backward(communicator_callbacks=all_reduce_callback(...)) giving the
gradient of the whole batch."""

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.communicators as C
import gradhub_compat.nnabla.functions as F
import numpy as np

comm = C.MultiProcessDataParalellCommunicator(None)
comm.init()
r, p = comm.rank, comm.size
assert (p, comm.local_rank) == (2, r)
a = nn.Variable.from_numpy_array(np.full(3, r + 1.0))
comm.all_reduce(a.data, division=False, inplace=True)
assert (a.d == 3.0).all(), a.d
comm.all_reduce([a.data], division=True)
assert (a.d == 3.0).all(), a.d  # (3 + 3) / 2
b = nn.Variable.from_numpy_array(np.full(2, float(r)))
comm.bcast([b.data], src=1)
assert (b.d == 1.0).all()
out = [nn.Variable((2,)) for _ in range(2)]
comm.all_gather(nn.Variable.from_numpy_array(np.full(2, r * 10.0)).data, [o.data for o in out])
assert (out[0].d == 0).all() and (out[1].d == 10).all(), [o.d for o in out]
print(f"ok collectives {r}", flush=True)

g = np.random.default_rng(0)
X = g.standard_normal((8, 3)).astype(np.float32)
T = g.standard_normal((8, 1)).astype(np.float32)
w = nn.Variable.from_numpy_array(g.standard_normal((3, 1)).astype(np.float32)).apply(need_grad=True)


def loss_of(x: np.ndarray, t: np.ndarray) -> nn.Variable:
    y = F.affine(nn.Variable.from_numpy_array(x), w, base_axis=1)
    return F.mean(F.squared_error(y, nn.Variable.from_numpy_array(t)))


full = loss_of(X, T)
w.grad.zero()
full.backward()
whole = w.g.copy()
w.grad.zero()
cb = comm.all_reduce_callback([w.grad], pack_size=16, division=True)
part = slice(4 * r, 4 * r + 4)
loss_of(X[part], T[part]).backward(communicator_callbacks=cb)
assert np.allclose(w.g, whole, rtol=1e-5, atol=1e-6), (w.g, whole)
print(f"ok callback {r}", flush=True)

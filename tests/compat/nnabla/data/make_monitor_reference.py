"""Writes ``monitor_reference.json`` with nnabla itself (1.39.0 wrote the committed file):
``python make_monitor_reference.py monitor_reference.json`` in an environment with nnabla (not
gradhub).

:func:`train` is a small nnabla training script (a two-layer ``PF.affine`` MLP, ``S.Adam``, a
shuffled ``data_iterator_simple`` with a seeded ``rng``, a ``MonitorSeries`` for the loss and a
``MonitorTimeElapsed``) taking the framework's modules as arguments, so that
``tests/compat/nnabla/test_monitor.py`` runs the very same function on
``gradhub_compat.nnabla`` and compares with the file: the indices of every batch, the loss of
every iteration, and the text of the series file.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from types import ModuleType
from typing import Any

import numpy as np

N_EXAMPLES = 20
BATCH_SIZE = 6
N_ITER = 12


def _data() -> tuple[np.ndarray, np.ndarray]:
    rs = np.random.RandomState(0)
    x = rs.randn(N_EXAMPLES, 3).astype(np.float32)
    t = (np.sin(x).sum(axis=1, keepdims=True) + 0.1 * rs.randn(N_EXAMPLES, 1)).astype(np.float32)
    return x, t


def train(
    nn: ModuleType,
    F: ModuleType,
    PF: ModuleType,
    S: ModuleType,
    monitor: ModuleType,
    data_iterator: ModuleType,
    out_dir: str,
) -> dict[str, Any]:
    """Run the script with the modules given (nnabla's or gradhub_compat.nnabla's), writing the
    monitor files under ``out_dir``; returns the batches' indices, the losses and the series
    file's text."""
    xs, ts = _data()

    def load(i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return xs[i], ts[i], np.array(i)

    nn.clear_parameters()
    di = data_iterator.data_iterator_simple(
        load, N_EXAMPLES, BATCH_SIZE, shuffle=True, rng=np.random.RandomState(2)
    )
    x = nn.Variable((BATCH_SIZE, 3))
    t = nn.Variable((BATCH_SIZE, 1))
    rng = np.random.RandomState(1)
    h = F.relu(PF.affine(x, 8, name="fc1", rng=rng))
    y = PF.affine(h, 1, name="fc2", rng=rng)
    loss = F.mean(F.squared_error(y, t))
    solver = S.Adam(alpha=0.01)
    solver.set_parameters(nn.get_parameters())
    mon = monitor.Monitor(out_dir)
    mon_loss = monitor.MonitorSeries("training loss", mon, interval=2, verbose=False)
    mon_time = monitor.MonitorTimeElapsed("training time", mon, interval=4, verbose=False)
    batches: list[list[int]] = []
    losses: list[float] = []
    epochs: list[int] = []
    for i in range(N_ITER):
        x.d, t.d, idx = di.next()
        batches.append([int(k) for k in idx])
        loss.forward()
        solver.zero_grad()
        loss.backward()
        solver.update()
        mon_loss.add(i, loss.d.copy())
        mon_time.add(i)
        losses.append(float(loss.d))
        epochs.append(di.epoch)
    di.close()
    with open(os.path.join(out_dir, "training-loss.series.txt")) as f:
        series = f.read()
    return {"batches": batches, "losses": losses, "epochs": epochs, "series": series}


def main(path: str) -> None:
    import nnabla as nn
    import nnabla.functions as F
    import nnabla.monitor as monitor
    import nnabla.parametric_functions as PF
    import nnabla.solvers as S
    import nnabla.utils.data_iterator as data_iterator

    with tempfile.TemporaryDirectory() as out_dir:
        ref = train(nn, F, PF, S, monitor, data_iterator, out_dir)
        ref["files"] = sorted(os.listdir(out_dir))
    ref["nnabla"] = nn.__version__
    with open(path, "w") as f:
        json.dump(ref, f)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])

"""Time a chainer-style training step on gradhub's chainer layer and on chainer itself, in one run.

The step is that of ``tests/compat/chainer/data/mnist_like.py`` (an MLP 64-32-32-10 in
``L.Classifier``, ``Adam`` with ``WeightDecay``, ``optimizer.update(model, x, t)`` on a batch
of 32) and, with ``--conv``, a ``Convolution2D``/``BatchNormalization`` classifier on
(32, 3, 16, 16) images. Each framework runs in its own interpreter with the same thread
setting; the report gives the median time per step (median over rounds) and the ratio
gradhub / chainer::

    python benchmarks/chainer_training.py --chainer-python /path/to/chainer-venv/bin/python

Not part of the test suite (timings belong here, not in tests).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

CHILD = r"""
import json, sys, time
import numpy as np
if sys.argv[1] == "gradhub":
    from gradhub_compat import chainer
    import gradhub_compat.chainer.functions as F
    import gradhub_compat.chainer.links as L
    from gradhub_compat.chainer import optimizers, optimizer_hooks
else:
    import chainer
    import chainer.functions as F
    import chainer.links as L
    from chainer import optimizers, optimizer_hooks
conv = sys.argv[2] == "conv"
steps, rounds = int(sys.argv[3]), int(sys.argv[4])

class MLP(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, 32)
            self.l2 = L.Linear(None, 32)
            self.l3 = L.Linear(None, 10)
    def forward(self, x):
        return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))

class CNN(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.c1 = L.Convolution2D(None, 8, 3, pad=1, nobias=True)
            self.bn = L.BatchNormalization(8)
            self.fc = L.Linear(None, 10)
    def forward(self, x):
        return self.fc(F.max_pooling_2d(F.relu(self.bn(self.c1(x))), 2))

np.random.seed(0)
model = L.Classifier(CNN() if conv else MLP())
opt = optimizers.Adam().setup(model)
opt.add_hook(optimizer_hooks.WeightDecay(1e-4))
shape = (32, 3, 16, 16) if conv else (32, 64)
x = np.random.randn(*shape).astype(np.float32)
t = np.random.randint(0, 10, size=32).astype(np.int32)
for _ in range(3):
    opt.update(model, x, t)
times = []
for _ in range(rounds):
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.update(model, x, t)
    times.append((time.perf_counter() - t0) / steps)
times.sort()
print(json.dumps({"median_s": times[len(times) // 2], "loss": float(model.loss.array)}))
"""


def _run(python: str, fw: str, kind: str, steps: int, rounds: int, threads: int) -> Any:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    env["PYTHONWARNINGS"] = "ignore"
    out = subprocess.run(
        [python, "-c", CHILD, fw, kind, str(steps), str(rounds)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--chainer-python", required=True, help="an interpreter with chainer 7.8.1")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--conv", action="store_true", help="also the conv/batchnorm classifier")
    args = p.parse_args(argv)
    kinds = ["mlp", "conv"] if args.conv else ["mlp"]
    print(f"# chainer-style training step, {time.strftime('%Y-%m-%d')}, threads={args.threads}")
    print("| workload | gradhub (ms/step) | chainer 7.8.1 (ms/step) | gradhub / chainer |")
    print("|---|---|---|---|")
    for kind in kinds:
        g = _run(sys.executable, "gradhub", kind, args.steps, args.rounds, args.threads)
        c = _run(args.chainer_python, "chainer", kind, args.steps, args.rounds, args.threads)
        ratio = g["median_s"] / c["median_s"]
        print(f"| {kind} | {g['median_s'] * 1e3:.3f} | {c['median_s'] * 1e3:.3f} | {ratio:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

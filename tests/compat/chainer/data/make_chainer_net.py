"""Writes ``chainer_net.npz`` with chainer itself (7.8.1 wrote the committed file):
``python make_chainer_net.py chainer_net.npz`` in an environment with chainer (not gradhub)."""

import sys

import chainer
import chainer.links as L
import numpy as np
from chainer import serializers


class Net(chainer.Chain):
    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
            b = np.arange(4, dtype=np.float32) - 1.5
            self.l1 = L.Linear(3, 4, initialW=w, initial_bias=b)
            self.bn = L.BatchNormalization(4)
            eye = np.eye(2, dtype=np.float32)
            self.stack = chainer.ChainList(L.Linear(2, 2, initialW=eye, nobias=True))


if __name__ == "__main__":
    net = Net()
    net.bn.avg_mean[...] = np.array([0.5, 1, 1.5, 2], dtype=np.float32)
    serializers.save_npz(sys.argv[1], net)
    z = np.load(sys.argv[1])
    for k in sorted(z.files):
        print(k, z[k].shape, z[k].dtype)

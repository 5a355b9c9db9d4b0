"""A chainer MNIST-style training script (the structure of chainer's examples/mnist/train_mnist.py
without the trainer): an MLP in a Classifier, Adam with weight decay, mini-batches, evaluation
in test mode, save_npz/load_npz, on small synthetic data (10 classes of noisy 8x8 prototypes).

``python mnist_like.py OUT.json`` with chainer 7.8.1 wrote ``chainer_mnist_like.json``;
``tests/compat/chainer/test_training.py`` runs this file with only its import lines changed to
the gradhub layer and compares.
"""

import json
import os
import sys
import tempfile

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
from chainer import optimizers, serializers


class MLP(chainer.Chain):
    def __init__(self, n_units, n_out):
        super(MLP, self).__init__()  # noqa: UP008 (chainer example style)
        with self.init_scope():
            self.l1 = L.Linear(None, n_units)
            self.l2 = L.Linear(None, n_units)
            self.l3 = L.Linear(None, n_out)

    def forward(self, x):
        h1 = F.relu(self.l1(x))
        h2 = F.relu(self.l2(h1))
        return self.l3(h2)


def make_data(n, protos, rng):
    t = rng.randint(0, 10, size=n).astype(np.int32)
    x = 2 * protos[t] + 0.5 * rng.randn(n, 64).astype(np.float32)
    return x.astype(np.float32), t


def main(workdir):
    np.random.seed(0)
    rng = np.random.RandomState(1)
    protos = rng.rand(10, 64).astype(np.float32)
    train_x, train_t = make_data(256, protos, rng)
    test_x, test_t = make_data(64, protos, rng)

    model = L.Classifier(MLP(32, 10))
    optimizer = optimizers.Adam(alpha=0.005)
    optimizer.setup(model)
    optimizer.add_hook(chainer.optimizer_hooks.WeightDecay(1e-4))

    batchsize = 32
    train_losses, test_losses, test_accs = [], [], []
    for _epoch in range(5):
        perm = np.random.permutation(len(train_x))
        for i in range(0, len(train_x), batchsize):
            idx = perm[i : i + batchsize]
            x = chainer.Variable(train_x[idx])
            t = chainer.Variable(train_t[idx])
            optimizer.update(model, x, t)
            train_losses.append(float(model.loss.array))
        with chainer.using_config("train", False), chainer.no_backprop_mode():
            loss = model(test_x, test_t)
        test_losses.append(float(loss.array))
        test_accs.append(float(model.accuracy.array))

    path = os.path.join(workdir, "mlp.npz")
    serializers.save_npz(path, model)
    restored = L.Classifier(MLP(32, 10))
    serializers.load_npz(path, restored)
    with chainer.using_config("train", False):
        restored_loss = float(restored(test_x, test_t).array)
    return {
        "train_losses": train_losses,
        "test_losses": test_losses,
        "test_accs": test_accs,
        "restored_loss": restored_loss,
        "optimizer_t": optimizer.t,
        "keys": sorted(np.load(path).files),
    }


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        result = main(d)
    with open(sys.argv[1], "w") as f:
        json.dump(result, f, indent=1)
    print(result["train_losses"][::8], result["test_losses"], result["test_accs"])

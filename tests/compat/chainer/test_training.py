"""Training with gradhub's chainer layer against chainer 7.8.1: the scenarios of
data/training_scenarios.py (SGD, MomentumSGD, Adam and its options, AMSBound, AdamW; the
WeightDecay, GradientClipping, Lasso and GradientHardClipping hooks; update(lossfun) and the
explicit loop; a Conv/BatchNorm Classifier) and the MNIST-style script data/mnist_like.py, run
with only its import lines changed, reach chainer's recorded losses and parameters
(data/chainer_training.npz, data/chainer_mnist_like.json, written by chainer 7.8.1 on
2026-11-25) within float32 tolerance."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import optimizer_hooks, optimizers

DATA = Path(__file__).parent / "data"


def _scenarios() -> types.ModuleType:
    sys.path.insert(0, str(DATA))
    try:
        import training_scenarios
    finally:
        sys.path.remove(str(DATA))
    return training_scenarios


NS = types.SimpleNamespace(
    chainer=chainer, F=F, L=L, optimizers=optimizers, optimizer_hooks=optimizer_hooks
)
NAMES = [
    "sgd",
    "sgd_manual",
    "momentum",
    "adam",
    "adam_opts",
    "hooks",
    "adabound",
    "adamw",
    "lasso_hard",
    "convbn",
]


@pytest.mark.parametrize("name", NAMES)
def test_scenario_matches_chainer(name: str) -> None:
    ref = np.load(DATA / "chainer_training.npz")
    out = _scenarios().scenarios(NS)[name]()
    assert sorted(out) == sorted(k for k in ref.files if k.startswith(name + "/"))
    for key, value in out.items():
        np.testing.assert_allclose(
            np.asarray(value, np.float64), ref[key], rtol=0, atol=1e-6, err_msg=key
        )
    losses = out[name + "/losses"]
    assert losses[-1] < losses[0]  # it trains


MNIST_IMPORTS = {
    "import chainer\n": "from gradhub_compat import chainer\n",
    "import chainer.functions as F\n": "import gradhub_compat.chainer.functions as F\n",
    "import chainer.links as L\n": "import gradhub_compat.chainer.links as L\n",
    "from chainer import optimizers, serializers\n": (
        "from gradhub_compat.chainer import optimizers, serializers\n"
    ),
}


def test_mnist_like_script_reaches_chainers_loss_sequence(tmp_path: Path) -> None:
    src = (DATA / "mnist_like.py").read_text()
    for old, new in MNIST_IMPORTS.items():
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    assert "import chainer" not in src.replace("gradhub_compat.chainer", "").replace(
        "from gradhub_compat import chainer", ""
    )
    ns: dict[str, object] = {"__name__": "mnist_like"}
    exec(compile(src, str(DATA / "mnist_like.py"), "exec"), ns)
    got = ns["main"](str(tmp_path))  # type: ignore[operator]
    ref = json.loads((DATA / "chainer_mnist_like.json").read_text())
    assert got["keys"] == ref["keys"]  # the same npz layout
    assert got["optimizer_t"] == ref["optimizer_t"] == 40
    for key in ("train_losses", "test_losses", "test_accs", "restored_loss"):
        np.testing.assert_allclose(got[key], ref[key], rtol=0, atol=2e-6, err_msg=key)
    assert ref["train_losses"][-1] < 0.2 < ref["train_losses"][0]
    assert got["restored_loss"] == got["test_losses"][-1]

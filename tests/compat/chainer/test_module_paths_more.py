"""chainer 7.8.1's module paths below ``chainer.links``, ``chainer.optimizers`` and
``chainer.training.extensions`` in gradhub's chainer layer (``from
gradhub_compat.chainer.links.connection.linear import Linear``...).

The modules and the public names chainer defines in each come from
``data/module_paths_chainer.json``, written by chainer 7.8.1 with
``data/make_module_paths_reference.py``.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import gradhub_compat.chainer.links as L
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import _module_paths, optimizers
from gradhub_compat.chainer.training import extensions

# chainer 7.8.1's modules and names (written by make_module_paths_reference.py)
_CHAINER: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "module_paths_chainer.json").read_text()
)
_PACKAGES = {
    "chainer.links.": (L, _module_paths.LINK_MODULES),
    "chainer.optimizers.": (optimizers, _module_paths.OPTIMIZER_MODULES),
    "chainer.training.extensions.": (extensions, _module_paths.EXTENSION_MODULES),
}
_MODULES = sorted(k for k in _CHAINER if k != "chainer")
#: helpers of chainer's extension modules that the layer's files of those modules lack
_HELPERS_NOT_PROVIDED = {
    "Reservoir",
    "Statistician",
}
#: helpers of chainer's extension modules that only their module defines (as chainer's, not
#: exported by the extensions package)
_MODULE_HELPERS = {
    "is_graphviz_available",
    "is_return_code_zero",
    "ProcessQueueWriter",
    "ProcessWriter",
    "QueueWriter",
    "SimpleWriter",
    "StandardWriter",
    "ThreadQueueWriter",
    "ThreadWriter",
    "Writer",
}


def _split(name: str) -> tuple[Any, dict[str, tuple[str, ...]], str]:
    for prefix, (package, table) in _PACKAGES.items():
        if name.startswith(prefix):
            return package, table, name[len(prefix) :]
    raise AssertionError(name)


def test_reference_is_chainer_7_8_1() -> None:
    assert _CHAINER["chainer"] == "7.8.1"


@pytest.mark.parametrize("name", _MODULES)
def test_every_chainer_module_is_importable(name: str) -> None:
    package, table, rel = _split(name)
    module = importlib.import_module(name.replace("chainer.", "gradhub_compat.chainer.", 1))
    if rel not in table:  # a file of the package (extensions.evaluator...)
        assert name.startswith("chainer.training.extensions.")
        for attr in set(_CHAINER[name]) - _HELPERS_NOT_PROVIDED:
            if attr in _MODULE_HELPERS:
                assert callable(getattr(module, attr)) and attr not in package.__all__, attr
            else:
                assert getattr(module, attr) is getattr(package, attr), attr
        return
    assert table[rel] == tuple(_CHAINER[name])  # the names chainer defines there
    for attr in _CHAINER[name]:
        try:
            value = getattr(module, attr)
        except NotImplementedError as e:
            assert "is not supported by gradhub" in str(e) and "migration-chainer.md" in str(e)
            assert attr not in module.__all__
        else:
            if attr not in _module_paths.LINK_ALIASES:
                assert value is getattr(package, attr), attr
                assert attr in module.__all__


def test_links_paths() -> None:
    from gradhub_compat.chainer.links.connection.inception import Inception
    from gradhub_compat.chainer.links.connection.linear import Linear
    from gradhub_compat.chainer.links.model.classifier import Classifier
    from gradhub_compat.chainer.links.rnn.lstm import LSTM, LSTMBase
    from gradhub_compat.chainer.links.rnn.tree_lstm import ChildSumTreeLSTM, NaryTreeLSTM

    assert Linear is L.Linear and Classifier is L.Classifier and Inception is L.Inception
    assert (ChildSumTreeLSTM, NaryTreeLSTM) == (L.ChildSumTreeLSTM, L.NaryTreeLSTM)
    assert issubclass(LSTM, LSTMBase)
    assert L.connection.linear.Linear is L.Linear  # attributes, as chainer's subpackages
    # chainer's subpackages hold their submodules only
    with pytest.raises(AttributeError):
        L.connection.Linear  # noqa: B018
    with pytest.raises(AttributeError):
        L.connection.linear.Foo  # noqa: B018


def test_links_paths_refuse_what_the_layer_lacks() -> None:
    # chainer's L.Parameter link (not chainer.Parameter, which links.py imports)
    with pytest.raises(NotImplementedError, match=r"connection\.parameter\.Parameter"):
        from gradhub_compat.chainer.links.connection.parameter import Parameter  # noqa: F401
    with pytest.raises(NotImplementedError, match="ResNet50Layers"):
        from gradhub_compat.chainer.links.model.vision.resnet import ResNet50Layers  # noqa: F401
    with pytest.raises(NotImplementedError, match="CaffeFunction"):
        from gradhub_compat.chainer.links.caffe import CaffeFunction  # noqa: F401
    import gradhub_compat.chainer.links.theano.theano_function as tf

    with pytest.raises(NotImplementedError, match="TheanoFunction"):
        tf.TheanoFunction  # noqa: B018
    assert tf.__all__ == []


def test_optimizer_paths() -> None:
    from gradhub_compat.chainer.optimizers.adam import Adam, AdamRule, AdamW
    from gradhub_compat.chainer.optimizers.msvag import MSVAG, MSVAGRule
    from gradhub_compat.chainer.optimizers.sgd import SGD

    assert (Adam, AdamRule, AdamW) == (optimizers.Adam, optimizers.AdamRule, optimizers.AdamW)
    assert (MSVAG, MSVAGRule, SGD) == (optimizers.MSVAG, optimizers.MSVAGRule, optimizers.SGD)
    assert chainer.optimizers.momentum_sgd.MomentumSGD is optimizers.MomentumSGD


def test_extension_paths() -> None:
    from gradhub_compat.chainer.training.extensions.exponential_shift import ExponentialShift
    from gradhub_compat.chainer.training.extensions.plot_report import PlotReport
    from gradhub_compat.chainer.training.extensions.value_observation import (
        observe_lr,
        observe_value,
    )

    assert ExponentialShift is extensions.ExponentialShift and PlotReport.available() is False
    assert (observe_lr, observe_value) == (extensions.observe_lr, extensions.observe_value)
    # chainer's util.ProgressBar is a console helper, not the ProgressBar extension
    with pytest.raises(NotImplementedError, match=r"extensions\.util\.ProgressBar"):
        from gradhub_compat.chainer.training.extensions.util import ProgressBar  # noqa: F401
    from gradhub_compat.chainer.training.extensions.snapshot_writers import SimpleWriter

    assert extensions.snapshot_writers.SimpleWriter is SimpleWriter


def test_star_import_and_dir() -> None:
    namespace: dict[str, Any] = {}
    exec("from gradhub_compat.chainer.links.rnn.gru import *", namespace)
    assert namespace["StatefulGRU"] is L.StatefulGRU and "GRUBase" in namespace
    import gradhub_compat.chainer.links.rnn.mgu as mgu

    assert {"MGUBase", "StatefulMGU", "StatelessMGU"} <= set(dir(mgu))

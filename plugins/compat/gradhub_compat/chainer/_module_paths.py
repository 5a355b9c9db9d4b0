"""chainer 7.8.1's module paths under ``chainer.links``, ``chainer.optimizers`` and
``chainer.training.extensions``, for programs that import a class from its module::

    from gradhub_compat.chainer.links.connection.linear import Linear
    from gradhub_compat.chainer.optimizers.adam import Adam
    from gradhub_compat.chainer.training.extensions.exponential_shift import ExponentialShift

Each path is a module (entered in ``sys.modules`` when its package is imported) holding the
public names chainer 7.8.1 defines there, which are those of :mod:`gradhub_compat.chainer.links`,
:mod:`gradhub_compat.chainer.optimizers` and :mod:`gradhub_compat.chainer.training.extensions`
(looked up when read). A name chainer defines there that the layer does not provide (the
pretrained vision models, ``CaffeFunction``, the snapshot writers...) raises
NotImplementedError naming the page, as the packages themselves do; any other name is an
AttributeError. The intermediate packages (``chainer.links.connection``...) hold their
submodules only, as chainer's.

Example::

    >>> from gradhub_compat.chainer.links.connection.linear import Linear
    >>> import gradhub_compat.chainer.links as L
    >>> Linear is L.Linear
    True
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from ._device import PAGE
from ._function_modules import _enter_path

_LINKS = "gradhub_compat.chainer.links"
_RNN = "gradhub_compat.chainer._links.rnn"

#: module path (under ``chainer.links``) -> the public names chainer 7.8.1 defines there
LINK_MODULES: dict[str, tuple[str, ...]] = {
    "activation": (),
    "activation.maxout": ("Maxout",),
    "activation.prelu": ("PReLU",),
    "activation.simplified_dropconnect": ("SimplifiedDropconnect",),
    "activation.swish": ("Swish",),
    "caffe": ("CaffeFunction",),
    "caffe.caffe_function": ("CaffeFunction",),
    "connection": (),
    "connection.bias": ("Bias",),
    "connection.bilinear": ("Bilinear",),
    "connection.convolution_2d": ("Convolution2D",),
    "connection.convolution_nd": ("Convolution1D", "Convolution3D", "ConvolutionND"),
    "connection.deconvolution_2d": ("Deconvolution2D",),
    "connection.deconvolution_nd": ("Deconvolution1D", "Deconvolution3D", "DeconvolutionND"),
    "connection.deformable_convolution_2d": (
        "DeformableConvolution2D",
        "DeformableConvolution2DSampler",
    ),
    "connection.depthwise_convolution_2d": ("DepthwiseConvolution2D",),
    "connection.dilated_convolution_2d": ("DilatedConvolution2D",),
    "connection.embed_id": ("EmbedID",),
    "connection.highway": ("Highway",),
    "connection.inception": ("Inception",),
    "connection.inceptionbn": ("InceptionBN",),
    "connection.linear": ("Linear",),
    "connection.local_convolution_2d": ("LocalConvolution2D",),
    "connection.mlp_convolution_2d": ("MLPConvolution2D",),
    "connection.parameter": ("Parameter",),
    "connection.scale": ("Scale",),
    "loss": (),
    "loss.black_out": ("BlackOut",),
    "loss.crf1d": ("CRF1d",),
    "loss.hierarchical_softmax": (
        "BinaryHierarchicalSoftmax",
        "BinaryHierarchicalSoftmaxFunction",
        "TreeParser",
    ),
    "loss.negative_sampling": ("NegativeSampling",),
    "model": (),
    "model.classifier": ("Classifier",),
    "model.vision": (),
    "model.vision.googlenet": ("GoogLeNet", "prepare"),
    "model.vision.resnet": (
        "BottleneckA",
        "BottleneckB",
        "BuildingBlock",
        "ResNet101Layers",
        "ResNet152Layers",
        "ResNet50Layers",
        "ResNetLayers",
        "prepare",
    ),
    "model.vision.vgg": ("VGG16Layers", "VGG19Layers", "VGGLayers", "prepare"),
    "normalization": (),
    "normalization.batch_normalization": ("BatchNormalization",),
    "normalization.batch_renormalization": ("BatchRenormalization",),
    "normalization.decorrelated_batch_normalization": (
        "DecorrelatedBatchNormalization",
        "fix_avg_mean",
        "fix_avg_projection",
    ),
    "normalization.group_normalization": ("GroupNormalization",),
    "normalization.layer_normalization": ("LayerNormalization",),
    "rnn": (),
    "rnn.gru": ("GRU", "GRUBase", "StatefulGRU", "StatelessGRU"),
    "rnn.lstm": ("LSTM", "LSTMBase", "StatelessLSTM"),
    "rnn.mgu": ("MGUBase", "StatefulMGU", "StatelessMGU"),
    "rnn.n_step_gru": ("NStepBiGRU", "NStepGRU", "NStepGRUBase"),
    "rnn.n_step_lstm": ("NStepBiLSTM", "NStepLSTM", "NStepLSTMBase"),
    "rnn.n_step_rnn": (
        "NStepBiRNNReLU",
        "NStepBiRNNTanh",
        "NStepRNNBase",
        "NStepRNNReLU",
        "NStepRNNTanh",
        "argsort_list_descent",
        "permutate_list",
    ),
    "rnn.peephole": ("StatefulPeepholeLSTM",),
    "rnn.tree_lstm": ("ChildSumTreeLSTM", "NaryTreeLSTM"),
    "rnn.zoneoutlstm": ("StatefulZoneoutLSTM",),
    "theano": (),
    "theano.theano_function": ("TheanoFunction",),
}

#: chainer's base classes kept under a private name by the layer: name -> (module, attribute)
LINK_ALIASES: dict[str, tuple[str, str]] = {
    "LSTMBase": (_LINKS, "_LSTMBase"),
    "GRUBase": (_RNN, "_GRUBase"),
    "NStepRNNBase": (_RNN, "_NStepRNNBase"),
    "NStepLSTMBase": (_RNN, "_NStepLSTMBase"),
    "DeformableConvolution2DSampler": (
        "gradhub_compat.chainer._links.connection_extra",
        "DeformableConvolution2DSampler",
    ),
    "fix_avg_mean": ("gradhub_compat.chainer._links.normalization_extra", "fix_avg_mean"),
    "fix_avg_projection": (
        "gradhub_compat.chainer._links.normalization_extra",
        "fix_avg_projection",
    ),
}

#: module path (under ``chainer.optimizers``) -> the public names chainer 7.8.1 defines there
OPTIMIZER_MODULES: dict[str, tuple[str, ...]] = {
    "ada_delta": ("AdaDelta", "AdaDeltaRule"),
    "ada_grad": ("AdaGrad", "AdaGradRule"),
    "adam": ("AMSBound", "AMSGrad", "AdaBound", "Adam", "AdamRule", "AdamW"),
    "corrected_momentum_sgd": ("CorrectedMomentumSGD", "CorrectedMomentumSGDRule"),
    "momentum_sgd": ("MomentumSGD", "MomentumSGDRule"),
    "msvag": ("MSVAG", "MSVAGRule"),
    "nesterov_ag": ("NesterovAG", "NesterovAGRule"),
    "rmsprop": ("RMSprop", "RMSpropRule"),
    "rmsprop_graves": ("RMSpropGraves", "RMSpropGravesRule"),
    "sgd": ("SGD", "SGDRule"),
    "smorms3": ("SMORMS3", "SMORMS3Rule"),
}

#: module path (under ``chainer.training.extensions``) -> the public names chainer 7.8.1
#: defines there, for the modules the package has no file for (``evaluator``, ``log_report``,
#: ``progress_bar``... are files of the package)
EXTENSION_MODULES: dict[str, tuple[str, ...]] = {
    "exponential_shift": ("ExponentialShift",),
    "fail_on_nonnumber": ("FailOnNonNumber",),
    "inverse_shift": ("InverseShift",),
    "linear_shift": ("LinearShift",),
    "multistep_shift": ("MultistepShift",),
    "plot_report": ("PlotReport",),
    "polynomial_shift": ("PolynomialShift",),
    "print_report": ("PrintReport",),
    "step_shift": ("StepShift",),
    "util": ("ProgressBar",),
    "value_observation": ("observe_lr", "observe_value"),
    "warmup_shift": ("WarmupShift",),
}

#: names of a module path that are not the same-named attribute of the package: the helper
#: class of ``extensions.util`` is not the ``ProgressBar`` extension
_NOT_PROVIDED: dict[str, frozenset[str]] = {
    "gradhub_compat.chainer.training.extensions.util": frozenset({"ProgressBar"}),
}


def _resolve(
    package: types.ModuleType, name: str, aliases: dict[str, tuple[str, str]]
) -> tuple[bool, Any]:
    """``(True, value)`` for a name the layer provides, ``(False, None)`` else."""
    if name in aliases:
        module, attr = aliases[name]
        try:
            return True, getattr(importlib.import_module(module), attr)
        except AttributeError:
            return False, None
    if name not in getattr(package, "__all__", ()):  # (links.py imports chainer.Parameter)
        return False, None
    return True, getattr(package, name)


def _module(
    full: str,
    chainer_name: str,
    package: types.ModuleType,
    names: tuple[str, ...],
    aliases: dict[str, tuple[str, str]],
) -> types.ModuleType:
    """A module named ``full`` whose attributes ``names`` are read from ``package``."""
    module = types.ModuleType(full, f"chainer's ``{chainer_name}`` module path.")
    module.__path__ = []  # type: ignore[attr-defined]  # a package: submodules below it
    refused = _NOT_PROVIDED.get(full, frozenset())

    def provided() -> list[str]:
        return [n for n in names if n not in refused and _resolve(package, n, aliases)[0]]

    def __getattr__(attr: str) -> Any:
        if attr == "__all__":
            return provided()
        if attr in names:
            found, value = (False, None) if attr in refused else _resolve(package, attr, aliases)
            if found:
                return value
            raise NotImplementedError(
                f"{chainer_name}.{attr} is not supported by gradhub (this module provides: "
                f"{', '.join(provided()) or 'nothing'}); see {PAGE}"
            )
        raise AttributeError(f"module {full!r} has no attribute {attr!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(module), *provided()})

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    module.__dir__ = __dir__  # type: ignore[method-assign]
    return module


def _install(
    package: types.ModuleType,
    chainer_base: str,
    table: dict[str, tuple[str, ...]],
    aliases: dict[str, tuple[str, str]],
) -> None:
    base = package.__name__

    def make(full: str) -> types.ModuleType:
        rel = full[len(base) + 1 :]
        return _module(full, f"{chainer_base}.{rel}", package, table.get(rel, ()), aliases)

    for path in table:
        _enter_path(package, path, make)


def install_links(name: str) -> None:
    """Enter the modules of :data:`LINK_MODULES` below the module ``name``."""
    _install(sys.modules[name], "chainer.links", LINK_MODULES, LINK_ALIASES)


def install_optimizers(name: str) -> None:
    """Enter the modules of :data:`OPTIMIZER_MODULES` below the module ``name``."""
    _install(sys.modules[name], "chainer.optimizers", OPTIMIZER_MODULES, {})


def install_extensions(name: str) -> None:
    """Enter the modules of :data:`EXTENSION_MODULES` below the module ``name``."""
    _install(sys.modules[name], "chainer.training.extensions", EXTENSION_MODULES, {})

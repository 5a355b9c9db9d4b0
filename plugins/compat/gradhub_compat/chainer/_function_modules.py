"""chainer's module paths under ``chainer.functions`` (``chainer.functions.loss.vae``,
``chainer.functions.activation.relu``...), for programs that import a function from its module::

    from gradhub_compat.chainer.functions.loss.vae import gaussian_kl_divergence

Each path is a module holding the functions chainer 7.8.1 defines there, which are those of
:mod:`gradhub_compat.chainer.functions`; any other name of it (chainer's ``FunctionNode``
classes, helpers) raises NotImplementedError naming the page. The modules are entered in
``sys.modules`` when :mod:`gradhub_compat.chainer.functions` is imported.

Example::

    >>> from gradhub_compat.chainer.functions.loss.vae import gaussian_kl_divergence
    >>> import gradhub_compat.chainer.functions as F
    >>> gaussian_kl_divergence is F.gaussian_kl_divergence
    True
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

from ._device import PAGE

#: module path (under ``chainer.functions``) -> the functions chainer 7.8.1 defines there
MODULES: dict[str, tuple[str, ...]] = {
    "activation.clipped_relu": (
        "clipped_relu",
        "relu6",
    ),
    "activation.crelu": ("crelu",),
    "activation.elu": ("elu",),
    "activation.hard_sigmoid": ("hard_sigmoid",),
    "activation.leaky_relu": ("leaky_relu",),
    "activation.log_softmax": ("log_softmax",),
    "activation.maxout": ("maxout",),
    "activation.prelu": ("prelu",),
    "activation.relu": ("relu",),
    "activation.rrelu": ("rrelu",),
    "activation.selu": ("selu",),
    "activation.sigmoid": ("sigmoid",),
    "activation.softmax": ("softmax",),
    "activation.softplus": ("softplus",),
    "activation.swish": ("swish",),
    "activation.tanh": ("tanh",),
    "array.as_strided": ("as_strided",),
    "array.broadcast": (
        "broadcast",
        "broadcast_to",
    ),
    "array.cast": ("cast",),
    "array.concat": ("concat",),
    "array.copy": ("copy",),
    "array.depth2space": ("depth2space",),
    "array.diagonal": ("diagonal",),
    "array.dstack": ("dstack",),
    "array.expand_dims": ("expand_dims",),
    "array.flatten": ("flatten",),
    "array.flip": ("flip",),
    "array.fliplr": ("fliplr",),
    "array.flipud": ("flipud",),
    "array.get_item": ("get_item",),
    "array.hstack": ("hstack",),
    "array.im2col": ("im2col",),
    "array.moveaxis": ("moveaxis",),
    "array.pad": ("pad",),
    "array.pad_sequence": ("pad_sequence",),
    "array.permutate": ("permutate",),
    "array.repeat": ("repeat",),
    "array.reshape": ("reshape",),
    "array.resize_images": ("resize_images",),
    "array.rollaxis": ("rollaxis",),
    "array.scatter_add": ("scatter_add",),
    "array.select_item": ("select_item",),
    "array.separate": ("separate",),
    "array.space2depth": ("space2depth",),
    "array.spatial_transformer_grid": ("spatial_transformer_grid",),
    "array.spatial_transformer_sampler": ("spatial_transformer_sampler",),
    "array.split_axis": ("split_axis",),
    "array.squeeze": ("squeeze",),
    "array.stack": ("stack",),
    "array.swapaxes": ("swapaxes",),
    "array.tile": ("tile",),
    "array.transpose": ("transpose",),
    "array.transpose_sequence": ("transpose_sequence",),
    "array.vstack": ("vstack",),
    "array.where": ("where",),
    "connection.bilinear": ("bilinear",),
    "connection.convolution_2d": ("convolution_2d",),
    "connection.convolution_nd": (
        "convolution_1d",
        "convolution_3d",
        "convolution_nd",
    ),
    "connection.deconvolution_2d": ("deconvolution_2d",),
    "connection.deconvolution_nd": (
        "deconvolution_1d",
        "deconvolution_3d",
        "deconvolution_nd",
    ),
    "connection.deformable_convolution_2d_sampler": ("deformable_convolution_2d_sampler",),
    "connection.depthwise_convolution_2d": ("depthwise_convolution_2d",),
    "connection.dilated_convolution_2d": ("dilated_convolution_2d",),
    "connection.embed_id": ("embed_id",),
    "connection.linear": ("linear",),
    "connection.local_convolution_2d": ("local_convolution_2d",),
    "connection.shift": ("shift",),
    "evaluation.accuracy": ("accuracy",),
    "evaluation.binary_accuracy": ("binary_accuracy",),
    "evaluation.classification_summary": (
        "classification_summary",
        "f1_score",
        "precision",
        "recall",
    ),
    "evaluation.r2_score": ("r2_score",),
    "loss.absolute_error": ("absolute_error",),
    "loss.black_out": ("black_out",),
    "loss.contrastive": ("contrastive",),
    "loss.crf1d": (
        "argmax_crf1d",
        "crf1d",
    ),
    "loss.cross_covariance": ("cross_covariance",),
    "loss.ctc": ("connectionist_temporal_classification",),
    "loss.decov": ("decov",),
    "loss.discriminative_loss": ("discriminative_margin_based_clustering_loss",),
    "loss.hinge": ("hinge",),
    "loss.huber_loss": ("huber_loss",),
    "loss.mean_absolute_error": ("mean_absolute_error",),
    "loss.mean_squared_error": ("mean_squared_error",),
    "loss.negative_sampling": ("negative_sampling",),
    "loss.sigmoid_cross_entropy": ("sigmoid_cross_entropy",),
    "loss.softmax_cross_entropy": ("softmax_cross_entropy",),
    "loss.squared_error": (
        "squared_difference",
        "squared_error",
    ),
    "loss.triplet": ("triplet",),
    "loss.vae": (
        "bernoulli_nll",
        "gaussian_kl_divergence",
        "gaussian_nll",
    ),
    "math.arctanh": ("arctanh",),
    "math.average": ("average",),
    "math.basic_math": ("absolute", "add"),
    "math.batch_l2_norm_squared": ("batch_l2_norm_squared",),
    "math.bias": ("bias",),
    "math.ceil": ("ceil",),
    "math.cholesky": ("cholesky",),
    "math.clip": ("clip",),
    "math.cumprod": ("cumprod",),
    "math.cumsum": ("cumsum",),
    "math.det": (
        "batch_det",
        "det",
    ),
    "math.einsum": ("einsum",),
    "math.erf": ("erf",),
    "math.erfc": ("erfc",),
    "math.exponential": (
        "exp",
        "log",
        "log10",
        "log2",
    ),
    "math.exponential_m1": ("expm1",),
    "math.fft": (
        "fft",
        "ifft",
    ),
    "math.fix": ("fix",),
    "math.floor": ("floor",),
    "math.fmod": ("fmod",),
    "math.hyperbolic": (
        "cosh",
        "sinh",
    ),
    "math.identity": ("identity",),
    "math.inv": (
        "batch_inv",
        "inv",
    ),
    "math.linear_interpolate": ("linear_interpolate",),
    "math.logarithm_1p": ("log1p",),
    "math.logsumexp": ("logsumexp",),
    "math.matmul": (
        "batch_matmul",
        "matmul",
    ),
    "math.maximum": ("maximum",),
    "math.minimum": ("minimum",),
    "math.minmax": (
        "argmax",
        "argmin",
        "max",
        "min",
    ),
    "math.prod": ("prod",),
    "math.scale": ("scale",),
    "math.sign": ("sign",),
    "math.sparse_matmul": ("sparse_matmul",),
    "math.sqrt": (
        "rsqrt",
        "sqrt",
    ),
    "math.square": ("square",),
    "math.sum": (
        "sum",
        "sum_to",
    ),
    "math.tensordot": ("tensordot",),
    "math.trigonometric": (
        "arccos",
        "arcsin",
        "arctan",
        "arctan2",
        "cos",
        "sin",
        "tan",
    ),
    "noise.dropout": ("dropout",),
    "noise.gaussian": ("gaussian",),
    "noise.gumbel_softmax": ("gumbel_softmax",),
    "noise.simplified_dropconnect": ("simplified_dropconnect",),
    "noise.zoneout": ("zoneout",),
    "normalization.batch_normalization": (
        "batch_normalization",
        "fixed_batch_normalization",
    ),
    "normalization.batch_renormalization": (
        "batch_renormalization",
        "fixed_batch_renormalization",
    ),
    "normalization.decorrelated_batch_normalization": (
        "decorrelated_batch_normalization",
        "fixed_decorrelated_batch_normalization",
    ),
    "normalization.group_normalization": ("group_normalization",),
    "normalization.l2_normalization": ("normalize",),
    "normalization.layer_normalization": ("layer_normalization",),
    "normalization.local_response_normalization": ("local_response_normalization",),
    "pooling.average_pooling_2d": ("average_pooling_2d",),
    "pooling.average_pooling_nd": (
        "average_pooling_1d",
        "average_pooling_3d",
        "average_pooling_nd",
    ),
    "pooling.max_pooling_nd": (
        "max_pooling_1d",
        "max_pooling_2d",
        "max_pooling_3d",
        "max_pooling_nd",
    ),
    "pooling.roi_average_align_2d": ("roi_average_align_2d",),
    "pooling.roi_average_pooling_2d": ("roi_average_pooling_2d",),
    "pooling.roi_max_align_2d": ("roi_max_align_2d",),
    "pooling.roi_max_pooling_2d": ("roi_max_pooling_2d",),
    "pooling.roi_pooling_2d": ("roi_pooling_2d",),
    "pooling.spatial_pyramid_pooling_2d": ("spatial_pyramid_pooling_2d",),
    "pooling.unpooling_2d": ("unpooling_2d",),
    "pooling.unpooling_nd": (
        "unpooling_1d",
        "unpooling_3d",
        "unpooling_nd",
    ),
    "pooling.upsampling_2d": ("upsampling_2d",),
    "rnn.lstm": ("lstm",),
    "rnn.n_step_gru": (
        "n_step_bigru",
        "n_step_gru",
    ),
    "rnn.n_step_lstm": (
        "n_step_bilstm",
        "n_step_lstm",
    ),
    "rnn.n_step_rnn": (
        "n_step_birnn",
        "n_step_rnn",
    ),
    "rnn.slstm": ("slstm",),
    "rnn.tree_lstm": ("tree_lstm",),
    "util.forget": ("forget",),
}


def _module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__path__ = []  # type: ignore[attr-defined]  # a package: submodules below it

    def missing(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")
        raise NotImplementedError(
            f"{name.replace('gradhub_compat.', '')}.{attr} is not supported by gradhub (the "
            f"module holds chainer's functions only, as gradhub_compat.chainer.functions); "
            f"see {PAGE}"
        )

    module.__getattr__ = missing  # type: ignore[method-assign]
    return module


def _enter_path(
    package: types.ModuleType, path: str, make: Callable[[str], types.ModuleType]
) -> types.ModuleType:
    """The module ``<package>.<path>`` (``path`` dotted): each module on the way that
    ``sys.modules`` lacks is made by ``make(full name)`` and entered there, and each becomes an
    attribute of its parent unless the parent holds a module of that name already."""
    parent = package
    full = package.__name__
    for part in path.split("."):
        full = f"{full}.{part}"
        module = sys.modules.get(full)
        if module is None:
            module = make(full)
            sys.modules[full] = module
        if not isinstance(vars(parent).get(part), types.ModuleType):
            setattr(parent, part, module)
        parent = module
    return parent


def install(functions: types.ModuleType) -> None:
    """Enter the modules of :data:`MODULES` below ``functions`` in ``sys.modules``."""
    for path, names in MODULES.items():
        parent = _enter_path(functions, path, _module)
        for n in names:
            setattr(parent, n, getattr(functions, n))

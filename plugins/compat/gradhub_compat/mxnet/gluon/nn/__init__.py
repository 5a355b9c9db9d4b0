"""Gluon's neural network layers (``mx.gluon.nn``), as mxnet 1.9.1: the basic layers, the
activations, the normalization layers, and the channels-first convolution and pooling
layers.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon import nn
    >>> nn.Dense(3, prefix="fc_").collect_params().keys()
    odict_keys(['fc_weight', 'fc_bias'])
"""

from __future__ import annotations

from ..block import Block, HybridBlock, SymbolBlock
from .activations import ELU, GELU, SELU, Activation, LeakyReLU, PReLU, Swish
from .basic_layers import (
    BatchNorm,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    HybridLambda,
    HybridSequential,
    Lambda,
    Sequential,
)
from .conv_layers import (
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalAvgPool3D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPool3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
)
from .normalization_layers import (
    BatchNormReLU,
    GroupNorm,
    InstanceNorm,
    LayerNorm,
    ReflectionPad2D,
)

__all__ = [
    "ELU",
    "GELU",
    "SELU",
    "Activation",
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "BatchNorm",
    "BatchNormReLU",
    "Block",
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "GlobalAvgPool1D",
    "GlobalAvgPool2D",
    "GlobalAvgPool3D",
    "GlobalMaxPool1D",
    "GlobalMaxPool2D",
    "GlobalMaxPool3D",
    "GroupNorm",
    "HybridBlock",
    "HybridLambda",
    "HybridSequential",
    "InstanceNorm",
    "Lambda",
    "LayerNorm",
    "LeakyReLU",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
    "PReLU",
    "ReflectionPad2D",
    "Sequential",
    "Swish",
    "SymbolBlock",
]

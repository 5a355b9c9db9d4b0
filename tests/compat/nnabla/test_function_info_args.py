"""``y.parent.info.args`` as nnabla shows them: sequences of integers as lists, the defaults of
the convolutions' ``pad``/``stride``/``dilation``/``output_padding`` and the poolings'
``stride``/``pad`` filled in. Expected values printed by nnabla 1.39 for the same calls.
"""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np


def _x() -> nn.Variable:
    return nn.Variable.from_numpy_array(np.ones((1, 2, 4, 4)))


def test_convolution_defaults_filled_in() -> None:
    w = nn.Variable.from_numpy_array(np.ones((3, 2, 3, 3)))
    args = F.convolution(_x(), w).parent.info.args
    # nnabla 1.39: {'base_axis': 1, 'pad': [0, 0], 'stride': [1, 1], 'dilation': [1, 1],
    # 'group': 1, 'channel_last': False}
    assert args["pad"] == [0, 0] and args["stride"] == [1, 1] and args["dilation"] == [1, 1]
    assert args["group"] == 1 and args["base_axis"] == 1 and args["channel_last"] is False
    given = F.convolution(_x(), w, pad=(1, 1)).parent.info.args
    assert given["pad"] == [1, 1] and isinstance(given["pad"], list)  # nnabla 1.39


def test_pf_convolution_3d_defaults() -> None:
    x = nn.Variable.from_numpy_array(np.ones((1, 2, 2, 2, 8)))
    args = PF.convolution(x, 4, (1, 1, 3)).parent.info.args
    assert args["pad"] == [0, 0, 0] and args["stride"] == [1, 1, 1]  # nnabla 1.39
    assert args["dilation"] == [1, 1, 1]  # nnabla 1.39


def test_deconvolution_defaults_filled_in() -> None:
    w = nn.Variable.from_numpy_array(np.ones((2, 3, 3, 3)))
    args = F.deconvolution(_x(), w).parent.info.args
    # nnabla 1.39: ... 'pad': [0, 0], 'stride': [1, 1], 'dilation': [1, 1], 'group': 1,
    # 'channel_last': False, 'output_padding': [0, 0]
    assert args["pad"] == [0, 0] and args["stride"] == [1, 1] and args["dilation"] == [1, 1]
    assert args["output_padding"] == [0, 0] and args["channel_last"] is False


def test_pooling_and_lists() -> None:
    args = F.max_pooling(_x(), (2, 2)).parent.info.args
    # nnabla 1.39: {'kernel': [2, 2], 'stride': [2, 2], 'ignore_border': True, 'pad': [0, 0],
    # 'channel_last': False}
    assert args["kernel"] == [2, 2] and args["stride"] == [2, 2] and args["pad"] == [0, 0]
    assert F.transpose(_x(), (0, 2, 1, 3)).parent.info.args["axes"] == [0, 2, 1, 3]  # nnabla 1.39
    assert F.reshape(_x(), (2, 16)).parent.info.args["shape"] == [2, 16]  # nnabla 1.39


def test_batch_normalization_axes_list() -> None:
    args = PF.batch_normalization(_x()).parent.info.args
    assert args["axes"] == [1] and isinstance(args["axes"], list)  # nnabla 1.39
    assert args["batch_stat"] is True  # nnabla 1.39

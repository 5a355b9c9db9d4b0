"""Steps that several test files run: the seed CNN with its gradient penalty (issue 25's W4)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gradhub as gh

#: the parameter shapes of :func:`cnn_penalty` for 3-channel 8x8 inputs and 5 classes
CNN_SHAPES = [(4, 3, 3, 3), (4,), (6, 4, 3, 3), (6,), (6 * 2 * 2, 5), (5,)]


def cnn_penalty(x: Any, t: Any, p: Sequence[gh.Variable]) -> gh.Variable:
    """The seed CNN's mean softmax cross entropy plus the norms of its parameter gradients
    (the gradients built with ``create_graph=True``, so the total is differentiable again)."""
    F = gh.functions
    h = F.max_pooling(F.relu(F.convolution(x, p[0], p[1], pad=(1, 1))), (2, 2))
    h = F.max_pooling(F.relu(F.convolution(h, p[2], p[3], pad=(1, 1))), (2, 2))
    loss = F.mean(F.softmax_cross_entropy(F.affine(h, p[4], p[5]), t))
    total = loss
    for g in gh.grad([loss], list(p), create_graph=True):
        total = total + F.norm(g)
    return total

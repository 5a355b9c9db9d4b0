"""The chainer layer's ``grad`` of an intermediate set ``need_grad = False`` keeps its rule."""

from __future__ import annotations

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest

X0 = np.array([1.0, 2.0])


def test_chainer_grad_of_a_stopped_intermediate_keeps_its_rule() -> None:
    chainer = pytest.importorskip("gradhub_compat.chainer")
    x = chainer.Variable(X0.copy())
    h = x * 3
    y = F.sum(h * x)
    h.need_grad = False
    # chainer differentiates every input whatever its requires_grad: dy/dh = x
    (gh_,) = chainer.grad([y], [h])
    np.testing.assert_allclose(gh_.d, X0)
    assert h.need_grad is False and h.creator.need_grad is False
    assert h.creator.rule is not None  # the call's undo kept the recorded rule
    h.need_grad = True
    np.testing.assert_allclose(gh.grad([y], [x])[0].d, [6.0, 12.0])

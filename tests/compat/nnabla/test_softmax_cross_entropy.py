"""``F.softmax_cross_entropy`` of the nnabla layer: a negative label gives a loss of 0 and no
gradient, as nnabla 1.39 (values recorded from nnabla 1.39.0, 2026-11-25)."""

from __future__ import annotations

from collections.abc import Iterator

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest

X = np.array([[1.0, 2.0, 3.0], [1.0, 0.0, -1.0], [0.5, 0.2, 0.1]])
# nnabla 1.39 with labels [[2], [-1], [0]] (also [[2], [-2], [0]] and float labels)
LOSS = [0.40760594606399536, 0.0, 0.8800989389419556]
GRAD = [
    [0.09003058075904846, 0.24472849071025848, -0.33475905656814575],
    [0.0, 0.0, 0.0],
    [-0.5852581262588501, 0.3072483241558075, 0.2780098021030426],
]


@pytest.mark.parametrize("labels", [[[2], [-1], [0]], [[2], [-2], [0]], [[2.0], [-1.0], [0.0]]])
def test_negative_labels_are_skipped_as_nnabla(labels: list[list[float]]) -> None:
    x = nn.Variable.from_numpy_array(X, need_grad=True)
    t = nn.Variable.from_numpy_array(np.array(labels))
    y = F.softmax_cross_entropy(x, t)
    np.testing.assert_allclose(y.d.ravel(), LOSS, rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(x.g, GRAD, rtol=1e-5, atol=1e-7)


def test_the_mask_follows_new_labels_on_forward() -> None:
    x = nn.Variable.from_numpy_array(X, need_grad=True)
    t = nn.Variable.from_numpy_array(np.array([[2], [2], [0]]))
    y = F.softmax_cross_entropy(x, t)
    assert y.d[1, 0] > 1.0
    t.d = np.array([[2], [-1], [0]])
    y.forward()
    np.testing.assert_allclose(y.d.ravel(), LOSS, rtol=1e-6)
    # the second derivative of the kept rows is the softmax Jacobian's (masked row: zero)
    (gx,) = nn.grad([F.sum(y)], [x])
    (ggx,) = nn.grad([F.sum(gx * gx)], [x])
    assert np.all(ggx.d[1] == 0) and np.any(ggx.d[0] != 0)


def test_labels_past_the_classes_still_raise() -> None:
    x = nn.Variable.from_numpy_array(X)
    t = nn.Variable.from_numpy_array(np.array([[2], [5], [0]]))
    with pytest.raises(ValueError, match=r"labels outside \[0, 3\)"):
        F.softmax_cross_entropy(x, t)


def test_without_negative_labels_it_is_the_library_function() -> None:
    import gradhub.functions as GF

    x = nn.Variable.from_numpy_array(X, need_grad=True)
    t = nn.Variable.from_numpy_array(np.array([[2], [1], [0]]))
    y = F.softmax_cross_entropy(x, t)
    assert y.parent.name == "SoftmaxCrossEntropy"  # one node, nnabla's name
    ref = GF.softmax_cross_entropy(x, t)
    np.testing.assert_array_equal(y.d, ref.d)
    (g,) = nn.grad([F.sum(y)], [x])
    (gref,) = nn.grad([F.sum(ref)], [x])
    np.testing.assert_array_equal(g.d, gref.d)


@pytest.fixture
def restore_sce_rule() -> Iterator[None]:
    from gradhub.registry import REGISTRY

    fdef = REGISTRY.get("SoftmaxCrossEntropy")
    rule, overrides, audit = fdef.rule, list(fdef.overrides), dict(fdef.audit)
    yield
    fdef.rule, fdef.overrides, fdef.audit = rule, overrides, audit


def test_a_registered_rule_is_used_with_the_mask(restore_sce_rule: None) -> None:
    import gradhub_compat.nnabla.backward_functions as B

    def doubled(grad_outputs, inputs, input_shapes, outputs, output_shapes, axis=None):  # type: ignore[no-untyped-def]
        g = grad_outputs[0]
        p = F.softmax(inputs[0], axis=1)
        onehot = F.one_hot(inputs[1], (3,))
        return [2.0 * F.broadcast(g, p.shape) * (p - onehot), None]

    B.register("SoftmaxCrossEntropy", doubled)
    x = nn.Variable.from_numpy_array(X, need_grad=True)
    t = nn.Variable.from_numpy_array(np.array([[2], [-1], [0]]))
    F.softmax_cross_entropy(x, t).backward()  # first order: the array path
    np.testing.assert_allclose(x.g, 2 * np.array(GRAD), rtol=1e-5, atol=1e-7)
    (g,) = nn.grad([F.sum(F.softmax_cross_entropy(x, t))], [x])  # the graph path
    np.testing.assert_allclose(g.d, 2 * np.array(GRAD), rtol=1e-5, atol=1e-7)


class _DeviceLabels(np.ndarray):
    """Labels that refuse to be read on the host, as a GPU array inside a CUDA-graph recording."""

    def any(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("a label array was read on the host")

    def __bool__(self) -> bool:
        raise AssertionError("a label array was read on the host")


@pytest.mark.parametrize("labels", [[[2], [-1], [0]], [[2], [1], [0]]])
def test_the_mask_never_reads_the_labels_on_the_host(labels: list[list[int]]) -> None:
    """The layer's kernel and fast rule mask negative labels without asking the host whether
    there are any (``neg.any()`` was a synchronisation on a GPU, refused while recording a CUDA
    graph); without negative labels they give the registered function's loss and gradient bit
    for bit."""
    from gradhub.ops import fdef
    from gradhub_compat.nnabla import _layer_functions as L

    x = X.astype(np.float32)
    t = np.array(labels).view(_DeviceLabels)
    loss = L._masked_sce_kernel(np, x, t)
    gy = [np.ones(loss.shape, np.float32)]
    gx = L._masked_sce_fast(np, gy, [x, t], [x.shape, t.shape], [loss], [loss.shape])[0]
    if min(min(labels)) < 0:
        np.testing.assert_allclose(loss.ravel(), LOSS, rtol=1e-6)
        np.testing.assert_allclose(gx, GRAD, rtol=1e-5, atol=1e-7)
    else:
        native = fdef("SoftmaxCrossEntropy")
        t0 = np.asarray(t).view(np.ndarray)
        np.testing.assert_array_equal(loss, native.forward(np, x, t0))
        want = native.rule.fast(np, gy, [x, t0], [x.shape, t0.shape], [loss], [loss.shape])[0]
        np.testing.assert_array_equal(gx, want)

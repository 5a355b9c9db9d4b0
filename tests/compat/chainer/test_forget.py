"""chainer's ``F.forget`` on gradhub.checkpoint: values, gradients (of the inputs and of a
link's parameters read inside ``func``) and errors as chainer 7.8.1; the graph keeps only the
inputs; the gradients are differentiable again (chainer raises)."""

from __future__ import annotations

from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub import engine
from gradhub_compat import chainer


def _setup() -> tuple[chainer.Variable, Any, np.ndarray]:
    rng = np.random.RandomState(0)
    x = chainer.Variable(rng.uniform(-1, 1, (2, 3)).astype(np.float32))
    link = L.Linear(
        3,
        4,
        initialW=rng.uniform(-1, 1, (4, 3)).astype(np.float32),
        initial_bias=rng.uniform(-1, 1, 4).astype(np.float32),
    )
    b = rng.uniform(-1, 1, (2, 4)).astype(np.float32)
    return x, link, b


def test_forget_with_a_link_matches_chainer() -> None:
    x, link, b = _setup()
    seen = []

    def f(a: Any, c: Any) -> Any:
        seen.append(chainer.config.in_recomputing)
        h = F.tanh(link(a))
        return h * c, F.sum(h)

    y, s = F.forget(f, x, b)
    # chainer 7.8.1
    want_y = [
        [-0.06087729334831238, 0.4225740134716034, -0.6269559264183044, 0.06628512591123581],
        [-0.42929941415786743, 0.5065324902534485, 0.023127956315875053, -0.1192568764090538],
    ]
    np.testing.assert_allclose(y.array, want_y, rtol=1e-6)
    # the graph: one node, holding no intermediate of f
    assert [n.fdef.name for n in engine.collect_graph([y])] == ["Checkpoint"]
    link.cleargrads()
    (F.sum(y * y) + s).backward()
    # chainer 7.8.1
    want_x = [
        [-0.9176306128501892, 0.27240559458732605, 0.49287503957748413],
        [-0.7693877816200256, 1.6579921245574951, 0.7633219957351685],
    ]
    want_w = [
        [0.12932483851909637, 0.006145016755908728, 0.37798354029655457],
        [0.17756406962871552, 0.07844960689544678, 0.5058495402336121],
        [0.12696883082389832, 0.1641494482755661, 0.34145593643188477],
        [0.14337843656539917, 0.33997875452041626, 0.3566010594367981],
    ]
    want_b = [1.407483696937561, 1.9222075939178467, 1.358628273010254, 1.511518955230713]
    np.testing.assert_allclose(x.grad, want_x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(link.W.grad, want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(link.b.grad, want_b, rtol=1e-5, atol=1e-6)
    assert seen == [False, True]  # chainer 7.8.1: config.in_recomputing in the recomputation


def test_forget_outputs_and_array_inputs_as_chainer() -> None:
    x = chainer.Variable(np.ones(2, np.float32))
    one = F.forget(lambda a: (a * 2,), x)  # chainer 7.8.1: a tuple of one gives the Variable
    assert isinstance(one, chainer.Variable)
    z = F.forget(lambda a: a * 2, np.ones(2, np.float32))
    assert isinstance(z, chainer.Variable) and z.requires_grad and z.creator is not None


def test_forget_errors_as_chainer() -> None:
    x = chainer.Variable(np.ones(2, np.float32))
    # chainer 7.8.1's messages
    with pytest.raises(
        RuntimeError,
        match=r"A tuple of Variables or a Variable are expected, but <class 'float'> is returned",
    ):
        F.forget(lambda a: 1.0, x)
    with pytest.raises(
        RuntimeError, match=r"2nd element of a returned tuple is not Variable, but is <class 'int'>"
    ):
        F.forget(lambda a: (a, 2), x)
    with pytest.raises(TypeError, match="func must be callable"):
        F.forget(3, x)  # type: ignore[arg-type]


def test_forget_gradients_are_differentiable_again() -> None:
    x = chainer.Variable(np.array([0.5, -1.0, 2.0]))
    y = F.forget(lambda a: a * a * a, x)
    (gx,) = chainer.grad([F.sum(y)], [x], enable_double_backprop=True)
    assert gx is not None
    np.testing.assert_allclose(gx.array, 3 * x.array**2, rtol=1e-15)
    (ggx,) = chainer.grad([F.sum(gx)], [x])  # chainer 7.8.1 raises RuntimeError here
    assert ggx is not None
    np.testing.assert_allclose(ggx.array, 6 * x.array, rtol=1e-15)


def test_forget_with_dropout_recomputes_the_same_mask() -> None:
    x = chainer.Variable(np.linspace(-1.0, 1.0, 40).reshape(8, 5))
    y = F.forget(lambda a: F.dropout(a * 3.0, ratio=0.5), x)
    F.sum(y).backward()
    np.testing.assert_array_equal(x.grad, (y.array != 0) * 6.0)


@pytest.mark.parametrize("finetune", [False, True])
def test_batch_normalization_inside_forget_updates_its_statistics_once(finetune: bool) -> None:
    # regression: the recomputation in the backward pass updated avg_mean/avg_var (and N) a
    # second time; chainer 7.8.1's link skips the update while config.in_recomputing
    import gradhub_compat.chainer.links as L

    x = np.linspace(-2.0, 3.0, 24, dtype=np.float32).reshape(6, 4)
    plain, forgot = L.BatchNormalization(4), L.BatchNormalization(4)
    F.sum(plain(chainer.Variable(x), finetune=finetune) ** 2).backward()
    xv = chainer.Variable(x)
    y = F.forget(lambda a: forgot(a, finetune=finetune), xv)
    F.sum(y**2).backward()
    np.testing.assert_array_equal(forgot.avg_mean, plain.avg_mean)
    np.testing.assert_array_equal(forgot.avg_var, plain.avg_var)
    assert forgot.N == plain.N
    assert not np.array_equal(plain.avg_mean, np.zeros(4, np.float32))  # one update happened

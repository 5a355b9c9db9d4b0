"""The loss links of chainer's word2vec example: ``L.NegativeSampling`` with its
``chainer.utils.WalkerAlias`` sampler and ``L.BinaryHierarchicalSoftmax`` with
``create_huffman_tree``. Values recorded from chainer 7.8.1 after the same numpy seeds."""

from __future__ import annotations

import collections

import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer.utils import WalkerAlias
from gradhub_compat.chainer.utils.type_check import InvalidType


def test_walker_alias_table_and_draws() -> None:
    np.random.seed(0)
    # the probabilities rounded from float64 powers: numpy's float32 power differs by an ulp
    # between CPUs (its AVX-512 kernel), and the table follows its input
    counts = np.array([5, 1, 7, 3, 0, 2, 9, 4], np.float64)
    w = WalkerAlias((counts**0.75).astype(np.float32))
    # chainer 7.8.1 (its table is computed in float64 before the float32 store)
    assert w.threshold.dtype == np.float32 and w.values.dtype == np.int32
    assert w.threshold.tolist() == [
        0.0,
        0.3877265453338623,
        0.6520757079124451,
        0.883825421333313,
        0.0966562032699585,
        0.6841684579849243,
        0.3011450171470642,
        0.9999995827674866,
    ]
    assert w.values.tolist() == [4, 7, 1, 0, 5, 2, 3, 2, 7, 2, 0, 6, 2, 6, 6, 0]
    np.random.seed(1)
    assert w.sample((3, 4)).tolist() == [[3, 6, 7, 5], [1, 7, 0, 2], [3, 2, 3, 0]]


def test_negative_sampling_link() -> None:
    np.random.seed(0)
    ns = L.NegativeSampling(3, [5, 1, 7, 3, 2], 2)
    assert ns.W.shape == (5, 3) and (ns.W.array == 0).all()
    ns.W.array[...] = np.random.rand(5, 3)
    x = chainer.Variable(np.random.rand(4, 3).astype(np.float32))
    t = np.array([0, 2, -1, 4], np.int32)
    ns.cleargrads()
    loss, samples = ns(x, t, return_samples=True)
    loss.backward()
    # chainer 7.8.1
    np.testing.assert_allclose(float(loss.array), 8.991300582885742, rtol=1e-6)
    assert samples.tolist() == [[0, 3, 3], [2, 2, 3], [-1, 1, 0], [4, 0, 2]]
    np.testing.assert_allclose(
        x.grad,
        [
            [0.27651721239089966, 0.7225084900856018, 0.4373340606689453],
            [0.6523662805557251, 1.3379043340682983, 1.178462028503418],
            [0.0, 0.0, 0.0],
            [0.46135425567626953, 0.7575780153274536, 1.0230777263641357],
        ],
        rtol=1e-5,
        atol=1e-7,
    )
    np.testing.assert_allclose(
        ns.W.grad,
        [
            [0.045015379786491394, 0.40715155005455017, -0.20904648303985596],
            [0.0, 0.0, 0.0],
            [0.6827330589294434, 1.1092997789382935, 0.854939341545105],
            [0.7448043823242188, 0.736991286277771, 1.833330512046814],
            [-0.04004406929016113, -0.21665750443935394, -0.048534996807575226],
        ],
        rtol=1e-5,
        atol=1e-7,
    )
    with pytest.raises(TypeError, match="unexpected keyword"):
        ns(x, t, foo=1)


def test_huffman_tree_is_chainers() -> None:
    tree = L.BinaryHierarchicalSoftmax.create_huffman_tree({0: 8, 1: 5, 2: 6, 3: 4})
    assert tree == ((3, 1), (2, 0))  # chainer 7.8.1 (its docstring's example too)
    words = np.random.RandomState(0).randint(0, 12, 60)
    tree = L.BinaryHierarchicalSoftmax.create_huffman_tree(collections.Counter(words))
    # chainer 7.8.1
    assert tree == (((5, 8), (0, (6, (11, 10)))), ((7, (2, 4)), ((1, 9), 3)))
    with pytest.raises(ValueError, match="Empty vocabulary"):
        L.BinaryHierarchicalSoftmax.create_huffman_tree({})


def test_binary_hierarchical_softmax() -> None:
    rng = np.random.RandomState(0)
    tree = L.BinaryHierarchicalSoftmax.create_huffman_tree(
        collections.Counter(rng.randint(0, 12, 60))
    )
    np.random.seed(0)
    hsm = L.BinaryHierarchicalSoftmax(3, tree)
    assert hsm.W.shape == (11, 3)
    np.testing.assert_allclose(hsm.W.array.sum(), 4.857099, rtol=1e-6)  # chainer 7.8.1
    x = chainer.Variable(rng.randn(5, 3).astype(np.float32))
    t = np.array([0, 3, 11, 3, 7], np.int32)
    loss = hsm(x, t)
    hsm.cleargrads()
    loss.backward()
    # chainer 7.8.1
    assert loss.dtype == np.float32 and loss.shape == ()
    np.testing.assert_allclose(float(loss.array), 14.453256607055664, rtol=1e-6)
    np.testing.assert_allclose(
        x.grad,
        [
            [0.10999699681997299, -0.5989999771118164, -0.013314999639987946],
            [1.242055058479309, 0.9419299960136414, 0.7941280007362366],
            [0.47177401185035706, 1.0340280532836914, -0.9189450144767761],
            [0.8216390013694763, 0.4662199914455414, 0.29941099882125854],
            [-0.5062509775161743, -0.3174470067024231, -0.7215620279312134],
        ],
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        hsm.W.grad.sum(0), [3.2416229248046875, 4.546286106109619, -2.2220170497894287], rtol=1e-5
    )
    with pytest.raises(InvalidType):
        hsm(x, t.astype(np.int64))
    with pytest.raises(ValueError, match="two child nodes"):
        L.BinaryHierarchicalSoftmax(2, ((0, 1, 2), 3))

"""``chainer.datasets.get_cross_validation_datasets`` and ``..._random`` in gradhub's chainer
layer (before: refused with NotImplementedError): the splits of chainer 7.8.1, recorded from it."""

from __future__ import annotations

import pytest
from gradhub_compat import chainer

datasets = chainer.datasets


def _lists(cvs: list) -> list:
    return [(list(tr), list(te)) for tr, te in cvs]


@pytest.mark.parametrize(
    ("n", "k", "expected"),
    [
        # chainer 7.8.1
        (6, 3, [([0, 1, 2, 3], [4, 5]), ([4, 5, 0, 1], [2, 3]), ([2, 3, 4, 5], [0, 1])]),
        (
            7,
            3,
            [([0, 1, 2, 3], [4, 5, 6]), ([4, 5, 6, 0, 1], [2, 3]), ([2, 3, 4, 5, 6], [0, 1])],
        ),
        (5, 2, [([0, 1], [2, 3, 4]), ([2, 3, 4], [0, 1])]),
        (
            10,
            4,
            [
                ([0, 1, 2, 3, 4, 5, 6], [7, 8, 9]),
                ([7, 8, 9, 0, 1, 2, 3, 4], [5, 6]),
                ([5, 6, 7, 8, 9, 0, 1], [2, 3, 4]),
                ([2, 3, 4, 5, 6, 7, 8, 9], [0, 1]),
            ],
        ),
    ],
)
def test_cross_validation_splits(n: int, k: int, expected: list) -> None:
    assert _lists(datasets.get_cross_validation_datasets(list(range(n)), k)) == expected


def test_cross_validation_with_order() -> None:
    order = [5, 3, 1, 0, 2, 4]
    cvs = datasets.get_cross_validation_datasets(list(range(6)), 3, order=order)
    # chainer 7.8.1
    assert _lists(cvs) == [([5, 3, 1, 0], [2, 4]), ([2, 4, 5, 3], [1, 0]), ([1, 0, 2, 4], [5, 3])]
    assert order == [5, 3, 1, 0, 2, 4]  # copied, not rotated in place


def test_cross_validation_random_seed() -> None:
    cvs = datasets.get_cross_validation_datasets_random(list(range(7)), 3, seed=5)
    # chainer 7.8.1 (numpy.random.RandomState(5).permutation(7))
    assert _lists(cvs) == [
        ([6, 2, 4, 1], [0, 5, 3]),
        ([0, 5, 3, 6, 2], [4, 1]),
        ([4, 1, 0, 5, 3], [6, 2]),
    ]


def test_cross_validation_deprecated_n_fold() -> None:
    with pytest.warns(DeprecationWarning, match="n_folds"):
        cvs = datasets.get_cross_validation_datasets([1, 2, 3, 4], n_fold=2)
    assert _lists(cvs) == [([1, 2], [3, 4]), ([3, 4], [1, 2])]

"""chainer's ``chainer.datasets`` and ``chainer.dataset`` in gradhub's chainer layer: the
dataset wrappers, the random splits (chainer 7.8.1's subsets for the same seed),
``concat_examples`` (chainer's docstring examples and dtypes), ``DatasetMixin``, ``converter``
and the cache-only downloaders."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import dataset, datasets


def test_tuple_and_dict_datasets() -> None:
    a, b = np.arange(4), np.arange(4) * 10
    ds = datasets.TupleDataset(a, b)
    assert len(ds) == 4 and ds[1] == (1, 10)
    assert ds[1:3] == [(1, 10), (2, 20)]
    with pytest.raises(ValueError, match="index 1 has a wrong length"):
        datasets.TupleDataset(a, b[:3])
    with pytest.raises(ValueError, match="no datasets"):
        datasets.TupleDataset()
    dd = datasets.DictDataset(x=a, y=b)
    assert dd[2] == {"x": 2, "y": 20} and dd[:2] == [{"x": 0, "y": 0}, {"x": 1, "y": 10}]
    with pytest.raises(ValueError, match='conflicts at "y"'):
        datasets.DictDataset(x=a, y=b[:2])


def test_sub_datasets_and_splits() -> None:
    base = list(range(10))
    first, second = datasets.split_dataset(base, 4)
    assert list(first) == [0, 1, 2, 3] and second[-1] == 9 and second[0:2] == [4, 5]
    with pytest.raises(IndexError):
        first[4]
    with pytest.raises(IndexError):
        first[-5]
    # chainer 7.8.1
    a, b = datasets.split_dataset_random(base, 4, seed=5)
    assert list(a) == [9, 5, 2, 4] and list(b) == [7, 1, 0, 8, 6, 3]
    parts = datasets.split_dataset_n_random(list(range(7)), 3, seed=1)
    assert [list(p) for p in parts] == [[6, 2], [1, 0], [4, 3]]
    assert [list(p) for p in datasets.split_dataset_n(list(range(7)), 3)] == [
        [0, 1],
        [2, 3],
        [4, 5],
    ]
    with pytest.raises(TypeError, match="split_at must be int"):
        datasets.split_dataset(base, 2.5)
    with pytest.raises(ValueError, match="exceeds"):
        datasets.split_dataset(base, 11)
    with pytest.raises(ValueError, match="overruns"):
        datasets.SubDataset(base, 0, 11)
    with pytest.raises(ValueError, match="same length"):
        datasets.SubDataset(base, 0, 2, order=[0, 1])


def test_transform_and_concatenated() -> None:
    t = datasets.TransformDataset([1, 2, 3], lambda v: v * 100)
    assert len(t) == 3 and t[2] == 300 and t[[0, 1]] == [100, 200]
    c = datasets.ConcatenatedDataset([1, 2], [3])
    assert len(c) == 3 and c[2] == 3 and c[1:3] == [2, 3]  # chainer 7.8.1
    with pytest.raises(IndexError):
        c[3]
    with pytest.raises(IndexError):
        c[-1]


def test_dataset_mixin() -> None:
    class Squares(dataset.DatasetMixin):
        def __len__(self) -> int:
            return 5

        def get_example(self, i: int) -> int:
            return int(i) ** 2

    s = Squares()
    assert s[3] == 9 and s[1:4] == [1, 4, 9] and s[::-2] == [16, 4, 0]
    assert s[np.array([0, 4])] == [0, 16]
    with pytest.raises(NotImplementedError):
        dataset.DatasetMixin().get_example(0)


def test_concat_examples_chainers_docstring_cases() -> None:
    x = [([1, 2], 1), ([3, 4], 2), ([5, 6], 3)]
    got = dataset.concat_examples(x)
    np.testing.assert_array_equal(got[0], [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(got[1], [1, 2, 3])
    y = [(np.array([1, 2]), 0), (np.array([3]), 1), (np.array([]), 2)]
    got = dataset.concat_examples(y, padding=100)
    np.testing.assert_array_equal(got[0], [[1, 2], [3, 100], [100, 100]])
    z = [
        (np.array([1, 2]), np.array([0])),
        (np.array([3]), np.array([])),
        (np.array([]), np.array([2])),
    ]
    got = dataset.concat_examples(z, padding=(100, 200))
    np.testing.assert_array_equal(got[0], [[1, 2], [3, 100], [100, 100]])
    np.testing.assert_array_equal(got[1], [[0], [200], [2]])
    w = [{"feature": np.array([1, 2]), "label": 0}, {"feature": np.array([3, 4]), "label": 1}]
    got = dataset.concat_examples(w)
    assert sorted(got) == ["feature", "label"]
    np.testing.assert_array_equal(got["feature"], [[1, 2], [3, 4]])


def test_concat_examples_dtypes_devices_and_errors() -> None:
    f = dataset.concat_examples([np.float32(1), np.float32(2)])
    assert f.dtype == np.float32  # chainer 7.8.1
    np.testing.assert_array_equal(dataset.concat_examples([1.5, 2]), [1.5, 2.0])
    arrays = [np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)]
    out = dataset.concat_examples(arrays, "@numpy")
    assert out.shape == (2, 2, 3) and out.dtype == np.float32
    assert dataset.concat_examples(arrays, -1).shape == (2, 2, 3)
    with pytest.raises(ValueError, match="batch is empty"):
        dataset.concat_examples([])
    with pytest.raises(ValueError):  # shapes differ without padding
        dataset.concat_examples([np.ones(2), np.ones(3)])
    with pytest.raises(TypeError, match="invalid device"):
        dataset.concat_examples(arrays, object())
    assert dataset.to_device(None, arrays[0]) is arrays[0]


def test_converter_decorator_passes_a_device() -> None:
    seen = []

    @chainer.dataset.converter()
    def conv(batch: list, device: object) -> list:
        seen.append(device)
        return batch

    assert isinstance(conv, dataset.Converter)
    conv([1], -1)
    conv([1], device="@numpy")
    conv([1], None)
    # chainer 7.8.1: chainer's device objects (name '@numpy', with send), or None
    assert [getattr(d, "name", d) for d in seen] == ["@numpy", "@numpy", None]
    assert seen[0].send(np.ones(1)).shape == (1,) and seen[0].kind == "cpu"
    with pytest.raises(TypeError, match="Can only wrap a callable"):
        chainer.dataset.converter()(3)


def _write_mnist_cache(root: Path, directory: str) -> None:
    d = root / directory
    d.mkdir(parents=True)
    x = (np.arange(3 * 784) % 256).astype(np.uint8).reshape(3, 784)
    np.savez_compressed(d / "train.npz", x=x, y=np.array([1, 2, 3], np.uint8))
    np.savez_compressed(d / "test.npz", x=x[:1], y=np.array([7], np.uint8))


def test_get_mnist_reads_chainers_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    with pytest.raises(NotImplementedError, match=r"downloads nothing.*migration-chainer"):
        datasets.get_mnist()
    _write_mnist_cache(tmp_path, os.path.join("pfnet", "chainer", "mnist"))
    train, test = datasets.get_mnist()
    assert len(train) == 3 and len(test) == 1
    x0, y0 = train[0]
    assert x0.dtype == np.float32 and x0.shape == (784,) and y0 == 1 and y0.dtype == np.int32
    # chainer's preprocessing: images.astype(dtype) * (scale / 255)
    np.testing.assert_allclose(x0[:3], np.array([0, 1, 2], np.float32) / 255, rtol=1e-6)
    images = datasets.get_mnist(withlabel=False, ndim=3, scale=2.0)[0]
    assert images.shape == (3, 1, 28, 28)
    np.testing.assert_allclose(images[0, 0, 9, 3], 2.0, rtol=1e-6)
    with pytest.raises(ValueError, match="invalid ndim"):
        datasets.get_mnist(ndim=4)
    _write_mnist_cache(tmp_path, os.path.join("pfnet", "chainer", "fashion-mnist"))
    assert len(datasets.get_fashion_mnist()[0]) == 3


def test_get_cifar_reads_chainers_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    with pytest.raises(NotImplementedError, match=r"get_cifar10.*downloads nothing"):
        datasets.get_cifar10()
    d = tmp_path / "pfnet" / "chainer" / "cifar"
    d.mkdir(parents=True)
    x = (np.arange(2 * 3072) % 256).astype(np.uint8).reshape(2, 3072)
    y = np.array([3, 9], np.uint8)
    np.savez_compressed(d / "cifar-10.npz", train_x=x, train_y=y, test_x=x[:1], test_y=y[:1])
    train, test = datasets.get_cifar10()
    img, label = train[1]
    assert img.shape == (3, 32, 32) and img.dtype == np.float32 and label == 9
    assert label.dtype == np.int32 and len(test) == 1
    # chainer's preprocessing: reshape(-1, 3, 32, 32), astype(dtype), * scale / 255
    np.testing.assert_allclose(img.reshape(-1), x[1].astype(np.float32) / 255, rtol=1e-6)
    flat = datasets.get_cifar10(withlabel=False, ndim=1, scale=2.0, dtype=np.float64)[0]
    assert flat.shape == (2, 3072) and flat.dtype == np.float64
    np.testing.assert_allclose(flat[0, 255], 2.0)
    with pytest.raises(ValueError, match="invalid ndim"):
        datasets.get_cifar10(ndim=2)
    with pytest.raises(NotImplementedError, match="cifar-100"):
        datasets.get_cifar100()


def test_other_downloaders_are_refused() -> None:
    for name in ("get_svhn", "get_kuzushiji_mnist", "ImageDataset"):
        with pytest.raises(NotImplementedError, match="migration-chainer"):
            getattr(datasets, name)
    with pytest.raises(NotImplementedError, match="migration-chainer"):
        dataset.tabular  # noqa: B018

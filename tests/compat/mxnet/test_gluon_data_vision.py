"""gluon.data.vision: MNIST / FashionMNIST / CIFAR10 / CIFAR100 read from files in mxnet's
formats written here (expected values from the format, computed with numpy), the refusal to
download, and the transforms Compose, ToTensor, Normalize, Cast (mxnet 1.9.1's outputs)."""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import gluon
from gradhub_compat.mxnet.base import MXNetError
from gradhub_compat.mxnet.gluon.data import vision
from gradhub_compat.mxnet.gluon.data.vision import transforms as T


def _write_mnist(root: Path, part: str, images: np.ndarray, labels: np.ndarray) -> None:
    with gzip.open(root / f"{part}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 2051, len(images), 28, 28) + images.tobytes())
    with gzip.open(root / f"{part}-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 2049, len(labels)) + labels.tobytes())


@pytest.mark.parametrize("cls", [vision.MNIST, vision.FashionMNIST])
def test_mnist_files(tmp_path: Path, cls: type) -> None:
    rng = np.random.RandomState(0)
    imgs = rng.randint(0, 256, size=(3, 28, 28), dtype=np.uint8)
    labels = np.array([4, 0, 9], np.uint8)
    _write_mnist(tmp_path, "train", imgs, labels)
    _write_mnist(tmp_path, "t10k", imgs[:2][::-1].copy(), labels[:2][::-1].copy())
    ds = cls(root=str(tmp_path))
    assert len(ds) == 3
    img, label = ds[2]
    assert isinstance(img, mx.nd.NDArray) and img.shape == (28, 28, 1) and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy()[:, :, 0], imgs[2])
    assert isinstance(label, np.int32) and label == 9
    test = cls(root=str(tmp_path), train=False)
    assert len(test) == 2 and test[0][1] == 0
    np.testing.assert_array_equal(test[0][0].asnumpy()[:, :, 0], imgs[1])
    scaled = cls(root=str(tmp_path), transform=lambda d, y: (d.astype("float32") / 255, y + 1))
    x, y = scaled[0]
    np.testing.assert_allclose(x.asnumpy()[:, :, 0], imgs[0] / 255.0, rtol=1e-6)
    assert y == 5
    batch = next(iter(gluon.data.DataLoader(ds, batch_size=2)))
    assert batch[0].shape == (2, 28, 28, 1) and batch[1].dtype == np.int32


def test_mnist_missing_refuses_download(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError, match=r"MNIST: .*train-labels-idx1-ubyte.gz .*"):
        vision.MNIST(root=str(tmp_path))
    with gzip.open(tmp_path / "train-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 2049, 2) + bytes([1, 2]))
    with gzip.open(tmp_path / "train-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 2051, 2, 28, 28) + bytes(10))
    with pytest.raises(ValueError, match="not 2 images of 28 x 28"):
        vision.MNIST(root=str(tmp_path))


def _cifar_records(n: int, label_bytes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 100, size=(n, label_bytes)).astype(np.uint8)
    pixels = rng.randint(0, 256, size=(n, 3072)).astype(np.uint8)
    return np.concatenate([labels, pixels], axis=1), pixels


def test_cifar10_files(tmp_path: Path) -> None:
    records = {}
    for i, name in enumerate([f"data_batch_{k}.bin" for k in range(1, 6)] + ["test_batch.bin"]):
        rec, _ = _cifar_records(2, 1, i)
        (tmp_path / name).write_bytes(rec.tobytes())
        records[name] = rec
    ds = vision.CIFAR10(root=str(tmp_path))
    assert len(ds) == 10
    img, label = ds[3]  # the second record of data_batch_2
    rec = records["data_batch_2.bin"][1]
    assert img.shape == (32, 32, 3) and img.dtype == np.uint8
    # channel-major pixels to (height, width, channel)
    np.testing.assert_array_equal(img.asnumpy(), rec[1:].reshape(3, 32, 32).transpose(1, 2, 0))
    assert isinstance(label, np.int32) and label == rec[0]
    test = vision.CIFAR10(root=str(tmp_path), train=False)
    assert len(test) == 2 and test[1][1] == records["test_batch.bin"][1][0]
    os.remove(tmp_path / "data_batch_5.bin")
    with pytest.raises(NotImplementedError, match=r"data_batch_5\.bin"):
        vision.CIFAR10(root=str(tmp_path), train=False)


def test_cifar100_files(tmp_path: Path) -> None:
    train, _ = _cifar_records(3, 2, 0)
    test, _ = _cifar_records(2, 2, 1)
    (tmp_path / "train.bin").write_bytes(train.tobytes())
    (tmp_path / "test.bin").write_bytes(test.tobytes())
    coarse = vision.CIFAR100(root=str(tmp_path))
    fine = vision.CIFAR100(root=str(tmp_path), fine_label=True)
    assert [int(coarse[i][1]) for i in range(3)] == train[:, 0].tolist()
    assert [int(fine[i][1]) for i in range(3)] == train[:, 1].tolist()
    np.testing.assert_array_equal(
        fine[2][0].asnumpy(), train[2, 2:].reshape(3, 32, 32).transpose(1, 2, 0)
    )
    assert len(vision.CIFAR100(root=str(tmp_path), train=False)) == 2
    (tmp_path / "test.bin").write_bytes(bytes(100))
    with pytest.raises(ValueError, match="not a whole number of records of 3074"):
        vision.CIFAR100(root=str(tmp_path), train=False)


IMG = np.arange(24).reshape(2, 4, 3)


def test_to_tensor_matches_mxnet() -> None:
    out = T.ToTensor()(mx.nd.array(IMG, dtype="uint8"))
    assert out.shape == (3, 2, 4) and out.dtype == np.float32
    # mxnet 1.9.1
    np.testing.assert_allclose(
        out.asnumpy()[0], [[0.0, 0.01176471, 0.02352941, 0.03529412],
                           [0.04705882, 0.05882353, 0.07058824, 0.08235294]], rtol=1e-6
    )  # fmt: skip
    np.testing.assert_allclose(out.asnumpy(), IMG.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    assert T.ToTensor()(mx.nd.array(IMG, dtype="float64")).dtype == np.float32
    batch = T.ToTensor()(mx.nd.array(np.stack([IMG, IMG]), dtype="uint8"))
    assert batch.shape == (2, 3, 2, 4)
    with pytest.raises(MXNetError, match="ToTensor: Input image must have shape"):
        T.ToTensor()(mx.nd.ones((2, 3)))


def test_normalize_matches_mxnet() -> None:
    y = T.ToTensor()(mx.nd.array(IMG, dtype="uint8"))
    out = T.Normalize((0.1, 0.2, 0.3), (0.5, 0.6, 0.7))(y).asnumpy()
    # mxnet 1.9.1
    np.testing.assert_allclose(out[0, 0], [-0.2, -0.1764706, -0.15294118, -0.12941176], rtol=1e-6)
    np.testing.assert_allclose(
        out[2, 1], [-0.3501401, -0.33333337, -0.31652665, -0.29971993], rtol=1e-6
    )
    ref = (IMG.transpose(2, 0, 1) / 255.0 - np.array([0.1, 0.2, 0.3])[:, None, None]) / np.array(
        [0.5, 0.6, 0.7]
    )[:, None, None]
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    four = T.Normalize(0.5, 2.0)(mx.nd.stack(y, y))
    np.testing.assert_allclose(four.asnumpy()[1], (y.asnumpy() - 0.5) / 2.0, rtol=1e-6)
    assert T.Normalize(0.5, 2.0)(y.astype("float64")).dtype == np.float64  # mxnet 1.9.1
    with pytest.raises(MXNetError, match="mean must have either 1 or 3 elements"):
        T.Normalize((0.1, 0.2), (0.5, 0.6))(y)
    with pytest.raises(MXNetError, match="either 1 or 3 elements, but got input with shape"):
        T.Normalize(0.5, 2.0)(mx.nd.ones((2, 4, 3)))


def test_normalize_is_differentiable() -> None:
    x = mx.nd.array(np.linspace(0, 1, 12).reshape(3, 2, 2))
    x.attach_grad()
    with mx.autograd.record():
        out = T.Normalize((0.1, 0.2, 0.3), (0.5, 0.25, 2.0))(x)
    out.backward()
    expected = np.broadcast_to(np.array([2.0, 4.0, 0.5])[:, None, None], (3, 2, 2))
    np.testing.assert_allclose(x.grad.asnumpy(), expected)


def test_compose_cast_resize() -> None:
    c = T.Compose([T.ToTensor(), T.Normalize(0.5, 0.2)])
    # mxnet 1.9.1: consecutive HybridBlocks grouped into one HybridSequential child
    assert len(c) == 1 and type(c[0]).__name__ == "HybridSequential" and len(c[0]) == 2
    out = c(mx.nd.array(IMG, dtype="uint8"))
    np.testing.assert_allclose(out.asnumpy(), (IMG.transpose(2, 0, 1) / 255 - 0.5) / 0.2, 1e-5)
    mixed = T.Compose([T.Cast("float16"), gluon.nn.Lambda(lambda x: x * 2)])
    assert len(mixed) == 2
    assert mixed(mx.nd.array(IMG, dtype="uint8")).dtype == np.float16  # mxnet 1.9.1 (Cast)
    with pytest.raises(NotImplementedError, match=r"Resize.*docs/migration-mxnet\.md"):
        T.Resize(10)

"""chainer's device objects in gradhub's chainer layer: ``chainer.get_device``,
``chainer.using_device``, ``chainer.backend.Device``, ``chainer.get_dtype`` and the
``chainerx`` placeholder module, against chainer 7.8.1 (values recorded from it)."""

from __future__ import annotations

import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import chainerx, training


@pytest.mark.parametrize("spec", ["-1", -1, "@numpy", "-3", np.int64(-1)])
def test_get_device_cpu_specifiers(spec: object) -> None:
    device = chainer.get_device(spec)
    # chainer 7.8.1: <CpuDevice (numpy)>, str '@numpy', xp numpy, equal to get_device('@numpy')
    assert repr(device) == "<CpuDevice (numpy)>"
    assert str(device) == device.name == "@numpy"
    assert device.xp is np
    assert device == chainer.get_device("@numpy")
    assert not device != chainer.get_device("-1")
    assert chainer.get_device(device) is device
    device.use()  # nothing for the CPU


def test_get_device_errors_are_chainers() -> None:
    # chainer 7.8.1's errors and messages (without ChainerX)
    with pytest.raises(RuntimeError, match="Tried to parse ChainerX device specifier 'cpu'"):
        chainer.get_device("cpu")
    with pytest.raises(RuntimeError, match="ChainerX is not available"):
        chainer.get_device("native:0")
    with pytest.raises(ValueError, match=r"must be followed by a module name.*Actual: @numpy:0"):
        chainer.get_device("@numpy:0")
    for bad in (np, None, 1.5):
        with pytest.raises(TypeError, match=r"Device specifier must be a backend\.Device"):
            chainer.get_device(bad)
    with pytest.raises(NotImplementedError, match="migration-chainer"):
        chainer.get_device("@intel64")


def test_device_send() -> None:
    device = chainer.get_device("@numpy")
    a = np.ones(2)
    assert device.send(a) is a
    # chainer 7.8.1: a list stays a list, None stays None, a scalar becomes an array
    out = device.send([a, None])
    assert isinstance(out, list) and out[0] is a and out[1] is None
    assert isinstance(device.send((a,)), tuple)
    np.testing.assert_array_equal(device.send(1.0), np.asarray(1.0))
    with pytest.raises(TypeError):
        device.send((a, [a]))  # chainer 7.8.1: TypeError (one level of sequence)


def test_links_and_updaters_take_a_device() -> None:
    device = chainer.get_device("-1")
    link = L.Linear(2, 3)
    assert link.to_device(device) is link
    assert link.device.xp is np
    with chainer.using_device(device):
        y = link(np.ones((1, 2), np.float32))
    assert y.shape == (1, 3)
    opt = chainer.optimizers.SGD()
    opt.setup(link)
    it = chainer.iterators.SerialIterator(
        chainer.datasets.TupleDataset(np.ones((2, 2), np.float32)), 1
    )
    updater = training.updaters.StandardUpdater(it, opt, device=device)
    assert updater.device.xp is np  # DCGAN's updater reads device.xp


def test_get_dtype() -> None:
    assert chainer.get_dtype() == np.float32  # chainer 7.8.1: float32 (config.dtype)
    assert chainer.get_dtype(np.float64) == np.float64
    assert chainer.get_dtype("float16") == np.dtype(np.float16)
    with chainer.using_config("dtype", np.float16):
        # chainer 7.8.1 gives float16; the layer's links make float32 parameters: refused
        with pytest.raises(NotImplementedError, match="migration-chainer"):
            chainer.get_dtype()
    with chainer.using_config("dtype", np.float32):
        assert chainer.get_dtype() == np.float32


def test_chainerx_is_not_available() -> None:
    # chainer 7.8.1 without ChainerX: is_available() False, ndarray a class refusing to be made
    assert chainerx.is_available() is False
    assert not isinstance(np.ones(1), chainerx.ndarray)
    with pytest.raises(RuntimeError, match="chainerx is not available"):
        chainerx.ndarray()
    assert chainer.get_device("-1").xp is not chainerx

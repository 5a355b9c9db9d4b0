"""chainer 7.8.1's module paths and small helpers that chainer's own unit tests use, in
gradhub's chainer layer: ``chainer.training.trigger``, ``chainer.initializers.constant`` (and
``normal``, ``uniform``), ``chainer.utils.force_array``/``tempdir``, ``backend.CpuDevice()``,
``backend.get_array_module`` and ``chainer.disable_experimental_feature_warning`` (behaviour
recorded from chainer 7.8.1)."""

from __future__ import annotations

import os

import gradhub_compat.chainer.links as L
import numpy as np
from gradhub_compat import chainer
from gradhub_compat.chainer import backend, initializers, training, utils
from gradhub_compat.chainer.initializers import constant, normal, uniform
from gradhub_compat.chainer.training import trigger


def test_training_trigger_module() -> None:
    # chainer 7.8.1: chainer.training.trigger.IntervalTrigger is the interval trigger class
    assert training.trigger is trigger
    assert trigger.IntervalTrigger is training.triggers.IntervalTrigger
    assert trigger.get_trigger is training.get_trigger
    t = trigger.IntervalTrigger(2, "iteration")
    assert t.get_training_length() == (2, "iteration")


def test_initializer_module_paths() -> None:
    # chainer 7.8.1: initializers.constant.Constant(1.0) fills with 1 (float32 by default)
    assert constant.Constant is initializers.Constant
    assert normal.Normal is initializers.Normal
    assert uniform.Uniform is initializers.Uniform
    a = np.empty((2, 3), np.float32)
    constant.Constant(1.0)(a)
    np.testing.assert_array_equal(a, np.ones((2, 3), np.float32))
    link = L.Maxout(2, 3, 4, initialW=constant.Constant(1.0), initial_bias=constant.Constant(2.0))
    # chainer 7.8.1: linear.W (12, 2) of ones, linear.b (12,) of twos, float32
    np.testing.assert_array_equal(link.linear.W.array, np.ones((12, 2), np.float32))
    np.testing.assert_array_equal(link.linear.b.array, np.full(12, 2, np.float32))


def test_force_array() -> None:
    # chainer 7.8.1: a numpy scalar becomes a 0-d array of its dtype; arrays pass through
    y = utils.force_array(np.float32(2.5))
    assert isinstance(y, np.ndarray) and y.shape == () and y.dtype == np.float32
    assert utils.force_array(np.float64(1.0), np.float16).dtype == np.float16
    a = np.ones(3, np.float32)
    assert utils.force_array(a) is a
    assert utils.force_array(a, np.float32) is a  # astype(copy=False)
    assert utils.force_array(a, np.float64).dtype == np.float64
    assert utils.force_array(3).dtype == np.array(3).dtype


def test_tempdir() -> None:
    with utils.tempdir(prefix="gh_") as d:
        assert os.path.isdir(d) and os.path.basename(d).startswith("gh_")
        with open(os.path.join(d, "f.txt"), "w") as f:
            f.write("x")
    assert not os.path.exists(d)  # removed with its contents, as chainer 7.8.1


def test_cpu_device_without_argument() -> None:
    # chainer 7.8.1: backend.CpuDevice() is the CPU device, <CpuDevice (numpy)>, '@numpy'
    device = backend.CpuDevice()
    assert repr(device) == "<CpuDevice (numpy)>"
    assert device == chainer.get_device("@numpy")
    x = np.arange(3.0)
    assert device.send(x) is x


def test_backend_get_array_module() -> None:
    # chainer 7.8.1: numpy for numpy arrays and Variables on the CPU
    assert backend.get_array_module(np.zeros(2)) is np
    assert backend.get_array_module(chainer.Variable(np.zeros(2, np.float32))) is np
    assert backend.get_array_module() is np


def test_disable_experimental_feature_warning() -> None:
    # chainer 7.8.1: a module attribute, False by default
    assert chainer.disable_experimental_feature_warning is False

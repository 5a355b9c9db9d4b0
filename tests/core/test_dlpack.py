"""DLPack: Variable.__dlpack__/__dlpack_device__ and gradhub.from_dlpack, without copies, against
numpy and (where installed) PyTorch and JAX; refused inputs."""

from __future__ import annotations

import gradhub as gh
import numpy as np
import pytest
from gradhub.device import DeviceType


def test_numpy_round_trip_shares_memory():
    a = np.arange(6.0).reshape(2, 3)
    x = gh.from_dlpack(a)
    assert x.need_grad and x.dtype == np.float64 and x.shape == (2, 3)
    assert np.shares_memory(x.d, a)
    b = np.from_dlpack(x)
    assert np.shares_memory(b, a)
    b[1, 2] = -1.0
    assert x.d[1, 2] == -1.0 and a[1, 2] == -1.0
    assert x.__dlpack_device__() == (1, 0)


def test_from_dlpack_of_a_variable_and_gradients_flow():
    x = gh.Variable([1.0, 2.0])
    y = gh.from_dlpack(x)
    assert np.shares_memory(y.d, x.d)
    (g,) = gh.grad([(y * y).sum()], [y])
    np.testing.assert_array_equal(g.d, [2.0, 4.0])


def test_need_grad_follows_the_dtype_and_is_checked():
    i = gh.from_dlpack(np.arange(3))
    assert not i.need_grad and i.dtype.kind == "i"
    assert not gh.from_dlpack(np.ones(2), need_grad=False).need_grad
    with pytest.raises(TypeError, match="from_dlpack: need_grad=True needs floating-point data"):
        gh.from_dlpack(np.arange(3), need_grad=True)
    with pytest.raises(TypeError, match=r"from_dlpack\(obj\): complex data"):
        gh.from_dlpack(np.ones(2, np.complex64))


def test_refuses_objects_without_dlpack():
    with pytest.raises(TypeError, match=r"from_dlpack: obj must support DLPack .* got list"):
        gh.from_dlpack([1.0, 2.0])


class _Foreign:
    """An array on a DLPack device that no gradhub device accepts."""

    def __init__(self, dl_type: int) -> None:
        self.dl_type = dl_type

    def __dlpack__(self, **kwargs):  # pragma: no cover - never reached
        raise AssertionError

    def __dlpack_device__(self):
        return (self.dl_type, 1)


def test_unknown_devices_are_named():
    with pytest.raises(
        gh.DeviceError, match=r"DLPack device type 8 \(Metal\), index 1.*no gradhub"
    ):
        gh.from_dlpack(_Foreign(8))


def test_cuda_memory_without_a_cuda_device_names_the_plugin(monkeypatch):
    from gradhub.registry import REGISTRY

    gh.plugins.ensure_loaded()
    for dt in REGISTRY.device_types.values():
        if 2 in dt.dlpack_device_types and dt.availability()[0]:
            pytest.skip("a usable CUDA device is installed")
    monkeypatch.setattr(REGISTRY, "device_types", {"cpu": REGISTRY.device_types["cpu"]})
    with pytest.raises(gh.DeviceError, match=r"type 2 \(CUDA\), index 1, .*install gradhub-cuda"):
        gh.from_dlpack(_Foreign(2))


def test_the_device_table_picks_the_importer(monkeypatch):
    # a device type that declares DLPack type 99 imports such arrays (no branch on the kind)
    from gradhub.registry import REGISTRY

    seen = []

    class Toy(DeviceType):
        kind = "toy"
        dlpack_device_types = (99,)

        def from_dlpack(self, obj, index=0):
            seen.append(index)
            return np.zeros(2)

    gh.plugins.ensure_loaded()
    monkeypatch.setitem(REGISTRY.device_types, "toy", Toy())
    x = gh.from_dlpack(_Foreign(99))
    assert seen == [1] and x.shape == (2,)


def test_torch_round_trip_without_copies():
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.float64)
    x = gh.from_dlpack(t)
    x.d[0] = 42.0
    assert t[0].item() == 42.0
    back = torch.from_dlpack(x)
    back[1] = -3.0
    assert x.d[1] == -3.0
    assert back.data_ptr() == t.data_ptr()
    w = gh.Variable(np.ones((2, 2), np.float32))
    tw = torch.from_dlpack(w)
    assert tw.dtype == torch.float32 and tw.data_ptr() == w.d.ctypes.data
    with pytest.raises((RuntimeError, BufferError), match="require"):
        gh.from_dlpack(torch.ones(2, requires_grad=True))


def test_jax_round_trip():
    jnp = pytest.importorskip("jax.numpy")
    a = jnp.arange(3.0)
    x = gh.from_dlpack(a)  # (on the GPU where jax computes there: gradhub-cuda's device)
    np.testing.assert_array_equal(x.device.to_numpy(x.d), [0.0, 1.0, 2.0])
    y = jnp.from_dlpack(gh.Variable([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(y), [1.0, 2.0])

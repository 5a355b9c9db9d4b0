"""Devices and contexts without a GPU (CONTRACT section 1, "Devices and contexts").

A fake second device type, registered by a test plugin, stores its arrays as a numpy subclass and
has an array module that returns them; this exercises device dispatch, mixed-device errors,
transfers and contexts on any machine. Only the core functions are loaded (so the CUDA plugin is
absent, whatever is installed).
"""

from __future__ import annotations

import importlib.metadata
import sys
import types
from collections.abc import Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from child_helpers import run_python
from fake_device import FakeArray, FakeType
from gradhub import plugins
from gradhub.device import Device, DeviceType, current_context
from gradhub.errors import DeviceError


class BrokenType(DeviceType):
    kind = "broken"

    def availability(self) -> tuple[bool, str]:
        return False, "its driver is missing (test device)"

    def get(self, index: int = 0) -> Device:
        raise AssertionError("an unusable device must not be instantiated")


def _add_devices(register: Any) -> None:
    register.device(FakeType(), aliases=("fk",))
    register.device(BrokenType())


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("GRADHUB_PLUGINS", raising=False)
    mod = types.ModuleType("devices_test_plugin")
    mod.gradhub_add_devices = gh.hookimpl(_add_devices)  # type: ignore[attr-defined]
    plugins.reset()
    plugins.load_plugins(extra=[("devices_test", mod)])
    default = gh.get_default_context()
    yield
    gh.set_default_context(default)
    plugins.reset()


@pytest.fixture
def fake() -> gh.Context:
    return gh.get_extension_context("fake")


def on_fake(fake: gh.Context, data: Any) -> gh.Variable:
    with gh.context_scope(fake):
        return gh.Variable(np.asarray(data, dtype=np.float64))


# -- asking for devices ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cuda", "cudnn", "cuda:1"])
def test_cuda_without_its_plugin_names_the_distribution(name: str) -> None:
    """With the plugin not loaded, the error names gradhub-cuda: how to install it, or, when it
    is installed (as in the test environment), that autoload is off and how to load it."""
    try:
        importlib.metadata.distribution("gradhub-cuda")
        hint = (
            r"the distribution 'gradhub-cuda' is installed, but plugin autoload is off "
            r"\(GRADHUB_DISABLE_PLUGIN_AUTOLOAD=1\)"
        )
    except importlib.metadata.PackageNotFoundError:
        hint = r"install the distribution 'gradhub-cuda' \(pip install gradhub-cuda\)"
    with pytest.raises(DeviceError, match=r"unknown device 'cud(a|nn)': " + hint):
        gh.get_extension_context(name)


def test_unknown_device_raises() -> None:
    with pytest.raises(
        DeviceError,
        match=r"unknown device 'tpu': no installed plugin provides it"
        r".*Installed devices: broken, cpu, fake",
    ):
        gh.get_extension_context("tpu")


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("", "device name must be a non-empty string"),
        ("cpu:x", r"device name 'cpu:x': the index after ':' must be an integer"),
        ("cpu:1", r"device 'cpu:1': the CPU device has only index 0"),
        ("fake:2", r"device 'fake:2': only index 0 exists"),
    ],
)
def test_bad_device_names(name: str, match: str) -> None:
    with pytest.raises(DeviceError, match=match):
        gh.get_extension_context(name)


def test_unusable_device_says_why() -> None:
    with pytest.raises(
        DeviceError,
        match=r"device 'broken' is unusable here: its driver is "
        r"missing \(test device\)",
    ):
        gh.get_extension_context("broken")


def test_extension_contexts() -> None:
    assert gh.get_extension_context("cpu") == gh.Context("cpu", 0, "float")
    assert gh.get_extension_context() == gh.Context("cpu", 0, "float")
    assert gh.get_extension_context("fk") == gh.Context("fake", 0, "float")
    assert gh.get_extension_context("fake", type_config="half").type_config == "half"
    assert gh.Context("fake", 0).device_name == "fake:0"
    assert gh.Context().device_name == "cpu"


# -- contexts --------------------------------------------------------------------------------------


def test_context_scope(fake: gh.Context) -> None:
    assert current_context().backend == "cpu"
    with gh.context_scope(fake) as ctx:
        assert ctx is fake and current_context() is fake
        x = gh.Variable([1.0, 2.0])
        with gh.context_scope(gh.get_extension_context("cpu")):
            assert gh.Variable([1.0]).device.name == "cpu"
        assert current_context() is fake
    assert type(x.d) is FakeArray and x.device.name == "fake:0"
    assert gh.Variable([1.0]).device.name == "cpu"
    with pytest.raises(TypeError, match="context_scope: ctx must be a Context, got str"):
        with gh.context_scope("fake"):  # type: ignore[arg-type]
            pass


def test_set_default_context(fake: gh.Context) -> None:
    gh.set_default_context(fake)
    assert gh.get_default_context() is fake
    assert gh.Variable([1.0]).device.name == "fake:0"
    with gh.context_scope(gh.get_extension_context("cpu")):
        assert gh.Variable([1.0]).device.name == "cpu"
    assert gh.Variable([1.0]).device.name == "fake:0"
    with pytest.raises(TypeError, match="set_default_context: ctx must be a Context"):
        gh.set_default_context("cpu")  # type: ignore[arg-type]


# -- computing on a device -------------------------------------------------------------------------


def test_forward_and_backward_stay_on_the_device(fake: gh.Context) -> None:
    x = on_fake(fake, [1.0, 2.0, 3.0])
    y = (x * x * 3.0 + 2.0**x).sum()
    assert type(y.d) is FakeArray and y.device.name == "fake:0"
    y.backward()
    assert type(x.g) is FakeArray
    np.testing.assert_allclose(x.g, 6.0 * x.d + np.log(2.0) * 2.0**x.d)
    (g,) = gh.grad([y], [x])
    (gg,) = gh.grad([g.sum()], [x])
    assert type(g.d) is FakeArray and type(gg.d) is FakeArray
    np.testing.assert_allclose(gg.d, 6.0 + np.log(2.0) ** 2 * 2.0**x.d)
    assert gh.testing.gradcheck(lambda v: v * v * v, [x.d], order=2, device=x.device)


def test_inputs_on_two_devices_raise_naming_both(fake: gh.Context) -> None:
    a = gh.Variable(np.ones(2))
    b = on_fake(fake, [1.0, 2.0])
    with pytest.raises(
        DeviceError,
        match=r"add2\(\): inputs are on different devices: cpu \(x0 "
        r"#0\), fake:0 \(x1 #1\)",
    ):
        a + b
    with pytest.raises(DeviceError, match=r"mul2\(\): .*fake:0 \(x0 #0\), cpu \(x1 #1\)"):
        b * a


def test_transfer_moves_the_data_and_the_gradient_back(fake: gh.Context) -> None:
    """``Variable.to(device)`` puts its result on that device; the gradient returns."""
    x = gh.Variable(np.array([1.0, 2.0]))
    f = x.to("fake")
    assert type(f.d) is FakeArray and f.device.name == "fake:0"
    back = (f * f).to(gh.get_extension_context("cpu"))
    assert type(back.d) is np.ndarray and back.device.name == "cpu"
    back.sum().backward()
    assert type(x.g) is np.ndarray
    np.testing.assert_array_equal(x.g, [2.0, 4.0])
    (g,) = gh.grad([back.sum()], [x])  # differentiable again through the transfers
    (gg,) = gh.grad([g.sum()], [x])
    np.testing.assert_array_equal(gg.d, [2.0, 2.0])
    y = on_fake(fake, [3.0])
    c = y.to("cpu")
    assert type(c.d) is np.ndarray
    (c * 2.0).backward()
    assert type(y.g) is FakeArray and y.g[0] == 2.0


def test_reexecution_on_the_device(fake: gh.Context) -> None:
    x = on_fake(fake, [1.0, 2.0])
    y = (x * x).sum()
    x.d = np.array([3.0, 4.0])  # a host array assigned to a device Variable goes to the device
    assert type(x.d) is FakeArray
    y.forward()
    assert type(y.d) is FakeArray and y.d == 25.0


def test_repr_and_numpy_of_device_variables(fake: gh.Context) -> None:
    x = on_fake(fake, [1.5])
    assert type(x.numpy()) is np.ndarray
    assert repr(x) == "Variable([1.5], dtype=float64)"


def test_tune_host_allocator_is_opt_in() -> None:
    """glibc's malloc thresholds change only when asked: by the function or the variable."""
    import subprocess
    import sys

    code = (
        "import gradhub as gh, gradhub.device as d, gradhub.plugins as p\n"
        "p.load_plugins(); print(bool(d._TUNED))\n"
    )
    env_off = {k: v for k, v in __import__("os").environ.items() if k != "GRADHUB_TUNE_MALLOC"}
    off = subprocess.run(
        [sys.executable, "-c", code], env=env_off, capture_output=True, text=True, check=True
    )
    on = subprocess.run(
        [sys.executable, "-c", code],
        env={**env_off, "GRADHUB_TUNE_MALLOC": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert off.stdout.strip() == "False"
    expected = "True" if sys.platform.startswith("linux") else "False"
    assert on.stdout.strip() == expected


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or gh.device._libc() is None,
    reason="the C library is not glibc (no malloc_trim)",
)
def test_trim_host_heap_returns_free_heap_unless_the_allocator_keeps_it() -> None:
    code = (
        "import gradhub.device as d\n"
        "def rss():\n"
        "    return int(open('/proc/self/statm').read().split()[1]) * 4096\n"
        "src = ''.join(f'def f{i}(a, b):\\n    return a * {i} + b - {i}\\n' for i in range(2000))\n"
        "before = rss(); code = compile(src, 'src', 'exec'); compiled = rss()\n"
        "trimmed = d.trim_host_heap(); after = rss()\n"
        "print(trimmed, compiled - before, compiled - after)\n"
        "print(d.tune_host_allocator(), d.trim_host_heap())\n"
    )
    first, second = run_python(code).splitlines()
    trimmed, grown, given_back = first.split()
    assert trimmed == "True"
    # the compiler's free heap (about 70 bytes per character of the source) went back
    assert int(grown) > 1_000_000 and int(given_back) > int(grown) // 2, first
    # once tune_host_allocator asked glibc to keep freed memory, nothing is trimmed
    assert second == "True False"


def test_an_array_of_a_device_not_loaded_yet_goes_to_its_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``Variable(array)`` with an array of a device plugin's type, made before the plugins were
    loaded (a CuPy array at the start of a program), loads them and keeps the array on its
    device; numpy had copied it to the CPU (and a step then mixed devices)."""
    from gradhub import registry

    mod = types.ModuleType("devices_test_plugin")
    mod.gradhub_add_devices = gh.hookimpl(_add_devices)  # type: ignore[attr-defined]
    plugins.reset()
    loads: list[int] = []

    def load() -> None:
        loads.append(1)
        plugins.load_plugins(extra=[("devices_test", mod)])

    monkeypatch.setattr(registry, "_load_plugins", load)
    assert not plugins.STATE.loaded
    gh.Variable([1.0, 2.0])  # plain data loads nothing
    assert not loads
    a = np.arange(3.0).view(FakeArray)
    v = gh.Variable(a)
    assert loads and plugins.STATE.loaded
    assert type(v.d) is FakeArray and v.d is a
    assert v.device.name == "fake:0"

"""Helpers shared by the plugin and registration tests (not collected: the name does not start
with ``test_``): in-memory plugin modules, fake installed distributions, rules."""

from __future__ import annotations

import textwrap
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradhub as gh
from gradhub import hookimpl, plugins
from gradhub.errors import PluginLoadWarning


def in_memory_plugin(
    name: str,
    functions: Callable[[Any], None] | None = None,
    rules: Callable[[Any], None] | None = None,
) -> types.ModuleType:
    """An in-memory plugin module whose hooks call ``functions(register)``/``rules(register)``."""
    m = types.ModuleType(name)
    if functions is not None:

        @hookimpl
        def gradhub_add_functions(register: Any) -> None:
            functions(register)

        m.gradhub_add_functions = gradhub_add_functions  # type: ignore[attr-defined]
    if rules is not None:

        @hookimpl
        def gradhub_add_backward_rules(register: Any) -> None:
            rules(register)

        m.gradhub_add_backward_rules = gradhub_add_backward_rules  # type: ignore[attr-defined]
    return m


def load_with_warnings(
    name: str, module: types.ModuleType
) -> tuple[plugins.PluginRecord, list[str]]:
    """Load ``module`` as the plugin ``name``; its record and the PluginLoadWarning messages."""
    plugins.ensure_loaded()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = plugins.load_plugins(extra=[(name, module)])
    rec = next(r for r in records if r.name == name)
    return rec, [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]


def old_rule(inputs: Any, **kw: Any) -> Any:
    """The pre-1.32 nnabla form: one positional parameter."""
    return [inputs[0]]


def identity_kernel(xp: Any, x: Any) -> Any:
    return x + 0


def identity_rule(
    grad_outputs: Any,
    inputs: Any,
    input_shapes: Any,
    outputs: Any,
    output_shapes: Any,
    **attrs: Any,
) -> Any:
    return [grad_outputs[0]]


def make_dist(
    root: Path, dist: str, module: str, code: str, ep_name: str | None = None, version: str = "1.0"
) -> None:
    """Write a fake installed distribution ``dist`` whose entry point loads ``module``."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[gradhub.plugins]\n{ep_name or dist} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(code))


def marked_plugin(name: str, **hooks: Callable[..., Any]) -> types.ModuleType:
    """An in-process plugin module whose hooks are marked with @gradhub.hookimpl."""
    mod = types.ModuleType(name)
    for hook, fn in hooks.items():
        setattr(mod, hook, gh.hookimpl(fn))
    return mod


def hook_plugin(name: str, hook: str, body: Callable[[Any], None]) -> types.ModuleType:
    """An in-process plugin module whose one hook ``hook`` calls ``body(register)``."""

    def impl(register: Any) -> None:
        body(register)

    return marked_plugin(name, **{hook: impl})


BOOM_DEVICE = """
from gradhub import hookimpl
from gradhub.device import DeviceType

class BoomType(DeviceType):
    kind = "boomdev"
    def availability(self):
        raise RuntimeError("probe exploded")
    def get(self, index=0):
        raise AssertionError("a device whose probe fails must not be used")

@hookimpl
def gradhub_add_devices(register):
    register.device(BoomType())
"""


def leaky_relu_backward(
    grad_outputs: Any,
    inputs: Any,
    input_shapes: Any,
    outputs: Any,
    output_shapes: Any,
    alpha: float = 0.1,
    inplace: bool = False,
) -> Any:
    """d/dx leaky_relu(x) = 1 where x > 0, else alpha (written with registered functions)."""
    import gradhub.functions as F

    mask = F.greater_scalar(inputs[0], 0.0)
    return [grad_outputs[0] * (mask + (1.0 - mask) * alpha)]

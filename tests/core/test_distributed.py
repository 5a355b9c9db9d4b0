"""The hook ``gradhub_add_communicators`` and ``gradhub.distributed.communicator``: a plugin's
communicator is found by name and made with the options given; the hook is called lazily (not at
import or load time); a failing hook or a duplicate name skips that plugin with a warning naming
it (an error in strict mode); ``override=True`` replaces; ``register.communicator`` checks its
arguments; a missing communicator says which distribution to install."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import gradhub as gh
import pytest
from gradhub import plugins
from gradhub.errors import PluginError, PluginLoadWarning, RegistrationError
from plugin_helpers import hook_plugin

pytestmark = pytest.mark.usefixtures("hand_loaded_plugins")


def _plugin(name: str, hook: Callable[[Any], None]) -> types.ModuleType:
    return hook_plugin(name, "gradhub_add_communicators", hook)


def _load(*mods: types.ModuleType) -> None:
    plugins.load_plugins(extra=[(m.__name__, m) for m in mods])


class Loopback:
    """A communicator of one process."""

    def __init__(self, tag: str = "") -> None:
        self.tag, self.rank, self.size, self.local_rank = tag, 0, 1, 0


def test_a_plugin_communicator_is_found_and_made_with_the_options() -> None:
    calls: list[str] = []

    def hook(r: Any) -> None:
        calls.append("hook")
        r.communicator("loop", Loopback, help="one process")

    _load(_plugin("looper", hook))
    assert calls == []  # not called when plugins load
    c = gh.distributed.communicator("loop", tag="x")
    assert isinstance(c, Loopback) and c.tag == "x" and c.size == 1
    assert gh.distributed.available() == {"loop": "one process"}
    assert calls == ["hook", "hook"]


def test_a_missing_communicator_says_what_to_install() -> None:
    with pytest.raises(gh.distributed.CommunicatorError) as e:
        gh.distributed.communicator("mpi")
    assert 'install gradhub-mpi (pip install "gradhub-mpi[mpich]")' in str(e.value)
    assert "communicators installed: none" in str(e.value)
    with pytest.raises(TypeError, match="argument 'name' must be a string"):
        gh.distributed.communicator(3)  # type: ignore[arg-type]


def test_a_failing_hook_or_duplicate_skips_that_plugin_with_a_warning() -> None:
    def broken(r: Any) -> None:
        raise RuntimeError("no network")

    _load(
        _plugin("first", lambda r: r.communicator("loop", Loopback, help="first")),
        _plugin("second", lambda r: r.communicator("loop", Loopback, help="second")),
        _plugin("broken", broken),
    )
    with pytest.warns(PluginLoadWarning) as got:
        found = plugins.plugin_communicators()
    text = " ".join(str(w.message) for w in got)
    assert "'broken'" in text and "RuntimeError: no network" in text
    assert "'second'" in text and "the communicator 'loop' exists already" in text
    assert found["loop"].help == "first"
    with pytest.raises(PluginError, match=r"'second'.*the communicator 'loop' exists already"):
        plugins.plugin_communicators(strict=True)


def test_override_replaces_a_communicator() -> None:
    _load(
        _plugin("first", lambda r: r.communicator("loop", Loopback, help="first")),
        _plugin("second", lambda r: r.communicator("loop", Loopback, help="second", override=True)),
    )
    assert gh.distributed.available() == {"loop": "second"}


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("Bad Name", Loopback), {"help": "x"}, "the name must be lower-case"),
        (("loop", 3), {"help": "x"}, "argument 'factory' must be callable, got int"),
        (("loop", Loopback), {"help": " "}, "argument 'help' must be a non-empty string"),
    ],
)
def test_register_communicator_checks_its_arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    _load(_plugin("bad", lambda r: r.communicator(*args, **kwargs)))
    with pytest.raises(PluginError) as e:
        plugins.plugin_communicators(strict=True)
    assert isinstance(e.value.__cause__, RegistrationError)
    assert "register.communicator(" in str(e.value) and message in str(e.value)

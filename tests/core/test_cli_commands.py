"""The hook ``gradhub_add_commands``: plugins add subcommands to the ``gradhub`` command line.

A plugin's command is parsed and run like the core's (options, exit status, help); the hook is
called lazily (never at import or load time, nor for the core's own commands); a failing hook or a
duplicate name skips that plugin's commands alone with a warning naming it (an error in strict
mode); ``override=True`` replaces a command; ``register.command`` checks its arguments; and
``gradhub demo`` without gradhub-nn-ops says what to install. The core's commands cannot be
replaced.
"""

from __future__ import annotations

import argparse
import types
import warnings
from collections.abc import Callable
from typing import Any

import gradhub as gh
import pytest
from gradhub import plugins
from gradhub.cli import build_parser, main
from gradhub.errors import PluginError, PluginLoadWarning
from plugin_helpers import hook_plugin

pytestmark = pytest.mark.usefixtures("hand_loaded_plugins")


def _plugin(name: str, hook: Callable[[Any], None]) -> types.ModuleType:
    return hook_plugin(name, "gradhub_add_commands", hook)


def _load(*mods: types.ModuleType) -> None:
    plugins.load_plugins(extra=[(m.__name__, m) for m in mods])


def _greet_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--who", default="world")
    p.add_argument("--status", type=int, default=0)


def _greet(args: argparse.Namespace) -> int:
    print(f"hello {args.who}")
    return int(args.status)


def test_a_plugin_command_is_parsed_run_and_listed(capsys: pytest.CaptureFixture[str]) -> None:
    _load(
        _plugin(
            "greeter",
            lambda r: r.command(
                "greet",
                _greet,
                help="say hello",
                description="Say hello to someone.",
                add_arguments=_greet_arguments,
            ),
        )
    )
    assert main(["greet", "--who", "gradhub"]) == 0
    assert capsys.readouterr().out == "hello gradhub\n"
    assert main(["greet", "--status", "3"]) == 3  # the command's status is passed on
    text = build_parser().format_help()
    assert "greet" in text and "say hello" in text
    for core in ("registry", "plugins", "audit"):
        assert core in text
    with pytest.raises(SystemExit):
        main(["greet", "--help"])
    assert "Say hello to someone." in capsys.readouterr().out


def test_unknown_option_of_a_plugin_command_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    _load(
        _plugin(
            "greeter",
            lambda r: r.command("greet", _greet, help="say hello", add_arguments=_greet_arguments),
        )
    )
    with pytest.raises(SystemExit) as e:
        main(["greet", "--bogus"])
    assert e.value.code == 2
    assert "gradhub greet: error: unrecognized arguments: --bogus" in capsys.readouterr().err


def test_a_command_returning_none_succeeds(capsys: pytest.CaptureFixture[str]) -> None:
    _load(_plugin("quiet", lambda r: r.command("quiet", lambda args: None, help="do nothing")))
    assert main(["quiet"]) == 0


def test_the_hook_is_called_lazily() -> None:
    calls: list[str] = []
    mod = _plugin(
        "counting",
        lambda r: (calls.append("called"), r.command("count", lambda a: 0, help="count")),
    )
    _load(mod)
    gh.Variable([1.0]) * 2.0  # using the library calls no command hook
    assert calls == []
    assert main(["plugins", "--json"]) == 0  # nor does a core command
    assert calls == []
    assert main(["count"]) == 0
    assert calls == ["called"]


def test_a_failing_hook_skips_that_plugin_alone() -> None:
    def broken(register: Any) -> None:
        raise RuntimeError("no commands today")

    good = _plugin("good_cmds", lambda r: r.command("good", lambda a: 0, help="works"))
    _load(_plugin("broken_cmds", broken), good)
    with pytest.warns(
        PluginLoadWarning,
        match=r"'broken_cmds'.*adds no command.*"
        r"RuntimeError: no commands today",
    ):
        names = [c.name for c in plugins.plugin_commands()]
    assert names == ["good"]


def test_strict_mode_raises_for_a_failing_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(register: Any) -> None:
        raise RuntimeError("boom")

    _load(_plugin("broken_cmds", broken))
    monkeypatch.setenv("GRADHUB_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match=r"'broken_cmds'.*RuntimeError: boom"):
        plugins.plugin_commands()


def test_a_duplicate_name_is_an_error_unless_override(capsys: pytest.CaptureFixture[str]) -> None:
    first = _plugin("aa_first", lambda r: r.command("hello", lambda a: 1, help="first"))
    second = _plugin("bb_second", lambda r: r.command("hello", lambda a: 2, help="second"))
    core_clash = _plugin("cc_clash", lambda r: r.command("audit", lambda a: 3, help="clash"))
    _load(first, second, core_clash)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cmds = {c.name: c for c in plugins.plugin_commands(taken=("audit",))}
    messages = [str(w.message) for w in caught if issubclass(w.category, PluginLoadWarning)]
    assert len(messages) == 2, messages
    assert "'bb_second'" in messages[0] and "exists already (from module aa_first)" in messages[0]
    assert "'cc_clash'" in messages[1] and "'audit' is a command of gradhub itself" in messages[1]
    assert cmds["hello"].help == "first" and "audit" not in cmds


def test_a_core_command_cannot_be_replaced(capsys: pytest.CaptureFixture[str]) -> None:
    _load(
        _plugin("replacer", lambda r: r.command("plugins", lambda a: 7, help="mine", override=True))
    )
    with pytest.warns(PluginLoadWarning, match="'plugins' is a command of gradhub itself"):
        assert plugins.plugin_commands(taken=("registry", "plugins", "audit")) == []
    assert main(["plugins", "--json"]) == 0  # the core's own command runs


def test_override_replaces_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    first = _plugin("aa_first", lambda r: r.command("hello", lambda a: 1, help="first"))
    second = _plugin(
        "bb_second", lambda r: r.command("hello", lambda a: 5, help="second", override=True)
    )
    _load(first, second)
    assert main(["hello"]) == 5
    assert "second" in build_parser().format_help()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "Bad Name", "run": lambda a: 0, "help": "x"}, "lower-case letters"),
        ({"name": "ok", "run": 42, "help": "x"}, "argument 'run' must be callable"),
        ({"name": "ok", "run": lambda a: 0, "help": ""}, "argument 'help' must be a non-empty"),
        (
            {"name": "ok", "run": lambda a: 0, "help": "x", "add_arguments": "no"},
            "argument 'add_arguments' must be callable",
        ),
    ],
)
def test_register_command_checks_its_arguments(kwargs: dict[str, Any], match: str) -> None:
    name = kwargs.pop("name")
    _load(_plugin("bad_args", lambda r: r.command(name, **kwargs)))
    with pytest.warns(PluginLoadWarning, match=rf"'bad_args'.*register\.command.*{match}"):
        assert plugins.plugin_commands() == []


def test_demo_without_the_function_library_says_what_to_install(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # autoload is off here, so gradhub-nn-ops (installed or not) adds no command
    assert main(["demo", "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "gradhub demo: error: the command 'demo' comes with the distribution gradhub-nn-ops"
    )
    assert "pip install 'gradhub-nn-ops[demo]'" in err


def test_the_function_library_adds_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("gradhub_nn_ops")
    monkeypatch.setenv("GRADHUB_PLUGINS", "gradhub-nn-ops")
    plugins.reset()
    cmds = {c.name: c for c in plugins.plugin_commands()}
    assert cmds["demo"].provider.distribution == "gradhub-nn-ops"
    assert "train the seed network" in build_parser().format_help()

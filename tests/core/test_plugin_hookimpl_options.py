"""Hookimpl options and plugin loading: gradhub calls each plugin's hooks once, directly (so that a
broken plugin fails alone), so an option it cannot honour (``wrapper``, ``hookwrapper``,
``tryfirst``, ``trylast``, ``optionalhook``) makes that plugin fail with an error naming the
plugin, the hook and the option, instead of a plugin reported as loaded that registered nothing;
``specname`` is honoured."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import gradhub as gh
import pytest
from gradhub import plugins
from gradhub.errors import PluginError, PluginLoadWarning
from gradhub.registry import REGISTRY

SQUARE = """
from gradhub import hookimpl

def _fwd(xp, x):
    return x * x

def _bw(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    return [grad_outputs[0] * inputs[0] * 2.0]
"""


@pytest.fixture(autouse=True)
def _fresh(fresh_plugins: None) -> Iterator[None]:
    yield


def make_dist(root: Path, dist: str, module: str, code: str) -> None:
    """A fake installed distribution ``dist`` whose entry point loads ``module``."""
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[gradhub.plugins]\n{dist} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(code))


def record(name: str) -> plugins.PluginRecord:
    return next(r for r in plugins.plugin_report() if r.name == name)


HOOKS = {
    "wrapper": "@hookimpl(wrapper=True)\ndef gradhub_add_functions(register):\n"
    "    register.function('{name}', _fwd, rule=_bw)\n    return (yield)\n",
    "hookwrapper": "@hookimpl(hookwrapper=True)\ndef gradhub_add_functions(register):\n"
    "    register.function('{name}', _fwd, rule=_bw)\n    yield\n",
    "tryfirst": "@hookimpl(tryfirst=True)\ndef gradhub_add_functions(register):\n"
    "    register.function('{name}', _fwd, rule=_bw)\n",
    "trylast": "@hookimpl(trylast=True)\ndef gradhub_add_functions(register):\n"
    "    register.function('{name}', _fwd, rule=_bw)\n",
    "optionalhook": "@hookimpl(optionalhook=True)\ndef gradhub_add_functions(register):\n"
    "    register.function('{name}', _fwd, rule=_bw)\n",
}


@pytest.mark.parametrize("option", sorted(HOOKS))
def test_an_unsupported_option_fails_its_plugin_alone(site: Path, option: str) -> None:
    name = f"Opt{option.capitalize()}"
    make_dist(
        site, f"fake-opt-{option}", f"fake_opt_{option}", SQUARE + HOOKS[option].format(name=name)
    )
    make_dist(
        site,
        "fake-opt-good",
        "fake_opt_good",
        SQUARE + HOOKS["tryfirst"].replace("(tryfirst=True)", "").format(name="OptGood"),
    )
    with pytest.warns(PluginLoadWarning) as caught:
        plugins.load_plugins()
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    for part in (f"fake-opt-{option}", "gradhub_add_functions", f"{option}=True", "remove"):
        assert part in messages[0]
    rec = record(f"fake-opt-{option}")
    assert rec.status == "failed" and f"{option}=True" in rec.error
    assert name not in REGISTRY.functions
    assert record("fake-opt-good").status == "loaded"  # the other plugin loads
    x = gh.Variable([3.0])
    assert REGISTRY.get("OptGood").api(x).d[0] == 9.0


def test_an_unsupported_option_raises_in_strict_mode(site: Path) -> None:
    make_dist(
        site,
        "fake-opt-strict",
        "fake_opt_strict",
        SQUARE + HOOKS["wrapper"].format(name="OptStrict"),
    )
    with pytest.raises(PluginError, match=r"fake-opt-strict.*gradhub_add_functions.*wrapper=True"):
        plugins.load_plugins(strict=True)


def test_an_option_set_to_false_is_accepted(site: Path) -> None:
    code = SQUARE + HOOKS["tryfirst"].replace("tryfirst=True", "tryfirst=False, wrapper=False")
    make_dist(site, "fake-opt-false", "fake_opt_false", code.format(name="OptFalse"))
    plugins.load_plugins()
    assert record("fake-opt-false").status == "loaded"
    assert "OptFalse" in REGISTRY.functions


def test_specname_names_the_hook(site: Path) -> None:
    code = SQUARE + (
        "@hookimpl(specname='gradhub_add_functions')\n"
        "def add_my_functions(register):\n"
        "    register.function('OptSpecname', _fwd, rule=_bw)\n"
    )
    make_dist(site, "fake-opt-specname", "fake_opt_specname", code)
    plugins.load_plugins()
    assert record("fake-opt-specname").status == "loaded"
    assert REGISTRY.functions["OptSpecname"].provider.distribution == "fake-opt-specname"


def test_specname_of_an_unknown_hook_fails_the_plugin(site: Path) -> None:
    code = SQUARE + (
        "@hookimpl(specname='gradhub_add_everything')\n"
        "def add_my_functions(register):\n"
        "    register.function('OptUnknown', _fwd, rule=_bw)\n"
    )
    make_dist(site, "fake-opt-unknown", "fake_opt_unknown", code)
    with pytest.warns(PluginLoadWarning, match=r"fake-opt-unknown.*gradhub_add_everything"):
        plugins.load_plugins()
    assert record("fake-opt-unknown").status == "failed"
    assert "OptUnknown" not in REGISTRY.functions

"""gradhub.seed and gradhub.random.generator: the shared generator, the plugins' seeders
(hook gradhub_add_seeders), argument checks, and identical models in two fresh processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins


def test_seed_reseeds_the_shared_generator():
    gh.seed(3)
    a = gh.random.generator().random(5)
    gh.seed(3)
    b = gh.random.generator().random(5)
    gh.seed(4)
    c = gh.random.generator().random(5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(a, np.random.default_rng(3).random(5))


@pytest.mark.parametrize(
    ("n", "err", "msg"),
    [
        (-1, ValueError, "seed: n must be >= 0, got -1"),
        (1.5, TypeError, "seed: n must be an integer, got float"),
        (True, TypeError, "seed: n must be an integer, got bool"),
    ],
)
def test_seed_refuses_bad_values(n, err, msg):
    gh.seed(0)
    before = gh.random.generator().bit_generator.state
    with pytest.raises(err, match=msg):
        gh.seed(n)
    assert gh.random.generator().bit_generator.state == before


def test_plugin_seeders_receive_the_seed(fresh_plugins):
    got: list[int] = []
    mod = types.ModuleType("seeding_plugin")

    @gh.hookimpl
    def gradhub_add_seeders(register: plugins.SeederRegistrar) -> None:
        register.seeder("toy-device", got.append)

    mod.gradhub_add_seeders = gradhub_add_seeders  # type: ignore[attr-defined]
    plugins.load_plugins(extra=[("seeding_plugin", mod)])
    assert got == []  # not called at load time
    gh.seed(7)
    gh.seed(np.int64(8))
    assert got == [7, 8]


def test_a_failing_seeder_hook_names_the_plugin(fresh_plugins):
    mod = types.ModuleType("bad_seeder")

    @gh.hookimpl
    def gradhub_add_seeders(register: plugins.SeederRegistrar) -> None:
        register.seeder("x", 42)  # type: ignore[arg-type]

    mod.gradhub_add_seeders = gradhub_add_seeders  # type: ignore[attr-defined]
    plugins.load_plugins(extra=[("bad_seeder", mod)])
    with pytest.raises(
        gh.PluginError,
        match=r"plugin 'bad_seeder' .*gradhub_add_seeders failed: RegistrationError: "
        r"register.seeder\('x'\): argument 'fn' must be callable, got int",
    ):
        gh.seed(0)


_MODEL = """
import sys, gradhub as gh, gradhub.functions as F, gradhub.parametric_functions as PF
gh.seed(int(sys.argv[1]))
x = gh.Variable([[1.0, 2.0, 3.0]])
h = F.dropout(PF.affine(x, 4, name="fc1"), p=0.5)
PF.affine(h, 2, name="fc2")
out = [p.d.tobytes().hex() for p in gh.get_parameters().values()]
out.append(h.d.tobytes().hex())
out.append(gh.random.generator().random(3).tobytes().hex())
print(" ".join(out))
"""


def _model(seed: int) -> str:
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_MODEL), str(seed)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.nn_ops
def test_two_fresh_processes_build_identical_models():
    a, b, c = _model(0), _model(0), _model(1)
    assert a == b
    # what is random depends on the seed: both weights, the dropout mask, the shared generator
    pa, pc = a.split(), c.split()
    for i in (0, 2, -2, -1):
        assert pa[i] != pc[i], i

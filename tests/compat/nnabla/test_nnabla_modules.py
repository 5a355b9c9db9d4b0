"""Modules of nnabla that its example programs import: ``nnabla.solver`` (the solvers' own
module, which ``nnabla.solvers`` re-exports), ``nnabla.utils.save`` (NNP export: not supported,
a clear error) and ``nnabla.utils.image_utils`` (see test_image_monitors.py)."""

from __future__ import annotations

import importlib
from pathlib import Path

import gradhub_compat.nnabla as nn


def test_solver_module_is_the_solvers() -> None:
    # regression: `import nnabla.solver as S` (vae.py, vat.py) had no counterpart
    import gradhub_compat.nnabla.solver as S
    import gradhub_compat.nnabla.solvers as solvers

    for name in solvers.__all__:
        assert getattr(S, name) is getattr(solvers, name)  # nnabla 1.39: the same objects
    assert nn.solver is S
    assert sorted(S.__all__) == sorted(solvers.__all__)


def test_utils_save_is_reachable(tmp_path: Path) -> None:
    # regression: `import nnabla.utils.save as save` (every mnist-collection example) failed
    import gradhub_compat.nnabla.utils.save as save

    assert importlib.import_module("gradhub_compat.nnabla.utils").save is save
    x = nn.Variable((1, 2))
    contents = {"networks": [{"name": "n", "batch_size": 1, "outputs": {"y": x}, "names": {}}]}
    for ext in ("nnp", "nntxt", "protobuf"):  # (the formats: see test_nnp_files.py)
        save.save(str(tmp_path / f"net.{ext}"), contents)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net.nnp", "net.nntxt", "net.protobuf"]


def test_image_utils_is_reachable() -> None:
    utils = importlib.import_module("gradhub_compat.nnabla.utils")
    assert callable(utils.image_utils.imsave)

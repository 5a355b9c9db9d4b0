"""Solver.save_states / load_states: nnabla 1.39's .h5 layout (checked against the file nnabla
writes), a file written in that layout read back, round trips for every solver (the states and
the next update equal), and the errors (other extensions, unregistered parameters,
a file that is not HDF5).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.solvers as S
import h5py
import numpy as np
import pytest
from gradhub.errors import StateFileError

_SOLVERS: list[tuple[str, dict[str, Any]]] = [
    ("Sgd", {}),
    ("Momentum", {}),
    ("Nesterov", {}),
    ("Adam", {}),
    ("Adamax", {}),
    ("AMSGRAD", {}),
    ("Adagrad", {}),
    ("Adadelta", {}),
    ("RMSprop", {}),
    ("RMSpropGraves", {}),
    ("SgdW", {}),
    ("AdamW", {}),
    ("AdaBound", {}),
    ("AMSBound", {}),
    ("Lars", {}),
    ("Lamb", {}),
    ("Lion", {}),
    ("AdaBelief", {"amsgrad": True}),
]


def _trained(name: str, kw: dict[str, Any]) -> tuple[Any, nn.Variable, nn.Variable]:
    w = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0], np.float32), need_grad=True)
    b = nn.Variable.from_numpy_array(np.array([[1.0, -2.0]], np.float32), need_grad=True)
    sol = getattr(S, name)(**kw)
    sol.set_parameters({"z/w": w, "a/b": b})
    for i in range(3):
        sol.zero_grad()
        w.g = np.array([1.0, -1.0, 0.5], np.float32) * (i + 1)
        if i != 1:
            b.g = np.array([[0.3, 0.2]], np.float32)
        sol.update()
    return sol, w, b


def test_save_states_writes_nnabla_layout(tmp_path: Path) -> None:
    # nnabla 1.39's file for this run (Adam): groups a/b (index 0) and z/w (index 1), the
    # states var (index 0) and mean (index 1) in float32, t a scalar int64
    sol, _, _ = _trained("Adam", {})
    path = tmp_path / "adam.h5"
    sol.save_states(path)
    with h5py.File(path, "r") as f:
        assert list(f) == ["a", "z"]
        for key, index, t, shape in (("a/b", 0, 2, (1, 2)), ("z/w", 1, 3, (3,))):
            grp = f[key]
            assert grp.attrs["index"] == index
            assert sorted(grp) == ["mean", "t", "var"]
            assert grp["t"].shape == () and grp["t"].dtype == np.int64 and grp["t"][()] == t
            assert dict(grp["t"].attrs) == {}
            assert grp["var"].attrs["index"] == 0 and grp["mean"].attrs["index"] == 1
            assert grp["var"].dtype == np.float32 and grp["var"].shape == shape
        np.testing.assert_array_equal(f["z/w/mean"][()], sol.get_states()["z/w"].pstate["mean"].d)


def test_load_states_reads_a_file_in_nnabla_layout(tmp_path: Path) -> None:
    path = tmp_path / "momentum.h5"
    with h5py.File(path, "w") as f:  # (as nnabla 1.39's save_states writes it)
        g = f.require_group("fc/W")
        g.attrs["index"] = 0
        g["m"] = np.array([0.25, -0.5], np.float32)
        g["m"].attrs["index"] = 0
        g["t"] = np.int64(7)
    w = nn.Variable.from_numpy_array(np.zeros(2, np.float32), need_grad=True)
    sol = S.Momentum(lr=1.0, momentum=0.5)
    sol.set_parameters({"fc/W": w})
    sol.load_states(path)
    st = sol.get_states()["fc/W"]
    assert st.t == 7
    np.testing.assert_array_equal(st.pstate["m"].d, [0.25, -0.5])
    sol.zero_grad()
    w.g = np.array([1.0, 1.0], np.float32)
    sol.update()  # m = 0.5 m + g, w -= m
    np.testing.assert_array_equal(w.d, [-1.125, -0.75])


@pytest.mark.parametrize(("name", "kw"), _SOLVERS, ids=[n for n, _ in _SOLVERS])
def test_states_round_trip_through_a_file(tmp_path: Path, name: str, kw: dict[str, Any]) -> None:
    sol, w, b = _trained(name, kw)
    path = tmp_path / "states.h5"
    sol.save_states(str(path))
    w2 = nn.Variable.from_numpy_array(w.d.copy(), need_grad=True)
    b2 = nn.Variable.from_numpy_array(b.d.copy(), need_grad=True)
    other = getattr(S, name)(**kw)
    other.set_parameters({"z/w": w2, "a/b": b2})
    other.load_states(path)
    mine, theirs = sol.get_states(), other.get_states()
    assert list(theirs) == list(mine)
    for k in mine:
        assert theirs[k].t == mine[k].t
        assert list(theirs[k].pstate) == list(mine[k].pstate)
        for n in mine[k].pstate:
            np.testing.assert_array_equal(theirs[k].pstate[n].d, mine[k].pstate[n].d)
    for s, v in ((sol, w), (other, w2)):
        s.zero_grad()
        v.g = np.array([0.5, 0.25, -1.0], np.float32)
        s.update()
    np.testing.assert_array_equal(w2.d, w.d)


def test_state_file_errors(tmp_path: Path) -> None:
    sol, _, _ = _trained("Adam", {})
    # (.protobuf state files: see test_parameter_formats.py)
    with pytest.raises(ValueError, match=r"nnabla Adam\.save_states: .*'\.npz'"):
        sol.save_states(tmp_path / "s.npz")
    with pytest.raises(TypeError, match=r"nnabla Adam\.load_states: path must be a file name"):
        sol.load_states(3)
    path = tmp_path / "s.h5"
    sol.save_states(path)
    fresh = S.Adam()
    fresh.set_parameters({"z/w": nn.Variable((3,), need_grad=True)})
    with pytest.raises(ValueError, match=r"nnabla Adam\.set_states: no parameter 'a/b'"):
        fresh.load_states(path)  # (nnabla: "Set weight parameter for a/b first.")
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not an hdf5 file")
    with pytest.raises(StateFileError, match=r"nnabla Adam\.load_states: .* not a readable HDF5"):
        sol.load_states(bad)

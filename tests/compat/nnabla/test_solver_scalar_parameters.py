"""Solvers on a parameter of shape ``()`` (as in nnabla's own solver tests): the gradient after
``weight_decay``/``clip_grad_by_norm``/``scale_grad``, the value after ``update`` and the states
stay 0-d arrays (numpy's 0-d arithmetic gives scalars), ``save_states`` writes 0-d datasets that
``load_states`` reads back; and ``NdArray.zeroing`` of a gradient. Values from nnabla 1.39.
"""

from __future__ import annotations

from pathlib import Path

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.solvers as S
import h5py
import numpy as np
import pytest


def _solver() -> tuple[S.Solver, nn.Variable, nn.Variable]:
    p = nn.Variable([], need_grad=True)
    p.d = 1.5
    p.g = 0.25
    q = nn.Variable([2], need_grad=True)
    q.d = np.array([0.5, -1.0])
    q.g = np.array([0.1, 0.2])
    s = S.AdaBound(0.1)
    s.set_parameters({"p": p, "q": q})
    return s, p, q


def _is_0d(a: object, value: float) -> None:
    assert isinstance(a, np.ndarray) and a.shape == () and a.dtype == np.float32
    np.testing.assert_allclose(a, value, rtol=1e-5)


def test_gradient_tools_keep_0d_arrays() -> None:
    s, p, _ = _solver()
    s.weight_decay(0.1)
    _is_0d(p.g, 0.4)  # nnabla 1.39
    s.clip_grad_by_norm(0.3)
    _is_0d(p.g, 0.3)  # nnabla 1.39
    s.scale_grad(2.0)
    _is_0d(p.g, 0.6)  # nnabla 1.39


def test_update_keeps_0d_value_and_states() -> None:
    s, p, _ = _solver()
    s.weight_decay(0.1)
    s.clip_grad_by_norm(0.3)
    s.scale_grad(2.0)
    s.update()
    _is_0d(p.d, 1.4000001)  # nnabla 1.39
    st = s.get_states()["p"]
    assert st.t == 1
    _is_0d(st.pstate["var"].d, 0.000359995)  # nnabla 1.39
    _is_0d(st.pstate["mean"].d, 0.060000017)  # nnabla 1.39


def test_save_and_load_states_of_0d_parameter(tmp_path: Path) -> None:
    s, p, q = _solver()
    s.update()
    path = tmp_path / "states.h5"
    s.save_states(str(path))
    with h5py.File(path, "r") as h:
        # nnabla 1.39: {'mean': (), 't': (), 'var': ()}
        assert {k: h["p"][k].shape for k in h["p"]} == {"mean": (), "t": (), "var": ()}
    other = S.AdaBound(0.1)
    other.set_parameters({"p": p, "q": q})
    other.load_states(str(path))
    for name, v in s.get_states()["p"].pstate.items():
        got = other.get_states()["p"].pstate[name].d
        assert got.shape == ()
        np.testing.assert_array_equal(got, v.d)
    assert other.get_states()["p"].t == 1


def test_grad_zeroing_state() -> None:
    x = nn.Variable([2], need_grad=True)
    seen = []
    x.grad.zero()
    seen.append(x.grad.zeroing)
    _ = x.g
    seen.append(x.grad.zeroing)
    x.g = 0
    seen.append(x.grad.zeroing)
    x.grad.fill(0)
    seen.append(x.grad.zeroing)
    assert seen == [True, False, True, False]  # nnabla 1.39


def test_zeroing_of_data_is_not_tracked() -> None:
    x = nn.Variable([2])
    with pytest.raises(NotImplementedError, match=r"zeroing.*migration-nnabla"):
        _ = x.data.zeroing
    with pytest.raises(NotImplementedError, match=r"zeroing"):
        _ = nn.NdArray([2]).zeroing

"""Negative ``base_axis`` in ``F.affine`` and ``PF.affine`` of the nnabla layer (counted from
the end, as nnabla 1.39; values recorded from nnabla 1.39.0, 2026-11-25)."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest


def test_affine_base_axis_minus_one_as_nnabla() -> None:
    a = nn.Variable.from_numpy_array(np.arange(24.0).reshape(2, 3, 4) / 10, need_grad=True)
    w = nn.Variable.from_numpy_array(np.arange(20.0).reshape(4, 5) / 10, need_grad=True)
    b = nn.Variable.from_numpy_array(np.arange(5.0) / 10, need_grad=True)
    h = F.affine(a, w, b, base_axis=-1)
    assert h.shape == (2, 3, 5)
    np.testing.assert_allclose(h.d.ravel()[:6], [0.7, 0.86, 1.02, 1.18, 1.34, 1.9], rtol=1e-6)
    h.backward()
    np.testing.assert_allclose(a.g.ravel()[:5], [1.0, 3.5, 6.0, 8.5, 1.0], rtol=1e-6)
    np.testing.assert_allclose(w.g[:, 0], [6.0, 6.6, 7.2, 7.8], rtol=1e-6)
    np.testing.assert_allclose(b.g, [6.0] * 5)
    assert F.affine(a, nn.Variable.from_numpy_array(np.ones((12, 5))), base_axis=-2).shape == (
        2,
        5,
    )
    with pytest.raises(ValueError, match=r"F.affine: base_axis=-4 is out of range"):
        F.affine(a, w, base_axis=-4)


def test_pf_affine_base_axis_minus_one_as_nnabla() -> None:
    a = nn.Variable((2, 3, 4))
    assert PF.affine(a, 5, base_axis=-1, name="p").shape == (2, 3, 5)
    assert PF.affine(a, (5, 2), base_axis=-1, name="q").shape == (2, 3, 5, 2)
    shapes = {k: v.shape for k, v in nn.get_parameters().items()}
    assert shapes == {
        "p/affine/W": (4, 5),
        "p/affine/b": (5,),
        "q/affine/W": (4, 5, 2),
        "q/affine/b": (5, 2),
    }
    with pytest.raises(ValueError, match=r"PF.affine: base_axis=-4 is out of range"):
        PF.affine(a, 5, base_axis=-4, name="r")

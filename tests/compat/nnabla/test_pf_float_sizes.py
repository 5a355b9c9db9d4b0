"""Sizes given as whole floats to the parametric functions (``PF.convolution(h, maxh / 2,
...)`` in nnabla's DCGAN and ResNet examples, ``maxh / 2 == 128.0`` in Python 3): nnabla 1.39
takes them as ints; the layer too. A float with a fraction (nnabla truncates it) raises."""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest


def _shapes() -> dict[str, tuple[int, ...]]:
    return {k: v.shape for k, v in nn.get_parameters(grad_only=False).items()}


def test_whole_float_sizes_as_nnabla() -> None:
    # regression: PF.convolution/deconvolution/affine refused 2.0 ("must be a positive int")
    x = nn.Variable((2, 3, 8, 8))
    assert PF.convolution(x, 2.0, (3, 3), name="a").shape == (2, 2, 6, 6)  # nnabla 1.39
    assert PF.deconvolution(x, 2.0, (3, 3), name="c").shape == (2, 2, 10, 10)
    assert PF.affine(x, 4.0, name="d").shape == (2, 4)
    assert PF.affine(x, (4.0,), name="e").shape == (2, 4)
    assert PF.convolution(x, np.float32(2), (3.0, 3.0), name="h").shape == (2, 2, 6, 6)
    assert PF.convolution(x, outmaps=2.0, kernel=(3, 3), name="k").shape == (2, 2, 6, 6)
    s = _shapes()
    assert s["a/conv/W"] == (2, 3, 3, 3) and s["a/conv/b"] == (2,)
    assert s["c/deconv/W"] == (3, 2, 3, 3)
    assert s["d/affine/W"] == (192, 4) and s["e/affine/b"] == (4,)
    assert s["h/conv/W"] == (2, 3, 3, 3)
    assert all(type(d) is int for shape in s.values() for d in shape)


def test_whole_float_sizes_draw_what_ints_draw() -> None:
    x = nn.Variable((2, 3, 8, 8))
    rng = np.random.RandomState(5)
    PF.convolution(x, 4.0, (3, 3), rng=rng, name="f")
    rng = np.random.RandomState(5)
    PF.convolution(x, 4, (3, 3), rng=rng, name="i")
    p = nn.get_parameters()
    np.testing.assert_array_equal(p["f/conv/W"].d, p["i/conv/W"].d)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: PF.convolution(x, 2.7, (3, 3), name="a"),
        lambda x: PF.deconvolution(x, 2.5, (3, 3), name="b"),
        lambda x: PF.affine(x, (4.5,), name="c"),
        lambda x: PF.convolution(x, 2, (3.5, 3), name="d"),
    ],
)
def test_fractional_sizes_raise(call: object) -> None:
    x = nn.Variable((2, 3, 8, 8))
    with pytest.raises(TypeError, match=r"must be a whole number.*docs/migration-nnabla\.md"):
        call(x)  # type: ignore[operator]
    assert nn.get_parameters() == {}

"""Building a graph with auto_forward off computes nothing in nnabla; gradhub computes it on the
new Variables' zeros, and numpy's floating-point warnings about those values (``0 / 0`` in
nnabla's VAT example, ``noise / F.sum(noise ** 2) ** 0.5``) are not shown. With auto_forward on
(nnabla computes at build time too) and in ``forward()`` they are numpy's as usual."""

from __future__ import annotations

import warnings

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest


def _vat_noise() -> tuple[nn.Variable, nn.Variable]:
    noise = nn.Variable((2, 1, 3, 3), need_grad=True)
    r = noise / (F.sum(noise**2, [1, 2, 3], keepdims=True)) ** 0.5
    return noise, r


def test_build_on_zeros_does_not_warn() -> None:
    # regression: building VAT's normalized noise raised "RuntimeWarning: invalid value
    # encountered in divide" (an error under -W error)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        noise, r = _vat_noise()
        y = F.log(noise)  # log(0) at build time
        z = 1.0 / noise
        h = PF.affine(F.exp(-F.log(noise)), 2, name="fc")
        w = -(noise / noise)
        a = abs(noise / noise)
    # the values follow the data once computed, as in nnabla
    noise.d = np.full((2, 1, 3, 3), 2.0)
    r.forward()
    np.testing.assert_allclose(r.d, np.full((2, 1, 3, 3), 1 / 3), rtol=1e-6)
    for v in (y, z, h, w, a):
        v.forward()
    np.testing.assert_allclose(z.d, 0.5)
    np.testing.assert_allclose(w.d, -1.0)


def test_gradient_through_the_normalized_noise() -> None:
    noise, r = _vat_noise()
    noise.d = np.arange(18, dtype=np.float32).reshape(2, 1, 3, 3) + 1
    loss = F.sum(r * r * 3.0)
    loss.forward()
    noise.grad.zero()
    loss.backward()
    # |r| = 1 per example: the gradient of 3 sum(r^2) = 3 per example is zero
    np.testing.assert_allclose(noise.g, 0.0, atol=1e-5)


def test_auto_forward_and_forward_still_warn() -> None:
    nn.set_auto_forward(True)
    try:
        with pytest.warns(RuntimeWarning, match="invalid value"):
            _vat_noise()
    finally:
        nn.set_auto_forward(False)
    noise, r = _vat_noise()
    noise.d = np.ones((2, 1, 3, 3))
    r.forward()
    noise.d = np.zeros((2, 1, 3, 3))
    with pytest.warns(RuntimeWarning, match="invalid value"):
        r.forward()

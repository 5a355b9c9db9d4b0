"""``F.image_augmentation`` against nnabla 1.39 (``data/image_augmentation_reference.npz``,
written by ``data/make_image_augmentation_reference.py``): with a fixed seed, the first and
second ``forward()`` give nnabla's images within float32 rounding (scale, aspect ratio,
rotation, crop, padding, flips, brightness, contrast, distortion, noise); no gradient, as
nnabla's; the draw at the build (auto_forward off) is the first ``forward()``'s."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest

HERE = Path(__file__).parent
REF = np.load(HERE / "data" / "image_augmentation_reference.npz")  # nnabla 1.39


def _cases() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_image_augmentation_reference", HERE / "data" / "make_image_augmentation_reference.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES.CASES))
def test_image_augmentation_as_nnabla(name: str) -> None:
    # regression: F.image_augmentation raised AttributeError (classification.py
    # --augment-train)
    kwargs = CASES.CASES[name][1]
    x = nn.Variable.from_numpy_array(CASES.inputs(name), need_grad=True)
    y = F.image_augmentation(x, **kwargs)
    built = y.d.copy()
    y.forward()
    np.testing.assert_allclose(y.d, REF[name][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(built, y.d)
    y.forward()
    np.testing.assert_allclose(y.d, REF[name][1], rtol=1e-5, atol=1e-5)
    x.g = 0
    F.sum(y).backward()
    np.testing.assert_array_equal(x.g, 0.0)  # nnabla's backward does nothing


def test_auto_forward_build_is_the_first_draw() -> None:
    kwargs = CASES.CASES["scale_angle"][1]
    x = nn.Variable.from_numpy_array(CASES.inputs("scale_angle"))
    nn.set_auto_forward(True)
    try:
        y = F.image_augmentation(x, **kwargs)
    finally:
        nn.set_auto_forward(False)
    np.testing.assert_allclose(y.d, REF["scale_angle"][0], rtol=1e-5, atol=1e-5)
    y.forward()
    np.testing.assert_allclose(y.d, REF["scale_angle"][1], rtol=1e-5, atol=1e-5)


def test_follows_new_input_data_and_checks_arguments() -> None:
    x = nn.Variable.from_numpy_array(np.zeros((2, 1, 4, 4), np.float32))
    y = F.image_augmentation(x, (1, 4, 4), seed=1)
    x.d = np.ones((2, 1, 4, 4))
    y.forward()
    np.testing.assert_allclose(y.d, 1.0, rtol=1e-6)  # identity settings: the input
    with pytest.raises(ValueError, match="only the height and width"):
        F.image_augmentation(x, (2, 4, 4))
    with pytest.raises(ValueError, match="pad"):
        F.image_augmentation(x, (1, 4, 4), pad=(1,))
    with pytest.raises(ValueError, match="seed"):
        F.image_augmentation(x, (1, 4, 4), seed=-2)

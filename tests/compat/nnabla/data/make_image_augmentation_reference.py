"""Writes ``image_augmentation_reference.npz``: nnabla 1.39's ``F.image_augmentation`` on fixed
inputs with fixed seeds (two ``forward()`` calls each), which
``tests/compat/nnabla/test_image_augmentation.py`` compares with the layer.

Run it with the Python of an environment that has nnabla 1.39.0, from the checkout::

    /path/to/nnabla-venv/bin/python tests/compat/nnabla/data/make_image_augmentation_reference.py
"""

from __future__ import annotations

import os

import numpy as np

# name -> (input shape, keyword arguments)
CASES: dict[str, tuple[tuple[int, ...], dict[str, object]]] = {
    "identity": ((2, 1, 4, 5), {"shape": (1, 4, 5), "seed": 1}),
    "scale_angle": (
        (3, 2, 6, 7),
        {
            "shape": (2, 5, 6),
            "pad": (1, 1),
            "min_scale": 0.8,
            "max_scale": 1.2,
            "angle": 0.3,
            "aspect_ratio": 1.3,
            "seed": 2,
        },
    ),
    "flips_colour": (
        (4, 3, 5, 5),
        {
            "shape": (3, 5, 5),
            "flip_lr": True,
            "flip_ud": True,
            "brightness": 0.2,
            "brightness_each": True,
            "contrast": 1.5,
            "contrast_center": 0.5,
            "contrast_each": True,
            "seed": 3,
        },
    ),
    "distortion_noise": (
        (2, 1, 6, 6),
        {"shape": (1, 4, 4), "distortion": 0.2, "noise": 0.1, "angle": 0.1, "seed": 4},
    ),
    "classification_example": (
        (3, 1, 28, 28),
        {
            "shape": (1, 28, 28),
            "pad": (0, 0),
            "min_scale": 0.9,
            "max_scale": 1.1,
            "angle": 0.3,
            "aspect_ratio": 1.3,
            "distortion": 0.1,
            "flip_lr": False,
            "flip_ud": False,
            "brightness": 0.5,
            "brightness_each": False,
            "contrast": 1.5,
            "contrast_center": 0.5,
            "contrast_each": False,
            "noise": 0.1,
            "seed": 0,
        },
    ),
}


def inputs(name: str) -> np.ndarray:
    shape = CASES[name][0]
    return np.random.RandomState(len(name)).rand(*shape).astype(np.float32)


def main() -> None:
    import nnabla as nn
    import nnabla.functions as F

    out = {}
    for name, (_, kwargs) in CASES.items():
        x = nn.Variable.from_numpy_array(inputs(name))
        y = F.image_augmentation(x, **kwargs)
        y.forward()
        first = y.d.copy()
        y.forward()
        out[name] = np.stack([first, y.d.copy()])
    np.savez(
        os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "image_augmentation_reference.npz"
        ),
        **out,
    )


if __name__ == "__main__":
    main()

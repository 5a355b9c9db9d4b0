"""``F.random_flip``, ``F.random_shift`` and ``F.random_crop`` (nnabla's data augmentation
functions, used by nnabla's image classification examples): the patterns nnabla 1.39 produces
(which elements each output reads, for every border mode), the axes they act on, the
gradients (computed independently: the counts of reads), and a new draw at each ``forward()``.
The draws themselves are numpy's, not nnabla's. (``F.image_augmentation``:
test_image_augmentation.py; ``F.random_erase``: test_random_erase.py.)"""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def _rows(n: int = 60, length: int = 5) -> nn.Variable:
    return nn.Variable.from_numpy_array(
        np.tile(np.arange(length, dtype=np.float32), (n, 1)), need_grad=True
    )


# nnabla 1.39: F.random_shift(x, (3,), border_mode=...) on rows arange(5): the distinct rows
SHIFT_PATTERNS = {
    "nearest": [
        (0, 0, 0, 0, 1),
        (0, 0, 0, 1, 2),
        (0, 0, 1, 2, 3),
        (0, 1, 2, 3, 4),
        (1, 2, 3, 4, 4),
        (2, 3, 4, 4, 4),
        (3, 4, 4, 4, 4),
    ],
    "reflect": [
        (0, 0, 1, 2, 3),
        (0, 1, 2, 3, 4),
        (1, 0, 0, 1, 2),
        (1, 2, 3, 4, 4),
        (2, 1, 0, 0, 1),
        (2, 3, 4, 4, 3),
        (3, 4, 4, 3, 2),
    ],
}


@pytest.mark.parametrize("mode", ["nearest", "reflect"])
def test_random_shift_patterns_as_nnabla(mode: str) -> None:
    # regression: F.random_shift raised AttributeError
    x = _rows(200)
    y = F.random_shift(x, (3,), border_mode=mode, seed=1)
    y.forward()
    assert sorted({tuple(r) for r in y.d.astype(int).tolist()}) == SHIFT_PATTERNS[mode]
    # the gradient: each element gets the number of times it was read
    dy = np.random.RandomState(0).rand(*y.shape).astype(np.float32)
    x.grad.zero()
    y.backward(dy)
    want = np.zeros(x.shape)
    for b, row in enumerate(y.d.astype(int)):
        np.add.at(want[b], row, dy[b])
    np.testing.assert_allclose(x.g, want, rtol=1e-6)


def test_random_shift_constant_and_axes() -> None:
    x = _rows(200)
    y = F.random_shift(x, (2,), border_mode="constant", constant_value=-1, seed=2)
    y.forward()
    rows = {tuple(r) for r in y.d.astype(int).tolist()}
    # nnabla 1.39 (constant -1): out-of-range elements take the constant
    assert rows == {
        (-1, -1, 0, 1, 2),
        (-1, 0, 1, 2, 3),
        (0, 1, 2, 3, 4),
        (1, 2, 3, 4, -1),
        (2, 3, 4, -1, -1),
    }
    # shifts apply to the last axes, the same shift for every channel of a sample
    z = nn.Variable.from_numpy_array(np.arange(8 * 2 * 5 * 5, dtype=np.float32).reshape(8, 2, 5, 5))
    s = F.random_shift(z, (1, 2), seed=3)
    s.forward()
    for b in range(8):
        d0 = s.d[b, 0] - z.d[b, 0]
        np.testing.assert_array_equal(s.d[b, 1] - z.d[b, 1], d0)
        assert set(np.unique(np.diff(s.d[b, 0], axis=1))) <= {0.0, 1.0}
    with pytest.raises(ValueError, match="border_mode"):
        F.random_shift(z, (1,), border_mode="wrap")
    with pytest.raises(ValueError, match="more entries"):
        F.random_shift(z, (1, 1, 1, 1))


def test_random_crop_as_nnabla() -> None:
    z = nn.Variable.from_numpy_array(
        np.arange(6 * 1 * 5 * 5, dtype=np.float32).reshape(6, 1, 5, 5), need_grad=True
    )
    c = F.random_crop(z, (3, 2), seed=5)
    assert c.shape == (6, 1, 3, 2)  # nnabla 1.39
    assert F.random_crop(z, (1, 3, 2)).shape == (6, 1, 3, 2)
    same = F.random_crop(z)
    np.testing.assert_array_equal(same.d, z.d)
    c.forward()
    z.grad.zero()
    c.backward(np.ones(c.shape, np.float32))
    for b in range(6):
        r0, c0 = np.argwhere(z.d[b, 0] == c.d[b, 0, 0, 0])[0]
        np.testing.assert_array_equal(c.d[b, 0], z.d[b, 0, r0 : r0 + 3, c0 : c0 + 2])
        want = np.zeros((5, 5))
        want[r0 : r0 + 3, c0 : c0 + 2] = 1  # nnabla 1.39: the gradient of the block only
        np.testing.assert_array_equal(z.g[b, 0], want)
    with pytest.raises(ValueError, match="does not fit"):
        F.random_crop(z, (6, 2))


def test_random_flip_as_nnabla() -> None:
    z = nn.Variable.from_numpy_array(
        np.arange(40 * 1 * 3 * 4, dtype=np.float32).reshape(40, 1, 3, 4), need_grad=True
    )
    f = F.random_flip(z, axes=[2, 3], seed=1)
    f.forward()
    dy = np.random.RandomState(1).rand(*f.shape).astype(np.float32)
    z.grad.zero()
    f.backward(dy)
    kinds = set()
    for b in range(40):
        for k, (ud, lr) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
            v = z.d[b, 0][:: -1 if ud else 1, :: -1 if lr else 1]
            if np.array_equal(f.d[b, 0], v):
                kinds.add(k)
                g = dy[b, 0][:: -1 if ud else 1, :: -1 if lr else 1]
                np.testing.assert_array_equal(z.g[b, 0], g)  # flipped back, as nnabla's
                break
        else:
            raise AssertionError(f"sample {b} is not a flip of the input")
    assert kinds == {0, 1, 2, 3}
    # the default axis is the last one (nnabla 1.39: axes [3] for a 4-d input)
    g = F.random_flip(z, seed=2)
    g.forward()
    for b in range(40):
        assert np.array_equal(g.d[b, 0], z.d[b, 0]) or np.array_equal(g.d[b, 0], z.d[b, 0, :, ::-1])


def test_each_forward_draws_again() -> None:
    x = _rows(50)
    y = F.random_shift(x, (2,), seed=4)
    f = F.random_flip(x, seed=4)
    c = F.random_crop(x, (2,), seed=4)
    for v in (y, f, c):
        v.forward()
        first = v.d.copy()
        v.forward()
        assert not np.array_equal(v.d, first)


def test_listed_in_the_module() -> None:
    for name in ("random_flip", "random_shift", "random_crop", "image_augmentation"):
        assert name in dir(F)

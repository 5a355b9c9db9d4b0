"""Unlinked Variables in the nnabla layer: ``get_unlinked_variable`` and ``reshape(unlink=True)``
share the source's data and gradient buffers both ways and follow ``forward()`` of the source
(nnabla's GAN idiom). Expected values are those of nnabla 1.39, re-derived with numpy.
"""

from __future__ import annotations

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest
from compat.nnabla.helpers import _var, _var64


def test_unlinked_variable_shares_data_and_keeps_need_grad() -> None:
    x = _var([1.0, 2.0])
    y = x * 3.0
    u = y.get_unlinked_variable()
    assert u.parent is None and u.need_grad is True and u.d is y.d
    assert y.get_unlinked_variable(need_grad=False).need_grad is False
    assert y.detach().need_grad is False
    r = y.reshape((2, 1), unlink=True)
    assert r.parent is None and r.shape == (2, 1)
    assert y.reshape((1, 2)).parent is not None


def test_unlinked_variable_follows_forward_of_its_source() -> None:
    z = nn.Variable((2, 2))
    fake = z * 2
    fake_dis = fake.get_unlinked_variable(need_grad=True)
    loss_dis = F.sum(fake_dis * 1.0)
    z.d = np.ones((2, 2))
    fake.forward()
    loss_dis.forward()
    np.testing.assert_array_equal(fake_dis.d, np.full((2, 2), 2.0))
    assert float(loss_dis.d) == 8.0  # nnabla 1.39: 8.0 (gradhub gave 0.0: the build-time zeros)


def test_gan_loop_trains_the_discriminator_on_the_current_fake_data() -> None:
    # nnabla's DCGAN idiom; nnabla 1.39 gives exactly the numpy values below (checked), the
    # unlinked leaf accumulating into the generator output's .g over the iterations
    rng = np.random.RandomState(1)
    z = nn.Variable((4, 2))
    wg = _var64(rng.randn(2, 3))
    wd = _var64(rng.randn(3, 1))
    fake = F.affine(z, wg)
    loss_gen = F.mean(F.affine(fake, wd))
    fake_dis = fake.get_unlinked_variable(need_grad=True)
    loss_dis = F.mean(F.affine(fake_dis, wd) ** 2)
    acc = np.zeros((4, 3))
    for _ in range(3):
        zd = rng.randn(4, 2)
        z.d = zd
        loss_gen.forward()
        loss_dis.forward()
        wd.g = 0
        loss_dis.backward(clear_buffer=True)
        f = zd @ wg.d.astype(np.float64)
        o = f @ wd.d.astype(np.float64)
        np.testing.assert_allclose(loss_dis.d, np.mean(o**2), rtol=1e-5)
        np.testing.assert_allclose(wd.g, f.T @ (2 * o / 4), rtol=1e-5, atol=1e-5)
        acc += (2 * o / 4) @ wd.d.astype(np.float64).T
        np.testing.assert_allclose(fake_dis.g, acc, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(fake.g, fake_dis.g)
        assert not wg.g.any()  # the unlinked Variable stops the path to the generator
    # a generator pass overwrites the intermediate's .g, which the unlinked Variable shows too
    loss_gen.backward()
    expected = np.broadcast_to(wd.d.astype(np.float64).T / 4, (4, 3))
    np.testing.assert_allclose(fake.g, expected, rtol=1e-6)
    np.testing.assert_array_equal(fake_dis.g, fake.g)


def test_unlinked_variable_shares_assignments_both_ways() -> None:
    z = nn.Variable((2, 2), need_grad=True)
    fake = z * 2
    u = fake.get_unlinked_variable()
    assert u.need_grad is True and u.parent is None
    fake.g = 5
    np.testing.assert_array_equal(u.g, np.full((2, 2), 5.0))
    u.g = 7
    np.testing.assert_array_equal(fake.g, np.full((2, 2), 7.0))
    u.d = 9
    np.testing.assert_array_equal(fake.d, np.full((2, 2), 9.0))
    fake.d = 4
    np.testing.assert_array_equal(u.d, np.full((2, 2), 4.0))
    # a leaf source: parameters unlinked with need_grad=False (PF's fix_parameters) follow it
    w = _var64(np.ones((2, 3)))
    wu = w.get_unlinked_variable(need_grad=False)
    w.d = 3
    np.testing.assert_array_equal(wu.d, np.full((2, 3), 3.0))
    wu.d = 2
    np.testing.assert_array_equal(w.d, np.full((2, 3), 2.0))
    assert wu.need_grad is False and w.need_grad is True


def test_reshape_unlink_shares_data_and_grad_through_the_new_shape() -> None:
    z = nn.Variable((4, 2))
    fake = F.affine(z, _var64(np.arange(6.0).reshape(2, 3)))
    r = fake.reshape((12,), unlink=True)
    assert r.shape == (12,) and r.parent is None
    z.d = np.ones((4, 2))
    fake.forward()
    np.testing.assert_array_equal(r.d, np.tile([3.0, 5.0, 7.0], 4))
    r.need_grad = True
    lr = F.sum(r * r)
    lr.forward()
    lr.backward()
    np.testing.assert_array_equal(r.g, np.tile([6.0, 10.0, 14.0], 4))
    np.testing.assert_array_equal(fake.g, np.tile([6.0, 10.0, 14.0], (4, 1)))
    lr.backward()  # a leaf: accumulates into the shared buffer
    np.testing.assert_array_equal(fake.g, np.tile([12.0, 20.0, 28.0], (4, 1)))
    r.d = np.arange(12.0)
    np.testing.assert_array_equal(fake.d, np.arange(12.0).reshape(4, 3))
    with pytest.raises(ValueError, match="cannot reshape a Variable of shape"):
        fake.reshape((5,), unlink=True)


def test_unlinked_variable_is_equal_and_hash_equal_to_its_source() -> None:
    """Regression: ``get_unlinked_variable()`` was neither ``==`` nor hash-equal to its source;
    nnabla 1.39: ``u == h``, ``h == u``, ``hash(u) == hash(h)``, ``u != h`` False, ``{h, u}`` has
    one element, also with ``need_grad=False`` and for an unlinked Variable of an unlinked
    one; ``reshape(unlink=True)`` and other Variables are not equal."""
    x = nn.Variable.from_numpy_array(np.array([1.0, 2.0, 3.0, 4.0]), need_grad=True)
    h = x * 2
    u = h.get_unlinked_variable()
    assert u is not h
    assert u == h and h == u and not (u != h)
    assert hash(u) == hash(h)
    assert len({h, u}) == 1
    u2 = h.get_unlinked_variable(need_grad=False)
    assert u2 == h and hash(u2) == hash(h)
    assert u.get_unlinked_variable() == h
    r = h.reshape((2, 2), unlink=True)
    assert not (r == h) and r != h
    assert not (x == h) and x != h
    assert x == x


def test_unlinked_variables_inside_a_compiled_step_follow_each_call() -> None:
    # regression: inside gh.compile, get_unlinked_variable(need_grad=False) (and detach()) made a
    # leaf over the step's own Variable, whose array a replay does not write: the first call's
    # values at every call; an unlinked Variable needing a gradient is refused there
    import gradhub as gh

    rng = np.random.default_rng(0)
    w = nn.Variable.from_numpy_array(rng.standard_normal((4, 3)).astype(np.float32))
    w.need_grad = True
    x = rng.standard_normal((8, 4)).astype(np.float32)

    def step(xv: nn.Variable) -> nn.Variable:
        with nn.auto_forward():
            h = F.affine(xv, w)
            t = h.get_unlinked_variable(need_grad=False) + h.detach()
            return F.sum((h - t * 0.25) ** 2)

    fast = gh.compile(step)
    for k in range(3):
        got = fast(x * (k + 1)).d
        assert got == step(nn.Variable.from_numpy_array(x * (k + 1))).d, f"call {k}"
        np.testing.assert_allclose(got, np.sum((0.5 * (x * (k + 1)) @ w.d) ** 2), rtol=1e-5)

    def linked(xv: nn.Variable) -> nn.Variable:
        with nn.auto_forward():
            h = F.affine(xv, w)
            return F.sum(h.get_unlinked_variable())  # (keeps need_grad: True)

    with pytest.raises(NotImplementedError, match="leaf needing a gradient"):
        gh.compile(linked)(x)

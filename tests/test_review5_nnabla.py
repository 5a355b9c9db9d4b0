"""Review 5 of the nnabla compatibility layer against the real nnabla 1.39.

Each behaviour was run on nnabla 1.39 (CPU) first; the expected values below are what nnabla
gave, re-derived here independently with numpy (or by hand) so that the tests need no nnabla.
"""

from __future__ import annotations

import gradhub as gh
import gradhub.compat.nnabla as nn
import gradhub.compat.nnabla.functions as F
import numpy as np
import pytest


def _var(values: object, need_grad: bool = True) -> nn.Variable:
    return nn.Variable.from_numpy_array(np.array(values, dtype=np.float64), need_grad=need_grad)


# -- F1: get_unlinked_variable / reshape(unlink=True) share the source's buffers -----------------


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
    wg = _var(rng.randn(2, 3))
    wd = _var(rng.randn(3, 1))
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
    w = _var(np.ones((2, 3)))
    wu = w.get_unlinked_variable(need_grad=False)
    w.d = 3
    np.testing.assert_array_equal(wu.d, np.full((2, 3), 3.0))
    wu.d = 2
    np.testing.assert_array_equal(w.d, np.full((2, 3), 2.0))
    assert wu.need_grad is False and w.need_grad is True


def test_reshape_unlink_shares_data_and_grad_through_the_new_shape() -> None:
    z = nn.Variable((4, 2))
    fake = F.affine(z, _var(np.arange(6.0).reshape(2, 3)))
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


# -- F4: need_grad=False on an intermediate Variable stops the gradient there -------------------


def test_need_grad_false_on_an_intermediate_stops_backward_and_grad() -> None:
    x = _var([1.0, 2.0])
    h = x * 3
    y = F.sum(h * x)  # dy/dx = 6x through both paths; with h held fixed: h = 3x
    h.need_grad = False  # set after the graph was built
    assert h.need_grad is False
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 6.0])  # nnabla 1.39: [3, 6]
    assert not h.g.any()  # nnabla leaves h.g at zeros
    g = nn.grad([y], [x])[0]
    g.forward()
    np.testing.assert_allclose(g.d, [3.0, 6.0])
    h.need_grad = True  # restores the path
    x.g = 0
    y.backward()
    np.testing.assert_allclose(x.g, [6.0, 12.0])
    np.testing.assert_allclose(nn.grad([y], [x])[0].d, [6.0, 12.0])


def test_need_grad_false_before_building_and_on_the_root() -> None:
    x = _var([1.0, 2.0])
    h = x * 3
    h.need_grad = False
    y = F.sum(h * x)
    assert y.need_grad is True
    y.backward()
    np.testing.assert_allclose(x.g, [3.0, 6.0])
    x.g = 0
    y3 = F.sum(h)
    assert y3.need_grad is False  # built from h only
    y3.backward()
    assert not x.g.any()
    r = x * 2
    r.need_grad = False
    r.backward()  # nnabla backpropagates from a root all the same
    np.testing.assert_allclose(x.g, [2.0, 2.0])
    assert r.need_grad is False
    # the native Variable is untouched: need_grad stays its plain slot
    assert type(gh.Variable.__dict__["need_grad"]).__name__ == "member_descriptor"


def test_need_grad_false_on_one_output_of_a_multi_output_function_is_refused() -> None:
    xs = _var([[1.0, 2.0], [3.0, 4.0]])
    a, b = F.split(xs, axis=0)
    with pytest.raises(NotImplementedError, match="need_grad=False on one output of split"):
        a.need_grad = False
    a.need_grad = True  # allowed (nothing to change)
    ym = F.sum(a * 2.0) + F.sum(b * 3.0)
    ym.backward()
    np.testing.assert_allclose(xs.g, [[2.0, 2.0], [3.0, 3.0]])

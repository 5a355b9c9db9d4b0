"""chainer's Parameter, Link, Chain and ChainList in gradhub's chainer layer: registration,
traversal order and paths, gradients, uninitialized parameters and Variables, devices,
serialization keys; expected values recorded with chainer 7.8.1 (2026-11-25)."""

from __future__ import annotations

import copy
import os
import pickle
import tempfile

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from gradhub_compat import chainer
from gradhub_compat.chainer import serializers
from gradhub_compat.chainer.serializers import DictionarySerializer


class Net(chainer.Chain):
    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.b = L.Linear(2, 2)
            self.a = chainer.ChainList(L.Linear(2, 3, nobias=True), L.BatchNormalization(3))
            self.p = chainer.Parameter(np.zeros(2, np.float32))
            self.not_registered_value = 3


def test_traversal_orders_and_paths_are_chainers() -> None:
    net = Net()
    assert [n for n, _ in net.namedparams()] == [
        "/p",
        "/a/0/W",
        "/a/1/beta",
        "/a/1/gamma",
        "/b/W",
        "/b/b",
    ]
    assert [n for n, _ in net.namedlinks()] == ["/", "/a", "/a/0", "/a/1", "/b"]
    assert [type(lk).__name__ for lk in net.links()] == [
        "Net",
        "ChainList",
        "Linear",
        "BatchNormalization",
        "Linear",
    ]
    assert [type(lk).__name__ for lk in net.children()] == ["ChainList", "Linear"]
    assert [p.name for p in net.params()] == ["p", "W", "beta", "gamma", "W", "b"]
    assert net.count_params() == 20  # chainer 7.8.1
    assert net.b.name == "b" and net.a[1].name == "1"


def test_str_is_chainers() -> None:
    assert str(Net()) == (
        "Net(\n"
        "  (a): ChainList(\n"
        "    (0): Linear(in_size=2, out_size=3, nobias=True),\n"
        "    (1): BatchNormalization(size=3, decay=0.9, eps=2e-05, dtype=float32, "
        "use_gamma=True, use_beta=True),\n"
        "  ),\n"
        "  (b): Linear(in_size=2, out_size=2, nobias=False),\n"
        ")"
    )


def test_serialization_keys_are_chainers() -> None:
    s = DictionarySerializer()
    s.save(Net())
    assert sorted(s.target) == [
        "a/0/W",
        "a/1/N",
        "a/1/avg_mean",
        "a/1/avg_var",
        "a/1/beta",
        "a/1/gamma",
        "b/W",
        "b/b",
        "p",
    ]


def test_chain_file_round_trip_and_chainer_written_file() -> None:
    net = Net()
    net.b.W.array[...] = np.arange(4, dtype=np.float32).reshape(2, 2)
    net.a[1].avg_mean[...] = [1.0, 2.0, 3.0]
    net.a[1].N = 7
    path = os.path.join(tempfile.mkdtemp(), "net.npz")
    serializers.save_npz(path, net)
    other = Net()
    serializers.load_npz(path, other)
    np.testing.assert_array_equal(other.b.W.array, net.b.W.array)
    np.testing.assert_array_equal(other.a[1].avg_mean, [1.0, 2.0, 3.0])
    assert other.a[1].N == 7


def test_file_written_by_chainer_loads_into_a_chain() -> None:
    """data/chainer_net.npz was written by chainer 7.8.1 (data/make_chainer_net.py)."""
    from pathlib import Path

    class ChainerNet(chainer.Chain):
        def __init__(self) -> None:
            super().__init__()
            with self.init_scope():
                self.l1 = L.Linear(None, 4)  # uninitialized: the file gives the shape
                self.bn = L.BatchNormalization(4)
                self.stack = chainer.ChainList(L.Linear(2, 2, nobias=True))

    net = ChainerNet()
    serializers.load_npz(Path(__file__).parent / "data" / "chainer_net.npz", net)
    np.testing.assert_array_equal(
        net.l1.W.array, np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    )
    np.testing.assert_array_equal(net.l1.b.array, np.arange(4, dtype=np.float32) - 1.5)
    np.testing.assert_array_equal(net.bn.avg_mean, [0.5, 1, 1.5, 2])
    np.testing.assert_array_equal(net.stack[0].W.array, np.eye(2, dtype=np.float32))


def test_registration_only_inside_init_scope() -> None:
    class C(chainer.Chain):
        def __init__(self) -> None:
            super().__init__()
            self.outside = L.Linear(1, 1)  # not registered (as chainer)
            with self.init_scope():
                self.inside = L.Linear(1, 1)

    c = C()
    assert [n for n, _ in c.namedlinks(skipself=True)] == ["/inside"]
    with pytest.raises(AttributeError, match="cannot register a new link inside: attribute"):
        c.add_link("inside", L.Linear(1, 1))
    with pytest.raises(TypeError, match="cannot register a non-link object as a child"):
        c.add_link("x", 3)
    del c.inside
    assert list(c.params()) == []
    cl = chainer.ChainList()
    with pytest.raises(TypeError, match="cannot register a new link within"):
        with cl.init_scope():
            cl.x = L.Linear(1, 1)


def test_link_params_by_shape() -> None:
    lk = chainer.Link(x=(2, 3), y=None)
    assert [n for n, _ in lk.namedparams()] == ["/x", "/y"]
    assert lk.x.array.dtype == np.float32 and lk.x.array.shape == (2, 3)
    assert np.isnan(lk.x.array).all()
    assert lk.y.array is None
    with pytest.raises(AttributeError, match="cannot register a new parameter x"):
        lk.add_param("x", (1,))


def test_call_is_forward_and_missing_init_is_reported() -> None:
    class Bad(chainer.Chain):
        def __init__(self) -> None:  # forgets super().__init__()
            pass

    with pytest.raises(RuntimeError, match=r"Link.__init__\(\) has not been called"):
        with Bad().init_scope():
            pass


def test_parameter_with_shape_starts_with_nan_gradient_as_chainer() -> None:
    lin = L.Linear(3, 2)
    assert np.isnan(lin.W.grad).all() and np.isnan(lin.b.grad).all()
    F.sum(lin(np.ones((1, 3), np.float32))).backward()
    assert np.isnan(lin.W.grad).all()  # chainer 7.8.1: NaN + gradient
    lin.cleargrads()
    assert lin.W.grad is None
    F.sum(lin(np.ones((1, 3), np.float32))).backward()
    np.testing.assert_array_equal(lin.W.grad, np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(lin.b.grad, np.ones(2, np.float32))


def test_uninitialized_parameter() -> None:
    p = chainer.Parameter()
    assert p.array is None and not p.is_initialized
    assert repr(p) == "variable(None)"
    assert p.dtype == np.float64  # chainer's rule: numpy.dtype(None) of the NaN initializer
    with pytest.raises(RuntimeError, match=r"Cannot retrieve Variable.grad"):
        p.grad  # noqa: B018
    p.cleargrad()
    assert p.grad is None
    lin = L.Linear(None, 4)
    assert repr(lin.W) == "variable W(None)"
    lin.W.initialize((4, 2))
    assert lin.W.array.dtype == np.float32 and np.isnan(lin.W.grad).all()
    u = L.Linear(None, 2)
    u.cleargrads()
    u.W.initialize((2, 2))
    assert u.W.grad is None
    with pytest.warns(DeprecationWarning, match="zerograds is deprecated"):
        z = L.Linear(None, 2)
        z.zerograds()
    z.W.initialize((2, 2))
    np.testing.assert_array_equal(z.W.grad, np.zeros((2, 2), np.float32))


def test_parameter_from_array_and_scalar() -> None:
    a = np.ones(3, np.float32)
    p = chainer.Parameter(a)
    assert p.array is a and p.grad is None
    q = chainer.Parameter(2.5, (2,))
    np.testing.assert_array_equal(q.array, [2.5, 2.5])
    assert q.array.dtype == np.float32


def test_uninitialized_variable() -> None:
    v = chainer.Variable(None)
    assert v.array is None and v.requires_grad
    assert repr(v) == "variable(None)" and str(v) == "variable(None)"
    with pytest.raises(AttributeError):
        v.shape  # noqa: B018
    v.array = np.ones(2, np.float32)
    np.testing.assert_array_equal((v * 2).array, [2.0, 2.0])


def test_copyparams_addgrads_and_update_switches() -> None:
    a, b = Net(), Net()
    b.b.W.array[...] = 5.0
    b.a[1].avg_var[...] = 9.0
    a.copyparams(b)
    np.testing.assert_array_equal(a.b.W.array, np.full((2, 2), 5.0))
    np.testing.assert_array_equal(a.a[1].avg_var, np.full(3, 9.0))
    a.cleargrads()
    b.cleargrads()
    b.b.W.grad = np.ones((2, 2), np.float32)
    a.addgrads(b)
    np.testing.assert_array_equal(a.b.W.grad, np.ones((2, 2)))
    assert a.b.b.grad is None
    assert not a.update_enabled  # no optimizer yet


def test_to_device_numpy_and_refused_devices() -> None:
    lin = L.Linear(2, 2)
    assert lin.to_device("@numpy") is lin and lin.to_cpu() is lin
    assert lin.device.name == "cpu" and lin.xp is np
    v = chainer.Variable(np.ones(2, np.float32))
    v.to_device("@numpy")
    v.to_cpu()
    assert isinstance(v.array, np.ndarray)
    with pytest.raises(NotImplementedError, match=r"ChainerX.*docs/migration-chainer.md"):
        v.to_device("native:0")
    with pytest.raises(NotImplementedError, match=r"Link.to_chx.*docs/migration-chainer.md"):
        lin.to_chx()
    with pytest.raises(TypeError, match="invalid device specifier"):
        v.to_device(1.5)


def test_to_gpu_without_a_usable_cuda_device_raises_clearly() -> None:
    from gradhub.registry import REGISTRY

    try:
        ok = REGISTRY.availability("cuda")[0]
    except Exception:
        ok = False
    if ok:
        pytest.skip("a CUDA device is usable here (tested in test_to_gpu_moves_arrays)")
    with pytest.raises(RuntimeError, match=r"Variable.to_device: no usable gradhub CUDA device"):
        chainer.Variable(np.ones(2, np.float32)).to_gpu()
    with pytest.raises(RuntimeError, match=r"Linear.to_device: no usable gradhub CUDA device"):
        L.Linear(2, 2).to_gpu()


def test_to_gpu_moves_arrays() -> None:
    from gradhub.registry import REGISTRY

    try:
        ok = REGISTRY.availability("cuda")[0]
    except Exception:
        ok = False
    if not ok:
        pytest.skip("no usable CUDA device")
    net = Net()
    net.to_gpu()
    assert net.b.W.device.name == "cuda:0"
    assert type(net.a[1].avg_mean).__module__.startswith("cupy")
    y = net.b(net.b.xp.ones((1, 2), dtype=np.float32))
    assert y.device.name == "cuda:0"
    net.to_cpu()
    assert isinstance(net.b.W.array, np.ndarray)


def test_unsupported_link_features_name_the_page() -> None:
    lin = L.Linear(1, 1)
    for call, feature in (
        (lambda: lin.repeat(2), "Link.repeat"),
        (lambda: lin.add_hook(object()), "Link.add_hook"),
    ):
        with pytest.raises(NotImplementedError, match=feature + r".*docs/migration-chainer.md"):
            call()
    with pytest.raises(NotImplementedError, match=r"chainer.links.VGG16Layers.*migration-chainer"):
        L.VGG16Layers  # noqa: B018


def test_saving_an_uninitialized_parameter_is_refused() -> None:
    path = os.path.join(tempfile.mkdtemp(), "u.npz")
    with pytest.raises(ValueError, match=r"save_npz: 'W' is None \(an uninitialized value\)"):
        serializers.save_npz(path, L.Linear(None, 2))
    assert not os.path.exists(path)


def test_copy_modes_match_chainer() -> None:
    class N(chainer.Chain):
        def __init__(self) -> None:
            super().__init__()
            with self.init_scope():
                self.l = L.Linear(2, 2)
                self.cl = chainer.ChainList(L.Linear(1, 1))

    np.random.seed(0)
    n = N()
    n.cleargrads()
    s = n.copy()
    assert s.l.W.array is n.l.W.array and s.l.W is not n.l.W
    assert s.name is None and s.l.name == "l" and s.cl[0].name == "0"
    assert s.cl[0].W.array is n.cl[0].W.array and s.l.W.grad is None
    c = n.copy("copy")
    assert c.l.W.array is not n.l.W.array
    np.testing.assert_array_equal(c.l.W.array, n.l.W.array)

    # "init" draws again, in chainer's order: a Chain re-initializes all its parameters,
    # then each child again (children in set order: one child here, as chainer's order of
    # several children depends on string hashing); a ChainList only its children
    class One(chainer.Chain):
        def __init__(self) -> None:
            super().__init__()
            with self.init_scope():
                self.l = L.Linear(2, 2)

    one = One()
    np.random.seed(5)
    i = one.copy("init")
    np.testing.assert_allclose(  # chainer 7.8.1 (printed with 8 digits)
        i.l.W.array,
        np.array([[0.07750586, 1.1189831], [-0.6429244, -0.41835028]], np.float32),
        rtol=2e-7,
    )
    cl = chainer.ChainList(L.Linear(1, 2))
    np.random.seed(5)
    j = cl.copy("init")
    np.testing.assert_allclose(
        j[0].W.array, np.array([[0.4412275], [-0.33087015]], np.float32), rtol=2e-7
    )
    with pytest.raises(ValueError, match="'mode' argument should be either 'init','copy', or"):
        n.copy("x")


class _MLP(chainer.ChainList):
    def __init__(self) -> None:
        super().__init__(L.Linear(4, 5), L.Linear(5, 3))

    def forward(self, x: chainer.Variable) -> chainer.Variable:
        return self[1](F.relu(self[0](x)))


def _compiled_mlp() -> tuple[_MLP, np.ndarray, np.ndarray]:
    np.random.seed(3)  # (chainer's initializers draw from numpy's global generator)
    rng = np.random.default_rng(3)
    return _MLP(), rng.standard_normal((6, 4)).astype(np.float32), rng.integers(0, 3, 6)


@pytest.mark.parametrize("clear", ["cleargrads", "zerograds"])
def test_clearing_gradients_inside_a_compiled_step_is_replayed(clear: str) -> None:
    # regression: Parameter.cleargrad() (what Link.cleargrads() calls) did not tell
    # gradhub.compile's trace, so a compiled `cleargrads(); loss.backward()` step cleared the
    # gradients at its first call only and summed every later call's into .grad
    import gradhub as gh

    model, x, t = _compiled_mlp()

    def step(x: chainer.Variable) -> chainer.Variable:
        if clear == "cleargrads":
            model.cleargrads()
        else:
            with pytest.warns(DeprecationWarning):
                model.zerograds()
        loss = F.softmax_cross_entropy(model(x), t)
        loss.backward()
        return loss

    fast = gh.compile(step)
    for call in range(3):
        fast(x)
        got = [p.grad.copy() for p in model.params()]
        step(chainer.Variable(x))
        for g, p in zip(got, model.params()):
            np.testing.assert_array_equal(g, p.grad, err_msg=f"call {call}")


@pytest.mark.parametrize("how", ["array", "grad", "update"])
def test_writes_a_compiled_step_would_not_replay_are_refused(how: str) -> None:
    # regression: `param.array[...] = v`, `param.grad *= s` or an optimizer's update inside a
    # compiled step happened at its first call only, silently
    import gradhub as gh
    from gradhub_compat.chainer import optimizers

    model, x, t = _compiled_mlp()
    opt = optimizers.SGD(lr=0.1)
    opt.setup(model)
    before = [p.array.copy() for p in model.params()]

    def step(x: chainer.Variable) -> chainer.Variable:
        model.cleargrads()
        loss = F.softmax_cross_entropy(model(x), t)
        loss.backward()
        w = model[0].W
        if how == "array":
            w.array[0] = 0.0
        elif how == "grad":
            w.grad *= 0.5
        else:
            opt.update()
        return loss

    with pytest.raises(NotImplementedError, match=r"gradhub.compile: the step (writes|assigns)"):
        gh.compile(step)(x)
    for b, p in zip(before, model.params()):
        np.testing.assert_array_equal(b, p.array)
        assert p.array.flags.writeable


def _linear_with_double_backprop_grads() -> L.Linear:
    """W = [[0, .1, .2], [.3, .4, .5]], b = 0 and the gradients of sum(l(ones(4, 3)) ** 2),
    recorded with enable_double_backprop (the gradients have a creator)."""
    lin = L.Linear(3, 2, initialW=np.arange(6, dtype=np.float32).reshape(2, 3) / 10)
    lin.cleargrads()
    F.sum(lin(np.ones((4, 3), np.float32)) ** 2).backward(enable_double_backprop=True)
    assert lin.W.grad_var.creator is not None
    return lin


def test_deepcopy_after_double_backprop_copies_the_gradient_arrays() -> None:
    lin = _linear_with_double_backprop_grads()
    # y = [.3, 1.2] per row: dW = 2 * 4 * y[i] * x = [[2.4] * 3, [9.6] * 3], db = [2.4, 9.6]
    for c in (copy.deepcopy(lin), pickle.loads(pickle.dumps(lin))):
        np.testing.assert_allclose(c.W.grad, [[2.4] * 3, [9.6] * 3], rtol=1e-6)
        np.testing.assert_allclose(c.b.grad, [2.4, 9.6], rtol=1e-6)
        assert c.W.grad is not lin.W.grad and c.W.array is not lin.W.array
        # chainer 7.8.1: the copy's grad_var is a new root requiring a gradient
        assert c.W.grad_var.creator is None and c.W.grad_var.requires_grad is True
        np.testing.assert_array_equal(c.W.array, lin.W.array)


def test_copy_modes_after_addgrads() -> None:
    x = np.ones((1, 3), np.float32)
    a, b = L.Linear(3, 2), L.Linear(3, 2)
    a.cleargrads()
    b.cleargrads()
    F.sum(a(x)).backward()
    F.sum(b(x)).backward()
    a.addgrads(b)  # each grad is 1 + 1, a sum with a creator
    assert a.W.grad_var.creator is not None
    for c in (copy.deepcopy(a), a.copy("copy")):
        np.testing.assert_array_equal(c.W.grad, np.full((2, 3), 2, np.float32))
        assert c.W.grad_var.creator is None
        np.testing.assert_array_equal(c.W.array, a.W.array)
    # chainer 7.8.1: a deep-copied Parameter is rebuilt from its initializer, so "init" gives
    # it chainer's NaN gradient
    i = a.copy("init")
    assert i.W.shape == (2, 3) and np.isnan(i.W.grad).all()


def test_copies_of_an_uninitialized_parameter_get_a_nan_gradient() -> None:
    # chainer 7.8.1: cleargrads() before the first call gives a None gradient at
    # initialization, but a deep copy starts from a new Parameter: NaN
    u = L.Linear(None, 2)
    u.cleargrads()
    c = copy.deepcopy(u)
    u(np.ones((1, 3), np.float32))
    c(np.ones((1, 3), np.float32))
    assert u.W.grad is None
    assert c.W.grad.shape == (2, 3) and np.isnan(c.W.grad).all()


def test_zerograds_zeroes_the_gradient_arrays_in_place() -> None:
    lin = L.Linear(2, 2)
    nan_w = lin.W.grad  # chainer: NaN until cleargrads()
    with pytest.warns(DeprecationWarning, match="Link.zerograds is deprecated"):
        lin.zerograds()
    assert lin.W.grad is nan_w
    np.testing.assert_array_equal(nan_w, np.zeros((2, 2), np.float32))
    lin.cleargrads()
    F.sum(lin(np.ones((1, 2), np.float32))).backward()
    gw, gb = lin.W.grad, lin.b.grad
    with pytest.warns(DeprecationWarning):
        lin.zerograds()
    # chainer 7.8.1: the arrays taken before read zeros ([[1, 1], [1, 1]] and [1, 1] before)
    np.testing.assert_array_equal(gw, np.zeros((2, 2), np.float32))
    np.testing.assert_array_equal(gb, np.zeros(2, np.float32))
    assert lin.W.grad is gw
    lin.cleargrads()  # cleargrads sets None: the old array is not touched
    np.testing.assert_array_equal(gw, np.zeros((2, 2), np.float32))
    assert lin.W.grad is None


def test_links_deep_copy_and_pickle_after_to_cpu() -> None:
    """Regression: to_cpu()/to_device('@numpy') stored the CPU device object, which holds the
    numpy module, so copy.deepcopy and pickle of the link failed (chainer 7.8.1 does both)."""
    for link in (L.Linear(3, 2), L.StatefulGRU(2, 3), L.StatefulMGU(2, 3)):
        link.to_cpu()
        link.to_device("@numpy")
        clone = copy.deepcopy(link)
        assert pickle.loads(pickle.dumps(link)).xp is np and clone.xp is np

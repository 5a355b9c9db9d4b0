"""gluon.Trainer against mxnet 1.9.1: three Parameters (one with lr_mult/wd_mult) of a small
two-layer network trained for three steps with SGD (momentum, wd), Adam and centered RMSProp,
grad_req="add", a grad_req="null" parameter with an lr_scheduler, set_learning_rate and
allreduce_grads + update; the order of a dict of Parameters; save_states/load_states (never a
pickle) and the errors."""

from __future__ import annotations

import pickle
from pathlib import Path

import gradhub_compat.mxnet as mx
import numpy as np
import pytest
from gradhub_compat.mxnet import gluon

W1 = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 10
B1 = np.array([0.1, -0.2, 0.3], np.float32)
W2 = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) / 5
X = np.sin(np.arange(16, dtype=np.float32).reshape(4, 4))

# mxnet 1.9.1: the same script run with ``import mxnet as mx`` (the parameters after training,
# the Trainer's parameter names in index order, learning rates)
REF = {
    "adam": [
        [
            [-0.35294777154922485, -0.25308531522750854, -0.15268097817897797, -0.3465038537979126],
            [0.0390288382768631, -0.07492194324731827, -0.03234510123729706, 0.061093561351299286],
            [0.4447475075721741, 0.25569531321525574, 0.35552313923835754, 0.4550841152667999],
        ],
        [-0.19878315925598145, -0.4849849343299866, -0.0002598613500595093],
        [
            [-0.25173479318618774, -0.059417251497507095, -0.02250753343105316],
            [0.05119405686855316, 0.268237829208374, 0.45297980308532715],
        ],
        ["fc1_bias", "fc1_weight", "fc2_weight"],
    ],
    "add": [
        [
            [-0.472572922706604, -0.3652478754520416, -0.28987377882003784, -0.22380968928337097],
            [
                -0.054634712636470795,
                -0.01859082467854023,
                0.034545380622148514,
                0.14786025881767273,
            ],
            [0.3387312591075897, 0.3137754797935486, 0.3680941164493561, 0.5436864495277405],
        ],
        [0.05651894211769104, -0.30707523226737976, 0.1315774917602539],
        [
            [-0.3445885479450226, -0.1959601491689682, 0.004486607853323221],
            [0.17001375555992126, 0.3812633454799652, 0.3455253839492798],
        ],
    ],
    "add_grad_after_step": [
        [-1.2487928867340088, -1.5823122262954712, -0.46106094121932983, 1.084087610244751],
        [-2.3922152519226074, 1.841982364654541, 4.382669925689697, 2.893950939178467],
        [-2.2814645767211914, 5.016121864318848, 7.701909065246582, 3.306596279144287],
    ],
    "null_sched": [
        [
            [-0.47928157448768616, -0.3737482726573944, -0.2923506498336792, -0.2179858386516571],
            [-0.08375406265258789, -0.01272149384021759, 0.07000715285539627, 0.18031108379364014],
            [0.3362605571746826, 0.3169258236885071, 0.37396910786628723, 0.5468846559524536],
        ],
        [0.045247480273246765, -0.2605544626712799, 0.03488077595829964],
        [
            [-0.4000000059604645, -0.20000000298023224, 0.0],
            [0.20000000298023224, 0.4000000059604645, 0.6000000238418579],
        ],
        [0.2, 0.1, 0.05],
    ],
    "rmsprop": [
        [
            [-0.32333803176879883, -0.22333747148513794, -0.12334738671779633, -0.376661479473114],
            [0.06329935789108276, -0.06199782341718674, -0.04766501858830452, 0.03881997615098953],
            [0.48085275292396545, 0.2258348912000656, 0.3336707353591919, 0.42183250188827515],
        ],
        [-0.22385087609291077, -0.5083953738212585, -0.030126869678497314],
        [
            [-0.22587037086486816, -0.054280057549476624, -0.0012897737324237823],
            [0.031153850257396698, 0.24818263947963715, 0.4387361407279968],
        ],
        ["fc1_bias", "fc1_weight", "fc2_weight"],
    ],
    "sgd": [
        [
            [-0.4085894525051117, -0.2854851484298706, -0.2656039297580719, -0.27580025792121887],
            [0.04526085406541824, 0.017444854602217674, -0.02640986442565918, 0.045440733432769775],
            [0.39630359411239624, 0.18099041283130646, 0.16497230529785156, 0.4544004797935486],
        ],
        [-0.02618909627199173, -0.4548020362854004, -0.15568342804908752],
        [
            [-0.21783877909183502, -0.18945902585983276, 0.011437014676630497],
            [0.10360487550497055, 0.35443344712257385, -0.07441967725753784],
        ],
        ["fc1_bias", "fc1_weight", "fc2_weight"],
    ],
    "update": [
        [
            [-0.4630196690559387, -0.35314321517944336, -0.2863466739654541, -0.23210293054580688],
            [-0.05126217380166054, -0.03816448152065277, 0.01002146303653717, 0.14093326032161713],
            [0.37230727076530457, 0.23651403188705444, 0.25102901458740234, 0.4944468140602112],
        ],
        0.5,
    ],
}


def _params(req: str = "write") -> tuple[gluon.Parameter, gluon.Parameter, gluon.Parameter]:
    p1 = gluon.Parameter("fc1_weight", shape=(3, 4), grad_req=req)
    p2 = gluon.Parameter("fc1_bias", shape=(3,), grad_req=req, lr_mult=2.0, wd_mult=0.0)
    p3 = gluon.Parameter("fc2_weight", shape=(2, 3), grad_req=req)
    for p, v in ((p1, W1), (p2, B1), (p3, W2)):
        p.initialize(mx.init.Zero())
        p.set_data(mx.nd.array(v))
    return p1, p2, p3


def _loss(
    p1: gluon.Parameter, p2: gluon.Parameter, p3: gluon.Parameter, x: mx.nd.NDArray
) -> mx.nd.NDArray:
    h = mx.nd.relu(mx.nd.FullyConnected(x, p1.data(), p2.data(), num_hidden=3))
    o = mx.nd.FullyConnected(h, p3.data(), None, num_hidden=2, no_bias=True)
    return (o * o).sum()


def _close(got: list, ref: list) -> None:
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, np.array(r, np.float32), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize(
    ("name", "kw"),
    [
        ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
        ("adam", {"learning_rate": 0.05, "wd": 0.01}),
        ("rmsprop", {"learning_rate": 0.01, "centered": True, "clip_gradient": 0.5}),
    ],
)
def test_training_as_mxnet(name: str, kw: dict) -> None:
    ps = _params()
    tr = gluon.Trainer({p.name: p for p in ps}, name, kw)
    for t in range(3):
        x = mx.nd.array(X * (t + 1))
        with mx.autograd.record():
            loss = _loss(*ps, x)
        loss.backward()
        tr.step(4)
    _close([p.data().asnumpy() for p in ps], REF[name][:3])
    assert [p.name for p in tr._params] == REF[name][3]  # a dict: sorted by name
    assert tr.optimizer.rescale_grad == 0.25


def test_grad_req_add_as_mxnet() -> None:
    ps = _params("add")
    tr = gluon.Trainer(list(ps), "sgd", {"learning_rate": 0.1})
    for t in range(2):
        for k in range(2):
            with mx.autograd.record():
                loss = _loss(*ps, mx.nd.array(X * (k + 1)))
            loss.backward()
        tr.step(8)
        if t == 0:  # the accumulated gradient is left as it is by step
            np.testing.assert_allclose(
                ps[0].grad().asnumpy(), REF["add_grad_after_step"], rtol=2e-6
            )
        for p in ps:
            p.zero_grad()
    _close([p.data().asnumpy() for p in ps], REF["add"])


def test_null_parameter_and_scheduler_as_mxnet() -> None:
    ps = _params()
    ps[2].grad_req = "null"
    sched = mx.lr_scheduler.MultiFactorScheduler(step=[1, 2], factor=0.5, base_lr=0.2)
    tr = gluon.Trainer(list(ps), "sgd", {"lr_scheduler": sched})
    lrs = []
    for _ in range(3):
        with mx.autograd.record():
            loss = _loss(*ps, mx.nd.array(X))
        loss.backward()
        tr.step(4)
        lrs.append(tr.learning_rate)
    _close([p.data().asnumpy() for p in ps], REF["null_sched"][:3])
    np.testing.assert_array_equal(ps[2].data().asnumpy(), W2)
    assert lrs == pytest.approx(REF["null_sched"][3])


def test_set_learning_rate_and_update_as_mxnet() -> None:
    ps = _params()
    tr = gluon.Trainer(list(ps), "sgd", {"learning_rate": 0.1, "rescale_grad": 2.0})
    with mx.autograd.record():
        loss = _loss(*ps, mx.nd.array(X))
    loss.backward()
    tr.set_learning_rate(0.3)
    assert tr.learning_rate == 0.3
    tr.allreduce_grads()
    tr.update(4)
    _close([ps[0].data().asnumpy()], REF["update"][:1])
    assert tr.optimizer.rescale_grad == REF["update"][1]  # scale / batch_size = 0.5


def test_step_formula_independent() -> None:
    # plain SGD: w -= lr * grad / batch_size
    (p,) = _params()[:1]
    tr = gluon.Trainer([p], "sgd", {"learning_rate": 0.5})
    x = mx.nd.array(X)
    with mx.autograd.record():
        loss = (mx.nd.dot(x, p.data().T) ** 2).sum()
    loss.backward()
    g = p.grad().asnumpy().copy()
    tr.step(4)
    np.testing.assert_allclose(p.data().asnumpy(), W1 - 0.5 * g / 4, rtol=1e-6)
    np.testing.assert_allclose(g, 2 * (X @ W1.T).T @ X, rtol=1e-5)


def test_optimizer_instance_and_multipliers() -> None:
    ps = _params()
    o = mx.optimizer.SGD(learning_rate=0.1, wd=0.5)
    tr = gluon.Trainer(list(ps), o)
    assert tr.optimizer is o and o.param_dict[1] is ps[1]
    assert o._get_lr(1) == pytest.approx(0.2) and o._get_wd(1) == 0.0 and o._get_wd(0) == 0.5
    with pytest.raises(ValueError, match="optimizer_params must be None"):
        gluon.Trainer(list(ps), o, {"learning_rate": 0.1})


def test_save_and_load_states(tmp_path: Path) -> None:
    ps = _params()
    tr = gluon.Trainer(list(ps), "adam", {"learning_rate": 0.05})

    def one_step(t: gluon.Trainer) -> None:
        with mx.autograd.record():
            loss = _loss(*ps, mx.nd.array(X))
        loss.backward()
        t.step(4)

    one_step(tr)
    fname = tmp_path / "trainer.states"
    tr.save_states(fname)
    blob = fname.read_bytes()
    assert not blob.startswith(b"\x80")  # not a pickle
    saved = [p.data().asnumpy().copy() for p in ps]
    one_step(tr)
    expected = [p.data().asnumpy().copy() for p in ps]
    for p, v in zip(ps, saved):  # back to the saved point, a new trainer, the states loaded
        p.set_data(mx.nd.array(v))
    tr2 = gluon.Trainer(list(ps), "adam", {"learning_rate": 0.9})
    tr2.load_states(fname)
    assert tr2.learning_rate == 0.05 and tr2.optimizer.num_update == 1
    assert tr2.optimizer.param_dict[2] is ps[2]
    one_step(tr2)
    for p, e in zip(ps, expected):
        np.testing.assert_array_equal(p.data().asnumpy(), e)


def test_mxnet_states_file_is_refused(tmp_path: Path) -> None:
    # mxnet's Trainer.save_states writes pickle.dumps((states, optimizer)); it is never loaded
    fname = tmp_path / "mxnet.states"
    fname.write_bytes(pickle.dumps(({0: None}, None)))
    tr = gluon.Trainer(list(_params()), "sgd")
    with pytest.raises(ValueError, match=r"written by mxnet \(a Python pickle\).*never unpickles"):
        tr.load_states(fname)


def test_errors() -> None:
    ps = _params()
    with pytest.raises(ValueError, match="First argument must be a list or dict of Parameters"):
        gluon.Trainer(ps[0], "sgd")
    with pytest.raises(ValueError, match="got list of"):
        gluon.Trainer([ps[0], 3], "sgd")
    with pytest.raises(ValueError, match="Cannot find optimizer nosuch"):
        gluon.Trainer(list(ps), "nosuch")
    with pytest.raises(NotImplementedError, match=r"dist_sync.*migration-mxnet"):
        gluon.Trainer(list(ps), "sgd", kvstore="dist_sync")
    tr = gluon.Trainer(list(ps), "sgd", {"lr_scheduler": mx.lr_scheduler.FactorScheduler(2)})
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer has already been defined"):
        tr.set_learning_rate(0.1)
    with pytest.raises(TypeError, match=r"Trainer.step: batch_size must be a number"):
        tr.step("4")
    other = gluon.Parameter("other", shape=(2,))
    other.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(ValueError, match="same set of contexts"):
        gluon.Trainer([ps[0], other], "sgd")


def test_two_contexts_sum_the_gradients() -> None:
    p = gluon.Parameter("w", shape=(2,))
    p.initialize(mx.init.One(), ctx=[mx.cpu(0), mx.cpu(1)])
    tr = gluon.Trainer([p], "sgd", {"learning_rate": 0.5})
    with mx.autograd.record():
        losses = [
            (d * mx.nd.array([1.0, 2.0], ctx=d.context) * (k + 1)).sum()
            for k, d in enumerate(p.list_data())
        ]
    mx.autograd.backward(losses)
    tr.step(1)
    for d in p.list_data():  # summed gradient [3, 6] applied to every copy
        np.testing.assert_allclose(d.asnumpy(), [1 - 1.5, 1 - 3.0])


def test_deferred_initialization() -> None:
    # the Trainer is made before the first forward pass fixes the shapes
    net = gluon.nn.Dense(2)
    net.initialize(mx.init.One())
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        loss = net(mx.nd.ones((3, 4))).sum()
    loss.backward()
    tr.step(3)
    # d loss / d w = 3 (three rows of ones), / batch_size 3 -> w = 1 - 0.1; the bias starts at 0
    np.testing.assert_allclose(net.weight.data().asnumpy(), np.full((2, 4), 0.9), rtol=1e-6)
    np.testing.assert_allclose(net.bias.data().asnumpy(), [-0.1, -0.1], rtol=1e-6)


def test_stale_gradients_raise_as_mxnet() -> None:
    # regression: Trainer.step updated parameters whose gradient no backward had written since
    # the last step (mxnet 1.9.1 raises UserWarning; with ignore_stale_grad=True it skips them).
    # The messages, the order of the checks and the weights after each step were printed by
    # mxnet 1.9.1 for the same program.
    a = gluon.nn.Dense(2, in_units=3, prefix="a_")
    b = gluon.nn.Dense(2, in_units=3, prefix="b_")
    for blk, v in ((a, 0.5), (b, -0.25)):
        blk.initialize(mx.init.Constant(v))
    params = gluon.ParameterDict()
    params.update(a.collect_params())
    params.update(b.collect_params())
    tr = gluon.Trainer(params, "sgd", {"learning_rate": 0.1})
    x = mx.nd.array(np.arange(6).reshape(2, 3) / 4)

    def backward() -> None:
        with mx.autograd.record():
            loss = a(x).sum()
        loss.backward()

    backward()
    stale = r"Gradient of Parameter `b_bias` on context cpu\(0\) has not been updated by backward"
    with pytest.raises(UserWarning, match=stale):
        tr.step(2)  # b is unused: mxnet 1.9.1 raises at b_bias, after a's flags were cleared
    tr.step(2, ignore_stale_grad=True)  # nothing fresh is left: nothing changes (mxnet 1.9.1)
    np.testing.assert_array_equal(a.weight.data().asnumpy(), np.full((2, 3), 0.5))
    np.testing.assert_array_equal(b.weight.data().asnumpy(), np.full((2, 3), -0.25))
    with pytest.raises(UserWarning, match=r"Parameter `a_bias`.*ignore_stale_grad=True"):
        tr.step(2)
    backward()
    b.weight.grad()[:] = 1  # a gradient written by hand is not fresh (mxnet 1.9.1)
    with pytest.raises(UserWarning, match=r"Parameter `b_bias`"):
        tr.step(2)
    backward()
    tr.step(2, ignore_stale_grad=True)  # a updated, b left alone
    want = 0.5 - 0.1 * np.arange(6).reshape(2, 3).sum(0) / 4 / 2
    np.testing.assert_allclose(a.weight.data().asnumpy(), np.tile(want, (2, 1)), rtol=1e-6)
    np.testing.assert_array_equal(b.weight.data().asnumpy(), np.full((2, 3), -0.25))
    b.collect_params().setattr("grad_req", "null")  # parameters without gradient are skipped
    backward()
    tr2 = gluon.Trainer(params, "sgd", {"learning_rate": 0.1})
    tr2.step(2)
    np.testing.assert_allclose(
        a.weight.data().asnumpy(), np.tile(2 * want - 0.5, (2, 1)), rtol=1e-6
    )  # a's second update

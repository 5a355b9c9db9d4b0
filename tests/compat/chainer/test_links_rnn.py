"""The recurrent links and functions of the chainer layer: StatelessGRU, StatefulGRU (GRU),
F.n_step_lstm/bilstm/gru/bigru/rnn/birnn and the links NStepLSTM, NStepBiLSTM, NStepGRU,
NStepBiGRU, NStepRNNTanh, NStepRNNReLU, NStepBiRNNTanh, NStepBiRNNReLU.

Each case seeds numpy's generator, builds the link or the weights, runs fixed inputs and
backpropagates ``sum(y * r)`` over every output; EXPECTED holds chainer 7.8.1's outputs and
gradients for the same code (the case functions ran unchanged under chainer 7.8.1,
2026-11-27), including the second derivatives of a GRU through
``chainer.grad(..., enable_double_backprop=True)``, and 3 Adam updates of a small
EmbedID/NStepBiGRU/NStepLSTM/Linear classifier. The gradients are also checked against float64
central differences.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradhub_compat.chainer.functions as F
import gradhub_compat.chainer.links as L
import numpy as np
import pytest
from compat.chainer.helpers import _assert_matches, _numeric, _rand, _run, _to_float64
from gradhub_compat import chainer

CASES: dict[str, Callable[[], dict[str, Any]]] = {}


def _case(fn: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    CASES[fn.__name__] = fn
    return fn


def _weights(n_layers: int, dirs: int, n_w: int, in_size: int, out: int, seed: int) -> Any:
    """ws, bs in chainer's layout: per layer and direction, n_w weights (the first half on
    the input, (out, in) in the first layer and (out, out * dirs) above, then (out, out))."""
    rng = np.random.RandomState(seed)
    ws, bs = [], []
    for layer in range(n_layers):
        for _ in range(dirs):
            w_in = in_size if layer == 0 else out * dirs
            ws.append(
                [
                    rng.uniform(-0.6, 0.6, (out, w_in if j < n_w // 2 else out)).astype(np.float32)
                    for j in range(n_w)
                ]
            )
            bs.append([rng.uniform(-0.3, 0.3, out).astype(np.float32) for _ in range(n_w)])
    return ws, bs


def _run_fn(fn: Callable[..., Any], hs: list[np.ndarray], ws: Any, bs: Any, xs: Any) -> Any:
    """fn(*hs, ws, bs, xs) on Variables; the outputs and the gradients of the sum of
    ``sum(out * r)`` over the outputs, for every input."""
    hv = [chainer.Variable(h) for h in hs]
    wv = [[chainer.Variable(w) for w in layer] for layer in ws]
    bv = [[chainer.Variable(b) for b in layer] for layer in bs]
    xv = [chainer.Variable(x) for x in xs]
    res = fn(*hv, wv, bv, xv)
    outs = [*res[:-1], *res[-1]]
    loss = sum(F.sum(o * _rand(o.shape, 200 + i)) for i, o in enumerate(outs))
    loss.backward()
    out: dict[str, Any] = {}
    for i, o in enumerate(outs):
        out[f"out{i}"] = o.array
    for i, v in enumerate(hv):
        out[f"gh{i}"] = v.grad
    for i, v in enumerate(xv):
        out[f"gx{i}"] = v.grad
    for i, layer in enumerate(wv):
        for j, v in enumerate(layer):
            out[f"gw{i}_{j}"] = v.grad
    for i, layer in enumerate(bv):
        for j, v in enumerate(layer):
            out[f"gb{i}_{j}"] = v.grad
    return out


_BATCHES = (3, 3, 2, 1)  # time-major steps, batch sizes not increasing


def _xs(in_size: int, seed: int) -> list[np.ndarray]:
    return [_rand((b, in_size), seed + t) for t, b in enumerate(_BATCHES)]


@_case
def stateless_gru() -> dict[str, Any]:
    np.random.seed(0)
    return _run(L.StatelessGRU(3, 2), _rand((2, 2), 1), _rand((2, 3), 2))


@_case
def stateful_gru_three_steps() -> dict[str, Any]:
    np.random.seed(1)
    link = L.GRU(3, 4)
    xs = [chainer.Variable(_rand((2, 3), 10 + t)) for t in range(3)]
    ys = [link(x) for x in xs]
    link.cleargrads()
    sum(F.sum(y * _rand(y.shape, 20 + t)) for t, y in enumerate(ys)).backward()
    out = {f"y{t}": y.array for t, y in enumerate(ys)}
    out.update({f"gx{t}": x.grad for t, x in enumerate(xs)})
    out.update({"g" + n: p.grad for n, p in sorted(link.namedparams())})
    return out


@_case
def stateful_gru_set_state_bias_init() -> dict[str, Any]:
    np.random.seed(2)
    link = L.StatefulGRU(2, 3, bias_init=0.5, inner_init=0.25)
    h0 = chainer.Variable(_rand((2, 3), 30))
    link.set_state(h0)
    y = link(chainer.Variable(_rand((2, 2), 31)))
    link.cleargrads()
    F.sum(y * _rand(y.shape, 32)).backward()
    return {"y": y.array, "gh0": h0.grad, **{"g" + n: p.grad for n, p in link.namedparams()}}


@_case
def stateless_gru_double_backward() -> dict[str, Any]:
    np.random.seed(3)
    link = L.StatelessGRU(2, 2)
    h, x = chainer.Variable(_rand((2, 2), 40)), chainer.Variable(_rand((2, 2), 41))
    y = link(h, x)
    loss = F.sum(y * _rand(y.shape, 42))
    gh, gx, gw = chainer.grad([loss], [h, x, link.U.W], enable_double_backprop=True)
    loss2 = F.sum(gh * _rand(gh.shape, 43)) + F.sum(gx * gx) + F.sum(gw * _rand(gw.shape, 44))
    params = [p for _, p in sorted(link.namedparams())]
    grads = chainer.grad([loss2], [h, x, *params])
    out = {"gh": gh.array, "gx": gx.array, "gW": gw.array}
    out["ggh"], out["ggx"] = grads[0].array, grads[1].array
    for (name, _), g in zip(sorted(link.namedparams()), grads[2:], strict=True):
        out["gg" + name] = g.array
    return out


@_case
def n_step_lstm_two_layers() -> dict[str, Any]:
    ws, bs = _weights(2, 1, 8, 3, 2, 50)
    hs = [_rand((2, 3, 2), 51), _rand((2, 3, 2), 52)]
    return _run_fn(
        lambda h, c, w, b, x: F.n_step_lstm(2, 0.0, h, c, w, b, x), hs, ws, bs, _xs(3, 53)
    )


@_case
def n_step_bilstm_two_layers_dropout_in_test_mode() -> dict[str, Any]:
    ws, bs = _weights(2, 2, 8, 2, 2, 60)
    hs = [_rand((4, 3, 2), 61), _rand((4, 3, 2), 62)]
    with chainer.using_config("train", False):
        return _run_fn(
            lambda h, c, w, b, x: F.n_step_bilstm(2, 0.5, h, c, w, b, x), hs, ws, bs, _xs(2, 63)
        )


@_case
def n_step_gru_two_layers() -> dict[str, Any]:
    ws, bs = _weights(2, 1, 6, 3, 2, 70)
    return _run_fn(
        lambda h, w, b, x: F.n_step_gru(2, 0.0, h, w, b, x),
        [_rand((2, 3, 2), 71)],
        ws,
        bs,
        _xs(3, 72),
    )


@_case
def n_step_bigru() -> dict[str, Any]:
    ws, bs = _weights(1, 2, 6, 2, 3, 80)
    return _run_fn(
        lambda h, w, b, x: F.n_step_bigru(1, 0.0, h, w, b, x),
        [_rand((2, 3, 3), 81)],
        ws,
        bs,
        _xs(2, 82),
    )


@_case
def n_step_rnn_tanh_two_layers() -> dict[str, Any]:
    ws, bs = _weights(2, 1, 2, 3, 2, 90)
    return _run_fn(
        lambda h, w, b, x: F.n_step_rnn(2, 0.0, h, w, b, x),
        [_rand((2, 3, 2), 91)],
        ws,
        bs,
        _xs(3, 92),
    )


@_case
def n_step_birnn_relu_two_layers() -> dict[str, Any]:
    ws, bs = _weights(2, 2, 2, 2, 2, 100)
    return _run_fn(
        lambda h, w, b, x: F.n_step_birnn(2, 0.0, h, w, b, x, activation="relu"),
        [_rand((4, 3, 2), 101)],
        ws,
        bs,
        _xs(2, 102),
    )


def _run_nstep(link: Any, hs: list[Any], lengths: tuple[int, ...], in_size: int) -> Any:
    """link(*hs, xs) on sequences of the given lengths (any order); the outputs and the
    gradients of ``sum(out * r)`` over the outputs, for the inputs and every parameter."""
    xs = [chainer.Variable(_rand((n, in_size), 300 + i)) for i, n in enumerate(lengths)]
    hv = [None if h is None else chainer.Variable(h) for h in hs]
    res = link(*hv, xs)
    outs = [*res[:-1], *res[-1]]
    link.cleargrads()
    sum(F.sum(o * _rand(o.shape, 400 + i)) for i, o in enumerate(outs)).backward()
    out = {f"out{i}": o.array for i, o in enumerate(outs)}
    out.update({f"gh{i}": v.grad for i, v in enumerate(hv) if v is not None})
    out.update({f"gx{i}": x.grad for i, x in enumerate(xs)})
    out.update({"g" + n: p.grad for n, p in sorted(link.namedparams())})
    return out


@_case
def nstep_lstm_link() -> dict[str, Any]:
    np.random.seed(110)
    return _run_nstep(L.NStepLSTM(2, 3, 2, 0.0), [None, None], (2, 4, 3), 3)


@_case
def nstep_bilstm_link_with_state() -> dict[str, Any]:
    np.random.seed(111)
    link = L.NStepBiLSTM(1, 2, 2, 0.0)
    return _run_nstep(link, [_rand((2, 3, 2), 112), _rand((2, 3, 2), 113)], (1, 3, 2), 2)


@_case
def nstep_gru_link() -> dict[str, Any]:
    np.random.seed(120)
    return _run_nstep(L.NStepGRU(1, 2, 3, 0.0), [_rand((1, 3, 3), 121)], (3, 1, 2), 2)


@_case
def nstep_bigru_link_two_layers() -> dict[str, Any]:
    np.random.seed(122)
    return _run_nstep(L.NStepBiGRU(2, 2, 2, 0.0, initial_bias=0.1), [None], (2, 2, 3), 2)


@_case
def nstep_rnn_links() -> dict[str, Any]:
    out = {}
    for k, cls in enumerate((L.NStepRNNTanh, L.NStepRNNReLU, L.NStepBiRNNTanh, L.NStepBiRNNReLU)):
        np.random.seed(130 + k)
        res = _run_nstep(cls(2, 2, 3, 0.0), [None], (3, 1, 2), 2)
        out.update({f"{cls.__name__}:{key}": v for key, v in res.items()})
    return out


@_case
def nstep_gru_and_lstm_classifier_adam_three_updates() -> dict[str, Any]:
    from gradhub_compat.chainer import optimizers

    class Net(chainer.Chain):
        def __init__(self) -> None:
            super().__init__()
            with self.init_scope():
                self.embed = L.EmbedID(5, 3)
                self.gru = L.NStepBiGRU(1, 3, 2, 0.0)
                self.lstm = L.NStepLSTM(1, 4, 3, 0.0)
                self.out = L.Linear(3, 2)

        def forward(self, ids: list[np.ndarray]) -> Any:
            _, hs = self.gru(None, [self.embed(i) for i in ids])
            hy, _, _ = self.lstm(None, None, hs)
            return self.out(hy[-1])

    np.random.seed(140)
    net = Net()
    optimizer = optimizers.Adam(alpha=0.05).setup(net)
    ids = [np.array(a, np.int32) for a in ([1, 2, 3], [4], [0, 2], [3, 3, 1, 4])]
    t = np.array([0, 1, 1, 0], np.int32)
    losses = []
    for _ in range(3):
        loss = F.softmax_cross_entropy(net(ids), t)
        net.cleargrads()
        loss.backward()
        optimizer.update()
        losses.append(loss.array)
    return {
        "losses": np.array(losses, np.float32),
        "out/W": net.out.W.array,
        "lstm/0/w5": net.lstm[0].w5.array,
        "gru/1/b3": net.gru[1].b3.array,
        "embed/W": net.embed.W.array,
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_chainer(name: str) -> None:
    _assert_matches(name, CASES[name](), EXPECTED[name])


@pytest.mark.parametrize(
    ("make", "in_size", "n_states"),
    [
        (lambda: L.NStepLSTM(2, 2, 2, 0.0), 2, 2),
        (lambda: L.NStepBiGRU(1, 2, 2, 0.0), 2, 1),
        (lambda: L.NStepBiRNNTanh(2, 2, 2, 0.0), 2, 1),
    ],
)
def test_nstep_gradients_against_finite_differences(
    make: Callable[[], Any], in_size: int, n_states: int
) -> None:
    np.random.seed(0)
    link = make()
    _to_float64(link)
    rng = np.random.RandomState(1)
    xs = [rng.randn(n, in_size) for n in (2, 3, 1)]
    hs = [rng.randn(link.n_layers * link.direction, 3, link.out_size) for _ in range(n_states)]
    rs: list[np.ndarray] = []

    def value(vs_h: list[Any], vs_x: list[Any]) -> Any:
        res = link(*vs_h, vs_x)
        outs = [*res[:-1], *res[-1]]
        while len(rs) < len(outs):
            rs.append(np.random.RandomState(10 + len(rs)).randn(*outs[len(rs)].shape))
        return sum(F.sum(o * r) for o, r in zip(outs, rs, strict=True))

    vh = [chainer.Variable(h) for h in hs]
    vx = [chainer.Variable(x) for x in xs]
    link.cleargrads()
    value(vh, vx).backward()

    def f() -> float:
        return float(value(hs, xs).array)

    pairs = [(v.array, v.grad) for v in (*vh, *vx)] + [(p.array, p.grad) for p in link.params()]
    for arr, grad in pairs:
        np.testing.assert_allclose(grad, _numeric(f, arr), rtol=1e-6, atol=1e-8)


def test_gru_gradients_against_finite_differences() -> None:
    np.random.seed(0)
    link = L.StatelessGRU(2, 3)
    _to_float64(link)
    rng = np.random.RandomState(1)
    h, x, r = rng.randn(2, 3), rng.randn(2, 2), rng.randn(2, 3)
    vh, vx = chainer.Variable(h), chainer.Variable(x)
    link.cleargrads()
    F.sum(link(vh, vx) * r).backward()

    def f() -> float:
        return float(np.sum(link(h, x).array * r))

    pairs = [(h, vh.grad), (x, vx.grad)] + [(p.array, p.grad) for p in link.params()]
    for arr, grad in pairs:
        np.testing.assert_allclose(grad, _numeric(f, arr), rtol=1e-6, atol=1e-8)


def test_parameters_and_layout() -> None:
    lstm = L.NStepBiLSTM(2, 3, 4, 0.1)
    names = [n for n, _ in lstm.namedparams()]
    assert len(names) == 2 * 2 * 16 and "/0/w0" in names and "/3/b7" in names
    assert lstm.ws[0][0].shape == (4, 3) and lstm.ws[0][4].shape == (4, 4)
    assert lstm.ws[2][0].shape == (4, 8) and lstm.ws[2][7].shape == (4, 4)
    assert lstm.ws[1][2] is lstm[1].w2 and lstm.n_cells == 2
    # chainer's draws: for each layer and direction, w0, b0, w1, b1, ... (LeCunNormal weights)
    np.random.seed(5)
    gru = L.NStepGRU(1, 2, 3, 0.0)
    state = np.random.RandomState(5)
    w0 = state.normal(0, np.sqrt(1 / 2), (3, 2)).astype(np.float32)
    w1 = state.normal(0, np.sqrt(1 / 2), (3, 2)).astype(np.float32)
    np.testing.assert_allclose(gru.ws[0][0].array, w0, rtol=1e-6)
    np.testing.assert_allclose(gru.ws[0][1].array, w1, rtol=1e-6)
    copy = gru.copy("copy")
    assert copy.ws[0][0] is copy[0].w0 and copy.ws[0][0] is not gru.ws[0][0]
    g = L.GRU(2, 3)
    assert [n for n, _ in g.namedparams()][:2] == ["/U/W", "/U/b"]
    assert g.h is None
    g(np.ones((1, 2), np.float32))
    assert g.h.shape == (1, 3)
    g.reset_state()
    assert g.h is None


def test_bad_input_raises() -> None:
    ws, bs = _weights(1, 1, 8, 3, 2, 0)
    h = np.zeros((1, 2, 2), np.float32)
    with pytest.raises(ValueError, match="Inconsistent input size"):
        F.n_step_lstm(1, 0.0, h, h, ws, bs, [np.ones((2, 4), np.float32)])
    with pytest.raises(ValueError, match="must not increase"):
        F.n_step_lstm(1, 0.0, h, h, ws, bs, [np.ones((1, 3), np.float32)] + [np.ones((2, 3))])
    with pytest.raises(ValueError, match="n_layers"):
        F.n_step_lstm(2, 0.0, h, h, ws, bs, [np.ones((2, 3), np.float32)])
    with pytest.raises(ValueError, match="must hold 6 arrays"):
        F.n_step_gru(1, 0.0, h, ws, bs, [np.ones((2, 3), np.float32)])
    with pytest.raises(TypeError, match="hx must have shape"):
        F.n_step_lstm(1, 0.0, h[0], h, ws, bs, [np.ones((2, 3), np.float32)])
    with pytest.raises(TypeError, match="cx"):
        F.n_step_bilstm(1, 0.0, h, None, ws, bs, [np.ones((2, 3), np.float32)])
    with pytest.raises(ValueError, match="Invalid activation"):
        F.n_step_rnn(1, 0.0, h, ws, bs, [np.ones((2, 3), np.float32)], activation="sigmoid")
    with pytest.raises(ValueError, match="train argument is not supported"):
        F.n_step_gru(1, 0.0, h, ws, bs, [np.ones((2, 3), np.float32)], train=True)
    with pytest.raises(ValueError, match="use_bi_direction is not supported"):
        L.NStepLSTM(1, 2, 2, 0.0, use_bi_direction=True)
    with pytest.raises(TypeError, match="list or tuple"):
        L.NStepGRU(1, 2, 2, 0.0)(None, np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"The length of GRU\.forward must be 1"):
        L.GRU(2, 2)(np.ones((1, 2), np.float32), np.ones((1, 2), np.float32))
    with pytest.raises(TypeError, match="set_state"):
        L.GRU(2, 2).set_state(np.ones((1, 2), np.float32))


# fmt: off
# --- EXPECTED (generated) ---
EXPECTED: dict[str, dict[str, tuple[tuple[int, ...], list[float]]]] = {  # chainer 7.8.1
    'stateless_gru': {
        'y': (
            (2, 2),
            [
                -0.15773107, -0.032782197, -0.78952348, -0.36643851
            ],
        ),
        'gx0': (
            (2, 2),
            [
                0.075205244, -0.37420803, -0.096737295, 0.49580002
            ],
        ),
        'gx1': (
            (2, 3),
            [
                -0.0074989414, -0.02373166, 0.080791913, -0.18037806, 0.3043609, -0.28782797
            ],
        ),
        'g/U/W': (
            (2, 2),
            [
                0.0073296227, 0.0083288709, -0.075817823, -0.057362776
            ],
        ),
        'g/U/b': (
            (2,),
            [
                -0.0096249208, 0.24350789
            ],
        ),
        'g/U_r/W': (
            (2, 2),
            [
                0.061783731, 0.025448563, 0.030771459, 0.0099735809
            ],
        ),
        'g/U_r/b': (
            (2,),
            [
                -0.060121346, -0.034393165
            ],
        ),
        'g/U_z/W': (
            (2, 2),
            [
                0.024809666, 0.0100748, -0.032416273, 0.054201074
            ],
        ),
        'g/U_z/b': (
            (2,),
            [
                -0.024379734, 0.14282772
            ],
        ),
        'g/W/W': (
            (2, 3),
            [
                0.001275808, -0.016516723, 0.013302453, -0.031563189, -0.0011456533, -0.10355724
            ],
        ),
        'g/W/b': (
            (2,),
            [
                -0.0096249208, 0.24350789
            ],
        ),
        'g/W_r/W': (
            (2, 3),
            [
                0.0077797137, 0.0079893749, 0.021282785, 0.0044431058, 0.0088967048,
                0.0097694686
            ],
        ),
        'g/W_r/b': (
            (2,),
            [
                -0.060121346, -0.034393165
            ],
        ),
        'g/W_z/W': (
            (2, 3),
            [
                0.0031543483, 0.0034707836, 0.0085018966, -0.01829746, -0.12717812, 0.0096025225
            ],
        ),
        'g/W_z/b': (
            (2,),
            [
                -0.024379734, 0.14282772
            ],
        ),
    },
    'stateful_gru_three_steps': {
        'y0': (
            (2, 4),
            [
                -0.078303911, 0.37750316, 0.15506543, -0.12775873, 0.079022937, -0.076292671,
                -0.0039802175, -0.21368979
            ],
        ),
        'y1': (
            (2, 4),
            [
                -0.34457648, 0.25351161, 0.075671434, -0.24216959, 0.14456369, 0.11723777,
                0.040032078, -0.19506732
            ],
        ),
        'y2': (
            (2, 4),
            [
                -0.36647576, -0.13115878, -0.2181038, -0.16779865, 0.021226913, 0.41416559,
                0.17360118, -0.10444068
            ],
        ),
        'gx0': (
            (2, 3),
            [
                -0.044220265, -0.26358181, 0.14985554, -0.6158939, -0.44220939, -0.14534955
            ],
        ),
        'gx1': (
            (2, 3),
            [
                -0.1365509, -0.021588501, -0.2557728, -0.51809251, 0.16785693, -0.11767612
            ],
        ),
        'gx2': (
            (2, 3),
            [
                -0.157837, 0.14561073, 0.25822055, -0.14432879, 0.095427401, 0.043173619
            ],
        ),
        'g/U/W': (
            (4, 4),
            [
                0.0025274344, -0.07223773, -0.025776919, 0.11129518, -0.016561985, -0.025691397,
                -0.017301431, 0.057436325, -0.025914213, 0.039295692, 0.01781347, 0.040038906,
                -0.025241202, 0.055161104, 0.0056537245, -0.097308934
            ],
        ),
        'g/U/b': (
            (4,),
            [
                -1.1244793, -0.69527948, -0.24626571, 0.69758022
            ],
        ),
        'g/U_r/W': (
            (4, 4),
            [
                -0.011105506, 0.0085082464, 0.0025384333, -0.003516102, -0.0028552143,
                0.0074169836, 0.0029064934, -0.0032917359, -0.0015270307, 0.0030190202,
                0.0011210025, -0.0016886971, 0.00056832645, -0.003453732, -0.0019535834,
                0.0086923093
            ],
        ),
        'g/U_r/b': (
            (4,),
            [
                0.014491761, 0.02137677, 0.0095926616, -0.043972801
            ],
        ),
        'g/U_z/W': (
            (4, 4),
            [
                -0.014269503, 0.093856737, 0.036719806, -0.031152865, -0.021308705, 0.011857463,
                0.0018636617, 0.031569701, -0.010914282, -0.0048217312, -0.0025330628,
                0.0086660497, -0.0079122903, 0.025873315, 0.0099370126, -0.017549809
            ],
        ),
        'g/U_z/b': (
            (4,),
            [
                0.23763448, -0.14569895, -0.051817611, 0.099809125
            ],
        ),
        'g/W/W': (
            (4, 3),
            [
                -0.59843612, 0.60206628, 0.49172252, -0.0097338706, 0.15991028, 0.08187557,
                -0.20050707, -0.44967291, 0.12039007, 0.077921182, -0.03753157, -0.13781293
            ],
        ),
        'g/W/b': (
            (4,),
            [
                -2.4543073, -0.62323207, -0.14294022, 1.0237085
            ],
        ),
        'g/W_r/W': (
            (4, 3),
            [
                -0.026191805, 0.015583093, -0.017993601, -0.01372252, -0.013806047,
                -0.0030958075, -0.0058733094, -0.0042068702, -0.0012176, -0.0014271489,
                0.012305818, 0.0030673258
            ],
        ),
        'g/W_r/b': (
            (4,),
            [
                0.014491761, 0.02137677, 0.0095926616, -0.043972801
            ],
        ),
        'g/W_z/W': (
            (4, 3),
            [
                -0.1735345, -0.29340857, 0.080916002, -0.013822787, -0.045353517, -0.021778829,
                0.037225038, -0.023544379, -0.014492823, -0.09583322, -0.010278035, 0.022181774
            ],
        ),
        'g/W_z/b': (
            (4,),
            [
                0.20538448, -0.03353864, 0.036820598, -0.0043381006
            ],
        ),
    },
    'stateful_gru_set_state_bias_init': {
        'y': (
            (2, 3),
            [
                0.30113798, 0.25446203, 0.89825469, -0.12500338, 0.80518317, 0.87656051
            ],
        ),
        'gh0': (
            (2, 3),
            [
                0.37056336, -0.032039866, 0.044014592, 0.55195153, 0.42720959, 0.1628795
            ],
        ),
        'g/U/W': (
            (3, 3),
            [
                -0.14988931, 0.27780378, 0.019782338, -0.08800742, 0.12151185, -0.050098315,
                -0.024491813, 0.039713141, -0.0051934705
            ],
        ),
        'g/U/b': (
            (3,),
            [
                0.83479786, -0.013319574, 0.067665368
            ],
        ),
        'g/U_r/W': (
            (3, 3),
            [
                0.01712922, -0.023114031, 0.008357483, -0.017789291, 0.024356419, -0.0082462234,
                0.0094532985, -0.012473853, 0.0049602157
            ],
        ),
        'g/U_r/b': (
            (3,),
            [
                -0.021438722, 0.025444675, -0.0092787836
            ],
        ),
        'g/U_z/W': (
            (3, 3),
            [
                -0.13990131, 0.19309694, -0.062942274, 0.008506299, -0.017740611, -0.0035652923,
                -0.02803215, 0.039374672, -0.011769471
            ],
        ),
        'g/U_z/b': (
            (3,),
            [
                0.21411467, -0.067266263, 0.049083669
            ],
        ),
        'g/W/W': (
            (3, 2),
            [
                0.11648986, 0.79298794, 0.12629583, -0.0050402498, 0.026939439, 0.065315738
            ],
        ),
        'g/W/b': (
            (3,),
            [
                0.83479786, -0.013319574, 0.067665368
            ],
        ),
        'g/W_r/W': (
            (3, 2),
            [
                -0.014318973, -0.021037819, 0.014434017, 0.024816766, -0.0082529979,
                -0.0092273755
            ],
        ),
        'g/W_r/b': (
            (3,),
            [
                -0.021438722, 0.025444675, -0.0092787836
            ],
        ),
        'g/W_z/W': (
            (3, 2),
            [
                0.11159022, 0.20824458, 0.00066574768, -0.063300215, 0.021510454, 0.047496226
            ],
        ),
        'g/W_z/b': (
            (3,),
            [
                0.21411467, -0.067266263, 0.049083669
            ],
        ),
    },
    'stateless_gru_double_backward': {
        'gh': (
            (2, 2),
            [
                -0.024022639, 0.36079478, 0.15517625, 0.10481797
            ],
        ),
        'gx': (
            (2, 2),
            [
                0.08636757, -0.17165145, -0.12397013, -0.17018712
            ],
        ),
        'gW': (
            (2, 2),
            [
                0.053180575, -0.043846644, -0.023961404, -0.35132012
            ],
        ),
        'ggh': (
            (2, 2),
            [
                0.015230568, -0.068557903, 0.43934324, 0.12193774
            ],
        ),
        'ggx': (
            (2, 2),
            [
                -0.2496839, 0.050789803, 0.2093545, 0.3263281
            ],
        ),
        'gg/U/W': (
            (2, 2),
            [
                -0.17129043, 0.0093273595, -0.12386739, 0.15831588
            ],
        ),
        'gg/U/b': (
            (2,),
            [
                -0.30111519, -0.1412158
            ],
        ),
        'gg/U_r/W': (
            (2, 2),
            [
                0.092156813, 0.050909411, 0.0065522334, -0.027306121
            ],
        ),
        'gg/U_r/b': (
            (2,),
            [
                -0.010348886, 0.031047285
            ],
        ),
        'gg/U_z/W': (
            (2, 2),
            [
                0.16218227, -0.047339827, -0.21377485, -0.0070520826
            ],
        ),
        'gg/U_z/b': (
            (2,),
            [
                0.13927779, 0.046357527
            ],
        ),
        'gg/W/W': (
            (2, 2),
            [
                -0.17989114, 0.22427632, 0.15290573, -0.039098918
            ],
        ),
        'gg/W/b': (
            (2,),
            [
                -0.30111519, -0.1412158
            ],
        ),
        'gg/W_r/W': (
            (2, 2),
            [
                0.074344464, 0.022114906, -0.011542826, -0.025180977
            ],
        ),
        'gg/W_r/b': (
            (2,),
            [
                -0.010348886, 0.031047285
            ],
        ),
        'gg/W_z/W': (
            (2, 2),
            [
                0.083296545, -0.10827266, 0.023866314, -0.14218734
            ],
        ),
        'gg/W_z/b': (
            (2,),
            [
                0.13927779, 0.046357527
            ],
        ),
    },
    'n_step_lstm_two_layers': {
        'out0': (
            (2, 3, 2),
            [
                0.079691432, 0.052309152, 0.078751288, 0.041239992, -0.15472297, -0.017076876,
                -0.12594175, 0.041798655, -0.079411514, 0.026637474, -0.10088069, 0.098687366
            ],
        ),
        'out1': (
            (2, 3, 2),
            [
                0.12340637, 0.13656792, 0.14188594, 0.10814391, -0.27420211, -0.037091359,
                -0.27402365, 0.082022399, -0.16570918, 0.051664799, -0.2161662, 0.19560501
            ],
        ),
        'out2': (
            (3, 2),
            [
                -0.16068822, 0.24079287, 0.15711196, 0.01676943, 0.00082469301, 0.17533715
            ],
        ),
        'out3': (
            (3, 2),
            [
                -0.16877688, 0.12666121, -0.0085362494, 0.027012603, -0.10088069, 0.098687366
            ],
        ),
        'out4': (
            (2, 2),
            [
                -0.13606995, 0.048469111, -0.079411514, 0.026637474
            ],
        ),
        'out5': (
            (1, 2),
            [
                -0.12594175, 0.041798655
            ],
        ),
        'gh0': (
            (2, 3, 2),
            [
                0.00053754559, 0.0045959051, 0.1087767, -0.039543368, -0.044928186,
                -0.024252132, 0.055663824, 0.08986596, -0.030746602, -0.12498398, -0.19253251,
                0.065375037
            ],
        ),
        'gh1': (
            (2, 3, 2),
            [
                0.010638224, -0.0155716, 0.14946255, 0.099953368, 0.32026812, -0.24243675,
                0.0080417022, -0.16925286, 0.16172205, 0.27589995, 0.5091024, -0.093017109
            ],
        ),
        'gx0': (
            (3, 3),
            [
                -0.011769394, 0.019545119, 0.00058051001, -0.038895175, 0.020882176, 0.07695324,
                -0.086553246, 0.15074289, 0.0066291764
            ],
        ),
        'gx1': (
            (3, 3),
            [
                -0.006432646, 0.010890062, 0.015626041, -0.054234441, 0.035670947, 0.17399053,
                -0.20696165, 0.31176767, -0.17961337
            ],
        ),
        'gx2': (
            (2, 3),
            [
                0.013879026, -0.012747701, 0.018984782, -0.05249339, 0.011197191, 0.16286674
            ],
        ),
        'gx3': (
            (1, 3),
            [
                0.080620162, -0.13987847, -0.007245481
            ],
        ),
        'gw0_0': (
            (2, 3),
            [
                0.0053032264, 0.045517415, 0.028571762, 0.084863573, -0.055376314, 0.07451418
            ],
        ),
        'gw0_1': (
            (2, 3),
            [
                -0.16575161, -0.014316164, -0.067329131, -0.067152709, 0.013509878, -0.032490648
            ],
        ),
        'gw0_2': (
            (2, 3),
            [
                0.13485929, 0.019205295, 0.1370901, -0.65043807, -0.39462894, -0.13737649
            ],
        ),
        'gw0_3': (
            (2, 3),
            [
                -0.017805317, -0.022061707, -0.013567331, -0.010976725, 0.0087223724,
                -0.0004661358
            ],
        ),
        'gw0_4': (
            (2, 2),
            [
                -0.0065962654, -0.045352794, -0.015109004, 0.010932865
            ],
        ),
        'gw0_5': (
            (2, 2),
            [
                0.10786322, -0.10334527, 0.01213799, -0.021110089
            ],
        ),
        'gw0_6': (
            (2, 2),
            [
                -0.31012198, 0.23287523, 0.33483526, -0.13495515
            ],
        ),
        'gw0_7': (
            (2, 2),
            [
                0.031679057, -0.013797086, -0.0053167585, -0.0049942443
            ],
        ),
        'gw1_0': (
            (2, 2),
            [
                0.046578851, 0.010103301, 0.0023403929, 0.0010589983
            ],
        ),
        'gw1_1': (
            (2, 2),
            [
                -0.036765754, 0.006518764, 0.00081222132, 0.01492727
            ],
        ),
        'gw1_2': (
            (2, 2),
            [
                -0.23828234, -0.059521787, -0.0093187187, 0.073315322
            ],
        ),
        'gw1_3': (
            (2, 2),
            [
                -0.0019253714, 0.0024414994, -0.023726637, 0.01181566
            ],
        ),
        'gw1_4': (
            (2, 2),
            [
                0.044654727, 0.0087541454, 0.016766023, 0.013265415
            ],
        ),
        'gw1_5': (
            (2, 2),
            [
                -0.019473568, -0.049390741, 0.066814475, -0.0041817557
            ],
        ),
        'gw1_6': (
            (2, 2),
            [
                -0.34130424, -0.11678386, 0.2691932, -0.063629225
            ],
        ),
        'gw1_7': (
            (2, 2),
            [
                -0.0034115501, -0.05396172, 0.017171606, -0.012167063
            ],
        ),
        'gb0_0': (
            (2,),
            [
                0.043508597, 0.062664852
            ],
        ),
        'gb0_1': (
            (2,),
            [
                -0.31270391, 0.017136257
            ],
        ),
        'gb0_2': (
            (2,),
            [
                0.86408794, -0.17135733
            ],
        ),
        'gb0_3': (
            (2,),
            [
                -0.026849614, 0.0092015937
            ],
        ),
        'gb0_4': (
            (2,),
            [
                0.043508597, 0.062664852
            ],
        ),
        'gb0_5': (
            (2,),
            [
                -0.31270391, 0.017136257
            ],
        ),
        'gb0_6': (
            (2,),
            [
                0.86408794, -0.17135733
            ],
        ),
        'gb0_7': (
            (2,),
            [
                -0.026849614, 0.0092015937
            ],
        ),
        'gb1_0': (
            (2,),
            [
                -0.18628372, 0.0036221407
            ],
        ),
        'gb1_1': (
            (2,),
            [
                0.040853575, -0.20499721
            ],
        ),
        'gb1_2': (
            (2,),
            [
                1.0122477, -0.15924978
            ],
        ),
        'gb1_3': (
            (2,),
            [
                -0.11323281, 0.016353035
            ],
        ),
        'gb1_4': (
            (2,),
            [
                -0.18628372, 0.0036221407
            ],
        ),
        'gb1_5': (
            (2,),
            [
                0.040853575, -0.20499721
            ],
        ),
        'gb1_6': (
            (2,),
            [
                1.0122477, -0.15924978
            ],
        ),
        'gb1_7': (
            (2,),
            [
                -0.11323281, 0.016353035
            ],
        ),
    },
    'n_step_bilstm_two_layers_dropout_in_test_mode': {
        'out0': (
            (4, 3, 2),
            [
                0.036393188, -0.24625921, 0.0065323766, -0.14391916, -0.15338567, -0.19339453,
                0.060533509, 0.046258114, 0.13487478, 0.12914689, 0.11735353, 0.032477155,
                -0.025719728, -0.17802049, -0.012657939, -0.05886941, -0.13218193, -0.070064656,
                0.043504994, 0.0044770506, 0.13239078, 0.025309999, 0.14041695, 0.020725913
            ],
        ),
        'out1': (
            (4, 3, 2),
            [
                0.074564144, -0.44449151, 0.013365675, -0.26795793, -0.30687469, -0.38752872,
                0.12066737, 0.082364917, 0.30925393, 0.30630538, 0.25094551, 0.074628964,
                -0.062352024, -0.38198239, -0.032250784, -0.12347946, -0.32559878, -0.13796568,
                0.10054471, 0.0074793193, 0.28508779, 0.046021573, 0.30682603, 0.034504063
            ],
        ),
        'out2': (
            (3, 4),
            [
                0.20398411, -0.026785702, 0.043504994, 0.0044770506, 0.10411198, -0.14407086,
                0.13239078, 0.025309999, -0.12771551, 0.13170129, 0.14041695, 0.020725913
            ],
        ),
        'out3': (
            (3, 4),
            [
                0.10737079, -0.11313584, 0.064094514, -0.02273605, 0.02286889, -0.073765688,
                0.13225164, 0.089116618, -0.13218193, -0.070064656, 0.23280536, 0.093335986
            ],
        ),
        'out4': (
            (2, 4),
            [
                0.027327057, -0.14827941, 0.081169739, -0.1005084, -0.012657939, -0.05886941,
                0.31451491, 0.2614755
            ],
        ),
        'out5': (
            (1, 4),
            [
                -0.025719728, -0.17802049, -0.066504419, -0.25774938
            ],
        ),
        'gh0': (
            (4, 3, 2),
            [
                -0.001572572, 0.00098095345, -0.026265312, 0.1644081, -0.024279999, 0.12580341,
                0.010423123, -0.010771276, -0.014800278, -0.024584213, 0.040617794, 0.036221616,
                0.084102668, 0.069736809, 0.11346178, 0.066949449, 0.042401042, -0.052750524,
                0.0073831119, -0.15661684, -0.024098845, -0.035044342, 0.052301016, -0.183146
            ],
        ),
        'gh1': (
            (4, 3, 2),
            [
                -0.067559622, 0.085639164, 0.15522569, 0.18006991, 0.48023936, -0.13077742,
                -0.016769484, -0.023373993, -0.048130374, -0.0093630496, 0.092488594,
                -0.022296259, 0.16994515, -0.08189109, 0.34483114, 0.01474339, 0.2960242,
                -0.0030905243, 0.14661001, 0.35055786, 0.025002806, 0.054669384, 0.24948277,
                0.036906064
            ],
        ),
        'gx0': (
            (3, 2),
            [
                0.14940365, 0.11603366, 0.20964466, 0.10120668, -0.24008685, -0.2858389
            ],
        ),
        'gx1': (
            (3, 2),
            [
                0.090522423, 0.080596738, 0.069173545, 0.097549446, -0.36906633, -0.49616531
            ],
        ),
        'gx2': (
            (2, 2),
            [
                0.075394981, 0.046278842, 0.035465539, 0.02389352
            ],
        ),
        'gx3': (
            (1, 2),
            [
                0.091767304, 0.13557418
            ],
        ),
        'gw0_0': (
            (2, 2),
            [
                0.10698292, 0.026702981, 0.050744005, 0.079119369
            ],
        ),
        'gw0_1': (
            (2, 2),
            [
                -0.080092296, 0.011845867, 0.011736478, -0.0018917101
            ],
        ),
        'gw0_2': (
            (2, 2),
            [
                -0.28615919, -0.18487307, -0.2599605, -0.17987521
            ],
        ),
        'gw0_3': (
            (2, 2),
            [
                -0.0032089334, 0.005357272, -0.0024807584, -0.033018466
            ],
        ),
        'gw0_4': (
            (2, 2),
            [
                -0.1120799, 0.13606791, 0.025363069, -0.05013109
            ],
        ),
        'gw0_5': (
            (2, 2),
            [
                0.095417604, -0.047789291, 0.0072693154, -0.058031678
            ],
        ),
        'gw0_6': (
            (2, 2),
            [
                0.28038633, -0.3564409, 0.094493046, 0.096737675
            ],
        ),
        'gw0_7': (
            (2, 2),
            [
                0.023395931, 0.016018622, -0.032426901, 0.00089185685
            ],
        ),
        'gw1_0': (
            (2, 2),
            [
                0.050498039, 0.01781207, 0.029393701, 0.0017656693
            ],
        ),
        'gw1_1': (
            (2, 2),
            [
                -0.019677375, -0.0082062501, -0.0080638286, -0.016237957
            ],
        ),
        'gw1_2': (
            (2, 2),
            [
                0.058152396, 0.054507624, 0.24998966, 0.096109204
            ],
        ),
        'gw1_3': (
            (2, 2),
            [
                -0.00075878203, 0.0051851827, -0.074290149, -0.01251821
            ],
        ),
        'gw1_4': (
            (2, 2),
            [
                -0.0059511107, -0.021048114, 0.005428955, -0.0029754932
            ],
        ),
        'gw1_5': (
            (2, 2),
            [
                -0.023602119, -0.0040807957, 0.003302454, -0.010900702
            ],
        ),
        'gw1_6': (
            (2, 2),
            [
                -0.08171089, -0.090754256, -0.047173776, -0.012890837
            ],
        ),
        'gw1_7': (
            (2, 2),
            [
                -0.0069444603, -0.01226582, -0.0053094141, -0.00087362551
            ],
        ),
        'gw2_0': (
            (2, 4),
            [
                0.021131435, 0.040132776, -0.025556723, 0.0090017263, -0.0063074194,
                0.019828696, -0.0062712003, 0.0058038402
            ],
        ),
        'gw2_1': (
            (2, 4),
            [
                -0.024007604, 0.011257593, 0.017782865, 0.009083584, -0.001005568, 0.0022872393,
                -0.0011428804, -0.0054338253
            ],
        ),
        'gw2_2': (
            (2, 4),
            [
                -0.17132032, -0.27768481, 0.20131058, -0.032160833, 0.051656302, -0.13722149,
                0.022034883, 0.031350378
            ],
        ),
        'gw2_3': (
            (2, 4),
            [
                0.016208552, 0.019581843, 0.0011682969, 0.0064391918, -0.0094965994,
                0.0029576528, 0.0038852813, -0.00065137446
            ],
        ),
        'gw2_4': (
            (2, 2),
            [
                -0.019532539, 0.02713497, 0.029595312, -0.011250662
            ],
        ),
        'gw2_5': (
            (2, 2),
            [
                0.048872408, 0.097506598, -0.026294168, 0.013248892
            ],
        ),
        'gw2_6': (
            (2, 2),
            [
                0.18760033, 0.0042877942, -0.16419786, 0.040134482
            ],
        ),
        'gw2_7': (
            (2, 2),
            [
                -0.049646288, 0.089017898, 0.0012757704, 0.019750755
            ],
        ),
        'gw3_0': (
            (2, 4),
            [
                -0.0037459545, -0.040746037, 0.01859547, 0.00854785, -0.016260443,
                -0.0090528019, 0.0084613441, 0.00052664347
            ],
        ),
        'gw3_1': (
            (2, 4),
            [
                -0.036060203, -0.086731695, 0.028772192, 0.029985094, 0.013410598, 0.057696294,
                -0.052502632, 0.041983251
            ],
        ),
        'gw3_2': (
            (2, 4),
            [
                0.013510454, -0.40971741, 0.17751281, 0.069447912, -0.46482363, -0.2377353,
                0.179629, -0.032813936
            ],
        ),
        'gw3_3': (
            (2, 4),
            [
                -0.018346857, -0.046669658, 0.021417726, 0.012218272, -0.005172831, 0.015732285,
                -0.016478823, 0.019077912
            ],
        ),
        'gw3_4': (
            (2, 2),
            [
                0.017283704, -0.012084639, 0.0091724917, -0.020854892
            ],
        ),
        'gw3_5': (
            (2, 2),
            [
                0.11017407, -0.032040611, 0.16120352, -0.05041267
            ],
        ),
        'gw3_6': (
            (2, 2),
            [
                0.090736791, 0.13925175, -0.15321252, -0.12174854
            ],
        ),
        'gw3_7': (
            (2, 2),
            [
                0.065185189, 0.018791698, 0.06423986, -0.017794205
            ],
        ),
        'gb0_0': (
            (2,),
            [
                -0.20333257, -0.057595979
            ],
        ),
        'gb0_1': (
            (2,),
            [
                0.11030798, 0.042424917
            ],
        ),
        'gb0_2': (
            (2,),
            [
                0.91880381, 0.52044916
            ],
        ),
        'gb0_3': (
            (2,),
            [
                0.0066824369, 0.033261992
            ],
        ),
        'gb0_4': (
            (2,),
            [
                -0.20333257, -0.057595979
            ],
        ),
        'gb0_5': (
            (2,),
            [
                0.11030798, 0.042424917
            ],
        ),
        'gb0_6': (
            (2,),
            [
                0.91880381, 0.52044916
            ],
        ),
        'gb0_7': (
            (2,),
            [
                0.0066824369, 0.033261992
            ],
        ),
        'gb1_0': (
            (2,),
            [
                -0.061104216, -0.080391876
            ],
        ),
        'gb1_1': (
            (2,),
            [
                0.0095224623, 0.0034848861
            ],
        ),
        'gb1_2': (
            (2,),
            [
                -0.37906215, -0.69551808
            ],
        ),
        'gb1_3': (
            (2,),
            [
                0.010585597, 0.085285589
            ],
        ),
        'gb1_4': (
            (2,),
            [
                -0.061104216, -0.080391876
            ],
        ),
        'gb1_5': (
            (2,),
            [
                0.0095224623, 0.0034848861
            ],
        ),
        'gb1_6': (
            (2,),
            [
                -0.37906215, -0.69551808
            ],
        ),
        'gb1_7': (
            (2,),
            [
                0.010585597, 0.085285589
            ],
        ),
        'gb2_0': (
            (2,),
            [
                -0.2017857, -0.07620281
            ],
        ),
        'gb2_1': (
            (2,),
            [
                0.12745042, -0.016361788
            ],
        ),
        'gb2_2': (
            (2,),
            [
                1.6345615, 0.60869133
            ],
        ),
        'gb2_3': (
            (2,),
            [
                -0.019486014, 0.055725075
            ],
        ),
        'gb2_4': (
            (2,),
            [
                -0.20178571, -0.076202802
            ],
        ),
        'gb2_5': (
            (2,),
            [
                0.12745044, -0.01636179
            ],
        ),
        'gb2_6': (
            (2,),
            [
                1.6345617, 0.60869128
            ],
        ),
        'gb2_7': (
            (2,),
            [
                -0.01948601, 0.055725072
            ],
        ),
        'gb3_0': (
            (2,),
            [
                0.18905655, 0.075632915
            ],
        ),
        'gb3_1': (
            (2,),
            [
                0.39275208, -0.28741777
            ],
        ),
        'gb3_2': (
            (2,),
            [
                1.6527953, 1.8335471
            ],
        ),
        'gb3_3': (
            (2,),
            [
                0.18964368, -0.05635548
            ],
        ),
        'gb3_4': (
            (2,),
            [
                0.18905655, 0.075632915
            ],
        ),
        'gb3_5': (
            (2,),
            [
                0.39275208, -0.28741777
            ],
        ),
        'gb3_6': (
            (2,),
            [
                1.6527952, 1.8335471
            ],
        ),
        'gb3_7': (
            (2,),
            [
                0.18964368, -0.05635548
            ],
        ),
    },
    'n_step_gru_two_layers': {
        'out0': (
            (2, 3, 2),
            [
                -0.06297455, -0.31792438, 0.33978173, -0.29689693, 0.56494349, -0.22822036,
                0.085734576, 0.61442238, -0.13985096, 0.23026982, -0.33632758, 0.45617151
            ],
        ),
        'out1': (
            (3, 2),
            [
                0.3232083, 0.83834124, 0.22038384, -0.14231071, -0.40303549, 0.43808264
            ],
        ),
        'out2': (
            (3, 2),
            [
                0.19867969, 0.73002392, -0.043030694, 0.08432579, -0.33632758, 0.45617151
            ],
        ),
        'out3': (
            (2, 2),
            [
                0.1485977, 0.66195399, -0.13985096, 0.23026982
            ],
        ),
        'out4': (
            (1, 2),
            [
                0.085734576, 0.61442238
            ],
        ),
        'gh0': (
            (2, 3, 2),
            [
                0.056126561, -0.024867173, 0.058793783, -0.27490276, 0.18844782, -0.10596028,
                -0.47903642, 0.0482875, 0.56586844, 1.3573434, 0.70516294, 0.2111353
            ],
        ),
        'gx0': (
            (3, 3),
            [
                0.00030842648, -0.018653734, -0.054671254, -0.038777985, 0.058437455,
                0.036916465, -0.030679816, 0.062529974, 0.05584332
            ],
        ),
        'gx1': (
            (3, 3),
            [
                -0.017952239, 0.0079065952, -0.030406024, -0.026620317, 0.032042209,
                0.015739812, -0.052091289, 0.19927083, 0.19030043
            ],
        ),
        'gx2': (
            (2, 3),
            [
                0.0061818692, 0.020109212, -0.03159146, 0.0075634117, 0.0093165422, -0.022215365
            ],
        ),
        'gx3': (
            (1, 3),
            [
                -0.026034106, -0.006136097, -0.15777731
            ],
        ),
        'gw0_0': (
            (2, 3),
            [
                -0.013467971, -0.0107728, 0.028698435, -0.012760089, -0.0036864458, 0.0056626163
            ],
        ),
        'gw0_1': (
            (2, 3),
            [
                -0.044226885, 0.0294916, 0.028539188, 0.16445966, -0.10250356, -0.13296467
            ],
        ),
        'gw0_2': (
            (2, 3),
            [
                -0.17544229, -0.27623507, 0.55037135, 0.25312653, 0.23928446, -0.41066021
            ],
        ),
        'gw0_3': (
            (2, 2),
            [
                0.020244695, -0.0087649589, 0.043425191, 0.01800856
            ],
        ),
        'gw0_4': (
            (2, 2),
            [
                0.080674909, 0.032983035, -0.20692696, -0.17289723
            ],
        ),
        'gw0_5': (
            (2, 2),
            [
                0.016656864, -0.14265686, -0.26800233, -0.00085007772
            ],
        ),
        'gw1_0': (
            (2, 2),
            [
                0.017527103, 0.0082859024, 0.056636367, -0.029200468
            ],
        ),
        'gw1_1': (
            (2, 2),
            [
                0.16987193, -0.10629921, -0.32710612, 0.24866633
            ],
        ),
        'gw1_2': (
            (2, 2),
            [
                0.99667013, -0.28444958, 1.2727063, -0.84173357
            ],
        ),
        'gw1_3': (
            (2, 2),
            [
                -0.040564422, 0.044640534, -0.011448836, 0.015273706
            ],
        ),
        'gw1_4': (
            (2, 2),
            [
                0.18202052, -0.16152254, -0.28900999, 0.20426983
            ],
        ),
        'gw1_5': (
            (2, 2),
            [
                -0.091312498, 0.29607174, 0.32286984, -0.18398833
            ],
        ),
        'gb0_0': (
            (2,),
            [
                0.061154723, 0.052416533
            ],
        ),
        'gb0_1': (
            (2,),
            [
                0.014762887, -0.21040234
            ],
        ),
        'gb0_2': (
            (2,),
            [
                1.0872227, -1.4912833
            ],
        ),
        'gb0_3': (
            (2,),
            [
                0.061154723, 0.052416533
            ],
        ),
        'gb0_4': (
            (2,),
            [
                0.014762887, -0.21040234
            ],
        ),
        'gb0_5': (
            (2,),
            [
                0.48387814, -0.54808629
            ],
        ),
        'gb1_0': (
            (2,),
            [
                0.033023961, 0.12037264
            ],
        ),
        'gb1_1': (
            (2,),
            [
                0.31310746, -0.67763841
            ],
        ),
        'gb1_2': (
            (2,),
            [
                1.9782784, 2.6440477
            ],
        ),
        'gb1_3': (
            (2,),
            [
                0.033023961, 0.12037264
            ],
        ),
        'gb1_4': (
            (2,),
            [
                0.31310746, -0.67763841
            ],
        ),
        'gb1_5': (
            (2,),
            [
                1.1222222, 1.5880208
            ],
        ),
    },
    'n_step_bigru': {
        'out0': (
            (2, 3, 3),
            [
                0.10271494, 0.21291168, -0.2300117, 0.29348233, 0.15124533, -0.35781831,
                -0.011970124, 0.26361176, -0.18730296, -0.044119436, -0.40551478, -0.078100696,
                0.20166673, -0.10896479, 0.1353917, 0.20027313, -0.20703685, 0.095179237
            ],
        ),
        'out1': (
            (3, 6),
            [
                -0.15466399, 0.0041744411, 0.081060261, -0.044119436, -0.40551478, -0.078100696,
                0.56187761, 0.35143486, -0.39855587, 0.20166673, -0.10896479, 0.1353917,
                0.0025738627, -0.038744472, -0.35980001, 0.20027313, -0.20703685, 0.095179237
            ],
        ),
        'out2': (
            (3, 6),
            [
                0.010430746, 0.07205347, -0.22232233, -0.0020849817, -0.39506349, -0.098536476,
                0.33443755, 0.26231474, -0.27044299, 0.18509194, -0.07529135, 0.047372594,
                -0.011970124, 0.26361176, -0.18730296, 0.29980093, -0.17025599, 0.14609137
            ],
        ),
        'out3': (
            (2, 6),
            [
                0.12345114, 0.073347583, -0.36114967, 0.088810146, -0.37120092, -0.11167684,
                0.29348233, 0.15124533, -0.35781831, 0.13804433, -0.12328181, -0.2528111
            ],
        ),
        'out4': (
            (1, 6),
            [
                0.10271494, 0.21291168, -0.2300117, 0.40695417, -0.10581736, 0.032348368
            ],
        ),
        'gh0': (
            (2, 3, 3),
            [
                -0.17677425, -0.21135804, 0.10212128, -0.11359306, -0.53053641, -0.18265718,
                0.015566498, 0.0099837631, -0.14355062, 0.92130941, 0.18949404, 0.055520952,
                0.14752443, 0.2429111, 0.12895201, 0.40495932, 0.17301036, 0.086543627
            ],
        ),
        'gx0': (
            (3, 2),
            [
                0.65244842, -0.074216709, -0.028606676, 0.13713874, 0.30719256, -0.084359333
            ],
        ),
        'gx1': (
            (3, 2),
            [
                0.61781919, 0.088211067, 0.24515817, 0.00070793554, 0.47411174, -0.081024401
            ],
        ),
        'gx2': (
            (2, 2),
            [
                0.045519948, 0.2897881, 0.20167747, -0.11503728
            ],
        ),
        'gx3': (
            (1, 2),
            [
                0.57608569, 0.092491016
            ],
        ),
        'gw0_0': (
            (3, 2),
            [
                -0.039001122, -0.024148077, 0.045368567, -0.0065239705, 0.017608609, -0.10241738
            ],
        ),
        'gw0_1': (
            (3, 2),
            [
                0.10022438, 0.063339099, -0.099262007, 0.011633927, -0.019437954, 0.2125944
            ],
        ),
        'gw0_2': (
            (3, 2),
            [
                -0.37781698, -0.19112152, 0.22194564, 0.046899065, 0.31677473, -0.52146244
            ],
        ),
        'gw0_3': (
            (3, 3),
            [
                0.0095360447, -0.0013546525, 0.011208838, 0.032540694, 0.020771665, -0.03811793,
                0.02742305, -0.019470766, 0.10050419
            ],
        ),
        'gw0_4': (
            (3, 3),
            [
                -0.066180512, -0.048288357, 0.04205969, -0.068566948, -0.053309776, 0.08209081,
                -0.075773045, 0.015969045, -0.11962486
            ],
        ),
        'gw0_5': (
            (3, 3),
            [
                0.095052354, 0.076385036, -0.20497406, -0.021300033, -0.011516072, -0.059000283,
                -0.059198983, -0.15978242, 0.41898176
            ],
        ),
        'gw1_0': (
            (3, 2),
            [
                0.047735997, -0.015872752, -0.0082312785, 0.025511179, -0.01628248, 0.001552896
            ],
        ),
        'gw1_1': (
            (3, 2),
            [
                -0.33079305, 0.031311315, -0.29415292, 0.0075548314, 0.024499826, 0.00059051509
            ],
        ),
        'gw1_2': (
            (3, 2),
            [
                -1.0527635, 0.31105688, -0.63140726, 1.1420528, 0.14630437, 0.2458283
            ],
        ),
        'gw1_3': (
            (3, 3),
            [
                -0.033338007, 0.033563312, 0.014339412, 0.050444283, -0.0378277, -0.025504647,
                0.0027120879, 0.010629958, -0.0037329067
            ],
        ),
        'gw1_4': (
            (3, 3),
            [
                0.2045044, -0.037152231, -0.051516939, 0.098016962, 0.038568258, -0.017964263,
                -0.065172993, 0.035679638, 0.043599483
            ],
        ),
        'gw1_5': (
            (3, 3),
            [
                0.44787261, -0.51197398, -0.16174348, 0.45114952, -0.31298965, -0.16094971,
                0.097440451, -0.15788367, -0.10292278
            ],
        ),
        'gb0_0': (
            (3,),
            [
                0.070033945, -0.063411109, -0.13336146
            ],
        ),
        'gb0_1': (
            (3,),
            [
                -0.069577456, 0.15953149, 0.29390547
            ],
        ),
        'gb0_2': (
            (3,),
            [
                0.88799965, -0.8906188, -0.85334247
            ],
        ),
        'gb0_3': (
            (3,),
            [
                0.070033945, -0.063411109, -0.13336146
            ],
        ),
        'gb0_4': (
            (3,),
            [
                -0.069577456, 0.15953149, 0.29390547
            ],
        ),
        'gb0_5': (
            (3,),
            [
                0.47093174, -0.48840863, -0.41665775
            ],
        ),
        'gb1_0': (
            (3,),
            [
                -0.12612978, 0.15805465, -0.0046766652
            ],
        ),
        'gb1_1': (
            (3,),
            [
                0.4890973, 0.1891769, -0.18079208
            ],
        ),
        'gb1_2': (
            (3,),
            [
                3.7143116, 3.9719038, 0.8559683
            ],
        ),
        'gb1_3': (
            (3,),
            [
                -0.12612978, 0.15805465, -0.0046766652
            ],
        ),
        'gb1_4': (
            (3,),
            [
                0.4890973, 0.1891769, -0.18079208
            ],
        ),
        'gb1_5': (
            (3,),
            [
                1.7215673, 1.4428279, 0.42832679
            ],
        ),
    },
    'n_step_rnn_tanh_two_layers': {
        'out0': (
            (2, 3, 2),
            [
                0.7206012, -0.30224326, 0.032551207, 0.06841895, -0.56745398, 0.14673018,
                -0.36899701, 0.18338265, -0.11830719, -0.010336746, 0.19328608, -0.35527322
            ],
        ),
        'out1': (
            (3, 2),
            [
                0.21982066, -0.24309811, -0.013092276, 0.2743035, -0.17039321, 0.26255259
            ],
        ),
        'out2': (
            (3, 2),
            [
                0.036739405, -0.13398737, 0.15234342, -0.25837049, 0.19328608, -0.35527322
            ],
        ),
        'out3': (
            (2, 2),
            [
                -0.10002515, -0.052477982, -0.11830719, -0.010336746
            ],
        ),
        'out4': (
            (1, 2),
            [
                -0.36899701, 0.18338265
            ],
        ),
        'gh0': (
            (2, 3, 2),
            [
                -0.05111672, 0.047952257, -0.020052848, 0.014115974, 0.062153473, -0.049515232,
                -0.13088191, -0.31283489, 0.26889062, 0.073616236, 0.15743232, 0.33539546
            ],
        ),
        'gx0': (
            (3, 3),
            [
                -0.14563547, -0.11378361, 0.18979329, -0.0038148789, -0.033164367, 0.01909937,
                0.077263243, 0.1168731, -0.12713912
            ],
        ),
        'gx1': (
            (3, 3),
            [
                -0.12263779, -0.035932314, 0.1317936, 0.16574763, 0.015300611, -0.16255304,
                -0.50530797, 0.24287038, 0.3600581
            ],
        ),
        'gx2': (
            (2, 3),
            [
                0.23131417, 0.18040296, -0.30130041, -0.37637192, -0.24364498, 0.46689564
            ],
        ),
        'gx3': (
            (1, 3),
            [
                -0.4129898, -0.0084675997, 0.3911489
            ],
        ),
        'gw0_0': (
            (2, 3),
            [
                -0.2030485, -0.1744926, -0.09578979, -0.44070345, -0.19193339, -0.2448153
            ],
        ),
        'gw0_1': (
            (2, 2),
            [
                -0.41106251, -0.2372573, 0.062281743, -0.085728765
            ],
        ),
        'gw1_0': (
            (2, 2),
            [
                0.18058801, -0.019789398, -0.077304065, 0.18796934
            ],
        ),
        'gw1_1': (
            (2, 2),
            [
                0.7528522, 0.092313111, 0.41943029, 0.68123066
            ],
        ),
        'gb0_0': (
            (2,),
            [
                0.99110645, -1.4005034
            ],
        ),
        'gb0_1': (
            (2,),
            [
                0.99110645, -1.4005034
            ],
        ),
        'gb1_0': (
            (2,),
            [
                4.1996894, 3.6368256
            ],
        ),
        'gb1_1': (
            (2,),
            [
                4.1996894, 3.6368256
            ],
        ),
    },
    'n_step_birnn_relu_two_layers': {
        'out0': (
            (4, 3, 2),
            [
                0.042874724, 0, 0, 0, 0, 0, 0.15103251, 0.55568588, 0, 0.40836751, 0,
                0.52428621, 0.39343941, 0, 0.18042354, 0, 0, 0, 0, 0, 0, 0, 0, 0
            ],
        ),
        'out1': (
            (3, 4),
            [
                0.479505, 0.45553976, 0, 0, 0, 0, 0, 0, 0.66389024, 0.14649078, 0, 0
            ],
        ),
        'out2': (
            (3, 4),
            [
                0, 0, 0, 0.19815353, 0.036089584, 0, 0, 0, 0, 0, 0, 0
            ],
        ),
        'out3': (
            (2, 4),
            [
                0.029926106, 0, 0, 0.16914237, 0.18042354, 0, 0, 0.33900529
            ],
        ),
        'out4': (
            (1, 4),
            [
                0.39343941, 0, 0, 0.056548253
            ],
        ),
        'gh0': (
            (4, 3, 2),
            [
                -0.0065855733, -0.012567723, 0.0040298062, 0.0030790658, 0.080041468,
                0.15274888, -0.21576744, 0.22710387, -0.55495209, 0.48968795, 0.041696277,
                -0.081025958, 0.090124719, 0.34165591, 0, 0, 0.5518716, -0.17072734, 0.75489253,
                0.61161876, 0.46906728, 0.38004127, 0, 0
            ],
        ),
        'gx0': (
            (3, 2),
            [
                -0.45812693, 0.51566321, -0.32447436, 0.55524868, -0.3945356, 0.77488083
            ],
        ),
        'gx1': (
            (3, 2),
            [
                -0.096788965, -0.70204663, 0.023035252, -0.31212962, -0.055627897, -0.35667524
            ],
        ),
        'gx2': (
            (2, 2),
            [
                -0.026591873, -0.32614189, 0.52587032, -0.076322675
            ],
        ),
        'gx3': (
            (1, 2),
            [
                0.20581964, 0.33246592
            ],
        ),
        'gw0_0': (
            (2, 2),
            [
                0.28152511, 0.30727416, 0.077015921, 0.20843251
            ],
        ),
        'gw0_1': (
            (2, 2),
            [
                -0.011054689, -0.013981315, 0.11947594, 0.25632358
            ],
        ),
        'gw1_0': (
            (2, 2),
            [
                -0.36721951, -0.032074302, 0.02576153, 2.2220559
            ],
        ),
        'gw1_1': (
            (2, 2),
            [
                0.89244795, 0.04209426, 0.26525432, 1.5995427
            ],
        ),
        'gw2_0': (
            (2, 4),
            [
                0.069565453, -0.21476518, 0.98309433, -0.42354566, 0, -0.20751029, 0.074876122,
                -0.0017949279
            ],
        ),
        'gw2_1': (
            (2, 2),
            [
                1.0542423, -0.5537107, 0.1250781, 0.17365214
            ],
        ),
        'gw3_0': (
            (2, 4),
            [
                0, 0, 0, 0, 0.23288479, 0, 1.8733695, 0.23333001
            ],
        ),
        'gw3_1': (
            (2, 2),
            [
                0, 0, 0.91151756, -0.35659564
            ],
        ),
        'gb0_0': (
            (2,),
            [
                -0.6066696, 0.32540709
            ],
        ),
        'gb0_1': (
            (2,),
            [
                -0.6066696, 0.32540709
            ],
        ),
        'gb1_0': (
            (2,),
            [
                0.72995204, 0.78698361
            ],
        ),
        'gb1_1': (
            (2,),
            [
                0.72995204, 0.78698361
            ],
        ),
        'gb2_0': (
            (2,),
            [
                2.1268187, -0.03311491
            ],
        ),
        'gb2_1': (
            (2,),
            [
                2.1268184, -0.03311491
            ],
        ),
        'gb3_0': (
            (2,),
            [
                0, 3.8391383
            ],
        ),
        'gb3_1': (
            (2,),
            [
                0, 3.839138
            ],
        ),
    },
    'nstep_lstm_link': {
        'out0': (
            (2, 3, 2),
            [
                0.19444036, 0.049604572, 0.004269972, -0.20531055, 0.21194203, 0.0063436115,
                0.041028138, -0.029466998, 0.0051913513, 0.009742246, 0.03477608, -0.023229284
            ],
        ),
        'out1': (
            (2, 3, 2),
            [
                0.56161475, 0.10139196, 0.0086874366, -0.31494978, 0.30354181, 0.0091344863,
                0.087153509, -0.061233684, 0.010887191, 0.019542007, 0.075992838, -0.047194216
            ],
        ),
        'out2': (
            (2, 2),
            [
                0.034186006, -0.025062427, 0.041028138, -0.029466998
            ],
        ),
        'out3': (
            (4, 2),
            [
                -0.0074734483, 0.0057988991, -0.029929331, 0.018895471, -0.041340783,
                0.033572406, 0.0051913513, 0.009742246
            ],
        ),
        'out4': (
            (3, 2),
            [
                -0.033281069, 0.01855091, -0.0091521498, 0.011323894, 0.03477608, -0.023229284
            ],
        ),
        'gx0': (
            (2, 3),
            [
                -0.0038240084, 0.10625065, 0.053309418, 0.086387493, -0.27935499, 0.20048644
            ],
        ),
        'gx1': (
            (4, 3),
            [
                0.012276119, 0.057582248, 0.0063731195, 0.016416358, 0.0040496415, 0.02795675,
                0.0081043635, 0.033718318, 0.062775254, -0.00033635274, -0.34627774, 0.27122334
            ],
        ),
        'gx2': (
            (3, 3),
            [
                0.04626435, 0.038799699, 0.09396372, 0.033111811, 0.35756096, 0.11467569,
                0.072550707, 0.098158188, 0.059506785
            ],
        ),
        'g/0/b0': (
            (2,),
            [
                0.037208542, 0.13526036
            ],
        ),
        'g/0/b1': (
            (2,),
            [
                0.0034987628, 0.10025757
            ],
        ),
        'g/0/b2': (
            (2,),
            [
                0.063423991, -1.8478153
            ],
        ),
        'g/0/b3': (
            (2,),
            [
                -0.027420409, 0.0057267174
            ],
        ),
        'g/0/b4': (
            (2,),
            [
                0.037208542, 0.13526036
            ],
        ),
        'g/0/b5': (
            (2,),
            [
                0.0034987628, 0.10025757
            ],
        ),
        'g/0/b6': (
            (2,),
            [
                0.063423991, -1.8478153
            ],
        ),
        'g/0/b7': (
            (2,),
            [
                -0.027420409, 0.0057267174
            ],
        ),
        'g/0/w0': (
            (2, 3),
            [
                -0.015733011, 0.031188346, 0.10319497, 0.12805009, 0.098168321, 0.13037577
            ],
        ),
        'g/0/w1': (
            (2, 3),
            [
                -0.036911663, -0.015166891, -0.009386871, 0.046123497, -0.026204901, 0.013984157
            ],
        ),
        'g/0/w2': (
            (2, 3),
            [
                -0.075984858, -0.098884776, 0.22706415, -0.3174383, 0.26980478, -0.23987135
            ],
        ),
        'g/0/w3': (
            (2, 3),
            [
                0.046737056, 0.13597172, 0.11165877, 0.013822791, -0.0059503848, -0.0001813554
            ],
        ),
        'g/0/w4': (
            (2, 2),
            [
                0.0083171856, 0.0001634995, -0.042259604, -0.012959799
            ],
        ),
        'g/0/w5': (
            (2, 2),
            [
                0.020189909, 0.0114841, -0.022755746, -0.014341779
            ],
        ),
        'g/0/w6': (
            (2, 2),
            [
                0.024600856, -0.0186872, 0.08306931, 0.060240112
            ],
        ),
        'g/0/w7': (
            (2, 2),
            [
                -0.0041980096, 0.0037665325, -0.009181181, -0.0051860823
            ],
        ),
        'g/1/b0': (
            (2,),
            [
                -0.053070463, -0.040569305
            ],
        ),
        'g/1/b1': (
            (2,),
            [
                0.0021972973, -0.0078109158
            ],
        ),
        'g/1/b2': (
            (2,),
            [
                -0.46570921, 0.93292195
            ],
        ),
        'g/1/b3': (
            (2,),
            [
                -0.03210339, -0.013703781
            ],
        ),
        'g/1/b4': (
            (2,),
            [
                -0.053070463, -0.040569305
            ],
        ),
        'g/1/b5': (
            (2,),
            [
                0.0021972973, -0.0078109158
            ],
        ),
        'g/1/b6': (
            (2,),
            [
                -0.46570921, 0.93292195
            ],
        ),
        'g/1/b7': (
            (2,),
            [
                -0.03210339, -0.013703781
            ],
        ),
        'g/1/w0': (
            (2, 2),
            [
                -0.01365112, -0.0039828313, -0.0064543304, -0.0008985661
            ],
        ),
        'g/1/w1': (
            (2, 2),
            [
                0.0017725423, 0.0018676361, -0.0027118807, -0.002259772
            ],
        ),
        'g/1/w2': (
            (2, 2),
            [
                -0.13524827, -0.03658589, 0.18855029, -0.0079747112
            ],
        ),
        'g/1/w3': (
            (2, 2),
            [
                -0.0096572405, -0.0033210365, 0.0016812414, 0.0011576196
            ],
        ),
        'g/1/w4': (
            (2, 2),
            [
                9.2260525e-05, -0.00030369085, -0.00056243385, 0.00035425951
            ],
        ),
        'g/1/w5': (
            (2, 2),
            [
                0.00050047145, -0.00036251178, -0.00084886065, 0.00065797498
            ],
        ),
        'g/1/w6': (
            (2, 2),
            [
                0.0016020748, -0.0033423565, 0.012759011, -0.007703241
            ],
        ),
        'g/1/w7': (
            (2, 2),
            [
                -1.6814825e-05, -5.7508209e-05, 2.2593129e-05, -1.7727623e-05
            ],
        ),
    },
    'nstep_bilstm_link_with_state': {
        'out0': (
            (2, 3, 2),
            [
                0.33618337, -0.097942844, -0.039903194, -0.063777134, -0.21282524, -0.09799239,
                0.041811485, -0.04163608, 0.083084516, -0.01011886, 0.028356044, -0.020806609
            ],
        ),
        'out1': (
            (2, 3, 2),
            [
                0.66132605, -0.23370388, -0.1290538, -0.14633241, -0.38075674, -0.19407932,
                0.22593223, -0.10542212, 0.13918678, -0.020235637, 0.044576246, -0.032226466
            ],
        ),
        'out2': (
            (1, 4),
            [
                0.33618337, -0.097942844, 0.041811485, -0.04163608
            ],
        ),
        'out3': (
            (3, 4),
            [
                0.061812624, -0.41634127, 0.083084516, -0.01011886, -0.01545433, -0.17859165,
                -0.0031649983, -0.045843583, -0.039903194, -0.063777134, 0.061357401,
                -0.045762956
            ],
        ),
        'out4': (
            (2, 4),
            [
                -0.21095286, -0.16824518, 0.028356044, -0.020806609, -0.21282524, -0.09799239,
                0.038933683, 0.17043568
            ],
        ),
        'gh0': (
            (2, 3, 2),
            [
                0.15850914, -0.17759156, 0.12103945, 0.028146777, 0.35056347, -0.054606933,
                0.022507822, -0.22268116, 0.027442221, 0.12775251, 0.086300068, 0.095055707
            ],
        ),
        'gh1': (
            (2, 3, 2),
            [
                0.13874921, -0.32238823, 0.044028677, -0.12804118, 0.047137335, -0.15008672,
                0.038395658, 0.95431882, 0.13329735, -0.034056816, -0.021614565, -0.48748863
            ],
        ),
        'gx0': (
            (1, 2),
            [
                -0.29707715, -0.1727566
            ],
        ),
        'gx1': (
            (3, 2),
            [
                -0.19135916, -0.063643806, -0.21799085, 0.10603097, -0.27398157, 0.24066587
            ],
        ),
        'gx2': (
            (2, 2),
            [
                0.16486868, 0.054680854, -0.019907527, 0.31968895
            ],
        ),
        'g/0/b0': (
            (2,),
            [
                0.018931122, 0.074407272
            ],
        ),
        'g/0/b1': (
            (2,),
            [
                0.078133851, 0.40039319
            ],
        ),
        'g/0/b2': (
            (2,),
            [
                0.22431777, -1.8872223
            ],
        ),
        'g/0/b3': (
            (2,),
            [
                0.0073952377, 0.11965181
            ],
        ),
        'g/0/b4': (
            (2,),
            [
                0.018931122, 0.074407272
            ],
        ),
        'g/0/b5': (
            (2,),
            [
                0.078133851, 0.40039319
            ],
        ),
        'g/0/b6': (
            (2,),
            [
                0.22431777, -1.8872223
            ],
        ),
        'g/0/b7': (
            (2,),
            [
                0.0073952377, 0.11965181
            ],
        ),
        'g/0/w0': (
            (2, 2),
            [
                -0.030778095, -0.0021930523, -0.0049976022, 0.099669248
            ],
        ),
        'g/0/w1': (
            (2, 2),
            [
                -0.019843489, -0.020239856, 0.057814479, -0.0543238
            ],
        ),
        'g/0/w2': (
            (2, 2),
            [
                0.12219112, -0.073491886, -0.47065976, -0.073492274
            ],
        ),
        'g/0/w3': (
            (2, 2),
            [
                -0.05158757, 0.095804214, 0.026926819, -0.0069931811
            ],
        ),
        'g/0/w4': (
            (2, 2),
            [
                -0.021280263, 0.02040093, 0.11980146, -0.064993531
            ],
        ),
        'g/0/w5': (
            (2, 2),
            [
                -0.010737063, -0.029857168, -0.034487218, -0.061773106
            ],
        ),
        'g/0/w6': (
            (2, 2),
            [
                0.10919122, 0.003808571, -0.065349922, 0.21315676
            ],
        ),
        'g/0/w7': (
            (2, 2),
            [
                -0.029056076, -0.051672902, -0.0014461488, 0.0083632451
            ],
        ),
        'g/1/b0': (
            (2,),
            [
                0.0065364223, 0.080723487
            ],
        ),
        'g/1/b1': (
            (2,),
            [
                0.04278262, -0.1395065
            ],
        ),
        'g/1/b2': (
            (2,),
            [
                0.42980245, 0.3085987
            ],
        ),
        'g/1/b3': (
            (2,),
            [
                0.026562339, -0.072496571
            ],
        ),
        'g/1/b4': (
            (2,),
            [
                0.0065364223, 0.080723487
            ],
        ),
        'g/1/b5': (
            (2,),
            [
                0.04278262, -0.1395065
            ],
        ),
        'g/1/b6': (
            (2,),
            [
                0.42980245, 0.3085987
            ],
        ),
        'g/1/b7': (
            (2,),
            [
                0.026562339, -0.072496571
            ],
        ),
        'g/1/w0': (
            (2, 2),
            [
                -0.022524465, -0.011582637, -0.0051280754, 0.040295489
            ],
        ),
        'g/1/w1': (
            (2, 2),
            [
                0.011986902, -0.020496739, 0.013415548, -0.034771703
            ],
        ),
        'g/1/w2': (
            (2, 2),
            [
                0.013693348, -0.042831253, -0.088253215, -0.46220672
            ],
        ),
        'g/1/w3': (
            (2, 2),
            [
                -0.015384989, 0.0090705911, 0.031540334, -0.024796616
            ],
        ),
        'g/1/w4': (
            (2, 2),
            [
                -0.016181329, 0.0050362786, -0.033673953, 0.05004527
            ],
        ),
        'g/1/w5': (
            (2, 2),
            [
                -0.0036573736, 0.0080953501, 0.081206739, -0.08820492
            ],
        ),
        'g/1/w6': (
            (2, 2),
            [
                0.050321352, 0.037740268, -0.28895256, 0.049607106
            ],
        ),
        'g/1/w7': (
            (2, 2),
            [
                -0.017524309, -0.0038522966, 0.09637662, -0.077385634
            ],
        ),
    },
    'nstep_gru_link': {
        'out0': (
            (1, 3, 3),
            [
                -0.2860586, 0.061085224, -0.072522491, -0.47976503, 0.60878158, -0.33928564,
                0.12421003, 0.31413636, -0.35824546
            ],
        ),
        'out1': (
            (3, 3),
            [
                -0.41881132, -0.37062135, -0.269216, -0.27621317, -0.17062664, -0.052923162,
                -0.2860586, 0.061085224, -0.072522491
            ],
        ),
        'out2': (
            (1, 3),
            [
                -0.47976503, 0.60878158, -0.33928564
            ],
        ),
        'out3': (
            (2, 3),
            [
                0.16651103, 0.30089936, -0.5142175, 0.12421003, 0.31413636, -0.35824546
            ],
        ),
        'gh0': (
            (1, 3, 3),
            [
                0.09656471, 0.15175258, 0.035479587, -0.96608585, -0.29552922, -1.0397238,
                0.074258097, -0.34442976, 0.5131349
            ],
        ),
        'gx0': (
            (3, 2),
            [
                0.031997688, -0.020538911, -0.17822236, 0.10177308, -0.11433595, -0.099168763
            ],
        ),
        'gx1': (
            (1, 2),
            [
                -0.064722165, 0.12320485
            ],
        ),
        'gx2': (
            (2, 2),
            [
                0.02881081, -0.083886229, -0.025256876, -0.20472024
            ],
        ),
        'g/0/b0': (
            (3,),
            [
                0.0013416451, -0.047292721, 0.053089324
            ],
        ),
        'g/0/b1': (
            (3,),
            [
                0.18276237, -0.21805616, -0.12822041
            ],
        ),
        'g/0/b2': (
            (3,),
            [
                -0.34246328, -0.18097626, 0.38486382
            ],
        ),
        'g/0/b3': (
            (3,),
            [
                0.0013416451, -0.047292721, 0.053089324
            ],
        ),
        'g/0/b4': (
            (3,),
            [
                0.18276237, -0.21805616, -0.12822041
            ],
        ),
        'g/0/b5': (
            (3,),
            [
                -0.055700153, -0.30265573, 0.18992539
            ],
        ),
        'g/0/w0': (
            (3, 2),
            [
                -0.00059716566, -0.0037985581, 0.0095497966, -0.01954215, -0.032253407,
                -0.021660671
            ],
        ),
        'g/0/w1': (
            (3, 2),
            [
                -0.064683229, 0.05034858, 0.049184904, -0.0027495297, 0.043433979, -0.041639738
            ],
        ),
        'g/0/w2': (
            (3, 2),
            [
                0.062093928, 0.033808738, -0.056122087, -0.34136119, -0.054226786, 0.48419607
            ],
        ),
        'g/0/w3': (
            (3, 3),
            [
                -1.6356935e-05, 0.0049289903, -0.00040409877, 0.018005766, -0.034070123,
                0.014506389, -0.099550381, 0.057565629, 0.012114463
            ],
        ),
        'g/0/w4': (
            (3, 3),
            [
                -0.10464621, 0.13129662, -0.026308019, 0.083193533, 0.029521804, 0.059723698,
                0.057126138, -0.0862903, 0.037804831
            ],
        ),
        'g/0/w5': (
            (3, 3),
            [
                0.10087499, -0.116055, 0.0098802932, 0.012303352, -0.29663551, 0.16668516,
                0.24479172, -0.055451252, -0.14041597
            ],
        ),
    },
    'nstep_bigru_link_two_layers': {
        'out0': (
            (4, 3, 2),
            [
                0.23564187, 0.55043125, 0.052560385, -0.14639631, -0.13036248, -0.083461694,
                0.2373496, 0.042428918, -0.08960852, 0.016350087, -0.14315128, 0.16650122,
                0.060399964, 0.3445805, 0.091672719, 0.050185144, 0.082976617, -0.062025703,
                0.26033115, 0.16915552, 0.08178091, 0.086576477, 0.01095546, 0.17795104
            ],
        ),
        'out1': (
            (2, 4),
            [
                0.036991946, 0.13820702, 0.26033115, 0.16915552, 0.060399964, 0.3445805,
                0.2192208, 0.11764703
            ],
        ),
        'out2': (
            (2, 4),
            [
                0.05121965, 0.082427405, 0.08178091, 0.086576477, 0.091672719, 0.050185144,
                -0.080981508, -0.010925747
            ],
        ),
        'out3': (
            (3, 4),
            [
                0.11482535, -0.029426923, 0.01095546, 0.17795104, 0.10955656, -0.086668529,
                0.079999745, 0.1546019, 0.082976617, -0.062025703, 0.053862974, 0.074720912
            ],
        ),
        'gx0': (
            (2, 2),
            [
                0.30074206, -0.059737161, 0.27706102, 0.040823281
            ],
        ),
        'gx1': (
            (2, 2),
            [
                0.38039812, -0.13684151, -0.020723753, 0.15703763
            ],
        ),
        'gx2': (
            (3, 2),
            [
                -0.28972211, 0.14467375, -0.15030867, 0.24876741, 0.39379737, 1.5748401
            ],
        ),
        'g/0/b0': (
            (2,),
            [
                -0.0028609275, -0.071136661
            ],
        ),
        'g/0/b1': (
            (2,),
            [
                0.0041564247, 0.43277556
            ],
        ),
        'g/0/b2': (
            (2,),
            [
                -0.62029397, -0.8257364
            ],
        ),
        'g/0/b3': (
            (2,),
            [
                -0.0028609275, -0.071136661
            ],
        ),
        'g/0/b4': (
            (2,),
            [
                0.0041564247, 0.43277556
            ],
        ),
        'g/0/b5': (
            (2,),
            [
                -0.33573008, -0.48073363
            ],
        ),
        'g/0/w0': (
            (2, 2),
            [
                0.002117581, 0.0010391013, 0.0041148635, -0.0075973417
            ],
        ),
        'g/0/w1': (
            (2, 2),
            [
                -0.01930088, -0.029823739, -0.02883664, -0.04206977
            ],
        ),
        'g/0/w2': (
            (2, 2),
            [
                0.1359027, -0.1074468, 0.05786835, -0.0066907778
            ],
        ),
        'g/0/w3': (
            (2, 2),
            [
                -0.002586385, -0.004600958, 0.018180786, 0.030185666
            ],
        ),
        'g/0/w4': (
            (2, 2),
            [
                -0.0027412097, -0.004805211, -0.045989349, -0.067393593
            ],
        ),
        'g/0/w5': (
            (2, 2),
            [
                0.038198695, 0.083504125, 0.087862626, 0.13392469
            ],
        ),
        'g/1/b0': (
            (2,),
            [
                0.0033620463, -0.0028744787
            ],
        ),
        'g/1/b1': (
            (2,),
            [
                0.06126764, 0.0064436318
            ],
        ),
        'g/1/b2': (
            (2,),
            [
                0.43195048, 0.13485378
            ],
        ),
        'g/1/b3': (
            (2,),
            [
                0.0033620463, -0.0028744787
            ],
        ),
        'g/1/b4': (
            (2,),
            [
                0.06126764, 0.0064436318
            ],
        ),
        'g/1/b5': (
            (2,),
            [
                0.26322505, 0.06543956
            ],
        ),
        'g/1/w0': (
            (2, 2),
            [
                -0.0035904234, -0.0079592215, 0.0001113794, -0.0034053493
            ],
        ),
        'g/1/w1': (
            (2, 2),
            [
                0.0056847739, 0.054798376, -0.0034632196, 0.010776815
            ],
        ),
        'g/1/w2': (
            (2, 2),
            [
                -0.19281544, -0.27529225, -0.03021016, -0.031071428
            ],
        ),
        'g/1/w3': (
            (2, 2),
            [
                0.0018482121, 0.00017272912, 0.00041028403, -0.0005194816
            ],
        ),
        'g/1/w4': (
            (2, 2),
            [
                0.023917867, 0.01393578, -0.0024288127, 0.0015826812
            ],
        ),
        'g/1/w5': (
            (2, 2),
            [
                0.055165302, 0.019476581, 0.017636074, 0.0019501343
            ],
        ),
        'g/2/b0': (
            (2,),
            [
                -0.0016955348, -0.041108109
            ],
        ),
        'g/2/b1': (
            (2,),
            [
                0.039459683, 0.21177131
            ],
        ),
        'g/2/b2': (
            (2,),
            [
                0.3531599, -2.1271994
            ],
        ),
        'g/2/b3': (
            (2,),
            [
                -0.0016955347, -0.041108109
            ],
        ),
        'g/2/b4': (
            (2,),
            [
                0.039459683, 0.21177131
            ],
        ),
        'g/2/b5': (
            (2,),
            [
                0.12348893, -1.209393
            ],
        ),
        'g/2/w0': (
            (2, 4),
            [
                0.0017022421, 0.0049094069, 0.0028615808, -0.00056033133, -0.0051058168,
                -0.01174175, -0.0042335489, -0.0018554637
            ],
        ),
        'g/2/w1': (
            (2, 4),
            [
                -0.0071079889, -0.01666674, -0.012981081, 0.0046172328, 0.038323447, 0.10576886,
                0.023677057, 0.0037880032
            ],
        ),
        'g/2/w2': (
            (2, 4),
            [
                0.048558313, 0.078945495, 0.22088063, 0.037887782, -0.097469293, -0.31639951,
                -0.12255417, -0.10292216
            ],
        ),
        'g/2/w3': (
            (2, 2),
            [
                0.00020922489, -9.8798257e-05, -0.00084215816, -0.0028881147
            ],
        ),
        'g/2/w4': (
            (2, 2),
            [
                0.00018513261, -0.0018849494, 0.0027879342, 0.013085943
            ],
        ),
        'g/2/w5': (
            (2, 2),
            [
                0.02209785, -0.0013889996, -0.048569515, -0.045012321
            ],
        ),
        'g/3/b0': (
            (2,),
            [
                0.02802458, 0.016813718
            ],
        ),
        'g/3/b1': (
            (2,),
            [
                0.019746367, -0.033257835
            ],
        ),
        'g/3/b2': (
            (2,),
            [
                1.2455264, 1.1334102
            ],
        ),
        'g/3/b3': (
            (2,),
            [
                0.028024582, 0.016813718
            ],
        ),
        'g/3/b4': (
            (2,),
            [
                0.019746367, -0.033257835
            ],
        ),
        'g/3/b5': (
            (2,),
            [
                0.65762091, 0.60005909
            ],
        ),
        'g/3/w0': (
            (2, 4),
            [
                -0.0020800149, -0.0059991046, -0.0010016465, 0.0024520503, 0.0087749576,
                0.014900301, 0.0095460536, 0.00083296141
            ],
        ),
        'g/3/w1': (
            (2, 4),
            [
                -0.0051348386, -0.031149734, 0.0072760028, 0.008522829, -0.023122899,
                -0.055117428, -0.0045816121, 0.0038583789
            ],
        ),
        'g/3/w2': (
            (2, 4),
            [
                -0.10223567, -0.31030864, -0.067101203, 0.11826725, 0.2660082, 0.40703803,
                0.2657271, 0.072324187
            ],
        ),
        'g/3/w3': (
            (2, 2),
            [
                0.0011928207, 0.0016329172, -0.00072214415, -0.0015344772
            ],
        ),
        'g/3/w4': (
            (2, 2),
            [
                0.00038919883, 0.0024063804, 0.0065492867, 0.0033874945
            ],
        ),
        'g/3/w5': (
            (2, 2),
            [
                0.028703343, 0.042194754, -0.026878165, -0.018786483
            ],
        ),
    },
    'nstep_rnn_links': {
        'NStepRNNTanh:out0': (
            (2, 3, 3),
            [
                -0.18956612, 0.61586195, -0.24397378, -0.0092076492, 0.25514138, -0.18987437,
                -0.090894073, -0.035957772, -0.23522229, 0.15869816, -0.2213905, -0.30387866,
                0.091038227, -0.081476979, -0.098995216, -0.10072694, -0.17653914, -0.0077762082
            ],
        ),
        'NStepRNNTanh:out1': (
            (3, 3),
            [
                0.1180251, 0.17650419, 0.12890016, 0.20130906, 0.10031611, -0.084062353,
                0.15869816, -0.2213905, -0.30387866
            ],
        ),
        'NStepRNNTanh:out2': (
            (1, 3),
            [
                0.091038227, -0.081476979, -0.098995216
            ],
        ),
        'NStepRNNTanh:out3': (
            (2, 3),
            [
                -0.19069912, -0.18922356, -0.12054388, -0.10072694, -0.17653914, -0.0077762082
            ],
        ),
        'NStepRNNTanh:gx0': (
            (3, 2),
            [
                0.51307189, -0.13388088, -0.046149191, 0.27546728, 0.50088662, -0.51271176
            ],
        ),
        'NStepRNNTanh:gx1': (
            (1, 2),
            [
                0.63832122, 0.55416358
            ],
        ),
        'NStepRNNTanh:gx2': (
            (2, 2),
            [
                0.68743622, 0.24646434, 0.90820777, -0.36036655
            ],
        ),
        'NStepRNNTanh:g/0/b0': (
            (3,),
            [
                -0.8740012, -4.0055056, -0.041416407
            ],
        ),
        'NStepRNNTanh:g/0/b1': (
            (3,),
            [
                -0.8740012, -4.0055056, -0.041416407
            ],
        ),
        'NStepRNNTanh:g/0/w0': (
            (3, 2),
            [
                -0.16123694, 0.14014596, 1.0788654, -1.462072, 0.24507159, -0.036712527
            ],
        ),
        'NStepRNNTanh:g/0/w1': (
            (3, 3),
            [
                -0.21134132, 0.21373056, -0.013145901, 0.22941944, 0.085280433, -0.12190451,
                -0.34569097, 0.29237837, -0.026432641
            ],
        ),
        'NStepRNNTanh:g/1/b0': (
            (3,),
            [
                -2.2027416, 1.0538685, 0.62246853
            ],
        ),
        'NStepRNNTanh:g/1/b1': (
            (3,),
            [
                -2.2027416, 1.0538685, 0.62246853
            ],
        ),
        'NStepRNNTanh:g/1/w0': (
            (3, 3),
            [
                0.32167971, -0.43104124, 0.53772229, -0.20368528, 0.5793525, -0.21103211,
                -0.02771607, -0.21874373, -0.046323039
            ],
        ),
        'NStepRNNTanh:g/1/w1': (
            (3, 3),
            [
                0.18165235, 0.10102483, 0.008074902, 0.21285869, 0.15509754, -0.031300824,
                -0.17656034, -0.16297357, -0.061815977
            ],
        ),
        'NStepRNNReLU:out0': (
            (2, 3, 3),
            [
                0, 0, 0.42613435, 0, 0, 0.22264196, 0, 0, 0.15457207, 0, 0, 0.11480037, 0, 0,
                0.031720147, 0, 0, 0.022022123
            ],
        ),
        'NStepRNNReLU:out1': (
            (3, 3),
            [
                0.096430153, 0.4733797, 0, 0.037727941, 0, 0.065370552, 0, 0, 0.11480037
            ],
        ),
        'NStepRNNReLU:out2': (
            (1, 3),
            [
                0, 0, 0.031720147
            ],
        ),
        'NStepRNNReLU:out3': (
            (2, 3),
            [
                0, 0, 0, 0, 0, 0.022022123
            ],
        ),
        'NStepRNNReLU:gx0': (
            (3, 2),
            [
                -0.56384915, 0.44682613, 0, 0, -0.35345879, 0.18034236
            ],
        ),
        'NStepRNNReLU:gx1': (
            (1, 2),
            [
                0.48064706, -0.24523658
            ],
        ),
        'NStepRNNReLU:gx2': (
            (2, 2),
            [
                0.0021858294, -0.16866174, -0.40536666, 0.20682688
            ],
        ),
        'NStepRNNReLU:g/0/b0': (
            (3,),
            [
                -0.62260032, -0.50368255, 0.14705992
            ],
        ),
        'NStepRNNReLU:g/0/b1': (
            (3,),
            [
                -0.62260032, -0.50368255, 0.14705992
            ],
        ),
        'NStepRNNReLU:g/0/w0': (
            (3, 2),
            [
                -0.16969745, -0.40474293, 0.049237419, 0.28103235, -0.39630842, 0.32790539
            ],
        ),
        'NStepRNNReLU:g/0/w1': (
            (3, 3),
            [
                0, 0, 0, 0, 0, 0, 0.11964922, 0, 0.023967268
            ],
        ),
        'NStepRNNReLU:g/1/b0': (
            (3,),
            [
                0.43909293, -0.64806688, -0.38508531
            ],
        ),
        'NStepRNNReLU:g/1/b1': (
            (3,),
            [
                0.43909293, -0.64806688, -0.38508531
            ],
        ),
        'NStepRNNReLU:g/1/w0': (
            (3, 3),
            [
                0, 0.45015648, 0, 0, -0.24985602, 0, 0, 0, 0.013512686
            ],
        ),
        'NStepRNNReLU:g/1/w1': (
            (3, 3),
            [
                -0.0702499, -0.34485975, 0, 0, 0, 0, -0.098732777, -0.41923988, -0.023098761
            ],
        ),
        'NStepBiRNNTanh:out0': (
            (4, 3, 3),
            [
                0.49545076, 0.12196083, 0.78447336, 0.28897789, -0.037414476, 0.27048668,
                0.39318019, 0.19854483, -0.072651543, -0.19556941, 0.31156412, 0.25921771,
                -0.27931833, 0.039610762, 0.049453933, 0.1831592, -0.42375582, -0.51269466,
                0.42149779, -0.31489405, 0.54699993, 0.110985, -0.12992464, 0.26182988,
                -0.21374455, -0.051557325, 0.16668776, -0.10925402, -0.056651652, 0.010365085,
                0.17720599, 0.14816394, 0.2456487, 0.0063171871, 0.37470439, -0.07677602
            ],
        ),
        'NStepBiRNNTanh:out1': (
            (3, 6),
            [
                -0.2276952, 0.083734915, -0.25004822, -0.10925402, -0.056651652, 0.010365085,
                0.23634236, -0.018929709, 0.078213714, -0.018292265, -0.1296038, 0.17543486,
                0.42149779, -0.31489405, 0.54699993, 0.33123156, 0.32198572, 0.22165209
            ],
        ),
        'NStepBiRNNTanh:out2': (
            (1, 6),
            [
                0.110985, -0.12992464, 0.26182988, 0.17720599, 0.14816394, 0.2456487
            ],
        ),
        'NStepBiRNNTanh:out3': (
            (2, 6),
            [
                0.28762421, -0.022974059, 0.26656747, 0.0063171871, 0.37470439, -0.07677602,
                -0.21374455, -0.051557325, 0.16668776, -0.0046546515, 0.15988737, 0.042300969
            ],
        ),
        'NStepBiRNNTanh:gx0': (
            (3, 2),
            [
                1.4631679, -0.48894984, -1.223809, -0.60879642, 0.76932842, 1.0851305
            ],
        ),
        'NStepBiRNNTanh:gx1': (
            (1, 2),
            [
                -0.44610852, -0.98133445
            ],
        ),
        'NStepBiRNNTanh:gx2': (
            (2, 2),
            [
                -1.590142, -0.33465356, 0.63271493, 0.50616771
            ],
        ),
        'NStepBiRNNTanh:g/0/b0': (
            (3,),
            [
                -0.25509745, -1.8822165, -0.67880023
            ],
        ),
        'NStepBiRNNTanh:g/0/b1': (
            (3,),
            [
                -0.25509745, -1.8822165, -0.67880023
            ],
        ),
        'NStepBiRNNTanh:g/0/w0': (
            (3, 2),
            [
                0.3588475, 0.99568999, 0.24641493, -0.81973577, -0.14814666, 0.1931076
            ],
        ),
        'NStepBiRNNTanh:g/0/w1': (
            (3, 3),
            [
                -0.050706662, 0.037639178, -0.11413441, 0.75981694, 0.56749308, 0.58917785,
                -0.065742329, -0.16665752, 0.12018674
            ],
        ),
        'NStepBiRNNTanh:g/1/b0': (
            (3,),
            [
                -0.69682235, -0.65235782, -0.11722803
            ],
        ),
        'NStepBiRNNTanh:g/1/b1': (
            (3,),
            [
                -0.69682235, -0.65235782, -0.11722803
            ],
        ),
        'NStepBiRNNTanh:g/1/w0': (
            (3, 2),
            [
                -0.2288262, -0.15249585, 0.7627914, 0.42759803, 0.50369465, -0.70353329
            ],
        ),
        'NStepBiRNNTanh:g/1/w1': (
            (3, 3),
            [
                0.28883898, 0.084309824, 0.087070324, -1.0253819, -0.46381289, -0.37815905,
                -0.63563418, -0.1531854, -0.13949235
            ],
        ),
        'NStepBiRNNTanh:g/2/b0': (
            (3,),
            [
                0.032362014, 1.4368926, 1.2056115
            ],
        ),
        'NStepBiRNNTanh:g/2/b1': (
            (3,),
            [
                0.032362044, 1.4368926, 1.2056115
            ],
        ),
        'NStepBiRNNTanh:g/2/w0': (
            (3, 6),
            [
                -0.25903016, -0.25857174, 0.15892175, -0.33261764, 0.33669215, 0.35606369,
                0.62338668, 0.070164427, 0.64350677, 0.09189304, -0.12025531, -0.18068385,
                0.58849239, 0.36515099, 0.33487236, -0.37936613, -0.30784011, -0.34603414
            ],
        ),
        'NStepBiRNNTanh:g/2/w1': (
            (3, 3),
            [
                0.10936651, -0.00017355569, -0.016664416, -0.0090043936, 0.047020424,
                -0.049492911, 0.35335344, -0.028426018, 0.25860816
            ],
        ),
        'NStepBiRNNTanh:g/3/b0': (
            (3,),
            [
                -0.42411268, -0.13645196, -0.94879723
            ],
        ),
        'NStepBiRNNTanh:g/3/b1': (
            (3,),
            [
                -0.42411268, -0.13645199, -0.94879723
            ],
        ),
        'NStepBiRNNTanh:g/3/w0': (
            (3, 6),
            [
                0.0041570663, -0.67116761, 0.9023242, 1.4213322, 0.37510425, 0.32476285,
                0.13477886, 0.006263569, 0.33568931, -0.56408417, 0.030504286, 0.12197255,
                0.42251208, 0.33631742, 0.50857645, 1.2283727, -0.58836395, -0.66720206
            ],
        ),
        'NStepBiRNNTanh:g/3/w1': (
            (3, 3),
            [
                0.62583441, 0.76511943, 0.11487862, -0.21360645, -0.26890776, -0.13809922,
                0.1879044, 0.50411761, -0.062009595
            ],
        ),
        'NStepBiRNNReLU:out0': (
            (4, 3, 3),
            [
                0.689273, 0, 0, 0.20715803, 0, 0.013751738, 0.16436112, 0, 0, 0.66260791, 0, 0,
                0, 0.92233378, 0, 0, 1.4610709, 0.62643272, 1.2805927, 0.29693434, 0,
                0.55084395, 0.20160763, 0, 0.31869501, 1.100323, 0, 0, 2.2363083, 0.74496031, 0,
                0.12420338, 0.71361005, 0, 1.2669343, 0.89500815
            ],
        ),
        'NStepBiRNNReLU:out1': (
            (3, 6),
            [
                0, 0, 0, 0, 2.2363083, 0.74496031, 0, 0, 0, 0, 2.2098603, 0.076645389,
                1.2805927, 0.29693434, 0, 0, 0.32617587, 1.693619
            ],
        ),
        'NStepBiRNNReLU:out2': (
            (1, 6),
            [
                0.55084395, 0.20160763, 0, 0, 0.12420338, 0.71361005
            ],
        ),
        'NStepBiRNNReLU:out3': (
            (2, 6),
            [
                0.71791017, 0.57911056, 0.19439943, 0, 1.2669343, 0.89500815, 0.31869501,
                1.100323, 0, 0, 0.17508705, 1.1341635
            ],
        ),
        'NStepBiRNNReLU:gx0': (
            (3, 2),
            [
                1.1711771, 0.64301223, 0.089577883, 0.012122571, -0.05624257, 0.0175304
            ],
        ),
        'NStepBiRNNReLU:gx1': (
            (1, 2),
            [
                2.0019784, -1.3854401
            ],
        ),
        'NStepBiRNNReLU:gx2': (
            (2, 2),
            [
                -2.7353046, 3.493202, 0.2953414, -0.29988506
            ],
        ),
        'NStepBiRNNReLU:g/0/b0': (
            (3,),
            [
                -1.4923927, -0.30413896, -1.3883001
            ],
        ),
        'NStepBiRNNReLU:g/0/b1': (
            (3,),
            [
                -1.4923927, -0.30413896, -1.3883001
            ],
        ),
        'NStepBiRNNReLU:g/0/w0': (
            (3, 2),
            [
                0.31905428, 0.28854281, -0.19068015, -0.54932415, 0.28986406, 0.27169627
            ],
        ),
        'NStepBiRNNReLU:g/0/w1': (
            (3, 3),
            [
                -0.0037867688, -0.0250478, -0.060920548, 0, 0, 0, -0.00062266242,
                -0.00020176794, -0.0017115698
            ],
        ),
        'NStepBiRNNReLU:g/1/b0': (
            (3,),
            [
                0.15667462, 0.42068914, -0.58152968
            ],
        ),
        'NStepBiRNNReLU:g/1/b1': (
            (3,),
            [
                0.15667462, 0.42068914, -0.58152968
            ],
        ),
        'NStepBiRNNReLU:g/1/w0': (
            (3, 2),
            [
                -0.054533947, -0.054073207, 0.6900636, 0.685624, 0.089457661, 0.11775439
            ],
        ),
        'NStepBiRNNReLU:g/1/w1': (
            (3, 3),
            [
                -0.08300332, 0.49879113, -0.16029379, 0, 2.2057455, 0, 0, -1.1550063, 0
            ],
        ),
        'NStepBiRNNReLU:g/2/b0': (
            (3,),
            [
                -0.053272933, 1.2802763, 0.60289121
            ],
        ),
        'NStepBiRNNReLU:g/2/b1': (
            (3,),
            [
                -0.053272963, 1.2802763, 0.60289121
            ],
        ),
        'NStepBiRNNReLU:g/2/w0': (
            (3, 6),
            [
                0.53421527, -0.04008029, -0.0071490458, 0, 0.78899682, -0.20380603, 0.23083057,
                0.039691504, 0.0055163046, 0, 1.7788208, 0.20182906, 0, 0.074272357, 0, 0,
                0.88086677, 0.37767076
            ],
        ),
        'NStepBiRNNReLU:g/2/w1': (
            (3, 3),
            [
                -0.13136472, -0.10596687, -0.03557162, 0.32299158, 0.2605449, 0.08746133, 0, 0,
                0
            ],
        ),
        'NStepBiRNNReLU:g/3/b0': (
            (3,),
            [
                0, -1.5486964, -1.2095959
            ],
        ),
        'NStepBiRNNReLU:g/3/b1': (
            (3,),
            [
                0, -1.5486964, -1.2095959
            ],
        ),
        'NStepBiRNNReLU:g/3/w0': (
            (3, 6),
            [
                0, 0, 0, 0, 0, 0, -0.83685684, -0.038538847, -0.34012374, -0.89030868,
                -1.9991889, -2.0693653, -0.56552279, 0.070316285, -0.58199704, -0.90215379,
                -0.041492403, 0.56681746
            ],
        ),
        'NStepBiRNNReLU:g/3/w1': (
            (3, 3),
            [
                0, 0, 0, 0, -0.15084021, -2.0016451, 0, -2.6242261, 1.0448887
            ],
        ),
    },
    'nstep_gru_and_lstm_classifier_adam_three_updates': {
        'losses': (
            (3,),
            [
                0.6650613, 0.62220699, 0.57033104
            ],
        ),
        'out/W': (
            (2, 3),
            [
                -0.063395545, -0.0013220496, -1.0312521, -0.4829357, 0.77486539, 0.1443055
            ],
        ),
        'lstm/0/w5': (
            (3, 3),
            [
                -0.33768636, -0.5822593, 0.19043648, -0.51590937, 0.72433919, 1.1190461,
                0.49391696, 0.46926636, 0.32090482
            ],
        ),
        'gru/1/b3': (
            (2,),
            [
                -0.1468747, 0.14743063
            ],
        ),
        'embed/W': (
            (5, 3),
            [
                -0.60938424, 0.44474971, 0.05206123, -0.69188827, 0.11697651, 0.88633192,
                -0.43453085, -0.1527169, -0.8453508, 1.4357136, 1.5992767, 0.18527173,
                -0.11763377, 0.24398355, 1.0585188
            ],
        ),
    },
}
# --- end EXPECTED ---
# fmt: on

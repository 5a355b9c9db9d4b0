"""Write ``gluon_rnn_reference.npz``, mxnet 1.9.1's results that test_gluon_rnn.py and
test_gluon_rnn_lm.py compare with: run it with mxnet 1.9.1 installed (CPU build), from this
directory::

    /path/to/mxnet-1.9.1-venv/bin/python make_gluon_rnn_reference.py

It only needs mxnet and numpy. Every input and initial parameter is drawn here from
``numpy.random.RandomState`` and stored in the file next to mxnet's results:

* ``layer__<case>__...``: the fused layers ``gluon.rnn.RNN`` (relu and tanh), ``LSTM`` and
  ``GRU``, two layers, one or two directions, layouts TNC and NTC: the inputs, the initial
  states, every parameter (by its name without the block prefix), the outputs and final
  states, and the gradients of ``sum(out * w_out) + sum(h * w_h) (+ sum(c * w_c))`` with
  respect to the inputs, the initial states and every parameter;
* ``cell__<case>__...``: the same for the cells ``RNNCell``, ``LSTMCell``, ``GRUCell``, a
  ``SequentialRNNCell`` (LSTMCell then GRUCell), a ``BidirectionalCell`` and a
  ``ResidualCell`` unrolled with ``merge_outputs=True`` (``..._vl``: also with
  ``valid_length`` ``[2, 4, 1]``);
* ``proj__...``: an LSTM with ``projection_size=2`` (two layers, one or two directions):
  parameters, inputs, states, outputs and final states (forward only: mxnet 1.9.1 has no CPU
  training for it);
* ``lm__...``: an Embedding -> LSTM -> Dense language-model-like network trained three steps
  with ``Trainer("adam")`` and ``SoftmaxCrossEntropyLoss`` on a ``DataLoader`` over an
  ``ArrayDataset`` with ``shuffle=True`` after ``numpy.random.seed(0)``: the initial
  parameters, each batch's labels, each step's mean loss and the final parameters.

The file holds arrays only (``numpy.load(..., allow_pickle=False)`` reads it).
"""

from __future__ import annotations

import os

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon

T, N, C, H = 4, 3, 5, 4
OUT: dict[str, np.ndarray] = {}


def _rand(rng: np.random.RandomState, *shape: int) -> np.ndarray:
    return rng.uniform(-0.8, 0.8, size=shape).astype(np.float32)


def _set_params(block: gluon.Block, rng: np.random.RandomState, key: str) -> None:
    for name, p in block.collect_params().items():
        v = _rand(rng, *p.shape)
        p.set_data(mx.nd.array(v))
        OUT[f"{key}__param__{name[len(block.prefix) :]}"] = v


def _grads(block: gluon.Block, key: str) -> None:
    for name, p in block.collect_params().items():
        OUT[f"{key}__grad__{name[len(block.prefix) :]}"] = p.grad().asnumpy()


def layer_case(kind: str, bidirectional: bool, layout: str, seed: int) -> None:
    rng = np.random.RandomState(seed)
    key = f"layer__{kind}_{'bi' if bidirectional else 'uni'}_{layout}"
    kw = {"num_layers": 2, "layout": layout, "bidirectional": bidirectional, "input_size": C}
    if kind.startswith("rnn"):
        layer = gluon.rnn.RNN(H, activation=kind[4:], prefix="net_", **kw)
    else:
        layer = {"lstm": gluon.rnn.LSTM, "gru": gluon.rnn.GRU}[kind](H, prefix="net_", **kw)
    layer.initialize()
    _set_params(layer, rng, key)
    shape = (N, T, C) if layout == "NTC" else (T, N, C)
    x = mx.nd.array(_rand(rng, *shape))
    nstates = 2 if kind == "lstm" else 1
    states = [mx.nd.array(_rand(rng, 2 * (1 + bidirectional), N, H)) for _ in range(nstates)]
    for a in [x, *states]:
        a.attach_grad()
    with autograd.record():
        out, new_states = layer(x, states)
        w_out = mx.nd.array(_rand(rng, *out.shape))
        ws = [mx.nd.array(_rand(rng, *s.shape)) for s in new_states]
        loss = (out * w_out).sum()
        for s, w in zip(new_states, ws):
            loss = loss + (s * w).sum()
    loss.backward()
    OUT[f"{key}__x"] = x.asnumpy()
    OUT[f"{key}__w_out"] = w_out.asnumpy()
    OUT[f"{key}__out"] = out.asnumpy()
    OUT[f"{key}__grad_x"] = x.grad.asnumpy()
    for i, (s0, s1, w) in enumerate(zip(states, new_states, ws)):
        OUT[f"{key}__state{i}"] = s0.asnumpy()
        OUT[f"{key}__w_state{i}"] = w.asnumpy()
        OUT[f"{key}__out_state{i}"] = s1.asnumpy()
        OUT[f"{key}__grad_state{i}"] = s0.grad.asnumpy()
    _grads(layer, key)


def projection_case(bidirectional: bool, seed: int) -> None:
    """An LSTM with projection_size=2: forward only (mxnet 1.9.1 has no CPU training for it)."""
    rng = np.random.RandomState(seed)
    key = f"proj__{'bi' if bidirectional else 'uni'}"
    layer = gluon.rnn.LSTM(
        H, num_layers=2, bidirectional=bidirectional, input_size=C, projection_size=2,
        prefix="net_",
    )  # fmt: skip
    layer.initialize()
    _set_params(layer, rng, key)
    x = mx.nd.array(_rand(rng, T, N, C))
    dirs = 2 if bidirectional else 1
    states = [mx.nd.array(_rand(rng, 2 * dirs, N, 2)), mx.nd.array(_rand(rng, 2 * dirs, N, H))]
    out, new_states = layer(x, states)
    OUT[f"{key}__x"] = x.asnumpy()
    OUT[f"{key}__out"] = out.asnumpy()
    for i, (s0, s1) in enumerate(zip(states, new_states)):
        OUT[f"{key}__state{i}"] = s0.asnumpy()
        OUT[f"{key}__out_state{i}"] = s1.asnumpy()


def _make_cell(case: str) -> gluon.rnn.RecurrentCell:
    if case == "rnn_cell":
        return gluon.rnn.RNNCell(H, input_size=C, prefix="net_")
    if case == "lstm_cell":
        return gluon.rnn.LSTMCell(H, input_size=C, prefix="net_")
    if case == "gru_cell":
        return gluon.rnn.GRUCell(H, input_size=C, prefix="net_")
    if case == "sequential":
        cell = gluon.rnn.SequentialRNNCell(prefix="net_")
        with cell.name_scope():
            cell.add(gluon.rnn.LSTMCell(H, input_size=C, prefix="a_"))
            cell.add(gluon.rnn.GRUCell(3, input_size=H, prefix="b_"))
        return cell
    if case == "bidirectional":
        cell = gluon.rnn.SequentialRNNCell(prefix="net_")
        with cell.name_scope():
            cell.add(
                gluon.rnn.BidirectionalCell(
                    gluon.rnn.LSTMCell(H, input_size=C, prefix="l_"),
                    gluon.rnn.GRUCell(H, input_size=C, prefix="r_"),
                )
            )
        return cell
    if case == "residual":
        cell = gluon.rnn.SequentialRNNCell(prefix="net_")
        with cell.name_scope():
            cell.add(gluon.rnn.ResidualCell(gluon.rnn.GRUCell(C, input_size=C, prefix="g_")))
        return cell
    raise ValueError(case)


def cell_case(case: str, layout: str, seed: int, valid_length: bool = False) -> None:
    rng = np.random.RandomState(seed)
    key = f"cell__{case}_{layout}" + ("_vl" if valid_length else "")
    cell = _make_cell(case)
    cell.initialize()
    _set_params(cell, rng, key)
    shape = (N, T, C) if layout == "NTC" else (T, N, C)
    x = mx.nd.array(_rand(rng, *shape))
    states = [mx.nd.array(_rand(rng, *info["shape"])) for info in cell.state_info(N)]
    for a in [x, *states]:
        a.attach_grad()
    lengths = mx.nd.array([2, T, 1]) if valid_length else None
    if valid_length:
        OUT[f"{key}__valid_length"] = lengths.asnumpy()
    with autograd.record():
        out, new_states = cell.unroll(
            T, x, states, layout=layout, merge_outputs=True, valid_length=lengths
        )
        w_out = mx.nd.array(_rand(rng, *out.shape))
        ws = [mx.nd.array(_rand(rng, *s.shape)) for s in new_states]
        loss = (out * w_out).sum()
        for s, w in zip(new_states, ws):
            loss = loss + (s * w).sum()
    loss.backward()
    OUT[f"{key}__x"] = x.asnumpy()
    OUT[f"{key}__w_out"] = w_out.asnumpy()
    OUT[f"{key}__out"] = out.asnumpy()
    OUT[f"{key}__grad_x"] = x.grad.asnumpy()
    for i, (s0, s1, w) in enumerate(zip(states, new_states, ws)):
        OUT[f"{key}__state{i}"] = s0.asnumpy()
        OUT[f"{key}__w_state{i}"] = w.asnumpy()
        OUT[f"{key}__out_state{i}"] = s1.asnumpy()
        OUT[f"{key}__grad_state{i}"] = s0.grad.asnumpy()
    _grads(cell, key)


class LanguageModel(gluon.HybridBlock):
    """Embedding(12, 6) -> LSTM(8, layout NTC) -> Dense(12, flatten=False)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed = gluon.nn.Embedding(12, 6)
            self.lstm = gluon.rnn.LSTM(8, layout="NTC", input_size=6)
            self.out = gluon.nn.Dense(12, flatten=False, in_units=8)

    def hybrid_forward(self, F: object, x: mx.nd.NDArray) -> mx.nd.NDArray:
        return self.out(self.lstm(self.embed(x)))


def lm_case() -> None:
    rng = np.random.RandomState(7)
    tokens = rng.randint(0, 12, size=(10, 6))
    data = tokens[:, :-1].astype(np.float32)
    labels = tokens[:, 1:].astype(np.float32)
    OUT["lm__data"], OUT["lm__labels"] = data, labels
    net = LanguageModel(prefix="lm_")
    net.initialize()
    _set_params(net, rng, "lm")
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    np.random.seed(0)
    loader = gluon.data.DataLoader(
        gluon.data.ArrayDataset(mx.nd.array(data), mx.nd.array(labels)),
        batch_size=4,
        shuffle=True,
        last_batch="discard",
    )
    batches, losses = [], []
    steps = 0
    while steps < 3:
        for x, y in loader:
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(x.shape[0])
            batches.append(y.asnumpy())
            losses.append(loss.mean().asscalar())
            steps += 1
            if steps == 3:
                break
    OUT["lm__batch_labels"] = np.stack(batches)
    OUT["lm__losses"] = np.array(losses, np.float32)
    for name, p in net.collect_params().items():
        OUT[f"lm__final__{name[len(net.prefix) :]}"] = p.data().asnumpy()


def main() -> None:
    seed = 0
    for kind in ("rnn_relu", "rnn_tanh", "lstm", "gru"):
        for bidirectional in (False, True):
            for layout in ("TNC", "NTC"):
                seed += 1
                layer_case(kind, bidirectional, layout, seed)
    for case in ("rnn_cell", "lstm_cell", "gru_cell", "sequential", "bidirectional", "residual"):
        for layout in ("TNC", "NTC"):
            seed += 1
            cell_case(case, layout, seed)
    for case in ("lstm_cell", "sequential", "bidirectional", "residual"):
        for layout in ("TNC", "NTC"):
            seed += 1
            cell_case(case, layout, seed, valid_length=True)
    for bidirectional in (False, True):
        seed += 1
        projection_case(bidirectional, seed)
    lm_case()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gluon_rnn_reference.npz")
    np.savez_compressed(path, **OUT)


if __name__ == "__main__":
    main()

"""End to end: an Embedding -> LSTM -> Dense language-model-like Gluon network fed by a
DataLoader over an ArrayDataset (shuffle after numpy.random.seed(0)), trained three steps with
Trainer("adam") and SoftmaxCrossEntropyLoss from mxnet's initial parameters: the batches, the
losses and the final parameters are mxnet 1.9.1's (data/gluon_rnn_reference.npz, written by
data/make_gluon_rnn_reference.py with mxnet 1.9.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradhub_compat.mxnet as mx
import numpy as np
from gradhub_compat.mxnet import autograd, gluon

REF = np.load(Path(__file__).parent / "data" / "gluon_rnn_reference.npz", allow_pickle=False)


class LanguageModel(gluon.HybridBlock):
    """Embedding(12, 6) -> LSTM(8, layout NTC) -> Dense(12, flatten=False)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed = gluon.nn.Embedding(12, 6)
            self.lstm = gluon.rnn.LSTM(8, layout="NTC", input_size=6)
            self.out = gluon.nn.Dense(12, flatten=False, in_units=8)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.out(self.lstm(self.embed(x)))


def test_lstm_language_model_trains_as_mxnet() -> None:
    net = LanguageModel(prefix="lm_")
    net.initialize()
    params = net.collect_params()
    names = [k[len("lm_") :] for k in params.keys()]
    # mxnet 1.9.1's parameter names and order
    assert names == [k[len("lm__param__") :] for k in REF.files if k.startswith("lm__param__")]
    for name, p in params.items():
        p.set_data(mx.nd.array(REF[f"lm__param__{name[len('lm_') :]}"]))
    trainer = gluon.Trainer(params, "adam", {"learning_rate": 0.05})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    np.random.seed(0)
    loader = gluon.data.DataLoader(
        gluon.data.ArrayDataset(mx.nd.array(REF["lm__data"]), mx.nd.array(REF["lm__labels"])),
        batch_size=4,
        shuffle=True,
        last_batch="discard",
    )
    batches, losses = [], []
    while len(losses) < 3:
        for x, y in loader:
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(x.shape[0])
            batches.append(y.asnumpy())
            losses.append(loss.mean().asscalar())
            if len(losses) == 3:
                break
    np.testing.assert_array_equal(np.stack(batches), REF["lm__batch_labels"])
    np.testing.assert_allclose(losses, REF["lm__losses"], rtol=1e-5)
    for name, p in params.items():
        np.testing.assert_allclose(
            p.data().asnumpy(),
            REF[f"lm__final__{name[len('lm_') :]}"],
            rtol=1e-4,
            atol=1e-5,
            err_msg=name,
        )

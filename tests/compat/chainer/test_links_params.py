"""The parameters of the links added to the chainer layer on 2026-11-27: names, shapes and
initial values after ``numpy.random.seed(0)`` equal chainer 7.8.1's, and a model saved with
``save_npz`` has chainer's keys (EXPECTED: chainer 7.8.1 saved the same model, 2026-11-27; each
entry holds the shape, the sum and the sum of squares of the initial array).
"""

from __future__ import annotations

import io

import gradhub_compat.chainer.links as L
import numpy as np
from gradhub_compat import chainer
from gradhub_compat.chainer import serializers


class _Model(chainer.Chain):
    def __init__(self) -> None:
        super().__init__()
        with self.init_scope():
            self.rnn = L.NStepBiLSTM(2, 3, 2, 0.0)
            self.gru = L.GRU(2, 3)
            self.bl = L.Bilinear(2, 2, 2)
            self.dw = L.DepthwiseConvolution2D(2, 2, 2)
            self.gn = L.GroupNormalization(2, 4)
            self.sc = L.Scale(W_shape=(2,), bias_term=True)
            self.mo = L.Maxout(2, 2, 2)
            self.hw = L.Highway(2)
            self.pr = L.PReLU()
            self.dn = L.Deconvolution3D(2, 2, 2)


def test_names_shapes_and_initial_values_match_chainer() -> None:
    np.random.seed(0)
    model = _Model()
    buf = io.BytesIO()
    serializers.save_npz(buf, model)
    buf.seek(0)
    saved = np.load(buf)
    assert sorted(saved.files) == sorted(EXPECTED)
    for key, (shape, total, squares) in EXPECTED.items():
        a = saved[key]
        assert a.shape == shape, key
        assert a.dtype == np.float32, key
        np.testing.assert_allclose(a.astype(np.float64).sum(), total, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose((a.astype(np.float64) ** 2).sum(), squares, rtol=1e-6)


def test_a_saved_model_loads_back() -> None:
    np.random.seed(0)
    model = _Model()
    buf = io.BytesIO()
    serializers.save_npz(buf, model)
    np.random.seed(1)
    other = _Model()
    buf.seek(0)
    serializers.load_npz(buf, other)
    for (name, p), (name2, q) in zip(model.namedparams(), other.namedparams(), strict=True):
        assert name == name2
        np.testing.assert_array_equal(p.array, q.array)
    assert other.rnn.ws[3][7] is other.rnn[3].w7


# fmt: off
EXPECTED = {  # chainer 7.8.1: save_npz of the model after numpy.random.seed(0)
    'bl/V1': ((2, 2), -1.9078901, 1.3113097),
    'bl/V2': ((2, 2), 1.085798, 2.1768051),
    'bl/W': ((2, 2, 2), -1.0071299, 0.84492383),
    'bl/b': ((2,), 0, 0),
    'dn/W': ((2, 2, 2, 2, 2), 1.1812833, 2.5532429),
    'dn/b': ((2,), 0, 0),
    'dw/W': ((2, 2, 2, 2), -1.5477944, 1.8035377),
    'dw/b': ((4,), 0, 0),
    'gn/beta': ((4,), 0, 0),
    'gn/gamma': ((4,), 4, 4),
    'gru/U/W': ((3, 3), 0.33985783, 2.6867056),
    'gru/U/b': ((3,), 0, 0),
    'gru/U_r/W': ((3, 3), -3.1093034, 4.7123267),
    'gru/U_r/b': ((3,), 0, 0),
    'gru/U_z/W': ((3, 3), 2.5939227, 4.0001969),
    'gru/U_z/b': ((3,), 0, 0),
    'gru/W/W': ((3, 2), 0.45736675, 0.78116286),
    'gru/W/b': ((3,), 0, 0),
    'gru/W_r/W': ((3, 2), -2.5879811, 1.6722821),
    'gru/W_r/b': ((3,), 0, 0),
    'gru/W_z/W': ((3, 2), 0.12953872, 1.1681045),
    'gru/W_z/b': ((3,), 0, 0),
    'hw/plain/W': ((2, 2), -2.1863583, 2.1821981),
    'hw/plain/b': ((2,), 0, 0),
    'hw/transform/W': ((2, 2), 0.34662765, 0.20728392),
    'hw/transform/b': ((2,), -2, 2),
    'mo/linear/W': ((4, 2), -2.26516, 3.8973516),
    'mo/linear/b': ((4,), 0, 0),
    'pr/W': ((), 0.25, 0.0625),
    'rnn/0/b0': ((2,), 0, 0),
    'rnn/0/b1': ((2,), 0, 0),
    'rnn/0/b2': ((2,), 0, 0),
    'rnn/0/b3': ((2,), 0, 0),
    'rnn/0/b4': ((2,), 0, 0),
    'rnn/0/b5': ((2,), 0, 0),
    'rnn/0/b6': ((2,), 0, 0),
    'rnn/0/b7': ((2,), 0, 0),
    'rnn/0/w0': ((2, 3), 3.6223655, 4.5647941),
    'rnn/0/w1': ((2, 3), 1.5614022, 1.0801607),
    'rnn/0/w2': ((2, 3), 1.7027047, 1.0588995),
    'rnn/0/w3': ((2, 3), -1.3383719, 3.023508),
    'rnn/0/w4': ((2, 2), 0.47656424, 3.6520486),
    'rnn/0/w5': ((2, 2), 2.4997978, 2.3377216),
    'rnn/0/w6': ((2, 2), -2.1638496, 2.4286031),
    'rnn/0/w7': ((2, 2), 1.2325161, 1.6003708),
    'rnn/1/b0': ((2,), 0, 0),
    'rnn/1/b1': ((2,), 0, 0),
    'rnn/1/b2': ((2,), 0, 0),
    'rnn/1/b3': ((2,), 0, 0),
    'rnn/1/b4': ((2,), 0, 0),
    'rnn/1/b5': ((2,), 0, 0),
    'rnn/1/b6': ((2,), 0, 0),
    'rnn/1/b7': ((2,), 0, 0),
    'rnn/1/w0': ((2, 3), -1.8312351, 3.4281503),
    'rnn/1/w1': ((2, 3), -1.622647, 1.9251553),
    'rnn/1/w2': ((2, 3), -0.53248929, 0.6449968),
    'rnn/1/w3': ((2, 3), -2.637628, 1.5855619),
    'rnn/1/w4': ((2, 2), -0.98413059, 1.5323109),
    'rnn/1/w5': ((2, 2), 0.0019237213, 0.68704912),
    'rnn/1/w6': ((2, 2), -0.26721108, 1.7269362),
    'rnn/1/w7': ((2, 2), -1.2056411, 0.59678706),
    'rnn/2/b0': ((2,), 0, 0),
    'rnn/2/b1': ((2,), 0, 0),
    'rnn/2/b2': ((2,), 0, 0),
    'rnn/2/b3': ((2,), 0, 0),
    'rnn/2/b4': ((2,), 0, 0),
    'rnn/2/b5': ((2,), 0, 0),
    'rnn/2/b6': ((2,), 0, 0),
    'rnn/2/b7': ((2,), 0, 0),
    'rnn/2/w0': ((2, 4), 1.5240458, 2.9942833),
    'rnn/2/w1': ((2, 4), 1.5254104, 1.384687),
    'rnn/2/w2': ((2, 4), 1.2797877, 2.8209298),
    'rnn/2/w3': ((2, 4), 2.8932422, 4.0204936),
    'rnn/2/w4': ((2, 2), 1.1195567, 2.55291),
    'rnn/2/w5': ((2, 2), 1.6465179, 1.0744365),
    'rnn/2/w6': ((2, 2), 0.63756201, 1.599312),
    'rnn/2/w7': ((2, 2), 0.4029857, 2.0569751),
    'rnn/3/b0': ((2,), 0, 0),
    'rnn/3/b1': ((2,), 0, 0),
    'rnn/3/b2': ((2,), 0, 0),
    'rnn/3/b3': ((2,), 0, 0),
    'rnn/3/b4': ((2,), 0, 0),
    'rnn/3/b5': ((2,), 0, 0),
    'rnn/3/b6': ((2,), 0, 0),
    'rnn/3/b7': ((2,), 0, 0),
    'rnn/3/w0': ((2, 4), 0.12358737, 0.70479143),
    'rnn/3/w1': ((2, 4), -0.28946184, 1.1438524),
    'rnn/3/w2': ((2, 4), 1.6997137, 3.3843158),
    'rnn/3/w3': ((2, 4), -1.9358543, 1.407872),
    'rnn/3/w4': ((2, 2), 1.7454731, 2.4400978),
    'rnn/3/w5': ((2, 2), -2.0690362, 2.8006949),
    'rnn/3/w6': ((2, 2), 1.9406962, 1.2307179),
    'rnn/3/w7': ((2, 2), -0.10383391, 1.3461112),
    'sc/W': ((2,), 2, 2),
    'sc/bias/b': ((2,), 0, 0),
}
# fmt: on

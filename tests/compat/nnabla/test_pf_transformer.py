"""PF.transformer (with PF.transformer_encode and PF.transformer_decode) as nnabla 1.39's: the 58
parameters' names and shapes, their initial values drawn from the global generator (nnabla's
transformer does not pass its rng on), the output and the gradients, with a target mask; and
transformer_encode's post-norm formula checked independently.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub_nn_ops import parametric as _native_pf

# nnabla 1.39's outputs of the run of test_transformer_as_nnabla (its global generator seeded
# 7; arrays: their first 8 values, raveled; every third parameter's values and gradients)
_NNABLA: dict[str, Any] = {
    "names": [
        "transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/q_weight",
        "transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/k_weight",
        "transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/v_weight",
        "transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/out_weight",
        "transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/q_bias",
        "transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/k_bias",
        "transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/v_bias",
        "transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/out_bias",
        "transformer/encoder00/transformer_encode/enc_layer_norm1/layer_normalization/beta",
        "transformer/encoder00/transformer_encode/enc_layer_norm1/layer_normalization/gamma",
        "transformer/encoder00/transformer_encode/enc_affine1/affine/W",
        "transformer/encoder00/transformer_encode/enc_affine1/affine/b",
        "transformer/encoder00/transformer_encode/enc_affine2/affine/W",
        "transformer/encoder00/transformer_encode/enc_affine2/affine/b",
        "transformer/encoder00/transformer_encode/enc_layer_norm2/layer_normalization/beta",
        "transformer/encoder00/transformer_encode/enc_layer_norm2/layer_normalization/gamma",
        "transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/q_weight",
        "transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/k_weight",
        "transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/v_weight",
        "transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/out_weight",
        "transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/q_bias",
        "transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/k_bias",
        "transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/v_bias",
        "transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/out_bias",
        "transformer/encoder01/transformer_encode/enc_layer_norm1/layer_normalization/beta",
        "transformer/encoder01/transformer_encode/enc_layer_norm1/layer_normalization/gamma",
        "transformer/encoder01/transformer_encode/enc_affine1/affine/W",
        "transformer/encoder01/transformer_encode/enc_affine1/affine/b",
        "transformer/encoder01/transformer_encode/enc_affine2/affine/W",
        "transformer/encoder01/transformer_encode/enc_affine2/affine/b",
        "transformer/encoder01/transformer_encode/enc_layer_norm2/layer_normalization/beta",
        "transformer/encoder01/transformer_encode/enc_layer_norm2/layer_normalization/gamma",
        "transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/q_weight",
        "transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/k_weight",
        "transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/v_weight",
        "transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/out_weight",
        "transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/q_bias",
        "transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/k_bias",
        "transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/v_bias",
        "transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/out_bias",
        "transformer/decoder00/transformer_decode/dec_layer_norm1/layer_normalization/beta",
        "transformer/decoder00/transformer_decode/dec_layer_norm1/layer_normalization/gamma",
        "transformer/decoder00/transformer_decode/tgt_memory_attn/multi_head_attention/q_weight",
        "transformer/decoder00/transformer_decode/tgt_memory_attn/multi_head_attention/k_weight",
        "transformer/decoder00/transformer_decode/tgt_memory_attn/multi_head_attention/v_weight",
        "transformer/decoder00/transformer_decode/tgt_memory_attn/multi_head_attention/out_weight",
        "transformer/decoder00/transformer_decode/tgt_memory_attn/multi_head_attention/q_bias",
        "transformer/decoder00/transformer_decode/tgt_memory_attn/multi_head_attention/k_bias",
        "transformer/decoder00/transformer_decode/tgt_memory_attn/multi_head_attention/v_bias",
        "transformer/decoder00/transformer_decode/tgt_memory_attn/multi_head_attention/out_bias",
        "transformer/decoder00/transformer_decode/dec_layer_norm2/layer_normalization/beta",
        "transformer/decoder00/transformer_decode/dec_layer_norm2/layer_normalization/gamma",
        "transformer/decoder00/transformer_decode/dec_affine1/affine/W",
        "transformer/decoder00/transformer_decode/dec_affine1/affine/b",
        "transformer/decoder00/transformer_decode/dec_affine2/affine/W",
        "transformer/decoder00/transformer_decode/dec_affine2/affine/b",
        "transformer/decoder00/transformer_decode/dec_layer_norm3/layer_normalization/beta",
        "transformer/decoder00/transformer_decode/dec_layer_norm3/layer_normalization/gamma",
    ],
    "shapes": [
        [8, 8],
        [8, 8],
        [8, 8],
        [8, 8],
        [8],
        [8],
        [8],
        [8],
        [1, 1, 8],
        [1, 1, 8],
        [8, 16],
        [16],
        [16, 8],
        [8],
        [1, 1, 8],
        [1, 1, 8],
        [8, 8],
        [8, 8],
        [8, 8],
        [8, 8],
        [8],
        [8],
        [8],
        [8],
        [1, 1, 8],
        [1, 1, 8],
        [8, 16],
        [16],
        [16, 8],
        [8],
        [1, 1, 8],
        [1, 1, 8],
        [8, 8],
        [8, 8],
        [8, 8],
        [8, 8],
        [8],
        [8],
        [8],
        [8],
        [1, 1, 8],
        [1, 1, 8],
        [8, 8],
        [8, 8],
        [8, 8],
        [8, 8],
        [8],
        [8],
        [8],
        [8],
        [1, 1, 8],
        [1, 1, 8],
        [8, 16],
        [16],
        [16, 8],
        [8],
        [1, 1, 8],
        [1, 1, 8],
    ],
    "y": [
        -0.2830257713794708,
        -0.4626300036907196,
        -1.4644094705581665,
        -0.14994820952415466,
        0.5196738243103027,
        1.475356101989746,
        1.412432312965393,
        -1.047448754310608,
    ],
    "loss": 47.99968719482422,
    "gsrc": [
        5.895743015571497e-06,
        3.794039685089956e-06,
        -2.3587831492477562e-06,
        7.884625574661186e-07,
        8.394285373469756e-07,
        4.617349532054504e-06,
        1.0203041256318102e-06,
        5.307917035679566e-06,
    ],
    "gtgt": [
        -1.2014558706141543e-05,
        2.5181170713040046e-06,
        3.963132712669903e-06,
        -4.3781915337604005e-07,
        5.294618404150242e-06,
        -3.4475988286430947e-06,
        5.468084054882638e-06,
        -1.3142401940058335e-06,
    ],
    "init_transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/q_weight": [
        -0.5189142227172852,
        0.3428291082382202,
        -0.07543297857046127,
        0.27368783950805664,
        0.5854151844978333,
        0.04714762046933174,
        0.0013722821604460478,
        -0.5241281986236572,
    ],
    "g_transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/q_weight": [
        -1.3029425645072479e-06,
        -4.178115432296181e-06,
        6.188073712110054e-06,
        4.00060980609851e-06,
        -4.559989520203089e-06,
        3.374039351911051e-06,
        -2.6242387320962735e-06,
        -6.788359314668924e-06,
    ],
    "init_transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/out_weight": [
        -0.3274097144603729,
        -0.05991623178124428,
        -0.2739543914794922,
        0.002212980529293418,
        0.517581045627594,
        -0.14389388263225555,
        0.1838688999414444,
        0.11711146682500839,
    ],
    "g_transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/out_weight": [
        9.774023965292145e-06,
        -1.179005721496651e-05,
        5.887468432774767e-06,
        -6.1728424043394625e-06,
        2.2664762582280673e-06,
        -6.6674110712483525e-06,
        3.6316430396254873e-06,
        3.0706983125128318e-06,
    ],
    "init_transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/v_bias": [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    "g_transformer/encoder00/transformer_encode/src_self_attn/multi_head_attention/v_bias": [
        -7.094759894243907e-06,
        -1.721321496006567e-05,
        -3.088381345150992e-05,
        8.469785825582221e-06,
        4.453549991012551e-05,
        9.766165021574125e-06,
        -9.851223694568034e-06,
        -2.1502932213479653e-05,
    ],
    "init_transformer/encoder00/transformer_encode/enc_layer_norm1/layer_normalization/gamma": [
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
    ],
    "g_transformer/encoder00/transformer_encode/enc_layer_norm1/layer_normalization/gamma": [
        -2.1059364371467382e-05,
        -6.79764252708992e-06,
        -2.9004202133364743e-06,
        6.299377673713025e-06,
        1.0167914297198877e-05,
        9.23014977161074e-06,
        3.057664343941724e-06,
        2.0020995634695282e-06,
    ],
    "init_transformer/encoder00/transformer_encode/enc_affine2/affine/W": [
        -0.15753987431526184,
        0.2123451828956604,
        0.3402191698551178,
        -0.139308899641037,
        0.4899141192436218,
        0.1258692443370819,
        0.0009852705989032984,
        0.21490751206874847,
    ],
    "g_transformer/encoder00/transformer_encode/enc_affine2/affine/W": [
        -1.7269491081606247e-07,
        1.6613610114291077e-06,
        -3.3523820093250833e-06,
        -1.1026768333977088e-06,
        5.716877353734162e-07,
        4.0095737858791836e-06,
        1.3569249404099537e-06,
        -2.971793946926482e-06,
    ],
    "init_transformer/encoder00/transformer_encode/enc_layer_norm2/layer_normalization/gamma": [
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
    ],
    "g_transformer/encoder00/transformer_encode/enc_layer_norm2/layer_normalization/gamma": [
        -1.894953311420977e-05,
        -8.124253326968756e-06,
        -2.0047584712301614e-06,
        -9.503435649094172e-06,
        2.6994099243893288e-05,
        -9.02274769032374e-06,
        -6.184872290759813e-06,
        -5.289400633046171e-07,
    ],
    "init_transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/v_weight": [
        0.2554191052913666,
        -0.5352004766464233,
        -0.541693925857544,
        0.5297015905380249,
        0.37507307529449463,
        -0.3016778826713562,
        -0.19386720657348633,
        0.3991684913635254,
    ],
    "g_transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/v_weight": [
        -1.0706177135944017e-06,
        2.5563253984728362e-06,
        -2.1270392380756675e-07,
        -6.09561539022252e-08,
        -5.665551270794822e-06,
        -4.875942977378145e-06,
        1.5577703379676677e-05,
        -7.968371392053086e-06,
    ],
    "init_transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/k_bias": [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    "g_transformer/encoder01/transformer_encode/src_self_attn/multi_head_attention/k_bias": [
        8.881784197001252e-15,
        1.4210854715202004e-13,
        5.684341886080801e-13,
        -7.247535904753022e-13,
        5.684341886080801e-13,
        1.2789769243681803e-13,
        2.2737367544323206e-13,
        2.2737367544323206e-13,
    ],
    "init_transformer/encoder01/transformer_encode/enc_layer_norm1/layer_normalization/beta": [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    "g_transformer/encoder01/transformer_encode/enc_layer_norm1/layer_normalization/beta": [
        2.1506904886336997e-05,
        8.77786624187138e-06,
        -2.966981628560461e-05,
        -1.9768265701713972e-05,
        1.480000173614826e-05,
        1.2382253771647811e-05,
        2.0520343241514638e-05,
        -3.263454345869832e-05,
    ],
    "init_transformer/encoder01/transformer_encode/enc_affine1/affine/b": [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    "g_transformer/encoder01/transformer_encode/enc_affine1/affine/b": [
        -3.378658220754005e-06,
        -7.624607860634569e-06,
        -3.59294199370197e-06,
        0.0,
        9.26022130443016e-06,
        1.0753528840723448e-05,
        4.19849584432086e-07,
        1.8830764020094648e-05,
    ],
    "init_transformer/encoder01/transformer_encode/enc_layer_norm2/layer_normalization/beta": [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    "g_transformer/encoder01/transformer_encode/enc_layer_norm2/layer_normalization/beta": [
        2.5544719392200932e-05,
        3.715672573889606e-05,
        -5.774253440904431e-05,
        -4.147729850956239e-05,
        1.8045041088043945e-06,
        4.692046786658466e-06,
        7.969936177687487e-08,
        -5.082387360744178e-05,
    ],
    "init_transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/k_weight": [
        0.056565724313259125,
        0.1731472909450531,
        0.4360191822052002,
        -0.355863481760025,
        0.45781028270721436,
        0.09030250459909439,
        -0.16357150673866272,
        -0.20178267359733582,
    ],
    "g_transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/k_weight": [
        -1.5589266695315018e-06,
        -1.2999865930396481e-06,
        3.357762125233421e-06,
        -7.144104756662273e-07,
        7.757181492706877e-07,
        -2.5513868422422092e-06,
        -6.663428280262451e-07,
        1.1607891110543278e-06,
    ],
    "init_transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/q_bias": [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    "g_transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/q_bias": [
        3.596227543312125e-06,
        6.608594048884697e-06,
        -2.8053631240254617e-07,
        -1.624459173399373e-06,
        -7.483517947548535e-07,
        2.9445645850501023e-06,
        1.0637979812599951e-06,
        1.222281014179316e-07,
    ],
    "init_transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/out_bias": [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    "g_transformer/decoder00/transformer_decode/tgt_self_attn/multi_head_attention/out_bias": [
        -6.314212077995762e-05,
        4.161538527114317e-05,
        -6.174923328217119e-05,
        -7.75896569393808e-06,
        4.329760486143641e-05,
        9.827292524278164e-05,
        9.417407272849232e-05,
        -0.00014470967289526016,
    ],
}


@pytest.fixture
def seeded() -> Iterator[None]:
    """The generator PF.affine draws from without rng, seeded 7 for the test (then restored)."""
    saved = list(_native_pf._PRNG)
    _native_pf.seed(7)
    yield
    _native_pf._PRNG[:] = saved


def test_transformer_as_nnabla(seeded: None) -> None:
    # regression: PF.transformer, PF.transformer_encode and PF.transformer_decode raised
    # AttributeError
    rs = np.random.RandomState(4)
    src = nn.Variable.from_numpy_array(rs.randn(5, 2, 8).astype(np.float32), need_grad=True)
    tgt = nn.Variable.from_numpy_array(rs.randn(3, 2, 8).astype(np.float32), need_grad=True)
    tm = nn.Variable.from_numpy_array(np.triu(np.full((3, 3), -1e4, np.float32), 1))
    y = PF.transformer(
        src,
        tgt,
        embed_dim=8,
        num_heads=2,
        num_encoder_layers=2,
        num_decoder_layers=1,
        dim_feedforward=16,
        dropout=0.0,
        tgt_additive_mask=tm,
    )
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    ps = nn.get_parameters()
    assert list(ps) == _NNABLA["names"]
    assert [list(p.shape) for p in ps.values()] == _NNABLA["shapes"]
    assert float(loss.d) == pytest.approx(_NNABLA["loss"], rel=1e-4)
    for key, got in (("y", y.d), ("gsrc", src.g), ("gtgt", tgt.g)):
        np.testing.assert_allclose(got.ravel()[:8], _NNABLA[key], rtol=1e-4, atol=1e-5)
    for key, val in _NNABLA.items():
        if key.startswith(("init_", "g_")):
            name = key.split("_", 1)[1]
            got = ps[name].d if key.startswith("init_") else ps[name].g
            np.testing.assert_allclose(got.ravel()[:8], val, rtol=1e-4, atol=1e-5, err_msg=key)


def _ln(a: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    mu = a.mean(axis=2, keepdims=True)
    return (a - mu) / np.sqrt(a.var(axis=2, keepdims=True) + 1e-5) * gamma + beta


def test_transformer_encode_is_post_norm(seeded: None) -> None:
    # independent: LN2(x + W2 relu(W1 x + b1) + b2) with x = LN1(src + attention(src))
    rs = np.random.RandomState(1)
    src = nn.Variable.from_numpy_array(rs.randn(4, 2, 6).astype(np.float32))
    y = PF.transformer_encode(src, 6, 2, dim_feedforward=10, dropout=0.0, name="enc")
    y.forward()
    p = {k.split("/", 2)[2]: v.d.astype(np.float64) for k, v in nn.get_parameters().items()}
    attn, _ = F.multi_head_attention(
        src,
        src,
        src,
        2,
        *(
            nn.get_parameters()[f"enc/transformer_encode/src_self_attn/multi_head_attention/{n}"]
            for n in (
                "q_weight",
                "k_weight",
                "v_weight",
                "out_weight",
                "q_bias",
                "k_bias",
                "v_bias",
                "out_bias",
            )
        ),
    )
    attn.forward()

    def ln(a: np.ndarray, n: str) -> np.ndarray:
        pre = f"{n}/layer_normalization/"
        return _ln(a, p[pre + "gamma"].reshape(1, 1, -1), p[pre + "beta"].reshape(1, 1, -1))

    x = ln(src.d.astype(np.float64) + attn.d, "enc_layer_norm1")
    h = np.maximum(x @ p["enc_affine1/affine/W"] + p["enc_affine1/affine/b"], 0)
    ref = ln(x + h @ p["enc_affine2/affine/W"] + p["enc_affine2/affine/b"], "enc_layer_norm2")
    np.testing.assert_allclose(y.d, ref, rtol=1e-4, atol=1e-5)


def test_transformer_errors() -> None:
    with pytest.raises(ValueError, match=r"nnabla PF\.transformer: .* the same batch size"):
        PF.transformer(nn.Variable((5, 2, 8)), nn.Variable((3, 3, 8)), embed_dim=8)
    with pytest.raises(ValueError, match=r"nnabla PF\.transformer: .* embed_dim=8 features"):
        PF.transformer(nn.Variable((5, 2, 6)), nn.Variable((3, 2, 6)), embed_dim=8)

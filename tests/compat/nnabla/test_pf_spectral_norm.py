"""F.spectral_norm and PF.spectral_norm as nnabla 1.39's: W / sigma after itr power iterations,
u written back at each forward() (not at the build, not in test mode), the gradient of W with u
and v held constant, dim 0, 1 and last, PF.spectral_norm's parameter in apply_w of
PF.convolution; an independent numpy transcription; errors.
"""

from __future__ import annotations

from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39's outputs of the runs below (y after the second forward() and gW: their first
# 8 values, raveled)
_NNABLA: dict[str, dict[str, Any]] = {
    "d0": {
        "u_build": [-0.6724604368209839, -0.35955315828323364, -0.8131462931632996],
        "y": [
            0.3687208294868469,
            0.08364054560661316,
            0.2045750468969345,
            0.46838971972465515,
            0.39035549759864807,
            -0.20426984131336212,
            0.19858673214912415,
            -0.0316365621984005,
        ],
        "u1": [-0.6184636354446411, -0.4880002737045288, -0.6159208416938782],
        "u2": [-0.5988956689834595, -0.6590337157249451, -0.45497092604637146],
        "gW": [
            -0.38544657826423645,
            0.033730365335941315,
            -0.09204968810081482,
            -0.33601483702659607,
            0.1157611832022667,
            -0.21276327967643738,
            0.008443458005785942,
            0.16458410024642944,
        ],
    },
    "d1i2": {
        "u_build": [
            -2.223403215408325,
            0.6252314448356628,
            -1.602057695388794,
            -1.1043833494186401,
        ],
        "y": [
            0.2753339409828186,
            -0.14417985081672668,
            -0.031061450019478798,
            -0.0903300791978836,
            0.3838740289211273,
            0.13955634832382202,
            0.08458177745342255,
            -0.1598207801580429,
        ],
        "u1": [-0.9172102212905884, 0.2846749424934387, -0.12872061133384705, -0.24721747636795044],
        "u2": [
            -0.9220960140228271,
            0.38140761852264404,
            -0.00028984653181396425,
            -0.06532244384288788,
        ],
        "gW": [
            -0.0125934649258852,
            -0.13324743509292603,
            0.33780163526535034,
            -0.27384909987449646,
            0.02078120782971382,
            -0.0010560411028563976,
            -0.25912463665008545,
            0.11061838269233704,
        ],
    },
    "d2": {
        "u_build": [
            -1.3467174768447876,
            0.6937731504440308,
            -0.15957343578338623,
            -0.13370156288146973,
            1.0777437686920166,
        ],
        "y": [
            0.2842775881290436,
            -0.21416936814785004,
            -0.38612857460975647,
            0.1372031420469284,
            -0.15161244571208954,
            0.037378113716840744,
            -0.08408331871032715,
            0.1820911318063736,
        ],
        "u1": [
            -0.7164321541786194,
            0.31410297751426697,
            -0.11463576555252075,
            -0.2314477413892746,
            0.5668816566467285,
        ],
        "u2": [
            -0.7103882431983948,
            0.24901297688484192,
            -0.09305315464735031,
            -0.29309484362602234,
            0.5820461511611938,
        ],
        "gW": [
            -0.42280662059783936,
            -0.14067816734313965,
            -0.12211652845144272,
            -0.01455819234251976,
            0.08595306426286697,
            -0.1457633227109909,
            0.014014540240168571,
            -0.03966986760497093,
        ],
    },
    "test": {
        "y": [
            0.4269255995750427,
            -0.12654027342796326,
            0.025106806308031082,
            0.2505034804344177,
            0.32632747292518616,
            -0.7967138886451721,
        ],
        "u": [0.03863055258989334, -1.6567151546478271, -0.9855107665061951],
    },
    "pf": {
        "names": ["c/conv/W", "c/conv/b", "c/conv/spectral-norm/u"],
        "need_grad": {"c/conv/W": True, "c/conv/spectral-norm/u": False, "c/conv/b": True},
        "loss": 55.00714111328125,
        "u": [-0.3125082850456238, -0.684567928314209, 0.6355711817741394, 0.17249524593353271],
        "gW": [
            -34.8044548034668,
            9.158377647399902,
            -0.2572603225708008,
            -1.7188224792480469,
            4.211864948272705,
            6.557883262634277,
            19.75152587890625,
            11.832468032836914,
            -23.891319274902344,
            30.273109436035156,
        ],
        "gx": [
            0.32082411646842957,
            3.7745070457458496,
            0.06532979011535645,
            -0.13084137439727783,
            -1.021166443824768,
            -2.167402744293213,
            -5.8846116065979,
            -3.3769655227661133,
            -1.7569899559020996,
            2.2973947525024414,
        ],
    },
}


def _close(got: Any, exp: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(exp, np.float32), rtol=rtol, atol=atol)


_CASES = (("d0", (3, 4, 5), 0, 1), ("d1i2", (3, 4, 5), 1, 2), ("d2", (3, 4, 5), 2, 1))


def _runs() -> dict[str, Any]:
    """The three F.spectral_norm runs of nnabla's probe, with its draws."""
    rs = np.random.RandomState(0)
    res: dict[str, Any] = {}
    for tag, shape, dim, itr in _CASES:
        wd = rs.randn(*shape).astype(np.float32)
        ud = rs.randn(shape[dim]).astype(np.float32)
        g = rs.randn(*shape).astype(np.float32)
        w = nn.Variable.from_numpy_array(wd, need_grad=True)
        u = nn.Variable.from_numpy_array(ud)
        y = F.spectral_norm(w, u, dim=dim, itr=itr)
        r: dict[str, Any] = {"u_build": u.d.copy(), "wd": wd, "ud": ud}
        y.forward()
        r["u1"] = u.d.copy()
        w.grad.zero()
        y.backward(g)
        r["y1"] = y.d.copy()
        r["gW"] = w.g.copy()
        r["g"] = g
        y.forward()  # (a second power iteration from the updated u)
        r["y"] = y.d.copy()
        r["u2"] = u.d.copy()
        res[tag] = r
    res["rs"] = rs
    return res


def test_spectral_norm_as_nnabla() -> None:
    # regression: F.spectral_norm raised AttributeError
    runs = _runs()
    for tag, _, _, _ in _CASES:
        got, exp = runs[tag], _NNABLA[tag]
        _close(got["u_build"], exp["u_build"], 0, 0)  # building does not update u
        _close(got["y"].ravel()[:8], exp["y"])
        _close(got["u1"], exp["u1"])
        _close(got["u2"], exp["u2"])
        _close(got["gW"].ravel()[:8], exp["gW"])


def _reference(w: np.ndarray, u: np.ndarray, dim: int, itr: int, g: np.ndarray) -> Any:
    """float64 power iteration and the gradient with u, v constant."""
    wt = np.moveaxis(w.astype(np.float64), dim, 0)
    w2 = wt.reshape(wt.shape[0], -1)
    u = u.astype(np.float64)
    for _ in range(itr):
        v = w2.T @ u
        v = v / np.sqrt(v @ v + 1e-12)
        u = w2 @ v
        u = u / np.sqrt(u @ u + 1e-12)
    sigma = u @ w2 @ v
    g2 = np.moveaxis(g.astype(np.float64), dim, 0).reshape(w2.shape)
    gw = g2 / sigma - (g2 * w2).sum() / sigma**2 * np.outer(u, v)

    def back(a: np.ndarray) -> np.ndarray:
        return np.moveaxis(a.reshape(wt.shape), 0, dim)

    return back(w2 / sigma), u, back(gw)


def test_spectral_norm_follows_the_power_iteration() -> None:
    runs = _runs()
    for tag, _, dim, itr in _CASES:
        r = runs[tag]
        y, u, gw = _reference(r["wd"], r["ud"], dim, itr, r["g"])
        np.testing.assert_allclose(r["y1"], y, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(r["u1"], u, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(r["gW"], gw, rtol=1e-5, atol=1e-6)


def test_spectral_norm_test_mode_leaves_u() -> None:
    rs = _runs()["rs"]
    wd, ud = rs.randn(3, 4).astype(np.float32), rs.randn(3).astype(np.float32)
    u = nn.Variable.from_numpy_array(ud)
    y = F.spectral_norm(nn.Variable.from_numpy_array(wd, need_grad=True), u, test=True)
    y.forward()
    _close(y.d.ravel()[:6], _NNABLA["test"]["y"])
    np.testing.assert_array_equal(u.d, ud)


def test_pf_spectral_norm_in_apply_w_as_nnabla() -> None:
    # regression: PF.spectral_norm raised AttributeError; its u sits in the layer's scope
    rs = _runs()["rs"]
    rs.randn(3, 4)  # (the draws of the test-mode run)
    rs.randn(3)
    nn.clear_parameters()
    x = nn.Variable.from_numpy_array(rs.randn(2, 3, 5, 5).astype(np.float32), need_grad=True)
    u0 = np.linspace(-1, 1, 4).astype(np.float32)
    h = PF.convolution(
        x,
        4,
        (3, 3),
        rng=np.random.RandomState(5),
        apply_w=lambda w: PF.spectral_norm(w, dim=0, u_init=u0),
        name="c",
    )
    loss = F.sum(h * h)
    loss.forward()
    loss.backward()
    loss.forward()
    ps = nn.get_parameters(grad_only=False)
    exp = _NNABLA["pf"]
    assert sorted(ps) == exp["names"]
    assert {k: v.need_grad for k, v in ps.items()} == exp["need_grad"]
    assert float(loss.d) == pytest.approx(exp["loss"], rel=1e-5)
    _close(ps["c/conv/spectral-norm/u"].d, exp["u"])
    _close(ps["c/conv/W"].g.ravel()[:10], exp["gW"], atol=1e-5)
    _close(x.g.ravel()[:10], exp["gx"])


def test_spectral_norm_errors() -> None:
    w = nn.Variable((3, 4))
    u = nn.Variable((3,))
    with pytest.raises(ValueError, match=r"nnabla F\.spectral_norm: dim=2 is out of range"):
        F.spectral_norm(w, u, dim=2)
    with pytest.raises(ValueError, match=r"nnabla F\.spectral_norm: itr must be an int > 0"):
        F.spectral_norm(w, u, itr=0)
    with pytest.raises(ValueError, match=r"nnabla F\.spectral_norm: u must have shape \(4,\)"):
        F.spectral_norm(w, u, dim=1)
    with pytest.raises(NotImplementedError, match=r"nnabla F\.spectral_norm: output_u=True"):
        F.spectral_norm(w, u, output_u=True)

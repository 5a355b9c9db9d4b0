"""The solvers nnabla 1.39 has beyond Sgd, Momentum, Adam, Adagrad and RMSprop: ``Nesterov``,
``Adadelta``, ``Adamax``, ``AMSGRAD`` and ``RMSpropGraves`` (constructor defaults, state names,
and five steps, with weight_decay, clip_grad_by_norm, scale_grad and a parameter left unwritten
after zero_grad, against nnabla 1.39's outputs), and clip_grad_by_norm's sum in nnabla's order.
"""

from __future__ import annotations

import inspect
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.solvers as S
import numpy as np
import pytest

_CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("Nesterov", {}),
    ("Nesterov", {"lr": 0.05, "momentum": 0.8}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "decay": 0.9, "eps": 1e-5}),
    ("Adamax", {}),
    ("Adamax", {"alpha": 0.01, "beta1": 0.8, "beta2": 0.99, "eps": 1e-6}),
    ("AMSGRAD", {}),
    ("AMSGRAD", {"alpha": 0.01, "bias_correction": True}),
    ("RMSpropGraves", {}),
    ("RMSpropGraves", {"lr": 0.001, "decay": 0.9, "momentum": 0.5, "eps": 1e-3}),
]

# nnabla 1.39's outputs for the run of _run (keyed by solver name and index in _CONFIGS): the
# parameters after 5 steps, the step counts of w and b, and w's states in nnabla's order
_EXPECTED: dict[tuple[str, int], dict[str, Any]] = {
    ("Nesterov", 0): {
        "w": [1.7651824951171875, 0.39805009961128235, 0.9740166068077087, 2.2290966510772705],
        "b": [1.837669849395752, -0.9817593693733215, 0.9746601581573486],
        "t": (5, 4),
        "states": {
            "m": [
                0.00091116304975003,
                7.293967064470053e-05,
                -0.0004317964776419103,
                -0.0031783138401806355,
            ]
        },
    },
    ("Nesterov", 1): {
        "w": [1.5167276859283447, -0.5647093057632446, -0.38213837146759033, -1.292814016342163],
        "b": [1.8991291522979736, -2.2491817474365234, 2.3001091480255127],
        "t": (5, 4),
        "states": {
            "m": [
                -0.005971072241663933,
                0.01898210681974888,
                0.04778284579515457,
                -0.024957681074738503,
            ]
        },
    },
    ("Adadelta", 2): {
        "w": [-0.4081287086009979, -0.04707241430878639, -2.122452735900879, 1.6349865198135376],
        "b": [-1.7964768409729004, -0.8332887887954712, 0.5080924034118652],
        "t": (5, 4),
        "states": {
            "e_sqr_delta": [
                2.2856215764477383e-06,
                1.9036049252463272e-06,
                3.1924882932798937e-06,
                5.057879207015503e-06,
            ],
            "e_sqr_grad": [
                0.15327677130699158,
                0.08328769356012344,
                0.14654971659183502,
                0.1974610537290573,
            ],
        },
    },
    ("Adadelta", 3): {
        "w": [1.8059852123260498, 0.43646910786628723, 0.1107175275683403, -1.840510606765747],
        "b": [-0.28412970900535583, -0.35241007804870605, -0.08838460594415665],
        "t": (5, 4),
        "states": {
            "e_sqr_delta": [
                3.0654508009320125e-05,
                6.207734259078279e-05,
                2.8054200811311603e-05,
                3.486017885734327e-05,
            ],
            "e_sqr_grad": [
                0.11400412023067474,
                0.23569877445697784,
                0.059551551938056946,
                0.576219379901886,
            ],
        },
    },
    ("Adamax", 4): {
        "w": [0.04956847429275513, 0.4933501183986664, -0.9877607226371765, 0.6864299178123474],
        "b": [-0.4178394377231598, -1.5885262489318848, -0.6483893394470215],
        "t": (5, 4),
        "states": {
            "u": [1.1528651714324951, 1.2841311693191528, 1.2065315246582031, 2.2189159393310547],
            "m": [
                -0.01126108132302761,
                0.0584847554564476,
                -0.34952715039253235,
                0.4876716732978821,
            ],
        },
    },
    ("Adamax", 5): {
        "w": [0.4695289134979248, -0.32348403334617615, 2.4360411167144775, -0.25321388244628906],
        "b": [0.1319817453622818, 1.577553391456604, -0.9105385541915894],
        "t": (5, 4),
        "states": {
            "u": [1.6109644174575806, 0.8545287847518921, 1.1408764123916626, 1.799817442893982],
            "m": [
                -0.21478842198848724,
                -0.16892313957214355,
                -0.02406272292137146,
                0.2452237904071808,
            ],
        },
    },
    ("AMSGRAD", 6): {
        "w": [-0.30626776814460754, 0.7184150815010071, 0.2266116738319397, -0.9132221937179565],
        "b": [-2.4988327026367188, 0.9144566655158997, 1.1176873445510864],
        "t": (5, 4),
        "states": {
            "v_hat": [
                0.007022374775260687,
                0.006990670692175627,
                0.0008722056518308818,
                0.007639029063284397,
            ],
            "v": [
                0.007022374775260687,
                0.006990670692175627,
                0.0008722056518308818,
                0.007631510961800814,
            ],
            "m": [
                -0.0030516386032104492,
                0.18945413827896118,
                0.007024962455034256,
                0.21078935265541077,
            ],
        },
    },
    ("AMSGRAD", 7): {
        "w": [1.7272690534591675, -0.4652058482170105, 0.0015376484952867031, 0.42521795630455017],
        "b": [-0.7743823528289795, 0.0036604469642043114, -0.01116173341870308],
        "t": (5, 4),
        "states": {
            "v_hat": [
                0.0047999182716012,
                0.0034483361523598433,
                0.008271611295640469,
                0.0010289193596690893,
            ],
            "v": [
                0.0047999182716012,
                0.0034483361523598433,
                0.008271611295640469,
                0.0010289193596690893,
            ],
            "m": [
                -0.29064616560935974,
                -0.06897018849849701,
                0.0005741268396377563,
                -0.0040954891592264175,
            ],
        },
    },
    ("RMSpropGraves", 8): {
        "w": [0.09011373668909073, 1.0902727842330933, -1.9509576559066772, -1.3830972909927368],
        "b": [-2.297950029373169, 2.4114229679107666, 1.7284449338912964],
        "t": (5, 4),
        "states": {
            "g": [
                0.024025054648518562,
                0.021021708846092224,
                0.1487317830324173,
                -0.13881777226924896,
            ],
            "d": [
                -5.8796085795620456e-05,
                -0.00022829155204817653,
                -0.000941938313189894,
                0.000716544920578599,
            ],
            "n": [
                0.23177728056907654,
                0.0672602504491806,
                0.14183929562568665,
                0.18676596879959106,
            ],
        },
    },
    ("RMSpropGraves", 9): {
        "w": [
            0.004409194923937321,
            -0.29370951652526855,
            -1.1174113750457764,
            -0.015205660834908485,
        ],
        "b": [-0.3839775025844574, -0.49450019001960754, -1.5327837467193604],
        "t": (5, 4),
        "states": {
            "g": [
                -0.06230813264846802,
                0.06289895623922348,
                0.11815453320741653,
                -0.013502239249646664,
            ],
            "d": [
                0.0021261246874928474,
                0.00013604597188532352,
                -0.00045612864778377116,
                5.4907461162656546e-05,
            ],
            "n": [0.44798704981803894, 0.11020597815513611, 0.221281036734581, 0.13144606351852417],
        },
    },
}


def _run(i: int) -> tuple[Any, nn.Variable, nn.Variable]:
    name, kw = _CONFIGS[i]
    rng = np.random.RandomState(i)
    w = nn.Variable.from_numpy_array(rng.randn(4).astype(np.float32), need_grad=True)
    b = nn.Variable.from_numpy_array(rng.randn(3).astype(np.float32), need_grad=True)
    sol = getattr(S, name)(**kw)
    sol.set_parameters({"w": w, "b": b})
    for step in range(5):
        sol.zero_grad()
        w.g = rng.randn(4).astype(np.float32)
        if step != 2:  # (b's gradient is left unwritten at step 2: b is skipped)
            b.g = (rng.randn(3) * 3).astype(np.float32)
        if step == 1:
            sol.weight_decay(0.01)
        if step == 3:
            sol.clip_grad_by_norm(2.0)
        if step == 4:
            sol.scale_grad(0.5)
        sol.update()
    return sol, w, b


@pytest.mark.parametrize("i", range(len(_CONFIGS)), ids=[f"{n}{k}" for n, k in _CONFIGS])
def test_more_solvers_give_nnabla_values(i: int) -> None:
    # regression: S.Nesterov, S.Adadelta, S.Adamax, S.AMSGRAD and S.RMSpropGraves raised
    # AttributeError
    name = _CONFIGS[i][0]
    sol, w, b = _run(i)
    exp = _EXPECTED[(name, i)]
    np.testing.assert_allclose(w.d, exp["w"], rtol=1e-6, atol=0)
    np.testing.assert_allclose(b.d, exp["b"], rtol=1e-6, atol=0)
    assert w.d.dtype == np.float32
    states = sol.get_states()
    assert list(states) == ["b", "w"]
    assert (states["w"].t, states["b"].t) == exp["t"]
    assert list(states["w"].pstate) == list(exp["states"])
    for k, v in exp["states"].items():
        np.testing.assert_allclose(states["w"].pstate[k].d, v, rtol=1e-6, atol=0, err_msg=k)


# nnabla 1.39's signatures and learning_rate() of the default instance (a float32 value)
_SIGNATURES = {
    "Nesterov": ("(lr=0.001, momentum=0.9)", 0.0010000000474974513),
    "Adadelta": ("(lr=1.0, decay=0.95, eps=1e-06)", 1.0),
    "Adamax": ("(alpha=0.002, beta1=0.9, beta2=0.999, eps=1e-08)", 0.0020000000949949026),
    "AMSGRAD": (
        "(alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-08, bias_correction=False)",
        0.0010000000474974513,
    ),
    "RMSpropGraves": (
        "(lr=0.0001, decay=0.95, momentum=0.9, eps=0.0001)",
        9.999999747378752e-05,
    ),
}


@pytest.mark.parametrize("name", list(_SIGNATURES))
def test_more_solvers_have_nnabla_signatures(name: str) -> None:
    cls = getattr(S, name)
    sig, lr = _SIGNATURES[name]
    params = inspect.signature(cls).parameters.values()
    got = "(" + ", ".join(f"{p.name}={p.default!r}" for p in params) + ")"
    assert got == sig
    sol = cls()
    assert sol.name == name and sol.learning_rate() == lr
    sol.set_learning_rate(0.5)
    assert sol.learning_rate() == 0.5
    assert not sol.weight_decay_is_fused()
    with pytest.raises(TypeError, match=f"nnabla {name}: .* must be a number"):
        cls("fast")


@pytest.mark.parametrize("name", list(_SIGNATURES))
def test_more_solvers_states_round_trip(name: str) -> None:
    # get_states/set_states carry t and every state into a new solver, which then continues as
    # the first one does
    i = next(k for k, (n, _) in enumerate(_CONFIGS) if n == name)
    sol, w, b = _run(i)
    rng = np.random.RandomState(99)
    g = rng.randn(4).astype(np.float32)
    w2 = nn.Variable.from_numpy_array(w.d.copy(), need_grad=True)
    b2 = nn.Variable.from_numpy_array(b.d.copy(), need_grad=True)
    other = getattr(S, name)(**_CONFIGS[i][1])
    other.set_parameters({"w": w2, "b": b2})
    other.set_states(sol.get_states())
    assert other.get_states()["w"].t == sol.get_states()["w"].t
    for s, v in ((sol, w), (other, w2)):
        s.zero_grad()
        v.g = g
        s.update()
    np.testing.assert_array_equal(w2.d, w.d)
    with pytest.raises(ValueError, match=f"nnabla {name}.set_states: {name} has no state 'x'"):
        other.set_states({"w": S.SolverState(1, {"x": np.zeros(4, np.float32)})})


def test_clip_grad_by_norm_sums_the_squares_in_nnabla_order() -> None:
    # regression: the norm came from numpy's pairwise sum, while nnabla's CPU solvers add the
    # squares one after the other in float32 (and clip where that sum exceeds clip_norm**2):
    # entries of the clipped gradient differed in the last bit
    rng = np.random.default_rng(5)
    g = rng.standard_normal(1000).astype(np.float32)
    w = nn.Variable.from_numpy_array(np.zeros(1000, np.float32), need_grad=True)
    sol = S.Sgd(lr=1.0)
    sol.set_parameters({"w": w})
    w.g = g
    sol.clip_grad_by_norm(2.0)
    total = np.float32(0)
    for x in g:  # (nnabla's loop)
        total = np.float32(total + x * x)
    ref = np.float32(2.0) * g / np.sqrt(total)
    np.testing.assert_array_equal(w.g, ref)
    w.g = np.full(1000, 1e-3, np.float32)  # norm 0.0316 < 2: left as it is
    sol.clip_grad_by_norm(2.0)
    np.testing.assert_array_equal(w.g, np.full(1000, 1e-3, np.float32))

"""nnabla 1.39's solvers SgdW, AdamW, AdaBound, AMSBound, Lars, Lamb, Lion and AdaBelief:
five steps of each (several hyper-parameter sets; weight_decay, clip_grad_by_norm, scale_grad,
set_learning_rate and a parameter left unwritten after zero_grad) and the cases where their
formulas branch (the bounds, the trust ratios' clamps and eps, Lion's sign of 0, the fused
weight decay lasting one update), against nnabla 1.39's outputs; constructor signatures, state
names, learning_rate(), weight_decay_is_fused(), get_states/set_states, errors; and an
independent float64 transcription of the documented formulas.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.solvers as S
import numpy as np
import pytest

_CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("SgdW", {}),
    ("SgdW", {"lr": 0.05, "momentum": 0.5, "wd": 0.01}),
    ("AdamW", {}),
    ("AdamW", {"alpha": 0.01, "beta1": 0.8, "beta2": 0.99, "eps": 1e-06, "wd": 0.05}),
    ("AdaBound", {}),
    ("AdaBound", {"alpha": 0.01, "final_lr": 0.05, "gamma": 0.1}),
    ("AMSBound", {}),
    ("AMSBound", {"alpha": 0.01, "final_lr": 0.05, "gamma": 0.1, "bias_correction": True}),
    ("Lars", {}),
    ("Lars", {"lr": 0.1, "momentum": 0.5, "coefficient": 0.01, "eps": 1e-05}),
    ("Lamb", {}),
    (
        "Lamb",
        {
            "eta": 0.01,
            "beta1": 0.8,
            "beta2": 0.99,
            "gamma_l": 1.5,
            "gamma_u": 2.0,
            "eps": 1e-05,
            "bias_correction": True,
        },
    ),
    ("Lion", {}),
    ("Lion", {"lr": 0.01, "beta1": 0.8, "beta2": 0.95}),
    ("AdaBelief", {}),
    ("AdaBelief", {"alpha": 0.01, "wd": 0.1, "weight_decouple": True}),
    (
        "AdaBelief",
        {"alpha": 0.01, "wd": 0.1, "weight_decouple": True, "fixed_decay": True, "amsgrad": True},
    ),
    ("AdaBelief", {"alpha": 0.01, "rectify": True}),
    ("AdaBelief", {"alpha": 0.01, "beta2": 0.5, "rectify": True, "amsgrad": True}),
]

# nnabla 1.39's outputs for the run of _run (index in _CONFIGS): the parameters after 5 steps,
# the step counts of w and b, w's states in nnabla's order and w's gradient after step 1
_EXPECTED: dict[int, dict[str, Any]] = {
    0: {
        "w": [1.7459479570388794, 0.3933619558811188, 0.9642302989959717, 2.208890438079834],
        "b": [1.8263328075408936, -0.9694357514381409, 0.9592034220695496],
        "t": (5, 4),
        "states": {
            "m": [
                -0.0007020785706117749,
                0.000419340911321342,
                0.0005116452230140567,
                0.0031228922307491302,
            ]
        },
        "g1": [0.44386324286460876, 0.3336743414402008, 1.4940791130065918, -0.2051582634449005],
    },
    1: {
        "w": [1.4804702997207642, -0.5718811750411987, -0.43061932921409607, -1.140454649925232],
        "b": [1.352693796157837, -2.1852335929870605, 2.0763354301452637],
        "t": (5, 4),
        "states": {
            "m": [
                -0.0066665224730968475,
                -0.008244765922427177,
                -0.027360592037439346,
                0.0034876624122262,
            ]
        },
        "g1": [1.1337693929672241, -1.0998913049697876, -0.1724282056093216, -0.8778584003448486],
    },
    2: {
        "w": [-0.41016969084739685, -0.05218668654561043, -2.110348701477051, 1.6208622455596924],
        "b": [-1.776908278465271, -0.8343490958213806, 0.5002996921539307],
        "t": (5, 4),
        "states": {
            "var": [
                0.0033963911700993776,
                0.0019441795302554965,
                0.003242367645725608,
                0.004273883067071438,
            ],
            "mean": [
                -0.1980721354484558,
                -0.14384274184703827,
                -0.22948864102363586,
                0.03446606919169426,
            ],
        },
        "g1": [0.5390583276748657, -0.5961596965789795, -0.019130496308207512, 1.1750012636184692],
    },
    3: {
        "w": [1.511961817741394, 0.36472487449645996, 0.10982422530651093, -1.5019651651382446],
        "b": [-0.2681824862957001, -0.31447505950927734, -0.08612136542797089],
        "t": (5, 4),
        "states": {
            "var": [
                0.01311753410845995,
                0.02810548059642315,
                0.007492829114198685,
                0.07054239511489868,
            ],
            "mean": [
                -0.31105488538742065,
                0.18259593844413757,
                -0.17069759964942932,
                -0.7619576454162598,
            ],
        },
        "g1": [0.05003364384174347, -0.4046774208545685, -0.5453599691390991, -1.5464773178100586],
    },
    4: {
        "w": [0.050249677151441574, 0.49610450863838196, -0.9915645718574524, 0.6893343925476074],
        "b": [-0.4181881844997406, -1.586692214012146, -0.6478469967842102],
        "t": (5, 4),
        "states": {
            "var": [
                0.00178304233122617,
                0.0033025394659489393,
                0.004168645478785038,
                0.009439489804208279,
            ],
            "mean": [
                -0.011260353028774261,
                0.0584854856133461,
                -0.34952783584594727,
                0.487672358751297,
            ],
        },
        "g1": [-1.156320571899414, 0.35598665475845337, -0.6168363690376282, 1.5539052486419678],
    },
    5: {
        "w": [0.47700032591819763, -0.3192480504512787, 2.433840751647949, -0.25459960103034973],
        "b": [0.1374272108078003, 1.5798490047454834, -0.9103387594223022],
        "t": (5, 4),
        "states": {
            "var": [
                0.004336611833423376,
                0.001293292036280036,
                0.0017974189249798656,
                0.0058537558652460575,
            ],
            "mean": [
                -0.1654483675956726,
                -0.1093355268239975,
                -0.005463561974465847,
                0.1504341959953308,
            ],
        },
        "g1": [-1.660276174545288, -0.7035877704620361, 1.175798773765564, 1.854910135269165],
    },
    6: {
        "w": [-0.3062859773635864, 0.7195480465888977, 0.226730614900589, -0.9120163321495056],
        "b": [-2.4987497329711914, 0.914121150970459, 1.118162751197815],
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
        "g1": [0.10804194957017899, 0.1364096701145172, 0.07833743840456009, -0.1641506850719452],
    },
    7: {
        "w": [1.7236508131027222, -0.46621882915496826, 0.001543093123473227, 0.42510783672332764],
        "b": [-0.7771966457366943, 0.003159506246447563, -0.009105098433792591],
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
        "g1": [-0.22574383020401, -1.458000898361206, 0.5548085570335388, 0.12805606424808502],
    },
    8: {
        "w": [0.09120297431945801, 1.0912835597991943, -1.9469857215881348, -1.3863362073898315],
        "b": [-2.296499490737915, 2.409837245941162, 1.727831482887268],
        "t": (5, 4),
        "states": {
            "v": [
                -6.793377451685956e-07,
                4.453041526630841e-07,
                4.215693024889333e-06,
                -3.989040123997256e-06,
            ]
        },
        "g1": [-0.3774465322494507, -0.7807024121284485, 0.8400783538818359, -0.24465247988700867],
    },
    9: {
        "w": [
            0.0019605306442826986,
            -0.2913581132888794,
            -1.1173956394195557,
            -0.013270154595375061,
        ],
        "b": [-0.37976595759391785, -0.4844929575920105, -1.5221754312515259],
        "t": (5, 4),
        "states": {
            "v": [
                -0.0007486884132958949,
                0.00022427352087106556,
                0.0003537363954819739,
                -0.00021548170479945838,
            ]
        },
        "g1": [1.8228322267532349, 0.42787620425224304, 1.5315760374069214, -0.9008569121360779],
    },
    10: {
        "w": [1.3299566507339478, 0.7098643779754639, -1.54536771774292, -0.01374752726405859],
        "b": [0.6190537810325623, -0.7178522944450378, 0.26553645730018616],
        "t": (5, 4),
        "states": {
            "var": [
                0.00541342981159687,
                0.00033302127849310637,
                0.009038064628839493,
                0.0015354180941358209,
            ],
            "mean": [
                0.026126345619559288,
                0.038592688739299774,
                0.2787274122238159,
                0.11682858318090439,
            ],
        },
        "g1": [0.22863012552261353, 0.445137619972229, -1.1366021633148193, 0.13513687252998352],
    },
    11: {
        "w": [1.7862111330032349, -0.29975223541259766, -0.4918757379055023, -2.676584005355835],
        "b": [0.028449006378650665, -0.3273928165435791, -0.5636935830116272],
        "t": (5, 4),
        "states": {
            "var": [
                0.018572961911559105,
                0.024695944041013718,
                0.04380189627408981,
                0.03581812232732773,
            ],
            "mean": [
                -0.15429480373859406,
                0.09186426550149918,
                0.09252481162548065,
                0.1471642553806305,
            ],
        },
        "g1": [-1.3055485486984253, -1.119475245475769, 0.7368373870849609, 1.574634075164795],
    },
    12: {
        "w": [0.47293534874916077, -0.681175172328949, 0.24218925833702087, -1.7002840042114258],
        "b": [0.7532920837402344, -1.534769892692566, 0.005277072079479694],
        "t": (5, 4),
        "states": {
            "m": [
                0.003296785056591034,
                -0.012943655252456665,
                0.032416075468063354,
                -0.03659236058592796,
            ]
        },
        "g1": [1.3423563241958618, -0.12214978784322739, 1.0125154256820679, -0.9138691425323486],
    },
    13: {
        "w": [-0.757318377494812, 0.7386919856071472, 0.0005003688856959343, 0.42676615715026855],
        "b": [1.3499661684036255, 0.5072857141494751, 1.3650518655776978],
        "t": (5, 4),
        "states": {
            "m": [
                0.12278726696968079,
                0.03424350917339325,
                -0.09282627701759338,
                0.12716762721538544,
            ]
        },
        "g1": [0.9137406945228577, 0.31735092401504517, 0.12730328738689423, 2.1503829956054688],
    },
    14: {
        "w": [1.5494654178619385, 0.07856114208698273, 0.16880010068416595, -0.07183893024921417],
        "b": [-2.0036587715148926, 0.14857040345668793, -1.5014103651046753],
        "t": (5, 4),
        "states": {
            "var": [
                0.0019271705532446504,
                0.002289766212925315,
                0.0029037382919341326,
                0.0008458042284473777,
            ],
            "mean": [
                0.0475400909781456,
                0.12691327929496765,
                0.2902188003063202,
                -0.005540778860449791,
            ],
        },
        "g1": [-0.1648344248533249, 0.6211032271385193, 0.812703013420105, 0.7772235870361328],
    },
    15: {
        "w": [-0.25888338685035706, 0.346285879611969, -0.12138038873672485, -0.5148228406906128],
        "b": [0.19682109355926514, -1.7782191038131714, -1.1057652235031128],
        "t": (5, 4),
        "states": {
            "var": [
                0.0026012773159891367,
                0.0014677882427349687,
                0.0021562830079346895,
                0.0029399963095784187,
            ],
            "mean": [
                -0.3755932152271271,
                -0.12086214870214462,
                -0.03864365816116333,
                0.19664300978183746,
            ],
        },
        "g1": [-0.5649784207344055, 0.5993906855583191, -0.16293630003929138, 1.6002144813537598],
    },
    16: {
        "w": [0.0663580372929573, -0.9981734752655029, -0.4001031816005707, 0.06698103249073029],
        "b": [-0.8925312757492065, -0.447552889585495, -0.6106661558151245],
        "t": (5, 4),
        "states": {
            "s_max": [
                0.0009470661170780659,
                0.0037657979410141706,
                0.002679309342056513,
                0.002856618259102106,
            ],
            "mean": [
                0.12347646057605743,
                0.18108689785003662,
                0.10025458037853241,
                -0.057057254016399384,
            ],
            "var": [
                0.0009470561053603888,
                0.0037657879292964935,
                0.0026792993303388357,
                0.002856608247384429,
            ],
        },
        "g1": [-0.3425196707248688, 1.8844640254974365, -0.27091291546821594, -1.4517192840576172],
    },
    17: {
        "w": [0.27390024065971375, -1.8499585390090942, 0.6224843263626099, 1.1413798332214355],
        "b": [1.0326964855194092, 1.902044653892517, -0.10237214714288712],
        "t": (5, 4),
        "states": {
            "var": [
                0.0012045559706166387,
                0.004116153344511986,
                0.00205817143432796,
                0.005616343580186367,
            ],
            "mean": [
                0.11633823066949844,
                -0.17531850934028625,
                0.09421777725219727,
                0.01897110790014267,
            ],
        },
        "g1": [0.5426058769226074, -1.7938300371170044, 1.3211199045181274, -0.46201664209365845],
    },
    18: {
        "w": [0.08327919989824295, 2.191898822784424, -0.13249103724956512, 0.15263144671916962],
        "b": [0.42273566126823425, 0.6169506907463074, 1.0151193141937256],
        "t": (5, 4),
        "states": {
            "s_max": [
                0.4639735519886017,
                1.2491899728775024,
                0.5494687557220459,
                0.3645651638507843,
            ],
            "mean": [
                -0.18131792545318604,
                -0.1351548731327057,
                -0.008270535618066788,
                0.2165520042181015,
            ],
            "var": [
                0.14511093497276306,
                0.6388564109802246,
                0.3092748522758484,
                0.30396708846092224,
            ],
        },
        "g1": [-0.9939665198326111, 1.3674248456954956, 0.5805253386497498, 0.5388358235359192],
    },
}

# nnabla 1.39's outputs of the cases of _EDGE_CASES: w, its gradient, t and its states
_EDGE_EXPECTED: dict[str, dict[str, Any]] = {
    "amsbound_upper": {
        "w": [0.9997705817222595, -1.999947428703308, 2.999488353729248],
        "g": [0.10000000149011612, -0.30000001192092896, 0.5],
        "t": 4,
        "states": {
            "v_hat": [0.0005089042824693024, 0.00020222013699822128, 0.0012969262897968292],
            "v": [0.0005089042824693024, 0.00020222013699822128, 0.0012969262897968292],
            "m": [0.03475000709295273, -0.02302500605583191, 0.13280001282691956],
        },
    },
    "adabound_upper": {
        "w": [0.9998021721839905, -1.9999542236328125, 2.999574899673462],
        "g": [0.10000000149011612, -0.30000001192092896, 0.5],
        "t": 4,
        "states": {
            "var": [0.0005089042824693024, 0.00020222013699822128, 0.0012969262897968292],
            "mean": [0.03475000709295273, -0.02302500605583191, 0.13280001282691956],
        },
    },
    "adabound_lower": {
        "w": [0.9382875561714172, -1.9866127967834473, 2.860713243484497],
        "g": [0.10000000149011612, -0.30000001192092896, 0.5],
        "t": 4,
        "states": {
            "var": [0.0005089042824693024, 0.00020222013699822128, 0.0012969262897968292],
            "mean": [0.03475000709295273, -0.02302500605583191, 0.13280001282691956],
        },
    },
    "lars_zero_w": {
        "w": [-0.07500918209552765, 0.03749387711286545, -0.14999693632125854],
        "g": [0.30000001192092896, 0.20000000298023224, -0.10000000149011612],
        "t": 2,
        "states": {"v": [0.025009185075759888, -0.012493876740336418, 0.049996938556432724]},
    },
    "lars_tiny_g": {
        "w": [0.9991487264633179, 0.9991487264633179, 0.9991487264633179],
        "g": [9.99999993922529e-09, 9.99999993922529e-09, 9.99999993922529e-09],
        "t": 1,
        "states": {"v": [0.0008512807544320822, 0.0008512807544320822, 0.0008512807544320822]},
    },
    "lars_wd": {
        "w": [0.9938226342201233, -1.9980217218399048, 2.989410400390625],
        "g": [0.10000000149011612, -0.30000001192092896, 0.5],
        "t": 4,
        "states": {"v": [0.0008607954951003194, -0.001812920207157731, 0.004416869953274727]},
    },
    "lamb_clamp_up": {
        "w": [-0.08523949980735779, -1.6127108335494995, 1.5743467807769775],
        "g": [0.10000000149011612, -0.30000001192092896, 0.5],
        "t": 4,
        "states": {
            "var": [0.0005089042824693024, 0.00020222013699822128, 0.0012969262897968292],
            "mean": [0.03475000709295273, -0.02302500605583191, 0.13280001282691956],
        },
    },
    "lamb_clamp_down": {
        "w": [0.9003480076789856, -1.950655460357666, 2.8491055965423584],
        "g": [0.10000000149011612, -0.30000001192092896, 0.5],
        "t": 4,
        "states": {
            "var": [0.0005089042824693024, 0.00020222013699822128, 0.0012969262897968292],
            "mean": [0.03475000709295273, -0.02302500605583191, 0.13280001282691956],
        },
    },
    "lamb_tiny": {
        "w": [1.0, -2.0, 3.0],
        "g": [9.999999960041972e-13, 0.0, -9.999999960041972e-13],
        "t": 1,
        "states": {
            "var": [9.999871235145738e-28, 0.0, 9.999871235145738e-28],
            "mean": [1.0000002535022132e-13, 0.0, -1.0000002535022132e-13],
        },
    },
    "lion_zero": {
        "w": [0.949999988079071, -1.8949998617172241, 3.044999837875366],
        "g": [0.0, -0.5, 0.0],
        "t": 2,
        "states": {"m": [0.0, 0.0048999786376953125, -0.009899990633130074]},
    },
    "sgdw_rate_once": {
        "w": [0.7999999523162842, -1.7850000858306885, 2.570000171661377],
        "g": [0.30000001192092896, 0.20000000298023224, -0.10000000149011612],
        "t": 2,
        "states": {"m": [0.054999999701976776, 0.0075000012293457985, 0.03999999910593033]},
    },
    "adamw_lr": {
        "w": [0.5490795373916626, -1.2939045429229736, 1.9094445705413818],
        "g": [0.10000000149011612, -0.30000001192092896, 0.5],
        "t": 4,
        "states": {
            "var": [0.0005089042824693024, 0.00020222013699822128, 0.0012969262897968292],
            "mean": [0.03475000709295273, -0.02302500605583191, 0.13280001282691956],
        },
    },
    "adabelief_dec_rate": {
        "w": [0.6527469754219055, -1.7177608013153076, 2.457577705383301],
        "g": [0.10000000149011612, -0.30000001192092896, 0.5],
        "t": 4,
        "states": {
            "var": [0.0004392822738736868, 0.00017665191262494773, 0.000986423110589385],
            "mean": [0.03475000709295273, -0.02302500605583191, 0.13280001282691956],
        },
    },
    "adabelief_rect_sgd": {
        "w": [0.9812750220298767, -1.9957224130630493, 2.959520101547241],
        "g": [0.10000000149011612, -0.30000001192092896, 0.5],
        "t": 4,
        "states": {
            "var": [0.0004392822738736868, 0.00017665191262494773, 0.000986423110589385],
            "mean": [0.03475000709295273, -0.02302500605583191, 0.13280001282691956],
        },
    },
}


def _run(i: int) -> tuple[Any, nn.Variable, nn.Variable, np.ndarray]:
    name, kw = _CONFIGS[i]
    rng = np.random.RandomState(i)
    w = nn.Variable.from_numpy_array(rng.randn(4).astype(np.float32), need_grad=True)
    b = nn.Variable.from_numpy_array(rng.randn(3).astype(np.float32), need_grad=True)
    sol = getattr(S, name)(**kw)
    sol.set_parameters({"w": w, "b": b})
    g1 = np.zeros(4, np.float32)
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
            sol.set_learning_rate(sol.learning_rate() * 0.5)
        sol.update()
        if step == 1:
            g1 = w.g.copy()
    return sol, w, b, g1


@pytest.mark.parametrize("i", range(len(_CONFIGS)), ids=[f"{n}{k}" for n, k in _CONFIGS])
def test_solvers_give_nnabla_values(i: int) -> None:
    # regression: S.SgdW, S.AdamW, S.AdaBound, S.AMSBound, S.Lars, S.Lamb, S.Lion and
    # S.AdaBelief raised AttributeError
    sol, w, b, g1 = _run(i)
    exp = _EXPECTED[i]
    np.testing.assert_allclose(w.d, exp["w"], rtol=1e-6, atol=0)
    np.testing.assert_allclose(b.d, exp["b"], rtol=1e-6, atol=0)
    assert w.d.dtype == np.float32
    # the gradient after weight_decay(0.01) and update(): g + 0.01 w at once for the solvers
    # whose decay is not fused, left alone by the fused ones but Lars, which adds it in update()
    np.testing.assert_allclose(g1, exp["g1"], rtol=1e-6, atol=0)
    states = sol.get_states()
    assert list(states) == ["b", "w"]
    assert (states["w"].t, states["b"].t) == exp["t"]
    assert list(states["w"].pstate) == list(exp["states"])
    for k, v in exp["states"].items():
        np.testing.assert_allclose(states["w"].pstate[k].d, v, rtol=1e-6, atol=0, err_msg=k)


_G = [[0.5, -0.25, 1.0], [0.3, 0.2, -0.1], [-0.4, 0.1, 0.2], [0.1, -0.3, 0.5]]
_W0 = [1.0, -2.0, 3.0]

# name -> (solver, keyword arguments, initial w, gradients per step (None: left unwritten after
# zero_grad), calls per step before update)
_EDGE_CASES: dict[str, tuple[str, dict[str, Any], list[float], list[Any], dict[int, Any]]] = {
    # the upper bound binds (AMSBound's is nnabla 1.39's final_lr * (1 + t / gamma))
    "amsbound_upper": ("AMSBound", {"alpha": 1.0, "final_lr": 0.001, "gamma": 10.0}, _W0, _G, {}),
    "adabound_upper": ("AdaBound", {"alpha": 1.0, "final_lr": 0.001, "gamma": 10.0}, _W0, _G, {}),
    "adabound_lower": ("AdaBound", {"alpha": 1e-6, "final_lr": 0.5, "gamma": 1.0}, _W0, _G, {}),
    # |w| < eps: the step is lr itself
    "lars_zero_w": ("Lars", {"lr": 0.1, "momentum": 0.5}, [0.0, 0.0, 0.0], _G[:2], {}),
    # |g| < eps: the denominator is increased by eps
    "lars_tiny_g": (
        "Lars",
        {"lr": 0.1, "momentum": 0.5, "coefficient": 0.5},
        [1.0, 1.0, 1.0],
        [[1e-8, 1e-8, 1e-8]],
        {},
    ),
    "lars_wd": (
        "Lars",
        {"lr": 0.1, "momentum": 0.5, "coefficient": 0.01},
        _W0,
        _G,
        {0: [("weight_decay", (0.5,))], 2: [("weight_decay", (0.1,))]},
    ),
    # |w| clamped up to gamma_l, down to gamma_u; |r| <= eps: trust ratio 1
    "lamb_clamp_up": ("Lamb", {"eta": 0.1, "gamma_l": 5.0}, _W0, _G, {}),
    "lamb_clamp_down": (
        "Lamb",
        {"eta": 0.1, "gamma_u": 0.5, "bias_correction": True},
        _W0,
        _G,
        {1: [("weight_decay", (0.2,))]},
    ),
    "lamb_tiny": ("Lamb", {"eta": 0.1, "eps": 1e-3}, _W0, [[1e-12, 0.0, -1e-12]], {}),
    # sign(0) = 0
    "lion_zero": (
        "Lion",
        {"lr": 0.1},
        _W0,
        [[0.0, 1.0, -1.0], [0.0, -0.5, 0.0]],
        {1: [("weight_decay", (0.5,))]},
    ),
    # a fused rate lasts one update (also one that skips every parameter), 0 included
    "sgdw_rate_once": (
        "SgdW",
        {"lr": 0.1, "momentum": 0.5, "wd": 0.1},
        _W0,
        [None, _G[0], _G[1]],
        {0: [("weight_decay", (0.5,))], 1: [("weight_decay", (0.0,))]},
    ),
    # the decay follows the learning rate's schedule (lr / initial lr)
    "adamw_lr": (
        "AdamW",
        {"alpha": 0.1, "wd": 0.1},
        _W0,
        _G,
        {1: [("set_learning_rate", (0.05,))], 2: [("weight_decay", (0.3,))]},
    ),
    "adabelief_dec_rate": (
        "AdaBelief",
        {"alpha": 0.1, "wd": 0.1, "weight_decouple": True},
        _W0,
        _G,
        {1: [("weight_decay", (0.5,))]},
    ),
    # rho_t <= 4 for the first steps: SGD's step
    "adabelief_rect_sgd": ("AdaBelief", {"alpha": 0.1, "rectify": True}, _W0, _G, {}),
}


@pytest.mark.parametrize("case", list(_EDGE_CASES))
def test_solver_branches_give_nnabla_values(case: str) -> None:
    name, kw, w0, grads, calls = _EDGE_CASES[case]
    sol = getattr(S, name)(**kw)
    w = nn.Variable.from_numpy_array(np.array(w0, np.float32), need_grad=True)
    sol.set_parameters({"w": w})
    for i, g in enumerate(grads):
        sol.zero_grad()
        if g is not None:
            w.g = np.array(g, np.float32)
        for method, args in calls.get(i, []):
            getattr(sol, method)(*args)
        sol.update()
    exp = _EDGE_EXPECTED[case]
    np.testing.assert_allclose(w.d, exp["w"], rtol=1e-6, atol=0)
    np.testing.assert_allclose(w.g, exp["g"], rtol=1e-6, atol=0)
    st = sol.get_states()["w"]
    assert st.t == exp["t"]
    assert list(st.pstate) == list(exp["states"])
    for k, v in exp["states"].items():
        np.testing.assert_allclose(st.pstate[k].d, v, rtol=1e-6, atol=0, err_msg=k)


# nnabla 1.39's signatures, learning_rate() of the default instance (a float32 value) and
# weight_decay_is_fused()
_SIGNATURES = {
    "SgdW": ("(lr=0.001, momentum=0.9, wd=0.0001)", 0.0010000000474974513, True),
    "AdamW": (
        "(alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-08, wd=0.0001)",
        0.0010000000474974513,
        True,
    ),
    "AdaBound": (
        "(alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-08, final_lr=0.1, gamma=0.001)",
        0.0010000000474974513,
        False,
    ),
    "AMSBound": (
        "(alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-08, final_lr=0.1, gamma=0.001, "
        "bias_correction=False)",
        0.0010000000474974513,
        False,
    ),
    "Lars": ("(lr=0.001, momentum=0.9, coefficient=0.001, eps=1e-06)", 0.0010000000474974513, True),
    "Lamb": (
        "(eta=0.001, beta1=0.9, beta2=0.999, gamma_l=0.0, gamma_u=10.0, eps=1e-06, "
        "bias_correction=False)",
        0.0010000000474974513,
        True,
    ),
    "Lion": ("(lr=0.0001, beta1=0.9, beta2=0.99)", 9.999999747378752e-05, True),
    "AdaBelief": (
        "(alpha=0.001, beta1=0.9, beta2=0.999, eps=1e-08, wd=0.0, amsgrad=False, "
        "weight_decouple=False, fixed_decay=False, rectify=False)",
        0.0010000000474974513,
        False,
    ),
}


@pytest.mark.parametrize("name", list(_SIGNATURES))
def test_solvers_have_nnabla_signatures(name: str) -> None:
    cls = getattr(S, name)
    sig, lr, fused = _SIGNATURES[name]
    params = inspect.signature(cls).parameters.values()
    got = "(" + ", ".join(f"{p.name}={p.default!r}" for p in params) + ")"
    assert got == sig
    sol = cls()
    assert sol.name == name and sol.learning_rate() == lr
    sol.set_learning_rate(0.5)
    assert sol.learning_rate() == 0.5
    assert sol.weight_decay_is_fused() is fused
    with pytest.raises(TypeError, match=f"nnabla {name}: .* must be a number"):
        cls("fast")
    if fused:
        with pytest.raises(TypeError, match=f"nnabla {name}: decay_rate must be a number"):
            sol.weight_decay("x")


def test_adabelief_states_and_fusion_follow_its_options() -> None:
    # nnabla 1.39: s_max first with amsgrad; the decay is fused only with weight_decouple
    w = nn.Variable.from_numpy_array(np.ones(2, np.float32), need_grad=True)
    sol = S.AdaBelief(amsgrad=True)
    sol.set_parameters({"w": w})
    assert list(sol.get_states()["w"].pstate) == ["s_max", "mean", "var"]
    assert not sol.weight_decay_is_fused()
    assert S.AdaBelief(weight_decouple=True).weight_decay_is_fused()


@pytest.mark.parametrize("i", [1, 3, 5, 7, 9, 11, 13, 16, 18])
def test_solver_states_round_trip(i: int) -> None:
    # get_states/set_states carry t and every state into a new solver, which then continues as
    # the first one does
    name, kw = _CONFIGS[i]
    sol, w, b, _ = _run(i)
    g = np.random.RandomState(99).randn(4).astype(np.float32)
    w2 = nn.Variable.from_numpy_array(w.d.copy(), need_grad=True)
    b2 = nn.Variable.from_numpy_array(b.d.copy(), need_grad=True)
    other = getattr(S, name)(**kw)
    other.set_parameters({"w": w2, "b": b2})
    other.set_states(sol.get_states())
    assert other.get_states()["w"].t == sol.get_states()["w"].t
    for s, v in ((sol, w), (other, w2)):
        s.set_learning_rate(kw.get("lr", kw.get("alpha", kw.get("eta", 1e-3))))
        s.zero_grad()
        v.g = g
        s.update()
    np.testing.assert_array_equal(w2.d, w.d)
    with pytest.raises(ValueError, match=f"nnabla {name}.set_states: {name} has no state 'x'"):
        other.set_states({"w": S.SolverState(1, {"x": np.zeros(4, np.float32)})})


def test_lars_negative_denominator_raises_as_nnabla() -> None:
    # nnabla 1.39: RuntimeError "local learning rate should be positive or zero"
    w = nn.Variable.from_numpy_array(np.array([1.0, -2.0, 3.0], np.float32), need_grad=True)
    sol = S.Lars()
    sol.set_parameters({"w": w})
    sol.zero_grad()
    w.g = np.ones(3, np.float32)
    sol.weight_decay(-10.0)
    with pytest.raises(RuntimeError, match=r"nnabla Lars.update: .* must be positive or zero"):
        sol.update()


def _float64_reference(name: str, kw: dict[str, Any], w: np.ndarray, grads: Any, rate: float):
    """The documented formulas in float64, written independently of the solvers (no nnabla
    rounding order): ``rate`` is the decay set with weight_decay before every update."""
    w = w.astype(np.float64)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = np.asarray(g, np.float64)
        if name == "SgdW":
            m = kw["momentum"] * m + kw["lr"] * g
            w = w - m - rate * w
        elif name == "AdamW":
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            step = kw["alpha"] * math.sqrt(1 - 0.999**t) / (1 - 0.9**t)
            w = w - step * m / (np.sqrt(v) + 1e-8) - rate * w
        elif name == "Lion":
            u = np.sign(0.9 * m + 0.1 * g)
            m = 0.99 * m + 0.01 * g
            w = w - kw["lr"] * (u + rate * w)
        elif name == "Lars":
            wn, gn = np.linalg.norm(w), np.linalg.norm(g)
            local = kw["lr"] * 0.001 * wn / (gn + rate * wn)
            m = 0.9 * m + local * (g + rate * w)
            w = w - m
        elif name == "Lamb":
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            r = m / (np.sqrt(v) + 1e-6) + rate * w
            w = w - kw["eta"] * min(max(np.linalg.norm(w), 0.0), 10.0) / np.linalg.norm(r) * r
        elif name == "AdaBelief":
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * (g - m) ** 2 + 1e-8
            w = w * (1 - rate * kw["alpha"])
            mh, vh = m / (1 - 0.9**t), v / (1 - 0.999**t)
            w = w - kw["alpha"] * mh / (np.sqrt(vh) + 1e-8)
    return w


@pytest.mark.parametrize(
    ("name", "kw"),
    [
        ("SgdW", {"lr": 0.05, "momentum": 0.5, "wd": 0.02}),
        ("AdamW", {"alpha": 0.01, "wd": 0.02}),
        ("Lion", {"lr": 0.01}),
        ("Lars", {"lr": 0.5}),
        ("Lamb", {"eta": 0.01}),
        ("AdaBelief", {"alpha": 0.01, "wd": 0.02, "weight_decouple": True}),
    ],
)
def test_solvers_follow_the_documented_formulas(name: str, kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal(6).astype(np.float32)
    grads = rng.standard_normal((4, 6)).astype(np.float32)
    w = nn.Variable.from_numpy_array(w0, need_grad=True)
    sol = getattr(S, name)(**kw)
    sol.set_parameters({"w": w})
    for g in grads:
        sol.zero_grad()
        w.g = g
        sol.weight_decay(0.02)
        sol.update()
    ref = _float64_reference(name, kw, w0, grads, 0.02)
    np.testing.assert_allclose(w.d, ref, rtol=2e-5, atol=1e-6)

"""mx.lr_scheduler: the four schedulers with linear and constant warmup against mxnet 1.9.1."""

from __future__ import annotations

import math

import gradhub_compat.mxnet as mx
import pytest

# mxnet 1.9.1: (class, kwargs, [s(n) for n in range(13)]) called in order on one scheduler
CASES = [
    (
        "FactorScheduler",
        {"step": 3, "factor": 0.5, "base_lr": 1.0},
        [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125],
    ),
    (
        "FactorScheduler",
        {
            "step": 2,
            "factor": 0.1,
            "stop_factor_lr": 0.005,
            "base_lr": 1.0,
            "warmup_steps": 3,
            "warmup_begin_lr": 0.1,
        },
        [
            0.1,
            0.4,
            0.7,
            0.1,
            0.1,
            0.010000000000000002,
            0.010000000000000002,
            0.005,
            0.005,
            0.005,
            0.005,
            0.005,
            0.005,
        ],
    ),
    (
        "FactorScheduler",
        {
            "step": 2,
            "factor": 0.5,
            "base_lr": 1.0,
            "warmup_steps": 3,
            "warmup_begin_lr": 0.2,
            "warmup_mode": "constant",
        },
        [0.2, 0.2, 0.2, 0.5, 0.5, 0.25, 0.25, 0.125, 0.125, 0.0625, 0.0625, 0.03125, 0.03125],
    ),
    (
        "MultiFactorScheduler",
        {"step": [2, 5, 7], "factor": 0.5, "base_lr": 1.0},
        [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.125, 0.125, 0.125, 0.125, 0.125],
    ),
    (
        "MultiFactorScheduler",
        {"step": [4, 6], "factor": 0.1, "base_lr": 0.5, "warmup_steps": 3, "warmup_begin_lr": 0.05},
        [
            0.05,
            0.2,
            0.35,
            0.5,
            0.5,
            0.05,
            0.05,
            0.005000000000000001,
            0.005000000000000001,
            0.005000000000000001,
            0.005000000000000001,
            0.005000000000000001,
            0.005000000000000001,
        ],
    ),
    (
        "PolyScheduler",
        {"max_update": 8, "base_lr": 1.0, "pwr": 2},
        [
            1.0,
            0.765625,
            0.5625,
            0.390625,
            0.25,
            0.140625,
            0.0625,
            0.015625,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
        ],
    ),
    (
        "PolyScheduler",
        {
            "max_update": 10,
            "base_lr": 0.5,
            "pwr": 1.5,
            "final_lr": 0.1,
            "warmup_steps": 3,
            "warmup_begin_lr": 0.05,
        },
        [
            0.05,
            0.2,
            0.35,
            0.5,
            0.417424034207732,
            0.3414726442081476,
            0.27278375908993246,
            0.21222634354993897,
            0.161088283865697,
            0.12159796988624158,
            0.1,
            0.1,
            0.1,
        ],
    ),
    (
        "CosineScheduler",
        {"max_update": 8, "base_lr": 1.0},
        [
            1.0,
            0.9619397662556434,
            0.8535533905932737,
            0.6913417161825449,
            0.5,
            0.30865828381745514,
            0.14644660940672627,
            0.03806023374435663,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
        ],
    ),
    (
        "CosineScheduler",
        {
            "max_update": 10,
            "base_lr": 0.5,
            "final_lr": 0.1,
            "warmup_steps": 3,
            "warmup_begin_lr": 0.05,
            "warmup_mode": "constant",
        },
        [
            0.05,
            0.05,
            0.05,
            0.5,
            0.4801937735804839,
            0.4246979603717468,
            0.3445041867912629,
            0.25549581320873715,
            0.1753020396282533,
            0.1198062264195162,
            0.1,
            0.1,
            0.1,
        ],
    ),
]


@pytest.mark.parametrize(("name", "kw", "ref"), CASES)
def test_schedule_as_mxnet(name: str, kw: dict, ref: list) -> None:
    s = getattr(mx.lr_scheduler, name)(**kw)
    assert [s(n) for n in range(13)] == pytest.approx(ref, rel=1e-12, abs=1e-15)


def test_poly_and_cosine_formulas() -> None:
    s = mx.lr_scheduler.PolyScheduler(max_update=20, base_lr=0.3, pwr=3, final_lr=0.01)
    assert s(7) == pytest.approx(0.01 + 0.29 * (1 - 7 / 20) ** 3)
    c = mx.lr_scheduler.CosineScheduler(max_update=20, base_lr=0.3, final_lr=0.01, warmup_steps=4)
    assert c(2) == pytest.approx(0.15)  # linear warmup from 0
    assert c(9) == pytest.approx(0.01 + 0.29 * (1 + math.cos(math.pi * 5 / 16)) / 2)


def test_errors_as_mxnet() -> None:
    S = mx.lr_scheduler
    with pytest.raises(ValueError, match="Schedule step must be greater or equal than 1 round"):
        S.FactorScheduler(step=0)
    with pytest.raises(ValueError, match="Factor must be no more than 1"):
        S.FactorScheduler(step=2, factor=1.5)
    with pytest.raises(ValueError, match="Schedule step must be an increasing integer list"):
        S.MultiFactorScheduler(step=[3, 2])
    with pytest.raises(ValueError, match="Base lr has to be higher than warmup_begin_lr"):
        S.PolyScheduler(max_update=3, base_lr=0.1, warmup_begin_lr=0.2)
    with pytest.raises(ValueError, match="Supports only linear and constant modes of warmup"):
        S.CosineScheduler(max_update=3, warmup_mode="cubic")
    with pytest.raises(ValueError, match="maximum number of updates must be strictly positive"):
        S.CosineScheduler(max_update=0)
    with pytest.raises(TypeError, match="PolyScheduler: max_update must be an int"):
        S.PolyScheduler(max_update=3.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="FactorScheduler: warmup_steps must be an int"):
        S.FactorScheduler(step=2, warmup_steps=1.5)  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError):
        S.LRScheduler()(1)

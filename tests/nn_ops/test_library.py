"""gradhub-nn-ops as a library: every function registered with its name and callable, the
non-differentiable ones marked, the docstring example, and float32 gradients for every sample."""

from __future__ import annotations

import doctest

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub.registry import REGISTRY, _ensure_loaded

MINE = (
    "Sin Cos Tan Exp Log Sqrt Tanh Sigmoid Sinh Cosh ASin ACos ATan ATan2 Erf Softplus Log1p "
    "Expm1 Pow2 RSubScalar Abs Maximum2 Minimum2 MaximumScalar MinimumScalar Where Clip "
    "ClipByValue Add Sub Mul Div Pow Sign Greater GreaterEqual Less LessEqual Equal NotEqual "
    "GreaterScalar GreaterEqualScalar LessScalar LessEqualScalar EqualScalar NotEqualScalar ReLU "
    "LeakyReLU ELU SELU GELU Swish SiLU Softsign ReLU6 HardTanh LogSigmoid PReLU Mean Max Min "
    "Prod LogSumExp Norm Softmax LogSoftmax SoftmaxCrossEntropy SigmoidCrossEntropy "
    "BinaryCrossEntropy SquaredError HuberLoss"
).split()
#: of MINE, the functions the core's Variable operators need: the core registers them
CORE = {"Pow2", "Abs", "Log", "Sign", "EqualScalar"}


def var(a: object, need_grad: bool = True) -> gh.Variable:
    return gh.Variable(np.asarray(a, dtype=np.float64), need_grad=need_grad)


# -- registry ----------------------------------------------------------------------------------


def test_all_functions_are_registered_with_names_and_callables() -> None:
    _ensure_loaded()
    for name in MINE:
        fdef = REGISTRY.get(name)
        owner = "gradhub" if name in CORE else "gradhub-nn-ops"
        assert fdef.provider.distribution == owner, name
        assert getattr(F, fdef.snake) is fdef.api
    snakes = {
        REGISTRY.get(n).snake
        for n in (
            "ASin",
            "ATan2",
            "ReLU6",
            "LogSumExp",
            "ReLU",
            "LeakyReLU",
            "PReLU",
            "SiLU",
            "HardTanh",
        )
    }
    assert snakes == {
        "asin",
        "atan2",
        "relu6",
        "logsumexp",
        "relu",
        "leaky_relu",
        "prelu",
        "silu",
        "hard_tanh",
    }


def test_non_differentiable_functions_are_marked() -> None:
    for name in ("Sign", "Greater", "EqualScalar", "NotEqual"):
        assert REGISTRY.get(name).status() == "non-differentiable"
    x = var([1.0, -2.0])
    assert not F.sign(x).need_grad
    assert not F.greater_scalar(x, 0.0).need_grad


@pytest.mark.parametrize("name", MINE)
def test_docstring_example_runs(name: str) -> None:
    api = REGISTRY.get(name).api
    doc = api.__doc__ or ""
    assert ">>>" in doc, f"{name} has no example in its docstring"
    assert api.__name__ in doc.split("(")[0] or name in doc, f"{name}: doc names no function"
    test = doctest.DocTestParser().get_doctest(doc, {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    result = runner.run(test, out=out.append)
    assert result.failed == 0, "".join(out)


# -- float32 gradients -----------------------------------------------------------------------------


@pytest.mark.parametrize("create_graph", [False, True])
def test_float32_backward_keeps_float32(create_graph: bool) -> None:
    """Every sample of every function, in float32: the gradients are float32 (both rule kinds)."""
    from gradhub.audit import samples_of

    for name in MINE:
        fdef = REGISTRY.get(name)
        if not fdef.differentiable:
            continue
        for s in samples_of(fdef):
            xs = [
                gh.Variable(a.astype(np.float32), need_grad=True)
                if a.dtype == np.float64
                else gh.Variable(a, need_grad=False)
                for a in map(np.asarray, s.inputs)
            ]
            out = fdef.api(*xs, **s.attrs)  # type: ignore[misc]
            outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.kind == "f"]
            wrt = [x for x in xs if x.need_grad]
            gs = gh.grad(outs, wrt, create_graph=create_graph)
            for x, g in zip(wrt, gs):
                assert g is not None and g.dtype == np.float32, (name, s.name)
                assert g.shape == x.shape, (name, s.name)

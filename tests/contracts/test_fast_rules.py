"""Fast (array-level) first-order rules agree with the differentiable rules.

gradcheck already compares the two with every input needing a gradient; here every function with
a fast rule and several inputs is also run with each single input needing a gradient, since fast
rules may skip the products of inputs that need none (``need_grads``).
"""

from __future__ import annotations

import gradhub as gh
import numpy as np
import pytest
from gradhub.audit import samples_of
from gradhub.registry import REGISTRY, _ensure_loaded


def _fast_multi_input() -> list[str]:
    _ensure_loaded()
    return sorted(
        n
        for n, f in REGISTRY.functions.items()
        if f.rule is not None and f.rule.fast is not None and len(f.inputs) != 1
    )


@pytest.mark.parametrize("name", _fast_multi_input())
def test_fast_rule_matches_differentiable_rule_for_each_need_grad_mask(name: str) -> None:
    fdef = REGISTRY.get(name)
    for s in samples_of(fdef):
        floats = [i for i, a in enumerate(s.inputs) if np.asarray(a).dtype.kind == "f"]
        for only in floats:
            xs = [gh.Variable(np.asarray(a), need_grad=(i == only)) for i, a in enumerate(s.inputs)]
            out = fdef.api(*xs, **s.attrs)
            outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o.dtype.kind == "f"]
            rng = np.random.default_rng(0)
            seeds = [rng.standard_normal(o.shape) for o in outs]
            (fast,) = gh.grad(outs, [xs[only]], seeds, create_graph=False)
            (slow,) = gh.grad(outs, [xs[only]], seeds, create_graph=True)
            np.testing.assert_allclose(
                fast.d, slow.d, rtol=1e-10, atol=1e-12, err_msg=f"{name}[{s.name}] input {only}"
            )


@pytest.mark.parametrize("name", ["Mul2", "Div2"])
def test_binary_fast_rules_skip_the_gradient_of_a_constant_input(name: str) -> None:
    # W4 multiplies large activations by masks: the mask's gradient must not be computed
    fast = REGISTRY.get(name).rule.fast  # type: ignore[union-attr]
    a, b, g = np.full((3,), 2.0), np.full((3,), 4.0), np.ones(3)
    args = (np, [g], (a, b), [(3,), (3,)], (None,), [(3,)])
    ga, gb = fast(*args, need_grads=(True, False))
    assert gb is None and ga is not None
    ga, gb = fast(*args, need_grads=(False, True))
    assert ga is None and gb is not None

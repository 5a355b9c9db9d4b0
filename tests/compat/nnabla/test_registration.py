"""The nnabla layer's ``backward_functions.register``: on a composite, and with the same
signature check as ``gh.register``."""

from __future__ import annotations

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.registry import check_rule_signature
from gradhub_compat.nnabla import backward_functions as B
from numeric_helpers import central_differences
from plugin_helpers import leaky_relu_backward, old_rule

pytestmark = pytest.mark.usefixtures("fresh_plugins")


def _installed(dist: str) -> bool:
    return any(e.distribution == dist for e in plugins._entry_points())


needs_nn_ops = pytest.mark.skipif(
    not _installed("gradhub-nn-ops"), reason="gradhub-nn-ops is not installed"
)


def test_nnabla_register_uses_the_same_check() -> None:
    with pytest.raises(
        TypeError,
        match=r"nnabla\.backward_functions\.register\('Tanh'\): the "
        r"backward function must take",
    ):
        B.register("Tanh", old_rule)
    with pytest.raises(TypeError, match="takes 1 positional"):
        check_rule_signature(old_rule, "Tanh", "here")


@needs_nn_ops
def test_nnabla_compat_register_on_a_composite() -> None:
    """Formerly: B.register("LeakyReLU", ...) raised "it takes no rule"."""
    import gradhub.functions as F
    import gradhub_compat.nnabla.backward_functions as B

    B.register("LeakyReLU", leaky_relu_backward)
    x0 = np.array([-2.0, 1.5])
    x = gh.Variable(x0.copy())
    (g,) = gh.grad([F.sum(F.leaky_relu(x, 0.3))], [x])
    np.testing.assert_allclose(
        g.d,
        central_differences(lambda a: float(np.sum(F.leaky_relu(gh.Variable(a), 0.3).d)), x0),
        rtol=1e-7,
    )

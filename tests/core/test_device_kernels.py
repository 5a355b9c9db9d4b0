"""Device kernels serve array-level rules too (``gradhub.ops.kernel``).

A device plugin adds faster kernels keyed by (function, device kind). The first-order array-level
rules of the function library compute their products with other functions' kernels (the
convolution's input gradient is a Deconvolution, max pooling's is a MaxPoolingBackward), so they
look those kernels up for the device of their arrays. Here an in-process plugin adds recording
kernels for the CPU, and a first-order backward must go through them.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest
from gradhub import plugins
from gradhub.ops import kernel
from gradhub.registry import REGISTRY

RECORDING = """
from gradhub import hookimpl
from gradhub.ops import fdef

CALLS = []
NAMES = ("Convolution", "Deconvolution", "ConvolutionFilterGrad", "MaxPoolingBackward")

def recording(name):
    def run(xp, *args, **attrs):
        CALLS.append(name)
        return fdef(name).forward(xp, *args, **attrs)
    return run

@hookimpl
def gradhub_add_kernels(register):
    for name in NAMES:
        register.kernel(name, "cpu", recording(name))
"""


@pytest.fixture
def recorded() -> Iterator[Any]:
    plugins.reset()
    mod = types.ModuleType("recording_kernels")
    exec(RECORDING, mod.__dict__)
    plugins.load_plugins(extra=[("recording_kernels", mod)])
    yield mod
    plugins.reset()


def _net(x: Any, w: Any) -> Any:
    h = F.convolution(x, w, pad=(1, 1))
    return F.sum(F.max_pooling(h, (3, 3), stride=(2, 2)) ** 2)


@pytest.mark.nn_ops
def test_first_order_rules_call_the_devices_kernels(recorded: Any) -> None:
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((2, 3, 7, 7)), rng.standard_normal((4, 3, 3, 3))
    x, w = gh.Variable(xa), gh.Variable(wa)
    recorded.CALLS.clear()
    gx, gw = gh.grad([_net(x, w)], [x, w], create_graph=False)  # the array-level rules
    assert recorded.CALLS == [
        "Convolution",
        "MaxPoolingBackward",
        "Deconvolution",
        "ConvolutionFilterGrad",
    ]
    # the same numbers as without the plugin's kernels (they wrap the generic ones)
    plugins.reset()
    x2, w2 = gh.Variable(xa), gh.Variable(wa)
    ex, ew = gh.grad([_net(x2, w2)], [x2, w2])
    np.testing.assert_array_equal(gx.d, ex.d)
    np.testing.assert_array_equal(gw.d, ew.d)


@pytest.mark.nn_ops
def test_kernel_lookup_falls_back_to_the_generic_kernel(recorded: Any) -> None:
    fdef = REGISTRY.get("Deconvolution")
    assert kernel("Deconvolution", np.ones(1)) is fdef.kernels["cpu"]
    assert kernel("Sin", np.ones(1)) is REGISTRY.get("Sin").forward  # no device kernel
    assert kernel("Deconvolution", [1.0]) is fdef.forward  # not an array of a known device

"""Writes sgd_wd_reference.npz: mxnet 1.9.1's SGD optimizer (weight decay 0.01, rescale_grad
0.5, without and with momentum 0.9) after 4 updates of 1000 float32 weights, for
tests/compat/mxnet/test_optimizer.py. Run with mxnet 1.9.1:

    python make_sgd_wd_reference.py        # in this folder
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def inputs() -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(1000).astype(np.float32)
    return w0, [rng.standard_normal(1000).astype(np.float32) for _ in range(4)]


def run(mx: Any) -> dict[str, np.ndarray]:
    """The weights after 4 updates, without (``m0``) and with (``m9``) momentum."""
    w0, gs = inputs()
    out = {}
    for key, momentum in (("m0", 0.0), ("m9", 0.9)):
        opt = mx.optimizer.SGD(learning_rate=0.1, momentum=momentum, wd=0.01, rescale_grad=0.5)
        w = mx.nd.array(w0)
        state = opt.create_state(0, w)
        for g in gs:
            opt.update(0, w, mx.nd.array(g), state)
        out[key] = w.asnumpy()
    return out


if __name__ == "__main__":
    import mxnet

    np.savez(sys.argv[1] if len(sys.argv) > 1 else "sgd_wd_reference.npz", **run(mxnet))

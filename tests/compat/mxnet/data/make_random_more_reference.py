"""Write random_more_reference.npz: mxnet 1.9.1's ``mx.nd.random_pdf_*`` densities and their
gradients (``autograd.record`` + ``backward`` with the head gradient ``head``).

Run with mxnet 1.9.1 installed (numpy < 1.24), from any folder:

    python tests/compat/mxnet/data/make_random_more_reference.py

For every case of :data:`CASES` (and ``is_log`` False/True, float32 and float64) the file
holds ``<case>/<log>/<dtype>/out`` and ``.../grad<i>`` (``i``: 0 the sample, then the
parameters). Values were written by mxnet 1.9.1 (pip wheel, CPU).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

_X = [[0.2, 0.5, 1.5, 2.5], [0.1, 0.2, 0.3, 3.0]]
_N = [[0.0, 1.0, 3.0, 4.0], [2.0, 2.0, 5.0, 0.0]]

# (case, distribution, sample, parameters)
CASES: list[tuple[str, str, Any, list[Any]]] = [
    ("uniform", "uniform", _X, [[0.0, -1.0], [1.0, 2.5]]),
    ("normal", "normal", _X, [[0.0, 1.0], [1.0, 2.0]]),
    ("gamma", "gamma", _X, [[1.5, 2.0], [1.0, 0.5]]),
    ("exponential", "exponential", _X, [[1.5, 2.0]]),
    ("poisson", "poisson", _N, [[1.5, 2.0]]),
    ("negative_binomial", "negative_binomial", _N, [[3.0, 2.0], [0.4, 0.6]]),
    (
        "generalized_negative_binomial",
        "generalized_negative_binomial",
        _N,
        [[3.0, 2.0], [0.4, 0.6]],
    ),
    (
        "dirichlet",
        "dirichlet",
        [[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], [[0.6, 0.3, 0.1], [0.25, 0.25, 0.5]]],
        [[[1.5, 2.0, 3.0], [0.7, 1.2, 2.5]]],
    ),
]


def head(shape: tuple[int, ...]) -> np.ndarray:
    """The head gradient of the backward pass."""
    return np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape)


def main() -> None:
    import mxnet as mx  # type: ignore[import-not-found]

    data: dict[str, Any] = {}
    for case, dist, sample, params in CASES:
        for is_log in (False, True):
            for dt in ("float32", "float64"):
                arrays = [mx.nd.array(sample, dtype=dt)]
                arrays += [mx.nd.array(p, dtype=dt) for p in params]
                for a in arrays:
                    a.attach_grad()
                with mx.autograd.record():
                    y = getattr(mx.nd, "random_pdf_" + dist)(*arrays, is_log=is_log)
                y.backward(mx.nd.array(head(y.shape), dtype=dt))
                key = f"{case}/{int(is_log)}/{dt}"
                data[f"{key}/out"] = y.asnumpy()
                for i, a in enumerate(arrays):
                    data[f"{key}/grad{i}"] = a.grad.asnumpy()
    np.savez_compressed(os.path.join(HERE, "random_more_reference.npz"), **data)
    print(len(data), "arrays")


if __name__ == "__main__":
    main()

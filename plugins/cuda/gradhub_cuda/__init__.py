"""gradhub-cuda: the CuPy CUDA device of gradhub (a plugin distribution).

Importing this package imports no CuPy and probes no GPU; gradhub loads
:mod:`gradhub_cuda.plugin` through the ``gradhub.plugins`` entry point on first use.
"""

__version__ = "0.1.0"

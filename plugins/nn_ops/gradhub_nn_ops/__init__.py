"""gradhub-nn-ops: the function library of gradhub (a plugin distribution).

Importing this package registers nothing: gradhub loads :mod:`gradhub_nn_ops.plugin` through the
``gradhub.plugins`` entry point on first use.
"""

__version__ = "0.1.0"

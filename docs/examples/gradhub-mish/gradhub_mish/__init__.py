"""gradhub-mish: the Mish activation as a gradhub plugin (an example third-party distribution).

Installing the distribution is all it takes: gradhub finds the entry point ``mish`` in the group
``gradhub.plugins`` and calls the hooks of :mod:`gradhub_mish.plugin`, so that
``gradhub.functions.mish`` exists. Importing this package registers nothing.
"""

from __future__ import annotations

__version__ = "0.1.0"

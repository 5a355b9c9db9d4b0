"""Exception types raised by gradhub.

Every error names what went wrong in user terms: the function, the argument and, for code that a
plugin contributed, the plugin's distribution.
"""

from __future__ import annotations


class GradhubError(Exception):
    """Base class of every gradhub error."""


class FunctionNotFoundError(GradhubError, LookupError):
    """A function name that no loaded plugin registers."""


class RegistrationError(GradhubError, ValueError):
    """A registration that conflicts with the registry (duplicate name, unknown function...)."""


class BackwardRuleError(GradhubError, RuntimeError):
    """A backward rule is missing, returned a malformed result, or can't be differentiated again."""


class DeviceError(GradhubError, RuntimeError):
    """An unknown or unusable device, or inputs on two devices in one function."""


class CaptureUnsupported(GradhubError, RuntimeError):
    """A device cannot record a step's work into a graph to replay (the message says why); the
    step then runs as a plan without one (see :mod:`gradhub.capture`)."""


class PluginError(GradhubError, RuntimeError):
    """A plugin failed to load (raised in strict mode; otherwise reported and skipped)."""


class StateFileError(GradhubError, ValueError):
    """A state file (``gh.load_parameters``) that cannot be read: truncated, corrupted, holding
    pickled objects, or inconsistent; the message names the file."""


class PluginLoadWarning(UserWarning):
    """Emitted once per plugin that failed to load and was skipped."""


class GradcheckError(GradhubError, AssertionError):
    """Analytic and numeric derivatives disagree (``order``: the derivative order that failed)."""

    def __init__(self, message: str, order: int = 1) -> None:
        super().__init__(message)
        self.order = order

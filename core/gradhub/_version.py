"""The version of the gradhub distribution."""

__version__ = "0.1.0"

"""chainer's ``chainer.utils``: the parts the layer provides (:mod:`.type_check` and
:class:`WalkerAlias`)."""

from .walker_alias import WalkerAlias

__all__ = ["WalkerAlias"]

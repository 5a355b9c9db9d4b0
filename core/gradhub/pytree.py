"""Nested containers of Variables and arrays ("pytrees", as JAX and ``torch.func`` call them):
taken apart into a flat list of leaves and put together again.

The transforms of :mod:`gradhub.func` take and return them: ``grad(loss)(params)`` of a dict of
parameters returns a dict of gradients, ``vmap`` maps over every array of a dict. Containers are
dicts, tuples (named ones too) and lists, nested at any depth; ``None`` inside a container is an
empty subtree (no leaf; put back as ``None``, as in JAX). Every other value is a leaf, and so is
a tuple or list that holds no Variable, array or dict at any depth (``[1.0, 2.0]`` is one
array-like leaf, as Variable data, and not two numbers).

Dict keys keep their insertion order. :func:`flatten_as` reads a value of a known structure
(tangents paired with primals, cotangents with outputs) by that structure: a dict's entries by
key, in any order.

Example::

    >>> import numpy as np
    >>> from gradhub import pytree
    >>> leaves, tree = pytree.flatten({"w": np.ones(2), "b": (np.zeros(1), None)})
    >>> len(leaves), tree.paths()
    (2, ["['w']", "['b'][0]"])
    >>> pytree.unflatten(tree, ["W", "B"])
    {'w': 'W', 'b': ('B', None)}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .variable import Variable

__all__ = ["TreeDef", "broadcast_prefix", "flatten", "flatten_as", "unflatten"]

# node kinds
_LEAF = 0
_NONE = 1
_DICT = 2
_SEQ = 3


class TreeDef:
    """The structure of a pytree without its leaves (hashable, comparable).

    ``num_leaves`` is the number of leaves; :meth:`paths` names each leaf by its place
    (``"['w']"``, ``"[0][1]"``; ``""`` for a tree that is one leaf).
    """

    __slots__ = ("_node", "num_leaves")

    def __init__(self, node: tuple[Any, ...]) -> None:
        self._node = node
        self.num_leaves = _count(node)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeDef) and other._node == self._node

    def __hash__(self) -> int:
        return hash(self._node)

    def __repr__(self) -> str:
        return f"TreeDef({_show(self._node)})"

    @property
    def is_leaf(self) -> bool:
        """Whether the tree is one leaf (no container)."""
        return self._node[0] == _LEAF

    def children(self) -> list[TreeDef] | None:
        """The structures of the members of the top container (None for a leaf or None)."""
        node = self._node
        if node[0] == _DICT:
            return [TreeDef(c) for c in node[3]]
        if node[0] == _SEQ:
            return [TreeDef(c) for c in node[2]]
        return None

    def paths(self) -> list[str]:
        """Each leaf's place in the tree, in the order of :func:`flatten`'s leaves."""
        out: list[str] = []
        _paths(self._node, "", out)
        return out


def _holds_leaves(x: Any) -> bool:
    """Whether ``x`` is, or holds at any depth, a Variable, an array or a dict."""
    if isinstance(x, (dict, Variable)) or (hasattr(x, "shape") and hasattr(x, "dtype")):
        return True
    return isinstance(x, (tuple, list)) and any(_holds_leaves(e) for e in x)


def _is_container(x: Any) -> bool:
    """Whether ``x`` is taken apart (a dict, or a tuple or list holding a Variable, an array or
    a dict at some depth) rather than a leaf; gradhub.plan takes compiled steps' arguments
    apart by the same rule."""
    return isinstance(x, dict) or (isinstance(x, (tuple, list)) and any(map(_holds_leaves, x)))


def _node(x: Any, leaves: list[Any], top: bool) -> tuple[Any, ...]:
    if x is None and not top:
        return (_NONE,)
    if not _is_container(x):
        leaves.append(x)
        return (_LEAF,)
    if isinstance(x, dict):
        return (_DICT, type(x), tuple(x), tuple(_node(v, leaves, False) for v in x.values()))
    return (_SEQ, type(x), tuple(_node(e, leaves, False) for e in x))


def flatten(tree: Any) -> tuple[list[Any], TreeDef]:
    """The leaves of ``tree`` in order (dicts by insertion order) and its structure.

    Example::

        >>> from gradhub import pytree
        >>> pytree.flatten([1.0, 2.0])[0]          # numbers only: one array-like leaf
        [[1.0, 2.0]]
        >>> leaves, tree = pytree.flatten((3, {"a": 4}))  # a dict is always a container
        >>> leaves, tree.num_leaves
        ([3, 4], 2)
    """
    leaves: list[Any] = []
    return leaves, TreeDef(_node(tree, leaves, True))


def unflatten(tree: TreeDef, leaves: Sequence[Any]) -> Any:
    """The pytree of structure ``tree`` holding ``leaves`` (the inverse of :func:`flatten`).

    Example::

        >>> import gradhub as gh
        >>> from gradhub import pytree
        >>> _, tree = pytree.flatten({"a": (gh.Variable([1.0]), gh.Variable([2.0]))})
        >>> pytree.unflatten(tree, [10, 20])
        {'a': (10, 20)}
    """
    if len(leaves) != tree.num_leaves:
        raise ValueError(
            f"pytree.unflatten: the structure has {tree.num_leaves} leaves, got {len(leaves)}"
        )
    return _build(tree._node, iter(leaves))


def _build(node: tuple[Any, ...], it: Iterator[Any]) -> Any:
    kind = node[0]
    if kind == _LEAF:
        return next(it)
    if kind == _NONE:
        return None
    if kind == _DICT:
        typ, keys, kids = node[1], node[2], node[3]
        pairs = [(k, _build(c, it)) for k, c in zip(keys, kids)]
        try:
            return typ(pairs)
        except TypeError:  # a dict subclass that does not take pairs (defaultdict)
            return dict(pairs)
    typ, kids = node[1], node[2]
    items = [_build(c, it) for c in kids]
    if typ is tuple or typ is list:
        return typ(items)
    if issubclass(typ, tuple) and hasattr(typ, "_fields"):  # a named tuple
        return typ(*items)
    try:
        return typ(items)
    except TypeError:
        return tuple(items) if issubclass(typ, tuple) else list(items)


def flatten_as(tree: TreeDef, value: Any, where: str) -> list[Any]:
    """The leaves of ``value`` read by the structure ``tree`` (a dict's entries by key, in any
    order); raises a ``ValueError`` naming ``where`` and the place where the two differ.

    Example::

        >>> import numpy as np
        >>> from gradhub import pytree
        >>> _, tree = pytree.flatten({"w": np.ones(2), "b": np.ones(1)})
        >>> pytree.flatten_as(tree, {"b": 2, "w": 1}, "tangents")
        [1, 2]
        >>> pytree.flatten_as(tree, {"w": 1}, "tangents")
        Traceback (most recent call last):
        ...
        ValueError: tangents: missing key 'b' (expected the structure of the primals: keys 'w', 'b')
    """
    out: list[Any] = []
    _read(tree._node, value, where, "", out)
    return out


def _read(node: tuple[Any, ...], x: Any, where: str, path: str, out: list[Any]) -> None:
    kind = node[0]
    at = f"{where}{path}"
    if kind == _LEAF:
        out.append(x)
        return
    if kind == _NONE:
        if x is not None:
            raise ValueError(f"{at}: expected None (as in the primals), got {type(x).__name__}")
        return
    if kind == _DICT:
        keys, kids = node[2], node[3]
        if not isinstance(x, dict):
            raise ValueError(
                f"{at}: expected a dict with keys {', '.join(map(repr, keys))}, got "
                f"{type(x).__name__}"
            )
        for k in x:
            if k not in keys:
                raise ValueError(
                    f"{at}: unexpected key {k!r} (expected the structure of the primals: keys "
                    f"{', '.join(map(repr, keys))})"
                )
        for k, c in zip(keys, kids):
            if k not in x:
                raise ValueError(
                    f"{at}: missing key {k!r} (expected the structure of the primals: keys "
                    f"{', '.join(map(repr, keys))})"
                )
            _read(c, x[k], where, f"{path}[{k!r}]", out)
        return
    kids = node[2]
    if not isinstance(x, (tuple, list)) or len(x) != len(kids):
        got = (
            f"{type(x).__name__} of {len(x)}" if isinstance(x, (tuple, list)) else type(x).__name__
        )
        raise ValueError(f"{at}: expected a tuple or list of {len(kids)} entries, got {got}")
    for i, (c, e) in enumerate(zip(kids, x)):
        _read(c, e, where, f"{path}[{i}]", out)


def broadcast_prefix(prefix: Any, tree: TreeDef, where: str) -> list[Any]:
    """One value per leaf of ``tree`` from ``prefix``, a tree whose leaves are values (anything
    but a dict, tuple or list; None is a value here) and whose containers match the top of
    ``tree``: each value applies to the whole subtree at its place (as JAX reads ``in_axes``).
    Raises a ``ValueError`` naming ``where`` and the place where the two differ.

    Example::

        >>> import numpy as np
        >>> from gradhub import pytree
        >>> _, tree = pytree.flatten((np.ones(2), {"w": np.ones(2), "b": np.ones(1)}))
        >>> pytree.broadcast_prefix((0, None), tree, "in_axes")
        [0, None, None]
        >>> pytree.broadcast_prefix((0, {"w": 1, "b": None}), tree, "in_axes")
        [0, 1, None]
    """
    out: list[Any] = []
    _broadcast(prefix, tree._node, where, "", out)
    return out


def _broadcast(p: Any, node: tuple[Any, ...], where: str, path: str, out: list[Any]) -> None:
    if not isinstance(p, (dict, tuple, list)):
        out.extend([p] * _count(node))
        return
    kind = node[0]
    at = f"{where}{path}"
    if kind == _DICT and isinstance(p, dict):
        keys, kids = node[2], node[3]
        extra = [k for k in p if k not in keys]
        if extra:
            raise ValueError(
                f"{at}: key {extra[0]!r} is not in the argument (keys: "
                f"{', '.join(map(repr, keys))})"
            )
        for k, c in zip(keys, kids):
            if k not in p:
                raise ValueError(f"{at}: missing key {k!r} (the argument has it)")
            _broadcast(p[k], c, where, f"{path}[{k!r}]", out)
        return
    if kind == _SEQ and not isinstance(p, dict):
        kids = node[2]
        if len(p) != len(kids):
            raise ValueError(f"{at} has {len(p)} entries but the argument there has {len(kids)}")
        for i, (q, c) in enumerate(zip(p, kids)):
            _broadcast(q, c, where, f"{path}[{i}]", out)
        return
    if kind == _NONE:
        return
    what = {_LEAF: "one array", _DICT: "a dict", _SEQ: "a tuple or list"}[kind]
    raise ValueError(f"{at} is a {type(p).__name__} but the argument there is {what}")


def _count(node: tuple[Any, ...]) -> int:
    kind = node[0]
    if kind == _LEAF:
        return 1
    if kind == _NONE:
        return 0
    return sum(_count(c) for c in (node[3] if kind == _DICT else node[2]))


def _paths(node: tuple[Any, ...], path: str, out: list[str]) -> None:
    kind = node[0]
    if kind == _LEAF:
        out.append(path)
    elif kind == _DICT:
        for k, c in zip(node[2], node[3]):
            _paths(c, f"{path}[{k!r}]", out)
    elif kind == _SEQ:
        for i, c in enumerate(node[2]):
            _paths(c, f"{path}[{i}]", out)


def _show(node: tuple[Any, ...]) -> str:
    kind = node[0]
    if kind == _LEAF:
        return "*"
    if kind == _NONE:
        return "None"
    if kind == _DICT:
        return "{" + ", ".join(f"{k!r}: {_show(c)}" for k, c in zip(node[2], node[3])) + "}"
    inner = ", ".join(_show(c) for c in node[2])
    return f"({inner})" if issubclass(node[1], tuple) else f"[{inner}]"

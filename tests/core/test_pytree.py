"""gradhub.pytree: flatten and unflatten round trips (dicts, tuples, named tuples, lists, None),
what counts as a leaf, reading a value by a known structure and broadcasting a prefix tree."""

from __future__ import annotations

from collections import OrderedDict, defaultdict, namedtuple

import gradhub as gh
import numpy as np
import pytest
from gradhub import pytree

Point = namedtuple("Point", "x y")


def test_round_trip_keeps_types_order_and_none() -> None:
    a, b, c = np.ones(2), gh.Variable([1.0]), np.zeros((2, 2))
    tree = {"z": Point(a, [b, None]), "a": OrderedDict(k=c), "d": defaultdict(list, q=a)}
    leaves, td = pytree.flatten(tree)
    assert [id(x) for x in leaves] == [id(a), id(b), id(c), id(a)]
    assert td.num_leaves == 4
    assert td.paths() == ["['z'][0]", "['z'][1][0]", "['a']['k']", "['d']['q']"]
    back = pytree.unflatten(td, [1, 2, 3, 4])
    assert back == {"z": Point(1, [2, None]), "a": OrderedDict(k=3), "d": {"q": 4}}
    assert list(back) == ["z", "a", "d"] and type(back["z"]) is Point
    assert type(back["a"]) is OrderedDict
    # the same structure compares equal and hashes alike; another one does not
    assert pytree.flatten(tree)[1] == td and hash(pytree.flatten(tree)[1]) == hash(td)
    assert pytree.flatten({"z": 1})[1] != td
    with pytest.raises(ValueError, match="has 4 leaves, got 3"):
        pytree.unflatten(td, [1, 2, 3])


def test_what_is_a_leaf() -> None:
    # numbers only (at any depth): one array-like leaf; an array or Variable anywhere: a container
    assert pytree.flatten([1.0, [2.0, 3.0]])[0] == [[1.0, [2.0, 3.0]]]
    assert pytree.flatten((1.0, np.ones(1)))[1].num_leaves == 2
    assert pytree.flatten(None)[1].num_leaves == 1  # a lone None is a leaf (the argument itself)
    assert pytree.flatten((None, np.ones(1)))[1].num_leaves == 1  # inside: an empty subtree
    assert pytree.flatten({})[1].num_leaves == 0
    assert pytree.flatten("text")[0] == ["text"]


def test_flatten_as_reads_by_structure_and_names_the_difference() -> None:
    _, td = pytree.flatten({"w": np.ones(2), "p": (np.ones(1), None)})
    assert pytree.flatten_as(td, {"p": (2, None), "w": 1}, "v") == [1, 2]
    with pytest.raises(ValueError, match=r"v\['p'\]: expected a tuple or list of 2 entries, got"):
        pytree.flatten_as(td, {"w": 1, "p": (2,)}, "v")
    with pytest.raises(ValueError, match=r"v\['p'\]\[1\]: expected None"):
        pytree.flatten_as(td, {"w": 1, "p": (2, 3)}, "v")
    with pytest.raises(ValueError, match=r"v: expected a dict with keys 'w', 'p', got list"):
        pytree.flatten_as(td, [1, 2], "v")


def test_broadcast_prefix() -> None:
    _, td = pytree.flatten((np.ones(2), {"w": np.ones(2), "b": (np.ones(1), np.ones(1))}))
    assert pytree.broadcast_prefix(0, td, "a") == [0, 0, 0, 0]
    assert pytree.broadcast_prefix((None, {"w": 1, "b": 0}), td, "a") == [None, 1, 0, 0]
    assert pytree.broadcast_prefix((1, {"w": 1, "b": (0, None)}), td, "a") == [1, 1, 0, None]
    with pytest.raises(ValueError, match=r"a has 3 entries but the argument there has 2"):
        pytree.broadcast_prefix((0, 0, 0), td, "a")
    with pytest.raises(ValueError, match=r"a\[1\]: missing key 'b'"):
        pytree.broadcast_prefix((0, {"w": 0}), td, "a")
    with pytest.raises(ValueError, match=r"a\[0\] is a tuple but the argument there is one array"):
        pytree.broadcast_prefix(((0,), 0), td, "a")

"""Reference cycles: a gradient stored with ``create_graph=True`` is a cycle that ``cleargrad``
breaks; ``grad`` without ``set_grad`` makes none (checked with the cyclic collector off)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import gradhub.functions as F
import numpy as np
import pytest


@pytest.fixture
def no_gc() -> Iterator[None]:
    """Run with the cyclic collector off, so that only reference counting frees objects."""
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _graph_refs(store: Callable[[Any, Any], Any]) -> tuple[list[weakref.ref[Any]], Any]:
    x = gh.Variable(np.linspace(0.1, 1.0, 5))
    s = F.sin(x)
    y = F.sum(s**3.0)
    kept = store(x, y)
    return [weakref.ref(x), weakref.ref(s.creator)], kept


@pytest.mark.nn_ops
def test_a_gradient_stored_with_create_graph_is_a_cycle_that_cleargrad_breaks(no_gc: None) -> None:
    """docs/concepts.md: x -> x.grad_var -> nodes using x is a cycle; clearing .g frees it."""

    def backward(x: Any, y: Any) -> Any:
        y.backward(create_graph=True)
        return x

    refs, x = _graph_refs(backward)
    assert x.grad_var is not None and x.grad_var.creator is not None
    x.cleargrad()
    del x
    assert [r() for r in refs] == [None, None]  # freed by reference counting alone

    refs, x = _graph_refs(backward)
    del x
    assert all(r() is not None for r in refs)  # the documented cycle: only gc frees it
    gc.collect()
    assert [r() for r in refs] == [None, None]


@pytest.mark.nn_ops
def test_grad_without_set_grad_makes_no_cycle(no_gc: None) -> None:
    def returned(x: Any, y: Any) -> Any:
        (g,) = gh.grad([y], [x], create_graph=True)
        return g

    refs, g = _graph_refs(returned)
    np.testing.assert_allclose(
        g.d, 3 * np.sin(np.linspace(0.1, 1.0, 5)) ** 2 * np.cos(np.linspace(0.1, 1.0, 5))
    )
    del g
    assert [r() for r in refs] == [None, None]

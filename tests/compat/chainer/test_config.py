"""``chainer.config``, ``chainer.using_config``, ``no_backprop_mode`` and ``force_backprop_mode`` of
the chainer layer: ``train`` switching dropout off, ``enable_backprop`` read from and written to
the thread's recording switch, other names, and results computed without recording that still
require a gradient (roots of later graphs) while the native ``gh.no_grad`` keeps its own rule.
"""

from __future__ import annotations

import threading

import gradhub as gh
import gradhub.optim
import gradhub_compat.chainer.functions as CF
import gradhub_compat.chainer.functions as F
import numpy as np
import pytest
from compat.chainer.helpers import _v
from gradhub_compat import chainer


def test_config_train_switches_dropout_off() -> None:
    x = _v(np.ones(1000))
    assert chainer.config.train is True
    with chainer.using_config("train", False):
        assert chainer.config.train is False
        assert F.dropout(x) is x
    assert chainer.config.train is True
    assert (F.dropout(x).array == 0).any()
    chainer.config.train = False
    try:
        assert F.dropout(x) is x
        seen: list[object] = []
        t = threading.Thread(target=lambda: seen.append(chainer.config.train))
        t.start()
        t.join()
        assert seen == [True]  # thread-local, as chainer
    finally:
        chainer.config.train = True


def test_config_enable_backprop() -> None:
    x = _v([1.0, 2.0])
    assert chainer.config.enable_backprop is True
    with chainer.using_config("enable_backprop", False):
        assert chainer.config.enable_backprop is False
        y = x * 2
    assert y.creator is None and y.requires_grad  # as chainer's no_backprop_mode
    assert chainer.config.enable_backprop is True
    with chainer.no_backprop_mode():
        assert chainer.config.enable_backprop is False
    assert (x * 2).creator is not None


def test_config_other_names() -> None:
    with pytest.raises(AttributeError, match="foo"):
        _ = chainer.config.foo
    with chainer.using_config("foo", 3):
        assert chainer.config.foo == 3
    with pytest.raises(AttributeError, match="foo"):
        _ = chainer.config.foo


def test_chainer_no_backprop_results_are_roots_that_require_grad() -> None:
    """chainer: a result computed under no_backprop_mode requires a gradient when its input
    does; it has no creator, so later graphs stop at it."""
    x = chainer.Variable(np.array([1.0, 2.0], dtype=np.float32))
    with chainer.no_backprop_mode():
        q = x * 2
    assert q.requires_grad and q.creator is None
    CF.sum(q * q).backward()
    np.testing.assert_array_equal(q.grad, [4.0, 8.0])
    assert x.grad is None
    (gq,) = chainer.grad([CF.sum(q * q)], [q])
    np.testing.assert_array_equal(gq.array, [4.0, 8.0])


def test_native_no_grad_results_still_need_no_gradient() -> None:
    """gradhub's own no_grad keeps PyTorch's semantics (results need no gradient)."""
    a = gh.Variable([1.0])
    with gh.no_grad():
        b = a * 2.0
    assert not b.need_grad


def test_is_debug_and_set_debug() -> None:
    assert chainer.is_debug() is False  # chainer's default (CHAINER_DEBUG unset)
    assert chainer.config.debug is False
    chainer.set_debug(True)
    try:
        assert chainer.is_debug() is True and chainer.config.debug is True
        seen = []
        t = threading.Thread(target=lambda: seen.append(chainer.is_debug()))
        t.start()
        t.join()
        assert seen == [False]  # per thread, as chainer
    finally:
        chainer.set_debug(False)
    assert chainer.is_debug() is False
    with chainer.using_config("debug", True):
        assert chainer.is_debug()
    assert not chainer.is_debug()


def test_a_compiled_step_follows_chainer_config_train() -> None:
    # regression: chainer.config.train read inside a compiled step was the traced call's at every
    # call (a step traced in evaluation mode skipped dropout when training); a setting the step
    # itself makes (using_config inside it) is not a reason to trace again
    import gradhub as gh
    import gradhub_compat.chainer.functions as F

    x = np.ones((4, 8), np.float32)
    step = gh.compile(lambda x: F.dropout(x, 0.5))
    with chainer.using_config("train", False):
        np.testing.assert_array_equal(step(x).array, x)
    dropped = step(x).array  # training: some zeros, the others 2
    assert set(np.unique(dropped)) <= {0.0, 2.0} and (dropped == 0).any()
    assert len(step.traces) == 1  # (one per signature: the guard traced it again)
    with chainer.using_config("train", False):
        np.testing.assert_array_equal(step(x).array, x)

    def evaluate(x):  # type: ignore[no-untyped-def]
        with chainer.using_config("train", False):
            return F.dropout(x, 0.5)

    fast = gh.compile(evaluate)
    for _ in range(3):
        np.testing.assert_array_equal(fast(x).array, x)
    (trace,) = fast.traces.values()
    assert trace.guards == [] and trace.runs == 2  # (traced once: replayed twice)


def test_a_compiled_step_alternating_train_and_test_mode_traces_each_mode_once() -> None:
    # regression: each switch of chainer.config.train traced the step again (one trace kept per
    # signature), so a step alternating between training and evaluation never replayed
    import gradhub as gh
    import gradhub_compat.chainer.functions as F

    calls = []

    def step(x):  # type: ignore[no-untyped-def]
        calls.append(1)
        return F.dropout(x, 0.5)

    fast = gh.compile(step)
    x = np.ones((4, 8), np.float32)
    for _ in range(3):
        dropped = fast(x).array
        assert set(np.unique(dropped)) <= {0.0, 2.0} and (dropped == 0).any()
        with chainer.using_config("train", False):
            np.testing.assert_array_equal(fast(x).array, x)
    assert len(calls) == 2

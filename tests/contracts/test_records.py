"""The registry's and the device module's record classes (plain classes, not dataclasses, to keep
them off the start-up path): value semantics, immutability, lazily built signatures."""

from __future__ import annotations

import inspect

import gradhub.functions as F
import pytest
from gradhub.device import Context
from gradhub.registry import FunctionDef, Provider, Rule, Sample


def test_provider_and_context_are_immutable_values() -> None:
    a, b = Provider("dist", "1.0"), Provider("dist", "1.0")
    assert a == b and hash(a) == hash(b) and a != Provider("dist", "2.0")
    assert str(a) == "dist 1.0" and str(Provider("", "", "mod")) == "module mod"
    assert repr(a) == "Provider(distribution='dist', version='1.0', module='')"
    with pytest.raises(AttributeError):
        a.version = "2.0"  # type: ignore[misc]
    c = Context("cuda", 1)
    assert c == Context(backend="cuda", device_id=1, type_config="float") and c != Context()
    assert {c: 1}[Context("cuda", 1)] == 1
    assert repr(Context()) == "Context(backend='cpu', device_id=0, type_config='float')"
    assert c.device_name == "cuda:1" and Context().device_name == "cpu"
    with pytest.raises(AttributeError):
        c.backend = "cpu"  # type: ignore[misc]


def test_record_defaults_are_not_shared() -> None:
    p = Provider("t")
    f1 = FunctionDef("RecA", lambda xp, x: x, p)
    f2 = FunctionDef("RecB", lambda xp, x: x, p)
    f1.attrs["k"] = 1
    f1.kernels["cpu"] = lambda xp, x: x
    assert f2.attrs == {} and f2.kernels == {} and f1.audit is not f2.audit
    assert f1.snake == "rec_a" and f1.kind == "primitive" and f1.n_plain_inputs == 1
    s1, s2 = Sample((1.0,)), Sample((2.0,))
    s1.attrs["k"] = 1
    assert s2.attrs == {}


def test_rule_reads_whether_its_fast_rule_wants_need_grads() -> None:
    def fast(xp, gy, x, xs, y, ys, need_grads):  # type: ignore[no-untyped-def]
        return [gy[0]]

    def fast_plain(xp, gy, x, xs, y, ys, **attrs):  # type: ignore[no-untyped-def]
        return [gy[0]]

    p = Provider("t")
    assert Rule(lambda *a: a, p, fast=fast).fast_wants_need_grads
    assert not Rule(lambda *a: a, p, fast=fast_plain).fast_wants_need_grads
    assert not Rule(lambda *a: a, p).fast_wants_need_grads


def test_function_signatures_are_built_on_demand_and_complete() -> None:
    sig = inspect.signature(F.convolution)
    assert str(sig) == (
        "(x, weight, bias=None, base_axis=1, pad=None, stride=None, "
        "dilation=None, group=1, channel_last=False)"
    )
    assert sig == inspect.signature(F.convolution)
    assert list(sig.bind(1, 2).arguments) == ["x", "weight"]
    assert str(sig.replace(parameters=list(sig.parameters.values())[:2])) == "(x, weight)"
    assert str(inspect.signature(F.sin)) == "(x)"

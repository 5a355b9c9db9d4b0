"""chainer's module paths under ``chainer.functions`` (``from chainer.functions.loss.vae import
gaussian_kl_divergence``, as the VAE example does) hold the layer's functions; other names of
those modules raise NotImplementedError naming the page."""

from __future__ import annotations

import importlib

import gradhub_compat.chainer.functions as F
import pytest


def test_from_import_of_a_function_module() -> None:
    from gradhub_compat.chainer.functions.loss.vae import (
        bernoulli_nll,
        gaussian_kl_divergence,
        gaussian_nll,
    )

    assert gaussian_kl_divergence is F.gaussian_kl_divergence
    assert bernoulli_nll is F.bernoulli_nll and gaussian_nll is F.gaussian_nll


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("activation.relu", "relu"),
        ("rnn.lstm", "lstm"),
        ("loss.softmax_cross_entropy", "softmax_cross_entropy"),
        ("connection.convolution_2d", "convolution_2d"),
        ("array.reshape", "reshape"),
        ("math.sum", "sum"),
        ("noise.dropout", "dropout"),
        ("pooling.max_pooling_nd", "max_pooling_2d"),
        ("normalization.batch_normalization", "batch_normalization"),
    ],
)
def test_module_paths_of_chainer(path: str, name: str) -> None:
    module = importlib.import_module(f"gradhub_compat.chainer.functions.{path}")
    assert getattr(module, name) is getattr(F, name)
    group, mod = path.split(".")
    if group != "math":  # (F.math is not reached as an attribute: only the import path)
        assert getattr(getattr(F, group), mod) is module


def test_other_names_of_a_function_module_name_the_page() -> None:
    import gradhub_compat.chainer.functions.activation.relu as relu_module

    with pytest.raises(NotImplementedError, match="migration-chainer"):
        relu_module.ReLU  # noqa: B018 (chainer's FunctionNode class)
    with pytest.raises(NotImplementedError, match="migration-chainer"):
        from gradhub_compat.chainer.functions.activation.relu import ReLU  # noqa: F401


@pytest.mark.parametrize("name", ["add", "deformable_convolution_2d_sampler"])
def test_chainer_functions_once_refused_are_provided(name: str) -> None:
    # refused before 2026-11-28; test_links_more2.py compares them with chainer 7.8.1
    assert name in F.__all__ and callable(getattr(F, name))
    with pytest.raises(AttributeError):
        F.no_such_function  # noqa: B018

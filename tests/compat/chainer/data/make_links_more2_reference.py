"""Writes ``links_more2_reference.npz``: chainer 7.8.1's results for the cases below, which
``tests/compat/chainer/test_links_more2.py`` runs through gradhub_compat and compares.

Run it with chainer 7.8.1 (CPU, numpy 1.26) from this folder::

    python make_links_more2_reference.py

Each case of ``CASES`` is a function of the modules ``(chainer, F, L)``; it runs unchanged
under chainer and under gradhub_compat (the test imports ``CASES`` and ``ERRORS`` from this
file; chainer is imported only when it runs as a script). A case builds links after
``numpy.random.seed`` (their initial values drawn as chainer draws them) and returns a dict of
arrays: the initial parameters (``init/<path>``), outputs, the gradients of ``sum(y * r)`` for
the inputs and every parameter (``g/<path>``), the running statistics and the entries that
``save_npz`` writes (``npz/<key>``; ``npz_keys``: their sorted names). They are stored under
``<case>/<key>``. For each of ``ERRORS`` it stores ``error/<name>``, the name of the exception
chainer raises (``""``: none). Only plain arrays are written (strings as unicode arrays), so the
test loads the file without unpickling anything.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np

Case = Callable[[Any, Any, Any], dict[str, Any]]
CASES: dict[str, Case] = {}
ERRORS: dict[str, Callable[[Any, Any, Any], Any]] = {}


def _case(fn: Case) -> Case:
    CASES[fn.__name__] = fn
    return fn


def _error(fn: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    ERRORS[fn.__name__] = fn
    return fn


def _rand(shape: Any, seed: int, scale: float = 1.0, dtype: Any = np.float32) -> np.ndarray:
    return (np.random.RandomState(seed).uniform(-1, 1, shape) * scale).astype(dtype)


def _init(link: Any) -> dict[str, Any]:
    """The initial parameters and their sorted names."""
    out: dict[str, Any] = {f"init{name}": np.array(p.array) for name, p in link.namedparams()}
    out["param_names"] = np.array(sorted(name for name, _ in link.namedparams()))
    return out


def _backward(chainer: Any, F: Any, link: Any, y: Any, xs: list[Any], seed: int = 100) -> dict:
    """The output and the gradients of ``sum(y * r)`` for ``xs`` and the link's parameters."""
    link.cleargrads()
    for x in xs:
        x.cleargrad()
    F.sum(y * _rand(y.shape, seed, dtype=y.dtype)).backward()
    out: dict[str, Any] = {"y": np.array(y.array)}
    for i, x in enumerate(xs):
        out[f"gx{i}"] = np.array(x.grad)
    for name, p in link.namedparams():
        out[f"g{name}"] = np.array(p.grad)
    return out


def _npz(chainer: Any, link: Any) -> dict[str, Any]:
    """The entries ``save_npz`` writes for the link, and their sorted names."""
    s = chainer.serializers.DictionarySerializer()
    s.save(link)
    out = {f"npz/{k}": np.asarray(v) for k, v in s.target.items()}
    out["npz_keys"] = np.array(sorted(s.target))
    return out


def _prefixed(prefix: str, d: dict[str, Any]) -> dict[str, Any]:
    return {f"{prefix}/{k}": v for k, v in d.items()}


def _one_call(chainer: Any, F: Any, link: Any, x: Any) -> dict[str, Any]:
    """The initial parameters, the output for ``x`` and the gradients, the ``save_npz``
    entries."""
    out = _init(link)
    out.update(_backward(chainer, F, link, link(x), [x]))
    out.update(_npz(chainer, link))
    return out


def _deferred_call(chainer: Any, F: Any, link: Any, x: Any) -> dict[str, Any]:
    """The output for ``x`` (the call shapes the link's deferred parameters), then the
    parameters and the gradients."""
    y = link(x)
    out = _init(link)
    out.update(_backward(chainer, F, link, y, [x]))
    return out


# -- normalizations --------------------------------------------------------------------------


@_case
def batch_renormalization(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    link = L.BatchRenormalization(3, rmax=1.2, dmax=0.3, decay=0.8, eps=1e-3)
    link.avg_mean[...] = [0.1, -0.2, 0.3]
    link.avg_var[...] = [0.5, 2.0, 1.0]
    link.gamma.array[...] = [1.0, 0.5, -2.0]
    link.beta.array[...] = [0.1, 0.0, -0.3]
    out = _init(link)
    x = chainer.Variable(_rand((5, 3), 1, 2.0))
    out.update(_prefixed("step1", _backward(chainer, F, link, link(x), [x])))
    out["step1/avg_mean"] = link.avg_mean.copy()
    out["step1/avg_var"] = link.avg_var.copy()
    x2 = chainer.Variable(_rand((2, 3, 4), 2) + np.float32(0.5))
    out.update(_prefixed("step2", _backward(chainer, F, link, link(x2), [x2], seed=101)))
    with chainer.using_config("train", False):
        x3 = chainer.Variable(_rand((2, 3), 3))
        out.update(_prefixed("test", _backward(chainer, F, link, link(x3), [x3], seed=102)))
    out.update(_npz(chainer, link))
    return out


@_case
def batch_renormalization_finetune(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    # chainer hands initial_avg_mean / initial_avg_var to BatchNormalization's axis /
    # initial_avg_mean: the running mean starts from initial_avg_var, the variance from ones
    link = L.BatchRenormalization(
        2, rmax=3.0, dmax=1.0, use_gamma=False, initial_beta=0.25, initial_avg_var=0.5
    )
    out = _init(link)
    out["avg_mean0"] = link.avg_mean.copy()
    out["avg_var0"] = link.avg_var.copy()
    for i in range(3):
        x = chainer.Variable(_rand((4, 2, 3), 10 + i, 1.5))
        out.update(_prefixed(f"ft{i}", _backward(chainer, F, link, link(x, finetune=True), [x])))
    out["N"] = np.array(link.N)
    out["avg_mean"] = link.avg_mean.copy()
    out["avg_var"] = link.avg_var.copy()
    link.start_finetuning()
    out["N_restarted"] = np.array(link.N)
    out.update(_npz(chainer, link))
    return out


@_case
def decorrelated_batch_normalization(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    link = L.DecorrelatedBatchNormalization(4, groups=2, decay=0.7, eps=1e-3)
    out = _init(link)
    out["avg_projection0"] = link.avg_projection.copy()
    x = chainer.Variable(_rand((6, 4), 20, 2.0))
    out.update(_prefixed("step1", _backward(chainer, F, link, link(x), [x])))
    x2 = chainer.Variable(_rand((3, 4, 2, 2), 21))
    out.update(_prefixed("step2", _backward(chainer, F, link, link(x2, finetune=True), [x2])))
    out["avg_mean"] = link.avg_mean.copy()
    out["avg_projection"] = link.avg_projection.copy()
    out["N"] = np.array(link.N)
    with chainer.using_config("train", False):
        x3 = chainer.Variable(_rand((2, 4, 3), 22))
        out.update(_prefixed("test", _backward(chainer, F, link, link(x3), [x3], seed=103)))
    out.update(_npz(chainer, link))
    return out


# -- connections -----------------------------------------------------------------------------


@_case
def local_convolution_2d(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    np.random.seed(0)
    link = L.LocalConvolution2D(2, 3, in_size=(4, 5), ksize=(2, 3))
    link.b.array[...] = _rand(link.b.shape, 30)
    return _one_call(chainer, F, link, chainer.Variable(_rand((2, 2, 4, 5), 31)))


@_case
def local_convolution_2d_deferred(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    np.random.seed(1)
    link = L.LocalConvolution2D(None, 2, ksize=2, nobias=True)
    return _deferred_call(chainer, F, link, chainer.Variable(_rand((1, 3, 3, 4), 32)))


@_case
def mlp_convolution_2d(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    np.random.seed(2)
    link = L.MLPConvolution2D(3, (4, 2, 3), 2, stride=1, pad=1)
    return _one_call(chainer, F, link, chainer.Variable(_rand((2, 3, 3, 3), 33)))


@_case
def mlp_convolution_2d_deferred(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    np.random.seed(3)
    link = L.MLPConvolution2D(
        (3, 2), 1, activation=F.tanh, conv_init=chainer.initializers.Normal(0.5), bias_init=0.1
    )
    return _deferred_call(chainer, F, link, chainer.Variable(_rand((2, 2, 2, 3), 34)))


@_case
def deformable_convolution_2d(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    np.random.seed(4)
    link = L.DeformableConvolution2D(
        2, 3, 3, stride=2, pad=1, deform_initialW=chainer.initializers.Normal(0.3)
    )
    link.deform_conv.b.array[...] = [0.1, -0.2, 0.3]
    return _one_call(chainer, F, link, chainer.Variable(_rand((2, 2, 5, 6), 35, 2.0)))


@_case
def deformable_convolution_2d_default(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    np.random.seed(5)
    link = L.DeformableConvolution2D(None, 2, (2, 3), offset_initial_bias=0.3)
    # the sampler's W starts at zero: y is its bias, zeros
    return _deferred_call(chainer, F, link, chainer.Variable(_rand((1, 3, 4, 4), 36)))


def _sampler(chainer: Any, F: Any, dtype: Any, offset_hw: Any, stride: Any, pad: Any) -> dict:
    x = chainer.Variable(_rand((2, 2, 4, 5), 40, 2.0, dtype))
    W = chainer.Variable(_rand((3, 2, 2, 2), 41, 1.0, dtype))
    b = chainer.Variable(_rand((3,), 42, 1.0, dtype))
    offset = chainer.Variable(_rand((2, 8, *offset_hw), 43, 2.5, dtype))
    y = F.deformable_convolution_2d_sampler(x, offset, W, b, stride=stride, pad=pad)
    F.sum(y * _rand(y.shape, 44, dtype=dtype)).backward()
    out = {"y": np.array(y.array)}
    for k, v in (("x", x), ("offset", offset), ("W", W), ("b", b)):
        out[f"g{k}"] = np.array(v.grad)
    return out


@_case
def deformable_sampler(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    return _sampler(chainer, F, np.float32, (5, 2), (1, 2), (1, 0))


@_case
def deformable_sampler_float64(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    return _sampler(chainer, F, np.float64, (4, 3), 1, 0)


@_case
def deformable_sampler_offset_size(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    # an offset map larger than the convolution's output: the extra positions read outside
    return _sampler(chainer, F, np.float32, (3, 4), (2, 2), (0, 1))


# -- activations -----------------------------------------------------------------------------


@_case
def simplified_dropconnect(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    np.random.seed(6)
    link = L.SimplifiedDropconnect(4, 3, ratio=0.3)
    link.b.array[...] = [0.1, 0.2, -0.3]
    out = _init(link)
    x = chainer.Variable(_rand((2, 4), 50))
    out.update(_prefixed("batchwise", _backward(chainer, F, link, link(x), [x])))
    y = link(x, use_batchwise_mask=False)
    out.update(_prefixed("shared", _backward(chainer, F, link, y, [x])))
    out.update(_prefixed("eval", _backward(chainer, F, link, link(x, train=False), [x])))
    mask = np.random.RandomState(51).uniform(0, 1, (2, 3, 4)) > 0.5
    out.update(_prefixed("mask", _backward(chainer, F, link, link(x, mask=mask), [x])))
    out.update(_npz(chainer, link))
    return out


@_case
def simplified_dropconnect_deferred(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    np.random.seed(7)
    link = L.SimplifiedDropconnect(None, 2, ratio=0.6, nobias=True)
    return _deferred_call(chainer, F, link, chainer.Variable(_rand((3, 2, 2), 52)))


@_case
def swish(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    link = L.Swish((3,), beta_init=0.5)
    link.beta.array[...] = [0.5, -1.0, 2.0]
    return _one_call(chainer, F, link, chainer.Variable(_rand((2, 3, 2), 60, 3.0)))


@_case
def swish_deferred(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    link = L.Swish(None, 1.5)
    return _deferred_call(chainer, F, link, chainer.Variable(_rand((2, 3), 61, 3.0)))


# -- losses ----------------------------------------------------------------------------------


@_case
def black_out(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    link = L.BlackOut(3, [3, 1, 2, 4, 1], 2)
    out = {"W_nan": np.array(np.isnan(link.W.array).all())}
    link.W.array[...] = _rand((5, 3), 70)
    x = chainer.Variable(_rand((4, 3), 71))
    t = np.array([0, 3, 2, 4], np.int32)
    np.random.seed(8)
    out.update(_prefixed("sampled", _backward(chainer, F, link, link(x, t), [x])))
    link.sample_data = np.array([[1, 2], [0, 0], [4, 1], [3, 3]], np.int32)
    out.update(_prefixed("given", _backward(chainer, F, link, link(x, t), [x])))
    out.update(_npz(chainer, link))
    return out


def _crf_inputs(chainer: Any) -> tuple[list[Any], list[np.ndarray]]:
    xs = [chainer.Variable(_rand((n, 3), 80 + n, 2.0)) for n in (2, 4, 3)]
    ys = [np.array([(i * 7 + n) % 3 for i in range(n)], np.int32) for n in (2, 4, 3)]
    return xs, ys


@_case
def crf1d(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    np.random.seed(9)
    link = L.CRF1d(3, initial_cost=chainer.initializers.Normal(1.0))
    out = _init(link)
    xs, ys = _crf_inputs(chainer)
    loss = link(xs, ys, transpose=True)
    out.update(_prefixed("mean", _backward(chainer, F, link, loss, xs)))
    loss = link(xs, ys, reduce="no", transpose=True)
    out.update(_prefixed("no", _backward(chainer, F, link, loss, xs)))
    score, path = link.argmax(xs, transpose=True)
    out["argmax/score"] = np.array(score.array)
    for i, p in enumerate(path):
        out[f"argmax/path{i}"] = np.array(p)
    # time-major input
    txs = F.transpose_sequence([xs[1], xs[2], xs[0]])
    tys = F.transpose_sequence([ys[1], ys[2], ys[0]])
    out.update(_prefixed("time_major", _backward(chainer, F, link, link(txs, tys), [])))
    score, path = link.argmax(txs)
    out["argmax_tm/score"] = np.array(score.array)
    for i, p in enumerate(path):
        out[f"argmax_tm/path{i}"] = np.array(p)
    out.update(_npz(chainer, link))
    return out


# -- F.add -----------------------------------------------------------------------------------


@_case
def add(chainer: Any, F: Any, L: Any) -> dict[str, Any]:
    a = chainer.Variable(_rand((2, 3), 90))
    b = chainer.Variable(_rand((3,), 91))
    c = chainer.Variable(_rand((2, 1), 92))
    out: dict[str, Any] = {}
    cases = {
        "pair": lambda: F.add(a, b),
        "scalar": lambda: F.add(a, 2.5),
        "array64": lambda: F.add(a, _rand((2, 3), 93, dtype=np.float64)),
        "multi": lambda: F.add(b, a, c, a),
        "one": lambda: F.add(a),
    }
    for name, fn in cases.items():
        for v in (a, b, c):
            v.cleargrad()
        y = fn()
        F.sum(y * _rand(y.shape, 94)).backward()
        out[f"{name}/y"] = np.array(y.array)
        for k, v in (("a", a), ("b", b), ("c", c)):
            if v.grad is not None:
                out[f"{name}/g{k}"] = np.array(v.grad)
    ints = F.add(np.ones(3, np.int32), np.ones((2, 3), np.int32), np.ones((1, 3), np.int32))
    out["ints/y"] = np.array(ints.array)
    return out


# -- errors ----------------------------------------------------------------------------------


@_error
def add_dtype_mismatch(chainer: Any, F: Any, L: Any) -> Any:
    return F.add(chainer.Variable(np.ones(2, np.float32)), chainer.Variable(np.ones(2)))


@_error
def multi_add_dtype_mismatch(chainer: Any, F: Any, L: Any) -> Any:
    return F.add(np.ones(2, np.float32), np.ones(2, np.float32), np.ones(2))


@_error
def sampler_offset_channels(chainer: Any, F: Any, L: Any) -> Any:
    x = np.ones((1, 1, 3, 3), np.float32)
    return F.deformable_convolution_2d_sampler(
        x, np.zeros((1, 4, 2, 2), np.float32), np.ones((1, 1, 2, 2), np.float32)
    )


@_error
def mlp_wscale_positional(chainer: Any, F: Any, L: Any) -> Any:
    return L.MLPConvolution2D(1, (2,), 1, 1, 0, F.relu, 1.0)


@_error
def mlp_wscale_keyword(chainer: Any, F: Any, L: Any) -> Any:
    return L.MLPConvolution2D(1, (2,), 1, wscale=1.0)


@_error
def batch_renormalization_deferred(chainer: Any, F: Any, L: Any) -> Any:
    return L.BatchRenormalization(None)


def main(path: str) -> None:
    import chainer
    import chainer.functions as F
    import chainer.links as L

    out: dict[str, np.ndarray] = {}
    for name, fn in CASES.items():
        for key, value in fn(chainer, F, L).items():
            out[f"{name}/{key}"] = np.asarray(value)
    for name, fn in ERRORS.items():
        try:
            fn(chainer, F, L)
            err = ""
        except Exception as e:  # (the exception's name is the result)
            err = type(e).__name__
        out[f"error/{name}"] = np.array(err)
    buf = io.BytesIO()
    np.savez_compressed(buf, **out)  # type: ignore[arg-type]
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    print(f"wrote {len(out)} arrays to {path}")


if __name__ == "__main__":
    import os

    main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "links_more2_reference.npz"))

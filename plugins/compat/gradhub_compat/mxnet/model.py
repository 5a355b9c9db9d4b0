"""mxnet's checkpoints (``mx.model``): :func:`save_checkpoint`, :func:`load_checkpoint`,
:func:`load_params`.

A checkpoint is two files, as mxnet 1.9.1 writes them: ``PREFIX-symbol.json``, the symbol's
JSON (:meth:`~.symbol.Symbol.save`), and ``PREFIX-EPOCH.params`` (the epoch on four digits,
``mlp-0003.params``), an NDArray file (:func:`~.ndarray_io.save`) of the arguments named
``arg:NAME`` and the auxiliary states named ``aux:NAME``. Checkpoints written by mxnet load here
and checkpoints written here load in mxnet. Loading only parses both files: nothing is executed
or unpickled.

Example::

    >>> import os, tempfile
    >>> import gradhub_compat.mxnet as mx
    >>> fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc")
    >>> params = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.array([0.5, -0.5])}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     mx.model.save_checkpoint(os.path.join(d, "net"), 1, fc, params, {})
    ...     files = sorted(os.listdir(d))
    ...     sym, args, aux = mx.model.load_checkpoint(os.path.join(d, "net"), 1)
    >>> files
    ['net-0001.params', 'net-symbol.json']
    >>> ex = sym.bind(mx.cpu(), dict(args, data=mx.nd.ones((1, 3))))
    >>> ex.forward()[0].asnumpy()
    array([[3.5, 2.5]], dtype=float32)
"""

from __future__ import annotations

import logging
from collections import namedtuple
from typing import Any

from . import ndarray_io
from .base import MXNetError, _MXNetValueError
from .context import cpu
from .ndarray import NDArray
from .symbol import Symbol
from .symbol import load as _load_symbol

__all__ = ["BatchEndParam", "load_checkpoint", "load_params", "save_checkpoint"]


#: What batch-end callbacks receive (``epoch``, ``nbatch``, ``eval_metric``, ``locals``), as
#: mxnet's ``mx.model.BatchEndParam`` (a namedtuple of the class name ``BatchEndParams``, as
#: mxnet's); also ``mx.callback.BatchEndParam``.
BatchEndParam = namedtuple(  # type: ignore[name-match]  # (mxnet's class name)
    "BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"]
)


def _params_name(prefix: str, epoch: int) -> str:
    return "%s-%04d.params" % (prefix, epoch)  # noqa: UP031 (mxnet's formatting of the epoch)


def _checked(params: Any, what: str) -> dict[str, NDArray]:
    if not isinstance(params, dict) or any(
        not isinstance(k, str) or not isinstance(v, NDArray) for k, v in params.items()
    ):
        raise TypeError(f"mx.model.save_checkpoint: {what} must be a dict str -> NDArray")
    return params


def save_checkpoint(
    prefix: str,
    epoch: int,
    symbol: Symbol | None,
    arg_params: dict[str, NDArray],
    aux_params: dict[str, NDArray],
    remove_amp_cast: bool = True,
) -> None:
    """Write the checkpoint ``prefix-symbol.json`` (``symbol``'s JSON, unless ``symbol`` is None)
    and ``prefix-%04d.params`` (``epoch``): the arrays of ``arg_params`` named ``arg:NAME`` then
    those of ``aux_params`` named ``aux:NAME``, copied to the CPU, in mxnet 1.9.1's NDArray
    format, as mxnet's ``mx.model.save_checkpoint``. ``remove_amp_cast`` is passed to
    :meth:`~.symbol.Symbol.save` (the layer has no ``amp_cast`` operators to remove).

    Example::

        >>> import os, tempfile
        >>> import gradhub_compat.mxnet as mx
        >>> with tempfile.TemporaryDirectory() as d:
        ...     mx.model.save_checkpoint(os.path.join(d, "m"), 12, None, {"w": mx.nd.ones(2)}, {})
        ...     sorted(mx.nd.load(os.path.join(d, "m-0012.params")))
        ['arg:w']
    """
    save_dict = {
        f"arg:{k}": v.as_in_context(cpu()) for k, v in _checked(arg_params, "arg_params").items()
    }
    save_dict.update(
        {f"aux:{k}": v.as_in_context(cpu()) for k, v in _checked(aux_params, "aux_params").items()}
    )
    if symbol is not None:
        if not isinstance(symbol, Symbol):
            raise TypeError(
                "mx.model.save_checkpoint: symbol must be a Symbol or None, got "
                f"{type(symbol).__name__}"
            )
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    param_name = _params_name(prefix, epoch)
    ndarray_io.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix: str, epoch: int) -> tuple[dict[str, NDArray], dict[str, NDArray]]:
    """``(arg_params, aux_params)`` of the file ``prefix-%04d.params`` (``epoch``), as mxnet's
    ``mx.model.load_params``: entries named ``arg:NAME`` and ``aux:NAME`` go to the first and
    second dict as ``NAME``, other prefixes are skipped; an empty file gives two empty dicts
    (and logs a warning, as mxnet). A file without names or a name without ``:`` raises
    :class:`~.base.MXNetError` naming the file (mxnet fails on them with an AttributeError and a
    ValueError).

    Example::

        >>> import os, tempfile
        >>> import gradhub_compat.mxnet as mx
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = os.path.join(d, "m")
        ...     mx.model.save_checkpoint(p, 0, None, {"w": mx.nd.ones(2)}, {"m": mx.nd.zeros(1)})
        ...     arg, aux = mx.model.load_params(p, 0)
        >>> sorted(arg), sorted(aux)
        (['w'], ['m'])
    """
    param_name = _params_name(prefix, epoch)
    save_dict = ndarray_io.load(param_name)
    arg_params: dict[str, NDArray] = {}
    aux_params: dict[str, NDArray] = {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", param_name)
        return arg_params, aux_params
    if not isinstance(save_dict, dict):
        raise MXNetError(
            f"mx.model.load_params: file {param_name!r} holds {len(save_dict)} arrays without "
            "names; a checkpoint names them arg:NAME and aux:NAME"
        )
    for k, v in save_dict.items():
        if ":" not in k:
            raise _MXNetValueError(
                f"mx.model.load_params: file {param_name!r} has the array {k!r}, whose name is "
                "not arg:NAME or aux:NAME"
            )
        tp, name = k.split(":", 1)
        if tp == "arg":
            arg_params[name] = v
        if tp == "aux":
            aux_params[name] = v
    return arg_params, aux_params


def load_checkpoint(
    prefix: str, epoch: int
) -> tuple[Symbol, dict[str, NDArray], dict[str, NDArray]]:
    """``(symbol, arg_params, aux_params)`` of the checkpoint ``prefix`` at ``epoch``: the symbol
    of ``prefix-symbol.json`` (:func:`~.symbol.load`) and the arrays of ``prefix-%04d.params``
    (:func:`load_params`), as mxnet's ``mx.model.load_checkpoint``; see the module's example.
    A missing file raises :class:`~.base.MXNetError` (also a ``FileNotFoundError``) naming it.
    """
    fname = f"{prefix}-symbol.json"
    try:
        symbol = _load_symbol(fname)
    except FileNotFoundError:
        raise ndarray_io._MXNetFileNotFoundError(
            f"mx.model.load_checkpoint: cannot open {fname!r}: No such file or directory"
        ) from None
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params

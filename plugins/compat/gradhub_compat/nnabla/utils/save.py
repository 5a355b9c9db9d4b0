"""nnabla's ``nnabla.utils.save``: ``save(filename, contents, ...)`` writes networks as an NNP
file (nnabla's protobuf description of the networks, with their parameters) that nnabla 1.39's
``NnpLoader`` and ``nnabla.utils.load.load`` read, and so do
:mod:`gradhub_compat.nnabla.utils.nnp_graph` and :mod:`gradhub_compat.nnabla.utils.load`.

The formats are nnabla's: ``.nnp`` (a zip archive of ``nnp_version.txt``, ``network.nntxt`` and
``parameter.h5`` or, with ``parameter_format=".protobuf"``, ``parameter.protobuf``), ``.nntxt``/
``.prototxt`` (the text form; ``include_params=True`` adds the parameters) and ``.protobuf`` (the
binary form). Each network of ``contents["networks"]`` is the graph recorded from its
``outputs`` back to its leaves; its functions are written as nnabla's function types (see
docs/migration-nnabla.md, 'NNP files', for the functions written; another raises
``NotImplementedError`` and nothing is written).

Example::

    >>> import io, numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.functions as F
    >>> import gradhub_compat.nnabla.parametric_functions as PF
    >>> from gradhub_compat.nnabla.utils.save import save
    >>> from gradhub_compat.nnabla.utils.nnp_graph import NnpLoader
    >>> nn.clear_parameters()
    >>> x = nn.Variable((2, 3))
    >>> y = F.relu(PF.affine(x, 4, name="fc"))
    >>> contents = {"networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
    ...                           "names": {"x": x}}],
    ...             "executors": [{"name": "runtime", "network": "net",
    ...                            "data": ["x"], "output": ["y"]}]}
    >>> buf = io.BytesIO()
    >>> save(buf, contents, extension=".nnp")
    >>> x.d = np.arange(6).reshape(2, 3)
    >>> y.forward()
    >>> net = NnpLoader(buf, extension=".nnp").get_network("net", batch_size=2)
    >>> list(net.inputs), list(net.outputs)
    (['x'], ['y'])
    >>> net.inputs["x"].d = x.d
    >>> net.outputs["y"].forward()
    >>> bool(np.allclose(net.outputs["y"].d, y.d))
    True
    >>> nn.clear_parameters()
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from .._nnp_files import write_file
from .._nnp_network import DOCS, network_message
from .._nnp_proto import Message
from .._parameter_files import _h5_bytes, _protobuf_bytes, parameter_messages

__all__ = ["create_proto", "save"]

_WHERE = "nnabla.utils.save.save"


def _arrays(params: Mapping[str, Any]) -> list[tuple[str, np.ndarray, bool]]:
    out = []
    for k, v in params.items():
        if not isinstance(v, _NativeVariable):
            raise TypeError(f"{_WHERE}: parameters[{k!r}] must be a Variable, got {type(v)}")
        out.append((k, np.ascontiguousarray(v.device.to_numpy(v.d)), bool(v.need_grad)))
    return out


def _network_io(net: Message) -> tuple[list[str], list[str], list[str]]:
    """(inputs, outputs, parameters) of a Network message, as nnabla's ProtoNetwork."""
    produced = {o for f in net.function for o in f.output}
    consumed = {i for f in net.function for i in f.input}
    ins = [v.name for v in net.variable if v.type == "Buffer" and v.name not in produced]
    outs = [v.name for v in net.variable if v.name in produced and v.name not in consumed]
    params = [v.name for v in net.variable if v.type == "Parameter"]
    return ins, outs, params


def _executor(e: Mapping[str, Any], nets: dict[str, Message]) -> Message:
    for key in ("name", "network"):
        if key not in e:
            raise KeyError(f"{_WHERE}: an executor has no {key!r}")
    if e["network"] not in nets:
        raise ValueError(f"{_WHERE}: executor {e['name']!r}: no network {e['network']!r}")
    net = nets[e["network"]]
    ins, outs, params = _network_io(net)
    names = {v.name for v in net.variable}
    remap = e.get("remp", {})
    m = Message("Executor", name=e["name"], network_name=net.name)
    for key in ("no_image_normalization", "num_evaluations", "repeat_evaluation_type"):
        if e.get(key) is not None:
            setattr(m, key, e[key])
    if e.get("need_back_propagation") is not None:
        m.need_back_propagation = bool(e["need_back_propagation"])
    for field, default, key in (
        ("data_variable", ins, "data"),
        ("output_variable", outs, "output"),
    ):
        for vname in e.get(key, default):
            if vname not in names:
                raise ValueError(f"{vname} is not found in networks!")  # nnabla's message
            m.add(field, variable_name=vname, data_name=remap.get(vname, vname))
    for p in params:
        m.add("parameter_variable", variable_name=p)
    for vname in e.get("generator_variables", []):
        m.add("generator_variable", type="Constant", multiplier=0.0, variable_name=vname)
    return m


def create_proto(
    contents: Mapping[str, Any],
    include_params: bool = False,
    variable_batch_size: bool = True,
    save_solver_in_proto: bool = False,
) -> Message:
    """The ``NNablaProtoBuf`` message of ``contents`` (see :func:`save`), as nnabla's
    ``create_proto``: ``global_config``, ``training_config``, ``networks``, ``datasets`` and
    ``executors`` (``optimizers`` and ``monitors`` raise ``NotImplementedError``), with every
    parameter of the current scope when ``include_params``."""
    from .. import get_parameters

    if not isinstance(contents, Mapping):
        raise TypeError(f"{_WHERE}: contents must be a dict, got {type(contents).__name__}")
    for key in ("optimizers", "monitors"):
        if contents.get(key):
            raise NotImplementedError(
                f"{_WHERE}: contents[{key!r}] (nnabla's training configuration with solvers) "
                f"is not supported; save the networks and executors ({DOCS})"
            )
    if save_solver_in_proto:
        raise NotImplementedError(f"{_WHERE}: include_solver_state is not supported ({DOCS})")
    proto = Message("NNablaProtoBuf")
    if "global_config" in contents:
        ctx = contents["global_config"]["default_context"]
        c = proto.global_config.default_context
        backend = getattr(ctx, "backend", ["cpu:float"])
        c.backends = [backend] if isinstance(backend, str) else list(backend)
        c.array_class = str(getattr(ctx, "array_class", "") or "")
        c.device_id = str(getattr(ctx, "device_id", "") or "")
    if "training_config" in contents:
        t = contents["training_config"]
        proto.training_config.max_epoch = int(t["max_epoch"])
        proto.training_config.iter_per_epoch = int(t["iter_per_epoch"])
        proto.training_config.save_best = bool(t["save_best"])
    params = get_parameters(grad_only=False)
    nets: dict[str, Message] = {}
    for n in contents.get("networks", []):
        for key in ("name", "batch_size", "outputs"):
            if key not in n:
                raise KeyError(f"{_WHERE}: a network has no {key!r}")
        m, _ = network_message(
            n["name"],
            n["batch_size"],
            n["outputs"],
            n.get("names", {}),
            params,
            variable_batch_size,
        )
        nets[m.name] = m
        proto.network.append(m)
    for d in contents.get("datasets", []):
        m = proto.add(
            "dataset",
            name=d["name"],
            uri=d["uri"],
            shuffle=bool(d["shuffle"]),
            batch_size=int(d["batch_size"]),
            no_image_normalization=bool(d["no_image_normalization"]),
        )
        if d.get("cache_dir") is not None:
            m.cache_dir = d["cache_dir"]
        m.variable = list(d["variables"])
    for e in contents.get("executors", []):
        proto.executor.append(_executor(e, nets))
    if include_params:
        parameter_messages(proto, _arrays(params))
    return proto


def save(
    filename: Any,
    contents: Any,
    include_params: bool = False,
    variable_batch_size: bool = True,
    extension: str = ".nnp",
    parameters: Any = None,
    parameter_format: str = ".h5",
    include_solver_state: bool = False,
    solver_state_format: str = ".h5",
) -> None:
    """Save networks (and their executors) as an NNP file, as nnabla 1.39's ``save``.

    ``filename``: a file name whose extension picks the format (``.nnp``, ``.nntxt``/
    ``.prototxt``, ``.protobuf``), or a file object written in ``extension``'s format (binary
    for ``.nnp``/``.protobuf``; rewound afterwards). ``contents``: a dict with ``networks`` (a
    list of ``{"name", "batch_size", "outputs": {name: Variable}, "names": {name: Variable}}``)
    and optionally ``executors`` (``{"name", "network", "data", "output", ...}``),
    ``global_config``, ``training_config`` and ``datasets``. ``include_params`` adds every
    parameter of the current scope to a ``.nntxt``/``.protobuf`` file (an ``.nnp`` always holds
    its parameter file: ``parameters``, a dict name -> Variable, or every parameter of the
    current scope, as ``parameter_format`` ``.h5`` or ``.protobuf``). ``variable_batch_size``:
    the batch dimension is written as ``-1``. ``include_solver_state`` is not supported.
    """
    ext = extension
    if isinstance(filename, (str, os.PathLike)):
        ext = os.path.splitext(os.fspath(filename))[1] or extension
    if ext not in (".nnp", ".nntxt", ".prototxt", ".protobuf"):
        raise ValueError(
            f"{_WHERE}: {filename!r}: extension {ext!r} is not supported (.nnp, .nntxt, "
            ".prototxt, .protobuf)"
        )
    if include_solver_state:
        raise NotImplementedError(f"{_WHERE}: include_solver_state is not supported ({DOCS})")
    if parameter_format not in (".h5", ".protobuf"):
        raise ValueError(
            f"{_WHERE}: parameter_format must be '.h5' or '.protobuf', got {parameter_format!r}"
        )
    proto = create_proto(contents, include_params and ext != ".nnp", variable_batch_size)
    param_file = None
    if ext == ".nnp":
        from .. import get_parameters

        params = get_parameters(grad_only=False) if parameters is None else parameters
        if not isinstance(params, Mapping):
            raise TypeError(f"{_WHERE}: parameters must be a dict name -> Variable")
        arrays = _arrays(params)
        if parameter_format == ".h5":
            param_file = (_h5_bytes(_WHERE, "parameter.h5", arrays), ".h5")
        else:
            param_file = (_protobuf_bytes(arrays), ".protobuf")
    write_file(_WHERE, filename, ext, proto, param_file)

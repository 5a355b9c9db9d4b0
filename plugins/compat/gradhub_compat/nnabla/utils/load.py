"""nnabla's ``nnabla.utils.load``: ``load(filenames, ...)`` reads NNP files (``.nnp``,
``.nntxt``/``.prototxt``, ``.protobuf``, parameter ``.h5``) and returns nnabla's info object
with the networks built as graphs and the executors linked to them, as far as inference needs.

``info.networks[name]``: the network (``name``, ``batch_size``, ``variables``: name -> an entry
whose ``variable_instance`` is the Variable, as nnabla's; ``inputs``/``outputs``: name ->
Variable). ``info.executors[name]``: ``network``, ``dataset_assign`` (entry -> data name),
``output_assign`` (entry -> ``[type, data_name]``), ``parameters`` (Variable -> name),
``forward_target`` (``F.sink`` of the outputs), ``num_evaluations``,
``repeat_evaluation_type``, ``need_back_propagation``, ``no_image_normalization``, ``proto``.
``info.parameters``: name -> parameter Variable (also registered in the current parameter
scope, as nnabla's). ``info.proto``: the merged ``NNablaProtoBuf``. The training parts of
nnabla's info (``optimizers``, ``monitors``, ``datasets`` with data iterators,
``training_config``) are not built: ``prepare_data_iterator`` is ignored.

Example::

    >>> import io, numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.functions as F
    >>> from gradhub_compat.nnabla.utils.save import save
    >>> from gradhub_compat.nnabla.utils.load import load
    >>> x = nn.Variable((2, 2))
    >>> y = F.tanh(x * 2)
    >>> buf = io.BytesIO()
    >>> save(buf, {"networks": [{"name": "n", "batch_size": 2, "outputs": {"y": y},
    ...                          "names": {"x": x}}],
    ...            "executors": [{"name": "run", "network": "n"}]}, extension=".nnp")
    >>> info = load(buf, extension=".nnp")
    >>> e = info.executors["run"]
    >>> for v, data_name in e.dataset_assign.items():
    ...     v.variable_instance.d = np.zeros((2, 2))
    >>> e.forward_target.forward()
    >>> [v.variable_instance.d.tolist() for v in e.output_assign]
    [[[0.0, 0.0], [0.0, 0.0]]]
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .._nnp_files import read_files
from .._nnp_network import DOCS, build_network

__all__ = ["load"]


class _Entry:
    """A Variable of a loaded network, as nnabla's: ``name``, ``variable_instance``."""

    __slots__ = ("name", "variable_instance")

    def __init__(self, name: str, v: Any) -> None:
        self.name = name
        self.variable_instance = v

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.variable_instance.shape)

    def __repr__(self) -> str:
        return f"<nnabla network variable {self.name!r}>"


class _Network:
    def __init__(self, net: Any) -> None:
        self.name = net.name
        self.batch_size = net.batch_size
        self.inputs = net.inputs
        self.outputs = net.outputs
        self.variables: OrderedDict[str, _Entry] = OrderedDict(
            (k, _Entry(k, v)) for k, v in net.variables.items()
        )


class _Executor:
    pass


class Info:
    """What :func:`load` returns: ``networks``, ``executors``, ``parameters``, ``proto``."""

    networks: OrderedDict[str, _Network]
    executors: OrderedDict[str, _Executor]
    parameters: OrderedDict[str, Any]


def load(
    filenames: Any,
    prepare_data_iterator: bool = True,
    batch_size: int | None = None,
    exclude_parameter: bool = False,
    parameter_only: bool = False,
    extension: str = ".nntxt",
    context: Any = None,
) -> Info:
    """Load networks and executors from NNP files, as nnabla 1.39's ``load`` (see the module).

    ``filenames``: a file name, a file object (read as ``extension``) or a list of them (their
    messages merged, parameters from all). ``batch_size``: for the ``-1`` dimensions (default:
    each network's). ``exclude_parameter``: the parameters come from the current scope instead
    (by name). ``parameter_only``: only the parameters are loaded (into the current scope).
    ``context`` is accepted and ignored (gradhub runs on the current device).
    """
    from .. import functions as F
    from .. import get_parameters
    from .._variable import Variable
    from ..parameter import set_parameter

    where = "nnabla.utils.load.load"
    proto, params = read_files(where, filenames, extension)
    info = Info()
    info.proto = proto  # type: ignore[attr-defined]
    info.batch_size = batch_size  # type: ignore[attr-defined]
    info.parameters = OrderedDict()
    if exclude_parameter:
        info.parameters.update(get_parameters(grad_only=False))
    else:
        for name, a, need_grad in params:
            v = Variable.from_numpy_array(a, need_grad=need_grad)
            v.name = name
            info.parameters[name] = v
            set_parameter(name, v)
    info.networks = OrderedDict()
    info.executors = OrderedDict()
    if parameter_only:
        return info
    source = repr(getattr(filenames, "name", filenames))
    for net in proto.network:
        info.networks[net.name] = _Network(build_network(net, info.parameters, batch_size, source))
    for e in proto.executor:
        if e.network_name not in info.networks:
            raise ValueError(f"{where}: executor {e.name!r}: no network {e.network_name!r}")
        if e.generator_variable:
            raise NotImplementedError(
                f"{where}: executor {e.name!r}: generator variables are not supported ({DOCS})"
            )
        ex = _Executor()
        ex.name = e.name  # type: ignore[attr-defined]
        ex.proto = e  # type: ignore[attr-defined]
        ex.num_evaluations = e.num_evaluations if e.num_evaluations > 0 else 1  # type: ignore[attr-defined]
        ex.repeat_evaluation_type = e.repeat_evaluation_type  # type: ignore[attr-defined]
        ex.need_back_propagation = e.need_back_propagation  # type: ignore[attr-defined]
        ex.no_image_normalization = e.no_image_normalization  # type: ignore[attr-defined]
        network = info.networks[e.network_name]
        ex.network = network  # type: ignore[attr-defined]

        def entry(name: str, what: str, net: _Network = network, ename: str = e.name) -> _Entry:
            if name not in net.variables:
                raise ValueError(
                    f"{where}: executor {ename!r}: {what} {name!r} is not a variable of network "
                    f"{net.name!r}"
                )
            return net.variables[name]

        ex.dataset_assign = OrderedDict(  # type: ignore[attr-defined]
            (entry(d.variable_name, "data variable"), d.data_name) for d in e.data_variable
        )
        ex.generator_assign = OrderedDict()  # type: ignore[attr-defined]
        ex.output_assign = OrderedDict(  # type: ignore[attr-defined]
            (entry(o.variable_name, "output variable"), [o.type, o.data_name])
            for o in e.output_variable
        )
        ex.parameters = OrderedDict(  # type: ignore[attr-defined]
            (network.variables[p.variable_name], p.variable_name)
            for p in e.parameter_variable
            if p.variable_name in network.variables
        )
        outs = [v.variable_instance for v in ex.output_assign]  # type: ignore[attr-defined]
        ex.forward_target = F.sink(*outs) if outs else None  # type: ignore[attr-defined]
        info.executors[e.name] = ex
    return info

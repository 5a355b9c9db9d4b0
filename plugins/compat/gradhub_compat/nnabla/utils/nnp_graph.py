"""nnabla's ``nnabla.utils.nnp_graph``: :class:`NnpLoader` reads an NNP file (``.nnp``,
``.nntxt``/``.prototxt``, ``.protobuf``; written by nnabla or by
:func:`gradhub_compat.nnabla.utils.save.save`) and builds its networks as graphs of registered
gradhub functions.

Example::

    >>> import io, numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.parametric_functions as PF
    >>> from gradhub_compat.nnabla.utils.save import save
    >>> from gradhub_compat.nnabla.utils.nnp_graph import NnpLoader
    >>> nn.clear_parameters()
    >>> x = nn.Variable((1, 2))
    >>> y = PF.affine(x, 1, name="fc", w_init=np.ones((2, 1)), b_init=np.zeros(1))
    >>> buf = io.BytesIO()
    >>> save(buf, {"networks": [{"name": "net", "batch_size": 1, "outputs": {"y": y},
    ...                          "names": {"x": x}}]}, extension=".nnp")
    >>> nnp = NnpLoader(buf, extension=".nnp")
    >>> nnp.get_network_names()
    ['net']
    >>> net = nnp.get_network("net", batch_size=3)
    >>> net.inputs["x"].d = [[1, 2], [3, 4], [5, 6]]
    >>> net.outputs["y"].forward()
    >>> net.outputs["y"].d.ravel().tolist()
    [3.0, 7.0, 11.0]
    >>> nn.clear_parameters()
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .._nnp_files import read_files
from .._nnp_network import NnpNetwork, build_network

__all__ = ["NnpLoader", "NnpNetwork"]


class NnpLoader:
    """An NNP file loader, as nnabla's ``NnpLoader(filepath, scope=None, extension=".nntxt")``.

    ``filepath``: a file name or a file object (read as ``extension``: ``.nnp``, ``.nntxt``,
    ``.prototxt`` or ``.protobuf``). The parameters of the file become Variables held in
    ``scope`` (an OrderedDict given by the caller, else a new one), shared by every network
    :meth:`get_network` builds; ``get_network`` also registers them in the current parameter
    scope, as nnabla. Reading parses protobuf and HDF5 only: nothing is unpickled or executed;
    a malformed file raises ``ValueError`` (:class:`gradhub.StateFileError`) naming it.
    """

    def __init__(self, filepath: Any, scope: Any = None, extension: str = ".nntxt") -> None:
        from .._variable import Variable

        where = "nnabla.utils.nnp_graph.NnpLoader"
        proto, params = read_files(where, filepath, extension)
        self._source = repr(getattr(filepath, "name", filepath))
        self._params: OrderedDict[str, Any] = scope if scope is not None else OrderedDict()
        for name, a, need_grad in params:
            v = Variable.from_numpy_array(a, need_grad=need_grad)
            v.name = name
            self._params[name] = v
        self.proto = proto
        self.network_dict = OrderedDict((n.name, n) for n in proto.network)

    def get_network_names(self) -> list[str]:
        """The names of the networks of the file."""
        return list(self.network_dict.keys())

    def get_network(self, name: str, batch_size: int | None = None, callback: Any = None) -> Any:
        """Build the network ``name`` (an :class:`NnpNetwork`: ``inputs``, ``outputs``,
        ``variables``) with ``batch_size`` for its ``-1`` dimensions (default: the batch size
        in the file). ``callback`` (nnabla's ``NnpNetworkPass``) is not supported."""
        from ..parameter import set_parameter

        if callback is not None:
            raise NotImplementedError(
                "nnabla NnpLoader.get_network: callback (NnpNetworkPass) is not supported (see "
                "docs/migration-nnabla.md, 'NNP files')"
            )
        if name not in self.network_dict:
            raise KeyError(
                f"nnabla NnpLoader.get_network: no network {name!r} in {self._source} "
                f"(networks: {self.get_network_names()})"
            )
        net = build_network(self.network_dict[name], self._params, batch_size, self._source)
        for k in net.variables:
            if k in self._params:
                set_parameter(k, self._params[k])
        return net

"""nnabla's ``nnabla.utils.save``: ``save(filename, contents, ...)`` writes a network as an NNP
file (nnabla's protobuf network description with its parameters).

The layer has no writer for nnabla's NNP format (``.nnp``, ``.nntxt``, ``.prototxt``,
``.protobuf``): :func:`save` raises ``NotImplementedError`` (see docs/migration-nnabla.md,
'Monitors and data iterators'). Save the parameters with ``nn.save_parameters`` (an ``.h5``
file nnabla reads) and the solver states with ``solver.save_states``.

Example::

    >>> import gradhub_compat.nnabla.utils.save as save
    >>> try:
    ...     save.save("net.nnp", {"networks": []})
    ... except NotImplementedError as e:
    ...     print(str(e).split(";")[0])
    nnabla.utils.save.save: NNP files (nnabla's network format) are not supported
"""

from __future__ import annotations

from typing import Any

__all__ = ["save"]


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
    """nnabla 1.39's signature; always raises ``NotImplementedError``: the layer does not write
    nnabla's NNP network files. Nothing is written."""
    raise NotImplementedError(
        "nnabla.utils.save.save: NNP files (nnabla's network format) are not supported; save "
        "the parameters with nn.save_parameters (see docs/migration-nnabla.md, 'Monitors and "
        "data iterators')"
    )

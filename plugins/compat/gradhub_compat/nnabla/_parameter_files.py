"""nnabla's parameter files: ``nn.save_parameters(path)`` / ``nn.load_parameters(path)``.

The formats are nnabla 1.39's (``nnabla/utils/get_file_handle.py``):

* ``.h5`` (``_h5_parameter_file_saver`` and ``_h5_parameter_file_loader``): one HDF5 dataset per
  parameter, at the parameter's name relative to the current scope (``fc1/affine/W``: the ``/``
  make HDF5 groups), holding the data in its own dtype, with two attributes: ``need_grad`` (a
  bool) and ``index`` (an int64, the parameter's position, so the order survives HDF5's sorted
  groups). Loading visits every dataset and reads them in ``(index, name)`` order. Reading needs
  h5py: ``pip install "gradhub-compat[h5]"``.
* ``.protobuf``: an ``NNablaProtoBuf`` message (binary protobuf) whose ``parameter`` entries
  hold ``variable_name``, ``shape``, ``data`` (float32 values, flattened) and ``need_grad``.
* ``.nntxt``/``.prototxt`` (read only, as nnabla): the same message in protobuf's text format;
  its ``parameter`` entries are read (a network description in it is ignored).
* ``.nnp`` (read only, as nnabla): the zip archive of ``nnabla.utils.save.save``; every
  ``.nntxt``/``.prototxt``, ``.protobuf`` and ``.h5`` member is read in the archive's order.

Nothing is unpickled or executed: only numeric datasets and protobuf messages are read (see
:mod:`._nnp_proto`).
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gradhub import parameters as _parameters
from gradhub.errors import StateFileError
from gradhub.state import atomic_write
from gradhub.variable import Variable as _NativeVariable

from ._nnp_proto import Message, decode, encode, parse_text

#: the extensions ``save_parameters`` writes and ``load_parameters`` reads (as nnabla 1.39)
_SAVED = (".h5", ".protobuf")
_LOADED = (".h5", ".protobuf", ".nntxt", ".prototxt", ".nnp")


def _h5py(where: str) -> Any:
    try:
        import h5py
    except ImportError:
        raise ImportError(
            f"{where}: nnabla's .h5 parameter files need h5py, an extra of gradhub-compat: "
            'pip install "gradhub-compat[h5]"'
        ) from None
    return h5py


def _target(where: str, path: Any, extension: str | None) -> tuple[str, str, str | None]:
    """(name for messages, extension, the file name or None for a file object)."""
    if isinstance(path, (str, os.PathLike)):
        p = os.fspath(path)
        return repr(p), os.path.splitext(p)[1], p
    if not (hasattr(path, "read") or hasattr(path, "write")):
        raise TypeError(f"{where}: path must be a file name or a file object, got {type(path)}")
    return repr(getattr(path, "name", path)), str(extension), None


def _check_ext(where: str, name: str, ext: str, allowed: tuple[str, ...]) -> None:
    if ext not in allowed:
        raise ValueError(
            f"{where}: {name}: extension {ext!r} is not supported; nnabla's parameter files are "
            f"{', '.join(allowed)} here (for a file object pass extension=, e.g. '.h5')"
        )


def save_parameters(
    path: Any, params: Mapping[str, Any] | None = None, extension: Any = None
) -> None:
    """Save parameters to an nnabla ``.h5`` or ``.protobuf`` file that nnabla 1.39 reads, as
    nnabla's.

    ``params``: a mapping name -> Variable; by default every parameter of the current scope
    (``nn.get_parameters(grad_only=False)``), named relative to it. In ``.h5`` each becomes the
    dataset ``name`` with attributes ``need_grad`` (bool) and ``index`` (its position); in
    ``.protobuf`` a ``parameter`` entry (name, shape, the values as float32, need_grad).
    ``path``: a file name ending in ``.h5`` or ``.protobuf`` (written atomically: a temporary
    file in the same folder, then renamed) or a binary file object with ``extension=".h5"`` or
    ``".protobuf"``. Other extensions (``.nntxt``, ``.nnp``: nnabla writes neither here) raise
    ``ValueError``.

    Example::

        >>> import os, tempfile, numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> from gradhub_compat.nnabla.parameter import get_parameter_or_create
        >>> nn.clear_parameters()
        >>> with nn.parameter_scope("fc"):
        ...     w = get_parameter_or_create("W", (2,), np.array([1.0, 2.0]))
        >>> path = os.path.join(tempfile.mkdtemp(), "params.h5")
        >>> nn.save_parameters(path)
        >>> w.d[...] = 0.0
        >>> nn.load_parameters(path)
        >>> w.d
        array([1., 2.], dtype=float32)
        >>> nn.clear_parameters()
    """
    where = "nnabla save_parameters"
    name, ext, file_name = _target(where, path, extension)
    _check_ext(where, name, ext, _SAVED)
    if params is None:
        from . import get_parameters

        params = get_parameters(grad_only=False)
    elif not isinstance(params, Mapping):
        raise TypeError(
            f"{where}: params must be a dict name -> Variable, got {type(params).__name__}"
        )
    arrays: list[tuple[str, np.ndarray, bool]] = []
    for key, v in params.items():
        if not isinstance(key, str) or not key.strip("/"):
            raise TypeError(f"{where}: parameter names must be non-empty strings, got {key!r}")
        if not isinstance(v, _NativeVariable):
            raise TypeError(f"{where}: params[{key!r}] must be a Variable, got {type(v).__name__}")
        arrays.append((key, np.ascontiguousarray(v.device.to_numpy(v.d)), bool(v.need_grad)))
    data = _h5_bytes(where, name, arrays) if ext == ".h5" else _protobuf_bytes(arrays)
    if file_name is not None:
        atomic_write(file_name, data)
    else:
        path.write(data)
        if hasattr(path, "seek"):
            path.seek(0)  # as nnabla's file handler


def _h5_bytes(where: str, name: str, arrays: list[tuple[str, np.ndarray, bool]]) -> bytes:
    """The arrays as an nnabla ``.h5`` parameter file."""
    h5py = _h5py(where)
    buf = io.BytesIO()
    with h5py.File(buf, "w") as hd:
        for i, (key, a, ng) in enumerate(arrays):
            try:
                hd[key] = a
            except (ValueError, TypeError, OSError) as e:  # "a" and "a/b" both, or a bad dtype
                raise ValueError(f"{where}: {name}: cannot store parameter {key!r}: {e}") from e
            hd[key].attrs["need_grad"] = ng
            hd[key].attrs["index"] = i
    return buf.getvalue()


def parameter_messages(proto: Message, arrays: list[tuple[str, np.ndarray, bool]]) -> None:
    """Append the arrays to ``proto.parameter`` (an ``NNablaProtoBuf``) as nnabla writes them:
    name, shape, the values flattened as float32, need_grad."""
    for key, a, ng in arrays:
        p = proto.add("parameter", variable_name=key, need_grad=ng)
        p.shape.dim = [int(d) for d in a.shape]
        p.data = np.asarray(a, dtype=np.float32).ravel().tolist()


def _protobuf_bytes(arrays: list[tuple[str, np.ndarray, bool]]) -> bytes:
    """The arrays as an nnabla ``.protobuf`` parameter file."""
    proto = Message("NNablaProtoBuf")
    parameter_messages(proto, arrays)
    return encode(proto)


def proto_parameters(where: str, name: str, proto: Message) -> list[tuple[str, np.ndarray, bool]]:
    """The ``parameter`` entries of an ``NNablaProtoBuf`` as (name, float32 array, need_grad)."""
    out = []
    for p in proto.parameter:
        shape = tuple(int(d) for d in p.shape.dim)
        if any(d < 0 for d in shape) or int(np.prod(shape)) != len(p.data):
            raise StateFileError(
                f"{where}: {name}: parameter {p.variable_name!r} has shape {shape} but "
                f"{len(p.data)} values"
            )
        if not p.variable_name.strip("/"):
            raise StateFileError(f"{where}: {name}: a parameter has no name")
        a = np.asarray(p.data, dtype=np.float32).reshape(shape)
        out.append((p.variable_name, a, bool(p.need_grad)))
    return out


def _read_protobuf(where: str, name: str, raw: bytes) -> list[tuple[str, np.ndarray, bool]]:
    try:
        proto = decode("NNablaProtoBuf", raw, name)
    except ValueError as e:
        raise StateFileError(f"{where}: {e}") from None
    return proto_parameters(where, name, proto)


def _read_nntxt(where: str, name: str, raw: bytes) -> list[tuple[str, np.ndarray, bool]]:
    try:
        proto = parse_text("NNablaProtoBuf", raw, name)
    except ValueError as e:
        raise StateFileError(f"{where}: {e}") from None
    return proto_parameters(where, name, proto)


def open_nnp(where: str, name: str, raw: bytes) -> zipfile.ZipFile:
    """The zip archive of an ``.nnp`` file; a :class:`StateFileError` when it is not one."""
    try:
        return zipfile.ZipFile(io.BytesIO(raw), "r")
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise StateFileError(f"{where}: {name} is not an .nnp file (a zip archive): {e}") from e


def read_member(where: str, name: str, z: zipfile.ZipFile, member: str) -> bytes:
    """The bytes of ``member`` of the ``.nnp`` archive ``z``."""
    try:
        return z.read(member)
    except (zipfile.BadZipFile, OSError, ValueError, KeyError, EOFError) as e:
        raise StateFileError(f"{where}: {name}: cannot read {member!r}: {e}") from e


def _read_nnp(where: str, name: str, raw: bytes) -> list[tuple[str, np.ndarray, bool]]:
    out: list[tuple[str, np.ndarray, bool]] = []
    with open_nnp(where, name, raw) as z:
        for member in z.namelist():
            ext = os.path.splitext(member)[1]
            if ext not in (".nntxt", ".prototxt", ".protobuf", ".h5"):
                continue
            inner = f"{name}:{member}"
            out += _READERS[ext](where, inner, read_member(where, name, z, member))
    return out


def _open_h5(h5py: Any, where: str, name: str, raw: bytes) -> Any:
    """The HDF5 file of the bytes ``raw`` (named ``name`` in the errors), opened for reading;
    a :class:`StateFileError` when it is not one."""
    try:
        return h5py.File(io.BytesIO(raw), "r")
    except Exception as e:  # not HDF5, truncated
        raise StateFileError(
            f"{where}: {name} is not a readable HDF5 file (truncated or corrupted?): "
            f"{type(e).__name__}: {e}"
        ) from e


def _read(where: str, name: str, raw: bytes) -> list[tuple[str, np.ndarray, bool]]:
    """The datasets of an nnabla ``.h5`` file as (name, array, need_grad), in nnabla's order."""
    h5py = _h5py(where)
    hd = _open_h5(h5py, where, name, raw)
    out: list[tuple[Any, str, np.ndarray, bool]] = []
    try:
        found: list[tuple[str, Any]] = []
        hd.visititems(
            lambda key, obj: found.append((key, obj)) if isinstance(obj, h5py.Dataset) else None
        )
        for key, ds in found:
            if ds.dtype.kind not in "fiub":
                raise StateFileError(
                    f"{where}: {name}: dataset {key!r} has dtype {ds.dtype}; only "
                    "floating-point, integer and bool parameters are read"
                )
            if "need_grad" not in ds.attrs:
                raise StateFileError(
                    f"{where}: {name}: dataset {key!r} has no need_grad attribute (not an nnabla "
                    "parameter file?)"
                )
            ng = ds.attrs["need_grad"]
            index = ds.attrs.get("index", None)
            if not isinstance(ng, (bool, np.bool_)) or (
                index is not None and not isinstance(index, (int, np.integer))
            ):
                raise StateFileError(
                    f"{where}: {name}: dataset {key!r} has need_grad={ng!r}, index={index!r} "
                    "(expected a bool and an integer)"
                )
            out.append((index, key, np.array(ds[()]), bool(ng)))
    except StateFileError:
        raise
    except Exception as e:
        raise StateFileError(
            f"{where}: {name}: cannot read its datasets (corrupted?): {type(e).__name__}: {e}"
        ) from e
    finally:
        hd.close()
    out.sort(key=lambda t: (t[0] is None, 0 if t[0] is None else int(t[0]), t[1]))
    return [(key, a, ng) for _, key, a, ng in out]


_READERS: dict[str, Callable[[str, str, bytes], list[tuple[str, np.ndarray, bool]]]] = {
    ".h5": _read,
    ".protobuf": _read_protobuf,
    ".nntxt": _read_nntxt,
    ".prototxt": _read_nntxt,
    ".nnp": _read_nnp,
}


def load_parameters(
    path: Any, proto: Any = None, needs_proto: bool = False, extension: str = ".nntxt"
) -> None:
    """Load the parameters of an nnabla parameter file (written by nnabla or by
    :func:`save_parameters`) into the current scope, as nnabla's: ``.h5``, ``.protobuf``, the
    ``parameter`` entries of a ``.nntxt``/``.prototxt`` file, or every parameter file inside an
    ``.nnp`` archive.

    Each stored parameter ``name`` becomes (or overwrites) the parameter ``name`` under the current
    scope, with its ``need_grad`` attribute, in ``index`` order. A new parameter gets the stored
    dtype; an existing one keeps its Variable and dtype and takes the values converted to it
    (floating to floating, integer to integer; nnabla instead casts its array to the stored
    dtype). A stored shape that differs from an existing parameter's raises naming it (never
    a broadcast). Every check runs before anything changes. ``path``: a file name, or a file
    object with ``extension=`` (nnabla's default for file objects: ``".nntxt"``; a text file
    object is read too). ``proto``/``needs_proto`` (nnabla's protobuf) are not
    supported. Nothing is unpickled or executed; an unreadable file raises
    :class:`gradhub.StateFileError` naming it. Returns None (nnabla returns its protobuf).
    """
    where = "nnabla load_parameters"
    if proto is not None or needs_proto:
        raise NotImplementedError(
            f"{where}: proto and needs_proto (nnabla's protobuf) are not supported"
        )
    name, ext, file_name = _target(where, path, extension)
    _check_ext(where, name, ext, _LOADED)
    if file_name is not None:
        with open(file_name, "rb") as f:  # a missing file: FileNotFoundError naming it
            raw = f.read()
    else:
        raw = path.read()
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
    entries = _READERS[ext](where, name, raw)
    table = _parameters.parameter_table()
    plan: list[tuple[str, np.ndarray, bool]] = []
    for key, a, ng in entries:
        full = _parameters.full_name("/".join(n for n in key.split("/") if n))
        p = table.get(full)
        if p is not None:
            if p.shape != tuple(a.shape):
                raise ValueError(
                    f"{where}: parameter {full!r} has shape {p.shape}, {name} stores shape "
                    f"{tuple(a.shape)} for it"
                )
            if (p.dtype.kind == "f") != (a.dtype.kind == "f"):
                raise TypeError(
                    f"{where}: parameter {full!r} has dtype {p.dtype}, {name} stores {a.dtype} "
                    "for it (only conversions within floating or within integer types are made)"
                )
        if ng and a.dtype.kind != "f":
            raise StateFileError(
                f"{where}: {name}: parameter {key!r} holds {a.dtype} data but is marked "
                "need_grad=True"
            )
        plan.append((full, a, ng))
    for full, a, ng in plan:
        p = table.get(full)
        if p is None:
            v = _NativeVariable(a, need_grad=ng)
            v.name = full
            table[full] = v
            continue
        dev = p.device
        with dev.activate():
            p.d[...] = dev.asarray(a, dtype=p.dtype)
            p.d = p.d  # a new array object: graphs recorded before see a replaced leaf
        p.need_grad = ng

"""Reading and writing nnabla's NNP files (``.nnp``, ``.nntxt``/``.prototxt``, ``.protobuf``):
the files of ``nnabla.utils.save.save``, ``nnabla.utils.nnp_graph.NnpLoader`` and
``nnabla.utils.load.load``, as nnabla 1.39's ``nnabla/utils/get_file_handle.py``.

An ``.nnp`` is a zip archive of ``nnp_version.txt`` (``0.1``), ``network.nntxt`` (the
``NNablaProtoBuf`` in text form, without parameters) and ``parameter.h5`` or
``parameter.protobuf``. Reading merges every ``.nntxt``/``.prototxt``/``.protobuf`` file (and
member) into one ``NNablaProtoBuf`` as protobuf's ``MergeFrom`` (repeated fields appended) and
collects the parameters of all of them and of ``.h5`` files. Nothing is unpickled or executed.
"""

from __future__ import annotations

import io
import os
import zipfile
from typing import Any

import numpy as np
from gradhub.errors import StateFileError

from ._nnp_proto import Message, decode, encode, parse_text, to_text
from ._parameter_files import _read as read_h5
from ._parameter_files import open_nnp, proto_parameters, read_member

NNP_VERSION = "0.1"

Params = list[tuple[str, np.ndarray, bool]]


def merge(dst: Message, src: Message) -> None:
    """Merge ``src`` into ``dst`` as protobuf's ``MergeFrom``: repeated fields are appended,
    set scalars overwrite, set messages merge."""
    for f, v in src.set_fields():
        if f.repeated:
            getattr(dst, f.name).extend(v)
        elif f.is_message:
            merge(getattr(dst, f.name), v)
        else:
            setattr(dst, f.name, v)


def _raw(where: str, path: Any) -> tuple[str, bytes]:
    if isinstance(path, (str, os.PathLike)):
        with open(os.fspath(path), "rb") as f:  # a missing file: FileNotFoundError naming it
            return repr(os.fspath(path)), f.read()
    if not hasattr(path, "read"):
        raise TypeError(f"{where}: expected a file name or a file object, got {type(path)}")
    raw = path.read()
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    return repr(getattr(path, "name", path)), raw


def _one(where: str, name: str, ext: str, raw: bytes, proto: Message, params: Params) -> bool:
    """Read one file (or archive member) of extension ``ext``; False for another extension."""
    if ext in (".nntxt", ".prototxt"):
        try:
            m = parse_text("NNablaProtoBuf", raw, name)
        except ValueError as e:
            raise StateFileError(f"{where}: {e}") from None
    elif ext == ".protobuf":
        try:
            m = decode("NNablaProtoBuf", raw, name)
        except ValueError as e:
            raise StateFileError(f"{where}: {e}") from None
    elif ext == ".h5":
        params += read_h5(where, name, raw)
        return True
    elif ext == ".nnp":
        with open_nnp(where, name, raw) as z:
            for member in z.namelist():
                mext = os.path.splitext(member)[1]
                if mext in (".nntxt", ".prototxt", ".protobuf", ".h5"):
                    data = read_member(where, name, z, member)
                    _one(where, f"{name}:{member}", mext, data, proto, params)
        return True
    else:
        return False
    params += proto_parameters(where, name, m)
    merge(proto, m)
    return True


def read_files(where: str, filenames: Any, extension: str) -> tuple[Message, Params]:
    """The merged ``NNablaProtoBuf`` (without its parameters' values) and the parameters of
    ``filenames`` (a file name, a file object read as ``extension``, or a list of them)."""
    if isinstance(filenames, (list, tuple)):
        files = list(filenames)
    else:
        files = [filenames]
    proto = Message("NNablaProtoBuf")
    params: Params = []
    for path in files:
        if isinstance(path, (str, os.PathLike)):
            ext = os.path.splitext(os.fspath(path))[1]
        else:
            ext = extension
        if ext not in (".nnp", ".nntxt", ".prototxt", ".protobuf", ".h5"):
            raise ValueError(
                f"{where}: {path!r}: extension {ext!r} is not supported (.nnp, .nntxt, "
                ".prototxt, .protobuf, .h5; for a file object pass extension=)"
            )
        name, raw = _raw(where, path)
        _one(where, name, ext, raw, proto, params)
    proto.parameter = []
    return proto, params


def write_file(
    where: str, filename: Any, ext: str, proto: Message, param_file: tuple[bytes, str] | None
) -> None:
    """Write ``proto`` as ``ext`` (``.nnp`` with ``param_file``, the bytes of
    ``parameter.h5``/``parameter.protobuf``; ``.nntxt``/``.prototxt``; ``.protobuf``) to
    ``filename`` (a name, or a file object: rewound after writing, as nnabla's)."""
    from gradhub.state import atomic_write

    if ext == ".nnp":
        assert param_file is not None
        buf = io.BytesIO()
        pf = param_file[1]
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("nnp_version.txt", f"{NNP_VERSION}\n")
            z.writestr("network.nntxt", to_text(proto))
            z.writestr(f"parameter{pf}", param_file[0])
        data: bytes | str = buf.getvalue()
    elif ext in (".nntxt", ".prototxt"):
        data = to_text(proto)
    elif ext == ".protobuf":
        data = encode(proto)
    else:
        raise ValueError(
            f"{where}: {filename!r}: extension {ext!r} is not supported (.nnp, .nntxt, "
            ".prototxt, .protobuf)"
        )
    if isinstance(filename, (str, os.PathLike)):
        atomic_write(os.fspath(filename), data.encode("utf-8") if isinstance(data, str) else data)
        return
    if isinstance(data, str) and isinstance(filename, (io.BufferedIOBase, io.RawIOBase)):
        data = data.encode("utf-8")
    filename.write(data)
    if hasattr(filename, "seek"):
        filename.seek(0)

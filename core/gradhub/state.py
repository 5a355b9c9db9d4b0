"""Trained state in files: :func:`save_parameters` and :func:`load_parameters`.

The native format is `safetensors <https://huggingface.co/docs/safetensors>`_ (a JSON header and
raw little-endian arrays; nothing in it is executed); ``.npz`` (numpy's zip of ``.npy`` files,
read with ``allow_pickle=False``) is also accepted. Both hold one array per parameter, keyed by
the parameter's name relative to the current :func:`~gradhub.parameter_scope` (``fc1/affine/W``),
as nnabla's ``nn.save_parameters``. gradhub's own entries sit beside them:

- safetensors: the header's ``__metadata__`` holds ``"gradhub"``, a JSON object with
  ``"names"`` (the parameters in their order: safetensors sorts its entries), ``"need_grad"``
  (name -> bool) and, when saved with an optimizer, ``"optimizer"``.
- ``.npz``: the member ``__gradhub__`` holds the same JSON as a ``uint8`` array.

Optimizer state (see :meth:`gradhub.optim.Adam.state_dict`) is stored as arrays named
``__gradhub_optimizer__/<parameter index>/<key>`` plus its scalars in the JSON.

Files written by other programs (``safetensors.numpy.save_file``, ``numpy.savez``) load too:
without gradhub's entry, a new parameter gets ``need_grad=True`` when it holds floating-point
data and an existing one keeps its ``need_grad``.
"""

from __future__ import annotations

import io
import json
import os
import struct
import tempfile
from collections.abc import Mapping
from typing import Any, BinaryIO

import numpy as np

from .errors import StateFileError
from .parameters import full_name, get_parameters, parameter_table
from .variable import Variable

#: the safetensors metadata key and the npz member holding gradhub's JSON entry
META_KEY = "gradhub"
_NPZ_META = "__gradhub__"
#: the prefix of the optimizer's arrays; parameter names starting with ``__gradhub`` are refused
_OPT_PREFIX = "__gradhub_optimizer__/"
_RESERVED = "__gradhub"


def _write_bytes(f: BinaryIO, data: bytes) -> None:
    """Write ``data`` to the open temporary file (one function, so tests can simulate a crash)."""
    f.write(data)


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, flushed and
    fsynced, then renamed over ``path`` (``os.replace``); on failure the temporary file is removed
    and ``path`` is untouched. Front-ends' own file formats save through it too.

    >>> import os, tempfile
    >>> from gradhub.state import atomic_write
    >>> path = os.path.join(tempfile.mkdtemp(), "w.bin")
    >>> atomic_write(path, b"abc")
    >>> with open(path, "rb") as f:
    ...     f.read()
    b'abc'
    """
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            _write_bytes(f, data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:  # make the rename itself durable (POSIX; not possible on every platform)
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def _is_npz(path: str) -> bool:
    return str(path).lower().endswith(".npz")


def _host(v: Variable) -> np.ndarray:
    return _c_order(v.device.to_numpy(v.d))


def _c_order(a: Any) -> np.ndarray:
    """``a`` as a C-contiguous numpy array of its own shape (``np.ascontiguousarray`` would make
    a 0-d array 1-d)."""
    return np.asarray(a, order="C")


def _encode(path: str, arrays: dict[str, np.ndarray], meta: dict[str, Any], npz: bool) -> bytes:
    text = json.dumps(meta, sort_keys=True)
    if npz:
        buf = io.BytesIO()
        members = dict(arrays)
        members[_NPZ_META] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        np.savez(buf, **members)  # type: ignore[arg-type]
        return buf.getvalue()
    from safetensors.numpy import save

    try:
        return bytes(save(arrays, metadata={META_KEY: text}))
    except Exception as e:  # an array dtype safetensors cannot hold
        raise StateFileError(f"save_parameters: cannot write {path!r} as safetensors: {e}") from e


def save_parameters(
    path: str | os.PathLike[str],
    params: Mapping[str, Variable] | None = None,
    *,
    optimizer: Any = None,
) -> None:
    """Write parameters (and optionally an optimizer's state) to ``path``, atomically.

    ``params``: a mapping name -> Variable; by default every parameter under the current
    :func:`~gradhub.parameter_scope` (``gh.get_parameters(grad_only=False)``: those with
    ``need_grad=False``, such as batch-normalization statistics, included), named relative to
    it. Each parameter's data (as a host array, in its own dtype) and ``need_grad`` are kept.
    ``path`` ending in ``.npz`` is written as numpy's ``.npz``; any other name as safetensors.
    ``optimizer``: an object with ``state_dict()`` (:class:`gradhub.optim.SGD`,
    :class:`gradhub.optim.Adam`) whose state is stored too; :func:`load_parameters` with
    ``optimizer=`` restores it.

    The file is written to a temporary file in the same folder, fsynced and renamed over
    ``path``: a crash mid-save leaves any previous file under ``path`` as it was.

    Example::

        >>> import os, tempfile
        >>> import gradhub as gh
        >>> gh.clear_parameters()
        >>> with gh.parameter_scope("fc"):
        ...     w = gh.get_parameter_or_create("W", (2,), lambda s: [1.0, 2.0])
        >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
        >>> gh.save_parameters(path)
        >>> w.d[...] = 0.0
        >>> gh.load_parameters(path)
        >>> w.d
        array([1., 2.], dtype=float32)
        >>> gh.clear_parameters()
    """
    path = os.fspath(path)
    if params is None:
        params = get_parameters(grad_only=False)
    elif not isinstance(params, Mapping):
        raise TypeError(
            "save_parameters: params must be a mapping name -> Variable (such as "
            f"gh.get_parameters()), got {type(params).__name__}"
        )
    arrays: dict[str, np.ndarray] = {}
    need_grad: dict[str, bool] = {}
    for name, v in params.items():
        if not isinstance(name, str) or not name:
            raise TypeError(
                f"save_parameters: parameter names must be non-empty strings, got {name!r}"
            )
        if name.startswith(_RESERVED):
            raise ValueError(
                f"save_parameters: parameter name {name!r} is reserved (names starting with "
                f"{_RESERVED!r} hold gradhub's own entries)"
            )
        if not isinstance(v, Variable):
            raise TypeError(
                f"save_parameters: params[{name!r}] must be a Variable, got {type(v).__name__}"
            )
        arrays[name] = _host(v)
        need_grad[name] = bool(v.need_grad)
    meta: dict[str, Any] = {"format": 1, "names": list(arrays), "need_grad": need_grad}
    if optimizer is not None:
        meta["optimizer"] = _optimizer_entries(optimizer, arrays, params)
    atomic_write(path, _encode(path, arrays, meta, _is_npz(path)))


def _optimizer_entries(
    optimizer: Any, arrays: dict[str, np.ndarray], params: Mapping[str, Any]
) -> dict[str, Any]:
    """Split ``optimizer.state_dict()`` into arrays (added to ``arrays``) and JSON scalars, with
    the name in ``params`` of each of the optimizer's parameters (``param_names``; None for one
    not among them), by which :func:`load_parameters` matches the states again."""
    sd_fn = getattr(optimizer, "state_dict", None)
    if not callable(sd_fn):
        raise TypeError(
            "save_parameters: optimizer must have a state_dict() method, got "
            f"{type(optimizer).__name__}"
        )
    sd = sd_fn()
    per: list[dict[str, Any]] = []
    for k, entry in enumerate(sd["state"]):
        scalars: dict[str, Any] = {}
        for key, value in entry.items():
            if value is None or isinstance(value, (bool, int, float, str)):
                scalars[key] = value
            else:
                arrays[f"{_OPT_PREFIX}{k}/{key}"] = _c_order(value)
        per.append(scalars)
    out = {key: _json_scalar(value) for key, value in sd.items() if key != "state"}
    out["state"] = per
    opt_params = getattr(optimizer, "params", None)
    if isinstance(opt_params, (list, tuple)) and len(opt_params) == len(per):
        by_id = {id(v): name for name, v in params.items()}
        out["param_names"] = [by_id.get(id(p)) for p in opt_params]
    return out


#: the JSON form of a numpy scalar: ``{"numpy": "float32", "value": 0.05}``
_NUMPY_SCALAR = "numpy"


def _json_scalar(value: Any) -> Any:
    """``value`` with numpy scalars (a learning rate set to ``np.float32(0.1)``) as JSON objects
    holding their dtype and value, at any depth of dicts and lists, so that the JSON entry can
    hold them and loading gives the same numpy scalar (a float32 hyper-parameter stays float32,
    and so do the results computed from it)."""
    if isinstance(value, np.generic):
        return {_NUMPY_SCALAR: value.dtype.str, "value": value.item()}
    if isinstance(value, dict):
        return {k: _json_scalar(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_scalar(v) for v in value]
    return value


# -- reading -------------------------------------------------------------------------------------


def _read_safetensors(path: str, raw: bytes) -> tuple[dict[str, np.ndarray], dict[str, Any] | None]:
    from safetensors.numpy import load

    if len(raw) < 8:
        raise ValueError(f"{len(raw)} bytes, shorter than a safetensors header")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise ValueError(f"the header claims {n} bytes, the file has {len(raw) - 8} after it")
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    arrays = load(raw)
    md = header.get("__metadata__") or {}
    text = md.get(META_KEY) if isinstance(md, dict) else None
    return arrays, (json.loads(text) if text is not None else None)


def _read_npz(path: str, raw: bytes) -> tuple[dict[str, np.ndarray], dict[str, Any] | None]:
    arrays: dict[str, np.ndarray] = {}
    meta = None
    with np.load(io.BytesIO(raw), allow_pickle=False) as z:
        for key in z.files:
            try:
                a = z[key]
            except ValueError as e:
                if "allow_pickle" in str(e):
                    raise StateFileError(
                        f"load_parameters: {path!r} holds pickled Python objects (entry "
                        f"{key!r}, an object array); gradhub never unpickles files: save plain "
                        "numeric arrays"
                    ) from None
                raise
            if not isinstance(a, np.ndarray):  # a member that is not a .npy file
                raise StateFileError(
                    f"load_parameters: {path!r} is a zip file whose entry {key!r} is not a "
                    "numpy array (.npy); not a state file"
                )
            if key == _NPZ_META:
                meta = json.loads(a.tobytes().decode("utf-8"))
            else:
                arrays[key] = a
    return arrays, meta


def read_state_file(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays of a state file (name -> numpy array) and gradhub's JSON entry (``{}`` for files
    written by other programs). Nothing is unpickled or executed; a truncated or corrupted file
    raises :class:`gradhub.StateFileError` naming it; a missing one ``FileNotFoundError``.

    Example::

        >>> import os, tempfile, numpy as np
        >>> from gradhub.state import read_state_file
        >>> path = os.path.join(tempfile.mkdtemp(), "a.npz")
        >>> np.savez(path, w=np.zeros(2))
        >>> read_state_file(path)
        ({'w': array([0., 0.])}, {})
    """
    path = os.fspath(path)
    with open(path, "rb") as f:  # a missing file: FileNotFoundError, naming it
        raw = f.read()
    npz = raw[:4] == b"PK\x03\x04" or (not raw and _is_npz(path))
    kind = "npz" if npz else "safetensors"
    try:
        arrays, meta = _read_npz(path, raw) if npz else _read_safetensors(path, raw)
        if meta is not None and not isinstance(meta, dict):
            raise ValueError(f"gradhub's entry is {type(meta).__name__}, not a JSON object")
    except StateFileError:
        raise
    except Exception as e:  # truncated, corrupted, not a state file at all
        raise StateFileError(
            f"load_parameters: {path!r} is not a readable {kind} file (truncated or corrupted?): "
            f"{type(e).__name__}: {e}"
        ) from e
    for key, a in arrays.items():
        if a.dtype.hasobject:  # pragma: no cover - allow_pickle=False already refuses these
            raise StateFileError(f"load_parameters: {path!r}: entry {key!r} holds Python objects")
    return arrays, meta or {}


def load_parameters(path: str | os.PathLike[str], *, optimizer: Any = None) -> None:
    """Read the parameters stored in ``path`` into the parameter scope.

    Each entry ``name`` goes to the parameter ``name`` under the current
    :func:`~gradhub.parameter_scope`: a missing parameter is created (with the stored dtype), an
    existing one is overwritten in place (its Variable object stays, so a graph built before
    loading computes with the loaded values after ``y.forward()``), and ``need_grad`` is
    restored when the file records it. dtype: an existing parameter keeps its dtype and the
    stored values are converted to it (as ``torch``'s ``load_state_dict``), within a kind only
    (floating to floating, integer to integer); a stored shape that differs from an existing
    parameter's raises naming it (never a broadcast). Every check runs before anything changes:
    a refused file leaves the parameters as they were. ``optimizer``: an object with
    ``load_state_dict`` that receives the optimizer state saved with ``save_parameters(...,
    optimizer=)`` (a file without one raises).

    The format is recognised from the content (a zip: ``.npz``; otherwise safetensors). Nothing
    is unpickled or executed: an ``.npz`` holding object arrays is refused; a truncated or
    corrupted file raises :class:`gradhub.StateFileError` naming the file.

    Example::

        >>> import os, tempfile, numpy as np
        >>> import gradhub as gh
        >>> gh.clear_parameters()
        >>> path = os.path.join(tempfile.mkdtemp(), "w.npz")
        >>> np.savez(path, **{"fc/W": np.ones((2, 2))})
        >>> gh.load_parameters(path)
        >>> p = gh.get_parameters()["fc/W"]
        >>> p.dtype, p.need_grad
        (dtype('float64'), True)
        >>> gh.clear_parameters()
    """
    path = os.fspath(path)
    arrays, meta = read_state_file(path)
    stored_ng = meta.get("need_grad", {})
    opt_meta = meta.get("optimizer")
    table = parameter_table()
    plan: list[tuple[str, np.ndarray, bool | None]] = []
    order = [n for n in meta.get("names", ()) if n in arrays]  # safetensors sorts its entries
    order += [n for n in arrays if n not in set(order)]
    for name in order:
        a = arrays[name]
        if name.startswith(_RESERVED):
            continue
        ng = stored_ng.get(name)
        if ng is not None and not isinstance(ng, bool):
            raise StateFileError(f"load_parameters: {path!r}: need_grad of {name!r} is {ng!r}")
        full = full_name(name)
        p = table.get(full)
        if a.dtype.kind not in "fiub":
            raise StateFileError(
                f"load_parameters: {path!r}: parameter {name!r} has dtype {a.dtype}; "
                "only floating-point, integer and bool arrays are loaded"
            )
        if p is not None:
            if p.shape != tuple(a.shape):
                raise ValueError(
                    f"load_parameters: parameter {full!r} has shape {p.shape}, {path!r} stores "
                    f"shape {tuple(a.shape)} for it"
                )
            if (p.dtype.kind == "f") != (a.dtype.kind == "f"):
                raise TypeError(
                    f"load_parameters: parameter {full!r} has dtype {p.dtype}, {path!r} stores "
                    f"{a.dtype} for it (only conversions within floating or within integer "
                    "types are made)"
                )
        if ng and a.dtype.kind != "f":
            raise StateFileError(
                f"load_parameters: {path!r}: parameter {name!r} holds {a.dtype} data but is "
                "marked need_grad=True"
            )
        plan.append((full, a, ng))
    if optimizer is not None:
        if opt_meta is None:
            raise StateFileError(
                f"load_parameters: {path!r} holds no optimizer state (save it with "
                "gh.save_parameters(path, optimizer=opt))"
            )
        sd = _optimizer_state(path, opt_meta, arrays)
        _match_by_name(sd, optimizer)
        check = getattr(optimizer, "check_state_dict", None)
        if callable(check):
            try:
                check(sd)
            except (TypeError, ValueError) as e:  # the same error, naming the file
                raise type(e)(f"load_parameters: {path!r}: {e}") from None
    for full, a, ng in plan:
        p = table.get(full)
        if p is None:
            v = Variable(a.copy(), need_grad=bool(a.dtype.kind == "f" if ng is None else ng))
            v.name = full
            table[full] = v
            continue
        dev = p.device
        with dev.activate():
            p.d[...] = dev.asarray(a, dtype=p.dtype)
            p.d = p.d  # a new array object: graphs recorded before see a replaced leaf
        if ng is not None:
            p.need_grad = ng
    if optimizer is not None:
        optimizer.load_state_dict(sd)


def _match_by_name(sd: dict[str, Any], optimizer: Any) -> None:
    """Put the per-parameter states of ``sd`` in the order of ``optimizer.params`` by the names
    the file recorded for them (``param_names``, removed from ``sd``), where every parameter of
    the optimizer has one in the current scope and the two sets of names agree: a program that
    creates its parameters in another order gets each one's own state (PyTorch matches by
    position only). Otherwise (files written before 2026-11-27 too) by position."""
    saved = sd.pop("param_names", None)
    opt_params = getattr(optimizer, "params", None)
    if not isinstance(saved, list) or not isinstance(opt_params, (list, tuple)):
        return
    by_id = {id(v): name for name, v in get_parameters(grad_only=False).items()}
    current = [by_id.get(id(p)) for p in opt_params]
    if (
        len(current) != len(saved)
        or None in current
        or None in saved
        or len(set(saved)) != len(saved)
        or set(current) != set(saved)
    ):
        return
    where = {name: k for k, name in enumerate(saved)}
    sd["state"] = [sd["state"][where[name]] for name in current]


def _from_json(value: Any) -> Any:
    """The inverse of :func:`_json_scalar`: the numpy scalars back from their JSON objects."""
    if isinstance(value, dict):
        if set(value) == {_NUMPY_SCALAR, "value"} and isinstance(value[_NUMPY_SCALAR], str):
            dtype = np.dtype(value[_NUMPY_SCALAR])
            if dtype.kind not in "biuf":
                raise ValueError(f"a numpy scalar of dtype {dtype} in the optimizer entry")
            return dtype.type(value["value"])
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


def _optimizer_state(path: str, opt_meta: Any, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """The optimizer's ``state_dict`` rebuilt from the JSON entry and its arrays."""
    if not isinstance(opt_meta, dict) or not isinstance(opt_meta.get("state"), list):
        raise StateFileError(f"load_parameters: {path!r}: malformed optimizer entry")
    state: list[dict[str, Any]] = [dict(e) for e in opt_meta["state"]]
    for key, a in arrays.items():
        if not key.startswith(_OPT_PREFIX):
            continue
        k_text, _, name = key[len(_OPT_PREFIX) :].partition("/")
        if not k_text.isdigit() or int(k_text) >= len(state) or not name:
            raise StateFileError(f"load_parameters: {path!r}: unexpected optimizer entry {key!r}")
        state[int(k_text)][name] = a
    try:
        sd = {key: _from_json(value) for key, value in opt_meta.items() if key != "state"}
    except (TypeError, ValueError) as e:
        raise StateFileError(
            f"load_parameters: {path!r}: malformed optimizer entry ({e})"
        ) from None
    sd["state"] = state
    return sd


__all__ = ["atomic_write", "load_parameters", "read_state_file", "save_parameters"]

"""chainer's ``chainer.serializers``: :func:`save_npz` and :func:`load_npz` in chainer's NPZ layout.

``from gradhub_compat.chainer import serializers``. The layout is chainer 7.8.1's
(``chainer/serializers/npz.py``): a numpy ``.npz`` (``numpy.savez_compressed`` by default) with
one array per value, keyed by its path in the object hierarchy: a Link's parameter ``W`` is
``W``, a child link ``l1``'s is ``l1/W``, a ChainList's children are ``0/``, ``1/``, ...,
persistent values (BatchNormalization's ``avg_mean``, ``avg_var``, ``N``) sit beside the
parameters. The objects it saves and loads are

- the Links and optimizers of :mod:`gradhub_compat.chainer.link` and
  :mod:`gradhub_compat.chainer.optimizers` (through their ``serialize``, below);
- a dict (any mapping) of named Variables (or numpy arrays), keys being those paths
  (``{"l1/W": w, "l1/b": b}``): ``save_npz`` writes one entry per key, as chainer's
  ``save_npz`` writes a dict; ``load_npz`` reads each key (with ``path`` prefixed) into the
  Variable's data in place (chainer's ``load_npz`` needs a Link; this extends it to dicts);
- any object with chainer's serialization protocol, ``obj.serialize(serializer)``, calling
  ``serializer(name, array)`` and ``serializer[child]`` (:class:`DictionarySerializer`,
  :class:`NpzDeserializer`), as chainer's Links (and the layer's) do.

Loading reads with ``numpy.load(..., allow_pickle=False)``: nothing is unpickled (chainer's own
loader allows pickle; the one pickled entry chainer writes, ``None`` for an uninitialized
parameter, is refused naming the file and the key). A stored shape must equal the target's
(chainer's ``numpy.copyto`` would broadcast); values are cast as ``numpy.copyto`` does
(``same_kind``).
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

import numpy as np
from gradhub.errors import StateFileError
from gradhub.state import atomic_write
from gradhub.variable import Variable as _NativeVariable

__all__ = ["DictionarySerializer", "NpzDeserializer", "load_npz", "save_npz", "serialize"]


def _host(value: Any, where: str, key: str) -> np.ndarray:
    if isinstance(value, _NativeVariable):
        return np.asarray(value.device.to_numpy(value.d))
    if value is None:
        raise ValueError(
            f"{where}: {key!r} is None (an uninitialized value): chainer would write it as a "
            "pickled object, which gradhub does not write"
        )
    if isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)):
        return np.asarray(value)
    raise TypeError(
        f"{where}: {key!r} must be a Variable, a numpy array or a number, got "
        f"{type(value).__name__}"
    )


class DictionarySerializer:
    """chainer's serializer to a flat dict: ``s[name]`` descends into a child (path ``name/``),
    ``s(name, value)`` stores ``value`` (a Variable, an array or a number) at ``path + name``."""

    def __init__(self, target: dict[str, np.ndarray] | None = None, path: str = "") -> None:
        self.target: dict[str, np.ndarray] = {} if target is None else target
        self.path = path

    def __getitem__(self, key: str) -> DictionarySerializer:
        return DictionarySerializer(self.target, self.path + key.strip("/") + "/")

    def __call__(self, key: str, value: Any) -> Any:
        full = self.path + key.lstrip("/")
        self.target[full] = _host(value, "chainer save_npz", full)
        return value

    def save(self, obj: Any) -> None:
        """Serialize ``obj`` (``obj.serialize(self)``)."""
        obj.serialize(self)


def serialize(obj: Any) -> dict[str, np.ndarray]:
    """The flat dict (path -> array) that :func:`save_npz` writes for ``obj``."""
    if isinstance(obj, Mapping):
        target: dict[str, np.ndarray] = {}
        for key, value in obj.items():
            if not isinstance(key, str) or not key:
                raise TypeError(f"chainer save_npz: keys must be non-empty strings, got {key!r}")
            target[key] = _host(value, "chainer save_npz", key)
        return target
    if not callable(getattr(obj, "serialize", None)):
        raise TypeError(
            "chainer save_npz: obj must be a dict of named Variables or have chainer's "
            f"serialize(serializer) method, got {type(obj).__name__}"
        )
    s = DictionarySerializer()
    s.save(obj)
    return s.target


def save_npz(file: Any, obj: Any, compression: bool = True) -> None:
    """Save ``obj`` to ``file`` in chainer's NPZ layout, as ``chainer.serializers.save_npz``.

    ``obj``: a dict of named Variables (keys are chainer's paths, ``"l1/W"``) or an object with
    ``serialize(serializer)``. ``compression``: ``numpy.savez_compressed`` (default) or
    ``numpy.savez``. A file name is written atomically (a temporary file, then renamed).

    Example::

        >>> import os, tempfile, numpy as np
        >>> from gradhub_compat.chainer import Variable, serializers
        >>> w = Variable(np.array([[1.0, 2.0]], dtype=np.float32))
        >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
        >>> serializers.save_npz(path, {"l1/W": w})
        >>> w.array[...] = 0.0
        >>> serializers.load_npz(path, {"l1/W": w})
        >>> w.array
        array([[1., 2.]], dtype=float32)
    """
    target = serialize(obj)
    buf = io.BytesIO()
    (np.savez_compressed if compression else np.savez)(buf, **target)  # type: ignore[arg-type]
    data = buf.getvalue()
    if isinstance(file, (str, os.PathLike)):
        atomic_write(os.fspath(file), data)
    else:
        file.write(data)


class NpzDeserializer:
    """chainer's deserializer from an opened NPZ: ``d[name]`` descends into a child,
    ``d(name, value)`` reads ``path + name`` into ``value`` (a Variable or array, in place) and
    returns it; ``strict=False`` skips missing keys; ``ignore_names`` (a key, a predicate on
    the key, or a list of them) skips keys."""

    def __init__(
        self,
        npz: Any,
        path: str = "",
        strict: bool = True,
        ignore_names: Any = None,
        *,
        file_name: str = "<npz>",
    ) -> None:
        self.npz = npz
        self.path = path
        self.strict = strict
        self.ignore_names = [] if ignore_names is None else ignore_names
        self.file_name = file_name

    def __getitem__(self, key: str) -> NpzDeserializer:
        return NpzDeserializer(
            self.npz,
            self.path + key.strip("/") + "/",
            self.strict,
            self.ignore_names,
            file_name=self.file_name,
        )

    def _ignored(self, key: str) -> bool:
        names = (
            self.ignore_names
            if isinstance(self.ignore_names, (tuple, list))
            else [self.ignore_names]
        )
        for n in names:
            if isinstance(n, str):
                if key == n:
                    return True
            elif callable(n):
                if n(key):
                    return True
            else:
                raise ValueError(
                    "chainer load_npz: ignore_names needs to be a callable, string or list of them"
                )
        return False

    def _fetch(self, key: str, value: Any) -> tuple[str, np.ndarray] | None:
        """The entry for ``key`` checked against ``value`` (None: skipped)."""
        where = "chainer load_npz"
        full = self.path + key.lstrip("/")
        if not self.strict and full not in self.npz.files:
            return None
        if self._ignored(full):
            return None
        if full not in self.npz.files:
            raise KeyError(f"{where}: {self.file_name} has no entry {full!r} (strict=True)")
        try:
            a = self.npz[full]
        except ValueError as e:
            if "allow_pickle" in str(e):
                raise StateFileError(
                    f"{where}: {self.file_name}: entry {full!r} is a pickled Python object "
                    "(chainer writes None for an uninitialized parameter); gradhub never unpickles"
                ) from None
            raise StateFileError(f"{where}: {self.file_name}: entry {full!r}: {e}") from e
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise StateFileError(
                f"{where}: {self.file_name}: entry {full!r} cannot be read (corrupted?): {e}"
            ) from e
        if isinstance(value, (_NativeVariable, np.ndarray)):
            if tuple(value.shape) != a.shape:
                raise ValueError(
                    f"{where}: {self.file_name}: entry {full!r} has shape {a.shape}, the target "
                    f"has shape {tuple(value.shape)} (never broadcast)"
                )
            if not np.can_cast(a.dtype, value.dtype, casting="same_kind"):
                raise TypeError(
                    f"{where}: {self.file_name}: entry {full!r} has dtype {a.dtype}, which does "
                    f"not cast to the target's {value.dtype} (same_kind, as numpy.copyto)"
                )
        elif value is not None and a.dtype.kind in "biufc":
            if not (a.dtype.kind in "iu" and type(value) is int) and not np.can_cast(
                a.dtype, type(value), casting="safe"
            ):
                raise TypeError(
                    f"{where}: {self.file_name}: cannot safely deserialize entry {full!r} of "
                    f"dtype {a.dtype} into a {type(value).__name__}"
                )
        return full, a

    @staticmethod
    def _apply(value: Any, a: np.ndarray) -> Any:
        if value is None:
            return a
        if isinstance(value, np.ndarray):
            np.copyto(value, a)
            return value
        if isinstance(value, _NativeVariable):
            dev = value.device
            with dev.activate():
                value.d[...] = dev.asarray(a, dtype=value.dtype)
            return value
        return type(value)(a)

    def __call__(self, key: str, value: Any) -> Any:
        found = self._fetch(key, value)
        return value if found is None else self._apply(value, found[1])

    def load(self, obj: Any) -> None:
        """Deserialize ``obj``: a mapping (each key read into its value) or an object with
        ``serialize(deserializer)``."""
        if isinstance(obj, Mapping):
            plan: list[tuple[str, Any, np.ndarray]] = []
            for key, value in list(obj.items()):  # every check before anything changes
                if not isinstance(key, str):
                    raise TypeError(f"chainer load_npz: keys must be strings, got {key!r}")
                if not isinstance(value, (_NativeVariable, np.ndarray)) and not isinstance(
                    obj, MutableMapping
                ):
                    raise TypeError(
                        f"chainer load_npz: obj[{key!r}] is a {type(value).__name__}; only "
                        "Variables and numpy arrays are loaded in place"
                    )
                found = self._fetch(key, value)
                if found is not None:
                    plan.append((key, value, found[1]))
            for key, value, a in plan:
                new = self._apply(value, a)
                if new is not value:
                    obj[key] = new  # type: ignore[index]
            return
        fn: Callable[..., Any] | None = getattr(obj, "serialize", None)
        if not callable(fn):
            raise TypeError(
                "chainer load_npz: obj must be a dict of named Variables or have chainer's "
                f"serialize(serializer) method, got {type(obj).__name__}"
            )
        fn(self)


def load_npz(
    file: Any, obj: Any, path: str = "", strict: bool = True, ignore_names: Any = None
) -> None:
    """Load ``obj`` from an NPZ file in chainer's layout, as ``chainer.serializers.load_npz``.

    ``obj``: a dict of named Variables (or arrays), each key read (``path`` prefixed, as
    chainer's: ``path="l1/"`` with its slash) into its value in place, or an object with
    ``serialize(serializer)``. ``strict=False`` skips keys the file lacks; ``ignore_names``
    skips keys. Read with ``allow_pickle=False``: nothing is
    unpickled; a missing key raises ``KeyError``, an unreadable file
    :class:`gradhub.StateFileError`, a shape mismatch ``ValueError``, all naming the file.
    For a dict every entry is checked before any is loaded (a refused file changes nothing);
    an object's ``serialize`` loads entry by entry, as chainer's.
    """
    if isinstance(file, (str, os.PathLike)):
        name = repr(os.fspath(file))
        with open(file, "rb") as f:  # a missing file: FileNotFoundError naming it
            source: Any = io.BytesIO(f.read())
    else:
        name, source = repr(getattr(file, "name", file)), file
    try:
        npz = np.load(source, allow_pickle=False)
    except Exception as e:
        raise StateFileError(
            f"chainer load_npz: {name} is not a readable npz file (truncated or corrupted?): "
            f"{type(e).__name__}: {e}"
        ) from e
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise StateFileError(f"chainer load_npz: {name} is a .npy file, not an .npz archive")
    with npz:
        NpzDeserializer(npz, path, strict, ignore_names, file_name=name).load(obj)

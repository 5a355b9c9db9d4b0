"""chainer's ``snapshot`` and ``snapshot_object`` extensions (chainer 7.8.1
``training/extensions/_snapshot.py``), written with the layer's npz serializers."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ... import serializers as npz
from ..extension import Extension
from . import snapshot_writers

__all__ = ["snapshot", "snapshot_object"]


class _SnapshotSerializer(npz.DictionarySerializer):
    """The npz dict serializer of snapshots: also stores strings (the JSON that LogReport and
    the summaries save) as numpy unicode arrays, as chainer's ``numpy.asarray(value)``."""

    def __getitem__(self, key: str) -> _SnapshotSerializer:
        return _SnapshotSerializer(self.target, self.path + key.strip("/") + "/")

    def __call__(self, key: str, value: Any) -> Any:
        if isinstance(value, str):
            self.target[self.path + key.lstrip("/")] = np.asarray(value)
            return value
        return super().__call__(key, value)


def serialize(target: Any) -> dict[str, np.ndarray]:
    """The flat dict (path -> array) of ``target`` (an object with ``serialize``)."""
    s = _SnapshotSerializer()
    s.save(target)
    return s.target


def _find_snapshot_files(fmt: str, path: str) -> list[tuple[float, str]]:
    prefix = fmt.split("{")[0]
    suffix = fmt.split("}")[-1]
    matched = (f for f in os.listdir(path) if f.startswith(prefix) and f.endswith(suffix))
    return sorted((os.stat(os.path.join(path, f)).st_mtime, f) for f in matched)


def _find_latest_snapshot(fmt: str, path: str) -> str | None:
    files = _find_snapshot_files(fmt, path)
    return files[-1][1] if files else None


class _Snapshot(Extension):
    """The snapshot extension (see :func:`snapshot`)."""

    trigger = 1, "epoch"
    priority = -100

    def __init__(
        self,
        target: Any = None,
        condition: Any = None,
        writer: Any = None,
        filename: Any = "snapshot_iter_{.updater.iteration}",
        snapshot_on_error: bool = False,
        n_retains: int = -1,
        autoload: bool = False,
    ) -> None:
        self._target = target
        self.filename = filename
        self.condition = condition if condition is not None else (lambda: True)
        self.writer = snapshot_writers.SimpleWriter() if writer is None else writer
        self._snapshot_on_error = snapshot_on_error
        self.n_retains = n_retains
        self.autoload = autoload

    def initialize(self, trainer: Any) -> None:
        """With ``autoload``, load the newest snapshot in ``trainer.out`` matching the file
        name pattern, if any."""
        target = trainer if self._target is None else self._target
        outdir = trainer.out
        if self.autoload and isinstance(self.filename, str) and os.path.isdir(outdir):
            filename = _find_latest_snapshot(self.filename, outdir)
            if filename is not None:
                npz.load_npz(os.path.join(outdir, filename), target)
        if (
            hasattr(self.writer, "_add_cleanup_hook")
            and self.n_retains > 0
            and isinstance(self.filename, str)
        ):  # stale snapshots removed after each save, by the writer (as chainer's)
            fmt, keep = self.filename, self.n_retains

            def _cleanup() -> None:
                files = _find_snapshot_files(fmt, outdir)
                for _, stale in files[: max(0, len(files) - keep)]:
                    os.remove(os.path.join(outdir, stale))

            self.writer._add_cleanup_hook(_cleanup)

    def on_error(self, trainer: Any, exc: BaseException, tb: Any) -> None:
        """With ``snapshot_on_error``, take a snapshot."""
        if self._snapshot_on_error:
            self._make_snapshot(trainer)

    def __call__(self, trainer: Any) -> None:
        if self.condition():
            self._make_snapshot(trainer)

    def _make_snapshot(self, trainer: Any) -> None:
        target = trainer if self._target is None else self._target
        serialized = serialize(target)
        filename = self.filename
        filename = filename(trainer) if callable(filename) else filename.format(trainer)
        self.writer(filename, trainer.out, serialized)

    def finalize(self) -> None:
        """Wait for the writer's pending snapshots (threads, processes, queues)."""
        if hasattr(self.writer, "finalize"):
            self.writer.finalize()


def snapshot(
    savefun: Any = None,
    filename: Any = "snapshot_iter_{.updater.iteration}",
    *,
    target: Any = None,
    condition: Any = None,
    writer: Any = None,
    snapshot_on_error: bool = False,
    n_retains: int = -1,
    autoload: bool = False,
) -> _Snapshot:
    """chainer's ``extensions.snapshot``: at each firing (default once per epoch, priority
    -100: after the other extensions) the trainer (or ``target``) is serialized with chainer's
    protocol and written by ``savefun`` (default ``serializers.save_npz``, chainer's npz
    layout) to ``<out>/<filename>``, ``filename`` being formatted with the trainer
    (``'snapshot_iter_{.updater.iteration}'``) or called with it. ``condition()`` gates it,
    ``snapshot_on_error`` also writes one when the loop raises, ``n_retains > 0`` keeps that
    many newest files, ``autoload`` loads the newest matching file when training starts.
    Resume a run by ``serializers.load_npz(path, trainer)`` before ``trainer.run()``.
    ``writer`` (:mod:`.snapshot_writers`: ``SimpleWriter``, the default, ``ThreadWriter``,
    ``ProcessWriter``, ``ThreadQueueWriter``, ``ProcessQueueWriter``) writes each snapshot;
    ``savefun`` is ``SimpleWriter(savefun)`` (not both).

    Example::

        >>> from gradhub_compat.chainer.training import extensions
        >>> ext = extensions.snapshot(filename="snapshot_epoch_{.updater.epoch}")
        >>> ext.trigger, ext.priority
        ((1, 'epoch'), -100)
    """
    if savefun is not None and writer is not None:
        raise TypeError("savefun and writer arguments cannot be specified together.")
    if writer is None and savefun is not None:
        writer = snapshot_writers.SimpleWriter(savefun=savefun)
    return _Snapshot(
        target=target,
        condition=condition,
        writer=writer,
        filename=filename,
        snapshot_on_error=snapshot_on_error,
        n_retains=n_retains,
        autoload=autoload,
    )


def snapshot_object(target: Any, filename: Any, savefun: Any = None, **kwargs: Any) -> _Snapshot:
    """chainer's ``extensions.snapshot_object(target, filename, savefun=None, **kwargs)``:
    :func:`snapshot` of ``target`` (a model, an optimizer) instead of the trainer, e.g.
    ``snapshot_object(model, 'model_epoch_{.updater.epoch}')``."""
    return snapshot(savefun=savefun, filename=filename, target=target, **kwargs)

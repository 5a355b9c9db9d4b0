"""chainer's snapshot writers (chainer 7.8.1 ``training/extensions/snapshot_writers.py``): the
objects that :func:`~gradhub_compat.chainer.training.extensions.snapshot` hands each snapshot
to, as ``writer(filename, outdir, target)`` with ``target`` the serialized dict (path -> array).

* :class:`SimpleWriter` (the default): ``savefun(path, target, **kwds)`` now, into a temporary
  folder of ``outdir`` and then moved to ``outdir/filename`` (a reader never sees half a file).
* :class:`ThreadWriter`, :class:`ProcessWriter` (:class:`StandardWriter`): the same in a new
  thread or process per snapshot; a snapshot waits for the previous one, and ``finalize()``
  (the trainer calls it at the end of training) for the last.
* :class:`ThreadQueueWriter`, :class:`ProcessQueueWriter` (:class:`QueueWriter`): one thread or
  process writing the snapshots put on a queue in order; ``finalize()`` waits for all.

``n_retains`` of the snapshot extension removes stale files after each save through the
writer's cleanup hook (:meth:`Writer._add_cleanup_hook`), as chainer's.

Example::

    >>> import os, tempfile, numpy as np
    >>> out = tempfile.mkdtemp()
    >>> w = ThreadWriter()
    >>> w("snap.npz", out, {"W": np.ones(2, np.float32)})
    >>> w.finalize()
    >>> sorted(np.load(os.path.join(out, "snap.npz")).files)
    ['W']
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import shutil
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from ... import serializers as _npz

__all__ = [
    "ProcessQueueWriter",
    "ProcessWriter",
    "QueueWriter",
    "SimpleWriter",
    "StandardWriter",
    "ThreadQueueWriter",
    "ThreadWriter",
    "Writer",
]


class Writer:
    """The base of the snapshot writers: ``writer(filename, outdir, target)`` writes one
    snapshot (subclasses define it); :meth:`save` writes through a temporary folder and then
    runs the cleanup hooks; :meth:`finalize` ends the writer's work (the trainer calls it)."""

    def __init__(self) -> None:
        self._post_save_hooks: list[Callable[[], None]] = []

    def __call__(self, filename: str, outdir: str, target: Any) -> None:
        raise NotImplementedError

    def __del__(self) -> None:
        self.finalize()

    def finalize(self) -> None:
        """Wait for the writer's pending work (nothing for this class)."""

    def save(
        self, filename: str, outdir: str, target: Any, savefun: Callable[..., Any], **kwds: Any
    ) -> None:
        """``savefun(path, target, **kwds)`` into a temporary folder of ``outdir``, then the file
        moved to ``outdir/filename`` and the cleanup hooks run."""
        with tempfile.TemporaryDirectory(prefix="tmp" + filename, dir=outdir) as tmpdir:
            tmppath = os.path.join(tmpdir, filename)
            savefun(tmppath, target, **kwds)
            shutil.move(tmppath, os.path.join(outdir, filename))
        self._post_save()

    def _add_cleanup_hook(self, hook_fun: Callable[[], None]) -> None:
        """Run ``hook_fun()`` after each save (the snapshot extension's ``n_retains``)."""
        self._post_save_hooks.append(hook_fun)

    def _post_save(self) -> None:
        for hook in self._post_save_hooks:
            hook()


class SimpleWriter(Writer):
    """``SimpleWriter(savefun=save_npz, **kwds)``: each snapshot saved at once by
    ``savefun(path, target, **kwds)``."""

    def __init__(self, savefun: Callable[..., Any] = _npz.save_npz, **kwds: Any) -> None:
        super().__init__()
        self._savefun = savefun
        self._kwds = kwds

    def __call__(self, filename: str, outdir: str, target: Any) -> None:
        self.save(filename, outdir, target, self._savefun, **self._kwds)


class StandardWriter(Writer):
    """``StandardWriter(savefun=save_npz, **kwds)``: each snapshot saved by a new worker (made by
    :meth:`create_worker`, an object with ``start()`` and ``join()``), after the previous worker
    has finished."""

    def __init__(self, savefun: Callable[..., Any] = _npz.save_npz, **kwds: Any) -> None:
        super().__init__()
        self._savefun = savefun
        self._kwds = kwds
        self._started = False
        self._finalized = False
        self._worker: Any = None

    def __call__(self, filename: str, outdir: str, target: Any) -> None:
        if self._started:
            self._worker.join()
            self._started = False
        self._filename = filename
        self._worker = self.create_worker(filename, outdir, target, **self._kwds)
        self._worker.start()
        self._started = True

    def create_worker(self, filename: str, outdir: str, target: Any, **kwds: Any) -> Any:
        """The worker saving one snapshot (subclasses define it)."""
        raise NotImplementedError

    def finalize(self) -> None:
        """Wait for the last worker."""
        if getattr(self, "_started", False):
            if not self._finalized:
                self._worker.join()
            self._started = False
        self._finalized = True


class ThreadWriter(StandardWriter):
    """``ThreadWriter(savefun=save_npz, **kwds)``: each snapshot saved in a new thread."""

    def create_worker(
        self, filename: str, outdir: str, target: Any, **kwds: Any
    ) -> threading.Thread:
        return threading.Thread(
            target=self.save, args=(filename, outdir, target, self._savefun), kwargs=kwds
        )


class ProcessWriter(StandardWriter):
    """``ProcessWriter(savefun=save_npz, **kwds)``: each snapshot saved in a new process
    (:mod:`multiprocessing`; chainer advises threads under MPI). The cleanup hooks run in that
    process."""

    def create_worker(
        self, filename: str, outdir: str, target: Any, **kwds: Any
    ) -> multiprocessing.Process:
        return multiprocessing.Process(
            target=self.save, args=(filename, outdir, target, self._savefun), kwargs=kwds
        )


class QueueWriter(Writer):
    """``QueueWriter(savefun=save_npz, task=None)``: snapshots put on a queue (made by
    :meth:`create_queue`) that one consumer (:meth:`create_consumer`) writes in order with
    ``task(filename, outdir, target)`` (default ``SimpleWriter(savefun)``)."""

    def __init__(self, savefun: Callable[..., Any] = _npz.save_npz, task: Any = None) -> None:
        super().__init__()
        self._started = False
        self._finalized = False
        self._task = self.create_task(savefun) if task is None else task
        self._queue = self.create_queue()
        self._consumer = self.create_consumer(self._queue)
        self._consumer.start()
        self._started = True

    def __call__(self, filename: str, outdir: str, target: Any) -> None:
        self._queue.put([self._task, filename, outdir, target])

    def create_task(self, savefun: Callable[..., Any]) -> Any:
        """The writer of each queued snapshot: ``SimpleWriter(savefun=savefun)``."""
        return SimpleWriter(savefun=savefun)

    def create_queue(self) -> Any:
        """The queue (subclasses define it)."""
        raise NotImplementedError

    def create_consumer(self, q: Any) -> Any:
        """The consumer of the queue (subclasses define it)."""
        raise NotImplementedError

    def consume(self, q: Any) -> None:
        """Write the queued snapshots until a None arrives."""
        while True:
            task = q.get()
            if task is None:
                q.task_done()
                return
            task[0](task[1], task[2], task[3])
            q.task_done()

    def finalize(self) -> None:
        """Write what is queued, then stop the consumer."""
        if getattr(self, "_started", False):
            if not self._finalized:
                self._queue.put(None)
                self._queue.join()
                self._consumer.join()
            self._started = False
        self._finalized = True


class ThreadQueueWriter(QueueWriter):
    """``ThreadQueueWriter(savefun=save_npz, task=None)``: a :class:`queue.Queue` written by
    one thread."""

    def create_queue(self) -> queue.Queue[Any]:
        return queue.Queue()

    def create_consumer(self, q: Any) -> threading.Thread:
        return threading.Thread(target=self.consume, args=(q,))


class ProcessQueueWriter(QueueWriter):
    """``ProcessQueueWriter(savefun=save_npz, task=None)``: a
    :class:`multiprocessing.JoinableQueue` written by one process."""

    def create_queue(self) -> Any:
        return multiprocessing.JoinableQueue()

    def create_consumer(self, q: Any) -> multiprocessing.Process:
        return multiprocessing.Process(target=self.consume, args=(q,))

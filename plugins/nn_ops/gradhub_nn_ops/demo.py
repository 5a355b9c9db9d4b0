"""``gradhub demo``: the seed network trained with a gradient-norm penalty on handwritten digits.

The network is the one of the nnabla ``grad`` example (conv-relu-maxpool twice, affine, softmax
cross entropy) on scikit-learn's bundled 8x8 digits (1797 images, no download), split into a
training and a held-out part. Each step differentiates the loss twice:

.. math::
    L = \\operatorname{mean}\\,\\mathrm{CE}(f_\\theta(x), y), \\qquad
    P = \\sum_{p \\in \\theta} \\sqrt{\\sum (\\partial L / \\partial p)^2 + \\varepsilon},
    \\qquad \\theta \\leftarrow \\mathrm{Adam}(\\theta, \\nabla_\\theta (L + \\lambda P))

where the gradients inside ``P`` come from ``gh.grad([L], params, create_graph=True)``, so the
update differentiates through a backward pass (a second-order derivative through convolution,
pooling and cross entropy). scikit-learn is the optional extra ``demo`` of gradhub-nn-ops,
matplotlib (for ``plot=``) its extra ``plot``. gradhub-nn-ops adds the command ``gradhub demo``
(:func:`add_arguments`, :func:`run_command`) through the hook ``gradhub_add_commands``.

Example::

    >>> from gradhub_nn_ops.demo import run
    >>> result = run(epochs=1, max_batches=5)  # doctest: +SKIP
    >>> result.batch_loss[-1] < result.batch_loss[0]  # doctest: +SKIP
    True
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from gradhub.errors import GradhubError

if TYPE_CHECKING:
    from gradhub.variable import Variable
    from rich.console import Console

#: Default settings of :func:`run` (and of ``gradhub demo``).
DEFAULTS: dict[str, Any] = {
    "device": "cpu",
    "epochs": 10,
    "batch_size": 32,
    "seed": 0,
    "lr": 0.01,
    "penalty_weight": 0.01,
}
#: Fraction of the digits held out for the final accuracy.
TEST_FRACTION = 0.2
#: Inside the square root of the penalty, so that its derivative stays finite at a zero gradient.
PENALTY_EPS = 1e-12


class MissingDependency(GradhubError):
    """An optional dependency of the demo (scikit-learn, matplotlib) is not installed."""


class PlotError(GradhubError, ValueError):
    """The ``plot`` file (``gradhub demo --plot FILE``) cannot be written.

    ``result``: the finished run when saving failed at the end (None when the path was refused
    before training).
    """

    def __init__(self, message: str, result: DemoResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def check_plot_path(path: str) -> None:
    """Raise :class:`PlotError` saying what to do unless the curves can be saved to ``path``:
    its folder exists and is writable, it is not a folder, and its suffix (if any) is a format
    matplotlib writes. Called before training, so that a bad path does not cost the run.

    Example::

        >>> from gradhub_nn_ops.demo import check_plot_path
        >>> check_plot_path("/nonexistent/dir/curves.png")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        gradhub_nn_ops.demo.PlotError: cannot write ...: the folder '/nonexistent/dir' does not ...
    """
    import os

    if not path:
        raise PlotError("expected a file name, got ''")
    folder = os.path.dirname(os.path.abspath(path))
    shown = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise PlotError(
            f"{path!r} is a folder; give a file name such as {path.rstrip('/')}/curves.png"
        )
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise PlotError(
            f"cannot write {path!r}: the folder {shown!r} {what}; create it or choose another path"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PlotError(
            f"cannot write {path!r}: the folder {shown!r} is not writable; choose another path"
        )
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise PlotError(f"cannot write {path!r}: the file exists and is not writable")
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    if suffix:
        from matplotlib.backend_bases import FigureCanvasBase

        formats = FigureCanvasBase.get_supported_filetypes()
        if suffix not in formats:
            raise PlotError(
                f"cannot write {path!r}: matplotlib does not write .{suffix} files; use one of "
                + ", ".join("." + f for f in sorted(formats))
                + " (.png by default)"
            )


def check_dependencies(plot: bool = False) -> None:
    """Raise :class:`MissingDependency` saying what to install when the demo cannot run.

    Example::

        >>> from gradhub_nn_ops.demo import check_dependencies
        >>> check_dependencies(plot=True)  # doctest: +SKIP
        Traceback (most recent call last):
        gradhub_nn_ops.demo.MissingDependency: --plot needs matplotlib, ... gradhub-nn-ops[plot] ...
    """
    try:
        import sklearn.datasets  # noqa: F401
    except ImportError as e:
        raise MissingDependency(
            "the demo trains on scikit-learn's digits, but scikit-learn is not installed "
            f"({e}); install the extra: pip install 'gradhub-nn-ops[demo]'"
        ) from e
    if plot:
        try:
            import matplotlib.figure  # noqa: F401
        except ImportError as e:
            raise MissingDependency(
                f"--plot needs matplotlib, which is not installed ({e}); install the extra: "
                "pip install 'gradhub-nn-ops[plot]' (or run without --plot)"
            ) from e


@dataclass
class DemoResult:
    """What a demo run did: its settings, the loss and penalty curves, the held-out accuracy."""

    device: str
    epochs: int
    batch_size: int
    seed: int
    lr: float
    penalty_weight: float
    n_train: int
    n_test: int
    n_parameters: int
    batch_loss: list[float] = field(default_factory=list)
    batch_penalty: list[float] = field(default_factory=list)
    epoch_loss: list[float] = field(default_factory=list)
    epoch_penalty: list[float] = field(default_factory=list)
    initial_test_loss: float = float("nan")
    test_loss: float = float("nan")
    accuracy: float = float("nan")
    seconds: float = 0.0
    #: the number of processes that trained together (``distributed=True``: the MPI ranks)
    ranks: int = 1
    #: this process's rank among them (0 without ``distributed``)
    rank: int = 0
    plot: str | None = None
    parameters: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """The result without the parameter arrays (JSON-serialisable)."""
        d = dict(self.__dict__)
        d.pop("parameters")
        return d


def load_digits_split(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's digits as float32 images ``(N, 1, 8, 8)`` in [0, 1] and int labels ``(N, 1)``,
    split (stratified, by ``seed``) into ``x_train, y_train, x_test, y_test``.

    Example::

        >>> from gradhub_nn_ops.demo import load_digits_split
        >>> x_train, y_train, x_test, y_test = load_digits_split(seed=0)  # doctest: +SKIP
        >>> x_train.shape, y_test.shape  # doctest: +SKIP
        ((1438, 1, 8, 8), (359, 1))
    """
    check_dependencies()
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)[:, None]
    rng = np.random.default_rng(seed)
    test = np.zeros(len(y), dtype=bool)
    for c in np.unique(y):  # stratified: the same fraction of every class is held out
        idx = np.flatnonzero(y[:, 0] == c)
        test[rng.choice(idx, round(TEST_FRACTION * len(idx)), replace=False)] = True
    return x[~test], y[~test], x[test], y[test]


def network(x: Variable, rng: np.random.RandomState | None = None) -> Variable:
    """The seed network: (conv 3x3 -> relu -> max pool 2x2) for 8 and 16 maps, then affine 10.

    Parameters are created (by ``PF.convolution``/``PF.affine``, initialised from ``rng``) on the
    first call and reused afterwards: ``conv1/conv/{W,b}``, ``conv2/conv/{W,b}``,
    ``pred/affine/{W,b}``.

    Example::

        >>> import numpy as np, gradhub as gh
        >>> from gradhub_nn_ops.demo import network
        >>> network(gh.Variable(np.zeros((2, 1, 8, 8), np.float32), need_grad=False)).shape
        (2, 10)
        >>> [tuple(p.shape) for p in gh.get_parameters().values()][::2]
        [(8, 1, 3, 3), (16, 8, 3, 3), (64, 10)]
        >>> gh.clear_parameters()
    """
    import gradhub.functions as F
    import gradhub.parametric_functions as PF

    h = PF.convolution(x, 8, (3, 3), pad=(1, 1), rng=rng, name="conv1")
    h = F.max_pooling(F.relu(h), (2, 2))
    h = PF.convolution(h, 16, (3, 3), pad=(1, 1), rng=rng, name="conv2")
    h = F.max_pooling(F.relu(h), (2, 2))
    return PF.affine(h, 10, rng=rng, name="pred")


def loss_fn(logits: Variable, labels: Variable) -> Variable:
    """Mean softmax cross entropy of ``logits (B, 10)`` against ``labels (B, 1)``:
    ``mean_b (logsumexp(logits_b) - logits_b[label_b])``.

    Example::

        >>> import numpy as np, gradhub as gh
        >>> from gradhub_nn_ops.demo import loss_fn
        >>> labels = gh.Variable(np.array([[1], [7]]), need_grad=False)
        >>> round(loss_fn(gh.Variable(np.zeros((2, 10))), labels).item(), 6)  # log(10)
        2.302585
    """
    import gradhub.functions as F

    return F.mean(F.softmax_cross_entropy(logits, labels))


def gradient_penalty(grads: list[Variable]) -> Variable:
    """``sum_p sqrt(sum(g_p ** 2) + eps)``: the sum of the gradients' L2 norms (differentiable).

    Example::

        >>> import gradhub as gh
        >>> from gradhub_nn_ops.demo import gradient_penalty
        >>> p = gradient_penalty([gh.Variable([3.0, 4.0]), gh.Variable([[1.0, 0.0]])])
        >>> round(p.item(), 4)
        6.0
    """
    import gradhub.functions as F

    total: Any = 0.0
    for g in grads:
        total = total + (F.sum(g**2) + PENALTY_EPS) ** 0.5
    return total


@contextlib.contextmanager
def _own_parameters() -> Iterator[None]:
    """Run with an empty parameter table; put the caller's parameters back afterwards."""
    from gradhub.parameters import clear_parameters, get_parameters, set_parameter

    saved = get_parameters(grad_only=False)
    clear_parameters()
    try:
        yield
    finally:
        clear_parameters()
        for name, p in saved.items():
            set_parameter(name, p)


def _evaluate(x: np.ndarray, y: np.ndarray, dev: Any, batch: int = 512) -> tuple[float, float]:
    """Held-out (loss, accuracy), without recording a graph."""
    import gradhub as gh

    total = 0.0
    correct = 0
    with gh.no_grad():
        for i in range(0, len(y), batch):
            xb = gh.Variable(dev.asarray(x[i : i + batch]), need_grad=False)
            tb = gh.Variable(dev.asarray(y[i : i + batch]), need_grad=False)
            logits = network(xb)
            total += float(loss_fn(logits, tb).item()) * len(tb)
            pred = np.argmax(logits.numpy(), axis=1)
            correct += int(np.sum(pred == y[i : i + batch, 0]))
    return total / len(y), correct / len(y)


def _move_parameters(dev: Any) -> None:
    """Put every parameter's data on ``dev`` (parameters are initialised on the host)."""
    from gradhub.parameters import get_parameters, set_parameter
    from gradhub.variable import Variable

    for name, p in get_parameters(grad_only=False).items():
        if type(p.d) is not type(dev.asarray(np.zeros(0, dtype=np.float32))):
            set_parameter(name, Variable(dev.asarray(p.numpy()), need_grad=p.need_grad, name=name))


def _all(grads: list[Variable | None]) -> list[Variable]:
    """``gh.grad`` results with the default ``unreachable="zero"``: never None."""
    return [g for g in grads if g is not None]


def _distributed_step(
    comm: Any, cb: Any, loss: Variable, params: list[Variable], penalty_weight: float
) -> tuple[list[Variable], float]:
    """The all-reduced gradients of ``loss + penalty_weight * P`` over the whole minibatch, and
    ``P`` (see :func:`run`): ``loss`` is this rank's share of the minibatch mean."""
    import gradhub as gh
    import gradhub.functions as F

    if penalty_weight > 0:
        grads = _all(gh.grad([loss], params, create_graph=True))
        whole = comm.all_reduce([g.d for g in grads], division=True, inplace=False)
        norms = [float(np.sqrt(np.sum(a.astype(np.float64) ** 2) + PENALTY_EPS)) for a in whole]
        surrogate: Any = loss
        for g, a, n in zip(grads, whole, norms):
            v = gh.Variable((a / n).astype(a.dtype), need_grad=False)
            surrogate = surrogate + F.sum(g * v) * penalty_weight
        found = gh.grad([surrogate], params, create_graph=False, communicator_callbacks=cb)
        return _all(found), float(sum(norms))
    updates = _all(gh.grad([loss], params, create_graph=False, communicator_callbacks=cb))
    pen = sum(np.sqrt(np.sum(g.numpy().astype(np.float64) ** 2) + PENALTY_EPS) for g in updates)
    return updates, float(pen)


def run(
    device: str = DEFAULTS["device"],
    epochs: int = DEFAULTS["epochs"],
    batch_size: int = DEFAULTS["batch_size"],
    seed: int = DEFAULTS["seed"],
    lr: float = DEFAULTS["lr"],
    penalty_weight: float = DEFAULTS["penalty_weight"],
    max_batches: int | None = None,
    plot: str | None = None,
    console: Console | None = None,
    distributed: bool = False,
) -> DemoResult:
    """Train the seed network with the gradient-norm penalty; return curves and accuracy.

    ``device``: a device name for :func:`gradhub.get_extension_context`. ``max_batches``: stop
    each epoch early (for quick runs). ``plot``: save the loss and penalty curves to this PNG
    (checked before training: :class:`PlotError` when it cannot be written).
    ``console``: a rich console to show progress and results on (None: silent). The caller's
    parameters (``gh.get_parameters()``) are left untouched.

    ``distributed=True`` (run under ``mpiexec -n P``) trains data-parallel with the communicator
    ``gh.distributed.communicator("mpi")`` (from gradhub-mpi; an error says what to install):
    each rank computes the loss of its part of every minibatch (weighted by its share, so that
    the sum over ranks is the mean over the minibatch), and the gradients are all-reduced while
    backward runs. The penalty needs the gradient of the whole minibatch: each rank all-reduces
    its first gradients ``g``, and differentiates ``L + lambda * sum_p <g_p, v_p>`` with the
    constants ``v_p = g_p / ||g_p||`` of the all-reduced ``g``, whose all-reduced gradient is that
    of ``L + lambda * P`` over the whole minibatch. The result equals the single-process run at
    the same ``batch_size`` up to rounding; only rank 0 shows progress (``console``).

    Example::

        >>> from gradhub_nn_ops.demo import run
        >>> r = run(epochs=4)  # doctest: +SKIP
        >>> r.accuracy >= 0.9  # doctest: +SKIP
        True
    """
    import gradhub as gh
    from gradhub.device import context_device
    from gradhub.optim import Adam

    for name, value in (("epochs", epochs), ("batch_size", batch_size)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"demo: {name} must be a positive integer, got {value!r}")
    if max_batches is not None and max_batches < 1:
        raise ValueError(f"demo: max_batches must be a positive integer, got {max_batches!r}")
    if not lr > 0:
        raise ValueError(f"demo: lr must be positive, got {lr!r}")
    if not penalty_weight >= 0:
        raise ValueError(f"demo: penalty_weight must be >= 0, got {penalty_weight!r}")
    check_dependencies(plot=plot is not None)
    comm = None
    if distributed:
        comm = gh.distributed.communicator("mpi")  # CommunicatorError: what to install or run
        if comm.rank != 0:
            console, plot = None, None
    if plot is not None:
        check_plot_path(plot)  # before training: a bad path must not cost the run
    t_start = time.perf_counter()
    ctx = gh.get_extension_context(device)  # DeviceError saying what to install / why unusable
    x_train, y_train, x_test, y_test = load_digits_split(seed)
    rng = np.random.default_rng(seed)
    n_steps = -(-len(y_train) // batch_size)
    if max_batches is not None:
        n_steps = min(n_steps, max_batches)
    if comm is not None and (batch_size < comm.size or 0 < len(y_train) % batch_size < comm.size):
        raise ValueError(
            f"demo: with {comm.size} ranks every minibatch needs at least {comm.size} images; "
            f"batch_size {batch_size} leaves {len(y_train) % batch_size or batch_size} for one"
        )

    with _own_parameters(), contextlib.ExitStack() as stack:
        # create the parameters on the host from a seeded generator, then move them to the device
        with gh.no_grad():
            network(gh.Variable(x_train[:1], need_grad=False), rng=np.random.RandomState(seed))
        stack.enter_context(gh.context_scope(ctx))
        dev = context_device()
        _move_parameters(dev)
        params = list(gh.get_parameters().values())
        names = list(gh.get_parameters().keys())
        cb = None
        if comm is not None:
            comm.bcast(params, root=0)  # the same start on every rank
            cb = comm.all_reduce_callback(params, division=True)
        result = DemoResult(
            device=ctx.device_name,
            epochs=epochs,
            batch_size=batch_size,
            seed=seed,
            lr=lr,
            penalty_weight=penalty_weight,
            n_train=len(y_train),
            n_test=len(y_test),
            n_parameters=int(sum(p.size for p in params)),
            ranks=1 if comm is None else comm.size,
            rank=0 if comm is None else comm.rank,
        )
        if console is not None:
            _show_header(console, result, names, params)
        result.initial_test_loss, _ = _evaluate(x_test, y_test, dev)
        opt = Adam(params, lr=lr)
        progress = _progress(console)
        with progress:
            for epoch in range(epochs):
                task = progress.add_task(
                    f"epoch {epoch + 1}/{epochs}",
                    total=n_steps,
                    loss=float("nan"),
                    penalty=float("nan"),
                )
                order = rng.permutation(len(y_train))
                losses, penalties = [], []
                for step in range(n_steps):
                    idx = order[step * batch_size : (step + 1) * batch_size]
                    if comm is not None:
                        whole = len(idx)
                        idx = np.array_split(idx, comm.size)[comm.rank]
                    xb = gh.Variable(dev.asarray(x_train[idx]), need_grad=False)
                    tb = gh.Variable(dev.asarray(y_train[idx]), need_grad=False)
                    loss = loss_fn(network(xb), tb)
                    if comm is not None:
                        loss = loss * (len(idx) * comm.size / whole)  # this rank's share
                        updates, pen = _distributed_step(comm, cb, loss, params, penalty_weight)
                    elif penalty_weight > 0:
                        grads = _all(gh.grad([loss], params, create_graph=True))
                        penalty = gradient_penalty(grads)
                        total = loss + penalty * penalty_weight
                        updates = _all(gh.grad([total], params, create_graph=False))
                        pen = float(penalty.item())
                    else:  # no penalty: first-order gradients, the penalty is only reported
                        updates = _all(gh.grad([loss], params, create_graph=False))
                        pen = float(
                            sum(
                                np.sqrt(np.sum(g.numpy().astype(np.float64) ** 2) + PENALTY_EPS)
                                for g in updates
                            )
                        )
                    opt.update(updates)
                    lv = float(loss.item())
                    if comm is not None:  # the mean over the whole minibatch
                        lv = float(comm.all_reduce(np.array([lv]), division=True)[0])
                    losses.append(lv)
                    penalties.append(pen)
                    progress.update(
                        task,
                        advance=1,
                        loss=float(np.mean(losses)),
                        penalty=float(np.mean(penalties)),
                    )
                result.batch_loss += losses
                result.batch_penalty += penalties
                result.epoch_loss.append(float(np.mean(losses)))
                result.epoch_penalty.append(float(np.mean(penalties)))
        result.test_loss, result.accuracy = _evaluate(x_test, y_test, dev)
        result.parameters = {n: p.numpy().copy() for n, p in zip(names, params)}
    result.seconds = time.perf_counter() - t_start
    if plot is not None:
        try:
            save_plot(result, plot)
        except (OSError, ValueError, RuntimeError) as e:  # disk full, removed folder, ...
            if console is not None:
                _show_footer(console, result)
            raise PlotError(
                f"could not save the curves to {plot!r} after training "
                f"({type(e).__name__}: {e}); the results above are not affected",
                result,
            ) from e
        result.plot = plot
    if console is not None:
        _show_footer(console, result)
    return result


def save_plot(result: DemoResult, path: str) -> None:
    """Save the per-batch loss and penalty curves (with epoch means) as a PNG file.

    Example::

        >>> from gradhub_nn_ops.demo import run, save_plot
        >>> save_plot(run(epochs=2), "curves.png")  # doctest: +SKIP
    """
    check_dependencies(plot=True)
    from matplotlib.figure import Figure  # no pyplot: no global backend state is touched

    fig = Figure(figsize=(9, 3.5), layout="constrained")
    steps = np.arange(1, len(result.batch_loss) + 1)
    per_epoch = len(result.batch_loss) // max(len(result.epoch_loss), 1)
    mids = per_epoch * (np.arange(len(result.epoch_loss)) + 0.5)  # epoch means at mid-epoch
    for k, (title, batch, epoch) in enumerate(
        (
            ("cross-entropy loss", result.batch_loss, result.epoch_loss),
            (
                f"gradient-norm penalty (weight {result.penalty_weight:g})",
                result.batch_penalty,
                result.epoch_penalty,
            ),
        )
    ):
        ax = fig.add_subplot(1, 2, k + 1)
        ax.plot(steps, batch, lw=0.8, alpha=0.6, label="minibatch")
        ax.plot(mids, epoch, "o-", label="epoch mean")
        ax.set_xlabel("step")
        ax.set_title(title)
        ax.legend()
    fig.suptitle(f"gradhub demo: digits, held-out accuracy {result.accuracy:.3f} ({result.device})")
    fig.savefig(path, dpi=100)


def _progress(console: Console | None) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.4f}  penalty {task.fields[penalty]:.4f}"),
        TimeElapsedColumn(),
        console=console,
        disable=console is None,
    )


def _show_header(console: Console, r: DemoResult, names: list[str], params: list[Any]) -> None:
    shapes = ", ".join(f"{n} {tuple(p.shape)}" for n, p in zip(names, params))
    console.print(
        f"[bold]gradhub demo[/]: digits (8x8), {r.n_train} train / {r.n_test} held-out, "
        f"device {r.device}, seed {r.seed}\n"
        "network: conv(8, 3x3) relu maxpool(2) conv(16, 3x3) relu maxpool(2) affine(10), "
        f"{r.n_parameters} parameters\n"
        f"  {shapes}\n"
        "loss: mean softmax cross entropy + "
        f"{r.penalty_weight:g} * sum_p sqrt(sum((dL/dp)^2))   "
        "[dim](gradient penalty through gh.grad(create_graph=True))[/]\n"
        f"optimizer: Adam lr {r.lr:g}, batch size {r.batch_size}, {r.epochs} epoch(s)",
        highlight=False,
    )


def _show_footer(console: Console, r: DemoResult) -> None:
    style = "green" if r.accuracy >= 0.9 else "yellow"
    console.print(
        f"held-out loss {r.initial_test_loss:.4f} -> {r.test_loss:.4f}, "
        f"[bold {style}]held-out accuracy {r.accuracy:.4f}[/] "
        f"({round(r.accuracy * r.n_test)}/{r.n_test}) in {r.seconds:.1f}s",
        highlight=False,
    )
    if r.plot:
        console.print(f"curves saved to {r.plot}", highlight=False, markup=False)


# -- the command ``gradhub demo`` ---------------------------------------------------------------

#: the ``help`` and ``description`` of ``gradhub demo``
COMMAND_HELP = "train the seed network on handwritten digits"
COMMAND_DESCRIPTION = (
    "Train conv-relu-maxpool x2 + affine with softmax cross entropy and a gradient-norm penalty "
    "on scikit-learn's digits, then report the held-out accuracy. Needs the extra 'demo' of "
    "gradhub-nn-ops (scikit-learn); --plot needs its extra 'plot' (matplotlib)."
)


def add_arguments(d: argparse.ArgumentParser) -> None:
    """Add the options of ``gradhub demo`` (the arguments of :func:`run`) to its parser."""
    from gradhub.cli import non_negative_float, positive_float, positive_int

    d.add_argument(
        "--device",
        default=DEFAULTS["device"],
        help=f"device to train on (default {DEFAULTS['device']})",
    )
    d.add_argument(
        "--epochs",
        type=positive_int,
        default=DEFAULTS["epochs"],
        help=f"passes over the training set (default {DEFAULTS['epochs']})",
    )
    d.add_argument(
        "--batch-size",
        type=positive_int,
        default=DEFAULTS["batch_size"],
        help=f"minibatch size (default {DEFAULTS['batch_size']})",
    )
    d.add_argument(
        "--seed",
        type=int,
        default=DEFAULTS["seed"],
        help=f"random seed of the split, initialisation and shuffling (default {DEFAULTS['seed']})",
    )
    d.add_argument(
        "--lr",
        type=positive_float,
        default=DEFAULTS["lr"],
        help=f"Adam learning rate (default {DEFAULTS['lr']})",
    )
    d.add_argument(
        "--penalty-weight",
        type=non_negative_float,
        default=DEFAULTS["penalty_weight"],
        help="weight of the gradient-norm penalty sum_p ||dL/dp|| "
        f"(default {DEFAULTS['penalty_weight']})",
    )
    d.add_argument(
        "--max-batches",
        type=positive_int,
        default=None,
        help="stop each epoch after this many minibatches (for quick runs)",
    )
    d.add_argument(
        "--plot",
        metavar="FILE",
        default=None,
        help="save the loss and penalty curves to this PNG file",
    )
    d.add_argument(
        "--distributed",
        action="store_true",
        help="train data-parallel on the MPI ranks (run under mpiexec -n P; needs gradhub-mpi); "
        "--batch-size is the global minibatch, split between the ranks",
    )
    d.add_argument("--json", action="store_true", help="print the results as JSON")


def run_command(args: argparse.Namespace) -> int:
    """Run ``gradhub demo`` with its parsed options; return the exit status (2 on a usage error:
    a missing optional dependency or a ``--plot`` file that cannot be written)."""
    import sys

    from gradhub.cli import EXIT_OK, EXIT_USAGE, console, print_json
    from gradhub.distributed import CommunicatorError

    try:
        check_dependencies(plot=args.plot is not None)
    except MissingDependency as e:
        sys.stderr.write(f"gradhub demo: {e}\n")
        return EXIT_USAGE
    con = None if args.json else console()
    try:
        result = run(
            device=args.device,
            epochs=args.epochs,
            batch_size=args.batch_size,
            lr=args.lr,
            penalty_weight=args.penalty_weight,
            seed=args.seed,
            max_batches=args.max_batches,
            plot=args.plot,
            console=con,
            distributed=args.distributed,
        )
    except CommunicatorError as e:
        sys.stderr.write(f"gradhub demo: error: --distributed: {e}\n")
        return EXIT_USAGE
    except PlotError as e:
        if args.json and e.result is not None:  # saving failed after training: keep the results
            print_json(e.result.as_dict())
        sys.stderr.write(f"gradhub demo: error: --plot: {e}\n")
        return EXIT_USAGE
    if args.json and result.rank == 0:
        print_json(result.as_dict())
    return EXIT_OK

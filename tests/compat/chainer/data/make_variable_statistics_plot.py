"""``VariableStatisticsPlot`` scenarios run by chainer 7.8.1 and by gradhub's chainer layer on
the same code, with a stand-in matplotlib that records every pyplot call.

``python make_variable_statistics_plot.py variable_statistics_plot_chainer.json`` run in an
environment with chainer 7.8.1 (not gradhub), from this directory, writes the reference (the
committed file was written so, by chainer 7.8.1 with numpy 1.26, without a real matplotlib:
the stand-in below is installed first, so chainer's extension takes matplotlib as available).
``tests/compat/chainer/test_variable_statistics_plot.py`` runs :func:`run_all` with gradhub's
modules and the same stand-in, and compares the sampled statistics (indices, rows), the files
written and the recorded plot calls.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import types
from typing import Any

import numpy as np

#: the calls recorded by the stand-in pyplot: ("plt" | "ax" | "fig", ...) tuples of plain values
LOG: list[Any] = []


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return [_plain(x) for x in v.tolist()] if v.ndim else v.item()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in sorted(v.items())}
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return v


class _Ax:
    def __init__(self, r: int, c: int) -> None:
        self.rc = [r, c]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def call(*a: Any, **k: Any) -> None:
            LOG.append(["ax", self.rc, name, _plain(list(a)), _plain(k)])

        return call


class _Fig:
    def savefig(self, path: str, *a: Any, **k: Any) -> None:
        LOG.append(["fig", "savefig", os.path.basename(path), _plain(list(a)), _plain(k)])
        open(path, "wb").close()


def _subplots(nrows: int = 1, ncols: int = 1, **k: Any) -> tuple[_Fig, Any]:
    # matplotlib's squeeze=True: one Axes, a 1-D array for one row or column, else 2-D
    LOG.append(["plt", "subplots", [nrows, ncols], _plain(k)])
    axes = np.empty((nrows, ncols), dtype=object)
    for r in range(nrows):
        for c in range(ncols):
            axes[r, c] = _Ax(r, c)
    if nrows == 1 and ncols == 1:
        return _Fig(), axes[0, 0]
    if nrows == 1 or ncols == 1:
        return _Fig(), axes.ravel()
    return _Fig(), axes


def _close(*a: Any, **k: Any) -> None:
    LOG.append(["plt", "close", _plain(list(a)), _plain(k)])


def _to_rgba(c: str, alpha: float | None = None) -> tuple[float, ...]:
    c = c.lstrip("#")
    return (*(int(c[i : i + 2], 16) / 255 for i in (0, 2, 4)), 1.0 if alpha is None else alpha)


def stand_in_modules() -> dict[str, types.ModuleType]:
    """``matplotlib``, ``matplotlib.colors`` (``to_rgba`` of hex colours) and
    ``matplotlib.pyplot`` (``subplots`` and ``close``; the axes and figure record their calls
    in :data:`LOG`), to put into ``sys.modules``."""
    mpl = types.ModuleType("matplotlib")
    colors = types.ModuleType("matplotlib.colors")
    colors.to_rgba = _to_rgba  # type: ignore[attr-defined]
    plt = types.ModuleType("matplotlib.pyplot")
    plt.subplots = _subplots  # type: ignore[attr-defined]
    plt.close = _close  # type: ignore[attr-defined]
    mpl.colors = colors  # type: ignore[attr-defined]
    mpl.pyplot = plt  # type: ignore[attr-defined]
    return {"matplotlib": mpl, "matplotlib.colors": colors, "matplotlib.pyplot": plt}


class _Updater:
    def __init__(self) -> None:
        self.iteration = 0
        self.epoch_detail = 0.0


def _linear(L: Any, seed: int) -> Any:
    rng = np.random.RandomState(seed)
    link = L.Linear(4, 3)
    link.W.array[...] = rng.randn(3, 4).astype(np.float32)
    link.b.array[...] = rng.randn(3).astype(np.float32)
    return link


def run_all(chainer: Any, L: Any, extensions: Any) -> dict[str, Any]:
    """Run every scenario; for each the sample (``idxs``, ``data``, ``counter``), the files
    written at each call and the pyplot calls, or the error raised (``error``)."""
    results: dict[str, Any] = {}
    out = tempfile.mkdtemp()

    def run(name: str, make: Any, steps: Any, mutate: Any) -> None:
        LOG.clear()
        try:
            ext = make()
            trainer = types.SimpleNamespace(updater=_Updater(), out=out)
            files = []
            for it in steps:
                trainer.updater.iteration = it
                trainer.updater.epoch_detail = it / 4
                mutate(it)
                ext(trainer)
                files.append(sorted(os.listdir(out)))
                for f in os.listdir(out):
                    os.remove(os.path.join(out, f))
        except Exception as e:
            results[name] = {"error": [type(e).__name__, str(e)]}
            return
        idxs, data = ext._samples.get_data()
        results[name] = {
            "idxs": idxs.tolist(),
            "data": data.tolist(),
            "counter": ext._samples.counter,
            "files": files,
            "log": list(LOG),
        }

    # a Linear link, defaults but the plot every 2 iterations; the gradients are chainer's
    # initial NaN until the second iteration
    lin = _linear(L, 0)
    rng = np.random.RandomState(42)

    def grads(it: int) -> None:
        if it >= 2:
            lin.W.grad = rng.randn(3, 4).astype(np.float32)
            lin.b.grad = rng.randn(3).astype(np.float32)
        lin.W.array[...] += 0.1

    run(
        "linear",
        lambda: extensions.VariableStatisticsPlot(lin, trigger=(2, "iteration")),
        range(1, 6),
        grads,
    )

    # Variables in a nested list, no std, one percentile as a number, file_name=, iteration 0
    v1 = chainer.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    v2 = chainer.Variable(np.array([10.0, -3.0], np.float32))
    v2.grad = np.array([1.0, 2.0], np.float32)

    def scale(it: int) -> None:
        v1.array[...] *= 1.5

    run(
        "vars",
        lambda: extensions.VariableStatisticsPlot(
            [v1, [v2]],
            plot_std=False,
            percentile_sigmas=25,
            file_name="x.png",
            trigger=(1, "iteration"),
            marker="o",
            grid=False,
            figsize=(4, 3),
        ),
        [0, 1, 2],
        scale,
    )

    # the reservoir past its size, drawing from numpy's seeded global generator
    def move(it: int) -> None:
        v2.array[...] = np.array([it, -it * 0.5], np.float32)

    def reservoir() -> Any:
        np.random.seed(3)
        return extensions.VariableStatisticsPlot(
            v2,
            max_sample_size=3,
            report_grad=False,
            plot_mean=False,
            percentile_sigmas=(),
            trigger=(5, "iteration"),
        )

    run("reservoir", reservoir, range(1, 11), move)

    # a Chain (a cleared and a set gradient), gradients only, mean only, 4 percentiles
    chain = chainer.Chain()
    with chain.init_scope():
        chain.a = _linear(L, 3)
        chain.b = _linear(L, 4)
    chain.a.cleargrads()
    chain.b.W.grad = np.full((3, 4), 0.5, np.float32)
    chain.b.b.grad = np.array([1, 2, 3], np.float32)
    run(
        "chain_even",
        lambda: extensions.VariableStatisticsPlot(
            chain,
            report_data=False,
            plot_std=False,
            percentile_sigmas=(10, 90, 30, 70),
            trigger=(1, "iteration"),
        ),
        [1, 2],
        lambda it: None,
    )
    # percentiles only (one row of plots), an epoch trigger
    run(
        "pct_only",
        lambda: extensions.VariableStatisticsPlot(
            chain.b,
            plot_mean=False,
            plot_std=False,
            percentile_sigmas=[0, 50, 100],
            trigger=(1, "epoch"),
        ),
        range(1, 6),
        lambda it: None,
    )
    # uninitialized parameters: the gradient raises, the data is skipped (zeros)
    run(
        "uninit",
        lambda: extensions.VariableStatisticsPlot(L.Linear(None, 3), trigger=(1, "iteration")),
        [1],
        lambda it: None,
    )
    run(
        "uninit_data",
        lambda: extensions.VariableStatisticsPlot(
            L.Linear(None, 3), report_grad=False, trigger=(1, "iteration")
        ),
        [1],
        lambda it: None,
    )
    # neither data nor gradient: empty rows, a figure of no column
    run(
        "nokeys",
        lambda: extensions.VariableStatisticsPlot(
            v2, report_data=False, report_grad=False, trigger=(1, "iteration")
        ),
        [1],
        lambda it: None,
    )
    # float64 data (statistics stored as float32), no gradient
    v3 = chainer.Variable(np.linspace(-1, 2, 7))
    run(
        "f64",
        lambda: extensions.VariableStatisticsPlot(v3, trigger=(1, "iteration")),
        [1],
        lambda it: None,
    )
    # the errors of the constructor
    run("no_targets", lambda: extensions.VariableStatisticsPlot([]), [], None)
    run("not_a_target", lambda: extensions.VariableStatisticsPlot(3), [], None)
    run(
        "nothing_to_plot",
        lambda: extensions.VariableStatisticsPlot(
            v1, plot_mean=False, plot_std=False, percentile_sigmas=()
        ),
        [],
        None,
    )
    return results


if __name__ == "__main__":
    sys.modules.update(stand_in_modules())
    import chainer
    import chainer.links
    from chainer.training import extensions

    with open(sys.argv[1], "w") as f:
        json.dump(run_all(chainer, chainer.links, extensions), f)

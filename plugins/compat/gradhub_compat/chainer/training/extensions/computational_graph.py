"""chainer's ``dump_graph``/``DumpGraph`` extension (chainer 7.8.1
``training/extensions/computational_graph.py`` and ``chainer/computational_graph.py``): the graph
of a reported Variable written in Graphviz DOT."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import numpy as np
from gradhub.variable import Variable as _NativeVariable

from ... import config
from .._summary import is_writer
from ..extension import Extension

__all__ = ["DumpGraph", "dump_graph", "is_graphviz_available", "is_return_code_zero"]

_var_style = {"shape": "octagon", "fillcolor": "#E0E0E0", "style": "filled"}
_func_style = {"shape": "record", "fillcolor": "#6495ED", "style": "filled"}


def is_return_code_zero(args: list[str]) -> bool:
    """Whether the command ``args`` runs and exits with status 0 (chainer's helper): its output
    and errors are discarded; a command that cannot be started gives False.

    Example::

        >>> import sys
        >>> is_return_code_zero([sys.executable, "-c", "pass"])
        True
        >>> is_return_code_zero([sys.executable, "-c", "raise SystemExit(3)"])
        False
    """
    try:
        subprocess.check_call(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (subprocess.CalledProcessError, OSError):
        return False
    return True


def is_graphviz_available() -> bool:
    """Whether Graphviz's ``dot`` runs (``dot -V`` exits with 0), as chainer's helper."""
    return is_return_code_zero(["dot", "-V"])


def _shape_label(shape: tuple[int, ...], dtype: Any) -> str:
    """chainer's ``VariableNode.label``: ``(2, 3), float32``, or the dtype for a 0-d value."""
    if tuple(shape) == ():
        return str(np.dtype(dtype))
    return "({}), {}".format(", ".join(map(str, shape)), np.dtype(dtype))


def _attributes(label: str, base: dict[str, str], style: dict[str, str]) -> str:
    attrs = {"label": label, **base, **style}
    return ",".join(f'{k}="{v}"' for k, v in attrs.items())


def graph_to_dot(
    output: _NativeVariable,
    variable_style: dict[str, str] | None = None,
    function_style: dict[str, str] | None = None,
    rankdir: str = "TB",
    show_name: bool = True,
) -> str:
    """The graph that made ``output``, in chainer's DOT text: ``digraph graphname{rankdir=TB;``,
    one node per Variable (label ``name: (shape), dtype``, octagons by default) and per function
    (label its gradhub name, records), the edges variable -> function -> variable, ``}``. The
    node ids are numbers in the order the walk from ``output`` meets them (chainer's are object
    addresses)."""
    if rankdir not in ("TB", "BT", "LR", "RL"):
        raise ValueError("rankdir must be in TB, BT, LR or RL.")
    vstyle = dict(_var_style if variable_style is None else variable_style)
    fstyle = dict(_func_style if function_style is None else function_style)
    ids: dict[Any, int] = {}
    node_lines: list[str] = []
    edges: list[str] = []

    def var_key(src: Any, idx: int) -> Any:
        return ("v", id(src)) if idx < 0 else ("o", id(src), idx)

    def add_variable(src: Any, idx: int) -> int:
        key = var_key(src, idx)
        if key in ids:
            return ids[key]
        ids[key] = len(ids)
        if idx < 0:
            label = _shape_label(src.shape, src.dtype)
            name = src.name
        else:
            label = _shape_label(src.out_shapes[idx], src.out_dtypes[idx])
            live = src.outputs[idx]() if idx < len(src.outputs) else None
            name = getattr(live, "name", None)
        if show_name and name is not None:
            label = f"{name}: {label}"
        node_lines.append(f"{ids[key]} [{_attributes(label, {'shape': 'oval'}, vstyle)}];")
        return ids[key]

    def add_function(node: Any) -> tuple[int, bool]:
        key = ("f", id(node))
        if key in ids:
            return ids[key], False
        ids[key] = len(ids)
        label = node.fdef.name
        node_lines.append(f"{ids[key]} [{_attributes(label, {'shape': 'box'}, fstyle)}];")
        return ids[key], True

    root = output._creator
    if root is None:
        add_variable(output, -1)
    else:
        out_id = add_variable(root, output._idx)
        stack = [(root, out_id)]
        while stack:
            node, produced = stack.pop()
            fid, new = add_function(node)
            edges.append(f"{fid} -> {produced};")
            if not new:
                continue
            for src, idx in zip(node.srcs, node.idxs):
                vid = add_variable(src, idx)
                edges.append(f"{vid} -> {fid};")
                if idx >= 0:
                    stack.append((src, vid))
    seen: set[str] = set()
    unique_edges = [e for e in edges if not (e in seen or seen.add(e))]  # type: ignore[func-returns-value]
    return f"digraph graphname{{rankdir={rankdir};" + "".join(node_lines + unique_edges) + "}"


class DumpGraph(Extension):
    """``DumpGraph(root_name, filename='cg.dot', variable_style=None, function_style=None)``
    (``extensions.dump_graph``): at the first iteration it writes the graph that made the
    reported Variable ``observation[root_name]`` (``'main/loss'``) to ``<out>/<filename>`` in
    chainer's DOT text (see :func:`graph_to_dot`: gradhub's function names, e.g. ``Affine``
    where chainer writes ``LinearFunction``). While it waits, ``chainer.config.
    keep_graph_on_report`` is True so that reported Variables keep their graph, as chainer's.
    Where Graphviz is installed (:func:`is_graphviz_available`), the image is rendered beside it
    as chainer does, ``dot -Tpng <filename> -o <filename without extension>.png``."""

    default_name = "dump_graph"  # type: ignore[assignment]

    def __init__(
        self,
        root_name: str,
        filename: str | None = None,
        variable_style: dict[str, str] | None = None,
        function_style: dict[str, str] | None = None,
        *,
        out_name: str = "cg.dot",
    ) -> None:
        self._root_name = root_name
        self._filename = out_name if filename is None else filename
        self._variable_style = variable_style
        self._function_style = function_style
        self._original_flag: bool | None = None
        self._flag_called = False

    def initialize(self, trainer: Any) -> None:
        """Keep the graphs of reported Variables until the dump."""
        if not self._flag_called:
            self._original_flag = getattr(config, "keep_graph_on_report", False)
            config.keep_graph_on_report = True

    def trigger(self, trainer: Any) -> bool:  # type: ignore[override]
        """Fires once (the first iteration)."""
        if self._flag_called:
            return False
        self._flag_called = True
        return True

    def __call__(self, trainer: Any) -> None:
        try:
            var = trainer.observation[self._root_name]
            if not isinstance(var, _NativeVariable):
                raise TypeError("root value is not a Variable")
            text = graph_to_dot(var, self._variable_style, self._function_style)
            filename = os.path.join(trainer.out, self._filename)
            with open(filename, "w") as f:
                f.write(text)
            if is_graphviz_available():
                image = os.path.join(trainer.out, os.path.splitext(self._filename)[0] + ".png")
                subprocess.check_call(["dot", "-Tpng", filename, "-o", image])
        finally:
            config.keep_graph_on_report = bool(self._original_flag)

    def serialize(self, serializer: Any) -> None:
        """chainer's protocol: ``_original_flag``, ``_flag_called``."""
        if is_writer(serializer):
            if self._original_flag is not None:
                serializer("_original_flag", self._original_flag)
            serializer("_flag_called", self._flag_called)
            return
        try:
            self._original_flag = bool(serializer("_original_flag", False))
        except KeyError:
            self._original_flag = None
        self._flag_called = bool(serializer("_flag_called", False))


#: chainer's ``extensions.dump_graph`` (the same class)
dump_graph = DumpGraph

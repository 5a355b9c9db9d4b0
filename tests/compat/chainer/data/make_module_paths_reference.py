"""Writes ``module_paths_chainer.json``: the public classes and functions chainer 7.8.1 defines in
each module below ``chainer.links``, ``chainer.optimizers`` and ``chainer.training.extensions``
(the caffe and theano links skipped: their modules need protobuf/theano), which
``tests/compat/chainer/test_module_paths_more.py`` compares with the module paths of the layer.

Run it with chainer 7.8.1 from this folder::

    python make_module_paths_reference.py
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil


def _modules(package: str) -> list[str]:
    found = []
    stack = [package]
    while stack:
        pkg = importlib.import_module(stack.pop())
        for info in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."):
            if info.name.rsplit(".", 1)[-1] in ("caffe", "theano"):
                continue
            found.append(info.name)
            if info.ispkg:
                stack.append(info.name)
    return sorted(found)


def _public(name: str) -> list[str]:
    module = importlib.import_module(name)
    return sorted(
        n
        for n, obj in vars(module).items()
        if not n.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and getattr(obj, "__module__", None) == name
    )


def main() -> None:
    import chainer

    out = {"chainer": chainer.__version__}
    for package in ("chainer.links", "chainer.optimizers", "chainer.training.extensions"):
        for name in _modules(package):
            out[name] = _public(name)
    with open("module_paths_chainer.json", "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

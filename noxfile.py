"""nox sessions: one per task. ``nox -l`` lists them."""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "tests"]
PACKAGES = [
    "-e",
    ".[test]",
    "-e",
    "./plugins/nn_ops",
    "-e",
    "./plugins/cuda",
    "-e",
    "./plugins/compat[h5,images]",
    "-e",
    "./plugins/mpi[mpich]",
]


@nox.session
def tests(session: nox.Session) -> None:
    """Install the five distributions and run the test suite (warnings are errors)."""
    session.install(*PACKAGES)
    session.run("pytest", *session.posargs)


@nox.session
def tests_core(session: nox.Session) -> None:
    """Install the core alone (``-e .[test]``, no plugin) and run its tests, ``tests/core``: the
    Variable operators, the engine, the optimizers and the audit must need no plugin."""
    session.install("-e", ".[test]")
    session.run("pytest", "tests/core", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Run ruff over the whole tree: the lint rules, and the formatting (``ruff format --check``;
    ``ruff format .`` formats)."""
    session.install("ruff>=0.5")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Type-check the five distributions with mypy."""
    session.install("mypy==2.4.1", *PACKAGES)
    session.run(
        "mypy",
        "--ignore-missing-imports",
        "core/gradhub",
        "plugins/nn_ops/gradhub_nn_ops",
        "plugins/cuda/gradhub_cuda",
        "plugins/compat/gradhub_compat",
        "plugins/mpi/gradhub_mpi",
    )


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation (HTML) and run its examples (doctest), warnings as errors."""
    session.install("-r", "docs/requirements.txt")
    session.install("-e", ".", "-e", "./plugins/nn_ops", "-e", "./plugins/compat")
    session.run("sphinx-build", "-W", "--keep-going", "-b", "html", "docs", "docs/_build/html")
    session.run(
        "sphinx-build", "-W", "--keep-going", "-b", "doctest", "docs", "docs/_build/doctest"
    )


def _printed(session: nox.Session, *args: str, external: bool = False) -> str:
    """The last line a command printed (``""`` where it printed nothing)."""
    out = session.run(*args, external=external, silent=True)
    lines = str(out).strip().splitlines() if out else []
    return lines[-1] if lines else ""


@nox.session
def sanitize(session: nox.Session) -> None:
    """Run the tests of gradhub-nn-ops' compiled CPU kernels (its C extension) with the extension
    built under AddressSanitizer and UndefinedBehaviorSanitizer: an out-of-bounds read or write,
    or undefined behaviour, in a kernel stops the run with the sanitizer's report. The packages are
    installed (not editable), the installed extension is replaced by the sanitized build of the
    same sources, and the sanitizer runtimes are preloaded into the test process and its children.
    Needs a C compiler with the sanitizer runtimes (gcc or clang: ``cc``)."""
    session.install(".[test]", "./plugins/nn_ops")
    target = _printed(
        session,
        "python",
        "-c",
        "import importlib.util as u; s = u.find_spec('gradhub_nn_ops._native_kernels'); "
        "print(s.origin if s else '')",
    )
    if not target.endswith(".so"):
        session.error(f"sanitize: the C extension was not built by the install (found {target!r})")
    include = _printed(
        session, "python", "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"
    )
    session.run(
        "cc",
        "-O1",
        "-g",
        "-fno-omit-frame-pointer",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=undefined",
        "-Wno-psabi",
        "-shared",
        "-fPIC",
        f"-I{include}",
        "plugins/nn_ops/gradhub_nn_ops/_native/native.c",
        "-o",
        target,
        external=True,
    )
    runtimes = []
    for name in ("libasan.so", "libubsan.so"):
        path = _printed(session, "cc", f"-print-file-name={name}", external=True)
        if not path.startswith("/"):
            session.error(f"sanitize: the compiler has no {name} (cc -print-file-name={name})")
        runtimes.append(path)
    session.run(
        "python",
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "tests/nn_ops/test_native.py",
        "tests/nn_ops/test_conv_kernels.py",
        "tests/nn_ops/test_pooling.py",
        "tests/nn_ops/test_convolution.py",
        "tests/nn_ops/test_activations.py",
        *session.posargs,
        env={
            "LD_PRELOAD": " ".join(runtimes),
            "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1",
            "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
        },
    )


@nox.session
def demo(session: nox.Session) -> None:
    """Install gradhub with the function library and run the main job, ``gradhub demo`` (a
    command of gradhub-nn-ops, with its extra ``demo``)."""
    session.install("-e", ".", "-e", "./plugins/nn_ops[demo]")
    session.run("gradhub", "demo", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Run the benchmark suite (not part of the tests): W1-W7 against PyTorch CPU and hand-written
    numpy in one run, every output checked against PyTorch before timings count; prints a markdown
    table of medians, ratios and targets. Options after ``--`` go to benchmarks/run.py, e.g.
    ``--quick``, ``--rounds 5``, ``--workloads tiny_ops,mlp``, ``--markdown FILE``,
    ``--device cuda`` (needs a CUDA build of torch and gradhub-cuda[cuda12])."""
    session.install(*PACKAGES, "torch==2.13.0")
    session.run("python", "benchmarks/run.py", *session.posargs)

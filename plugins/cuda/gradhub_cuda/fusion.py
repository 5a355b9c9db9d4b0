"""The elementwise fuser of ``cuda``: a chain of elementwise functions in a plan (see
:mod:`gradhub.fusion`) as one generated ``cupy.ElementwiseKernel``.

:data:`EXPRESSIONS` holds, per function name, a C++ statement builder: it gets the names of the
op's arguments (inputs of the kernel or temporaries of earlier ops) and its attributes, and
returns the expression of the op's result, written as the CuPy kernels that the function's
generic kernel calls compute it (``exp(in0)`` for ``cupy.exp``, ``fabsf``/``fabs`` for
``cupy.abs``, CuPy's NaN-propagating ``maximum`` for ReLU, the same order of operations for
Sigmoid). The arithmetic goes through ``__fadd_rn`` / ``__dadd_rn`` and their kin, which the
compiler never contracts into a fused multiply-add: each operation rounds in the array's dtype as
it does in its own kernel, so the fused kernel's results are the unfused kernels' bit for bit.
A scalar attribute is written as the exact value it has in the array's dtype (the one CuPy casts a
Python scalar to). One kernel is built per kernel source (cached: chains of other shapes share
it), and CuPy compiles it at its first call, per dtype.

:data:`FUSED_CALLS` counts the fused kernels launched by plans (outside recorded device graphs),
for tests and benchmarks. A chain whose inputs are not all C-contiguous (a transposed view) runs by
its functions' own kernels, one launch each, so that its results keep the layouts CuPy's kernels
give them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gradhub.fusion import Chain, Fuser

#: fused kernels launched through plans (a test or a benchmark may reset it)
FUSED_CALLS = [0]

_PREAMBLE = """
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
__device__ inline float gh_add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double gh_add(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float gh_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ inline double gh_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ inline float gh_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double gh_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float gh_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ inline double gh_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ inline float gh_abs(float a) { return fabsf(a); }
__device__ inline double gh_abs(double a) { return fabs(a); }
__device__ inline float gh_max(float a, float b) {
  return (isnan(a) | isnan(b)) ? float(NAN) : float(max(a, b));
}
__device__ inline double gh_max(double a, double b) {
  return (isnan(a) | isnan(b)) ? double(NAN) : double(max(a, b));
}
__device__ inline float gh_min(float a, float b) {
  return (isnan(a) | isnan(b)) ? float(NAN) : float(min(a, b));
}
__device__ inline double gh_min(double a, double b) {
  return (isnan(a) | isnan(b)) ? double(NAN) : double(min(a, b));
}
template <typename F> __device__ inline F gh_sigmoid(F x) {
  F e = exp(-gh_abs(x));
  F r = gh_div(F(1), gh_add(F(1), e));
  return (x >= F(0)) ? r : gh_mul(e, r);
}
"""


def _const(val: Any, dtype: Any) -> str | None:
    """The scalar ``val`` as a C++ literal of exactly its value in ``dtype`` (None: not finite, or
    not a real number)."""
    if isinstance(val, (bool, np.bool_)) or not isinstance(
        val, (int, float, np.integer, np.floating)
    ):
        return None
    v = float(np.asarray(val).astype(dtype))  # (the cast CuPy makes of a Python scalar)
    if not math.isfinite(v):
        return None
    return f"T({v!r})"


Expr = Callable[[Sequence[str], dict[str, Any], Any], str | None]


def _unary(fn: str) -> Expr:
    return lambda a, attrs, dtype: f"{fn}({a[0]})"


def _binary(fn: str) -> Expr:
    return lambda a, attrs, dtype: f"{fn}({a[0]}, {a[1]})"


def _scalar_right(fn: str) -> Expr:
    def expr(a: Sequence[str], attrs: dict[str, Any], dtype: Any) -> str | None:
        c = _const(attrs.get("val", 1.0), dtype)
        return None if c is None else f"{fn}({a[0]}, {c})"

    return expr


def _scalar_left(fn: str) -> Expr:
    def expr(a: Sequence[str], attrs: dict[str, Any], dtype: Any) -> str | None:
        c = _const(attrs.get("val", 1.0), dtype)
        return None if c is None else f"{fn}({c}, {a[0]})"

    return expr


def _pow_scalar(a: Sequence[str], attrs: dict[str, Any], dtype: Any) -> str | None:
    # (the generic kernel's x * x for val == 2; other powers stay unfused)
    return f"gh_mul({a[0]}, {a[0]})" if attrs.get("val") == 2 else None


def _relu(a: Sequence[str], attrs: dict[str, Any], dtype: Any) -> str | None:
    return f"gh_max({a[0]}, T(0))"  # cupy.maximum(x, 0)


def _sigmoid(a: Sequence[str], attrs: dict[str, Any], dtype: Any) -> str | None:
    # the generic kernel: e = exp(-abs(x)); r = 1 / (1 + e); where(x >= 0, r, e * r)
    return f"gh_sigmoid({a[0]})"


def _compare(op: str) -> Expr:
    # the generic kernel: xp.<comparison>(x0, x1).astype(dtype): the bool as 1.0 or 0.0
    return lambda a, attrs, dtype: f"T({a[0]} {op} {a[1]})"


def _compare_scalar(op: str) -> Expr:
    def expr(a: Sequence[str], attrs: dict[str, Any], dtype: Any) -> str | None:
        c = _const(attrs.get("val", 1.0), dtype)
        return None if c is None else f"T({a[0]} {op} {c})"

    return expr


_COMPARISONS = {
    "Greater": ">",
    "GreaterEqual": ">=",
    "Less": "<",
    "LessEqual": "<=",
    "Equal": "==",
    "NotEqual": "!=",
}

#: function name -> its expression builder ``(argument names, attributes, dtype) -> C++``
#: (None: these attributes stay unfused)
EXPRESSIONS: dict[str, Expr] = {
    "Add2": _binary("gh_add"),
    "Sub2": _binary("gh_sub"),
    "Mul2": _binary("gh_mul"),
    "Div2": _binary("gh_div"),
    "AddScalar": _scalar_right("gh_add"),
    "MulScalar": _scalar_right("gh_mul"),
    "RSubScalar": _scalar_left("gh_sub"),
    "RDivScalar": _scalar_left("gh_div"),
    "PowScalar": _pow_scalar,
    "Neg": lambda a, attrs, dtype: f"(-{a[0]})",
    "Abs": _unary("gh_abs"),
    "Exp": _unary("exp"),
    "Log": _unary("log"),
    "Sin": _unary("sin"),
    "Cos": _unary("cos"),
    "Tanh": _unary("tanh"),
    "ReLU": _relu,
    "Sigmoid": _sigmoid,
    "Maximum2": _binary("gh_max"),
    "Minimum2": _binary("gh_min"),
    "MaximumScalar": _scalar_right("gh_max"),  # (cupy.maximum(x, dtype(val)))
    "MinimumScalar": _scalar_right("gh_min"),
    **{name: _compare(op) for name, op in _COMPARISONS.items()},
    **{f"{name}Scalar": _compare_scalar(op) for name, op in _COMPARISONS.items()},
}

_ATTRS_OK = {"ReLU": {"inplace"}}


def kernel_source(chain: Chain) -> tuple[str, str, str] | None:
    """``(in_params, out_params, operation)`` of the ``ElementwiseKernel`` computing ``chain``,
    or None where an op has no expression.

    Example::

        >>> import numpy as np
        >>> from gradhub.fusion import Chain, FusedOp
        >>> f32 = np.dtype(np.float32)
        >>> chain = Chain((((4,), f32),), (FusedOp("MulScalar", (("val", 0.1),), (0,)),
        ...               FusedOp("Exp", (), (1,))), (2,), (4,), f32)
        >>> kernel_source(chain)
        ('T x0', 'T y0', 'T t1 = gh_mul(x0, T(0.10000000149011612)); T t2 = exp(t1); y0 = t2;')
    """
    n = len(chain.inputs)
    names = [f"x{k}" for k in range(n)]
    body = []
    for k, op in enumerate(chain.ops):
        expr = EXPRESSIONS.get(op.name)
        if expr is None:
            return None
        attrs = dict(op.attrs)
        text = expr([names[a] for a in op.args], attrs, chain.dtype)
        if text is None:
            return None
        t = f"t{n + k}"
        names.append(t)
        body.append(f"T {t} = {text};")
    outs = [f"y{k}" for k in range(len(chain.outputs))]
    body += [f"{o} = {names[v]};" for o, v in zip(outs, chain.outputs)]
    return (
        ", ".join(f"T {x}" for x in names[:n]),
        ", ".join(f"T {o}" for o in outs),
        " ".join(body),
    )


class CudaFuser(Fuser):
    """The fuser of ``cuda`` (registered with ``register.fuser`` by the plugin)."""

    #: the device kind whose kernels run a chain with inputs that are not C-contiguous
    kind = "cuda"

    def __init__(self) -> None:
        #: the kernels built, by their source
        self.kernels: dict[tuple[str, str, str], Any] = {}

    def accepts(self, name: str, attrs: dict[str, Any], dtype: Any) -> bool:
        expr = EXPRESSIONS.get(name)
        if expr is None or any(a not in _ATTRS_OK.get(name, {"val"}) for a in attrs):
            return False
        return expr(["x0", "x1"], dict(attrs), dtype) is not None

    def build(self, chain: Chain) -> Callable[..., Sequence[Any]] | None:
        src = kernel_source(chain)
        if src is None:
            return None
        kernel = self.kernels.get(src)  # (one kernel per source: any shape, either dtype)
        if kernel is None:
            kernel = self.kernels[src] = self.compile(src)
        calls, each = FUSED_CALLS, by_kernels(chain, self.kind)

        def fused(xp: Any, *arrays: Any) -> Sequence[Any]:
            for a in arrays:
                if not a.flags.c_contiguous:
                    # (CuPy's kernels give such an input's layout to their results, the fused
                    # kernel C order: the functions' own kernels keep the unfused layouts)
                    return each(xp, *arrays)
            calls[0] += 1
            return kernel(*arrays)  # type: ignore[no-any-return]

        return fused

    def compile(self, src: tuple[str, str, str]) -> Any:
        """The ``cupy.ElementwiseKernel`` of a kernel source (compiled by CuPy at its first
        call)."""
        import cupy

        return cupy.ElementwiseKernel(*src, "gradhub_fused", preamble=_PREAMBLE, return_tuple=True)


def by_kernels(chain: Chain, kind: str) -> Callable[..., list[Any]]:
    """``chain`` computed by its functions' own kernels on the device kind ``kind``, one call
    each (what the plan runs unfused): the fused call's way for inputs that are not C-contiguous.
    """
    from gradhub.registry import REGISTRY

    ops = []
    for op in chain.ops:
        fdef = REGISTRY.get(op.name)
        ops.append(((fdef.kernels or {}).get(kind, fdef.forward), dict(op.attrs), op.args))

    def run(xp: Any, *arrays: Any) -> list[Any]:
        vals = list(arrays)
        for kernel, attrs, args in ops:
            vals.append(kernel(xp, *[vals[a] for a in args], **attrs))
        return [vals[o] for o in chain.outputs]

    return run


#: the plugin's one fuser
FUSER = CudaFuser()

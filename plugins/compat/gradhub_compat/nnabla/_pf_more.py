"""nnabla's ``PF.pow2_quantized_affine``/``_convolution``, ``PF.min_max_quantized_affine``/
``_convolution``, ``PF.svd_affine``, ``PF.svd_convolution``, ``PF.cpd3_convolution`` and the
initializers nnabla's parametric-function module re-exports (offered by
:mod:`gradhub_compat.nnabla.parametric_functions`).

The quantized layers keep nnabla 1.39's parameters (``W``, ``W_q``, ``b``, ``b_q`` and, for the
min-max ones, the ranges of ``PF.min_max_quantize`` under ``min_max_quantize_w``/``_b``), in its
order of creation and with its draws from ``rng``; the quantized values are written into
``W_q``/``b_q`` at each ``forward()`` (nnabla's ``outputs=[W_q.data]``). The low-rank layers
decompose an initial weight as nnabla does (numpy's SVD; the alternating least squares of
``nnabla.utils.factorization.cpd`` for CP) and then compose ``F.affine``,
``F.depthwise_convolution`` and ``F.convolution``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

import numpy as np
from gradhub import parameters as _parameters
from gradhub.graph import apply
from gradhub.modes import is_recording
from gradhub.registry import FunctionDef, Rule

from .._common import adopt, host_array
from . import _layer_functions as _layer
from ._auto_forward import kept_unless_auto_forward
from ._variable import Variable, _Unlinked
from .initializer import BaseInitializer, calc_uniform_lim_glorot
from .initializer import ConstantInitializer as ConstantInitializer
from .initializer import NormalInitializer as NormalInitializer
from .initializer import UniformInitializer as UniformInitializer
from .parametric_functions import _functions, parametric_function_api

__all__ = [
    "ConstantInitializer",
    "NormalInitializer",
    "UniformInitializer",
    "WeightNormalizationScaleInitializer",
    "cpd3_convolution",
    "min_max_quantized_affine",
    "min_max_quantized_convolution",
    "pow2_quantized_affine",
    "pow2_quantized_convolution",
    "svd_affine",
    "svd_convolution",
]


class WeightNormalizationScaleInitializer(BaseInitializer):
    r"""nnabla's ``WeightNormalizationScaleInitializer``: the scale ``g`` of a weight
    normalization that leaves ``w`` as it is at first,

    .. math::
        g_j = \sqrt{\sum_{i \ne dim} w_{\ldots j \ldots}^2 + \epsilon}

    (the sum over every axis of ``w`` but ``dim``), read from ``w``'s data when called, in
    float32. ``shape`` (the argument of the call) is not used, as nnabla's. Also
    ``gradhub_compat.nnabla.initializer.WeightNormalizationScaleInitializer``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> w = nn.Variable.from_numpy_array(np.array([[3.0, 0.0], [4.0, 2.0]]))
        >>> PF.WeightNormalizationScaleInitializer(w, dim=1, eps=0.0)((2,))
        array([5., 2.], dtype=float32)
    """

    def __init__(self, w: Any, dim: int = 0, eps: float = 1e-12) -> None:
        unlink = getattr(w, "get_unlinked_variable", None)
        self.w = unlink() if callable(unlink) else w
        self.dim = dim
        self.eps = eps

    def __repr__(self) -> str:
        return f"WeightNormalizationScaleInitializer(dim={self.dim}, eps={self.eps})"

    def __call__(self, shape: Sequence[int] = ()) -> np.ndarray:
        data = host_array(self.w.d)
        nd = data.ndim
        if not isinstance(self.dim, (int, np.integer)) or not -nd <= int(self.dim) < nd:
            raise ValueError(
                f"nnabla WeightNormalizationScaleInitializer: dim={self.dim!r} is out of range "
                f"for a weight of shape {data.shape}"
            )
        dim = int(self.dim) % nd
        axes = tuple(a for a in range(nd) if a != dim)
        return np.asarray(np.sqrt(np.sum(data**2, axis=axes) + self.eps), dtype=np.float32)


# -- the quantized values written into W_q / b_q --------------------------------------------------


def _write_into_kernel(xp: Any, x: Any, out: Any) -> Any:
    out[...] = x
    return x.copy()


def _write_into_bw(gy: Sequence[Any], ins: Any, *_: Any, **__: Any) -> list[Any]:
    return [gy[0], None]


def _write_into_fast(xp: Any, gy: Sequence[Any], ins: Any, *_: Any, **__: Any) -> list[Any]:
    return [gy[0], None]


WRITE_INTO = FunctionDef(
    "WriteInto",
    _write_into_kernel,
    _layer._PROVIDER,
    inputs=("x", "out"),
    rule=Rule(_write_into_bw, _layer._PROVIDER, (), (), fast=_write_into_fast),
    doc="y = x, also written into the array of `out` at each execution (nnabla's "
    "outputs=[W_q.data]); the gradient passes to x",
)


def _written(q: Any, out: Any) -> Any:
    """``q`` through a node that writes it into ``out``'s array at each execution (at the build
    only with auto_forward on, as nnabla's ``outputs=``)."""
    with kept_unless_auto_forward([out._data]):
        return adopt(apply(WRITE_INTO, (q, out), {}), Variable)


def _pow2(
    quantize: bool, sign: bool, with_zero: bool, n: int, m: int, fine: bool
) -> Callable[[Any, Any], Any] | None:
    if not quantize:
        return None
    F = _functions()
    return lambda v, out: _written(F.pow2_quantize(v, sign, with_zero, n, m, True, fine), out)


def _min_max(
    q: tuple[Any, ...],
    fine: bool,
    lo: float,
    hi: float,
    eps: float,
    fix_parameters: bool,
    scope: str,
) -> Callable[[Any, Any], Any] | None:
    """The transformation of the min-max quantized layers' weight or bias: ``PF.min_max_quantize``
    (no moving average, decay 0.999, ``ste_fine_grained=fine``) under ``scope``, written into
    ``W_q``/``b_q``. ``q`` is ``(quantize, ql_min, ql_max, min_max, qr_min_init,
    qr_max_init)``, the range's initializers defaulting to the constants ``lo`` and ``hi``."""
    quantize, ql_min, ql_max, min_max, qr_min_init, qr_max_init = q
    if not quantize:
        return None
    from ._quantized_parametric import min_max_quantize

    qr_min_init = ConstantInitializer(lo) if qr_min_init is None else qr_min_init
    qr_max_init = ConstantInitializer(hi) if qr_max_init is None else qr_max_init

    def quant(v: Any, out: Any) -> Any:
        y = min_max_quantize(
            v,
            ql_min,
            ql_max,
            0.999,
            min_max,
            False,
            qr_min_init=qr_min_init,
            qr_max_init=qr_max_init,
            ste_fine_grained=fine,
            eps=eps,
            fix_parameters=fix_parameters,
            name=scope,
        )
        return _written(y, out)

    return quant


def _min_max_wb(
    w: tuple[Any, ...], b: tuple[Any, ...], fine: tuple[bool, bool], eps: float, fix: bool
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The makers of the weight's (``w``, ``fine[0]``: ranges -2, 2 by default, under
    ``min_max_quantize_w``) and the bias' (``b``, ``fine[1]``: -6, 6, ``min_max_quantize_b``)
    :func:`_min_max` transformations, with nnabla's defaults."""
    return (
        lambda: _min_max(w, fine[0], -2.0, 2.0, eps, fix, "min_max_quantize_w"),
        lambda: _min_max(b, fine[1], -6.0, 6.0, eps, fix, "min_max_quantize_b"),
    )


@parametric_function_api("pow2_quantized_affine")
def pow2_quantized_affine(
    inp: Any,
    n_outmaps: Any,
    base_axis: int = 1,
    w_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    quantize_w: bool = True,
    sign_w: bool = True,
    with_zero_w: bool = False,
    n_w: int = 8,
    m_w: int = 2,
    ste_fine_grained_w: bool = True,
    quantize_b: bool = True,
    sign_b: bool = True,
    with_zero_b: bool = False,
    n_b: int = 8,
    m_b: int = 2,
    ste_fine_grained_b: bool = True,
) -> Any:
    r"""nnabla's ``PF.pow2_quantized_affine``: :math:`y_j = \sum_i Q(w_{ij}) x_i + Q(b_j)`,
    :math:`Q` ``F.pow2_quantize`` (powers of two up to :math:`2^m`; straight-through gradients
    into the float parameters ``pow2_quantized_affine/W`` ``(inmaps, *n_outmaps)``, Glorot
    uniform, and ``/b``, zeros). The quantized values are kept in ``/W_q`` and ``/b_q`` (no
    gradient; created with the same initializers, so drawing again from ``rng``; written at each
    ``forward()``). ``quantize_w=False``/``quantize_b=False`` use the float parameter.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.pow2_quantized_affine(nn.Variable((2, 3)), 4, rng=np.random.RandomState(0))
        >>> y.forward()
        >>> w_q = nn.get_parameters(grad_only=False)["pow2_quantized_affine/W_q"].d
        >>> bool(np.all(np.log2(abs(w_q)) == np.round(np.log2(abs(w_q)))))
        True
        >>> nn.clear_parameters()
    """
    from .parametric_functions import _quantized_affine

    return _quantized_affine(
        inp,
        n_outmaps,
        base_axis,
        w_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
        lambda: _pow2(quantize_w, sign_w, with_zero_w, n_w, m_w, ste_fine_grained_w),
        lambda: _pow2(quantize_b, sign_b, with_zero_b, n_b, m_b, ste_fine_grained_b),
    )


@parametric_function_api("pow2_quantized_conv")
def pow2_quantized_convolution(
    inp: Any,
    outmaps: int,
    kernel: Any,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    w_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    quantize_w: bool = True,
    with_zero_w: bool = False,
    sign_w: bool = True,
    n_w: int = 8,
    m_w: int = 2,
    ste_fine_grained_w: bool = True,
    quantize_b: bool = True,
    with_zero_b: bool = False,
    sign_b: bool = True,
    n_b: int = 8,
    m_b: int = 2,
    ste_fine_grained_b: bool = True,
) -> Any:
    r"""nnabla's ``PF.pow2_quantized_convolution``: ``F.convolution`` with the weight
    ``pow2_quantized_conv/W`` ``(outmaps, inmaps // group, *kernel)`` (Glorot uniform of
    ``(inmaps, outmaps, kernel)``) and the bias ``/b`` quantized by ``F.pow2_quantize`` as in
    :func:`pow2_quantized_affine` (``/W_q``, ``/b_q``):
    :math:`y_{n,a,b} = \sum_{m,i,j} Q(w_{n,m,i,j})\, x_{m,a+i,b+j} + Q(b_n)`. (As nnabla's,
    ``with_zero_w`` comes before ``sign_w`` here, after it in the affine layer.)

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.pow2_quantized_convolution(nn.Variable((2, 4, 5, 5)), 6, (3, 3), group=2)
        >>> y.shape, nn.get_parameters()["pow2_quantized_conv/W"].shape
        ((2, 6, 3, 3), (6, 2, 3, 3))
        >>> nn.clear_parameters()
    """
    from .parametric_functions import _quantized_convolution

    return _quantized_convolution(
        "pow2_quantized_convolution",
        inp,
        outmaps,
        kernel,
        pad,
        stride,
        dilation,
        group,
        False,
        w_init,
        b_init,
        base_axis,
        fix_parameters,
        rng,
        with_bias,
        lambda: _pow2(quantize_w, sign_w, with_zero_w, n_w, m_w, ste_fine_grained_w),
        lambda: _pow2(quantize_b, sign_b, with_zero_b, n_b, m_b, ste_fine_grained_b),
    )


@parametric_function_api("min_max_quantized_affine")
def min_max_quantized_affine(
    inp: Any,
    n_outmaps: Any,
    base_axis: int = 1,
    w_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    quantize_w: bool = True,
    ql_min_w: Any = 0,
    ql_max_w: Any = 255,
    w_min_max: bool = False,
    qr_min_w_init: Any = None,
    qr_max_w_init: Any = None,
    ste_fine_grained_w: bool = True,
    quantize_b: bool = True,
    ql_min_b: Any = 0,
    ql_max_b: Any = 255,
    b_min_max: bool = False,
    qr_min_b_init: Any = None,
    qr_max_b_init: Any = None,
    ste_fine_grained_b: bool = True,
    eps: float = 0.01,
) -> Any:
    r"""nnabla's ``PF.min_max_quantized_affine``: :math:`y_j = \sum_i Q(w_{ij}) x_i + Q(b_j)`,
    :math:`Q` ``PF.min_max_quantize`` (no moving average, decay 0.999) with its ranges under
    ``min_max_quantized_affine/min_max_quantize_w`` (``.../min_max_quantize/ql_min``,
    ``ql_max``, ``qr_min``, ``qr_max``; the real range initialized to -2, 2 unless
    ``qr_min_w_init``/``qr_max_w_init``, trained, or with ``w_min_max`` the weight's minimum and
    maximum at each ``forward()``) and ``.../min_max_quantize_b`` (-6, 6). The float parameters
    ``W`` ``(inmaps, *n_outmaps)`` (Glorot uniform) and ``b`` (zeros) get straight-through
    gradients; the quantized values are kept in ``W_q`` and ``b_q`` (no gradient, written at
    each ``forward()``). Parameters are created in nnabla's order: ``W``, ``W_q``, the weight's
    ranges, ``b``, ``b_q``, the bias' ranges.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.min_max_quantized_affine(nn.Variable((2, 3)), 4, ql_max_w=4, quantize_b=False)
        >>> y.forward()
        >>> p = nn.get_parameters(grad_only=False)
        >>> sorted(set(p["min_max_quantized_affine/W_q"].d.ravel().tolist()) - {-2, -1, 0, 1, 2})
        []
        >>> nn.clear_parameters()
    """
    from .parametric_functions import _quantized_affine

    quant = _min_max_wb(
        (quantize_w, ql_min_w, ql_max_w, w_min_max, qr_min_w_init, qr_max_w_init),
        (quantize_b, ql_min_b, ql_max_b, b_min_max, qr_min_b_init, qr_max_b_init),
        (ste_fine_grained_w, ste_fine_grained_b),
        eps,
        fix_parameters,
    )
    return _quantized_affine(
        inp,
        n_outmaps,
        base_axis,
        w_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
        *quant,
    )


@parametric_function_api("min_max_quantized_conv")
def min_max_quantized_convolution(
    inp: Any,
    outmaps: int,
    kernel: Any,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    channel_last: bool = False,
    w_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    quantize_w: bool = True,
    ql_min_w: Any = 0,
    ql_max_w: Any = 255,
    w_min_max: bool = False,
    qr_min_w_init: Any = None,
    qr_max_w_init: Any = None,
    ste_fine_grained_w: bool = True,
    quantize_b: bool = True,
    ql_min_b: Any = 0,
    ql_max_b: Any = 255,
    b_min_max: bool = False,
    qr_min_b_init: Any = None,
    qr_max_b_init: Any = None,
    ste_fine_grained_b: bool = True,
    eps: float = 0.01,
) -> Any:
    r"""nnabla's ``PF.min_max_quantized_convolution``: ``F.convolution`` with the weight
    ``min_max_quantized_conv/W`` ``(outmaps, inmaps // group, *kernel)`` (channel-last:
    ``(outmaps, *kernel, inmaps // group)``; Glorot uniform of ``(inmaps, outmaps, kernel)``)
    and the bias ``/b`` quantized as in :func:`min_max_quantized_affine` (``/W_q``, ``/b_q``,
    the ranges under ``/min_max_quantize_w`` and ``/min_max_quantize_b``):
    :math:`y_{n,a,b} = \sum_{m,i,j} Q(w_{n,m,i,j})\, x_{m,a+i,b+j} + Q(b_n)`.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.min_max_quantized_convolution(nn.Variable((2, 3, 5, 5)), 4, (3, 3))
        >>> y.shape, len(nn.get_parameters(grad_only=False))
        ((2, 4, 3, 3), 12)
        >>> nn.clear_parameters()
    """
    from .parametric_functions import _quantized_convolution

    quant = _min_max_wb(
        (quantize_w, ql_min_w, ql_max_w, w_min_max, qr_min_w_init, qr_max_w_init),
        (quantize_b, ql_min_b, ql_max_b, b_min_max, qr_min_b_init, qr_max_b_init),
        (ste_fine_grained_w, ste_fine_grained_b),
        eps,
        fix_parameters,
    )
    return _quantized_convolution(
        "min_max_quantized_convolution",
        inp,
        outmaps,
        kernel,
        pad,
        stride,
        dilation,
        group,
        channel_last,
        w_init,
        b_init,
        base_axis,
        fix_parameters,
        rng,
        with_bias,
        *quant,
        channel_last_ok=True,
    )


# -- low-rank layers ------------------------------------------------------------------------------


def _rank(pf: str, r: Any, most: int | None = None) -> int:
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r <= 0:
        raise ValueError(f"nnabla PF.{pf}: the rank r must be a positive int, got {r!r}")
    if most is not None and r > most:
        raise ValueError(
            f"nnabla PF.{pf}: the rank r={r} is larger than the decomposed matrices allow ({most})"
        )
    return int(r)


def _initial(pf: str, key: str, init: Any, shapes: Any, rng: Any) -> np.ndarray:
    """The weight to decompose, of the shape ``shapes[0]`` (``shapes``: ``_affine_shapes`` or
    ``_conv_shapes`` of :mod:`.parametric_functions`): ``init`` itself when it is a numpy array
    (of that size), else ``init(shape)``; ``init`` None: Glorot uniform of ``shapes[2]`` from
    ``rng``."""
    shape, _, glorot = shapes
    if init is None:
        init = UniformInitializer(calc_uniform_lim_glorot(*glorot), rng=rng)
    if type(init) is np.ndarray:
        if init.size != int(np.prod(shape)):
            raise ValueError(
                f"nnabla PF.{pf}: {key} must have {int(np.prod(shape))} values (shape "
                f"{shape}), got shape {init.shape}"
            )
        return init
    if not callable(init):
        raise TypeError(
            f"nnabla PF.{pf}: {key} must be a numpy array or an initializer, got "
            f"{type(init).__name__}"
        )
    return np.asarray(init(list(shape)))


def _register(key: str, data: np.ndarray) -> None:
    """A new trainable parameter ``key`` of the current scope holding ``data`` in float32 (as
    nnabla's ``set_parameter`` of a new Variable), replacing one of that name."""
    from .parameter import set_parameter

    p = Variable.from_numpy_array(np.asarray(data, dtype=np.float32), need_grad=True)
    p.name = _parameters.full_name(key)
    set_parameter(key, p)


def _use(key: str, fix_parameters: bool) -> Any:
    """The parameter ``key`` as the layer uses it: an unlinked Variable sharing its data and
    gradient, needing a gradient unless ``fix_parameters`` (nor inside ``nn.no_grad()``); the
    registered flag is left as it is, as nnabla's."""
    from .parameter import get_parameter

    p = get_parameter(key)
    assert p is not None  # (registered or found by the caller)
    v = _Unlinked.of(p, (not fix_parameters) and is_recording(), None)
    v.name = key
    return v


def _bias(shape: Any, b_init: Any, fix_parameters: bool, with_bias: bool) -> Any:
    from .parameter import get_parameter_or_create

    if not with_bias:
        return None
    if b_init is None:
        b_init = ConstantInitializer()
    return get_parameter_or_create("b", list(shape), b_init, True, not fix_parameters)


def _missing(*keys: str) -> bool:
    from .parameter import get_parameter

    return any(get_parameter(k) is None for k in keys)


@parametric_function_api("svd_affine")
def svd_affine(
    inp: Any,
    n_outmaps: Any,
    r: int,
    base_axis: int = 1,
    uv_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
) -> Any:
    r"""nnabla's ``PF.svd_affine``: the affine layer of rank ``r``,
    :math:`y = (x U) V + b`, ``svd_affine/U`` ``(inmaps, r)`` and ``/V`` ``(r, *n_outmaps)``
    from the singular value decomposition :math:`W = U_0 S V_0` of an initial weight ``W``
    ``(inmaps, n_outmaps)``: :math:`U = (U_0 S)_{:, :r}`, :math:`V = (V_0)_{:r}` (numpy's SVD,
    in ``W``'s dtype, as nnabla's). ``W`` is ``uv_init`` when it is a numpy array, else drawn by
    it (default: Glorot uniform from ``rng``; drawn at each call, as nnabla's, even when ``U``
    and ``V`` exist and are used as they are). ``b`` ``svd_affine/b``: zeros.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> w = np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]], np.float32)
        >>> y = PF.svd_affine(nn.Variable((4, 3)), 2, r=1, uv_init=w)
        >>> p = nn.get_parameters()
        >>> y.shape, abs(p["svd_affine/U"].d).ravel(), abs(p["svd_affine/V"].d).ravel()
        ((4, 2), array([2., 0., 0.], dtype=float32), array([1., 0.], dtype=float32))
        >>> nn.clear_parameters()
    """
    from .parametric_functions import _affine_shapes

    shapes = _affine_shapes(inp, n_outmaps, base_axis)
    _, outs, (inmaps, n_out) = shapes
    uv = _initial("svd_affine", "uv_init", uv_init, shapes, rng)
    if _missing("U", "V"):
        rank = _rank("svd_affine", r, min(inmaps, n_out))
        u_, s_, v_ = np.linalg.svd(uv.reshape(inmaps, n_out), full_matrices=False)
        u_ = np.dot(u_, np.diag(s_))[:, :rank]  # (the singular values folded into U)
        _register("U", u_)
        _register("V", v_[:rank, :].reshape([rank, *outs]))
    u = _use("U", fix_parameters)
    v = _use("V", fix_parameters)
    b = _bias(outs, b_init, fix_parameters, with_bias)
    F = _functions()
    return F.affine(F.affine(inp, u, None, base_axis), v, b, base_axis)


@parametric_function_api("svd_conv")
def svd_convolution(
    inp: Any,
    outmaps: int,
    kernel: Any,
    r: int,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    uv_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
) -> Any:
    r"""nnabla's ``PF.svd_convolution``: a depthwise convolution of multiplier ``r`` (with
    ``pad``, ``stride``, ``dilation``) followed by a 1x1 convolution, each input map's kernels
    :math:`W_{:, i, :}` (flattened) approximated with rank ``r``:
    :math:`W_{:, i, :}^T \approx U_i V_i`, :math:`U_i = (U_0 S)_{:, :r}`,
    :math:`V_i = (V_0)_{:r}` from numpy's SVD of the initial weight ``W``
    ``(outmaps, inmaps, *kernel)`` (``uv_init`` when it is a numpy array, else drawn by it;
    default Glorot uniform from ``rng``, drawn at each call as nnabla's). The parameters:
    ``svd_conv/U`` ``(inmaps * r, *kernel)``, ``/V`` ``(outmaps, inmaps * r, 1, ...)`` and
    ``/b`` ``(outmaps,)`` (zeros).

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.svd_convolution(nn.Variable((2, 3, 6, 6)), 4, (3, 3), r=2, pad=(1, 1))
        >>> y.shape, [v.shape for v in nn.get_parameters().values()]
        ((2, 4, 6, 6), [(6, 3, 3), (4, 6, 1, 1), (4,)])
        >>> nn.clear_parameters()
    """
    from .parametric_functions import _conv_shapes

    shapes = _conv_shapes(inp, outmaps, kernel, base_axis)
    inmaps, outmaps, kern = shapes[2]
    k_size = int(np.prod(kern))
    rank = _rank("svd_convolution", r, min(k_size, outmaps))
    uv = _initial("svd_convolution", "uv_init", uv_init, shapes, rng)
    uv = uv.reshape((outmaps, inmaps, k_size))
    if _missing("U", "V"):
        u_low = np.zeros((inmaps, k_size, rank))
        v_low = np.zeros((inmaps, rank, outmaps))
        for i in range(inmaps):
            u_, s_, v_ = np.linalg.svd(np.transpose(uv[:, i, :]), full_matrices=False)
            u_low[i] = np.dot(u_[:, :rank], np.diag(s_[:rank]))
            v_low[i] = v_[:rank, :]
        ones = (1,) * len(kern)
        # U: (I, K, r) -> (I * r, *kernel) (the depthwise kernels); V: (I, r, O) -> (O, I * r, 1..)
        _register("U", np.transpose(u_low, (0, 2, 1)).reshape((inmaps * rank, *kern)))
        _register("V", np.transpose(v_low, (2, 0, 1)).reshape((outmaps, inmaps * rank, *ones)))
    u = _use("U", fix_parameters)
    v = _use("V", fix_parameters)
    b = _bias((outmaps,), b_init, fix_parameters, with_bias)
    F = _functions()
    y = F.depthwise_convolution(inp, u, None, base_axis, pad, stride, dilation, rank)
    return F.convolution(y, v, b, base_axis, None, None, None, 1)


def _pinv(a: np.ndarray) -> np.ndarray:
    """The pseudo-inverse as ``scipy.linalg.pinv`` computes it (nnabla's ALS uses it): the
    singular values above ``max(a.shape) * eps * max(s)`` inverted."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    eps = np.finfo(u.dtype.char.lower()).eps
    cutoff = np.max(s, initial=0.0) * max(a.shape) * eps
    rank = int(np.sum(s > cutoff))
    u = u[:, :rank] / s[:rank]
    return (u @ vh[:rank]).conj().T  # type: ignore[no-any-return]


def _khatri_rao(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    p = np.zeros((x.shape[0], y.shape[0], x.shape[1]))
    for c in range(x.shape[1]):
        p[:, :, c] = np.outer(x[:, c], y[:, c])
    return p


def _cp_als(
    x: np.ndarray,
    rank: int,
    max_iter: int,
    stopping_criterion: float,
    lambda_reg: float,
    rng: Any,
) -> tuple[list[np.ndarray], np.ndarray]:
    """nnabla's ``utils.factorization.cpd.ALS().solve`` on the 3-D ``x``: the factors
    ``A[n]`` (columns normalized by ``lmbda``) of :math:`x \\approx \\sum_r \\lambda_r a^0_r
    \\otimes a^1_r \\otimes a^2_r`, ``A[1]``/``A[2]`` starting from ``rng.rand`` (a
    ``RandomState(313)`` when ``rng`` is None), the same steps and dtypes as nnabla's."""
    n_dims = x.ndim
    squared_norm = np.sum(x**2)
    if rng is None:
        rng = np.random.RandomState(313)
    a: list[Any] = [None] * n_dims
    for n in range(1, n_dims):
        a[n] = np.array(rng.rand(x.shape[n], rank), dtype=x.dtype)
    lmbda: Any = None
    criterion = 0.0
    for itr in range(max_iter):
        criterion_prev = criterion
        for n in range(n_dims):
            others = [o for o in range(n_dims) if o != n]
            gram: Any = 1.0
            for o in others:
                gram = gram * np.dot(a[o].T, a[o])
            kr = reduce(_khatri_rao, [a[o] for o in sorted(others, reverse=True)])
            a_n = np.tensordot(x, kr, axes=(others, np.arange(n_dims - 1)[::-1]))
            a_n = a_n.dot(_pinv(gram + np.eye(rank) * lambda_reg))
            if itr == 0:
                lmbda = np.sqrt((a_n**2).sum(axis=0))
            else:
                lmbda = a_n.max(axis=0)
                lmbda[lmbda < 1] = 1
            a[n] = a_n / lmbda
        if stopping_criterion < 0:
            continue
        approx = np.zeros([f.shape[0] for f in a])
        for c in range(len(lmbda)):
            t = a[0][:, c]
            for f in a[1:]:
                t = np.multiply.outer(t, f[:, c])
            approx[...] += lmbda[c] * t
        residual = squared_norm + np.sum(approx**2) - 2 * np.sum(x * approx)
        criterion = 1.0 - (residual / squared_norm)
        if itr > 0 and abs(criterion_prev - criterion) < stopping_criterion:
            break
    return a, lmbda


@parametric_function_api("cpd3_conv")
def cpd3_convolution(
    inp: Any,
    outmaps: int,
    kernel: Any,
    r: int,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    oik_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
    max_iter: int = 500,
    stopping_criterion: float = 1e-5,
    lambda_reg: float = 0.0,
) -> Any:
    r"""nnabla's ``PF.cpd3_convolution``: the convolution whose kernel (flattened to
    ``(outmaps, inmaps, K)``) is the CP decomposition of rank ``r``,
    :math:`W \approx \sum_{c=1}^{r} \lambda_c\, o_c \otimes i_c \otimes k_c`, computed as a 1x1
    convolution to ``r`` maps (``cpd3_conv/I`` ``(r, inmaps, 1, ...)``), a depthwise convolution
    (``/K`` ``(r, *kernel)``, with ``pad``, ``stride``, ``dilation``) and a 1x1 convolution
    (``/O`` ``(outmaps, r, 1, ...)``, :math:`\lambda` folded in) with the bias ``/b``. The
    factors come from nnabla's alternating least squares (``max_iter``,
    ``stopping_criterion``, ``lambda_reg``; the start drawn from ``rng``, or from
    ``RandomState(313)`` without one) on the initial weight: ``oik_init`` when it is a numpy
    array, else drawn by it (default Glorot uniform from ``rng``, drawn at each call, as
    nnabla's). Parameters are created in nnabla's order ``I``, ``O``, ``K``, ``b``.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> x = nn.Variable((2, 3, 6, 6))
        >>> y = PF.cpd3_convolution(x, 4, (3, 3), r=2, rng=np.random.RandomState(0))
        >>> y.shape, list(nn.get_parameters())
        ((2, 4, 4, 4), ['cpd3_conv/I', 'cpd3_conv/O', 'cpd3_conv/K', 'cpd3_conv/b'])
        >>> [v.shape for v in nn.get_parameters().values()]
        [(2, 3, 1, 1), (4, 2, 1, 1), (2, 3, 3), (4,)]
        >>> nn.clear_parameters()
    """
    from .parametric_functions import _conv_shapes

    shapes = _conv_shapes(inp, outmaps, kernel, base_axis)
    inmaps, outmaps, kern = shapes[2]
    oik = _initial("cpd3_convolution", "oik_init", oik_init, shapes, rng)
    oik = oik.reshape((outmaps, inmaps, int(np.prod(kern))))
    if _missing("O", "I", "K"):
        rank = _rank("cpd3_convolution", r)
        if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)):
            raise TypeError(
                f"nnabla PF.cpd3_convolution: max_iter must be an int, got {max_iter!r}"
            )
        if max_iter < 1:
            raise ValueError(f"nnabla PF.cpd3_convolution: max_iter must be >= 1, got {max_iter}")
        factors, lmbda = _cp_als(
            oik, rank, int(max_iter), float(stopping_criterion), float(lambda_reg), rng
        )
        ones = (1,) * len(kern)
        _register("I", np.transpose(factors[1]).reshape((rank, inmaps, *ones)))
        _register("O", (factors[0] * lmbda).reshape((outmaps, rank, *ones)))
        _register("K", np.transpose(factors[2]).reshape((rank, *kern)))
    i = _use("I", fix_parameters)
    o = _use("O", fix_parameters)
    k = _use("K", fix_parameters)
    b = _bias((outmaps,), b_init, fix_parameters, with_bias)
    F = _functions()
    y = F.convolution(inp, i, None, base_axis, None, None, None, 1)
    y = F.depthwise_convolution(y, k, None, base_axis, pad, stride, dilation, 1)
    return F.convolution(y, o, b, base_axis, None, None, None, 1)

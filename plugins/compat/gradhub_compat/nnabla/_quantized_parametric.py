"""nnabla's ``PF.min_max_quantize``, ``PF.inq_affine`` and ``PF.inq_convolution`` (offered by
:mod:`gradhub_compat.nnabla.parametric_functions`): the parameters nnabla 1.39 creates (names,
shapes, initial values, ``need_grad``, order of creation) around the functions of
:mod:`._quantized_layers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .parametric_functions import _functions, parametric_function_api


@parametric_function_api("min_max_quantize")
def min_max_quantize(
    x: Any,
    ql_min: Any = 0,
    ql_max: Any = 255,
    decay: float = 0.999,
    x_min_max: bool = False,
    ema: bool = False,
    ste_fine_grained: bool = True,
    eps: float = 0.01,
    qr_min_init: Any = None,
    qr_max_init: Any = None,
    fix_parameters: bool = False,
    outputs: Any = None,
) -> Any:
    """nnabla's ``PF.min_max_quantize``: ``F.min_max_quantize`` with the parameters
    ``min_max_quantize/qr_min`` and ``/qr_max`` (the real range, of ``ql_min``'s shape,
    initialized with -6 and 6 unless ``qr_min_init``/``qr_max_init`` say otherwise; trainable
    unless both ``x_min_max`` and ``ema``, updated in place by ``forward()`` with
    ``x_min_max``) and, when ``ql_min``/``ql_max`` are numbers, ``/ql_min`` and ``/ql_max``
    (shape ``(1,) * x.ndim``, no gradient). ``fix_parameters`` uses the range without gradient
    in this call.

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> x = nn.Variable.from_numpy_array(np.array([[-7.0, -0.01, 0.02, 3.0]]))
        >>> y = PF.min_max_quantize(x, ql_max=12, name="q")
        >>> y.forward()
        >>> y.d
        array([[-6.,  0.,  0.,  3.]], dtype=float32)
        >>> for k, v in nn.get_parameters(grad_only=False).items():
        ...     print(k, v.shape, v.need_grad, v.d.ravel())
        q/min_max_quantize/ql_min (1, 1) False [0]
        q/min_max_quantize/ql_max (1, 1) False [12]
        q/min_max_quantize/qr_min (1, 1) True [-6.]
        q/min_max_quantize/qr_max (1, 1) True [6.]
        >>> nn.clear_parameters()
    """
    from .initializer import ConstantInitializer
    from .parameter import get_parameter_or_create

    ones = [1] * len(x.shape)
    if isinstance(ql_min, (int, float)):
        ql_min = get_parameter_or_create(
            "ql_min", ones, np.array(ql_min).reshape(ones), False, False
        )
    if isinstance(ql_max, (int, float)):
        ql_max = get_parameter_or_create(
            "ql_max", ones, np.array(ql_max).reshape(ones), False, False
        )
    if qr_min_init is None:
        qr_min_init = ConstantInitializer(-6.0)
    if qr_max_init is None:
        qr_max_init = ConstantInitializer(6.0)
    shape = tuple(ql_min.shape)
    trainable = not (x_min_max and ema)
    qr_min = get_parameter_or_create("qr_min", shape, qr_min_init, trainable, not fix_parameters)
    qr_max = get_parameter_or_create("qr_max", shape, qr_max_init, trainable, not fix_parameters)
    return _functions().min_max_quantize(
        x,
        qr_min,
        qr_max,
        ql_min,
        ql_max,
        decay,
        x_min_max,
        ema,
        ste_fine_grained,
        eps,
        outputs=outputs,
    )


def _inq_parameters(
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[Any, ...]],
    w_init: Any,
    i_init: Any,
    b_init: Any,
    fix_parameters: bool,
    rng: Any,
    with_bias: bool,
) -> tuple[Any, Any, Any]:
    """nnabla's parameters of the INQ layers, in its order: ``W`` (Glorot uniform), ``I`` (the
    indicator, zeros, no gradient) and ``b`` (zeros); ``shapes`` are ``W``'s, ``b``'s and the
    arguments of the Glorot limit."""
    from gradhub_nn_ops.parametric import ConstantInitializer

    from .parametric_functions import _binary_layer

    if i_init is None:
        i_init = ConstantInitializer(0.0)
    w, i, _, b = _binary_layer(
        *shapes, w_init, i_init, b_init, fix_parameters, rng, with_bias, False, companion="I"
    )
    return w, i, b


@parametric_function_api("inq_affine")
def inq_affine(
    inp: Any,
    n_outmaps: Any,
    base_axis: int = 1,
    num_bits: int = 4,
    inq_iterations: Sequence[int] = (),
    selection_algorithm: str = "random",
    seed: int = -1,
    w_init: Any = None,
    i_init: Any = None,
    b_init: Any = None,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
) -> Any:
    """nnabla's ``PF.inq_affine``: ``F.inq_affine`` with the parameters ``inq_affine/W``
    ``(inmaps, *n_outmaps)`` (Glorot uniform; fixed values become powers of two in place at
    each ``forward()``), ``inq_affine/I`` (the indicator of the fixed values, zeros, no
    gradient) and ``inq_affine/b`` (zeros). The selection is ``"random"`` by default, as
    nnabla's.

    Example::

        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> y = PF.inq_affine(nn.Variable((2, 3)), 4, inq_iterations=(0,))
        >>> y.forward()
        >>> p = nn.get_parameters(grad_only=False)
        >>> sorted(p), float(p["inq_affine/I"].d.min())
        (['inq_affine/I', 'inq_affine/W', 'inq_affine/b'], 1.0)
        >>> nn.clear_parameters()
    """
    from .parametric_functions import _affine_shapes

    w, i, b = _inq_parameters(
        _affine_shapes(inp, n_outmaps, base_axis),
        w_init,
        i_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
    )
    return _functions().inq_affine(
        inp, w, i, b, base_axis, num_bits, inq_iterations, selection_algorithm, seed
    )


@parametric_function_api("inq_conv")
def inq_convolution(
    inp: Any,
    outmaps: int,
    kernel: Any,
    pad: Any = None,
    stride: Any = None,
    dilation: Any = None,
    group: int = 1,
    num_bits: int = 4,
    inq_iterations: Sequence[int] = (),
    selection_algorithm: str = "random",
    seed: int = -1,
    w_init: Any = None,
    i_init: Any = None,
    b_init: Any = None,
    base_axis: int = 1,
    fix_parameters: bool = False,
    rng: Any = None,
    with_bias: bool = True,
) -> Any:
    """nnabla's ``PF.inq_convolution``: ``F.inq_convolution`` with the parameters
    ``inq_conv/W`` and ``inq_conv/I`` ``(outmaps, inmaps, *kernel)`` (as nnabla's, the input
    channels are not divided by ``group``; Glorot uniform and zeros) and ``inq_conv/b``."""
    from .parametric_functions import _conv_shapes

    w, i, b = _inq_parameters(
        _conv_shapes(inp, outmaps, kernel, base_axis),
        w_init,
        i_init,
        b_init,
        fix_parameters,
        rng,
        with_bias,
    )
    return _functions().inq_convolution(
        inp,
        w,
        i,
        b,
        base_axis,
        pad,
        stride,
        dilation,
        group,
        num_bits,
        inq_iterations,
        selection_algorithm,
        seed,
    )

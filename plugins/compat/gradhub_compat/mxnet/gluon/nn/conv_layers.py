"""Gluon's convolution and pooling layers (``Conv1D``/``Conv2D``/``Conv3D``, ``MaxPool1D``..
``MaxPool3D``, ``AvgPool1D``..``AvgPool3D``, ``GlobalMaxPool1D``..``3D``,
``GlobalAvgPool1D``..``3D``), channels-first layouts, as mxnet 1.9.1: parameters
``conv0_weight`` of shape ``(channels, in_channels / groups, *kernel_size)`` (``in_channels=0``:
fixed by the first input) and ``conv0_bias`` ``(channels,)``; pooling strides default to the
pool size. Channels-last layouts (``NHWC``...) raise NotImplementedError.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon import nn
    >>> conv = nn.Conv2D(4, kernel_size=3, padding=1)
    >>> conv.initialize()
    >>> y = nn.MaxPool2D()(conv(mx.nd.ones((2, 3, 8, 8))))
    >>> y.shape, conv.weight.shape
    ((2, 4, 4, 4), (4, 3, 3, 3))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..block import HybridBlock
from ..parameter import Parameter
from .activations import Activation

__all__ = [
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "GlobalAvgPool1D",
    "GlobalAvgPool2D",
    "GlobalAvgPool3D",
    "GlobalMaxPool1D",
    "GlobalMaxPool2D",
    "GlobalMaxPool3D",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
]

_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _ints(v: Any, n: int, who: str, arg: str) -> tuple[int, ...]:
    t = (int(v),) * n if isinstance(v, (int, np.integer)) else tuple(int(a) for a in v)
    if len(t) != n:
        raise AssertionError(f"{who}: {arg} must be a number or a list of {n} ints")
    return t


def _check_layout(layout: str, n: int, who: str) -> None:
    if layout != _LAYOUTS[n]:
        raise NotImplementedError(
            f"gluon.nn.{who}: layout={layout!r} is not supported (only {_LAYOUTS[n]!r}; "
            "docs/migration-mxnet.md)"
        )


class _Conv(HybridBlock):
    def __init__(
        self,
        channels: int,
        kernel_size: Any,
        strides: Any,
        padding: Any,
        dilation: Any,
        groups: int,
        layout: str,
        in_channels: int = 0,
        activation: str | None = None,
        use_bias: bool = True,
        weight_initializer: Any = None,
        bias_initializer: Any = "zeros",
        prefix: str | None = None,
        params: Any = None,
    ) -> None:
        super().__init__(prefix=prefix, params=params)
        n = len(kernel_size)
        who = type(self).__name__
        _check_layout(layout, n, who)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            self._kwargs = {
                "kernel": tuple(kernel_size),
                "stride": _ints(strides, n, who, "strides"),
                "dilate": _ints(dilation, n, who, "dilation"),
                "pad": _ints(padding, n, who, "padding"),
                "num_filter": channels,
                "num_group": groups,
                "no_bias": not use_bias,
                "layout": layout,
            }
            self.weight = self.params.get(
                "weight",
                shape=self._weight_shape(in_channels, channels, groups, tuple(kernel_size)),
                init=weight_initializer,
                allow_deferred_init=True,
            )
            if use_bias:
                self.bias: Parameter | None = self.params.get(
                    "bias", shape=(channels,), init=bias_initializer, allow_deferred_init=True
                )
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _alias(self) -> str:
        return "conv"

    @staticmethod
    def _weight_shape(
        in_channels: int, channels: int, groups: int, kernel: tuple[int, ...]
    ) -> tuple[int, ...]:
        return (channels, in_channels // groups, *kernel)

    def infer_shape(self, x: Any, *args: Any) -> None:
        """``in_channels`` from ``x.shape[1]``."""
        g = int(self._kwargs["num_group"])  # type: ignore[call-overload]
        c = int(x.shape[1])
        if c % g:
            raise ValueError(f"{type(self).__name__}: groups={g} must divide in_channels={c}")
        self.weight.shape = (self._channels, c // g, *self._kwargs["kernel"])  # type: ignore[misc]

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:
        if bias is None:
            out = F.Convolution(x, weight, name="fwd", **self._kwargs)
        else:
            out = F.Convolution(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self) -> str:
        k = self._kwargs
        n = len(k["kernel"])  # type: ignore[arg-type]
        s = f"{self.__class__.__name__}({{mapping}}, kernel_size={k['kernel']}, "
        s += f"stride={k['stride']}"
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        s += ")"
        shape = self.weight.shape or (0, 0)
        return s.format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}")


def _conv_class(n: int, name: str) -> type[_Conv]:
    def __init__(
        self: _Conv,
        channels: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        layout: str = _LAYOUTS[n],
        activation: str | None = None,
        use_bias: bool = True,
        weight_initializer: Any = None,
        bias_initializer: Any = "zeros",
        in_channels: int = 0,
        **kwargs: Any,
    ) -> None:
        ks = _ints(kernel_size, n, name, "kernel_size")
        _Conv.__init__(
            self,
            channels,
            ks,
            strides,
            padding,
            dilation,
            groups,
            layout,
            in_channels,
            activation,
            use_bias,
            weight_initializer,
            bias_initializer,
            **kwargs,
        )

    doc = (
        f"{n}-D convolution (``F.Convolution``, layout ``{_LAYOUTS[n]}``): ``channels`` "
        f"filters of size ``kernel_size``, weight ``(channels, in_channels / groups, "
        f"*kernel_size)``, bias ``(channels,)``; ``strides``, ``padding``, ``dilation`` as a "
        "number or one per axis; ``activation`` applied after."
    )
    return type(name, (_Conv,), {"__init__": __init__, "__doc__": doc})


Conv1D = _conv_class(1, "Conv1D")
Conv2D = _conv_class(2, "Conv2D")
Conv3D = _conv_class(3, "Conv3D")


class _ConvTranspose(_Conv):
    """A transposed convolution (``F.Deconvolution``): weight ``(in_channels, channels /
    groups, *kernel_size)``, ``output_padding`` is the operator's ``adj``."""

    def __init__(self, output_padding: tuple[int, ...], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        k = self._kwargs
        n = len(k["kernel"])  # type: ignore[arg-type]
        k["adj"] = _ints(output_padding, n, type(self).__name__, "output_padding")

    @staticmethod
    def _weight_shape(
        in_channels: int, channels: int, groups: int, kernel: tuple[int, ...]
    ) -> tuple[int, ...]:
        return (in_channels, channels // groups, *kernel)

    def infer_shape(self, x: Any, *args: Any) -> None:
        """``in_channels`` from ``x.shape[1]``."""
        g = int(self._kwargs["num_group"])  # type: ignore[call-overload]
        self.weight.shape = (int(x.shape[1]), self._channels // g, *self._kwargs["kernel"])  # type: ignore[misc]

    def hybrid_forward(self, F: Any, x: Any, weight: Any, bias: Any = None) -> Any:
        try:
            F.Deconvolution  # noqa: B018
        except AttributeError:
            raise NotImplementedError(
                f"gluon.nn.{type(self).__name__}: Symbol inputs (export) need mx.sym."
                "Deconvolution, which gradhub_compat.mxnet does not provide; NDArray inputs are "
                "supported (docs/migration-mxnet.md)"
            ) from None
        if bias is None:
            out = F.Deconvolution(x, weight, name="fwd", **self._kwargs)
        else:
            out = F.Deconvolution(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out


def _conv_transpose_class(n: int, name: str) -> type[_ConvTranspose]:
    def __init__(
        self: _ConvTranspose,
        channels: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        layout: str = _LAYOUTS[n],
        activation: str | None = None,
        use_bias: bool = True,
        weight_initializer: Any = None,
        bias_initializer: Any = "zeros",
        in_channels: int = 0,
        **kwargs: Any,
    ) -> None:
        ks = _ints(kernel_size, n, name, "kernel_size")
        _ConvTranspose.__init__(
            self,
            output_padding,
            channels,
            ks,
            strides,
            padding,
            dilation,
            groups,
            layout,
            in_channels,
            activation,
            use_bias,
            weight_initializer,
            bias_initializer,
            **kwargs,
        )

    doc = (
        f"{n}-D transposed convolution (``F.Deconvolution``, layout ``{_LAYOUTS[n]}``), as "
        f"mxnet 1.9.1: ``channels`` output channels, weight ``(in_channels, channels / groups, "
        "*kernel_size)``, bias ``(channels,)``; output size ``(L - 1) strides - 2 padding + "
        "dilation (kernel_size - 1) + 1 + output_padding``; ``activation`` applied after. "
        "Parameters are named ``conv0_weight``... (the counter of ``Conv2D``), as mxnet."
    )
    return type(name, (_ConvTranspose,), {"__init__": __init__, "__doc__": doc})


Conv1DTranspose = _conv_transpose_class(1, "Conv1DTranspose")
Conv2DTranspose = _conv_transpose_class(2, "Conv2DTranspose")
Conv3DTranspose = _conv_transpose_class(3, "Conv3DTranspose")


class _Pooling(HybridBlock):
    def __init__(
        self,
        pool_size: tuple[int, ...],
        strides: Any,
        padding: Any,
        ceil_mode: bool,
        global_pool: bool,
        pool_type: str,
        layout: str,
        count_include_pad: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        n = len(pool_size)
        _check_layout(layout, n, type(self).__name__)
        if strides is None:
            strides = pool_size
        self._kwargs: dict[str, Any] = {
            "kernel": pool_size,
            "stride": _ints(strides, n, type(self).__name__, "strides"),
            "pad": _ints(padding, n, type(self).__name__, "padding"),
            "global_pool": global_pool,
            "pool_type": pool_type,
            "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid",
        }
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self) -> str:
        return "pool"

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return (
            f"{self.__class__.__name__}(size={k['kernel']}, stride={k['stride']}, "
            f"padding={k['pad']}, ceil_mode={k['pooling_convention'] == 'full'}, "
            f"global_pool={k['global_pool']}, pool_type={k['pool_type']}, layout={k['layout']})"
        )


def _pool_class(n: int, name: str, pool_type: str) -> type[_Pooling]:
    default = (2,) * n

    def __init__(
        self: _Pooling,
        pool_size: Any = default,
        strides: Any = None,
        padding: Any = 0,
        layout: str = _LAYOUTS[n],
        ceil_mode: bool = False,
        count_include_pad: Any = True if pool_type == "avg" else None,
        **kwargs: Any,
    ) -> None:
        ps = _ints(pool_size, n, name, "pool_size")
        _Pooling.__init__(
            self,
            ps,
            strides,
            padding,
            ceil_mode,
            False,
            pool_type,
            layout,
            count_include_pad if pool_type == "avg" else None,
            **kwargs,
        )

    what = "maximum" if pool_type == "max" else "mean"
    doc = (
        f"{n}-D {pool_type} pooling (``F.Pooling``): the {what} of each ``pool_size`` window, "
        "``strides`` defaulting to ``pool_size``, ``padding``; ``ceil_mode`` (mxnet's "
        '``"full"`` convention) only where it gives the same size as flooring.'
    )
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc})


def _global_class(n: int, name: str, pool_type: str) -> type[_Pooling]:
    def __init__(self: _Pooling, layout: str = _LAYOUTS[n], **kwargs: Any) -> None:
        _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)

    doc = f"Global {n}-D {pool_type} pooling: each channel's whole extent (output size 1)."
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc})


MaxPool1D = _pool_class(1, "MaxPool1D", "max")
MaxPool2D = _pool_class(2, "MaxPool2D", "max")
MaxPool3D = _pool_class(3, "MaxPool3D", "max")
AvgPool1D = _pool_class(1, "AvgPool1D", "avg")
AvgPool2D = _pool_class(2, "AvgPool2D", "avg")
AvgPool3D = _pool_class(3, "AvgPool3D", "avg")
GlobalMaxPool1D = _global_class(1, "GlobalMaxPool1D", "max")
GlobalMaxPool2D = _global_class(2, "GlobalMaxPool2D", "max")
GlobalMaxPool3D = _global_class(3, "GlobalMaxPool3D", "max")
GlobalAvgPool1D = _global_class(1, "GlobalAvgPool1D", "avg")
GlobalAvgPool2D = _global_class(2, "GlobalAvgPool2D", "avg")
GlobalAvgPool3D = _global_class(3, "GlobalAvgPool3D", "avg")

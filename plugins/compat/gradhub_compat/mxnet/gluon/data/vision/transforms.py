"""mxnet Gluon's image transforms (``gluon.data.vision.transforms``), as mxnet 1.9.1:
:class:`Compose`, :class:`Cast`, :class:`ToTensor`, :class:`Normalize`, made of recorded
``mx.nd`` functions (so they are differentiable too). :class:`Resize` and the random and
geometric transforms (which need mxnet's OpenCV image functions) are not provided;
``Resize`` raises ``NotImplementedError``.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet.gluon.data.vision import transforms
    >>> t = transforms.Compose([transforms.ToTensor(), transforms.Normalize(0.5, 0.5)])
    >>> img = mx.nd.array(np.full((2, 2, 1), 255), dtype="uint8")
    >>> t(img).asnumpy()
    array([[[1., 1.],
            [1., 1.]]], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .... import ndarray as nd
from ....base import MXNetError
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Cast", "Compose", "Normalize", "Resize", "ToTensor"]

_DOCS = "docs/migration-mxnet.md"


class Compose(Sequential):
    """The transforms applied one after the other. As mxnet, consecutive HybridBlocks are
    grouped into a (hybridized) ``HybridSequential`` child, other blocks are children of
    their own."""

    def __init__(self, transforms: list[Any]) -> None:
        super().__init__()
        hybrid: list[Any] = []
        for i in [*transforms, None]:
            if isinstance(i, HybridBlock):
                hybrid.append(i)
                continue
            if len(hybrid) == 1:
                self.add(hybrid[0])
                hybrid = []
            elif len(hybrid) > 1:
                hblock = HybridSequential()
                for j in hybrid:
                    hblock.add(j)
                hblock.hybridize()
                self.add(hblock)
                hybrid = []
            if i is not None:
                self.add(i)


class Cast(HybridBlock):
    """``x`` converted to ``dtype`` (``mx.nd.cast``)."""

    def __init__(self, dtype: Any = "float32") -> None:
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.cast(x, self._dtype)


def _check_image(x: Any, who: str) -> None:
    if x.ndim not in (3, 4):
        raise MXNetError(
            f"gluon.data.vision.transforms.{who}: Input image must have shape (height, width, "
            f"channels), or (N, height, width, channels) but got {list(x.shape)}"
        )


class ToTensor(HybridBlock):
    """An image ``(H, W, C)`` (or a batch ``(N, H, W, C)``) of values in ``[0, 255]`` to a
    float32 tensor ``(C, H, W)`` (``(N, C, H, W)``) of ``x / 255``, as mxnet's
    ``image.to_tensor``."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        _check_image(x, "ToTensor")
        axes = (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)
        return F.transpose(F.cast(x, "float32"), axes=axes) / 255.0


class Normalize(HybridBlock):
    """``out[c] = (x[c] - mean[c]) / std[c]`` for a tensor ``(C, H, W)`` or ``(N, C, H, W)``;
    ``mean`` and ``std`` are numbers or one value per channel, the channels 1 or 3, as mxnet's
    ``image.normalize`` (``MXNetError`` otherwise). The dtype is the input's."""

    def __init__(self, mean: Any = 0.0, std: Any = 1.0) -> None:
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        if x.ndim not in (3, 4):
            raise MXNetError(
                "gluon.data.vision.transforms.Normalize: Input tensor must have shape "
                f"(channels, height, width), or (N, channels, height, width), but got "
                f"{list(x.shape)}"
            )
        axis = x.ndim - 3
        c = x.shape[axis]
        if c not in (1, 3):
            raise MXNetError(
                "gluon.data.vision.transforms.Normalize: The first dimension of input tensor "
                "must be the channel dimension with either 1 or 3 elements, but got input with "
                f"shape {list(x.shape)}"
            )
        shape = (c, 1, 1) if axis == 0 else (1, c, 1, 1)
        out = x
        for value, name in ((self._mean, "mean"), (self._std, "std")):
            v = np.atleast_1d(np.asarray(value, dtype=np.float64))
            if v.ndim != 1 or v.size not in (1, c):
                raise MXNetError(
                    f"gluon.data.vision.transforms.Normalize: Invalid {name} for input with "
                    f"shape {list(x.shape)}. {name} must have either 1 or {c} elements, but "
                    f"got {v.tolist()}"
                )
            arr = nd.array(np.broadcast_to(v, (c,)).reshape(shape), ctx=x.context, dtype=x.dtype)
            out = F.broadcast_sub(out, arr) if name == "mean" else F.broadcast_div(out, arr)
        return out


class Resize(Block):
    """Not supported: mxnet resizes with OpenCV's interpolation, which gradhub_compat.mxnet
    does not reproduce; raises ``NotImplementedError``."""

    def __init__(self, size: Any, keep_ratio: bool = False, interpolation: int = 1) -> None:
        raise NotImplementedError(
            "gluon.data.vision.transforms.Resize: mxnet resizes with OpenCV's interpolation, "
            f"which gradhub_compat.mxnet does not reproduce ({_DOCS}, section Gluon data and "
            "recurrent layers)"
        )

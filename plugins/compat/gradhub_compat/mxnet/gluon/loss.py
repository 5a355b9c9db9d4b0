"""mxnet Gluon's losses (``gluon.loss``), as mxnet 1.9.1: :class:`Loss` and ``L2Loss``,
``L1Loss``, ``SoftmaxCrossEntropyLoss`` (``SoftmaxCELoss``), ``SigmoidBinaryCrossEntropyLoss``
(``SigmoidBCELoss``), ``KLDivLoss``, ``HuberLoss``, ``HingeLoss``, ``SquaredHingeLoss``,
``LogisticLoss``, ``TripletLoss``, ``PoissonNLLLoss``, ``CosineEmbeddingLoss``, ``CTCLoss``.

Each loss is a :class:`~.block.HybridBlock` whose ``hybrid_forward(F, pred, label,
sample_weight=None)`` computes mxnet's formula with the ``mx.nd`` functions (``F``), so values
and gradients (also second derivatives, with ``mx.autograd.grad(..., create_graph=True)``) come
from the recorded operations. The result has one value per sample: the loss is averaged (summed
for ``KLDivLoss`` and ``TripletLoss``) over every axis but ``batch_axis``. ``sample_weight`` is
broadcast-multiplied into the elementwise loss, ``weight`` (a number) multiplies it.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> from gradhub_compat.mxnet import gluon
    >>> loss = gluon.loss.SoftmaxCrossEntropyLoss()
    >>> loss(mx.nd.array([[1.0, 2.0, 3.0]]), mx.nd.array([2])).asnumpy().round(4)
    array([0.4076], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ndarray as nd
from ..ndarray import NDArray
from .block import HybridBlock

__all__ = [
    "CTCLoss",
    "CosineEmbeddingLoss",
    "HingeLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "L2Loss",
    "LogisticLoss",
    "Loss",
    "PoissonNLLLoss",
    "SDMLLoss",
    "SigmoidBCELoss",
    "SigmoidBinaryCrossEntropyLoss",
    "SoftmaxCELoss",
    "SoftmaxCrossEntropyLoss",
    "SquaredHingeLoss",
    "TripletLoss",
]

_DOCS = "docs/migration-mxnet.md"


def _apply_weighting(F: Any, loss: NDArray, weight: Any = None, sample_weight: Any = None) -> Any:
    """``loss`` broadcast-multiplied by ``sample_weight`` and multiplied by ``weight``."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if isinstance(weight, bool) or not isinstance(weight, (int, float, np.number)):
            raise TypeError(f"gluon.loss: weight must be a number, got {type(weight).__name__}")
        loss = loss * weight
    return loss


def _reshape_like(F: Any, x: Any, y: Any) -> Any:
    """``x`` reshaped to ``y``'s shape (mxnet's ``_reshape_like``: ``reshape`` for NDArrays,
    the operator ``reshape_like`` for Symbols)."""
    if isinstance(x, NDArray):
        return x.reshape(y.shape)
    return F.reshape_like(x, y)


def _softrelu(F: Any, x: NDArray) -> NDArray:
    """mxnet's ``Activation(x, act_type="softrelu")``: ``log(1 + e^x)``."""
    return F.Activation(x, act_type="softrelu")  # type: ignore[no-any-return]


def _hinge(F: Any, margin: float, pred: Any, label: Any) -> Any:
    """``relu(margin - pred * label)``, ``label`` reshaped like ``pred``."""
    return F.relu(margin - pred * _reshape_like(F, label, pred))


class Loss(HybridBlock):
    """The base class of the losses: ``weight`` (a number or None) scales the loss,
    ``batch_axis`` is the axis of the samples (the one not averaged). The inputs are NDArrays
    (``F`` is ``mx.nd``) or Symbols (``F`` is ``mx.sym``: the loss is a symbol, trained with
    ``mx.sym.make_loss`` and a ``Module``), not a mix of both.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> loss = mx.gluon.loss.L2Loss()(mx.sym.var("pred"), mx.sym.var("label"))
        >>> loss.list_arguments(), loss.infer_shape(pred=(4, 3), label=(4, 3))[1]
        (['label', 'pred'], [(4,)])
    """

    def __init__(self, weight: Any, batch_axis: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def forward(self, x: Any, *args: Any) -> Any:
        from .. import symbol

        if any(isinstance(a, symbol.Symbol) for a in (x, *args)):
            for a in (x, *args):
                if a is not None and not isinstance(a, symbol.Symbol):
                    raise TypeError(
                        f"gluon.loss.{type(self).__name__}: inputs must be all Symbols or all "
                        f"NDArrays, got a Symbol and a {type(a).__name__}"
                    )
            return super().forward(x, *args)  # hybrid_forward with F = mx.sym
        for a in (x, *args):
            if a is not None and not isinstance(a, NDArray):
                raise TypeError(
                    f"gluon.loss.{type(self).__name__}: inputs must be NDArrays, got "
                    f"{type(a).__name__}"
                )
        return self.hybrid_forward(nd, x, *args)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def _weighted_mean(self, F: Any, loss: Any, sample_weight: Any) -> Any:
        """``loss`` weighted (``weight``, ``sample_weight``), averaged over the non-batch axes."""
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L2Loss(Loss):
    """``weight / 2 * (label - pred)^2``, averaged over the non-batch axes (``weight`` 1).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mx.gluon.loss.L2Loss()(mx.nd.array([[1.0, 2.0]]), mx.nd.array([[0.0, 0.0]])).asnumpy()
        array([1.25], dtype=float32)
    """

    def __init__(self, weight: Any = 1.0, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.square(label - pred)
        loss = _apply_weighting(F, loss, self._weight / 2, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L1Loss(Loss):
    """``|label - pred|``, averaged over the non-batch axes."""

    def __init__(self, weight: Any = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        return self._weighted_mean(F, loss, sample_weight)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross entropy of ``sigmoid(pred)`` (of ``pred`` with ``from_sigmoid``) and the
    label, averaged over the non-batch axes; computed stably from logits as
    ``relu(x) - x y + softrelu(-|x|)``, with ``pos_weight`` (the fourth input) weighting the
    positive term: ``x - x y + (1 + (pos_weight - 1) y) (softrelu(-|x|) + relu(-x))``. With
    ``from_sigmoid``: ``-(log(p + 1e-12) y + log(1 - p + 1e-12) (1 - y))``."""

    def __init__(
        self, from_sigmoid: bool = False, weight: Any = None, batch_axis: int = 0, **kwargs: Any
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(
        self, F: Any, pred: Any, label: Any, sample_weight: Any = None, pos_weight: Any = None
    ) -> Any:
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + _softrelu(F, -F.abs(pred))
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = (
                    pred - pred * label + log_weight * (_softrelu(F, -F.abs(pred)) + F.relu(-pred))
                )
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1.0 - pred + eps) * (1.0 - label))
            else:
                loss = -(
                    F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                    + F.log(1.0 - pred + eps) * (1.0 - label)
                )
        return self._weighted_mean(F, loss, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """``-log_softmax(pred, axis)[label]`` (class indices, ``sparse_label``) or
    ``-sum(log_softmax(pred) * label, axis)`` (probabilities), averaged over the non-batch
    axes; ``from_logits`` takes ``pred`` as log-probabilities already. Label indices are
    truncated to integers and clipped into range, as mxnet's ``pick``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> loss = mx.gluon.loss.SoftmaxCELoss(sparse_label=False)
        >>> loss(mx.nd.array([[0.0, 0.0]]), mx.nd.array([[0.5, 0.5]])).asnumpy().round(4)
        array([0.6931], dtype=float32)
    """

    def __init__(
        self,
        axis: int = -1,
        sparse_label: bool = True,
        from_logits: bool = False,
        weight: Any = None,
        batch_axis: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -(pred * label).sum(axis=self._axis, keepdims=True)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return loss.mean(axis=self._batch_axis, exclude=True)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """``label * (log(label + 1e-12) - pred)`` summed over the non-batch axes (``pred`` are
    log-probabilities with ``from_logits``, the default; else ``log_softmax(pred, axis)``)."""

    def __init__(
        self,
        from_logits: bool = True,
        axis: int = -1,
        weight: Any = None,
        batch_axis: int = 0,
        **kwargs: Any,
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        if not self._from_logits:
            pred = F.log_softmax(pred, self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class HuberLoss(Loss):
    """``|d| - rho / 2`` where ``|d| > rho``, else ``d^2 / (2 rho)`` (``d = label - pred``),
    averaged over the non-batch axes."""

    def __init__(
        self, rho: float = 1, weight: Any = None, batch_axis: int = 0, **kwargs: Any
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho, (0.5 / self._rho) * F.square(loss))
        return self._weighted_mean(F, loss, sample_weight)


class HingeLoss(Loss):
    """``relu(margin - pred * label)`` (labels -1 or 1), averaged over the non-batch axes."""

    def __init__(
        self, margin: float = 1, weight: Any = None, batch_axis: int = 0, **kwargs: Any
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        loss = _hinge(F, self._margin, pred, label)
        return self._weighted_mean(F, loss, sample_weight)


class SquaredHingeLoss(Loss):
    """``relu(margin - pred * label)^2``, averaged over the non-batch axes."""

    def __init__(
        self, margin: float = 1, weight: Any = None, batch_axis: int = 0, **kwargs: Any
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        loss = F.square(_hinge(F, self._margin, pred, label))
        return self._weighted_mean(F, loss, sample_weight)


class LogisticLoss(Loss):
    """``relu(x) - x y + softrelu(-|x|)`` with ``y`` the label in {0, 1} (``"binary"``) or
    ``(label + 1) / 2`` (``"signed"``, labels in {-1, 1}), averaged over the non-batch axes."""

    def __init__(
        self,
        weight: Any = None,
        batch_axis: int = 0,
        label_format: str = "signed",
        **kwargs: Any,
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if self._label_format not in ["signed", "binary"]:
            raise ValueError(f"label_format can only be signed or binary, recieved {label_format}.")

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + _softrelu(F, -F.abs(pred))
        return self._weighted_mean(F, loss, sample_weight)


class TripletLoss(Loss):
    """``relu(sum(|positive - pred|^2 - |negative - pred|^2) + margin)``, the sum over the
    non-batch axes."""

    def __init__(
        self, margin: float = 1, weight: Any = None, batch_axis: int = 0, **kwargs: Any
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, positive: Any, negative: Any) -> Any:
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(
            F.square(positive - pred) - F.square(negative - pred),
            axis=self._batch_axis,
            exclude=True,
        )
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, None)


class PoissonNLLLoss(Loss):
    """The Poisson negative log-likelihood averaged over every element (shape (1,)):
    ``exp(pred) - target * pred`` (``from_logits``), else ``pred - target * log(pred +
    epsilon)``; ``compute_full`` adds Stirling's term ``t log t - t + log(2 pi t) / 2`` where
    ``t > 1``, in place as mxnet 1.9.1 does, so with ``compute_full`` the loss can only be
    computed outside ``autograd.record()`` (inside, both raise ``MXNetError``)."""

    def __init__(
        self,
        weight: Any = None,
        from_logits: bool = True,
        batch_axis: int = 0,
        compute_full: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(
        self, F: Any, pred: Any, target: Any, sample_weight: Any = None, epsilon: float = 1e-08
    ) -> Any:
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            stirling *= target > 1
            # in place, as mxnet: inside autograd.record() this raises MXNetError, as in mxnet
            loss += stirling
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(input1, input2)`` for label 1, ``max(0, cos - margin)`` for label -1 (0 for
    other labels), with ``cos = x.y / max(|x| |y|, 1e-12)`` over the last axis; shape
    ``(batch, 1)``."""

    def __init__(
        self, weight: Any = None, batch_axis: int = 0, margin: float = 0, **kwargs: Any
    ) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(
        self, F: Any, input1: Any, input2: Any, label: Any, sample_weight: Any = None
    ) -> Any:
        if not isinstance(input1, NDArray):
            raise NotImplementedError(
                f"gluon.loss.CosineEmbeddingLoss: Symbol inputs are not supported ({_DOCS})"
            )
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        y_1 = label == 1
        y_minus_1 = label == -1
        cos_sim_a = (1 - cos_sim) * y_1
        z_array = F.array([0], ctx=cos_sim.context, dtype=cos_sim.dtype)
        cos_sim_b = F.broadcast_maximum(z_array, y_minus_1 * (cos_sim - self._margin), axis=1)
        loss = cos_sim_a + cos_sim_b
        return _apply_weighting(F, loss, self._weight, sample_weight)

    def _cosine_similarity(self, F: Any, x: Any, y: Any, axis: int = -1) -> Any:
        x_norm = F.norm(x, axis=axis).reshape((-1, 1))
        y_norm = F.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = F.sum(x * y, axis=axis).reshape((-1, 1))
        eps_arr = F.array([1e-12], ctx=x.context, dtype=x.dtype)
        return x_dot_y / F.broadcast_maximum(x_norm * y_norm, eps_arr)


def _unsupported(name: str, why: str) -> type[Loss]:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"gluon.loss.{name}: {why} is not supported by gradhub_compat.mxnet ({_DOCS})"
        )

    return type(name, (Loss,), {"__init__": __init__, "__doc__": f"Not supported: {name}."})


class CTCLoss(Loss):
    """The connectionist temporal classification loss, as mxnet 1.9.1: ``F.CTCLoss`` of the
    unnormalized predictions (``layout`` ``"NTC"`` or ``"TNC"``) and the labels (``label_layout``
    ``"NT"`` or ``"TN"``, padded with -1) with the blank class last (``alphabet_size - 1``);
    the optional inputs ``pred_lengths`` and ``label_lengths`` give each sequence's lengths, and
    ``sample_weight``/``weight`` scale the loss. One value per sequence (see
    ``mx.nd.CTCLoss``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> loss = mx.gluon.loss.CTCLoss()
        >>> label = mx.nd.array([[1, 0, -1, -1], [2, 1, 1, -1]])
        >>> loss(mx.nd.ones((2, 20, 4)), label).asnumpy().round(3)
        array([18.828, 16.506], dtype=float32)
    """

    def __init__(
        self, layout: str = "NTC", label_layout: str = "NT", weight: Any = None, **kwargs: Any
    ) -> None:
        if layout not in ("NTC", "TNC"):
            raise ValueError(
                f"gluon.loss.CTCLoss: Only 'NTC' and 'TNC' layouts for pred are supported. Got: "
                f"{layout}"
            )
        if label_layout not in ("NT", "TN"):
            raise ValueError(
                f"gluon.loss.CTCLoss: Only 'NT' and 'TN' layouts for label are supported. Got: "
                f"{label_layout}"
            )
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(
        self,
        F: Any,
        pred: Any,
        label: Any,
        pred_lengths: Any = None,
        label_lengths: Any = None,
        sample_weight: Any = None,
    ) -> Any:
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        loss = F.CTCLoss(
            pred,
            label,
            pred_lengths,
            label_lengths,
            use_data_lengths=pred_lengths is not None,
            use_label_lengths=label_lengths is not None,
            blank_label="last",
        )
        return _apply_weighting(F, loss, self._weight, sample_weight)


SDMLLoss = _unsupported("SDMLLoss", "the SDML loss")

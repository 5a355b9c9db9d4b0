"""mxnet 1.9.1's evaluation metrics (``mx.metric``): :class:`EvalMetric` and its registered
subclasses (``Accuracy``, ``TopKAccuracy``, ``F1``, ``MAE``, ``MSE``, ``RMSE``,
``CrossEntropy``, ``NegativeLogLikelihood``, ``Perplexity``, ``Loss``, ``CompositeEvalMetric``,
``CustomMetric``), :func:`create`, :func:`register`, :func:`np`.

A metric accumulates ``sum_metric`` and ``num_inst`` over :meth:`EvalMetric.update` calls
(lists of label and prediction NDArrays) and :meth:`EvalMetric.get` returns
``(name, sum_metric / num_inst)`` (NaN before any update); the ``global_`` counters survive
:meth:`EvalMetric.reset_local` (what ``Module.fit`` prints at the end of an epoch). The values
are mxnet's: computed in numpy on ``asnumpy()`` of the arrays, with mxnet's formulas and
accumulation order.

Example::

    >>> import gradhub_compat.mxnet as mx
    >>> acc = mx.metric.create("acc")
    >>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.7, 0.3], [0.4, 0.6], [0.9, 0.1]])])
    >>> acc.get()[0], float(acc.get()[1])
    ('accuracy', 0.6666666666666666)
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy

from .ndarray import NDArray

__all__ = [
    "F1",
    "MAE",
    "MCC",
    "MSE",
    "PCC",
    "RMSE",
    "Accuracy",
    "Caffe",
    "CompositeEvalMetric",
    "CrossEntropy",
    "CustomMetric",
    "EvalMetric",
    "Loss",
    "NegativeLogLikelihood",
    "PearsonCorrelation",
    "Perplexity",
    "TopKAccuracy",
    "Torch",
    "check_label_shapes",
    "create",
    "np",
    "register",
]

_DOCS = "docs/migration-mxnet.md"
_REGISTRY: dict[str, type[EvalMetric]] = {}


class _MetricAssertionError(ValueError, AssertionError):
    """A ValueError naming the problem, also the AssertionError mxnet raises there."""


def check_label_shapes(labels: Any, preds: Any, wrap: bool = False, shape: bool = False) -> Any:
    """Check that ``labels`` and ``preds`` have the same length (``shape=True``: the same
    shape), raising ``ValueError`` as mxnet; with ``wrap``, single NDArrays become lists."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError(
            f"Shape of labels {label_shape} does not match shape of predictions {pred_shape}"
        )
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


def _np(x: Any) -> numpy.ndarray:
    if isinstance(x, NDArray):
        return x.asnumpy()
    return numpy.asarray(x)


class EvalMetric:
    """The base class of metrics, as mxnet's ``mx.metric.EvalMetric``: ``update(labels,
    preds)`` adds to ``sum_metric``/``num_inst`` (and ``global_sum_metric``/
    ``global_num_inst``); ``get()`` is ``(name, sum_metric / num_inst)``, NaN when nothing was
    added; ``reset()`` clears both, ``reset_local()`` the local counters only; ``get_global()``
    reads the global ones; ``update_dict(labels, preds)`` takes dicts by name, picking
    ``label_names``/``output_names`` when given.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> class Count(mx.metric.EvalMetric):
        ...     def update(self, labels, preds):
        ...         self.sum_metric += len(labels)
        ...         self.num_inst += 1
        >>> m = Count("count")
        >>> m.get_name_value()
        [('count', nan)]
        >>> m.update([1, 2], [3, 4])
        >>> m.get(), str(m)
        (('count', 2.0), "EvalMetric: {'count': 2.0}")
    """

    def __init__(
        self,
        name: str,
        output_names: Any = None,
        label_names: Any = None,
        **kwargs: Any,
    ) -> None:
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict[str, Any]:
        """The settings that :func:`create` rebuilds this metric from."""
        config = self._kwargs.copy()
        config.update(
            {
                "metric": type(self).__name__,
                "name": self.name,
                "output_names": self.output_names,
                "label_names": self.label_names,
            }
        )
        return config

    def update_dict(self, label: dict[str, Any], pred: dict[str, Any]) -> None:
        """:meth:`update` with the arrays of dicts name -> NDArray (those of ``label_names``
        and ``output_names`` when given, else all, in the dicts' order)."""
        if self.output_names is not None:
            preds = [pred[name] for name in self.output_names]
        else:
            preds = list(pred.values())
        if self.label_names is not None:
            labels = [label[name] for name in self.label_names]
        else:
            labels = list(label.values())
        self.update(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        """Add a batch: ``labels`` and ``preds``, lists of NDArrays."""
        raise NotImplementedError(f"{type(self).__name__}.update is not defined")

    def reset(self) -> None:
        """Clear the local and global counters."""
        self.num_inst: Any = 0
        self.sum_metric: Any = 0.0
        self.global_num_inst: Any = 0
        self.global_sum_metric: Any = 0.0

    def reset_local(self) -> None:
        """Clear the local counters (the global ones stay)."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple[Any, Any]:
        """``(name, sum_metric / num_inst)``; the value is NaN when nothing was added."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self) -> tuple[Any, Any]:
        """:meth:`get` of the global counters (of the local ones for metrics without)."""
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float("nan"))
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return self.get()

    def get_name_value(self) -> list[tuple[str, Any]]:
        """:meth:`get` as a list of ``(name, value)`` pairs."""
        return _zip_name_value(*self.get())

    def get_global_name_value(self) -> list[tuple[str, Any]]:
        """:meth:`get_global` as a list of ``(name, value)`` pairs."""
        if self._has_global_stats:
            return _zip_name_value(*self.get_global())
        return self.get_name_value()


def _zip_name_value(name: Any, value: Any) -> list[tuple[str, Any]]:
    if not isinstance(name, list):
        name = [name]
    if not isinstance(value, list):
        value = [value]
    return list(zip(name, value))


def register(klass: type[EvalMetric]) -> type[EvalMetric]:
    """Register a metric class under its lower-cased name, for :func:`create`."""
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise TypeError(f"mx.metric.register: expected an EvalMetric subclass, got {klass!r}")
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def _alias(*aliases: str) -> Callable[[type[EvalMetric]], type[EvalMetric]]:
    def reg(klass: type[EvalMetric]) -> type[EvalMetric]:
        for a in aliases:
            _REGISTRY[a.lower()] = klass
        return klass

    return reg


def _create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """mxnet's registry ``create``: an EvalMetric as is, a dict or JSON text of settings, or a
    registered (lower-cased) name."""
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise _MetricAssertionError(
                "mx.metric.create: arguments given with an EvalMetric instance"
            )
        return metric
    if isinstance(metric, dict):
        return _create(**_config(metric))
    if not isinstance(metric, str):
        raise TypeError(
            "mx.metric.create: metric must be a name, a callable, a list, a dict or an "
            f"EvalMetric, got {type(metric).__name__}"
        )
    if metric.startswith("["):
        name, kw = json.loads(metric)
        return _create(name, **kw)
    if metric.startswith("{"):
        return _create(**_config(json.loads(metric)))
    key = metric.lower()
    if key not in _REGISTRY:
        raise _MetricAssertionError(
            f"mx.metric.create: {metric} is not registered. Please register with "
            "metric.register first"
        )
    return _REGISTRY[key](*args, **kwargs)


def _config(d: dict[str, Any]) -> dict[str, Any]:
    d = dict(d)
    if "metric" not in d:
        raise _MetricAssertionError("mx.metric.create: a dict of settings needs the key 'metric'")
    return d


def create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """A metric from a name (``"acc"``, ``"accuracy"``, ``"top_k_accuracy"``, ``"f1"``,
    ``"mae"``, ``"mse"``, ``"rmse"``, ``"ce"``, ``"nll_loss"``, ``"perplexity"``,
    ``"loss"``...), a callable ``feval(label, pred)`` (a :class:`CustomMetric`), a list of them
    (a :class:`CompositeEvalMetric`) or an :class:`EvalMetric` (returned as is), as mxnet's
    ``mx.metric.create``; an unknown name raises ``ValueError`` (also an ``AssertionError``, as
    mxnet's).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.create(["acc", "ce"])
        >>> m.update([mx.nd.array([1])], [mx.nd.array([[0.25, 0.75]])])
        >>> names, values = m.get()
        >>> names, [round(float(v), 6) for v in values]
        (['accuracy', 'cross-entropy'], [1.0, 0.287682])
    """
    if callable(metric) and not isinstance(metric, (EvalMetric, type)):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    return _create(metric, *args, **kwargs)


@register
@_alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; :meth:`get` returns the list of their names and the
    list of their values, as mxnet's.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.CompositeEvalMetric(["mae", "mse"])
        >>> m.update([mx.nd.array([1, 2])], [mx.nd.array([2, 4])])
        >>> [(n, float(v)) for n, v in m.get_name_value()]
        [('mae', 1.5), ('mse', 2.5)]
    """

    def __init__(
        self,
        metrics: Any = None,
        name: str = "composite",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )
        if metrics is None:
            metrics = []
        self.metrics = [create(i) for i in metrics]

    def add(self, metric: Any) -> None:
        """Add a metric (anything :func:`create` takes)."""
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        """The metric at ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError(
                f"CompositeEvalMetric.get_metric: Metric index {index} is out of range 0 and "
                f"{len(self.metrics)}"
            ) from None

    def update_dict(self, labels: dict[str, Any], preds: dict[str, Any]) -> None:
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        for metric in getattr(self, "metrics", []):
            metric.reset()

    def reset_local(self) -> None:
        for metric in getattr(self, "metrics", []):
            metric.reset_local()

    def _collect(self, pairs: list[tuple[Any, Any]]) -> tuple[list[Any], list[Any]]:
        names: list[Any] = []
        values: list[Any] = []
        for name, value in pairs:
            if isinstance(name, str):
                name = [name]
            if isinstance(value, (int, float, numpy.generic)):
                value = [value]
            names.extend(name)
            values.extend(value)
        return names, values

    def get(self) -> tuple[Any, Any]:
        return self._collect([m.get() for m in self.metrics])

    def get_global(self) -> tuple[Any, Any]:
        return self._collect([m.get_global() for m in self.metrics])

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update({"metrics": [i.get_config() for i in self.metrics]})
        return config


@register
@_alias("acc")
class Accuracy(EvalMetric):
    """The fraction of correct predictions, as mxnet: a prediction whose shape differs from
    its label's is turned into classes by ``argmax`` over ``axis``; labels and predictions are
    truncated to int32 and compared element by element.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> acc = mx.metric.Accuracy()
        >>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
        >>> acc.get()[0], float(acc.get()[1])
        ('accuracy', 0.6666666666666666)
    """

    def __init__(
        self,
        axis: int = 1,
        name: str = "accuracy",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        super().__init__(
            name,
            axis=axis,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            p = _np(pred_label)
            lab = _np(label)
            if p.shape != lab.shape:
                p = numpy.argmax(p, axis=self.axis)
            p = p.astype("int32").ravel()
            lab = lab.astype("int32").ravel()
            check_label_shapes(lab, p)
            num_correct = (p == lab).sum()
            self.sum_metric += num_correct
            self.global_sum_metric += num_correct
            self.num_inst += len(p)
            self.global_num_inst += len(p)


@register
@_alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """The fraction of labels among the ``top_k`` largest predictions (``top_k`` > 1), named
    ``top_k_accuracy_K``, as mxnet (``numpy.argpartition`` of the float32 predictions).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.TopKAccuracy(top_k=2)
        >>> m.update([mx.nd.array([2, 0])], [mx.nd.array([[0.1, 0.5, 0.4], [0.2, 0.3, 0.5]])])
        >>> m.get()[0], float(m.get()[1])
        ('top_k_accuracy_2', 0.5)
    """

    def __init__(
        self,
        top_k: int = 1,
        name: str = "top_k_accuracy",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        super().__init__(
            name,
            top_k=top_k,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        self.top_k = top_k
        if not self.top_k > 1:
            raise _MetricAssertionError(
                "TopKAccuracy: Please use Accuracy if top_k is no more than 1"
            )
        self.name += f"_{self.top_k}"

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            p = _np(pred_label)
            if len(p.shape) > 2:
                raise _MetricAssertionError(
                    "TopKAccuracy.update: Predictions should be no more than 2 dims"
                )
            p = numpy.argpartition(p.astype("float32"), -self.top_k)
            lab = _np(label).astype("int32")
            check_label_shapes(lab, p)
            num_samples = p.shape[0]
            if p.ndim == 1:
                self.sum_metric += numpy.equal(p.ravel(), lab.ravel()).sum()
            else:
                num_classes = p.shape[1]
                top_k = min(num_classes, self.top_k)
                for j in range(top_k):
                    num_correct = numpy.equal(p[:, num_classes - 1 - j].ravel(), lab.ravel()).sum()
                    self.sum_metric += num_correct
                    self.global_sum_metric += num_correct
            self.num_inst += num_samples
            self.global_num_inst += num_samples


class _BinaryStats:
    """mxnet's ``_BinaryClassificationMetrics``: true/false positive/negative counts."""

    def __init__(self, owner: str = "F1") -> None:
        self.owner = owner  # the metric named in the error for labels of more than 2 classes
        self.reset_stats()

    def update_binary_stats(self, label: Any, pred: Any) -> None:
        pred = _np(pred)
        label = _np(label).astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError(f"{self.owner} currently only supports binary classification.")
        pred_true = pred_label == 1
        pred_false = 1 - pred_true
        label_true = label == 1
        label_false = 1 - label_true
        for attr, v in (
            ("true_positives", (pred_true * label_true).sum()),
            ("false_positives", (pred_true * label_false).sum()),
            ("false_negatives", (pred_false * label_true).sum()),
            ("true_negatives", (pred_false * label_false).sum()),
        ):
            setattr(self, attr, getattr(self, attr) + v)
            setattr(self, "global_" + attr, getattr(self, "global_" + attr) + v)

    @staticmethod
    def _fscore(tp: Any, fp: Any, fn: Any) -> float:
        precision = float(tp) / (tp + fp) if tp + fp > 0 else 0.0
        recall = float(tp) / (tp + fn) if tp + fn > 0 else 0.0
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.0

    @property
    def fscore(self) -> float:
        return self._fscore(self.true_positives, self.false_positives, self.false_negatives)

    def matthewscc(self, use_global: bool = False) -> float:
        """mxnet's Matthews correlation coefficient of the (global) counts: ``(TP TN - FP FN) /
        sqrt((TP + FP)(TP + FN)(TN + FP)(TN + FN))``, the factors that are 0 taken as 1; 0 with
        no examples."""
        pre = "global_" if use_global else ""
        tp, fp, fn, tn = (
            float(getattr(self, pre + k))
            for k in ("true_positives", "false_positives", "false_negatives", "true_negatives")
        )
        if not tp + fp + fn + tn:
            return 0.0
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.0:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)

    @property
    def global_fscore(self) -> float:
        return self._fscore(
            self.global_true_positives, self.global_false_positives, self.global_false_negatives
        )

    @property
    def total_examples(self) -> Any:
        return (
            self.false_negatives + self.false_positives + self.true_negatives + self.true_positives
        )

    @property
    def global_total_examples(self) -> Any:
        return (
            self.global_false_negatives
            + self.global_false_positives
            + self.global_true_negatives
            + self.global_true_positives
        )

    def local_reset_stats(self) -> None:
        self.false_positives: Any = 0
        self.false_negatives: Any = 0
        self.true_positives: Any = 0
        self.true_negatives: Any = 0

    def reset_stats(self) -> None:
        self.local_reset_stats()
        self.global_false_positives: Any = 0
        self.global_false_negatives: Any = 0
        self.global_true_positives: Any = 0
        self.global_true_negatives: Any = 0


@register
class F1(EvalMetric):
    """The F1 score of binary classification (class 1 positive; predictions are scores of
    shape (batch, 2), argmax over axis 1), as mxnet: ``average="macro"`` averages the F1 of
    each :meth:`update`, ``"micro"`` computes it from the counts of all updates. Labels of more
    than two classes raise ``ValueError``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> f1 = mx.metric.F1()
        >>> f1.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
        >>> f1.get()[0], float(f1.get()[1])
        ('f1', 0.8)
    """

    def __init__(
        self,
        name: str = "f1",
        output_names: Any = None,
        label_names: Any = None,
        average: str = "macro",
    ) -> None:
        self.average = average
        self.metrics = _BinaryStats()
        EvalMetric.__init__(
            self, name=name, output_names=output_names, label_names=label_names,
            has_global_stats=True,
        )  # fmt: skip

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.metrics.update_binary_stats(label, pred)
        if self.average == "macro":
            self.sum_metric += self.metrics.fscore
            self.global_sum_metric += self.metrics.global_fscore
            self.num_inst += 1
            self.global_num_inst += 1
            self.metrics.reset_stats()
        else:
            self.sum_metric = self.metrics.fscore * self.metrics.total_examples
            self.global_sum_metric = self.metrics.global_fscore * self.metrics.global_total_examples
            self.num_inst = self.metrics.total_examples
            self.global_num_inst = self.metrics.global_total_examples

    def reset(self) -> None:
        self.sum_metric = 0.0
        self.num_inst = 0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        self.metrics.reset_stats()

    def reset_local(self) -> None:
        self.sum_metric = 0.0
        self.num_inst = 0
        self.metrics.local_reset_stats()


@register
class Perplexity(EvalMetric):
    """``exp(-sum(log(max(1e-10, p[label]))) / n)`` over the predicted probabilities of the
    labels (picked along ``axis``), skipping the positions whose label is ``ignore_label``
    (None: none), as mxnet's ``Perplexity``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.Perplexity(ignore_label=None)
        >>> m.update([mx.nd.array([0, 1])], [mx.nd.array([[0.5, 0.5], [0.25, 0.75]])])
        >>> round(m.get()[1], 6)
        1.632993
    """

    def __init__(
        self,
        ignore_label: Any,
        axis: int = -1,
        name: str = "perplexity",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        super().__init__(
            name,
            ignore_label=ignore_label,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        if len(labels) != len(preds):
            raise _MetricAssertionError(
                f"Perplexity.update: {len(labels)} labels and {len(preds)} predictions"
            )
        loss = 0.0
        num = 0
        for label, pred in zip(labels, preds):
            p = _np(pred)
            lab = _np(label)
            if lab.size != p.size / p.shape[-1]:
                raise _MetricAssertionError(
                    f"Perplexity.update: shape mismatch: {lab.shape} vs. {p.shape}"
                )
            lab = lab.reshape((lab.size,))
            # mxnet's pick (mode "clip") of label.astype(int32) along axis, in pred's dtype
            axis = self.axis % p.ndim
            moved = numpy.moveaxis(p, axis, -1).reshape(-1, p.shape[axis])
            idx = numpy.clip(lab.astype("int32"), 0, p.shape[axis] - 1)
            picked = moved[numpy.arange(moved.shape[0]), idx]
            if self.ignore_label is not None:
                ignore = (lab == self.ignore_label).astype(p.dtype)
                num -= ignore.sum(dtype=p.dtype).item()
                picked = picked * (1 - ignore) + ignore
            loss -= numpy.log(numpy.maximum(p.dtype.type(1e-10), picked)).sum(dtype=p.dtype).item()
            num += picked.size
        self.sum_metric += loss
        self.global_sum_metric += loss
        self.num_inst += num
        self.global_num_inst += num

    def get(self) -> tuple[Any, Any]:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self) -> tuple[Any, Any]:
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


def _as_2d(label: Any, pred: Any) -> tuple[numpy.ndarray, numpy.ndarray]:
    lab = _np(label)
    p = _np(pred)
    if len(lab.shape) == 1:
        lab = lab.reshape(lab.shape[0], 1)
    if len(p.shape) == 1:
        p = p.reshape(p.shape[0], 1)
    return lab, p


class _Regression(EvalMetric):
    def __init__(self, name: str, output_names: Any = None, label_names: Any = None) -> None:
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    @staticmethod
    def _value(lab: numpy.ndarray, p: numpy.ndarray) -> Any:
        raise NotImplementedError

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            v = self._value(*_as_2d(label, pred))
            self.sum_metric += v
            self.global_sum_metric += v
            self.num_inst += 1
            self.global_num_inst += 1


@register
class MAE(_Regression):
    """The mean absolute error ``mean(|label - pred|)`` of each batch (1-D arrays as columns,
    numpy broadcasting), averaged over batches, as mxnet.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.MAE()
        >>> m.update([mx.nd.array([3, -0.5, 2, 7])], [mx.nd.array([2.5, 0.0, 2, 8])])
        >>> m.get()[0], float(m.get()[1])
        ('mae', 0.5)
    """

    def __init__(self, name: str = "mae", output_names: Any = None, label_names: Any = None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _value(lab: numpy.ndarray, p: numpy.ndarray) -> Any:
        return numpy.abs(lab - p).mean()


@register
class MSE(_Regression):
    """The mean squared error ``mean((label - pred)**2)`` of each batch, averaged over
    batches, as mxnet.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.MSE()
        >>> m.update([mx.nd.array([3, -0.5, 2, 7])], [mx.nd.array([2.5, 0.0, 2, 8])])
        >>> m.get()[0], float(m.get()[1])
        ('mse', 0.375)
    """

    def __init__(self, name: str = "mse", output_names: Any = None, label_names: Any = None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _value(lab: numpy.ndarray, p: numpy.ndarray) -> Any:
        return ((lab - p) ** 2.0).mean()


@register
class RMSE(_Regression):
    """The root mean squared error ``sqrt(mean((label - pred)**2))`` of each batch, averaged
    over batches (not the root of the overall mean), as mxnet.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.RMSE()
        >>> m.update([mx.nd.array([3, -0.5, 2, 7])], [mx.nd.array([2.5, 0.0, 2, 8])])
        >>> round(float(m.get()[1]), 6)
        0.612372
    """

    def __init__(self, name: str = "rmse", output_names: Any = None, label_names: Any = None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _value(lab: numpy.ndarray, p: numpy.ndarray) -> Any:
        return numpy.sqrt(((lab - p) ** 2.0).mean())


class _LogLoss(EvalMetric):
    def __init__(
        self, eps: float, name: str, output_names: Any = None, label_names: Any = None
    ) -> None:
        super().__init__(
            name,
            eps=eps,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        self.eps = eps

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            lab = _np(label).ravel()
            p = _np(pred)
            if lab.shape[0] != p.shape[0]:
                raise _MetricAssertionError(
                    f"{type(self).__name__}.update: {lab.shape[0]} labels for "
                    f"{p.shape[0]} predictions"
                )
            prob = p[numpy.arange(lab.shape[0], dtype=numpy.int64), numpy.int64(lab)]
            v = (-numpy.log(prob + self.eps)).sum()
            self.sum_metric += v
            self.global_sum_metric += v
            self.num_inst += lab.shape[0]
            self.global_num_inst += lab.shape[0]


@register
@_alias("ce")
class CrossEntropy(_LogLoss):
    """``-sum(log(pred[i, label[i]] + eps)) / n`` over the examples (``pred`` holds
    probabilities of shape (n, classes)), as mxnet's ``CrossEntropy``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> ce = mx.metric.CrossEntropy()
        >>> ce.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
        >>> round(float(ce.get()[1]), 6)
        0.571599
    """

    def __init__(
        self,
        eps: float = 1e-12,
        name: str = "cross-entropy",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        super().__init__(eps, name, output_names, label_names)


@register
@_alias("nll_loss")
class NegativeLogLikelihood(_LogLoss):
    """The negative log-likelihood, ``-sum(log(pred[i, label[i]] + eps)) / n``, as mxnet's
    ``NegativeLogLikelihood`` (named ``nll-loss``).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.NegativeLogLikelihood()
        >>> m.update([mx.nd.array([1])], [mx.nd.array([[0.5, 0.5]])])
        >>> round(float(m.get()[1]), 6)
        0.693147
    """

    def __init__(
        self,
        eps: float = 1e-12,
        name: str = "nll-loss",
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        super().__init__(eps, name, output_names, label_names)


@register
class Loss(EvalMetric):
    """The mean of the predictions (for loss outputs): ``sum(pred) / pred.size`` over all
    updates; the labels are ignored, as mxnet's ``Loss``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.Loss()
        >>> m.update(None, [mx.nd.array([1.0, 2.0, 6.0])])
        >>> m.get()[0], float(m.get()[1])
        ('loss', 3.0)
    """

    def __init__(
        self, name: str = "loss", output_names: Any = None, label_names: Any = None
    ) -> None:
        super().__init__(
            name, output_names=output_names, label_names=label_names, has_global_stats=True
        )

    def update(self, _: Any, preds: Any) -> None:
        if isinstance(preds, NDArray):
            preds = [preds]
        for pred in preds:
            p = _np(pred)
            loss = p.sum(dtype=p.dtype).item()
            self.sum_metric += loss
            self.global_sum_metric += loss
            self.num_inst += p.size
            self.global_num_inst += p.size


@register
class Torch(Loss):
    """:class:`Loss` named ``torch`` (mxnet's)."""

    def __init__(
        self, name: str = "torch", output_names: Any = None, label_names: Any = None
    ) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """:class:`Loss` named ``caffe`` (mxnet's)."""

    def __init__(
        self, name: str = "caffe", output_names: Any = None, label_names: Any = None
    ) -> None:
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric of a function ``feval(label, pred)`` of numpy arrays, called per label and
    prediction pair: it returns a value (one instance) or ``(sum_metric, num_inst)``, as mxnet's
    ``CustomMetric``; the name defaults to the function's (``custom(<lambda>)`` for a lambda).
    ``allow_extra_outputs`` allows more predictions than labels.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> m = mx.metric.CustomMetric(lambda label, pred: (abs(label - pred).sum(), label.size))
        >>> m.update([mx.nd.array([1, 2])], [mx.nd.array([1, 5])])
        >>> m.get()[0], float(m.get()[1])
        ('custom(<lambda>)', 1.5)
    """

    def __init__(
        self,
        feval: Callable[..., Any],
        name: str | None = None,
        allow_extra_outputs: bool = False,
        output_names: Any = None,
        label_names: Any = None,
    ) -> None:
        if not callable(feval):
            raise TypeError(f"CustomMetric: feval must be callable, got {type(feval).__name__}")
        if name is None:
            name = feval.__name__
            if name.find("<") != -1:
                name = f"custom({name})"
        super().__init__(
            name,
            feval=feval,
            allow_extra_outputs=allow_extra_outputs,
            output_names=output_names,
            label_names=label_names,
            has_global_stats=True,
        )
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels: Any, preds: Any) -> None:
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            reval = self._feval(_np(label), _np(pred))
            if isinstance(reval, tuple):
                (sum_metric, num_inst) = reval
                self.sum_metric += sum_metric
                self.global_sum_metric += sum_metric
                self.num_inst += num_inst
                self.global_num_inst += num_inst
            else:
                self.sum_metric += reval
                self.global_sum_metric += reval
                self.num_inst += 1
                self.global_num_inst += 1

    def get_config(self) -> dict[str, Any]:
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(
    numpy_feval: Callable[..., Any], name: str | None = None, allow_extra_outputs: bool = False
) -> CustomMetric:
    """A :class:`CustomMetric` of a numpy function ``numpy_feval(label, pred)``, named after
    it, as mxnet's ``mx.metric.np``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> def err(label, pred):
        ...     return float((label != pred.argmax(axis=1)).mean())
        >>> m = mx.metric.np(err)
        >>> m.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.8, 0.2]])])
        >>> m.get()[0], float(m.get()[1])
        ('err', 0.5)
    """

    def feval(label: Any, pred: Any) -> Any:
        return numpy_feval(label, pred)

    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


@register
class MCC(EvalMetric):
    """The Matthews correlation coefficient of binary classification (class 1 positive;
    predictions are scores of shape (batch, 2), argmax over axis 1), as mxnet 1.9.1:
    ``(TP TN - FP FN) / sqrt((TP + FP)(TP + FN)(TN + FP)(TN + FN))`` with the factors that are 0
    taken as 1 (so a batch of one class gives 0). ``average="macro"`` averages the MCC of each
    :meth:`update` (the global value too: as mxnet, a macro update clears the global counts);
    ``"micro"`` computes it from the counts of all updates, ``num_inst`` counting examples.
    Labels of more than two classes raise ``ValueError``.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> mcc = mx.metric.MCC()
        >>> mcc.update([mx.nd.array([0, 1, 1, 0])],
        ...            [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6], [0.8, 0.2]])])
        >>> mcc.get()[0], round(float(mcc.get()[1]), 6)
        ('mcc', 0.57735)
    """

    def __init__(
        self,
        name: str = "mcc",
        output_names: Any = None,
        label_names: Any = None,
        average: str = "macro",
    ) -> None:
        self._average = average
        self._metrics = _BinaryStats("MCC")
        EvalMetric.__init__(
            self, name=name, output_names=output_names, label_names=label_names,
            has_global_stats=True,
        )  # fmt: skip

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._metrics.update_binary_stats(label, pred)
        m = self._metrics
        if self._average == "macro":
            self.sum_metric += m.matthewscc()
            self.global_sum_metric += m.matthewscc(use_global=True)
            self.num_inst += 1
            self.global_num_inst += 1
            m.reset_stats()
        else:
            self.sum_metric = m.matthewscc() * m.total_examples
            self.global_sum_metric = m.matthewscc(use_global=True) * m.global_total_examples
            self.num_inst = m.total_examples
            self.global_num_inst = m.global_total_examples

    def reset(self) -> None:
        self.sum_metric = 0.0
        self.num_inst = 0.0
        self.global_sum_metric = 0.0
        self.global_num_inst = 0.0
        self._metrics.reset_stats()

    def reset_local(self) -> None:
        self.sum_metric = 0.0
        self.num_inst = 0.0
        self._metrics.local_reset_stats()


@register
@_alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """The Pearson correlation of the flattened labels and predictions (same shapes), as mxnet
    1.9.1: ``average="macro"`` averages ``numpy.corrcoef(pred, label)[0, 1]`` of each array;
    ``"micro"`` accumulates the counts, means, squared deviations (Welford's update) and the
    co-deviation in mxnet's order and returns ``cov / ((n - 1) sd_pred sd_label)`` (as mxnet, the
    co-deviation uses the label mean after and the prediction mean before each array's update,
    and :meth:`get_global` of a micro metric reads counters that it never fills).

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> pr = mx.metric.PearsonCorrelation()
        >>> pr.update([mx.nd.array([[1, 0], [0, 1], [0, 1]])],
        ...           [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
        >>> pr.get()[0], round(float(pr.get()[1]), 6)
        ('pearsonr', 0.421637)
    """

    def __init__(
        self,
        name: str = "pearsonr",
        output_names: Any = None,
        label_names: Any = None,
        average: str = "macro",
    ) -> None:
        self.average = average
        EvalMetric.__init__(
            self, name, output_names=output_names, label_names=label_names,
            has_global_stats=True,
        )  # fmt: skip
        if self.average == "micro":
            self.reset_micro()

    def reset_micro(self) -> None:
        """Clear the micro-average accumulators."""
        self._sse_p: Any = 0
        self._mean_p: Any = 0
        self._sse_l: Any = 0
        self._mean_l: Any = 0
        self._pred_nums: Any = 0
        self._label_nums: Any = 0
        self._conv: Any = 0

    def reset(self) -> None:
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        if self.average == "micro":
            self.reset_micro()

    @staticmethod
    def update_variance(new_values: Any, *aggregate: Any) -> tuple[Any, Any, Any]:
        """Welford's update of ``(count, mean, M2)`` with the values ``new_values`` (mxnet's
        batch form)."""
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label: Any, pred: Any) -> None:
        """Add ``sum((label - mean_label) (pred - mean_pred))`` to the co-deviation."""
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            lab = _np(label).ravel().astype(numpy.float64)
            prd = _np(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                pearson_corr = numpy.corrcoef(prd, lab)[0, 1]
                self.sum_metric += pearson_corr
                self.global_sum_metric += pearson_corr
                self.num_inst += 1
                self.global_num_inst += 1
            else:
                self.global_num_inst += 1
                self.num_inst += 1
                self._label_nums, self._mean_l, self._sse_l = self.update_variance(
                    lab, self._label_nums, self._mean_l, self._sse_l
                )
                self.update_cov(lab, prd)
                self._pred_nums, self._mean_p, self._sse_p = self.update_variance(
                    prd, self._pred_nums, self._mean_p, self._sse_p
                )

    def get(self) -> tuple[Any, Any]:
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        n = self._label_nums
        denom = (n - 1) * numpy.sqrt(self._sse_p / (n - 1)) * numpy.sqrt(self._sse_l / (n - 1))
        return (self.name, self._conv / denom)


@register
class PCC(EvalMetric):
    """The multiclass Matthews correlation (Pearson's correlation of the confusion matrix), as
    mxnet 1.9.1: with ``C`` the confusion matrix (rows the predicted classes, argmax over axis 1
    unless the predictions have the labels' shape; columns the labels), ``n = sum(C)``,
    ``x``/``y`` its row/column sums, ``PCC = sum(diag(C) n - x y) / sqrt(sum(x (n - x))
    sum(y (n - y)))``, NaN when a factor of the denominator is 0. The matrix grows with the
    largest class seen (from 2). The local matrix is cleared by :meth:`reset_local`, the global
    one by :meth:`reset`; ``sum_metric`` is ``PCC * num_inst`` (updates), so :meth:`get` is the
    PCC of all the counts.

    Example::

        >>> import gradhub_compat.mxnet as mx
        >>> pcc = mx.metric.PCC()
        >>> pcc.update([mx.nd.array([0, 1, 2, 2])],
        ...            [mx.nd.array([[1., 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0]])])
        >>> pcc.get()[0], round(float(pcc.get()[1]), 6)
        ('pcc', 0.7)
    """

    def __init__(
        self,
        name: str = "pcc",
        output_names: Any = None,
        label_names: Any = None,
        has_global_stats: bool = True,
    ) -> None:
        self.k = 2
        self.lcm: numpy.ndarray = numpy.zeros((2, 2))
        self.gcm: numpy.ndarray = numpy.zeros((2, 2))
        EvalMetric.__init__(
            self, name=name, output_names=output_names, label_names=label_names,
            has_global_stats=has_global_stats,
        )  # fmt: skip

    def _grow(self, inc: int) -> None:
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)))  # (zeros)
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat: numpy.ndarray) -> float:
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return float(cov_xy / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels: Any, preds: Any) -> None:
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            lab = _np(label).astype("int32")
            prd = _np(pred)
            if prd.shape != lab.shape:
                prd = prd.argmax(axis=1)
            else:
                prd = prd.astype("int32")
            if lab.ndim != 1 or prd.shape != lab.shape:
                raise ValueError(
                    f"mx.metric.PCC: labels of shape {lab.shape} and predictions of shape "
                    f"{_np(pred).shape}: expected class indices (batch,) and scores (batch, k) "
                    "or class indices"
                )
            if lab.size and (lab.min() < 0 or prd.min() < 0):
                raise ValueError("mx.metric.PCC: class indices must be non-negative")
            n = int(max(prd.max(), lab.max())) if lab.size else 0
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (prd, lab), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property  # type: ignore[override]
    def sum_metric(self) -> float:  # type: ignore[override]
        """``PCC(local matrix) * num_inst``."""
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, value: Any) -> None:  # (EvalMetric's resets assign it: derived here)
        pass

    @property  # type: ignore[override]
    def global_sum_metric(self) -> float:  # type: ignore[override]
        """``PCC(global matrix) * global_num_inst``."""
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, value: Any) -> None:
        pass

    def reset(self) -> None:
        self.global_num_inst = 0.0
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self) -> None:
        self.num_inst = 0.0
        self.lcm = numpy.zeros((self.k, self.k))

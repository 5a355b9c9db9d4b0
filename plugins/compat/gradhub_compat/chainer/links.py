"""chainer's links: ``import gradhub_compat.chainer.links as L`` (``import chainer.links as L``).

:class:`Linear`, :class:`Convolution2D`, :class:`BatchNormalization`, :class:`EmbedID`,
:class:`LSTM`, :class:`StatelessLSTM` and :class:`Classifier` (and, from the modules of
:mod:`gradhub_compat.chainer._links`, one for each of chainer's ``chainer/links/`` categories,
the other convolutions, ``LayerNormalization``, ``GroupNormalization``, ``PReLU``, ``Scale``,
``Bias``, ``Maxout``, ``Highway``, ``Bilinear``, ``BinaryHierarchicalSoftmax``,
``NegativeSampling``, the GRUs and the n-step RNNs) with chainer 7.8.1's arguments, defaults,
initial values (LeCunNormal weights drawn from numpy's global generator, zero biases; see
:mod:`gradhub_compat.chainer.initializers`), parameter names and deferred shapes
(``in_size=None``: set at the first call).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.links as L
    >>> layer = L.Linear(3, 2, initialW=np.ones((2, 3), dtype=np.float32))
    >>> layer(np.ones((1, 3), dtype=np.float32))
    variable([[3., 3.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gradhub.modes import is_tracing

from . import Variable, as_array, config
from . import functions as F
from . import initializers as _init
from ._device import _missing_attribute
from ._links._common import (
    _check_groups,
    _conv2d_args,
    _init_conv_params,
    _input_of,
    _pair,
    _reject_kwargs,
    _running_decay,
)
from .link import Chain, Link, Parameter
from .reporter import report

__all__ = [
    "LSTM",
    "BatchNormalization",
    "Classifier",
    "Convolution2D",
    "EmbedID",
    "Linear",
    "StatelessLSTM",
]


class Linear(Link):
    """``Linear(in_size, out_size=None, nobias=False, initialW=None, initial_bias=None)``:
    ``y = x W^T + b`` with ``W`` of shape (out_size, in_size). ``Linear(out_size)`` or
    ``in_size=None`` defers W's shape to the first call (x flattened after ``n_batch_axes``).
    """

    W: Parameter
    b: Parameter | None

    def __init__(
        self,
        in_size: int | None,
        out_size: int | None = None,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
    ) -> None:
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        self.in_size = in_size
        self.out_size = out_size
        _init_conv_params(self, initialW, in_size, nobias, initial_bias, out_size)

    def _initialize_params(self, in_size: int) -> None:
        self.W.initialize((self.out_size, in_size))

    @classmethod
    def from_params(cls, W: Any, b: Any = None, nobias: bool = False) -> Linear:
        """A Linear whose W (out, in) and b are copies of the given arrays or Variables."""
        out_size, in_size = W.shape
        if b is not None and out_size != b.size:
            raise ValueError("`out_size` does not match the size of `b`")
        return cls(in_size, out_size, nobias, initialW=as_array(W), initial_bias=as_array(b))

    @property
    def printable_specs(self) -> Any:
        yield from (("in_size", self.in_size), ("out_size", self.out_size))
        yield ("nobias", self.b is None)

    def forward(self, x: Any, n_batch_axes: int = 1) -> Any:
        """``F.linear(x, W, b, n_batch_axes)``, initializing W from x's shape first if needed."""
        if self.W.array is None:
            self._initialize_params(int(np.prod(x.shape[n_batch_axes:])))
        return F.linear(x, self.W, self.b, n_batch_axes=n_batch_axes)


class EmbedID(Link):
    """``EmbedID(in_size, out_size, initialW=None, ignore_label=None)``: word embeddings, ``W``
    of shape (in_size, out_size) (``Normal(1.0)`` by default, as chainer), ``y = W[x]``
    (``F.embed_id``; ids equal to ``ignore_label`` give zero rows)."""

    def __init__(
        self, in_size: int, out_size: int, initialW: Any = None, ignore_label: int | None = None
    ) -> None:
        super().__init__()
        self.ignore_label = ignore_label
        with self.init_scope():
            if initialW is None:
                initialW = _init.Normal(1.0)
            self.W = Parameter(_init._get_initializer(initialW), (in_size, out_size))

    @classmethod
    def from_params(cls, W: Any, ignore_label: int | None = None) -> EmbedID:
        """An EmbedID whose W is a copy of the given array or Variable."""
        in_size, out_size = W.shape
        return cls(in_size, out_size, initialW=as_array(W), ignore_label=ignore_label)

    def forward(self, x: Any) -> Any:
        """``F.embed_id(x, W, ignore_label)``."""
        return F.embed_id(x, self.W, ignore_label=self.ignore_label)


class _LSTMBase(Chain):
    """chainer's ``LSTMBase``: the child links ``upward = Linear(in_size, 4 * out_size)`` and
    ``lateral = Linear(out_size, 4 * out_size, nobias=True)`` and their initialization."""

    def __init__(
        self,
        in_size: int | None,
        out_size: int | None = None,
        lateral_init: Any = None,
        upward_init: Any = None,
        bias_init: Any = None,
        forget_bias_init: Any = None,
    ) -> None:
        if out_size is None:
            out_size, in_size = in_size, None
        if out_size is None:
            raise TypeError(f"chainer L.{type(self).__name__}: out_size is required")
        super().__init__()
        if bias_init is None:
            bias_init = 0
        if forget_bias_init is None:
            forget_bias_init = 1
        self.state_size = out_size
        self.lateral_init = lateral_init
        self.upward_init = upward_init
        self.bias_init = bias_init
        self.forget_bias_init = forget_bias_init
        with self.init_scope():
            self.upward = Linear(in_size, 4 * out_size, initialW=0)
            self.lateral = Linear(out_size, 4 * out_size, initialW=0, nobias=True)
            if in_size is not None:
                self._initialize_params()

    def _initialize_params(self) -> None:
        """chainer's order of draws: for each block of ``state_size`` rows (gates a, i, f, o
        of the weights), ``lateral_init`` then ``upward_init``; then the bias of gates a, i
        (``bias_init``), f (``forget_bias_init``) and o (``bias_init``), each a strided view
        ``b.reshape(1, n, 4, 1)[:, :, k]`` of shape (1, n, 1)."""
        lateral_init = _init._get_initializer(self.lateral_init)
        upward_init = _init._get_initializer(self.upward_init)
        bias_init = _init._get_initializer(self.bias_init)
        forget_bias_init = _init._get_initializer(self.forget_bias_init)
        n = self.state_size
        # in place, as chainer (the arrays were just made by the Linear links)
        lateral_w, upward_w = self.lateral.W._data, self.upward.W._data
        for i in range(0, 4 * n, n):
            lateral_init(lateral_w[i : i + n, :])
            upward_init(upward_w[i : i + n, :])
        gates = self.upward.b._data.reshape(1, n, 4, 1)  # type: ignore[union-attr]
        bias_init(gates[:, :, 0])
        bias_init(gates[:, :, 1])
        forget_bias_init(gates[:, :, 2])
        bias_init(gates[:, :, 3])


class StatelessLSTM(_LSTMBase):
    """``StatelessLSTM(in_size, out_size=None, lateral_init=None, upward_init=None,
    bias_init=None, forget_bias_init=None)``: an LSTM layer without state,
    ``(c, h) = F.lstm(c, upward(x) + lateral(h))`` (``lateral`` skipped when ``h`` is None,
    ``c`` zeros when None). ``upward`` (W of shape (4 n, in), the bias) and ``lateral`` (W of
    shape (4 n, n), no bias) are initialized as chainer: ``lateral_init``/``upward_init``
    (LeCunNormal by default) block by block, the gate biases ``bias_init`` (0) and, for the
    forget gate, ``forget_bias_init`` (1). ``StatelessLSTM(out_size)`` or ``in_size=None``
    defers the input size to the first call."""

    def forward(self, c: Any, h: Any, x: Any) -> tuple[Variable, Variable]:
        """``(c_new, h_new) = F.lstm(c, upward(x) + lateral(h))``."""
        if self.upward.W.array is None:
            self.upward._initialize_params(int(x.size // x.shape[0]))
            self._initialize_params()
        lstm_in = self.upward(x)
        if h is not None:
            lstm_in += self.lateral(h)
        if c is None:
            c = Variable(self.xp.zeros((x.shape[0], self.state_size), dtype=x.dtype))
        return F.lstm(c, lstm_in)


class LSTM(_LSTMBase):
    """``LSTM(in_size, out_size=None, lateral_init=None, upward_init=None, bias_init=None,
    forget_bias_init=None)``: a stateful LSTM layer (chainer's ``L.LSTM``).

    Each call ``y = lstm(x)`` computes ``(c, y) = F.lstm(c, upward(x) + lateral(h))`` and
    keeps ``c`` and ``h = y`` as the state (the first call after :meth:`reset_state` starts
    from ``c = 0`` and no lateral term). The batch may shrink between calls (sequences sorted
    by decreasing length): with ``B = len(x)`` smaller than ``len(h)``, only the first ``B``
    rows of ``c`` and ``h`` are updated, the rest kept (``h = concat(y, h[B:])``); a larger
    batch raises ``TypeError``. Parameters and initialization are
    :class:`StatelessLSTM`'s; ``LSTM(out_size)`` or ``in_size=None`` defers the input size
    (``prod(x.shape[1:])``) to the first call.
    """

    c: Any  # the cell state (None before the first call)
    h: Any  # the output state

    def __init__(
        self,
        in_size: int | None,
        out_size: int | None = None,
        lateral_init: Any = None,
        upward_init: Any = None,
        bias_init: Any = None,
        forget_bias_init: Any = None,
    ) -> None:
        if out_size is None:
            in_size, out_size = None, in_size
        super().__init__(in_size, out_size, lateral_init, upward_init, bias_init, forget_bias_init)
        self.reset_state()

    def to_device(self, device: Any) -> Link:
        """Move the parameters and the state ``c``, ``h`` to ``device``; returns self."""
        super().to_device(device)
        for v in (self.c, self.h):
            if v is not None:
                v.to_device(self.device)
        return self

    def set_state(self, c: Any, h: Any) -> None:
        """Set the state ``c`` and ``h`` (chainer Variables, moved to the link's device)."""
        if not isinstance(c, Variable) or not isinstance(h, Variable):
            raise TypeError("chainer L.LSTM.set_state: c and h must be chainer Variables")
        c.to_device(self.device)
        h.to_device(self.device)
        self.c = c
        self.h = h

    def reset_state(self) -> None:
        """Forget the state: ``c`` and ``h`` become None."""
        self.c = None
        self.h = None

    def forward(self, x: Any) -> Variable:
        """Update the state with the batch ``x`` and return the output ``h`` of its rows."""
        dev = self.device
        for v in (self.c, self.h):  # (moved by a parent's to_device, which skips the state)
            if v is not None and v.device != dev:
                v.to_device(dev)
        if self.upward.W.array is None:
            self.upward._initialize_params(int(np.prod(x.shape[1:])))
            self._initialize_params()
        batch = x.shape[0]
        lstm_in = self.upward(x)
        h_rest = None
        if self.h is not None:
            h_size = self.h.shape[0]
            if batch == 0:
                h_rest = self.h
            elif h_size < batch:
                raise TypeError(
                    "The batch size of x must be equal to or less than the size of the "
                    "previous state h."
                )
            elif h_size > batch:
                h_update, h_rest = F.split_axis(self.h, [batch], axis=0)
                lstm_in += self.lateral(h_update)
            else:
                lstm_in += self.lateral(self.h)
        if self.c is None:
            self.c = Variable(self.xp.zeros((batch, self.state_size), dtype=x.dtype))
        self.c, y = F.lstm(self.c, lstm_in)
        if h_rest is None:
            self.h = y
        elif len(y.array) == 0:
            self.h = h_rest
        else:
            self.h = F.concat([y, h_rest], axis=0)
        return y


class Convolution2D(Link):
    """``Convolution2D(in_channels, out_channels, ksize=None, stride=1, pad=0, nobias=False,
    initialW=None, initial_bias=None, *, dilate=1, groups=1)``; ``Convolution2D(out_channels,
    ksize)`` (or ``in_channels=None``) defers W's shape (out, in // groups, kh, kw) to the
    first call."""

    W: Parameter
    b: Parameter | None

    def __init__(
        self,
        in_channels: int | None,
        out_channels: int,
        ksize: Any = None,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        initialW: Any = None,
        initial_bias: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        in_channels, out_channels, ksize, dilate, groups = _conv2d_args(
            "Convolution2D", in_channels, out_channels, ksize, kwargs
        )
        self.ksize = ksize
        self.stride = _pair(stride)
        self.pad = _pair(pad)
        self.dilate = _pair(dilate)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.groups = int(groups)
        _init_conv_params(self, initialW, in_channels, nobias, initial_bias, out_channels)

    @property
    def printable_specs(self) -> Any:
        yield from (
            ("in_channels", self.in_channels),
            ("out_channels", self.out_channels),
            ("ksize", self.ksize),
            ("stride", self.stride),
            ("pad", self.pad),
            ("nobias", self.b is None),
            ("dilate", self.dilate),
            ("groups", self.groups),
        )

    @classmethod
    def from_params(
        cls,
        W: Any,
        b: Any = None,
        stride: Any = 1,
        pad: Any = 0,
        nobias: bool = False,
        *,
        dilate: Any = 1,
        groups: int = 1,
    ) -> Convolution2D:
        """A Convolution2D whose W (out, in // groups, kh, kw) and b are copies of the given
        arrays or Variables."""
        out_channels, in_per_group, kh, kw = W.shape
        if b is not None and out_channels != b.size:
            raise ValueError("`out_channels` does not match the size of `b`")
        return cls(
            in_per_group * groups,
            out_channels,
            (kh, kw),
            stride,
            pad,
            nobias,
            initialW=as_array(W),
            initial_bias=as_array(b),
            dilate=dilate,
            groups=groups,
        )

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        _check_groups(in_channels, self.out_channels, self.groups)
        self.W.initialize((self.out_channels, int(in_channels / self.groups), kh, kw))

    def forward(self, x: Any) -> Any:
        """``F.convolution_2d(x, W, b, stride, pad, dilate=..., groups=...)``."""
        x = _input_of(self, x)
        return F.convolution_2d(
            x, self.W, self.b, self.stride, self.pad, dilate=self.dilate, groups=self.groups
        )


class BatchNormalization(Link):
    """``BatchNormalization(size=None, decay=0.9, eps=2e-5, dtype=None, use_gamma=True,
    use_beta=True, initial_gamma=None, initial_beta=None, axis=None, initial_avg_mean=None,
    initial_avg_var=None)``.

    Training (``chainer.config.train``, the default): normalizes with the batch statistics and
    updates the persistent ``avg_mean`` and ``avg_var`` (``decay``; unbiased variance), or,
    with ``finetune=True``, their running average over the ``N`` calls so far; not while
    ``chainer.config.in_recomputing`` (``F.forget``'s backward pass runs the link again).
    Evaluation (``with chainer.using_config('train', False)``): normalizes with
    ``avg_mean``/``avg_var``.
    ``gamma`` (ones) and ``beta`` (zeros) are the parameters; ``size=None`` with ``axis``
    defers the shapes to the first call.
    """

    gamma: Parameter | None = None
    beta: Parameter | None = None

    def __init__(
        self,
        size: Any = None,
        decay: float = 0.9,
        eps: float = 2e-5,
        dtype: Any = None,
        use_gamma: bool = True,
        use_beta: bool = True,
        initial_gamma: Any = None,
        initial_beta: Any = None,
        axis: Any = None,
        initial_avg_mean: Any = None,
        initial_avg_var: Any = None,
    ) -> None:
        super().__init__()
        if size is None and axis is None:
            raise RuntimeError("size or axis is required")
        self._initial_avg_mean = initial_avg_mean
        self._initial_avg_var = initial_avg_var
        self.N = 0
        self.register_persistent("N")
        self.decay = decay
        self.eps = eps
        if isinstance(axis, int):
            axis = (axis,)
        self.axis = axis
        from .backend import get_dtype

        dt = get_dtype(dtype)  # dtype None: chainer.config.dtype (float32 only, else refused)
        if dt == np.float16:
            dt = np.dtype(np.float32)  # chainer: map_mixed16 (the statistics in float32)
        self._highprec_dtype = dt
        with self.init_scope():
            if use_gamma:
                gi = _init._get_initializer(1 if initial_gamma is None else initial_gamma)
                gi.dtype = dt
                self.gamma = Parameter(gi)
            if use_beta:
                bi = _init._get_initializer(0 if initial_beta is None else initial_beta)
                bi.dtype = dt
                self.beta = Parameter(bi)
        if size is None:
            self.avg_mean: Any = None
            self.avg_var: Any = None
        else:
            self._initialize_params(size)
        self.register_persistent("avg_mean")
        self.register_persistent("avg_var")

    def _initialize_params(self, shape: Any) -> None:
        self.avg_mean = self._init_array(self._initial_avg_mean, 0, shape)
        self._initial_avg_mean = None
        self.avg_var = self._init_array(self._initial_avg_var, 1, shape)
        self._initial_avg_var = None
        if self.gamma is not None:
            self.gamma.initialize(shape)
        if self.beta is not None:
            self.beta.initialize(shape)

    def _init_array(self, initializer: Any, default: float, size: Any) -> Any:
        init = _init._get_initializer(default if initializer is None else initializer)
        dev = self.device
        return _init.generate_array(
            init, size, np, dtype=self._highprec_dtype, device=None if dev.kind == "cpu" else dev
        )

    @property
    def printable_specs(self) -> Any:
        yield from (
            ("size", self.avg_mean.shape[0]),
            ("decay", self.decay),
            ("eps", self.eps),
            ("dtype", self.avg_mean.dtype),
            ("use_gamma", hasattr(self, "gamma")),
            ("use_beta", hasattr(self, "beta")),
        )

    def forward(self, x: Any, **kwargs: Any) -> Any:
        """Normalize ``x`` (see the class); ``finetune=True`` averages the statistics over the
        calls since the last :meth:`start_finetuning`."""
        finetune = kwargs.pop("finetune", False)
        if "test" in kwargs:
            raise ValueError("test argument is not supported anymore. Use chainer.using_config")
        _reject_kwargs("BatchNormalization", kwargs)
        if self.avg_mean is None:
            self._initialize_params(tuple(d for i, d in enumerate(x.shape) if i not in self.axis))
        xp = self.xp
        gamma = self.gamma
        if gamma is None:
            gamma = xp.ones(self.avg_mean.shape, dtype=self._highprec_dtype)
        beta = self.beta
        if beta is None:
            beta = xp.zeros(self.avg_mean.shape, dtype=self._highprec_dtype)
        if config.train:
            if finetune and is_tracing():
                raise NotImplementedError(
                    "chainer L.BatchNormalization(x, finetune=True) counts its calls in "
                    "Python (N, and the decay 1 - 1/N), which a step that gradhub.compile "
                    "traces would do at its first call only; run finetuning outside "
                    "gh.compile"
                )
            decay = _running_decay(self, finetune)
            avg_mean, avg_var = self.avg_mean, self.avg_var
            if config.in_recomputing:
                # F.forget's second forward pass: the statistics were updated by the first
                # (chainer 7.8.1 reverts the finetune count and updates nothing)
                if finetune:
                    self.N -= 1
                avg_mean = avg_var = None
            return self._normalize_by_batch(x, gamma, beta, avg_mean, avg_var, decay)
        return F.fixed_batch_normalization(
            x, gamma, beta, self.avg_mean, self.avg_var, self.eps, axis=self.axis
        )

    def start_finetuning(self) -> None:
        """Restart the statistics average of ``finetune=True`` (``N = 0``)."""
        self.N = 0

    def _normalize_by_batch(
        self, x: Any, gamma: Any, beta: Any, avg_mean: Any, avg_var: Any, decay: float
    ) -> Any:
        """Training mode's normalization, the running statistics updated (None: not kept)."""
        return F.batch_normalization(
            x,
            gamma,
            beta,
            eps=self.eps,
            running_mean=avg_mean,
            running_var=avg_var,
            decay=decay,
            axis=self.axis,
        )


class Classifier(Chain):
    """``Classifier(predictor, lossfun=F.softmax_cross_entropy, accfun=F.accuracy,
    label_key=-1)``: ``model(*args)`` takes the label from ``args[label_key]`` (an int
    position or a keyword name), computes ``y = predictor(*rest)``, ``loss = lossfun(y, t)``
    and, when ``compute_accuracy``, ``accuracy = accfun(y, t)``; ``y``, ``loss`` and
    ``accuracy`` stay as attributes and are reported (``chainer.report``, under the name the
    current ``chainer.Reporter`` gives the classifier); the loss is returned.
    """

    compute_accuracy = True

    def __init__(
        self,
        predictor: Link,
        lossfun: Any = F.softmax_cross_entropy,
        accfun: Any = F.accuracy,
        label_key: int | str = -1,
    ) -> None:
        if not isinstance(label_key, (int, str)):
            raise TypeError(f"label_key must be int or str, but is {type(label_key)}")
        super().__init__()
        self.lossfun = lossfun
        self.accfun = accfun
        self.y: Any = None
        self.loss: Any = None
        self.accuracy: Any = None
        self.label_key = label_key
        with self.init_scope():
            self.predictor = predictor

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The loss of ``predictor(*args_without_label)`` against the label."""
        if isinstance(self.label_key, int):
            if not (-len(args) <= self.label_key < len(args)):
                raise ValueError(f"Label key {self.label_key} is out of bounds")
            t = args[self.label_key]
            if self.label_key == -1:
                args = args[:-1]
            else:
                args = args[: self.label_key] + args[self.label_key + 1 :]
        else:
            if self.label_key not in kwargs:
                raise ValueError(f'Label key "{self.label_key}" is not found')
            t = kwargs.pop(self.label_key)
        self.y = None
        self.loss = None
        self.accuracy = None
        self.y = self.predictor(*args, **kwargs)
        self.loss = self.lossfun(self.y, t)
        report({"loss": self.loss}, self)
        if self.compute_accuracy:
            self.accuracy = self.accfun(self.y, t)
            report({"accuracy": self.accuracy}, self)
        return self.loss


# the other convolutions, normalizations, activations and recurrent links (since 2026-11-27)
from ._links import *  # noqa: E402, F403
from ._links import __all__ as _category_all  # noqa: E402

__all__ += _category_all

# BatchRenormalization (a BatchNormalization, so imported here) and
# DecorrelatedBatchNormalization
from ._links.normalization_extra import (  # noqa: E402
    BatchRenormalization,
    DecorrelatedBatchNormalization,
)

__all__ += ["BatchRenormalization", "DecorrelatedBatchNormalization"]

# chainer's module paths (``chainer.links.connection.linear``...) holding these links
from ._module_paths import install_links  # noqa: E402

install_links(__name__)


def __getattr__(name: str) -> Any:
    # another chainer link class: NotImplementedError
    _missing_attribute(__name__, "chainer.links", name, name[:1].isupper(), __all__)

"""nnabla's solvers: ``import gradhub_compat.nnabla.solvers as S``.

:class:`Sgd`, :class:`Momentum`, :class:`Nesterov`, :class:`Adam`, :class:`Adamax`,
:class:`AMSGRAD`, :class:`Adagrad`, :class:`Adadelta`, :class:`RMSprop`,
:class:`RMSpropGraves`, :class:`SgdW`, :class:`AdamW`, :class:`AdaBound`, :class:`AMSBound`,
:class:`Lars`, :class:`Lamb`, :class:`Lion` and :class:`AdaBelief` with nnabla's API
(``set_parameters(params, reset=True, retain_state=False)``, ``zero_grad()``,
``weight_decay(rate)``, ``clip_grad_by_norm(norm)``, ``update()``, ``set_learning_rate``,
``learning_rate()``, ``get_states``/``set_states``, ``save_states``/``load_states`` with .h5
and .protobuf files) and nnabla 1.39's update formulas, computed in the parameters' dtype
(float32 for nnabla Variables) with float32 hyper-parameters in the order of operations of
nnabla's C++ solvers (Adam folds the bias correction into the step size, ``eps`` outside the
square root).

As nnabla's: the solver updates every registered parameter (also those with ``need_grad=False``)
from its ``.g``, which ``update()`` leaves as it is (but ``Lars``, which adds its weight decay
into it); ``weight_decay`` (``g += rate * w``; for the solvers whose decay is fused, ``SgdW``,
``AdamW``, ``Lars``, ``Lamb``, ``Lion`` and ``AdaBelief(weight_decouple=True)``, the rate of the
next ``update()`` instead), ``clip_grad_by_norm`` (per parameter) and ``scale_grad`` change
``.g`` at once; parameters and states are listed by name in sorted order. A parameter's data
is updated in its array (so that every Variable sharing it, e.g. an unlinked one, sees the new
values), then held as a new array object, so that a graph recorded before the update is
recomputed by ``forward()`` before it can be differentiated again (nnabla's loop calls
``forward()`` first anyway).

Example::

    >>> import numpy as np
    >>> import gradhub_compat.nnabla as nn
    >>> import gradhub_compat.nnabla.solvers as S
    >>> w = nn.Variable.from_numpy_array(np.array([1.0, -2.0]), need_grad=True)
    >>> solver = S.Sgd(lr=0.25)
    >>> solver.set_parameters({"w": w})
    >>> solver.zero_grad()
    >>> (w * w).backward()
    >>> solver.update()
    >>> w.d
    array([ 0.5, -1. ], dtype=float32)
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np
from gradhub.variable import Variable as NativeVariable
from gradhub.variable import observe_write

from ._parameter_files import _h5py, _open_h5
from ._variable import Variable, grad_is_zeroing, set_zeroing_grad

__all__ = [
    "AMSGRAD",
    "AMSBound",
    "AdaBelief",
    "AdaBound",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Lamb",
    "Lars",
    "Lion",
    "Momentum",
    "Nesterov",
    "RMSprop",
    "RMSpropGraves",
    "Sgd",
    "SgdW",
    "Solver",
    "SolverState",
]


class SolverState:
    """The state of one parameter: ``t`` (its update count) and ``pstate`` (name -> Variable:
    Momentum's and Nesterov's ``"m"``, Adam's ``"mean"`` and ``"var"``, Adagrad's and RMSprop's
    ``"v"``, Adadelta's ``"e_sqr_grad"`` and ``"e_sqr_delta"``, Adamax's ``"m"`` and ``"u"``,
    AMSGRAD's ``"m"``, ``"v"`` and ``"v_hat"``, RMSpropGraves' ``"n"``, ``"g"`` and ``"d"``,
    SgdW's and Lion's ``"m"``, AdamW's, AdaBound's, Lamb's and AdaBelief's ``"mean"`` and
    ``"var"`` (and AdaBelief's ``"s_max"`` with ``amsgrad``), AMSBound's ``"m"``, ``"v"`` and
    ``"v_hat"``, Lars' ``"v"``)."""

    def __init__(self, t: int = 0, pstate: dict[str, Variable] | None = None) -> None:
        self.t = int(t)
        self.pstate: dict[str, Variable] = {} if pstate is None else dict(pstate)

    def __repr__(self) -> str:
        return f"SolverState(t={self.t}, pstate={sorted(self.pstate)})"


def _no_hooks(where: str, *hooks: Any) -> None:
    if any(h is not None for h in hooks):
        raise NotImplementedError(f"nnabla Solver.{where}: hooks are not supported by gradhub")


class Solver:
    """The shared part of nnabla's solvers: the parameters, their states and the gradient tools.

    Subclasses give ``name``, the state names (``_pstate``) and ``_step``.
    """

    name = "Solver"
    _pstate: tuple[str, ...] = ()
    # nnabla's "fused" weight decay (SgdW, AdamW, Lars, Lamb, Lion, AdaBelief with
    # weight_decouple): weight_decay(rate) sets the rate the next update() uses, which then
    # goes back to the default (_default_wd)
    _fused = False
    _default_wd = 0.0

    def __init__(self, lr: float) -> None:
        self._lr = float(lr)
        self._params: dict[str, NativeVariable] = {}
        self._states: dict[str, SolverState] = {}
        self._wd_rate = self._default_wd
        self._updating: Any = None  # (the parameter update() is at)

    # -- parameters ------------------------------------------------------------------------------
    def set_parameters(
        self, param_dict: Mapping[str, Any], reset: bool = True, retain_state: bool = False
    ) -> None:
        """Register the parameters of ``param_dict`` (name -> Variable), e.g.
        ``nn.get_parameters()``.

        ``reset`` (default): forget the parameters registered before. Otherwise these are added,
        or replace those of the same name with a new state (zeros, ``t = 0``); with
        ``retain_state``, as nnabla's, a name already registered keeps its Variable and state,
        and a shape other than the registered one raises.
        """
        if not isinstance(param_dict, Mapping):
            raise TypeError(
                f"nnabla {self.name}.set_parameters: param_dict must be a dict of name -> "
                f"Variable (e.g. nn.get_parameters()), got {type(param_dict).__name__}"
            )
        for k, p in param_dict.items():
            if not isinstance(p, NativeVariable):
                raise TypeError(
                    f"nnabla {self.name}.set_parameters: parameter {k!r} must be a Variable, "
                    f"got {type(p).__name__}"
                )
            if p.dtype.kind != "f":
                raise TypeError(
                    f"nnabla {self.name}.set_parameters: parameter {k!r} must hold "
                    f"floating-point data, got {p.dtype}"
                )
        if reset:
            self._params.clear()
            self._states.clear()
        elif retain_state:
            for k, p in param_dict.items():
                kept = self._params.get(k)
                if kept is not None and kept.shape != p.shape:
                    raise ValueError(
                        f"nnabla {self.name}.set_parameters: could not retain the state of "
                        f"{k!r}: its shape {p.shape} differs from the registered {kept.shape}"
                    )
        for k, p in param_dict.items():
            if retain_state and not reset and k in self._params:
                continue  # (nnabla keeps the registered Variable and its state)
            self._params[k] = p
            self._states[k] = self._new_state(p)

    def _new_state(self, p: NativeVariable) -> SolverState:
        xp = p.device.xp
        with p.device.activate():
            ps = {n: Variable.leaf(xp.zeros_like(p._data), False) for n in self._pstate}
        return SolverState(0, ps)  # type: ignore[arg-type]

    def remove_parameters(self, keys: Any) -> None:
        """Forget the parameters (and states) named in ``keys``."""
        for k in keys:
            self._params.pop(k, None)
            self._states.pop(k, None)

    def clear_parameters(self) -> None:
        """Forget every parameter and state."""
        self._params.clear()
        self._states.clear()

    def get_parameters(self) -> OrderedDict[str, Any]:
        """The registered parameters, name -> Variable, sorted by name (as nnabla's)."""
        return OrderedDict((k, self._params[k]) for k in sorted(self._params))

    def get_states(self) -> OrderedDict[str, SolverState]:
        """The states, name -> :class:`SolverState` (the solver's own; sorted by name)."""
        return OrderedDict((k, self._states[k]) for k in sorted(self._states))

    def set_states(self, states: Mapping[str, Any]) -> None:
        """Copy ``states`` (name -> state with ``t`` and ``pstate``) into the solver's states;
        the parameters must be registered first (``set_parameters``), as in nnabla."""
        for k, st in states.items():
            mine = self._states.get(k)
            if mine is None:
                raise ValueError(
                    f"nnabla {self.name}.set_states: no parameter {k!r} is registered; call "
                    "set_parameters first"
                )
            mine.t = int(st.t)
            for n, v in st.pstate.items():
                if n not in mine.pstate:
                    raise ValueError(
                        f"nnabla {self.name}.set_states: {self.name} has no state {n!r} "
                        f"(its states: {list(self._pstate)})"
                    )
                mine.pstate[n].d = v.d if isinstance(v, NativeVariable) else v

    # -- state files ---------------------------------------------------------------------------
    def save_states(self, path: Any) -> None:
        """Write the states to the ``.h5`` file ``path`` in nnabla 1.39's layout: per parameter
        (in :meth:`get_states` order), a group at its name with an ``index`` attribute (its
        position), holding one dataset per state (attribute ``index``: its position in
        ``pstate``) and the scalar int64 dataset ``t``; nnabla reads the file back with
        ``load_states``. A ``.protobuf`` file holds nnabla's ``Optimizer`` message instead (per
        parameter: ``t`` and each state's shape and float32 values), as nnabla writes it.

        Example::

            >>> import os, tempfile
            >>> import numpy as np
            >>> import gradhub_compat.nnabla as nn
            >>> import gradhub_compat.nnabla.solvers as S
            >>> w = nn.Variable.from_numpy_array(np.array([1.0, -2.0]), need_grad=True)
            >>> solver = S.Momentum(lr=0.5)
            >>> solver.set_parameters({"w": w})
            >>> solver.zero_grad()
            >>> w.g = np.array([1.0, 1.0])
            >>> solver.update()
            >>> tmp = tempfile.TemporaryDirectory()
            >>> path = os.path.join(tmp.name, "solver.h5")
            >>> solver.save_states(path)
            >>> other = S.Momentum(lr=0.5)
            >>> other.set_parameters({"w": w})
            >>> other.load_states(path)
            >>> other.get_states()["w"].t, other.get_states()["w"].pstate["m"].d
            (1, array([0.5, 0.5], dtype=float32))
            >>> tmp.cleanup()
        """
        import io

        from gradhub.state import atomic_write

        where = f"nnabla {self.name}.save_states"
        file_name = self._states_file(where, path)
        if file_name.lower().endswith(".protobuf"):
            atomic_write(file_name, self._states_protobuf())
            return
        h5py = _h5py(where)
        buf = io.BytesIO()
        with h5py.File(buf, "w") as hd:
            for i, (k, st) in enumerate(self.get_states().items()):
                grp = hd.require_group(k)
                grp.attrs["index"] = i
                for j, (n, v) in enumerate(st.pstate.items()):
                    # (np.asarray keeps a 0-d state 0-d; ascontiguousarray makes it (1,))
                    grp[n] = np.asarray(v.device.to_numpy(v._data), order="C")
                    grp[n].attrs["index"] = j
                grp["t"] = np.int64(st.t)
        atomic_write(file_name, buf.getvalue())

    def load_states(self, path: Any) -> None:
        """Read the states of the ``.h5`` or ``.protobuf`` file ``path`` (nnabla 1.39's
        layouts, see :meth:`save_states`) into the solver, as :meth:`set_states`: the
        parameters must be registered first. Only numeric datasets and protobuf messages are
        read (nothing is unpickled or run)."""
        from gradhub.errors import StateFileError

        where = f"nnabla {self.name}.load_states"
        file_name = self._states_file(where, path)
        if file_name.lower().endswith(".protobuf"):
            with open(file_name, "rb") as f:
                self.set_states(_states_from_protobuf(where, repr(file_name), f.read()))
            return
        h5py = _h5py(where)
        with open(file_name, "rb") as f:
            raw = f.read()
        hd = _open_h5(h5py, where, repr(file_name), raw)
        found: list[tuple[Any, str, SolverState]] = []
        try:
            groups: list[tuple[str, Any]] = []
            hd.visititems(
                lambda key, obj: (
                    groups.append((key, obj))
                    if isinstance(obj, h5py.Group) and "t" in obj
                    else None
                )
            )
            for key, grp in groups:
                t_ds = grp["t"]
                if not isinstance(t_ds, h5py.Dataset) or t_ds.dtype.kind not in "iu":
                    raise StateFileError(f"{where}: {file_name!r}: {key}/t is not an integer")
                pstate: list[tuple[Any, str, Any]] = []
                for n, ds in grp.items():
                    if n == "t" or not isinstance(ds, h5py.Dataset):
                        continue
                    if ds.dtype.kind not in "fiu":
                        raise StateFileError(
                            f"{where}: {file_name!r}: dataset {key}/{n} has dtype {ds.dtype}; "
                            "only numeric states are read"
                        )
                    pstate.append((ds.attrs.get("index", 0), n, np.array(ds[()])))
                pstate.sort(key=lambda e: (int(e[0]), e[1]))
                st = SolverState(int(t_ds[()]), {n: a for _, n, a in pstate})
                found.append((grp.attrs.get("index", 0), key, st))
        finally:
            hd.close()
        found.sort(key=lambda e: (int(e[0]), e[1]))
        self.set_states(OrderedDict((k, st) for _, k, st in found))

    def _states_file(self, where: str, path: Any) -> str:
        import os

        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"{where}: path must be a file name, got {type(path).__name__}")
        name = os.fspath(path)
        ext = os.path.splitext(name)[1].lower()
        if ext not in (".h5", ".protobuf"):
            raise ValueError(
                f"{where}: {name!r}: only .h5 and .protobuf solver state files are "
                f"supported, got the extension {ext!r}"
            )
        return str(name)

    def _states_protobuf(self) -> bytes:
        """The states as nnabla 1.39's ``.protobuf`` solver state file: an ``Optimizer``
        message whose ``solver.states`` map each parameter name to its ``t`` and its states
        (name -> shape and float32 values)."""
        from ._nnp_proto import Message, encode

        opt = Message("Optimizer")
        for k, st in self.get_states().items():
            entry = opt.solver.add("states", key=k)
            entry.value.t = int(st.t)
            for n in sorted(st.pstate):  # (protobuf writes a map sorted by key)
                v = st.pstate[n]
                a = np.asarray(v.device.to_numpy(v._data), dtype=np.float32)
                sp = entry.value.add("state_parameter", key=n)
                sp.value.shape.dim = [int(d) for d in a.shape]
                sp.value.data = a.ravel().tolist()
        return encode(opt)

    # -- learning rate ---------------------------------------------------------------------------
    def set_learning_rate(self, learning_rate: float) -> None:
        """Set the learning rate (Adam's ``alpha``)."""
        self._lr = float(learning_rate)

    def learning_rate(self) -> float:
        """The learning rate, as nnabla stores it (a float32 value)."""
        return float(np.float32(self._lr))

    def weight_decay_is_fused(self) -> bool:
        """Whether the weight decay is fused into :meth:`update` (as nnabla's: True for
        ``SgdW``, ``AdamW``, ``Lars``, ``Lamb``, ``Lion`` and ``AdaBelief(weight_decouple=True)``,
        whose :meth:`weight_decay` sets the rate of the next update; False for the others, whose
        :meth:`weight_decay` changes the gradients at once)."""
        return self._fused

    # -- gradients -------------------------------------------------------------------------------
    def _grad(self, p: NativeVariable) -> Any:
        gv = p._grad
        if gv is None:
            with p.device.activate():
                return p.device.xp.zeros_like(p._data)
        return gv._data

    def _set_grad(self, p: NativeVariable, g: Any) -> None:
        # gradhub.compile's trace (if any) is told the assignment: it refuses it
        observe_write(p, "g", g)
        p._grad = NativeVariable.leaf(_array(g), False)

    def zero_grad(self) -> None:
        """Set the gradient of every registered parameter to zeros. As nnabla's (its arrays'
        "zeroing" state, which ``p.g = 0`` and ``p.grad.zero()`` set too), a parameter whose
        gradient nothing writes or takes afterwards (no backward pass reaches it, no
        assignment, no ``p.g`` read) is skipped by :meth:`update`, :meth:`weight_decay`,
        :meth:`clip_grad_by_norm` and :meth:`scale_grad`: its values, state and step count stay
        as they are."""
        for p in self._params.values():
            observe_write(p, "g", 0)  # (gradhub.compile's trace replays it as p.g = 0)
            set_zeroing_grad(p)

    def _written(self) -> list[tuple[str, NativeVariable]]:
        """The registered parameters whose gradient is not in nnabla's "zeroing" state (see
        :meth:`zero_grad`)."""
        return [(k, p) for k, p in self._params.items() if not grad_is_zeroing(p)]

    def weight_decay(self, decay_rate: float, pre_hook: Any = None, post_hook: Any = None) -> None:
        """Add ``decay_rate * w`` to each parameter's gradient (at once, not at ``update``).

        A solver whose weight decay is fused (:meth:`weight_decay_is_fused`: ``SgdW``,
        ``AdamW``, ``Lars``, ``Lamb``, ``Lion``, ``AdaBelief(weight_decouple=True)``) leaves
        the gradients alone: as nnabla's, ``decay_rate`` (0 included) replaces the solver's
        default rate (``wd``; 0 for ``Lars``, ``Lamb`` and ``Lion``) for the next
        :meth:`update` only."""
        _no_hooks("weight_decay", pre_hook, post_hook)
        if self._fused:
            self._wd_rate = _hyper(self.name, "decay_rate", decay_rate)
            return
        for _, p in self._written():
            w = p._data
            with p.device.activate():
                self._set_grad(p, self._grad(p) + w.dtype.type(decay_rate) * w)

    def clip_grad_by_norm(
        self, clip_norm: float, pre_hook: Any = None, post_hook: Any = None
    ) -> None:
        """Scale each parameter's gradient whose L2 norm exceeds ``clip_norm`` down to that norm
        (per parameter, as nnabla's: ``g = clip_norm * g / norm`` where the sum of squares, in
        the gradient's dtype, exceeds ``clip_norm * clip_norm``)."""
        _no_hooks("clip_grad_by_norm", pre_hook, post_hook)
        for _, p in self._written():
            xp = p.device.xp
            with p.device.activate():
                g = self._grad(p)
                dt = g.dtype.type
                sq = (g * g).ravel()
                if sq.size == 0:
                    continue
                # nnabla's CPU solvers add the squares one after the other in the dtype (numpy's
                # pairwise sum rounds differently)
                total = xp.add.accumulate(sq)[-1] if xp is np else sq.sum()
                clip = dt(clip_norm)
                if float(total) > 0.0 and total > clip * clip:
                    self._set_grad(p, clip * g / xp.sqrt(total))

    def scale_grad(self, scale: float, pre_hook: Any = None, post_hook: Any = None) -> None:
        """Multiply each parameter's gradient by ``scale``."""
        _no_hooks("scale_grad", pre_hook, post_hook)
        for _, p in self._written():
            with p.device.activate():
                g = self._grad(p)
                self._set_grad(p, g * g.dtype.type(scale))

    def check_inf_grad(self, pre_hook: Any = None, post_hook: Any = None) -> bool:
        """Whether a gradient holds an infinity."""
        _no_hooks("check_inf_grad", pre_hook, post_hook)
        return any(bool(p.device.xp.isinf(self._grad(p)).any()) for p in self._params.values())

    def check_nan_grad(self, pre_hook: Any = None, post_hook: Any = None) -> bool:
        """Whether a gradient holds a NaN."""
        _no_hooks("check_nan_grad", pre_hook, post_hook)
        return any(bool(p.device.xp.isnan(self._grad(p)).any()) for p in self._params.values())

    def check_inf_or_nan_grad(self, pre_hook: Any = None, post_hook: Any = None) -> bool:
        """Whether a gradient holds an infinity or a NaN."""
        _no_hooks("check_inf_or_nan_grad", pre_hook, post_hook)
        return self.check_inf_grad() or self.check_nan_grad()

    # -- update ----------------------------------------------------------------------------------
    def update(self, update_pre_hook: Any = None, update_post_hook: Any = None) -> None:
        """Update the registered parameters from their ``.g`` (left unchanged); as nnabla's,
        those whose gradient nothing wrote since :meth:`zero_grad` are skipped."""
        _no_hooks("update", update_pre_hook, update_post_hook)
        for p in self._params.values():  # (refused, before any change, inside gradhub.compile)
            observe_write(p, "d", None)
        for k, p in self._written():
            state = self._states[k]
            state.t = min(state.t + 1, 2**32 - 2)
            w = p._data
            dt = w.dtype.type
            with p.device.activate():
                g = self._grad(p)
                if g.dtype != w.dtype:
                    g = g.astype(w.dtype)
                self._updating = p
                new = self._step(p.device.xp, w, g, state, dt)
                for sv in state.pstate.values():  # (numpy gives scalars for 0-d arithmetic)
                    sv._data = _array(sv._data)
                _write(p, _array(new))
        self._wd_rate = self._default_wd  # (nnabla: a fused rate lasts one update)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        raise NotImplementedError  # pragma: no cover - abstract

    def __repr__(self) -> str:
        return f"<nnabla {self.name} solver: {len(self._params)} parameters>"


def _array(a: Any) -> Any:
    """``a`` as an array: numpy's arithmetic on 0-d arrays gives scalars (``np.float32``), which
    a parameter's value, gradient or state of shape ``()`` holds as 0-d arrays (as nnabla's)."""
    return np.asarray(a) if isinstance(a, np.generic) else a


def _write(p: NativeVariable, new: Any) -> None:
    """Store the updated values in the parameter's array (Variables sharing it see them), held
    as a new array object (a graph recorded before sees a replaced leaf: ``forward()`` first)."""
    arr = p._data
    if getattr(arr.flags, "writeable", False) and arr.shape == new.shape:
        arr[...] = new
        p._data = arr.view()
    else:
        p._data = new.astype(arr.dtype)


class Sgd(Solver):
    r"""Stochastic gradient descent: :math:`w \leftarrow w - \eta g`."""

    name = "Sgd"

    def __init__(self, lr: float = 0.001) -> None:
        super().__init__(lr)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        return w - dt(self._lr) * g


class Momentum(Solver):
    r"""SGD with momentum: :math:`v \leftarrow \gamma v + \eta g,\ w \leftarrow w - v`
    (state ``"m"``)."""

    name = "Momentum"
    _pstate = ("m",)

    def __init__(self, lr: float = 0.001, momentum: float = 0.9) -> None:
        super().__init__(lr)
        self.momentum = float(momentum)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        mv = state.pstate["m"]
        m = dt(self.momentum) * mv._data + dt(self._lr) * g
        mv._data = m
        return w - m


class Adam(Solver):
    r"""Adam, nnabla's formula (the bias correction folded into the step size):

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad w \leftarrow w - \alpha \frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t}
        \frac{m}{\sqrt{v} + \epsilon}

    (states ``"mean"`` and ``"var"``).
    """

    name = "Adam"
    _pstate = ("var", "mean")  # nnabla's order

    def __init__(
        self, alpha: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8
    ) -> None:
        super().__init__(alpha)
        self.beta1 = float(beta1)
        self.beta2 = float(beta2)
        self.eps = float(eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        t = state.t
        b1, b2 = dt(self.beta1), dt(self.beta2)
        # as nnabla's C++: pow(float, int) in double, the correction rounded to the dtype
        corr = _bias_correction(dt, b1, b2, t)
        alpha_t = dt(self._lr) * corr
        mv, vv = state.pstate["mean"], state.pstate["var"]
        m, v = _adam_moments(dt, g, mv, vv, b1, b2)
        return w - alpha_t * m / (xp.sqrt(v) + dt(self.eps))


class Adagrad(Solver):
    r"""AdaGrad: :math:`G \leftarrow G + g^2,\ w \leftarrow w - \eta g / (\sqrt{G} + \epsilon)`
    (state ``"v"``)."""

    name = "Adagrad"
    _pstate = ("v",)

    def __init__(self, lr: float = 0.01, eps: float = 1e-8) -> None:
        super().__init__(lr)
        self.eps = float(eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        vv = state.pstate["v"]
        v = vv._data + g * g
        vv._data = v
        return w - dt(self._lr) * g / (xp.sqrt(v) + dt(self.eps))


class RMSprop(Solver):
    r"""RMSprop: :math:`v \leftarrow \gamma v + (1-\gamma) g^2,\
    w \leftarrow w - \eta g / (\sqrt{v} + \epsilon)` (state ``"v"``)."""

    name = "RMSprop"
    _pstate = ("v",)

    def __init__(self, lr: float = 0.001, decay: float = 0.9, eps: float = 1e-8) -> None:
        super().__init__(lr)
        self.decay = float(decay)
        self.eps = float(eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        vv = state.pstate["v"]
        d = dt(self.decay)
        # (nnabla's order of operations: e * decay + g * g * (1 - decay), w - lr / (sqrt(e) +
        # eps) * g; another order differs in the last bit)
        v = vv._data * d + g * g * (dt(1) - d)
        vv._data = v
        return w - dt(self._lr) / (xp.sqrt(v) + dt(self.eps)) * g


def _hyper(solver: str, name: str, value: Any) -> float:
    """A hyper-parameter as a float; a clear error naming the solver and argument otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"nnabla {solver}: {name} must be a number, got {type(value).__name__} ({value!r})"
        )
    return float(value)


def _adam_moments(dt: Any, g: Any, mv: Any, vv: Any, b1: Any, b2: Any) -> tuple[Any, Any]:
    """Adam's moments ``m = b1 m + (1 - b1) g`` and ``v = b2 v + (1 - b2) g^2``, written into
    the states ``mv`` and ``vv``; returns ``(m, v)``."""
    one = dt(1)
    m = b1 * mv._data + (one - b1) * g
    v = b2 * vv._data + (one - b2) * g * g
    mv._data, vv._data = m, v
    return m, v


def _adam_hypers(solver: str, beta1: Any, beta2: Any, eps: Any) -> tuple[float, float, float]:
    """``beta1``, ``beta2`` and ``eps`` of an Adam-like solver, each checked by :func:`_hyper`
    in that order."""
    return (
        _hyper(solver, "beta1", beta1),
        _hyper(solver, "beta2", beta2),
        _hyper(solver, "eps", eps),
    )


class Nesterov(Solver):
    r"""Nesterov's accelerated gradient (state ``"m"``), nnabla's order of operations:

    .. math::
        v \leftarrow \gamma v_{prev} - \eta g,\quad
        w \leftarrow w + \left(-\gamma v_{prev} + (1 + \gamma) v\right)
    """

    name = "Nesterov"
    _pstate = ("m",)

    def __init__(self, lr: float = 0.001, momentum: float = 0.9) -> None:
        super().__init__(_hyper("Nesterov", "lr", lr))
        self.momentum = _hyper("Nesterov", "momentum", momentum)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        mv = state.pstate["m"]
        mom = dt(self.momentum)
        prev = mv._data
        v = mom * prev - dt(self._lr) * g
        mv._data = v
        return w + (-mom * prev + (dt(1) + mom) * v)


class Adadelta(Solver):
    r"""AdaDelta (states ``"e_sqr_grad"`` and ``"e_sqr_delta"``), nnabla's order of operations:

    .. math::
        E_g \leftarrow E_g \rho + g^2 (1 - \rho),\quad
        \delta = \sqrt{\frac{E_\delta + \epsilon}{E_g + \epsilon}}\, g,\quad
        E_\delta \leftarrow E_\delta \rho + \delta^2 (1 - \rho),\quad
        w \leftarrow w - \eta \delta
    """

    name = "Adadelta"
    _pstate = ("e_sqr_delta", "e_sqr_grad")  # nnabla's order

    def __init__(self, lr: float = 1.0, decay: float = 0.95, eps: float = 1e-6) -> None:
        super().__init__(_hyper("Adadelta", "lr", lr))
        self.decay = _hyper("Adadelta", "decay", decay)
        self.eps = _hyper("Adadelta", "eps", eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        gv, dv = state.pstate["e_sqr_grad"], state.pstate["e_sqr_delta"]
        rho, eps = dt(self.decay), dt(self.eps)
        one_rho = dt(1) - rho
        eg = gv._data * rho + g * g * one_rho
        delta = xp.sqrt((dv._data + eps) / (eg + eps)) * g
        ed = dv._data * rho + delta * delta * one_rho
        gv._data, dv._data = eg, ed
        return w - dt(self._lr) * delta


class Adamax(Solver):
    r"""AdaMax (states ``"m"`` and ``"u"``), nnabla's formula:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad u \leftarrow \max(\beta_2 u, |g|),
        \quad w \leftarrow w - \frac{\alpha}{1-\beta_1^t} \frac{m}{u + \epsilon}
    """

    name = "Adamax"
    _pstate = ("u", "m")  # nnabla's order

    def __init__(
        self, alpha: float = 0.002, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8
    ) -> None:
        super().__init__(_hyper("Adamax", "alpha", alpha))
        self.beta1, self.beta2, self.eps = _adam_hypers("Adamax", beta1, beta2, eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        b1, b2 = dt(self.beta1), dt(self.beta2)
        # as nnabla's C++: pow(float, int) in double, the correction rounded to the dtype
        alpha_t = dt(self._lr) * dt(1 / (1 - float(b1) ** state.t))
        mv, uv = state.pstate["m"], state.pstate["u"]
        m = b1 * mv._data + (dt(1) - b1) * g
        u = xp.maximum(b2 * uv._data, xp.abs(g))
        mv._data, uv._data = m, u
        return w - alpha_t * m / (u + dt(self.eps))


class AMSGRAD(Solver):
    r"""AMSGrad (states ``"m"``, ``"v"`` and ``"v_hat"``), nnabla's formula:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad \hat v \leftarrow \max(\hat v, v),\quad
        w \leftarrow w - \alpha_t \frac{m}{\sqrt{\hat v} + \epsilon}

    with :math:`\alpha_t = \alpha \sqrt{1-\beta_2^t} / (1-\beta_1^t)` when ``bias_correction``,
    :math:`\alpha` otherwise (nnabla's default).
    """

    name = "AMSGRAD"
    _pstate = ("v_hat", "v", "m")  # nnabla's order

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        bias_correction: bool = False,
    ) -> None:
        super().__init__(_hyper("AMSGRAD", "alpha", alpha))
        self.beta1, self.beta2, self.eps = _adam_hypers("AMSGRAD", beta1, beta2, eps)
        self.bias_correction = bool(bias_correction)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        t = state.t
        b1, b2 = dt(self.beta1), dt(self.beta2)
        alpha_t = dt(self._lr)
        if self.bias_correction:  # (pow in double, the correction rounded to the dtype)
            alpha_t = alpha_t * _bias_correction(dt, b1, b2, t)
        mv, vv, hv = state.pstate["m"], state.pstate["v"], state.pstate["v_hat"]
        m, v = _adam_moments(dt, g, mv, vv, b1, b2)
        v_hat = xp.maximum(hv._data, v)
        hv._data = v_hat
        return w - alpha_t * m / (xp.sqrt(v_hat) + dt(self.eps))


class RMSpropGraves(Solver):
    r"""Graves' RMSprop (states ``"n"``, ``"g"`` and ``"d"``), nnabla's order of operations:

    .. math::
        n \leftarrow \rho n + (1-\rho) e^2,\quad g \leftarrow \rho g + (1-\rho) e,\quad
        d \leftarrow \beta d - \frac{\eta e}{\sqrt{n - g^2 + \epsilon}},\quad w \leftarrow w + d

    (:math:`e` the gradient).
    """

    name = "RMSpropGraves"
    _pstate = ("g", "d", "n")  # nnabla's order

    def __init__(
        self, lr: float = 0.0001, decay: float = 0.95, momentum: float = 0.9, eps: float = 0.0001
    ) -> None:
        super().__init__(_hyper("RMSpropGraves", "lr", lr))
        self.decay = _hyper("RMSpropGraves", "decay", decay)
        self.momentum = _hyper("RMSpropGraves", "momentum", momentum)
        self.eps = _hyper("RMSpropGraves", "eps", eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        nv, gv, dv = state.pstate["n"], state.pstate["g"], state.pstate["d"]
        rho = dt(self.decay)
        one_rho = dt(1) - rho
        n = rho * nv._data + one_rho * g * g
        mean = rho * gv._data + one_rho * g
        d = dt(self.momentum) * dv._data - dt(self._lr) * g / xp.sqrt(
            n - mean * mean + dt(self.eps)
        )
        nv._data, gv._data, dv._data = n, mean, d
        return w + d


# -- nnabla's solvers with decoupled weight decay, bounds and trust ratios ------------------------


def _bias_correction(dt: Any, beta1: Any, beta2: Any, t: int) -> Any:
    """Adam's ``sqrt(1 - beta2^t) / (1 - beta1^t)`` as nnabla's C++: ``pow`` of the float32
    betas in double, the quotient rounded to the dtype."""
    return dt(math.sqrt(1 - float(beta2) ** t) / (1 - float(beta1) ** t))


def _sum_sq(xp: Any, a: Any) -> Any:
    """The sum of squares of ``a`` in its dtype, added one after the other as nnabla's CPU
    solvers do (``std::accumulate``); numpy's pairwise sum rounds differently."""
    sq = (a * a).ravel()
    if sq.size == 0:
        return a.dtype.type(0)
    return xp.add.accumulate(sq)[-1] if xp is np else sq.sum()


def _lr_ratio(dt: Any, lr: float, init_lr: float) -> Any:
    """nnabla's ``lr / init_lr`` in float32 (the schedule's factor; NaN for an initial 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return dt(dt(lr) / dt(init_lr))


class SgdW(Solver):
    r"""Momentum SGD with decoupled weight decay (state ``"m"``), nnabla's formula:

    .. math::
        m \leftarrow \gamma m + \eta g,\quad
        w \leftarrow w - m - \frac{\eta}{\eta_0} \lambda w

    with :math:`\eta` the learning rate, :math:`\eta_0` the initial one and :math:`\lambda`
    the decay rate: ``wd``, or the rate given to :meth:`weight_decay` before this update (the
    decay is fused: the gradient is not changed).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.solvers as S
        >>> w = nn.Variable.from_numpy_array(np.array([1.0, -2.0]), need_grad=True)
        >>> solver = S.SgdW(lr=0.5, momentum=0.0, wd=0.1)
        >>> solver.set_parameters({"w": w})
        >>> solver.zero_grad()
        >>> w.g = np.array([0.5, 0.5])
        >>> solver.update()  # w - 0.5 * g - 0.1 * w
        >>> w.d
        array([ 0.65, -2.05], dtype=float32)
    """

    name = "SgdW"
    _pstate = ("m",)
    _fused = True

    def __init__(self, lr: float = 0.001, momentum: float = 0.9, wd: float = 0.0001) -> None:
        super().__init__(_hyper("SgdW", "lr", lr))
        self._init_lr = self._lr
        self.momentum = _hyper("SgdW", "momentum", momentum)
        self.wd = _hyper("SgdW", "wd", wd)
        self._default_wd = self._wd_rate = self.wd

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        decay = _lr_ratio(dt, self._lr, self._init_lr) * dt(self._wd_rate)
        mv = state.pstate["m"]
        m = dt(self.momentum) * mv._data + dt(self._lr) * g
        mv._data = m
        return w - m - decay * w


class AdamW(Solver):
    r"""Adam with decoupled weight decay (states ``"mean"`` and ``"var"``), nnabla's formula:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad w \leftarrow w - \alpha \frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t}
        \frac{m}{\sqrt{v} + \epsilon} - \frac{\alpha}{\alpha_0} \lambda w

    with :math:`\alpha_0` the initial ``alpha`` and :math:`\lambda` ``wd`` or the rate given to
    :meth:`weight_decay` before this update (fused: the gradient is not changed).
    """

    name = "AdamW"
    _pstate = ("var", "mean")  # nnabla's order
    _fused = True

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        wd: float = 0.0001,
    ) -> None:
        super().__init__(_hyper("AdamW", "alpha", alpha))
        self.beta1, self.beta2, self.eps = _adam_hypers("AdamW", beta1, beta2, eps)
        self._init_lr = self._lr
        self.wd = _hyper("AdamW", "wd", wd)
        self._default_wd = self._wd_rate = self.wd

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        b1, b2 = dt(self.beta1), dt(self.beta2)
        alpha_t = dt(self._lr) * _bias_correction(dt, b1, b2, state.t)
        decay = _lr_ratio(dt, self._lr, self._init_lr) * dt(self._wd_rate)
        mv, vv = state.pstate["mean"], state.pstate["var"]
        m, v = _adam_moments(dt, g, mv, vv, b1, b2)
        return w - alpha_t * m / (xp.sqrt(v) + dt(self.eps)) - decay * w


def _bounded_step(
    xp: Any,
    w: Any,
    m: Any,
    v: Any,
    alpha_t: Any,
    final_lr: Any,
    gamma: Any,
    t: Any,
    eps: Any,
    amsbound: bool = False,
) -> Any:
    """AdaBound's and AMSBound's ``w - clip(alpha_t / (sqrt(v) + eps), lower, upper) * m``,
    with nnabla's bounds ``final_lr (1 - 1 / (gamma t + 1))`` and
    ``final_lr (1 + 1 / (gamma t))`` (AMSBound: ``final_lr (1 + t / gamma)``, nnabla 1.39's
    ``1 / gamma_ * t``); the clip as ``std::min(upper, std::max(x, lower))`` (a NaN step
    becomes ``upper``)."""
    one = w.dtype.type(1)
    lower = final_lr * (one - one / (gamma * t + one))
    with np.errstate(divide="ignore"):  # (gamma = 0: an infinite upper bound, as nnabla's)
        upper = final_lr * (one + (one / gamma * t if amsbound else one / (gamma * t)))
    step = alpha_t / (xp.sqrt(v) + eps)
    step = xp.where(step < lower, lower, step)
    step = xp.where(upper < step, upper, step)
    return w - step * m


class AdaBound(Solver):
    r"""AdaBound (states ``"mean"`` and ``"var"``), nnabla's formula: Adam's moments, and

    .. math::
        \eta_t = \mathrm{clip}\left(\alpha \frac{\sqrt{1-\beta_2^t}}{(1-\beta_1^t)
        (\sqrt{v} + \epsilon)}, \eta_l(t), \eta_u(t)\right),\quad w \leftarrow w - \eta_t m

    with :math:`\eta_l(t) = \alpha^* (1 - 1/(\gamma t + 1))`,
    :math:`\eta_u(t) = \alpha^* (1 + 1/(\gamma t))` and :math:`\alpha^*` ``final_lr`` scaled by
    ``alpha / initial alpha`` (``set_learning_rate`` moves both). :meth:`weight_decay` adds
    ``rate * w`` to the gradients at once.
    """

    name = "AdaBound"
    _pstate = ("var", "mean")  # nnabla's order

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        final_lr: float = 0.1,
        gamma: float = 0.001,
    ) -> None:
        super().__init__(_hyper("AdaBound", "alpha", alpha))
        self.beta1, self.beta2, self.eps = _adam_hypers("AdaBound", beta1, beta2, eps)
        self._init_lr = self._lr
        self.final_lr = _hyper("AdaBound", "final_lr", final_lr)
        self.gamma = _hyper("AdaBound", "gamma", gamma)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        b1, b2 = dt(self.beta1), dt(self.beta2)
        alpha_t = dt(self._lr) * _bias_correction(dt, b1, b2, state.t)
        final_lr = dt(self.final_lr) * _lr_ratio(dt, self._lr, self._init_lr)
        mv, vv = state.pstate["mean"], state.pstate["var"]
        m, v = _adam_moments(dt, g, mv, vv, b1, b2)
        return _bounded_step(
            xp, w, m, v, alpha_t, final_lr, dt(self.gamma), dt(state.t), dt(self.eps)
        )


class AMSBound(Solver):
    r"""AMSBound (states ``"m"``, ``"v"`` and ``"v_hat"``): :class:`AdaBound`'s bounded step
    on AMSGrad's :math:`\hat v \leftarrow \max(\hat v, v)`, the bias correction
    :math:`\sqrt{1-\beta_2^t}/(1-\beta_1^t)` of the step only with ``bias_correction``
    (nnabla's default: without). As nnabla 1.39's, the upper bound is
    :math:`\alpha^* (1 + t/\gamma)` (its C++ reads ``1 / gamma_ * t``; AdaBound's and the
    paper's is :math:`\alpha^* (1 + 1/(\gamma t))`), the lower one AdaBound's.
    :meth:`weight_decay` adds ``rate * w`` to the gradients at once.
    """

    name = "AMSBound"
    _pstate = ("v_hat", "v", "m")  # nnabla's order

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        final_lr: float = 0.1,
        gamma: float = 0.001,
        bias_correction: bool = False,
    ) -> None:
        super().__init__(_hyper("AMSBound", "alpha", alpha))
        self.beta1, self.beta2, self.eps = _adam_hypers("AMSBound", beta1, beta2, eps)
        self._init_lr = self._lr
        self.final_lr = _hyper("AMSBound", "final_lr", final_lr)
        self.gamma = _hyper("AMSBound", "gamma", gamma)
        self.bias_correction = bool(bias_correction)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        b1, b2 = dt(self.beta1), dt(self.beta2)
        alpha_t = dt(self._lr)
        if self.bias_correction:
            alpha_t = alpha_t * _bias_correction(dt, b1, b2, state.t)
        final_lr = dt(self.final_lr) * _lr_ratio(dt, self._lr, self._init_lr)
        mv, vv, hv = state.pstate["m"], state.pstate["v"], state.pstate["v_hat"]
        m, v = _adam_moments(dt, g, mv, vv, b1, b2)
        v_hat = xp.maximum(hv._data, v)
        hv._data = v_hat
        return _bounded_step(
            xp, w, m, v_hat, alpha_t, final_lr, dt(self.gamma), dt(state.t), dt(self.eps), True
        )


class Lars(Solver):
    r"""LARS with momentum (state ``"v"``), nnabla's formula, per parameter:

    .. math::
        \lambda = \eta_{lr} \frac{c \|w\|}{\|g\| + \beta \|w\|},\quad
        v \leftarrow m v + \lambda (g + \beta w),\quad w \leftarrow w - v

    with :math:`c` ``coefficient``, :math:`\beta` the rate given to :meth:`weight_decay` before
    this update (0 otherwise; fused) and the norms summed one square after the other in the
    dtype; where :math:`\|g\| + \beta \|w\| < \epsilon` it is increased by :math:`\epsilon`,
    and where :math:`\|w\| < \epsilon` the step is :math:`\eta_{lr}` itself. As nnabla's, the
    update leaves :math:`g + \beta w` in the parameter's gradient, and a negative denominator
    (a negative rate) raises ``RuntimeError``.
    """

    name = "Lars"
    _pstate = ("v",)
    _fused = True

    def __init__(
        self,
        lr: float = 0.001,
        momentum: float = 0.9,
        coefficient: float = 0.001,
        eps: float = 1e-6,
    ) -> None:
        super().__init__(_hyper("Lars", "lr", lr))
        self.momentum = _hyper("Lars", "momentum", momentum)
        self.coefficient = _hyper("Lars", "coefficient", coefficient)
        self.eps = _hyper("Lars", "eps", eps)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        eps, rate = dt(self.eps), dt(self._wd_rate)
        g_norm = dt(float(xp.sqrt(_sum_sq(xp, g))))  # (host scalars, as nnabla's)
        d_norm = dt(float(xp.sqrt(_sum_sq(xp, w))))
        x = g_norm + rate * d_norm
        if not bool(x >= 0):
            raise RuntimeError(
                f"nnabla Lars.update: the local learning rate's denominator |g| + rate * |w| "
                f"= {float(x)} must be positive or zero (weight_decay rate {float(rate)})"
            )
        if bool(x < eps):
            x = x + eps
        lr = dt(self._lr)
        if not bool(d_norm < eps):
            with np.errstate(divide="ignore", invalid="ignore"):  # (eps = 0: NaN as nnabla's)
                lr = lr * dt(self.coefficient) * d_norm / x
        if float(rate) != 0.0:  # (nnabla adds the decay into the gradient array)
            g = g + rate * w
            self._set_grad(self._updating, g)
        vv = state.pstate["v"]
        v = dt(self.momentum) * vv._data + lr * g
        vv._data = v
        return w - v


class Lamb(Solver):
    r"""LAMB (states ``"mean"`` and ``"var"``), nnabla's formula, per parameter:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad r = \frac{m / c_1}{\sqrt{v / c_2} + \epsilon} + \lambda w,\quad
        w \leftarrow w - \eta \frac{\phi(\|w\|)}{\|r\|} r

    with :math:`c_1 = 1-\beta_1^t`, :math:`c_2 = 1-\beta_2^t` when ``bias_correction`` (1
    otherwise, nnabla's default), :math:`\phi(z) = \min(\max(z, \gamma_l), \gamma_u)`, the
    trust ratio :math:`\phi(\|w\|)/\|r\|` replaced by 1 where :math:`\|r\| \le \epsilon`, the
    norms summed one square after the other in the dtype (the last product in double, as
    nnabla's), and :math:`\lambda` the rate given to :meth:`weight_decay` before this update
    (0 otherwise; fused: the gradient is not changed).
    """

    name = "Lamb"
    _pstate = ("var", "mean")  # nnabla's order
    _fused = True

    def __init__(
        self,
        eta: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        gamma_l: float = 0.0,
        gamma_u: float = 10.0,
        eps: float = 1e-6,
        bias_correction: bool = False,
    ) -> None:
        super().__init__(_hyper("Lamb", "eta", eta))
        self.beta1 = _hyper("Lamb", "beta1", beta1)
        self.beta2 = _hyper("Lamb", "beta2", beta2)
        self.gamma_l = _hyper("Lamb", "gamma_l", gamma_l)
        self.gamma_u = _hyper("Lamb", "gamma_u", gamma_u)
        self.eps = _hyper("Lamb", "eps", eps)
        self.bias_correction = bool(bias_correction)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        b1, b2, eps = dt(self.beta1), dt(self.beta2), dt(self.eps)
        one = dt(1)
        c1 = dt(1 - float(b1) ** state.t) if self.bias_correction else one
        c2 = dt(1 - float(b2) ** state.t) if self.bias_correction else one
        mv, vv = state.pstate["mean"], state.pstate["var"]
        m, v = _adam_moments(dt, g, mv, vv, b1, b2)
        r = (m / c1) / (xp.sqrt(v / c2) + eps)
        r = r + dt(self._wd_rate) * w
        r_norm = dt(float(xp.sqrt(_sum_sq(xp, r))))  # (host scalars, as nnabla's)
        w_norm = dt(float(xp.sqrt(_sum_sq(xp, w))))
        if bool(w_norm < dt(self.gamma_l)):
            w_norm = dt(self.gamma_l)
        if bool(w_norm > dt(self.gamma_u)):
            w_norm = dt(self.gamma_u)
        local_lr = 1.0
        if bool(r_norm > eps):
            local_lr = float(dt(w_norm / r_norm))
        # (nnabla: float eta times the double local_lr, w updated in double)
        step = float(dt(self._lr)) * local_lr
        return (w.astype(np.float64) - step * r.astype(np.float64)).astype(w.dtype)


class Lion(Solver):
    r"""Lion (state ``"m"``), nnabla's formula:

    .. math::
        u = \mathrm{sign}(\beta_1 m + (1-\beta_1) g),\quad
        m \leftarrow \beta_2 m + (1-\beta_2) g,\quad w \leftarrow w - \alpha (u + \lambda w)

    computed as nnabla's ``g + beta (m - g)``, with :math:`\mathrm{sign}` 0 at 0 (and at NaN)
    and :math:`\lambda` the rate given to :meth:`weight_decay` before this update (0
    otherwise; fused: the gradient is not changed).

    Example::

        >>> import numpy as np
        >>> import gradhub_compat.nnabla as nn
        >>> import gradhub_compat.nnabla.solvers as S
        >>> w = nn.Variable.from_numpy_array(np.array([1.0, -2.0, 3.0]), need_grad=True)
        >>> solver = S.Lion(lr=0.25)
        >>> solver.set_parameters({"w": w})
        >>> solver.zero_grad()
        >>> w.g = np.array([0.5, 0.0, -4.0])
        >>> solver.update()  # w - 0.25 * sign(g)
        >>> w.d
        array([ 0.75, -2.  ,  3.25], dtype=float32)
    """

    name = "Lion"
    _pstate = ("m",)
    _fused = True

    def __init__(self, lr: float = 0.0001, beta1: float = 0.9, beta2: float = 0.99) -> None:
        super().__init__(_hyper("Lion", "lr", lr))
        self.beta1 = _hyper("Lion", "beta1", beta1)
        self.beta2 = _hyper("Lion", "beta2", beta2)

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        mv = state.pstate["m"]
        prev = mv._data
        c = g + dt(self.beta1) * (prev - g)
        u = (c > 0).astype(w.dtype) - (c < 0).astype(w.dtype)
        mv._data = g + dt(self.beta2) * (prev - g)
        return w - dt(self._lr) * (u + dt(self._wd_rate) * w)


class AdaBelief(Solver):
    r"""AdaBelief (states ``"mean"`` and ``"var"``; ``"s_max"``, ``"mean"`` and ``"var"`` with
    ``amsgrad``), nnabla's formula:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad
        s \leftarrow \beta_2 s + (1-\beta_2) (g - m)^2 + \epsilon,\quad
        w \leftarrow w - \frac{\alpha r_t}{1-\beta_1^t}
        \frac{m}{\sqrt{s} / \sqrt{1-\beta_2^t} + \epsilon}

    (the new :math:`m` in :math:`s`'s update, as nnabla's). ``amsgrad``: ``var`` holds
    :math:`s` without the :math:`\epsilon`, and the step uses
    :math:`s_{max} \leftarrow \max(s_{max}, s) + \epsilon` (nnabla 1.39 adds
    :math:`\epsilon` at each step). ``rectify`` (RAdam's variant): :math:`r_t` is RAdam's
    rectification, :math:`\rho_\infty = 2/(1-\beta_2) - 1`,
    :math:`\rho_t = \rho_\infty - 2 t \beta_2^t/(1-\beta_2^t)`,
    :math:`r_t = \sqrt{(\rho_t-4)(\rho_t-2)\rho_\infty / ((\rho_\infty-4)(\rho_\infty-2)
    \rho_t)}`, and while :math:`\rho_t \le 4` the step is SGD's :math:`w \leftarrow w - \alpha
    m`; otherwise :math:`r_t = 1`. ``weight_decouple``: first :math:`w \leftarrow w - \lambda
    \alpha w` (:math:`w - \lambda w` with ``fixed_decay``), :math:`\lambda` ``wd`` or the rate
    given to :meth:`weight_decay` before this update (fused); without it, :meth:`weight_decay`
    adds ``rate * w`` to the gradients at once and ``wd`` is not used.
    """

    name = "AdaBelief"

    def __init__(
        self,
        alpha: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        wd: float = 0.0,
        amsgrad: bool = False,
        weight_decouple: bool = False,
        fixed_decay: bool = False,
        rectify: bool = False,
    ) -> None:
        super().__init__(_hyper("AdaBelief", "alpha", alpha))
        self.beta1, self.beta2, self.eps = _adam_hypers("AdaBelief", beta1, beta2, eps)
        self.wd = _hyper("AdaBelief", "wd", wd)
        self.amsgrad = bool(amsgrad)
        self.weight_decouple = bool(weight_decouple)
        self.fixed_decay = bool(fixed_decay)
        self.rectify = bool(rectify)
        # nnabla's order of the states
        self._pstate = ("s_max", "mean", "var") if self.amsgrad else ("var", "mean")
        self._fused = self.weight_decouple
        self._default_wd = self._wd_rate = self.wd

    def _step(self, xp: Any, w: Any, g: Any, state: SolverState, dt: Any) -> Any:
        t = state.t
        b1, b2, eps = dt(self.beta1), dt(self.beta2), dt(self.eps)
        # as nnabla's C++: beta^t rounded to the dtype, the rectification in double
        b1_t, b2_t = float(dt(float(b1) ** t)), float(dt(float(b2) ** t))
        c1, c2 = dt(1.0 - b1_t), dt(1.0 - b2_t)
        r_t, rho_t = np.float32(1.0), np.float32(0.0)
        if self.rectify:
            rho_inf = 2.0 / (1.0 - float(b2)) - 1.0
            rho_t = np.float32(rho_inf - 2.0 * t * b2_t / (1.0 - b2_t))
            num = (float(rho_t) - 4.0) * (float(rho_t) - 2.0) * rho_inf
            den = (rho_inf - 4.0) * (rho_inf - 2.0) * float(rho_t)
            ratio = num / den if den != 0.0 else math.nan
            r_t = np.float32(math.sqrt(ratio) if ratio >= 0.0 else math.nan)
        sgd = self.rectify and float(rho_t) <= 4.0
        alpha = np.float32(self._lr)
        mv, sv = state.pstate["mean"], state.pstate["var"]
        one = dt(1)
        m = b1 * mv._data + (one - b1) * g
        d = (g - m).astype(np.float64)
        # (nnabla: std::pow(g - m, 2) is a double, the sum rounded once)
        s = ((b2 * sv._data).astype(np.float64) + float(one - b2) * (d * d)).astype(w.dtype)
        mv._data = m
        if self.amsgrad:  # (nnabla: var without eps; s_max = max(s_max, var) + eps)
            sv._data = s
            hv = state.pstate["s_max"]
            hv._data = xp.maximum(hv._data, s) + eps
            s = hv._data
        else:  # (nnabla: var holds the eps)
            s = s + eps
            sv._data = s
        if self.weight_decouple:
            rate = np.float32(self._wd_rate)
            decay = dt(rate if self.fixed_decay else rate * alpha)
            w = w - w * decay
        if sgd:
            return w - dt(alpha) * m
        step = dt(alpha * r_t) / c1
        return w - step * m / (xp.sqrt(s) / dt(math.sqrt(float(c2))) + eps)


def _states_from_protobuf(where: str, name: str, raw: bytes) -> OrderedDict[str, SolverState]:
    """The states of an nnabla ``.protobuf`` solver state file (an ``Optimizer`` message)."""
    from gradhub.errors import StateFileError

    from ._nnp_proto import decode

    try:
        opt = decode("Optimizer", raw, name)
    except ValueError as e:
        raise StateFileError(f"{where}: {e}") from None
    out: OrderedDict[str, SolverState] = OrderedDict()
    for entry in opt.solver.states:
        pstate = {}
        for sp in entry.value.state_parameter:
            shape = tuple(int(d) for d in sp.value.shape.dim)
            if any(d < 0 for d in shape) or int(np.prod(shape)) != len(sp.value.data):
                raise StateFileError(
                    f"{where}: {name}: state {entry.key}/{sp.key} has shape {shape} but "
                    f"{len(sp.value.data)} values"
                )
            pstate[sp.key] = np.asarray(sp.value.data, dtype=np.float32).reshape(shape)
        out[entry.key] = SolverState(int(entry.value.t), pstate)  # type: ignore[arg-type]
    return out

"""chainer 7.8.1's functions beyond the core of :mod:`gradhub_compat.chainer.functions` (which
re-exports them), one module for each of chainer's ``chainer/functions/`` categories:
:mod:`.activation`, :mod:`.array`, :mod:`.connection` (the other convolutions and
deconvolutions, ``bilinear``, ``shift``, ``local_convolution_2d``), :mod:`.evaluation` (the
metrics), :mod:`.loss`, :mod:`.math` (the other elementwise and reduction functions, the
special functions, the linear algebra, ``fft``/``ifft``), :mod:`.noise`, :mod:`.normalization`,
:mod:`.pooling` (the N-d poolings, the unpoolings, the ROI poolings and aligns), :mod:`.rnn`
(the n-step RNNs, ``tree_lstm``) and :mod:`.util` (``forget``); :mod:`._common` holds the
helpers they share. The core (the elementwise functions, reductions, softmax and the main
losses, ``linear``/``matmul``, the shape functions, ``convolution_2d``, the 2-d poolings,
``dropout``, ``embed_id``, ``lstm``) and the helpers every module uses stay in
:mod:`gradhub_compat.chainer.functions`, which imports these modules at its end; they are not
imported on their own.

Each follows chainer 7.8.1's ``chainer/functions/`` code: the arguments and defaults, the
output shapes and dtypes, the errors (chainer's ``InvalidType`` where its ``check_type_forward``
raises one) and the gradients. Most are compositions of the registered gradhub functions behind
:mod:`gradhub_compat.chainer.functions` (every order of gradient comes from the native engine);
the linear algebra and ``fft``/``ifft`` are :class:`~gradhub_compat.chainer.FunctionNode`
subclasses whose ``backward`` is chainer's, written with chainer functions, so it can be
differentiated again; ``decorrelated_batch_normalization`` keeps chainer's hand-written gradient,
which refuses to be differentiated again. The metrics are not differentiable.

Example::

    >>> import numpy as np
    >>> import gradhub_compat.chainer.functions as F
    >>> F.pad_sequence([np.array([1.0, 2.0], np.float32), np.array([3.0], np.float32)])
    variable([[1., 2.],
              [3., 0.]])
"""

from __future__ import annotations

from . import (
    activation,
    array,
    connection,
    evaluation,
    loss,
    math,
    noise,
    normalization,
    pooling,
    rnn,
    util,
)
from .activation import *  # noqa: F403
from .array import *  # noqa: F403
from .connection import *  # noqa: F403
from .evaluation import *  # noqa: F403
from .loss import *  # noqa: F403
from .math import *  # noqa: F403
from .noise import *  # noqa: F403
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .util import *  # noqa: F403

__all__: list[str] = []
__all__ += activation.__all__
__all__ += array.__all__
__all__ += connection.__all__
__all__ += evaluation.__all__
__all__ += loss.__all__
__all__ += math.__all__
__all__ += noise.__all__
__all__ += normalization.__all__
__all__ += pooling.__all__
__all__ += rnn.__all__
__all__ += util.__all__

# F.add and F.deformable_convolution_2d_sampler
from . import connection_extra, math_extra  # noqa: E402
from .connection_extra import *  # noqa: E402, F403
from .math_extra import *  # noqa: E402, F403

__all__ += connection_extra.__all__
__all__ += math_extra.__all__

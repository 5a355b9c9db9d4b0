"""Static graphs in the nnabla layer: ``forward()`` re-executing the graph from new leaf data, and
``auto_forward`` (a thread-local switch, off by default) with the ``no_grad`` helpers.
"""

from __future__ import annotations

import threading

import gradhub_compat.nnabla as nn
import numpy as np
import pytest
from compat.nnabla.helpers import _var


def test_nnabla_auto_forward_is_a_thread_local_flag_off_by_default() -> None:
    assert nn.get_auto_forward() is False
    with nn.auto_forward():
        assert nn.get_auto_forward() is True
        seen: list[bool] = []
        t = threading.Thread(target=lambda: seen.append(nn.get_auto_forward()))
        t.start()
        t.join()
        assert seen == [False]
        with nn.auto_forward(False):
            assert nn.get_auto_forward() is False
        assert nn.get_auto_forward() is True
    assert nn.get_auto_forward() is False
    nn.set_auto_forward(True)
    assert nn.get_auto_forward() is True


def test_forward_reexecutes_the_graph_from_new_data() -> None:
    x = nn.Variable((3,))
    y = x * 2.0 + 1.0
    x.d = [1.0, 2.0, 3.0]
    y.forward(clear_buffer=True, clear_no_need_grad=True)
    np.testing.assert_allclose(y.d, [3.0, 5.0, 7.0])


def test_auto_forward_and_no_grad_helpers() -> None:
    assert nn.get_auto_forward() is False  # nnabla's default
    nn.set_auto_forward(False)
    with nn.auto_forward():
        assert nn.get_auto_forward() is True
        y = _var([1.0]) * 2.0
    assert nn.get_auto_forward() is False
    np.testing.assert_allclose(y.d, [2.0])
    with nn.no_grad():
        z = _var([1.0]) * 2.0
    assert z.need_grad is False
    with pytest.raises(AttributeError):
        _ = nn.not_a_thing

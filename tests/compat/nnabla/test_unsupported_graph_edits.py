"""nnabla 1.39 graph-editing members the layer does not support raise ``NotImplementedError``
naming the member and the migration page (nnabla has them: ``rewire_on``,
``function_references``, ``clear_all_graph_links``)."""

import gradhub_compat.nnabla as nn
import pytest


def test_rewire_on_raises_not_implemented():
    xb = nn.Variable((2,))
    with pytest.raises(NotImplementedError, match=r"Variable.rewire_on .*migration-nnabla.md"):
        xb.rewire_on(nn.Variable((2,)) * 2)


def test_function_references_raises_not_implemented():
    v = nn.Variable((2,))
    with pytest.raises(
        NotImplementedError, match=r"Variable.function_references .*migration-nnabla.md"
    ):
        v.function_references  # noqa: B018


def test_clear_all_graph_links_raises_not_implemented():
    y = nn.Variable((2,), need_grad=True) * 2
    with pytest.raises(
        NotImplementedError, match=r"Variable.clear_all_graph_links .*migration-nnabla.md"
    ):
        y.clear_all_graph_links()

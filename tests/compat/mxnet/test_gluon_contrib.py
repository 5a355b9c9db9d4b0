"""gluon.contrib of mxnet 1.9.1, the parts the word language model example uses:
contrib.data.IntervalSampler and the text datasets (which download their corpora)."""

from __future__ import annotations

import gradhub_compat.mxnet as mx
import pytest


def test_gluon_contrib_data() -> None:
    from gradhub_compat.mxnet.gluon import contrib

    assert contrib.data.IntervalSampler is mx.gluon.data.IntervalSampler
    # mxnet 1.9.1
    assert list(contrib.data.IntervalSampler(13, interval=3)) == [
        0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11,
    ]  # fmt: skip
    with pytest.raises(NotImplementedError, match=r"WikiText2.*migration-mxnet"):
        contrib.data.text.WikiText2("./data", "train", seq_len=35)

"""``chainer.datasets.get_ptb_words`` and ``get_ptb_words_vocabulary`` read chainer's dataset
cache (the files chainer 7.8.1 writes: ``pfnet/chainer/ptb/{train,valid,test}.npz`` holding
``x``, and ``vocab.txt``) and download nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gradhub_compat import chainer


def _write(root: Path) -> dict[str, np.ndarray]:
    d = root / "pfnet" / "chainer" / "ptb"
    d.mkdir(parents=True)
    arrays = {}
    for k, name in enumerate(("train", "valid", "test")):
        arrays[name] = np.arange(5 + k, dtype=np.int32) % 4
        np.savez_compressed(d / f"{name}.npz", x=arrays[name])
    (d / "vocab.txt").write_text("aer\nbanknote\n<eos>\nthe\n")
    return arrays


def test_get_ptb_words_reads_the_cache(tmp_path: Path, monkeypatch: Any) -> None:
    arrays = _write(tmp_path)
    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    train, valid, test = chainer.datasets.get_ptb_words()
    for got, name in zip((train, valid, test), ("train", "valid", "test")):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, arrays[name])
    vocab = chainer.datasets.get_ptb_words_vocabulary()
    assert vocab == {"aer": 0, "banknote": 1, "<eos>": 2, "the": 3}


def test_get_ptb_words_without_cache_names_the_page(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    with pytest.raises(NotImplementedError, match="migration-chainer"):
        chainer.datasets.get_ptb_words()
    with pytest.raises(NotImplementedError, match="migration-chainer"):
        chainer.datasets.get_ptb_words_vocabulary()

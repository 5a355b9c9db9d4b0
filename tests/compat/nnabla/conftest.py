"""Every test of the nnabla layer starts and ends with an empty parameter table and ends with
auto_forward off (nnabla's ``set_auto_forward`` is a thread-local switch that tests turn on)."""

from __future__ import annotations

from collections.abc import Iterator

import gradhub_compat.nnabla as nn
import pytest


@pytest.fixture(autouse=True)
def _fresh_parameters() -> Iterator[None]:
    nn.clear_parameters()
    yield
    nn.clear_parameters()
    nn.set_auto_forward(False)

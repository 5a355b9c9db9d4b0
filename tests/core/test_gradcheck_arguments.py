"""``gh.testing.gradcheck``'s inputs: Python numbers and integer arrays named in grad_inputs
are differentiated; a call that would check nothing and bad arguments raise."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradhub as gh
import numpy as np
import pytest
from gradhub import plugins
from gradhub.errors import GradcheckError
from gradhub.testing import NothingToCheckError, gradcheck
from plugin_helpers import marked_plugin as plugin


@pytest.fixture(autouse=True)
def _core_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only the core functions (plus what a test adds): no installed plugin takes part."""
    for var in ("GRADHUB_PLUGINS", "GRADHUB_BLOCK_PLUGINS", "GRADHUB_STRICT_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRADHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.reset()
    yield
    plugins.reset()


def _square(xp: Any, x: Any) -> Any:
    return x * x


def _wrong(gy, x, xs, y, ys):  # type: ignore[no-untyped-def]
    return [gy[0] * x[0] * 3.0]  # should be 2x


@pytest.fixture
def sq_wrong() -> Callable[[gh.Variable], gh.Variable]:
    plugins.load_plugins(
        extra=[
            (
                "sqwrong",
                plugin(
                    "sqwrong",
                    gradhub_add_functions=lambda register: register.function(
                        "SqWrongFix", _square, rule=_wrong
                    ),
                ),
            )
        ]
    )
    import gradhub.functions as F

    return F.sq_wrong_fix  # type: ignore[no-any-return]


@pytest.mark.parametrize("inputs", [[2], [[1, 2]], [2.0], [(1, 2)]])
def test_gradcheck_python_numbers_are_differentiated(
    sq_wrong: Callable[..., Any], inputs: list[Any]
) -> None:
    with pytest.raises(GradcheckError, match="derivative of order 1 is wrong"):
        gradcheck(sq_wrong, inputs)


def test_gradcheck_integer_array_named_in_grad_inputs_is_differentiated(
    sq_wrong: Callable[..., Any],
) -> None:
    with pytest.raises(GradcheckError, match="derivative of order 1 is wrong"):
        gradcheck(sq_wrong, [np.array([1, 2])], grad_inputs=[0])


def test_gradcheck_that_would_check_nothing_raises(sq_wrong: Callable[..., Any]) -> None:
    with pytest.raises(NothingToCheckError, match=r"gradcheck: no input is differentiated"):
        gradcheck(sq_wrong, [np.array([1, 2])])
    with pytest.raises(
        ValueError,
        match=r"gradcheck: fn \(<lambda>, order 1\) returned no "
        r"floating-point Variable \(got ndarray\)",
    ):
        gradcheck(lambda x: np.sin(x.d) * 3, [[0.5]])
    with pytest.raises(NothingToCheckError, match="got NoneType"):
        gradcheck(lambda x: None, [[0.5]])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"order": 0}, ValueError, "gradcheck: order must be >= 1"),
        ({"order": -1}, ValueError, "gradcheck: order must be >= 1"),
        ({"order": 1.5}, TypeError, "gradcheck: order must be an int"),
        ({"order": True}, TypeError, "gradcheck: order must be an int"),
        ({"grad_inputs": [5]}, ValueError, "gradcheck: grad_inputs index 5 is out of range"),
        ({"grad_inputs": [-1]}, ValueError, "gradcheck: grad_inputs index -1 is out of range"),
        ({"grad_inputs": ["0"]}, TypeError, "gradcheck: grad_inputs must hold input indices"),
        ({"grad_inputs": [0, 0]}, ValueError, "gradcheck: grad_inputs names input 0 twice"),
        ({"grad_outputs": [[1.0], [2.0]]}, ValueError, "gradcheck: grad_outputs has 2 entries"),
    ],
)
def test_gradcheck_rejects_bad_arguments(
    sq_wrong: Callable[..., Any], kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        gradcheck(sq_wrong, [[0.5]], **kwargs)

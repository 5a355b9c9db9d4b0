"""The default floating-point dtype (gradhub.dtypes): set_default_dtype, the default_dtype block
(thread-local), data from Python numbers and lists, the initializers, argument checks."""

from __future__ import annotations

import threading

import gradhub as gh
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _float32_after():
    yield
    gh.set_default_dtype("float32")


def test_float32_is_the_default():
    assert gh.get_default_dtype() == np.float32
    assert gh.Variable([1.0, 2.0]).dtype == np.float32
    assert gh.Variable(0.5).dtype == np.float32


def test_set_default_dtype_float64_keeps_python_floats_exact():
    gh.set_default_dtype("float64")
    x = gh.Variable([0.1, 0.2])
    assert x.dtype == np.float64
    assert x.d[0] == 0.1  # not rounded through float32
    assert gh.Variable(0.1).d == 0.1
    # numpy arrays and numpy scalars keep their dtype; integers stay integers
    assert gh.Variable(np.ones(2, np.float32)).dtype == np.float32
    assert gh.Variable(np.float32(1.0)).dtype == np.float32
    assert gh.Variable([1, 2], need_grad=False).dtype.kind == "i"
    (g,) = gh.grad([(x * x).sum()], [x])
    assert g.dtype == np.float64
    gh.set_default_dtype(np.float16)
    assert gh.Variable([1.0]).dtype == np.float16


def test_default_dtype_block_restores_and_nests():
    with gh.default_dtype("float64"):
        assert gh.Variable([1.0]).dtype == np.float64
        with gh.default_dtype("float16"):
            assert gh.get_default_dtype() == np.float16
        assert gh.get_default_dtype() == np.float64
    assert gh.get_default_dtype() == np.float32
    with pytest.raises(RuntimeError), gh.default_dtype("float64"):
        raise RuntimeError
    assert gh.get_default_dtype() == np.float32


def test_default_dtype_block_is_thread_local_and_set_is_process_wide():
    seen: dict[str, object] = {}
    inside = threading.Event()
    done = threading.Event()

    def other():
        inside.wait()
        seen["during block"] = gh.Variable([1.0]).dtype
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with gh.default_dtype("float64"):
        inside.set()
        done.wait()
        assert gh.Variable([1.0]).dtype == np.float64
    t.join()
    assert seen["during block"] == np.float32  # the other thread kept the default

    gh.set_default_dtype("float64")
    t = threading.Thread(target=lambda: seen.__setitem__("after set", gh.get_default_dtype()))
    t.start()
    t.join()
    assert seen["after set"] == np.float64


@pytest.mark.parametrize("bad", ["int32", "complex64", np.int64, "float128x", None, 3])
def test_refuses_non_floating_dtypes(bad):
    with pytest.raises(
        TypeError, match=r"set_default_dtype: dtype must be one of float16, float32, float64"
    ):
        gh.set_default_dtype(bad)
    with pytest.raises(TypeError, match=r"default_dtype: dtype must be one of"):
        with gh.default_dtype(bad):
            pass  # pragma: no cover
    assert gh.get_default_dtype() == np.float32


@pytest.mark.nn_ops
def test_initializers_use_the_default_dtype():
    import gradhub.parametric_functions as PF

    x = gh.Variable(np.ones((2, 3)))
    with gh.default_dtype("float64"):
        PF.affine(x, 4, name="fc")
        PF.affine(x, 4, name="fc_const", w_init=0.5, b_init=[0.0, 1.0, 2.0, 3.0])
    PF.affine(x, 4, name="fc32")
    ps = gh.get_parameters()
    assert {k: str(v.dtype) for k, v in ps.items()} == {
        "fc/affine/W": "float64",
        "fc/affine/b": "float64",
        "fc_const/affine/W": "float64",
        "fc_const/affine/b": "float64",
        "fc32/affine/W": "float32",
        "fc32/affine/b": "float32",
    }
    # the same draws: the float64 weights are the float32 ones before rounding
    gh.clear_parameters()
    gh.seed(5)
    with gh.default_dtype("float64"):
        PF.affine(x, 4, name="a")
    gh.seed(5)
    PF.affine(x, 4, name="b")
    w64, w32 = gh.get_parameters()["a/affine/W"].d, gh.get_parameters()["b/affine/W"].d
    np.testing.assert_array_equal(w64.astype(np.float32), w32)
    assert not np.array_equal(w64, w32.astype(np.float64))

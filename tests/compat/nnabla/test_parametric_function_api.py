"""``PF.parametric_function_api``: user-defined parametric functions as nnabla 1.39's decorator
(names and signature recorded with nnabla 1.39.0)."""

import inspect

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
import pytest
from gradhub_compat.nnabla.initializer import UniformInitializer
from gradhub_compat.nnabla.parameter import get_parameter_or_create


@PF.parametric_function_api("dummy")
def dummy(shape, f=10, i=1, s="dummy", fix_parameters=False):
    """Doc"""
    get_parameter_or_create("p1", shape, UniformInitializer((-1, 1)))
    get_parameter_or_create("p2", shape + (1,), UniformInitializer((-1, 1)))
    return nn.Variable(shape)


def test_signature_gets_name_last_and_keeps_the_doc():
    spec = inspect.getfullargspec(dummy)
    # nnabla 1.39: ['shape', 'f', 'i', 's', 'fix_parameters', 'name'], (10, 1, 'dummy', False, None)
    assert spec.args == ["shape", "f", "i", "s", "fix_parameters", "name"]
    assert spec.defaults == (10, 1, "dummy", False, None)
    assert dummy.__doc__.splitlines()[0] == "Doc"


def test_scopes_by_name_argument_and_by_parameter_scope_agree():
    nn.clear_parameters()
    dummy((2, 3), name="group1")
    with nn.parameter_scope("group1"):
        dummy((2, 3))
    dummy((2, 3))
    dummy((2, 3), 10, 1, "x", False, "g2")  # name given positionally
    # nnabla 1.39 lists exactly these, in this order
    assert list(nn.get_parameters()) == [
        "group1/dummy/p1",
        "group1/dummy/p2",
        "dummy/p1",
        "dummy/p2",
        "g2/dummy/p1",
        "g2/dummy/p2",
    ]
    assert nn.get_parameters()["g2/dummy/p2"].shape == (2, 3, 1)
    nn.clear_parameters()


def test_a_function_without_fix_parameters_is_refused():
    with pytest.raises(AssertionError, match=r"must take `fix_parameters`.*`bad\(x\)`"):

        @PF.parametric_function_api("bad")
        def bad(x):
            return x


def test_param_desc_is_added_to_the_doc():
    @PF.parametric_function_api("sc", [("a", "Scale", "(1,)", True)])
    def sc(x, fix_parameters=False):
        """Scale."""
        return x * get_parameter_or_create("a", (1,), np.ones(1, np.float32))

    assert "* a (``need_grad=True``) : Scale. (shape: ``(1,)``)" in sc.__doc__
    nn.clear_parameters()


def test_fixed_parameters_inside_a_compiled_step() -> None:
    # regression: PF.affine(..., fix_parameters=True) inside gh.compile was refused with an
    # error about get_unlinked_variable(need_grad=True), which the step never called
    import gradhub as gh
    import gradhub_compat.nnabla.functions as F
    import gradhub_compat.nnabla.parametric_functions as PF

    def step(x: nn.Variable) -> nn.Variable:
        h = PF.affine(x, 4, name="frozen", fix_parameters=True)
        loss = F.sum(PF.affine(h, 2, name="head") ** 2)
        loss.forward()
        loss.backward()
        return loss

    rng = np.random.default_rng(0)
    fast = gh.compile(step)
    for k in range(3):
        x = rng.standard_normal((5, 3)).astype(np.float32)
        seen = []
        for run in (fast, lambda x: step(nn.Variable.from_numpy_array(x))):
            for p in nn.get_parameters().values():
                p.g = 0
            loss = run(x)
            params = nn.get_parameters()
            seen.append((loss.d.copy(), params["head/affine/W"].g.copy()))
            assert not params["frozen/affine/W"].g.any()  # (no gradient: fixed)
        for a, b in zip(*seen):
            np.testing.assert_array_equal(a, b, err_msg=f"call {k}")

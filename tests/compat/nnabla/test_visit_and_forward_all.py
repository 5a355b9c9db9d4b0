"""``Variable.visit`` and ``nn.forward_all`` as nnabla 1.39's (values recorded with nnabla
1.39.0)."""

import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np
import pytest


def test_visit_calls_each_function_producers_first_and_names_stay():
    a = nn.Variable((2,))
    z = F.relu(a * 2) + 1

    def namer(f):
        for v in f.outputs:
            v.name = f.name + "_out"

    z.visit(namer)
    z.forward()
    z.backward()
    seen = []
    z.visit(lambda f: seen.append((f.name, [v.name for v in f.outputs])))
    # nnabla 1.39 prints the same list
    assert seen == [
        ("MulScalar", ["MulScalar_out"]),
        ("ReLU", ["ReLU_out"]),
        ("AddScalar", ["AddScalar_out"]),
    ]
    assert z.name == "AddScalar_out"


def test_visit_on_a_leaf_calls_nothing():
    calls = []
    nn.Variable((2,)).visit(calls.append)
    assert calls == []


def test_forward_all_executes_shared_functions_once():
    b = nn.Variable.from_numpy_array(np.array([1.0, 2.0]))
    hb = b * 2
    p, q = hb + 1, hb * 3
    b.d = [3.0, 4.0]
    order = []
    nn.forward_all([p, q], function_pre_hook=lambda f: order.append(f.info.type_name))
    # nnabla 1.39: [7, 9], [18, 24], ['MulScalar', 'AddScalar', 'MulScalar']
    assert p.d.tolist() == [7.0, 9.0] and q.d.tolist() == [18.0, 24.0]
    assert order == ["MulScalar", "AddScalar", "MulScalar"]


def test_forward_all_refuses_a_non_variable():
    with pytest.raises(TypeError, match=r"nnabla.forward_all: variables\[1\] must be a Variable"):
        nn.forward_all([nn.Variable((1,)) * 2, np.zeros(1)])

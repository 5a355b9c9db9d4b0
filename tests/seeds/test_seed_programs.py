"""The example programs of the seed documents (``../shared/seeds/``), run with only their import
lines changed, print the documented values.

Deviations from the documents, each forced by the document itself:

* nnabla (seeds 000/001): the gradient-penalty program asks for ``get_extension_context("cudnn")``.
  Run as is it raises a clear DeviceError unless the CUDA plugin and a GPU are usable; the CPU run
  replaces ``"cudnn"`` by ``"cpu"``. Seed 001's copy lost the line ``grads = nn.grad(outputs,
  inputs)`` and the n-th derivative program lost most of its lines; both are restored from
  nnabla's own docstring of ``nnabla.grad`` (the source of the seed).
* mxnet (seed 003): the program is Python 2 (``print out.asnumpy()``); ``print`` is a function
  here.
* chainer blog (seed 004): results 4 and 5 follow chainer's documented behaviour (see the seeds'
  README): ``[2., 2.]``; with ``retain_grad=True`` the output keeps ``y.grad == [1., 1.]``. Each
  result starts from freshly created variables, as the blog's printed ``None`` requires.

The programs run in a subprocess with default warning filters, as a user would run them.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import gradhub as gh
import numpy as np
import pytest
from gradhub_compat.nnabla.ext_utils import list_extensions

NNABLA_IMPORTS = """\
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import gradhub_compat.nnabla.parametric_functions as PF
import numpy as np
from gradhub_compat.nnabla.ext_utils import get_extension_context
"""

# seed 000 (Japanese page), after "例 :"
GRADIENT_PENALTY_000 = (
    NNABLA_IMPORTS
    + """
# Context
extension_module = "cudnn"
ctx = get_extension_context(extension_module)

# Input and label
x = nn.Variable.from_numpy_array(np.random.randn(4, 3, 32, 32))
y = nn.Variable.from_numpy_array(np.random.randint(0, 10, 4).reshape(4, 1))

# Network
h = PF.convolution(x, 8, (3, 3), (1, 1), name="conv1")
h = F.relu(h)
h = F.max_pooling(h, (2, 2))
h = PF.convolution(h, 16, (3, 3), (1, 1), name="conv2")
h = F.relu(h)
h = F.max_pooling(h, (2, 2))
p = PF.affine(h, 10, name="pred")
loss = F.mean(F.softmax_cross_entropy(p, y))

# Grad
outputs = [loss]
inputs = nn.get_parameters().values()
grads = nn.grad(outputs, inputs)  # gradients of the parameters

# Double backward of the outputs w.r.t. the parameters by constraining the gradient norms.
gp = sum([F.sum(g ** 2.0) ** 0.5 for g in grads])
loss += gp
loss.forward()
loss.backward()
"""
)

# seed 001 (English page): set_default_context and the target norm t; the lost grads line restored
GRADIENT_PENALTY_001 = (
    NNABLA_IMPORTS
    + """
# Context
extension_module = "cudnn"
ctx = get_extension_context(extension_module)
nn.set_default_context(ctx)

# Input and label
x = nn.Variable.from_numpy_array(np.random.randn(4, 3, 32, 32))
y = nn.Variable.from_numpy_array(np.random.randint(0, 10, 4).reshape(4, 1))

# Network
h = PF.convolution(x, 8, (3, 3), (1, 1), name="conv1")
h = F.relu(h)
h = F.max_pooling(h, (2, 2))
h = PF.convolution(h, 16, (3, 3), (1, 1), name="conv2")
h = F.relu(h)
h = F.max_pooling(h, (2, 2))
p = PF.affine(h, 10, name="pred")
loss = F.mean(F.softmax_cross_entropy(p, y))

outputs = [loss]
inputs = nn.get_parameters().values()
grads = nn.grad(outputs, inputs)  # gradients of the parameters

# Backward of the outputs w.r.t. the parameters by constraining the gradient norms.
t = 0 # or 1
gp = sum([(F.sum(g ** 2) ** 0.5 - t) ** 2 for g in grads])
loss += gp
loss.forward()
loss.backward()
"""
)

NTH_DERIVATIVE = """\
import gradhub_compat.nnabla as nn
import gradhub_compat.nnabla.functions as F
import numpy as np

x = nn.Variable.from_numpy_array(np.random.randn(2, 2)).apply(need_grad=True)
x.grad.zero()
y = F.sin(x)
def grad(y, x, n=1):
    dx = [y]
    for _ in range(n):
        dx = nn.grad([dx[0]], [x])
    return dx[0]
dnx = grad(y, x, n=10)
dnx.forward()
print(np.allclose(-np.sin(x.d), dnx.d))
dnx.backward()
print(np.allclose(-np.cos(x.d), x.g))

# Show the supported status for each function
from gradhub_compat.nnabla.backward_functions import show_registry
show_registry()
"""

MXNET_EXAMPLES = """\
import gradhub_compat.mxnet as mx

# Example for binding on loss function symbol, which gives the loss value of the model.
net = mx.sym.Variable('data')
net = mx.sym.FullyConnected(net, name='fc', num_hidden=6)
net = mx.sym.Activation(net, name='relu', act_type="relu")
net = mx.sym.SoftmaxOutput(net, name='softmax')
args =  {'data': mx.nd.ones((1, 4)), 'fc_weight': mx.nd.ones((6, 4)),
         'fc_bias': mx.nd.array((1, 4, 4, 4, 5, 6)), 'softmax_label': mx.nd.ones((1))}
args_grad = {'fc_weight': mx.nd.zeros((6, 4)), 'fc_bias': mx.nd.zeros((6))}
texec = net.bind(ctx=mx.cpu(), args=args, args_grad=args_grad)
out = texec.forward(is_train=True)[0].copy()
print(out.asnumpy())
texec.backward()
print(texec.grad_arrays[1].asnumpy())

# Example for binding on non-loss function symbol.
a = mx.sym.Variable('a')
b = mx.sym.Variable('b')
c = 2 * a + b
args = {'a': mx.nd.array([1,2]), 'b':mx.nd.array([2,3])}
args_grad = {'a': mx.nd.zeros((2)), 'b': mx.nd.zeros((2))}
texec = c.bind(ctx=mx.cpu(), args=args, args_grad=args_grad)
out = texec.forward(is_train=True)[0].copy()
print(out.asnumpy())
texec.backward(out)
print(texec.grad_arrays[0].asnumpy())
print(texec.grad_arrays[1].asnumpy())
"""

CHAINER_BLOG = """\
import numpy as np
from gradhub_compat import chainer
from gradhub_compat.chainer import Variable

x = Variable(np.array([1], dtype=np.float32))
y = 2*x
y.backward() # 1回目の実行
print(x.grad) # 正しい勾配
y.backward() # 2回目の実行
print(x.grad) # 誤った勾配

x = Variable(np.array([1], dtype=np.float32))
y = 2*x
y.backward() # 1回目の実行
print(x.grad) # 正しい勾配
x.cleargrad() # xの勾配を削除
y.backward() # 2回目の実行
print(x.grad) # 正しい勾配

def variables():
    x0 = Variable(np.array([0,1], dtype=np.float32))
    x1 = Variable(np.array([2,3], dtype=np.float32))
    y = 2*x0 + 3*x1
    z = 2*y
    return x0, x1, y, z

# 実行結果1
x0, x1, y, z = variables()
print(chainer.grad([z], [x0]))
print(x0.grad)
print(chainer.grad([z], [x0]))
# 実行結果2
x0, x1, y, z = variables()
print(chainer.grad([z], [x0, x1]))
# 実行結果3
x0, x1, y, z = variables()
print(chainer.grad([y], [x0]))
# 実行結果4
x0, x1, y, z = variables()
print(chainer.grad([y], [x0], set_grad=True))
print(repr(x0.grad))
# 実行結果5
x0, x1, y, z = variables()
print(chainer.grad([y], [x0], retain_grad=True))
print(repr(y.grad))
print(x0.grad)
"""

CHAINER_BLOG_OUTPUT = """\
[2.]
[4.]
[2.]
[2.]
[variable([4., 4.])]
None
[variable([4., 4.])]
[variable([4., 4.]), variable([6., 6.])]
[variable([2., 2.])]
[variable([2., 2.])]
array([2., 2.], dtype=float32)
[variable([2., 2.])]
array([1., 1.], dtype=float32)
None
"""


def _run(program: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "program.py"
    script.write_text(program, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


def _floats(text: str) -> np.ndarray:
    return np.array([float(v) for v in re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?", text)])


def test_chainer_blog_prints_the_documented_values(tmp_path: Path) -> None:
    res = _run(CHAINER_BLOG, tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout == CHAINER_BLOG_OUTPUT
    assert res.stderr == ""  # chainer's one-element DeprecationWarning is hidden by default


def test_mxnet_executor_examples_print_the_documented_values(tmp_path: Path) -> None:
    res = _run(MXNET_EXAMPLES, tmp_path)
    assert res.returncode == 0, res.stderr
    got = _floats(res.stdout)
    documented = _floats("""
        [[ 0.00378404  0.07600445  0.07600445  0.07600445  0.20660152  0.5616011 ]]
        [[ 0.00378404  0.00378404  0.00378404  0.00378404]
         [-0.92399555 -0.92399555 -0.92399555 -0.92399555]
         [ 0.07600445  0.07600445  0.07600445  0.07600445]
         [ 0.07600445  0.07600445  0.07600445  0.07600445]
         [ 0.20660152  0.20660152  0.20660152  0.20660152]
         [ 0.5616011   0.5616011   0.5616011   0.5616011 ]]
        [ 4.  7.]
        [ 8.  14.]
        [ 4.  7.]
    """)
    assert got.shape == documented.shape, res.stdout
    np.testing.assert_allclose(got, documented, rtol=2e-6, atol=1e-8)


def test_nnabla_nth_derivative_program(tmp_path: Path) -> None:
    res = _run(NTH_DERIVATIVE, tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[:2] == ["True", "True"]
    assert lines[2].split()[:3] == ["function", "provider", "rule"]
    assert any(line.startswith("Sin ") for line in lines)


@pytest.mark.parametrize(
    "program", [GRADIENT_PENALTY_000, GRADIENT_PENALTY_001], ids=["seed000", "seed001"]
)
def test_nnabla_gradient_penalty_with_cudnn_raises_clearly(program: str, tmp_path: Path) -> None:
    if "cudnn" in list_extensions():
        pytest.skip("a usable CUDA device is installed here: the program runs as is")
    res = _run(program, tmp_path)
    assert res.returncode != 0
    assert "DeviceError" in res.stderr
    assert re.search(r"gradhub-cuda|CuPy", res.stderr), res.stderr


@pytest.mark.parametrize(
    "program", [GRADIENT_PENALTY_000, GRADIENT_PENALTY_001], ids=["seed000", "seed001"]
)
def test_nnabla_gradient_penalty_runs_on_cpu(program: str) -> None:
    """The program runs; its backward accumulates d(loss + penalty)/d(parameter) into ``.g``."""
    program = program.replace('extension_module = "cudnn"', 'extension_module = "cpu"')
    before = gh.get_default_context()
    env: dict[str, object] = {"__name__": "seed_program"}
    rng_state = np.random.get_state()
    np.random.seed(0)
    try:
        exec(compile(program, "seed_program", "exec"), env)
    finally:
        gh.set_default_context(before)
        np.random.set_state(rng_state)
    import gradhub_compat.nnabla as nn

    params = nn.get_parameters()
    assert list(params) == [
        "conv1/conv/W",
        "conv1/conv/b",
        "conv2/conv/W",
        "conv2/conv/b",
        "pred/affine/W",
        "pred/affine/b",
    ]
    assert params["conv1/conv/W"].shape == (8, 3, 3, 3)
    assert params["pred/affine/W"].shape == (16 * 8 * 8, 10)
    loss = env["loss"]
    assert np.isfinite(loss.d) and loss.shape == ()  # type: ignore[attr-defined]
    # the accumulated .g (from zeros) equals the gradient of the whole objective (nn.grad: the
    # graph holds the unlinked views of the parameters that PF made, as nnabla's)
    expect = nn.grad([loss], list(params.values()))
    first_order = env["grads"]
    for (name, p), g, g1 in zip(params.items(), expect, first_order):  # type: ignore[call-overload]
        assert p.g.dtype == np.float32
        # float32 sums in two orders: the tolerance scales with the gradient's magnitude
        scale = max(1.0, float(np.abs(g.d).max()))
        np.testing.assert_allclose(p.g, g.d, rtol=1e-5, atol=1e-6 * scale, err_msg=name)
        assert not np.allclose(p.g, g1.d), f"{name}: the penalty changed nothing"


def test_programs_keep_their_original_code() -> None:
    """Only import lines (and the documented substitutions) differ from the seed documents."""
    seeds = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"
    if not seeds.is_dir():
        pytest.skip("the seed documents are not beside the repository")
    doc000 = (seeds / "000_80466f7847bc751c.txt").read_text(encoding="utf-8")
    doc003 = (seeds / "003_8307fa7e3a18c1c9.txt").read_text(encoding="utf-8")
    body000 = GRADIENT_PENALTY_000[len(NNABLA_IMPORTS) :].strip()
    for line in body000.splitlines():
        assert line.strip() in doc000, line
    for line in textwrap.dedent(MXNET_EXAMPLES).splitlines()[2:]:
        if line.strip() and not line.startswith("print"):
            assert line.strip() in doc003, line

"""Writes the NNP reference files of ``test_nnp_files.py`` / ``test_parameter_formats.py`` with
nnabla itself (1.39.0 wrote the committed files): ``python make_nnp_reference.py OUTDIR`` in an
environment with nnabla (not gradhub).

* ``nnp_mlp.nnp``: a 2-layer MLP (Affine, ReLU, Affine, Softmax), parameters in ``.h5``;
* ``nnp_cnn.nnp``: a small CNN (Convolution, BatchNormalization in inference form, ReLU,
  MaxPooling, Affine), parameters in ``.protobuf`` (``parameter_format=".protobuf"``);
* ``nnp_mlp.nntxt``: the MLP as text with its parameters (``include_params=True``);
* ``nnp_params.protobuf``: the MLP's parameters (``nn.save_parameters``);
* ``nnp_adam_states.protobuf``: the states of ``S.Adam(0.01)`` over the MLP's parameters after
  two updates with the gradients of ``sum(y)`` (``solver.save_states``);
* ``nnp_reference.npz``: the fixed inputs ``x_mlp`` (3, 6) and ``x_cnn`` (2, 1, 6, 6) and
  nnabla's outputs ``y_mlp`` and ``y_cnn`` for them; ``adam/<param>/<state>`` the Adam states;
* ``nnp_inplace.nnp`` and ``nnp_inplace_reference.npz``: a residual block as classification.py's
  ResNet writes it (``F.add2(h, x, inplace=True)``) with more functions called with
  ``inplace=True`` (Mul2, Sub2, MulScalar), its input, output and parameters.
"""

import os
import sys

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
import numpy as np
from nnabla.utils.save import save

out = sys.argv[1]
rng = np.random.RandomState(0)
nn.clear_parameters()
x = nn.Variable((3, 6))
with nn.parameter_scope("mlp"):
    h = F.relu(PF.affine(x, 5, name="fc1"))
    y = F.softmax(PF.affine(h, 4, name="fc2"))
for v in nn.get_parameters(grad_only=False).values():
    v.d = rng.randn(*v.shape).astype(np.float32)
x_mlp = rng.randn(3, 6).astype(np.float32)
x.d = x_mlp
y.forward()
y_mlp = y.d.copy()
mlp = {
    "networks": [{"name": "mlp", "batch_size": 3, "outputs": {"y": y}, "names": {"x": x}}],
    "executors": [{"name": "runtime", "network": "mlp", "data": ["x"], "output": ["y"]}],
}
save(os.path.join(out, "nnp_mlp.nnp"), mlp)
save(os.path.join(out, "nnp_mlp.nntxt"), mlp, include_params=True)
nn.save_parameters(os.path.join(out, "nnp_params.protobuf"))
solver = S.Adam(0.01)
solver.set_parameters(nn.get_parameters())
loss = F.sum(y * nn.Variable.from_numpy_array(np.arange(12, dtype=np.float32).reshape(3, 4)))
for _ in range(2):
    loss.forward()
    solver.zero_grad()
    loss.backward()
    solver.update()
solver.save_states(os.path.join(out, "nnp_adam_states.protobuf"))
adam = {
    f"adam/{k}/{n}": v.d.copy()
    for k, st in solver.get_states().items()
    for n, v in st.pstate.items()
}

nn.clear_parameters()
xc = nn.Variable((2, 1, 6, 6))
h = PF.convolution(xc, 3, (3, 3), pad=(1, 1), name="conv1")
h = PF.batch_normalization(h, batch_stat=False, name="bn1")
h = F.max_pooling(F.relu(h), (2, 2))
yc = PF.affine(h, 4, name="fc")
for k, v in nn.get_parameters(grad_only=False).items():
    d = rng.randn(*v.shape).astype(np.float32)
    v.d = np.abs(d) + 0.5 if k.endswith("var") else d
x_cnn = rng.randn(2, 1, 6, 6).astype(np.float32)
xc.d = x_cnn
yc.forward()
y_cnn = yc.d.copy()
cnn = {
    "networks": [{"name": "cnn", "batch_size": 2, "outputs": {"y": yc}, "names": {"x": xc}}],
    "executors": [{"name": "runtime", "network": "cnn", "data": ["x"], "output": ["y"]}],
}
save(os.path.join(out, "nnp_cnn.nnp"), cnn, parameter_format=".protobuf")
np.savez(
    os.path.join(out, "nnp_reference.npz"),
    x_mlp=x_mlp,
    y_mlp=y_mlp,
    x_cnn=x_cnn,
    y_cnn=y_cnn,
    **adam,
)

# The networks of nnabla-examples' programs (test_nnp_examples_networks.py): nnp_bnn.nnp, the
# binary layers of classification_bnn.py (BinaryConnectConvolution, BinaryTanh,
# BinaryWeightConvolution, BinarySigmoid, BinaryConnectAffine, BinaryWeightAffine); nnp_branch.nnp,
# a branching network as vae.py's (two affines of one input, ReLU(inplace=True), Exp, Mean);
# nnp_losses.nnp, LeakyReLU and SquaredError (siamese.py, dcgan.py);
# nnp_examples_reference.npz: their inputs, outputs and parameters (param/<name>).
nn.clear_parameters()
xb = nn.Variable((2, 1, 6, 6))
h = PF.binary_connect_convolution(xb, 3, (3, 3), name="bc_conv")
h = F.binary_tanh(PF.batch_normalization(h, batch_stat=False, name="bn"))
h = F.binary_sigmoid(PF.binary_weight_convolution(h, 2, (2, 2), pad=(1, 1), name="bw_conv"))
h = F.binary_tanh(PF.binary_connect_affine(h, 5, name="bc_fc"))
yb = PF.binary_weight_affine(h, 3, name="bw_fc")
for k, v in nn.get_parameters(grad_only=False).items():
    d = rng.randn(*v.shape).astype(np.float32)
    v.d = np.abs(d) + 0.5 if k.endswith("var") else d
bnn_params = {f"param/{k}": v.d.copy() for k, v in nn.get_parameters(grad_only=False).items()}
x_bnn = rng.randn(2, 1, 6, 6).astype(np.float32)
xb.d = x_bnn
yb.forward()
y_bnn = yb.d.copy()
save(
    os.path.join(out, "nnp_bnn.nnp"),
    {
        "networks": [{"name": "bnn", "batch_size": 2, "outputs": {"y": yb}, "names": {"x": xb}}],
        "executors": [{"name": "runtime", "network": "bnn", "data": ["x"], "output": ["y"]}],
    },
)

nn.clear_parameters()
xv = nn.Variable((2, 4))
h = F.relu(PF.affine(xv, 6, name="enc"), inplace=True)
mu = PF.affine(h, 3, name="mu")
logvar = PF.affine(h, 3, name="logvar")
yv = F.mean(F.tanh(mu) + F.exp(0.5 * logvar) * mu)
for v in nn.get_parameters(grad_only=False).values():
    v.d = rng.randn(*v.shape).astype(np.float32)
branch_params = {f"param/{k}": v.d.copy() for k, v in nn.get_parameters(grad_only=False).items()}
x_branch = rng.randn(2, 4).astype(np.float32)
xv.d = x_branch
yv.forward()
y_branch = yv.d.copy()
save(
    os.path.join(out, "nnp_branch.nnp"),
    {
        "networks": [{"name": "branch", "batch_size": 2, "outputs": {"y": yv}, "names": {"x": xv}}],
        "executors": [{"name": "runtime", "network": "branch", "data": ["x"], "output": ["y"]}],
    },
)
nn.clear_parameters()
xl = nn.Variable((2, 3))
tl = nn.Variable((2, 3))
h = F.leaky_relu(PF.affine(xl, 3, name="fc"), 0.2)
yl = F.mean(F.squared_error(h, tl)) + F.sum(F.leaky_relu(xl))
for v in nn.get_parameters(grad_only=False).values():
    v.d = rng.randn(*v.shape).astype(np.float32)
loss_params = {f"param/{k}": v.d.copy() for k, v in nn.get_parameters(grad_only=False).items()}
x_losses = rng.randn(2, 3).astype(np.float32)
t_losses = rng.rand(2, 3).astype(np.float32)
xl.d = x_losses
tl.d = t_losses
yl.forward()
y_losses = yl.d.copy()
save(
    os.path.join(out, "nnp_losses.nnp"),
    {
        "networks": [
            {"name": "losses", "batch_size": 2, "outputs": {"y": yl}, "names": {"x": xl, "t": tl}}
        ],
        "executors": [
            {"name": "runtime", "network": "losses", "data": ["x", "t"], "output": ["y"]}
        ],
    },
)
np.savez(
    os.path.join(out, "nnp_examples_reference.npz"),
    x_losses=x_losses,
    t_losses=t_losses,
    y_losses=y_losses,
    **loss_params,
    x_bnn=x_bnn,
    y_bnn=y_bnn,
    x_branch=x_branch,
    y_branch=y_branch,
    **bnn_params,
    **branch_params,
)

# nnp_inplace.nnp: nnabla's inplace flags in NNP files (Add2 of the ResNet blocks of
# nnabla-examples' classification.py; Mul2, Sub2, MulScalar)
nn.clear_parameters()
xi = nn.Variable((2, 4))
h = F.relu(PF.affine(xi, 4, name="fc1"), inplace=True)
h = F.elu(F.add2(h, xi, inplace=True))
h = F.mul_scalar(h, 2.0, inplace=True)
yi = F.mean(F.sub2(h, F.mul2(h, xi, inplace=True), inplace=True))
for v in nn.get_parameters(grad_only=False).values():
    v.d = rng.randn(*v.shape).astype(np.float32)
inplace_params = {f"param/{k}": v.d.copy() for k, v in nn.get_parameters(grad_only=False).items()}
x_inplace = rng.randn(2, 4).astype(np.float32)
xi.d = x_inplace
yi.forward()
save(
    os.path.join(out, "nnp_inplace.nnp"),
    {
        "networks": [
            {"name": "inplace", "batch_size": 2, "outputs": {"y": yi}, "names": {"x": xi}}
        ],
        "executors": [{"name": "runtime", "network": "inplace", "data": ["x"], "output": ["y"]}],
    },
)
np.savez(
    os.path.join(out, "nnp_inplace_reference.npz"),
    x_inplace=x_inplace,
    y_inplace=yi.d.copy(),
    **inplace_params,
)

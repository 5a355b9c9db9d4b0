"""The CUDA device plugin (gradhub-cuda).

Tests that need no GPU run everywhere (import without CuPy, availability reasons, registration);
the others skip, all with one reason, where no usable CUDA device exists. The op matrix
(tests/test_op_matrix.py) covers every function on ``cuda`` whenever the device is usable.
"""

from __future__ import annotations

import types
from collections.abc import Iterator

import gradhub as gh
import numpy as np
import pytest
from child_helpers import run_python
from cuda_helpers import REASON, gpu
from gradhub import plugins
from gradhub.errors import DeviceError
from gradhub.registry import REGISTRY

_REASON = REASON


@pytest.fixture
def fresh() -> Iterator[None]:
    plugins.reset()
    yield
    plugins.reset()


def _fake_cupy(count: object = 1, driver: int = 13000, runtime: int = 13000) -> types.ModuleType:
    cp = types.ModuleType("cupy")

    class ndarray:
        pass

    def get_count() -> int:
        if isinstance(count, Exception):
            raise count
        return int(count)  # type: ignore[call-overload]

    cp.ndarray = ndarray  # type: ignore[attr-defined]
    runtime_mod = types.SimpleNamespace(
        getDeviceCount=get_count,
        driverGetVersion=lambda: driver,
        runtimeGetVersion=lambda: runtime,
    )
    cp.cuda = types.SimpleNamespace(runtime=runtime_mod, Device=lambda i: None)  # type: ignore[attr-defined]
    return cp


def test_import_and_load_without_cupy() -> None:
    code = (
        "import sys; sys.modules['cupy'] = None\n"  # makes 'import cupy' fail
        "import gradhub_cuda, gradhub_cuda.plugin, gradhub_cuda.device, gradhub_cuda.kernels\n"
        "import gradhub as gh\n"
        "from gradhub.registry import REGISTRY\n"
        "rec = [r for r in gh.plugins.plugin_report() if r.distribution == 'gradhub-cuda']\n"
        "print(rec[0].status)\n"
        "print(REGISTRY.device_types['cuda'].availability())\n"
        "print((gh.Variable([1.0]) * 2.0).d)\n"
    )
    lines = run_python(code).splitlines()
    assert lines[0] == "loaded"
    assert lines[1].startswith("(False, ") and "CuPy is not installed" in lines[1]
    assert "gradhub-cuda[cuda13]" in lines[1]
    assert lines[2] == "[2.]"


def test_import_probes_no_gpu() -> None:
    code = (
        "import sys, gradhub_cuda, gradhub_cuda.plugin, gradhub_cuda.device\n"
        "print('cupy' in sys.modules)\n"
    )
    assert run_python(code).strip() == "False"


@pytest.mark.parametrize(
    ("fake", "reason"),
    [
        (_fake_cupy(count=RuntimeError("cudaErrorNoDevice")), "no usable CUDA driver or GPU"),
        (_fake_cupy(count=0), "no GPU found"),
        (
            _fake_cupy(driver=12040, runtime=13000),
            "driver is too old: it supports CUDA 12.4, "
            "CuPy (built for CUDA 13.0) needs a CUDA 13.x "
            "driver; upgrade the driver or install a CuPy "
            "for CUDA 12 (cupy-cuda12x)",
        ),
        (
            _fake_cupy(driver=11080, runtime=12000),
            "it supports CUDA 11.8, CuPy (built for CUDA 12.0) needs a CUDA 12.x driver",
        ),
    ],
)
def test_availability_reasons(fake: types.ModuleType, reason: str) -> None:
    from gradhub_cuda.device import CudaDeviceType

    dt = CudaDeviceType(cupy=fake)
    ok, why = dt.availability()
    assert not ok and reason in why
    with pytest.raises(gh.DeviceError, match="unusable here"):
        dt.get(0)


@pytest.mark.parametrize(
    ("driver", "runtime"),
    [(12020, 12080), (12000, 12090), (12080, 12080), (13010, 13000), (13000, 12080)],
)
def test_a_driver_of_the_same_major_version_runs_a_newer_minor_runtime(
    driver: int, runtime: int
) -> None:
    # CUDA minor version compatibility (11 and later): a 12.2 driver runs a CuPy built for 12.8
    # (regression: any driver older than the runtime, minor versions included, was rejected)
    from gradhub_cuda.device import CudaDeviceType

    dt = CudaDeviceType(cupy=_fake_cupy(count=1, driver=driver, runtime=runtime))
    assert dt.availability() == (True, "")
    assert dt.device_count() == 1


def test_available_with_a_working_driver() -> None:
    from gradhub_cuda.device import CudaDeviceType

    dt = CudaDeviceType(cupy=_fake_cupy(count=2))
    assert dt.availability() == (True, "")
    assert dt.device_count() == 2
    with pytest.raises(gh.DeviceError, match=r"'cuda:5' does not exist: 2 GPU"):
        dt.get(5)


@pytest.mark.skipif(not _REASON, reason="checks the error path of an unusable device")
def test_unusable_cuda_and_its_alias_say_why() -> None:
    for name in ("cuda", "cudnn", "cuda:1"):
        with pytest.raises(gh.DeviceError, match=f"'{name}' is unusable here: {_REASON[:20]}"):
            gh.get_extension_context(name)


def test_plugin_adds_no_functions_or_rules(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def snapshot() -> dict[str, tuple[str, str]]:
        return {r["function"]: (r["provider"], r["rule_provider"]) for r in gh.registry_table()}

    with_cuda = snapshot()
    assert "cuda" in REGISTRY.device_types
    plugins.reset()
    monkeypatch.setenv("GRADHUB_BLOCK_PLUGINS", "gradhub-cuda")
    without = snapshot()
    assert "cuda" not in REGISTRY.device_types
    assert with_cuda == without


def test_a_blocked_cuda_plugin_is_not_called_missing(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gradhub-cuda installed but blocked: the errors said 'pip install gradhub-cuda'."""
    from gradhub.cli import _device_rows

    monkeypatch.setenv("GRADHUB_BLOCK_PLUGINS", "gradhub-cuda")
    plugins.reset()
    with pytest.raises(DeviceError, match="'gradhub-cuda' is installed but blocked"):
        gh.get_extension_context("cuda")
    (row,) = [r for r in _device_rows() if r["device"] == "cuda"]
    assert row["reason"] == "installed but blocked (GRADHUB_BLOCK_PLUGINS)"


def test_the_cuda_kernels_are_registered_for_their_functions(fresh: None) -> None:
    """Each kernel of gradhub_cuda.kernels is the ``cuda`` kernel of its function, provided by
    gradhub-cuda (registration needs no GPU; the op matrix runs them where one is usable)."""
    from gradhub_cuda.kernels import KERNELS

    assert set(KERNELS) >= {
        "Convolution",
        "Deconvolution",
        "ConvolutionFilterGrad",
        "MaxPooling",
        "SoftmaxCrossEntropy",
    }
    for name, fn in KERNELS.items():
        fdef = REGISTRY.get(name)
        assert fdef.kernels["cuda"] is fn, name
        assert fdef.kernel_providers["cuda"].distribution == "gradhub-cuda"


def test_the_cuda_pooling_kernels_take_only_their_geometry() -> None:
    """Which pooling calls the CUDA kernels take (no GPU needed to decide): 2-d windows over
    channels-first data, and for the mask functions windows that do not overlap; the rest go to
    the generic kernels."""
    from gradhub_cuda.kernels import _pool_geometry

    plugins.load_plugins() if not plugins.STATE.loaded else None
    shape = (2, 3, 6, 6)
    assert _pool_geometry("p", shape, (2, 2), None, True, None, False).out == (3, 3)
    assert _pool_geometry("p", shape, (3, 3), (1, 1), True, None, False) is not None
    assert _pool_geometry("p", shape, (3, 3), (1, 1), True, None, False, disjoint=True) is None
    assert _pool_geometry("p", shape, (2, 2), None, True, None, False, disjoint=True) is not None
    assert _pool_geometry("p", shape, (2,), None, True, None, False) is None  # 1-d windows
    assert _pool_geometry("p", shape, (2, 2), None, True, None, True) is None  # channel_last


# -- on a GPU ------------------------------------------------------------------------------------


@gpu
def test_parity_with_cpu_on_every_function() -> None:
    from gradhub.audit import samples_of

    cuda = REGISTRY.device_type("cuda").get(0)
    for name, fdef in sorted(REGISTRY.functions.items()):
        for s in samples_of(fdef):
            for dtype, rtol in ((np.float64, 1e-10), (np.float32, 1e-5)):
                host = [
                    np.asarray(a).astype(dtype)
                    if np.asarray(a).dtype.kind == "f"
                    else np.asarray(a)
                    for a in s.inputs
                ]
                cpu_out = fdef.api(*[gh.Variable(a, need_grad=False) for a in host], **s.attrs)
                gpu_out = fdef.api(
                    *[gh.Variable(cuda.asarray(a), need_grad=False) for a in host], **s.attrs
                )
                cpu_out = cpu_out if isinstance(cpu_out, tuple) else (cpu_out,)
                gpu_out = gpu_out if isinstance(gpu_out, tuple) else (gpu_out,)
                for c, g in zip(cpu_out, gpu_out):
                    np.testing.assert_allclose(
                        g.numpy(),
                        c.numpy(),
                        rtol=rtol,
                        atol=rtol,
                        err_msg=f"{name}[{s.name}] {dtype.__name__}",
                    )


@gpu
def test_gradients_stay_on_their_device_and_transfer_back() -> None:
    ctx = gh.get_extension_context("cuda")
    with gh.context_scope(ctx):
        x = gh.Variable(np.linspace(-1, 1, 5))
    y = (x * x).sum()
    (g,) = gh.grad([y], [x])
    assert g.device.name == "cuda:0"
    c = gh.Variable(np.arange(3.0))
    d = c.to("cuda")
    assert d.device.name == "cuda:0"
    (gc,) = gh.grad([(d * 3.0).sum()], [c])
    assert gc.device.name == "cpu"
    np.testing.assert_allclose(gc.d, 3.0)
    with pytest.raises(gh.DeviceError, match=r"different devices.*cuda:0.*cpu"):
        _ = x + gh.Variable(np.ones(5))


@gpu
def test_memory_pool_does_not_grow_over_gradient_penalty_steps() -> None:
    import cupy
    import gradhub.functions as F
    import gradhub.parametric_functions as PF

    ctx = gh.get_extension_context("cuda")
    rng = np.random.default_rng(0)
    with gh.context_scope(ctx):
        x = gh.Variable(rng.standard_normal((8, 3, 16, 16)).astype(np.float32), need_grad=False)
        t = gh.Variable(rng.integers(0, 10, (8, 1)), need_grad=False)
        h = F.relu(PF.convolution(x, 4, (3, 3), pad=(1, 1), name="c1"))
        p = PF.affine(F.max_pooling(h, (2, 2)), 10, name="fc")
        params = list(gh.get_parameters().values())

    pool = cupy.get_default_memory_pool()

    def step() -> None:
        loss = F.mean(F.softmax_cross_entropy(p, t))
        grads = gh.grad([loss], params)
        gp = sum(F.sum(g**2.0) ** 0.5 for g in grads)
        total = loss + gp
        total.forward()
        for q in params:
            q.cleargrad()
        total.backward()

    for _ in range(20):
        step()
    cupy.cuda.Device(0).synchronize()
    before = pool.used_bytes()
    for _ in range(500):
        step()
    cupy.cuda.Device(0).synchronize()
    assert pool.used_bytes() <= before * 1.05 + 1024


def _seed_cnn_penalty(device: str, dtype: type) -> list[np.ndarray]:
    """The seed CNN with its gradient-norm penalty on ``device``: [total, d total / d params]."""
    from gradhub import parameters
    from gradhub_nn_ops.demo import _own_parameters, gradient_penalty, loss_fn, network

    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 1, 8, 8)).astype(dtype)
    t = rng.integers(0, 10, (16, 1))
    ctx = gh.get_extension_context(device)
    with _own_parameters(), gh.context_scope(ctx):
        xv, tv = gh.Variable(x, need_grad=False), gh.Variable(t, need_grad=False)
        network(xv, rng=np.random.RandomState(0))  # creates the parameters on the host
        for name, p in list(parameters._params.items()):  # same values, on the device, in dtype
            parameters._params[name] = gh.Variable(
                p.numpy().astype(dtype), need_grad=True, name=name
            )
        params = list(gh.get_parameters().values())
        loss = loss_fn(network(xv), tv)
        grads = gh.grad([loss], params, create_graph=True)
        total = loss + gradient_penalty(grads)
        d_params = gh.grad([total], params)
        assert all(g.device.name == ("cpu" if device == "cpu" else "cuda:0") for g in d_params)
        return [total.numpy()] + [g.numpy() for g in d_params]


@gpu
@pytest.mark.parametrize(("dtype", "rtol"), [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_seed_cnn_with_gradient_penalty_matches_the_cpu(dtype: type, rtol: float) -> None:
    """The issue's end-to-end check: double backward through convolution, pooling and the loss
    on ``cuda`` gives the CPU's numbers (the tolerance is relative to each array's scale)."""
    cpu, gpu_ = _seed_cnn_penalty("cpu", dtype), _seed_cnn_penalty("cuda", dtype)
    for i, (g, c) in enumerate(zip(gpu_, cpu)):
        assert g.dtype == c.dtype == dtype
        np.testing.assert_allclose(
            g, c, rtol=rtol, atol=rtol * float(np.max(np.abs(c))), err_msg=f"output #{i}"
        )


@gpu
def test_the_demo_trains_on_cuda_as_on_the_cpu() -> None:
    from gradhub_nn_ops.demo import run

    kw = {"epochs": 1, "max_batches": 3, "seed": 0}
    cpu, gpu_ = run(device="cpu", **kw), run(device="cuda", **kw)
    assert gpu_.device == "cuda:0"
    np.testing.assert_allclose(gpu_.batch_loss, cpu.batch_loss, rtol=1e-4)
    np.testing.assert_allclose(gpu_.batch_penalty, cpu.batch_penalty, rtol=1e-4)


@gpu
def test_softmax_cross_entropy_on_cuda_checks_the_labels() -> None:
    """The one-kernel SoftmaxCrossEntropy counts labels outside [0, C) on the GPU and then raises
    the generic kernel's error; valid labels give the CPU's numbers."""
    import gradhub.functions as F

    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4))
    ctx = gh.get_extension_context("cuda")
    for t in (np.array([[0], [3], [1], [2], [3]]), np.array([0, 3, 1, 2, 3])):
        with gh.context_scope(ctx):
            got = F.softmax_cross_entropy(gh.Variable(x), gh.Variable(t, need_grad=False))
        want = F.softmax_cross_entropy(gh.Variable(x), gh.Variable(t, need_grad=False))
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    with gh.context_scope(ctx):
        xv, bad = gh.Variable(x), gh.Variable(np.array([[0], [4], [1], [2], [3]]), need_grad=False)
        with pytest.raises(ValueError, match=r"labels outside \[0, 4\) \(min 0, max 4\)"):
            F.softmax_cross_entropy(xv, bad)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("shape", "axis", "keepdims"),
    [
        ((256, 4, 28, 28), (0, 2, 3), False),
        ((16, 2, 8, 8), (0, 2, 3), True),
        ((7, 3, 100), (0, -1), False),
        ((2, 3, 4, 256), (0, 1, 3), False),
        ((7, 3, 5, 2), (0, 2, 3), False),  # small images: the generic kernel
        ((7, 3, 5, 2), (1, 2), False),  # two kept axes: the generic kernel
    ],
)
def test_the_sum_kernel_matches_the_generic_one(
    dtype: type, shape: tuple[int, ...], axis: tuple[int, ...], keepdims: bool
) -> None:
    import cupy as cp
    from gradhub.ops import fdef
    from gradhub_cuda.kernels import sum_

    x = cp.asarray(np.random.default_rng(0).standard_normal(shape).astype(dtype))
    got = sum_(cp, x, axis, keepdims)
    want = fdef("Sum").forward(cp, x, axis, keepdims)
    assert got.shape == want.shape and got.dtype == want.dtype
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(cp.asnumpy(got), cp.asnumpy(want), rtol=rtol, atol=rtol * 10)


@pytest.mark.parametrize(
    ("shape", "axis", "kept"),
    [
        ((256, 8, 32, 32), (0, 2, 3), 1),  # measured 2.2x faster in two steps on an H200
        ((256, 16, 16, 16), (0, 2, 3), None),  # about even: CuPy's one reduction
        ((256, 64, 8, 8), (0, 2, 3), None),  # CuPy's one reduction measured faster
        ((2, 3, 4, 256), (0, 1, -1), 2),
        ((7, 300), (0,), None),  # two axes: CuPy's
        ((7, 3, 5, 2), (1, 2), None),  # two kept axes
        ((4, 3, 64), (1, 2), None),  # the kept axis leads
    ],
)
def test_the_sum_kernel_sums_in_two_steps_only_where_measured_faster(
    shape: tuple[int, ...], axis: tuple[int, ...], kept: int | None
) -> None:
    from gradhub_cuda.kernels import _two_step_axis, sum_

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert _two_step_axis(x, axis) == kept
    assert _two_step_axis(np.asfortranarray(x), axis) is None  # not C-contiguous: CuPy's
    want = x.sum(axis=tuple(a % x.ndim for a in axis))
    np.testing.assert_allclose(sum_(np, x, axis, False), want, rtol=1e-5, atol=1e-3)

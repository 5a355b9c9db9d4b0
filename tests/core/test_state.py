"""Trained state files (gradhub.state): save_parameters/load_parameters in safetensors and .npz,
round trips in fresh processes, refused inputs (no side effect), atomic save, optimizer state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import gradhub as gh
import numpy as np
import pytest
from gradhub import state
from gradhub.optim import SGD, Adam


@pytest.fixture(autouse=True)
def _clean_parameters():
    gh.clear_parameters()
    yield
    gh.clear_parameters()


def _run(code: str) -> str:
    """Run ``code`` in a fresh interpreter; return its stdout."""
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def _make(dtype: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    values = {
        "fc1/affine/W": rng.standard_normal((3, 4)).astype(dtype),
        "fc1/affine/b": rng.standard_normal(4).astype(dtype),
        "bn/mean": rng.standard_normal((1, 4)).astype(dtype),
    }
    for name, a in values.items():
        gh.get_parameter_or_create(name, a.shape, lambda s, a=a: a, need_grad=name != "bn/mean")
    return values


@pytest.mark.parametrize("ext", ["safetensors", "npz"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_trip_in_a_fresh_process(tmp_path, ext, dtype):
    values = _make(dtype)
    path = tmp_path / f"model.{ext}"
    gh.save_parameters(path)
    out = _run(
        f"""
        import json, gradhub as gh
        gh.load_parameters({str(path)!r})
        print(json.dumps({{k: [v.d.tolist(), str(v.dtype), v.need_grad]
                          for k, v in gh.get_parameters(grad_only=False).items()}}))
        """
    )
    got = json.loads(out)
    assert list(got) == list(values)  # creation order kept
    for name, a in values.items():
        data, dt, ng = got[name]
        assert dt == dtype
        np.testing.assert_array_equal(np.asarray(data, dtype=dtype), a)  # bit for bit
        assert ng == (name != "bn/mean")


def test_fresh_process_writes_and_this_one_reads(tmp_path):
    path = tmp_path / "w.safetensors"
    _run(
        f"""
        import numpy as np, gradhub as gh
        with gh.parameter_scope("net"):
            gh.get_parameter_or_create("W", (2, 2), lambda s: np.arange(4.0).reshape(2, 2))
        gh.save_parameters({str(path)!r})
        """
    )
    gh.load_parameters(path)
    p = gh.get_parameters()["net/W"]
    assert p.dtype == np.float64
    np.testing.assert_array_equal(p.d, np.arange(4.0).reshape(2, 2))


def test_scope_relative_names(tmp_path):
    with gh.parameter_scope("enc"):
        gh.get_parameter_or_create("W", (2,), lambda s: [1.0, 2.0])
    gh.get_parameter_or_create("other", (1,), lambda s: [5.0])
    path = tmp_path / "enc.safetensors"
    with gh.parameter_scope("enc"):
        gh.save_parameters(path)
    arrays, meta = state.read_state_file(path)
    assert list(arrays) == ["W"] and meta["need_grad"] == {"W": True}
    with gh.parameter_scope("dec"):
        gh.load_parameters(path)
    np.testing.assert_array_equal(gh.get_parameters()["dec/W"].d, [1.0, 2.0])


def test_load_overwrites_in_place_and_old_graph_uses_loaded_values(tmp_path):
    w = gh.get_parameter_or_create("W", (2,), lambda s: [1.0, 2.0])
    path = tmp_path / "w.npz"
    np.savez(path, W=np.array([3.0, 4.0], dtype=np.float32))
    x = gh.Variable([10.0, 100.0], need_grad=False)
    y = (w * x).sum()
    assert float(y.d) == 210.0
    gh.load_parameters(path)
    assert gh.get_parameters()["W"] is w  # the same Variable
    y.forward()
    assert float(y.d) == 430.0
    y.backward()
    np.testing.assert_array_equal(w.g, [10.0, 100.0])


def test_load_casts_within_floating_kind_and_restores_need_grad(tmp_path):
    w = gh.get_parameter_or_create("W", (2,), lambda s: [1.0, 2.0])  # float32, need_grad
    src = {"W": gh.Variable(np.array([0.1, 0.2]), need_grad=False)}  # float64
    path = tmp_path / "w.safetensors"
    gh.save_parameters(path, src)
    gh.load_parameters(path)
    assert w.dtype == np.float32 and not w.need_grad
    np.testing.assert_array_equal(w.d, np.array([0.1, 0.2], dtype=np.float32))


def _snapshot():
    return {k: (v.d.copy(), v.need_grad) for k, v in gh.get_parameters(grad_only=False).items()}


def _assert_unchanged(before):
    after = _snapshot()
    assert list(after) == list(before)
    for k in before:
        np.testing.assert_array_equal(after[k][0], before[k][0])
        assert after[k][1] == before[k][1]


def test_shape_mismatch_raises_naming_the_parameter_and_changes_nothing(tmp_path):
    gh.get_parameter_or_create("a", (2,), lambda s: [1.0, 2.0])
    gh.get_parameter_or_create("b", (3,), lambda s: [1.0, 2.0, 3.0])
    path = tmp_path / "bad.safetensors"
    # "a" would load fine; "b" has another shape (broadcastable: (1,) -> (3,)); "c" is new
    gh.save_parameters(
        path,
        {
            "a": gh.Variable([7.0, 7.0]),
            "b": gh.Variable([9.0]),
            "c": gh.Variable([0.0]),
        },
    )
    before = _snapshot()
    with pytest.raises(
        ValueError, match=r"parameter 'b' has shape \(3,\), .*bad.safetensors.* shape \(1,\)"
    ):
        gh.load_parameters(path)
    _assert_unchanged(before)


def test_integer_into_float_parameter_is_refused(tmp_path):
    gh.get_parameter_or_create("a", (2,), lambda s: [1.0, 2.0])
    path = tmp_path / "int.npz"
    np.savez(path, a=np.array([1, 2]))
    before = _snapshot()
    with pytest.raises(
        TypeError, match=r"parameter 'a' has dtype float32, .*int\.npz.* stores int64"
    ):
        gh.load_parameters(path)
    _assert_unchanged(before)


def test_npz_with_pickled_objects_is_refused(tmp_path):
    gh.get_parameter_or_create("a", (1,), lambda s: [1.0])
    path = tmp_path / "evil.npz"
    np.savez(path, a=np.array([5.0]), obj=np.array([{"x": 1}], dtype=object))
    before = _snapshot()
    with pytest.raises(
        gh.StateFileError, match=r"evil\.npz.* holds pickled Python objects \(entry 'obj'"
    ):
        gh.load_parameters(path)
    _assert_unchanged(before)


@pytest.mark.parametrize("ext", ["safetensors", "npz"])
def test_truncated_and_corrupted_files_raise_naming_the_file(tmp_path, ext):
    gh.get_parameter_or_create("a", (100,), lambda s: np.ones(100))
    path = tmp_path / f"model.{ext}"
    gh.save_parameters(path)
    raw = path.read_bytes()
    before = _snapshot()
    for i, data in enumerate([raw[: len(raw) // 2], raw[:5], b"", b"garbage" * 20]):
        bad = tmp_path / f"bad{i}.{ext}"
        bad.write_bytes(data)
        with pytest.raises(gh.StateFileError, match=rf"bad{i}\.{ext}.*not a readable"):
            gh.load_parameters(bad)
    # a header whose JSON is broken
    bad = tmp_path / "hdr.safetensors"
    bad.write_bytes(raw[:8] + b"{" * (len(raw) - 8))
    with pytest.raises(gh.StateFileError, match=r"hdr\.safetensors"):
        gh.load_parameters(bad)
    with pytest.raises(FileNotFoundError, match=r"missing\.npz"):
        gh.load_parameters(tmp_path / "missing.npz")
    _assert_unchanged(before)


def test_npz_member_corrupted(tmp_path):
    path = tmp_path / "z.npz"
    np.savez(path, a=np.ones(50))
    with zipfile.ZipFile(path) as z:
        data = z.read("a.npy")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("a.npy", data[:60])  # the array's bytes cut off
    with pytest.raises(gh.StateFileError, match=r"z\.npz"):
        gh.load_parameters(path)
    assert gh.get_parameters() == {}


def test_save_refuses_bad_params(tmp_path):
    path = tmp_path / "x.safetensors"
    with pytest.raises(
        TypeError, match=r"save_parameters: params\['w'\] must be a Variable, got ndarray"
    ):
        gh.save_parameters(path, {"w": np.ones(2)})
    with pytest.raises(TypeError, match="save_parameters: params must be a mapping"):
        gh.save_parameters(path, [gh.Variable([1.0])])
    with pytest.raises(ValueError, match="reserved"):
        gh.save_parameters(path, {"__gradhub__": gh.Variable([1.0])})
    assert not path.exists() and os.listdir(tmp_path) == []


def test_atomic_save_under_a_simulated_crash(tmp_path, monkeypatch):
    gh.get_parameter_or_create("a", (1000,), lambda s: np.zeros(1000))
    path = tmp_path / "model.safetensors"
    gh.save_parameters(path)
    good = path.read_bytes()
    gh.get_parameters()["a"].d[...] = 1.0

    def crash(f, data):
        f.write(data[: len(data) // 2])
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(state, "_write_bytes", crash)
    with pytest.raises(OSError, match="simulated"):
        gh.save_parameters(path)
    assert path.read_bytes() == good  # the final name is untouched
    assert os.listdir(tmp_path) == ["model.safetensors"]  # no temporary file left
    monkeypatch.undo()
    gh.load_parameters(path)
    np.testing.assert_array_equal(gh.get_parameters()["a"].d, np.zeros(1000))


def test_foreign_safetensors_file_loads(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "hf.safetensors"
    save_file(
        {"w": np.arange(3, dtype=np.float32), "idx": np.array([1, 2], dtype=np.int64)}, str(path)
    )
    gh.load_parameters(path)
    ps = gh.get_parameters(grad_only=False)
    assert ps["w"].need_grad and not ps["idx"].need_grad
    np.testing.assert_array_equal(ps["idx"].d, [1, 2])


# -- optimizer state -------------------------------------------------------------------------

_TRAIN = """
import sys, numpy as np, gradhub as gh
from gradhub.optim import SGD, Adam

def build():
    gh.clear_parameters()
    rng = np.random.default_rng(0)
    W = gh.get_parameter_or_create("W", (4, 3), lambda s: rng.standard_normal(s))
    b = gh.get_parameter_or_create("b", (3,), lambda s: np.zeros(s))
    return W, b

def batch(i):
    r = np.random.default_rng(100 + i)
    return gh.Variable(r.standard_normal((8, 4)), need_grad=False), gh.Variable(
        r.standard_normal((8, 3)), need_grad=False)

def make_opt(kind, params):
    if kind == "adam":
        return Adam(params, lr=0.05, weight_decay=0.01)
    return SGD(params, lr=0.05, momentum=0.9, nesterov=True)

def train(opt, W, b, start, stop):
    for i in range(start, stop):
        x, t = batch(i)
        opt.zero_grad()
        d = x @ W + b - t
        (d * d).sum().backward()
        opt.update()
"""


@pytest.mark.parametrize("kind", ["adam", "sgd"])
@pytest.mark.parametrize("ext", ["safetensors", "npz"])
def test_resume_in_a_fresh_process_is_bit_exact(tmp_path, kind, ext):
    n, m = 5, 4
    path = tmp_path / f"ckpt.{ext}"
    ns: dict = {}
    exec(_TRAIN, ns)
    W, b = ns["build"]()
    opt = ns["make_opt"](kind, [W, b])
    ns["train"](opt, W, b, 0, n)
    gh.save_parameters(path, optimizer=opt)
    ns["train"](opt, W, b, n, n + m)  # uninterrupted: n + m steps
    expected = {"W": W.d.copy(), "b": b.d.copy()}
    assert W.dtype == np.float64
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            _TRAIN
            + f"""
W, b = build()
opt = make_opt({kind!r}, [W, b])
opt.lr = 123.0  # restored from the file
gh.load_parameters({str(path)!r}, optimizer=opt)
assert opt.lr == 0.05 and opt.t == {n}, (opt.lr, opt.t)
train(opt, W, b, {n}, {n + m})
sys.stdout.write(W.d.tobytes().hex() + " " + b.d.tobytes().hex())
""",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    w_hex, b_hex = r.stdout.split()
    assert w_hex == expected["W"].tobytes().hex()  # bit for bit
    assert b_hex == expected["b"].tobytes().hex()


def test_resume_without_optimizer_state_differs():
    # the check above can fail: a fresh Adam (moments lost) does not reproduce the run
    ns: dict = {}
    exec(_TRAIN, ns)
    W, b = ns["build"]()
    opt = ns["make_opt"]("adam", [W, b])
    ns["train"](opt, W, b, 0, 6)
    full = W.d.copy()
    W2, b2 = ns["build"]()
    opt2 = ns["make_opt"]("adam", [W2, b2])
    ns["train"](opt2, W2, b2, 0, 3)
    opt3 = ns["make_opt"]("adam", [W2, b2])
    ns["train"](opt3, W2, b2, 3, 6)
    assert not np.array_equal(W2.d, full)


def test_optimizer_state_refusals(tmp_path):
    w = gh.get_parameter_or_create("w", (2,), lambda s: np.ones(2))
    path = tmp_path / "p.safetensors"
    gh.save_parameters(path)
    opt = Adam([w])
    with pytest.raises(gh.StateFileError, match=r"p\.safetensors.* holds no optimizer state"):
        gh.load_parameters(path, optimizer=opt)
    sgd = SGD([w], lr=0.1, momentum=0.5)
    w.g = np.ones(2)
    sgd.update()
    gh.save_parameters(path, optimizer=sgd)
    w.d[...] = 3.0
    with pytest.raises(
        ValueError,
        match=r"load_parameters: '.*p\.safetensors': Adam.load_state_dict: the state is of a "
        r"'SGD' optimizer",
    ):
        gh.load_parameters(path, optimizer=opt)
    np.testing.assert_array_equal(w.d, [3.0, 3.0])  # checked before anything changed
    v = gh.Variable(np.ones(3))
    with pytest.raises(
        ValueError,
        match=r"'momentum_buffer' of parameter 0 .* shape \(2,\), the parameter has shape \(3,\)",
    ):
        SGD([v], lr=0.1, momentum=0.5).load_state_dict(sgd.state_dict())
    with pytest.raises(ValueError, match="the state has 1 parameter entries, this optimizer has 2"):
        SGD([w, v], lr=0.1).load_state_dict(sgd.state_dict())
    with pytest.raises(TypeError, match="optimizer must have a state_dict"):
        gh.save_parameters(path, optimizer=object())


def test_state_dict_round_trip_in_memory():
    w = gh.Variable(np.array([1.0, -2.0]))
    opt = Adam([w], lr=0.1)
    opt.update([np.array([0.5, 1.0])])
    sd = opt.state_dict()
    w2 = gh.Variable(w.d.copy())
    opt2 = Adam([w2], lr=0.9)
    opt2.load_state_dict(sd)
    for o in (opt, opt2):
        o.update([np.array([0.25, -1.0])])
    np.testing.assert_array_equal(w.d, w2.d)
    assert opt2.steps == [2] and opt2.lr == 0.1


@pytest.mark.parametrize("ext", [".safetensors", ".npz"])
def test_optimizer_state_follows_parameter_names_and_numpy_hyperparameters(tmp_path, ext):
    # regressions: optimizer state was restored by position, so a program that created its
    # same-shaped parameters in another order gave each the other's momentum, silently; a
    # learning rate assigned as a numpy scalar (opt.lr = np.float32(0.05)) made saving fail
    # with "Object of type float32 is not JSON serializable"
    path = str(tmp_path / f"ckpt{ext}")
    gh.clear_parameters()
    a = gh.get_parameter_or_create("a", (2,), lambda s: np.array([1.0, 2.0]))
    b = gh.get_parameter_or_create("b", (2,), lambda s: np.array([-3.0, 5.0]))
    opt = SGD([a, b], lr=0.1, momentum=0.9)
    for _ in range(2):
        loss = (a * a).sum() + (b * b * b).sum()
        opt.update(gh.grad([loss], [a, b], create_graph=False))
    opt.lr = np.float32(0.05)
    gh.save_parameters(path, optimizer=opt)
    want = {name: s for name, s in zip(["a", "b"], opt.state_dict()["state"])}
    gh.clear_parameters()
    b2 = gh.get_parameter_or_create("b", (2,), lambda s: np.zeros(s))  # the other order
    a2 = gh.get_parameter_or_create("a", (2,), lambda s: np.zeros(s))
    opt2 = SGD([b2, a2], lr=0.1, momentum=0.9)
    gh.load_parameters(path, optimizer=opt2)
    got = opt2.state_dict()["state"]
    for name, entry in zip(["b", "a"], got):
        for key, value in want[name].items():
            np.testing.assert_array_equal(entry[key], value, err_msg=f"{name} {key}")
    assert opt2.lr == pytest.approx(0.05)
    gh.clear_parameters()


@pytest.mark.parametrize("ext", [".safetensors", ".npz"])
def test_0d_parameters_and_their_optimizer_state_keep_their_shape(tmp_path, ext):
    # regression: np.ascontiguousarray made 0-d arrays (1,): loading into the same program
    # raised "stores shape (1,)", a fresh program got a (1,) parameter
    path = str(tmp_path / f"ckpt{ext}")
    gh.clear_parameters()
    t = gh.get_parameter_or_create("temp", (), lambda s: np.array(2.0))
    opt = Adam([t], lr=0.1)
    opt.zero_grad()
    (t * t).backward()
    opt.update()
    gh.save_parameters(path, optimizer=opt)
    arrays, _ = state.read_state_file(path)
    assert {k: a.shape for k, a in arrays.items()} == {
        "temp": (),
        "__gradhub_optimizer__/0/m": (),
        "__gradhub_optimizer__/0/v": (),
    }
    gh.load_parameters(path, optimizer=Adam([t], lr=0.1))  # the same program: no error
    gh.clear_parameters()
    gh.load_parameters(path)
    assert gh.get_parameters()["temp"].shape == ()


def test_a_zip_with_other_members_is_not_a_state_file(tmp_path):
    # regression: a member that is not a .npy file gave AttributeError: 'bytes' object has no
    # attribute 'dtype'
    path = tmp_path / "plain.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("notes.txt", b"hello")
    with pytest.raises(gh.StateFileError, match=r"plain\.npz.*'notes\.txt' is not a numpy array"):
        gh.load_parameters(str(path))


@pytest.mark.parametrize("ext", [".safetensors", ".npz"])
def test_numpy_hyperparameters_resume_bit_for_bit(tmp_path, ext):
    # regression: a float32 learning rate and beta1 came back as Python floats, so the bias
    # corrections were computed in float64 after loading: 1 of 50 entries differed by 1.9e-9
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    w0 = rng.standard_normal((5, 10)).astype(np.float32)

    def make() -> tuple[gh.Variable, Adam]:
        gh.clear_parameters()
        w = gh.get_parameter_or_create("w", (5, 10), lambda s: w0.copy())
        opt = Adam([w])
        opt.lr, opt.beta1 = np.float32(0.0123), np.float32(0.9)
        return w, opt

    def steps(w: gh.Variable, opt: Adam, n: int) -> None:
        for _ in range(n):
            opt.zero_grad()
            ((gh.Variable(x, need_grad=False) @ w) ** 2.0).sum().backward()
            opt.update()

    w, opt = make()
    steps(w, opt, 30)
    straight = w.d.copy()
    w, opt = make()
    steps(w, opt, 15)
    path = str(tmp_path / f"ckpt{ext}")
    gh.save_parameters(path, optimizer=opt)
    w, opt = make()
    opt.lr, opt.beta1 = 0.5, 0.5  # restored from the file
    gh.load_parameters(path, optimizer=opt)
    assert type(opt.lr) is np.float32 and type(opt.beta1) is np.float32
    steps(w, opt, 15)
    np.testing.assert_array_equal(w.d, straight)

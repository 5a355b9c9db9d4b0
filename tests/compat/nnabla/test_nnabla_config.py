"""``gradhub_compat.nnabla.config.nnabla_config``: nnabla 1.39's defaults (its ``nnabla.conf``),
the configuration files read over them in nnabla's order (as INI text: nothing executed), and
the module reachable as ``nn.config`` and, through the peer shim, as ``nnabla.config``."""

from __future__ import annotations

import sys
from pathlib import Path

import gradhub_compat.nnabla as nn
import pytest
from gradhub_compat.nnabla import config

# nnabla 1.39: {section: dict(nnabla_config[section])} of its nnabla.conf
NNABLA_139 = {
    "DATA_ITERATOR": {
        "cache_file_format": ".npy",
        "data_source_file_cache_num_of_threads": "10",
        "cache_file_cache_num_of_threads": "4",
        "data_source_file_cache_size": "100",
        "data_source_file_cache_location": "",
        "data_source_buffer_max_size": "1073741824",
    },
    "LOG": {
        "log_file_name": "",
        "log_file_level": "DEBUG",
        "log_file_format": "%(asctime)s [%(name)s][%(levelname)s]: %(pathname)s : "
        "%(funcName)s : %(lineno)s : %(message)s",
        "log_console_level": "INFO",
        "log_console_format": "%(asctime)s [%(name)s][%(levelname)s]: %(message)s",
    },
    "MISC": {"misc_show_progress": "True", "nnp_param_format": ".h5"},
    "CALLBACK": {"util_callback_module": ""},
    "CHECKPOINT": {"optimizer_interval": "5"},
    "MULTINODE": {
        "analyse_gpu_status_interval": "20",
        "gpu_slowing_warning_threshold": "2",
        "gpu_slowing_error_threshold": "10",
    },
}


def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NNABLA_CONFIG_FILE_PATH", raising=False)
    monkeypatch.chdir(tmp_path)


def test_defaults_are_nnabla_139(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _isolated(monkeypatch, tmp_path)
    cfg = config._get_nnabla_config()
    got = {s: dict(cfg[s]) for s in cfg.sections()}
    if Path("/etc/nnabla.conf").is_file():  # pragma: no cover - a machine-wide file
        pytest.skip("/etc/nnabla.conf exists here")
    assert got == NNABLA_139
    assert list(got) == list(NNABLA_139)  # the sections in nnabla's order


def test_files_override_in_nnabla_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _isolated(monkeypatch, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".nnabla").write_text(
        "[DATA_ITERATOR]\ndata_source_file_cache_size = 7\ncache_file_format = .h5\n"
    )
    (tmp_path / "nnabla.conf").write_text("[DATA_ITERATOR]\ncache_file_format = .npz\n")
    env = tmp_path / "env.conf"
    env.write_text("[MISC]\nnnp_param_format = .protobuf\n[NEW]\nk = v\n")
    monkeypatch.setenv("NNABLA_CONFIG_FILE_PATH", str(env))
    cfg = config._get_nnabla_config()
    assert cfg.get("DATA_ITERATOR", "data_source_file_cache_size") == "7"  # ~/.nnabla
    assert cfg.get("DATA_ITERATOR", "cache_file_format") == ".npz"  # ./nnabla.conf, later
    assert cfg.get("MISC", "nnp_param_format") == ".protobuf"  # NNABLA_CONFIG_FILE_PATH, last
    assert cfg.get("NEW", "k") == "v"
    assert cfg.get("DATA_ITERATOR", "data_source_buffer_max_size") == "1073741824"


def test_files_are_read_as_text_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _isolated(monkeypatch, tmp_path)
    marker = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    (tmp_path / "nnabla.conf").write_text(f"[LOG]\nlog_file_name = {code}\nx = %(missing)s\n")
    cfg = config._get_nnabla_config()
    assert cfg.get("LOG", "log_file_name") == code  # a string, never evaluated
    assert cfg.get("LOG", "x") == "%(missing)s"  # no interpolation (RawConfigParser)
    assert not marker.exists()


def test_module_is_reachable() -> None:
    assert nn.config is config
    assert int(config.nnabla_config.get("DATA_ITERATOR", "cache_file_cache_num_of_threads")) >= 0
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
    try:
        import nnabla_peer_shim

        assert "config" in nnabla_peer_shim.SUBMODULES
        assert "utils.data_source_implements" in nnabla_peer_shim.SUBMODULES
        assert "utils.data_source_loader" in nnabla_peer_shim.SUBMODULES
    finally:
        sys.path.remove(str(Path(__file__).resolve().parents[3] / "tools"))

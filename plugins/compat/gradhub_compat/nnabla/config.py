"""nnabla's configuration: ``from gradhub_compat.nnabla.config import nnabla_config``
(``from nnabla.config import nnabla_config``).

``nnabla_config`` is a :class:`configparser.RawConfigParser` holding nnabla 1.39's defaults
(its ``nnabla.conf``: sections ``DATA_ITERATOR``, ``LOG``, ``MISC``, ``CALLBACK``,
``CHECKPOINT``, ``MULTINODE``), overridden, as nnabla's, by the files that exist among
``/etc/nnabla.conf``, ``~/.nnabla``, ``./nnabla.conf`` (the working directory at import) and
the file named by the environment variable ``NNABLA_CONFIG_FILE_PATH``, read in that order.
The files are read as INI text (no interpolation); nothing in them is executed. Values are
strings: ``int(nnabla_config.get("DATA_ITERATOR", "data_source_buffer_max_size"))``.

The data pipeline reads ``[DATA_ITERATOR] data_source_buffer_max_size`` when a
:class:`~gradhub_compat.nnabla.utils.data_source.DataSourceWithMemoryCache` is built (the
memory cache keeps the examples when all of them take fewer bytes); ``nnabla_config.set(...)``
changes it for the sources built afterwards, as with nnabla. The file cache settings are kept
for programs that read them (file caches are not supported, see docs/migration-nnabla.md,
'Monitors and data iterators').

Example::

    >>> from gradhub_compat.nnabla.config import nnabla_config
    >>> int(nnabla_config.get("DATA_ITERATOR", "data_source_buffer_max_size"))
    1073741824
    >>> nnabla_config.get("DATA_ITERATOR", "cache_file_format")
    '.npy'
"""

from __future__ import annotations

import configparser
import os

__all__ = ["DEFAULTS", "nnabla_config"]

#: nnabla 1.39's ``nnabla.conf`` (its comments left out).
DEFAULTS = """\
[DATA_ITERATOR]
cache_file_format = .npy
data_source_file_cache_num_of_threads = 10
cache_file_cache_num_of_threads = 4
data_source_file_cache_size = 100
data_source_file_cache_location =
data_source_buffer_max_size = 1073741824

[LOG]
log_file_name =
log_file_level = DEBUG
log_file_format = %(asctime)s [%(name)s][%(levelname)s]: %(pathname)s : %(funcName)s : \
%(lineno)s : %(message)s
log_console_level = INFO
log_console_format = %(asctime)s [%(name)s][%(levelname)s]: %(message)s

[MISC]
misc_show_progress = True
nnp_param_format = .h5

[CALLBACK]
util_callback_module =

[CHECKPOINT]
optimizer_interval = 5

[MULTINODE]
analyse_gpu_status_interval = 20
gpu_slowing_warning_threshold = 2
gpu_slowing_error_threshold = 10
"""


def _config_files() -> list[str]:
    files = []
    if os.name == "posix":
        files += [
            "/etc/nnabla.conf",
            os.path.abspath(os.path.join(os.path.expanduser("~"), ".nnabla")),
        ]
    files.append(os.path.abspath(os.path.join(os.getcwd(), "nnabla.conf")))
    env = os.environ.get("NNABLA_CONFIG_FILE_PATH")
    if env and os.path.exists(env):
        files.append(env)
    return files


def _get_nnabla_config() -> configparser.RawConfigParser:
    """nnabla's defaults, then the configuration files that exist (see the module)."""
    config = configparser.RawConfigParser()
    config.read_string(DEFAULTS, source="<nnabla 1.39 nnabla.conf>")
    for filename in _config_files():
        if os.path.isfile(filename):
            config.read(filename, encoding="utf-8")
    return config


nnabla_config = _get_nnabla_config()

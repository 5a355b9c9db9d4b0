"""nnabla's data sources over files: ``from gradhub_compat.nnabla.utils.data_source_implements
import CsvDataSource`` (``nnabla.utils.data_source_implements``).

:class:`CsvDataSource` reads a dataset CSV file in nnabla's layout: a header row naming the
variables, then one example per row. A header cell is ``NAME[__INDEX][:LABEL]``: cells with
the same ``NAME`` and an ``__INDEX`` make one variable, a list of their values; a cell starting
with ``#`` is a comment column (dropped). A value is a number (a variable without
``__INDEX`` gives ``[value]``) or the name of a file relative to the CSV file's folder, read
by :func:`~gradhub_compat.nnabla.utils.data_source_loader.load` (images as ``(C, H, W)``,
``normalize``: ``/ 255``; ``.csv``; ``.npy``). The header's cells are taken as written (a
space after a comma stays in the name, as with nnabla).

:class:`SimpleDataSource` and :class:`ConcatDataSource` (here as in nnabla) are those of
:mod:`~gradhub_compat.nnabla.utils.data_source`. :class:`CacheDataSource` (a folder of cache
files) raises ``NotImplementedError`` (see docs/migration-nnabla.md, 'Monitors and data
iterators').

Example::

    >>> import os, tempfile
    >>> from gradhub_compat.nnabla.utils.data_source_implements import CsvDataSource
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "train.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("x__0,x__1,y:label\\n1,2,0\\n3,4,1\\n")
    >>> ds = CsvDataSource(path)
    >>> ds.variables, ds.size, ds.next()
    (('x', 'y'), 2, ([1.0, 2.0], [0.0]))
    >>> tmp.cleanup()
"""

from __future__ import annotations

import csv
import os
from collections import OrderedDict
from typing import Any

import numpy

from ..logger import logger
from .data_source import DOCS, ConcatDataSource, DataSource, SimpleDataSource
from .data_source_loader import FileReader, load

__all__ = ["CacheDataSource", "ConcatDataSource", "CsvDataSource", "SimpleDataSource"]


class CsvDataSource(DataSource):
    """The examples of a dataset CSV file (nnabla's ``CsvDataSource(filename, shuffle=False,
    rng=None, normalize=False)``; layout in the module).

    ``variables`` is the tuple of variable names in header order; ``_get_data(position)``
    returns one entry per variable for the row ``order[position]``, the files it names read
    when asked (``data_iterator_csv_dataset``'s memory cache keeps them). Each ``reset()``
    with ``shuffle`` draws ``rng.permutation(size)`` as the new order (the constructor resets
    once, so the first epoch is already shuffled). A row with another number of cells than
    the header gives an empty example, as nnabla's.
    """

    def __init__(
        self,
        filename: str,
        shuffle: bool = False,
        rng: numpy.random.RandomState | None = None,
        normalize: bool = False,
    ) -> None:
        super().__init__(shuffle=shuffle, rng=rng)
        self._filename = filename
        self._normalize = normalize
        self._generation = -1
        self._filereader = FileReader(filename)
        with self._filereader.open(textmode=True, encoding="utf-8-sig") as f:
            csvreader = csv.reader(f)
            try:
                header = next(csvreader)
            except StopIteration:
                raise ValueError(f"CsvDataSource: {filename!r} is empty (no header row)") from None
            self._rows = list(csvreader)
        self._size = len(self._rows)
        self._remove_comment_cols(header, self._rows)
        self._process_header(header)
        self._original_source_uri = self._filename
        self._original_order = list(range(self._size))
        self._order = list(range(self._size))
        self._variables = tuple(self._variables_dict.keys())
        self.reset()

    def _remove_comment_cols(self, header: list[str], rows: list[list[str]]) -> None:
        for col_index in reversed(range(len(header))):
            if header[col_index][:1] == "#":
                del header[col_index]
                for row in rows:
                    if col_index < len(row):
                        del row[col_index]

    def _process_header(self, row: list[str]) -> None:
        self._variables_dict: OrderedDict[str, Any] = OrderedDict()
        self._columns: list[tuple[str, str | None, str | None]] = []
        for column_value in row:
            variable_with_index, sep, label_part = column_value.partition(":")
            label = label_part if sep else None
            variable, sep, index_part = variable_with_index.partition("__")
            index = index_part if sep else None
            self._columns.append((variable, index, label))
            if index is None:
                self._variables_dict[variable] = {"label": label, "value": None}
            else:
                if variable not in self._variables_dict:
                    self._variables_dict[variable] = []
                self._variables_dict[variable].append({"label": label, "value": None})

    def _process_row(self, row: list[str]) -> Any:
        values: OrderedDict[str, Any] = OrderedDict()
        if len(row) == len(self._columns):
            for column, column_value in enumerate(row):
                variable, index, _ = self._columns[column]
                if index is None:
                    values[variable] = self._get_value(column_value, is_vector=True)
                else:
                    values.setdefault(variable, []).append(self._get_value(column_value))
        return values.values()

    def _get_value(self, value: str, is_vector: bool = False) -> Any:
        try:
            return [float(value)] if is_vector else float(value)
        except ValueError:
            pass
        ext = os.path.splitext(value)[1].lower()
        loader = load(ext)
        with self._filereader.open(value) as f:
            return loader(f, normalize=self._normalize)

    def _get_data(self, position: int) -> Any:
        return tuple(self._process_row(self._rows[self._order[position]]))

    def reset(self) -> None:
        """A new order (``rng.permutation(size)`` when ``shuffle``), then ``position = 0``."""
        if self._shuffle:
            self._order = list(self._rng.permutation(list(range(self._size))))
        self._generation += 1
        super().reset()


class CacheDataSource(DataSource):
    """nnabla's source over a folder of cache files (``data_iterator_cache``): not supported;
    the constructor raises ``NotImplementedError``."""

    def __init__(self, cachedir: str, *args: Any, **kwargs: Any) -> None:
        logger.debug(f"CacheDataSource({cachedir!r})")
        raise NotImplementedError(
            f"nnabla.utils.data_source_implements.CacheDataSource: cache folders are not "
            f"supported ({DOCS})"
        )

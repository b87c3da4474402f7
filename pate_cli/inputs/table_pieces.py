"""Tables our commands wrote (per-query, sweep), read in pieces of bounded rows or whole
(:func:`read_table`): floats read back exactly as written, only empty cells missing, a
per-query table's float columns float64 even when whole, one-line errors. After a piece with
text in a float column the rest is read untyped, so the caller's cell checks name the row. A
FIFO is read once, whole.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Generator
from typing import TYPE_CHECKING

from ..errors import InputError
from .readers import decode_text, read_text_file, unreadable
from .tables import (
    PER_QUERY,
    SUMMARY,
    first_line,
    is_summary,
    per_query_floats,
    summary_hint,
    table_source,
    text_options,
)

if TYPE_CHECKING:
    import pandas as pd

PIECE_ROWS = 1 << 17
_BLOCK = 1 << 20  # bytes read at a time when counting rows
_BLANK_LINE = re.compile(rb"\n(?=\r?\n)")


class TablePieces:
    """The table ``path`` (``expected`` names it in errors), checked to exist, be non-empty
    and have a table extension; CSV/TSV cells of ``text_columns`` stay text (``0.1.0``)."""

    def __init__(self, path: str, *, expected: str, text_columns=()):
        self.name = str(path)
        self.expected = expected
        self.text_columns = tuple(text_columns)
        # standard input or a FIFO cannot be read twice (count, pieces): held whole
        self.extension, data = table_source(self.name, expected)
        self._source = self.name if data is None else io.BytesIO(data)
        with self._open():  # unreadable (permission denied...): one line, here
            pass

    def count_rows(self, at_most: int | None = None) -> int:
        """The number of data rows (stopping once past ``at_most``): parquet's metadata, else
        the non-blank lines after the header (a multi-line quoted cell counts once per line)."""
        if self.extension == ".parquet":
            return int(self._parquet().metadata.num_rows)
        lines = blank = 0
        tail = b"\n"  # the last bytes read: a blank line may start in them
        with self._open() as handle:
            while at_most is None or lines - blank <= at_most + 1:
                block = handle.read(_BLOCK)
                if not block:
                    break
                lines += block.count(b"\n")
                joined = tail + block
                if b"\n\n" in joined or b"\n\r\n" in joined:  # rare: search only then
                    blank += (len(_BLANK_LINE.findall(joined))
                              - len(_BLANK_LINE.findall(tail)))  # those counted before
                tail = joined[-2:]
        lines += not tail.endswith(b"\n")  # a last line without its newline
        header = 0 if self.extension in (".json", ".jsonl") else 1
        return max(0, lines - blank - header)

    def pieces(self, rows: int = PIECE_ROWS) -> Generator[pd.DataFrame, None, None]:
        """The table's consecutive pieces of at most ``rows`` rows (the first empty if none)."""
        if self.extension == ".parquet":
            return self._parquet_pieces(rows)
        if self.extension in (".json", ".jsonl"):
            return self._json_pieces(rows)
        return self._text_pieces(rows)

    def _open(self):
        if isinstance(self._source, io.BytesIO):
            self._source.seek(0)
            return io.BytesIO(self._source.getbuffer())
        try:
            return open(self._source, "rb")  # noqa: SIM115 - the caller's with closes it
        except OSError as error:
            raise unreadable(self.name, error) from None

    def _source_for_pandas(self):
        if isinstance(self._source, io.BytesIO):
            self._source.seek(0)
        return self._source

    def _text_error(self, error: BaseException) -> InputError:
        """The one-line error of a text table pandas could not read: the encoding's, an empty
        text, else pandas' first line."""
        import pandas as pd
        if isinstance(error, UnicodeError):
            if isinstance(self._source, io.BytesIO):
                decode_text(self.name, self._source.getvalue())
            else:
                read_text_file(self._source)
        if isinstance(error, pd.errors.EmptyDataError) and not self._has_text():
            return InputError(f"{self.name}: the file is empty (expected {self.expected})")
        return InputError(f"{self.name}: not a valid table ({first_line(error)}); expected "
                          f"{self.expected}")

    def _has_text(self) -> bool:
        with self._open() as handle:
            while block := handle.read(_BLOCK):
                if block.strip():
                    return True
        return False

    def _text_pieces(self, rows: int) -> Generator[pd.DataFrame, None, None]:
        import pandas as pd
        options = {**text_options(self.extension), "encoding": "utf-8-sig"}
        try:
            header = pd.read_csv(self._source_for_pandas(), nrows=0, **options).columns
        except (UnicodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
            raise self._text_error(error) from None
        names = [str(column).strip() for column in header]
        self._check_last_row(len(names), options["sep"])
        texts = {column: str for column in self.text_columns}
        types = {**texts, **per_query_floats(header)} if self.expected == PER_QUERY else texts
        done = 0
        while True:  # once more, untyped, after a piece with text in a float column
            reader = pd.read_csv(
                self._source_for_pandas(), chunksize=rows, dtype=types or None,
                skiprows=(lambda line, done=done: 0 < line <= done) if done else None,
                **options)
            try:
                for piece in reader:
                    piece.columns = names
                    done += len(piece)
                    yield piece
                return
            except (UnicodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
                raise self._text_error(error) from None
            except (ValueError, TypeError) as error:
                if types == texts:
                    raise self._text_error(error) from None
                types = texts
            finally:
                reader.close()

    def _check_last_row(self, columns: int, sep: str) -> None:
        """A text table ends with a whole row: a line end (our commands end every row with
        one) and every column (pandas reads a short row's missing cells as empty). A table cut
        off by an interrupted write is refused, not read with its last cells lost or
        shortened (``3.4087`` read as ``3.``)."""
        with self._open() as handle:
            size = handle.seek(0, io.SEEK_END)
            handle.seek(max(0, size - _BLOCK))
            tail = handle.read()
        lines = [line for line in tail.splitlines() if line.strip()]
        if len(lines) < 2:  # a header alone, or a line longer than the tail read
            return
        fields = next(csv.reader([lines[-1].decode("utf-8", errors="replace")],
                                 delimiter=sep))
        if len(fields) < columns or not tail.endswith(b"\n"):
            raise InputError(f"{self.name}: the last row " + (
                f"has {len(fields)} of the {columns} columns" if len(fields) < columns
                else "has no line end") + " (the file looks cut off); expected "
                f"{self.expected}")

    def _json_pieces(self, rows: int) -> Generator[pd.DataFrame, None, None]:
        import pandas as pd
        with self._open() as handle:
            first = b""
            while not first.strip():
                first = handle.readline()
                if not first:
                    raise InputError(f"{self.name}: the file is empty (expected "
                                     f"{self.expected})")
        if is_summary(first.decode("utf-8-sig", errors="replace")):
            raise self._summary_given()
        try:
            with pd.read_json(self._source_for_pandas(), lines=True, chunksize=rows,
                              dtype=False, precise_float=True,
                              encoding="utf-8-sig") as reader:
                yield from reader
        except UnicodeError as error:
            raise self._text_error(error) from None
        except ValueError:
            if self._whole_summary():
                raise self._summary_given() from None
            raise InputError(f"{self.name}: not JSON lines (one JSON object per line); "
                             f"expected {self.expected}") from None

    def _whole_summary(self) -> bool:
        """Whether the file is one JSON summary over several lines (read whole, only after
        it failed to parse as JSON lines)."""
        with self._open() as handle:
            return is_summary(handle.read().decode("utf-8-sig", errors="replace"))

    def _summary_given(self) -> InputError:
        return InputError(f"{self.name}: this is {SUMMARY}; expected {self.expected}"
                          + summary_hint(self.expected))

    def _parquet(self):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError(f"{self.name}: reading .parquet needs pyarrow "
                             "(pip install 'pate_cli[parquet]')") from None
        try:  # pre_buffer (pyarrow's default) keeps the chunks read: memory grows ~22 bytes a row
            return pq.ParquetFile(self._source_for_pandas(), pre_buffer=False)
        except Exception as error:  # noqa: BLE001 - pyarrow raises several types
            raise self._parquet_error(error) from None

    def _parquet_error(self, error: BaseException) -> InputError:
        return InputError(f"{self.name}: not a valid parquet file ({first_line(error)}); "
                          f"expected {self.expected}")

    def _parquet_pieces(self, rows: int) -> Generator[pd.DataFrame, None, None]:
        table = self._parquet()
        try:
            batches = table.iter_batches(batch_size=rows)
            empty = True
            for batch in batches:
                empty = False
                yield batch.to_pandas()
            if empty:
                yield table.schema_arrow.empty_table().to_pandas()
        except InputError:
            raise
        except Exception as error:  # noqa: BLE001 - pyarrow raises several types
            raise self._parquet_error(error) from None


def read_table(path, *, expected: str, allow_empty: bool = False,
               text_columns=()) -> pd.DataFrame:
    """Read a table written by one of our commands, whole: its :class:`TablePieces` joined.

    Args:
      path: the table (``.csv``, ``.tsv``, ``.json``/``.jsonl`` lines, ``.parquet``, ``-``).
      expected: what it should be (``tables.PER_QUERY``, ``tables.SWEEP``), named in errors.
      allow_empty: accept a header without rows (an interrupted sweep that finished nothing).
      text_columns: CSV/TSV columns whose cells stay text.

    Raises:
      InputError: an unreadable, empty or malformed file, or (without ``allow_empty``)
        one without rows.
    """
    import pandas as pd
    pieces = list(TablePieces(path, expected=expected, text_columns=text_columns).pieces())
    frame = pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else pieces[0]
    if frame.empty and not allow_empty:
        raise InputError(f"{path}: the table has no rows (expected {expected})")
    return frame

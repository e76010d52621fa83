"""Parquet through pyarrow: the typed columns of the FOCUS exports (written) and the flat
columns of an AWS Data Exports file (read).

pyarrow is a dependency of the package and a layer of its own in Lambda, carried only by
the functions that import this module (docs/parquet.md). pyarrow converts, encodes and
compresses; this module holds what pyarrow leaves to its callers: a decimal is rounded to
its column's scale (half even, as the CSV cells are; pyarrow refuses the extra digits)
and must fit its precision, a timestamp must say its time zone (pyarrow would take a
naive one for UTC), a text is a ``str`` (pyarrow takes bytes too). Every refusal, pyarrow's
own included, is a ``ParquetError`` that names the column.

What it writes: row groups of pyarrow's default size (a day's file is one), Snappy pages,
pyarrow's dictionary encoding and statistics,
Parquet logical types STRING, DECIMAL(precision, scale) (16-byte fixed-length for precision
38, as Arrow's decimal128), BOOLEAN and TIMESTAMP(MICROS, isAdjustedToUTC=true); the
caller's key-value metadata and no Arrow schema entry (the Parquet types say it all). The
same rows give the same bytes with the same pyarrow (the pin: ``pyproject.toml``).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation, localcontext
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

Kind = Literal["string", "decimal", "boolean", "timestamp"]
MAX_PRECISION = 38  # DECIMAL in 16 bytes, as Arrow's decimal128
COMPRESSION = "snappy"


class ParquetError(ValueError):
    """A value does not fit its column, or a file cannot be read: one line that says which."""


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    nullable: bool = True
    precision: int = MAX_PRECISION  # decimal only
    scale: int = 10  # decimal only

    @property
    def arrow_type(self) -> pa.DataType:
        if self.kind == "decimal":
            return pa.decimal128(self.precision, self.scale)
        if self.kind == "timestamp":
            return pa.timestamp("us", tz="UTC")
        return pa.bool_() if self.kind == "boolean" else pa.string()


def _decimals(column: Column, values: list[Any]) -> list[Decimal | None]:
    """Each value rounded to the column's scale (a null stays one); refused if it is no
    decimal or too big. One decimal context for the column: room for any value that
    passes the range check (``2 * MAX_PRECISION`` digits)."""
    quantum = Decimal(1).scaleb(-column.scale)
    whole_digits = column.precision - column.scale  # a value's digits left of the point
    out: list[Decimal | None] = []
    with localcontext() as context:
        context.prec = 2 * MAX_PRECISION
        for value in values:
            if value is None:
                out.append(None)
                continue
            number = value if type(value) is Decimal else _as_decimal(column, value)
            if not number.is_finite():
                raise ParquetError(f"{column.name}: {value!r} is not a finite decimal")
            if number and number.adjusted() >= whole_digits:
                raise _too_big(column, value)
            rounded = number.quantize(quantum, rounding=ROUND_HALF_EVEN)
            if rounded and rounded.adjusted() >= whole_digits:  # rounded up past the precision
                raise _too_big(column, value)
            out.append(rounded)
    return out


def _as_decimal(column: Column, value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, Decimal | int | str):
        raise ParquetError(f"{column.name}: {value!r} is not a decimal")
    try:
        return Decimal(value)
    except InvalidOperation as exc:
        raise ParquetError(f"{column.name}: {value!r} is not a decimal") from exc


def _too_big(column: Column, value: Any) -> ParquetError:
    return ParquetError(
        f"{column.name}: {value} does not fit DECIMAL({column.precision},{column.scale})"
    )


def _timestamp(column: Column, value: Any) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ParquetError(f"{column.name}: {value!r} is not a timezone-aware datetime")
    return value.astimezone(UTC)


_NULL = type(None)


def _array(column: Column, values: list[Any]) -> pa.Array:
    kinds = set(map(type, values))  # once per column, not a test per value
    if not column.nullable and _NULL in kinds:
        raise ParquetError(f"{column.name}: a null in a column that allows none")
    if column.kind == "decimal":
        values = _decimals(column, values)
    elif column.kind == "timestamp":
        values = [None if v is None else _timestamp(column, v) for v in values]
    elif column.kind == "string" and not kinds <= {str, _NULL}:
        wrong = next((v for v in values if not isinstance(v, str | None)), None)
        if wrong is not None:  # else only texts of a kind of str
            raise ParquetError(f"{column.name}: {wrong!r} is not a string")
    try:
        return pa.array(values, type=column.arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # e.g. a boolean column's 1
        raise ParquetError(f"{column.name}: {_one_line(exc)}") from exc


def write_parquet(
    columns: Sequence[Column],
    rows: Sequence[Mapping[str, Any]],
    *,
    metadata: Mapping[str, str] | None = None,
) -> bytes:
    """One Parquet file of ``rows`` (mappings by column name; a missing key is a null)."""
    values = {c.name: [row.get(c.name) for row in rows] for c in columns}
    return write_parquet_columns(columns, values, metadata=metadata)


def write_parquet_columns(
    columns: Sequence[Column],
    values: Mapping[str, Sequence[Any]],
    *,
    metadata: Mapping[str, str] | None = None,
) -> bytes:
    """``write_parquet`` of the rows these values (by column name, one list per column
    and of the same length) make."""
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ParquetError("column names must be unique")
    schema = pa.schema([pa.field(c.name, c.arrow_type, nullable=c.nullable) for c in columns])
    arrays = [_array(c, list(values[c.name])) for c in columns]
    out = io.BytesIO()
    # No Arrow schema entry in the footer, so the caller's metadata is added on its own.
    with pq.ParquetWriter(out, schema, compression=COMPRESSION, store_schema=False) as writer:
        writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
        if metadata:
            writer.add_key_value_metadata(dict(sorted(metadata.items())))
    return out.getvalue()


def read_columns(data: bytes, wanted: Sequence[str], *, source: str) -> list[dict[str, Any]]:
    """The rows of the Parquet file ``data`` (named ``source`` in errors), each a dict of
    the ``wanted`` top-level columns the file has (a column it lacks is left out; other
    columns, nested ones such as CUR 2.0's tag maps included, are never decoded).
    Timestamps come as ``datetime`` at microseconds (INT96 and nanosecond ones too),
    decimals as ``Decimal``, doubles as ``float``."""
    try:
        # Closed before it goes: pyarrow 20 aborts the interpreter at exit otherwise.
        with pq.ParquetFile(pa.BufferReader(data)) as file:
            present = [n for n in wanted if n in file.schema_arrow.names]
            table = file.read(columns=present, use_threads=False)
        arrays = [_micros(table.column(n)) for n in present]
        values = [array.to_pylist() for array in arrays]
    except (pa.ArrowException, OSError, ValueError) as exc:  # corrupt, truncated, not Parquet
        raise ParquetError(f"{source}: not a readable Parquet file ({_one_line(exc)})") from exc
    if not present:
        return [{} for _ in range(table.num_rows)]
    return [dict(zip(present, row, strict=True)) for row in zip(*values, strict=True)]


def _micros(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A nanosecond timestamp at microseconds: ``datetime`` holds no finer."""
    kind = column.type
    if pa.types.is_timestamp(kind) and kind.unit == "ns":
        return column.cast(pa.timestamp("us", tz=kind.tz), safe=False)
    return column


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__

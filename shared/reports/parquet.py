"""A small pure-Python Parquet writer: what the FOCUS export needs, and no more.

Why not pyarrow: it is about 100 MB unpacked, more than Lambda's 250 MB layer budget
leaves comfortable beside the rest, and its import costs hundreds of milliseconds of cold
start. A daily FOCUS file holds hundreds or thousands of rows, so a writer in the standard
library is fast enough and keeps every function lean (pyarrow reads the files back in the
tests only).

What it writes (Apache Parquet format 2, readable by pyarrow, polars, DuckDB, Athena):
one row group, one PLAIN-encoded data page (v1) per column, definition levels (RLE) for
nullable columns, no dictionary, no statistics, uncompressed or GZIP (stdlib ``zlib``).
Logical types: STRING (UTF-8 byte arrays), DECIMAL(precision, scale) as fixed-length
two's-complement big-endian bytes, DOUBLE, BOOLEAN, INT64, and TIMESTAMP(MICROS,
isAdjustedToUTC=true). The same rows give the same bytes (no time, host or version inside).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from functools import cache
from typing import Any, Literal

Kind = Literal["string", "decimal", "double", "boolean", "int64", "timestamp"]
Compression = Literal["none", "gzip"]
MAGIC = b"PAR1"
MAX_PRECISION = 38  # DECIMAL in 16 bytes, as Arrow's decimal128
CREATED_BY = "costtracker parquet writer"

# parquet.thrift enums
_BOOLEAN, _INT64, _DOUBLE, _BYTE_ARRAY, _FIXED = 0, 2, 5, 6, 7
_REQUIRED, _OPTIONAL = 0, 1
_UTF8, _DECIMAL, _TIMESTAMP_MICROS = 0, 5, 10
_PLAIN, _RLE = 0, 3
_CODECS = {"none": 0, "gzip": 2}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class ParquetError(ValueError):
    """A value does not fit its column."""


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    nullable: bool = True
    precision: int = MAX_PRECISION  # decimal only
    scale: int = 10  # decimal only

    @property
    def byte_width(self) -> int:
        """Bytes a DECIMAL(precision) needs as two's complement."""
        return _byte_width(self.precision)


@cache
def _byte_width(precision: int) -> int:
    """Worked out once per precision: every decimal cell of an export asks for it."""
    width = 1
    while 2 ** (8 * width - 1) < 10**precision:
        width += 1
    return width


# ---------------------------------------------------------------- Thrift compact protocol
_T_TRUE, _T_FALSE, _T_I32, _T_I64, _T_BINARY, _T_LIST, _T_STRUCT = 1, 2, 5, 6, 8, 9, 12


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


class _Struct:
    """Fields of one Thrift struct, written in ascending id order."""

    def __init__(self) -> None:
        self._out = bytearray()
        self._last = 0

    def _header(self, field_id: int, kind: int) -> None:
        delta = field_id - self._last
        if 0 < delta <= 15:
            self._out.append((delta << 4) | kind)
        else:
            self._out.append(kind)
            self._out += _varint(_zigzag(field_id))
        self._last = field_id

    def i32(self, field_id: int, value: int) -> _Struct:
        self._header(field_id, _T_I32)
        self._out += _varint(_zigzag(value))
        return self

    def i64(self, field_id: int, value: int) -> _Struct:
        self._header(field_id, _T_I64)
        self._out += _varint(_zigzag(value))
        return self

    def boolean(self, field_id: int, value: bool) -> _Struct:
        self._header(field_id, _T_TRUE if value else _T_FALSE)
        return self

    def binary(self, field_id: int, value: bytes | str) -> _Struct:
        data = value.encode() if isinstance(value, str) else value
        self._header(field_id, _T_BINARY)
        self._out += _varint(len(data)) + data
        return self

    def struct(self, field_id: int, value: _Struct) -> _Struct:
        self._header(field_id, _T_STRUCT)
        self._out += value.bytes()
        return self

    def struct_list(self, field_id: int, values: Sequence[_Struct]) -> _Struct:
        self._list_header(field_id, _T_STRUCT, len(values))
        for value in values:
            self._out += value.bytes()
        return self

    def i32_list(self, field_id: int, values: Sequence[int]) -> _Struct:
        self._list_header(field_id, _T_I32, len(values))
        for value in values:
            self._out += _varint(_zigzag(value))
        return self

    def binary_list(self, field_id: int, values: Sequence[str]) -> _Struct:
        self._list_header(field_id, _T_BINARY, len(values))
        for value in values:
            data = value.encode()
            self._out += _varint(len(data)) + data
        return self

    def _list_header(self, field_id: int, kind: int, size: int) -> None:
        self._header(field_id, _T_LIST)
        if size < 15:
            self._out.append((size << 4) | kind)
        else:
            self._out.append(0xF0 | kind)
            self._out += _varint(size)

    def bytes(self) -> bytes:
        return bytes(self._out) + b"\x00"  # field stop


# ------------------------------------------------------------------------- value encoding
def _decimal_bytes(column: Column, value: Any) -> bytes:
    if not isinstance(value, Decimal | int | str):
        raise ParquetError(f"{column.name}: {value!r} is not a decimal")
    number = Decimal(value)
    if not number.is_finite():
        raise ParquetError(f"{column.name}: {value!r} is not a finite decimal")
    too_big = ParquetError(
        f"{column.name}: {value} does not fit DECIMAL({column.precision},{column.scale})"
    )
    if number and number.adjusted() + column.scale >= column.precision:
        raise too_big
    with localcontext() as context:
        context.prec = 2 * MAX_PRECISION  # room for any value, then the range check
        unscaled = int(number.scaleb(column.scale).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
    if abs(unscaled) >= 10**column.precision:
        raise too_big
    return unscaled.to_bytes(column.byte_width, "big", signed=True)


def _timestamp_micros(column: Column, value: Any) -> int:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ParquetError(f"{column.name}: {value!r} is not a timezone-aware datetime")
    delta = value.astimezone(UTC) - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _plain(column: Column, values: Sequence[Any]) -> bytes:
    """PLAIN encoding of the non-null values."""
    out = bytearray()
    if column.kind == "string":
        for value in values:
            if not isinstance(value, str):
                raise ParquetError(f"{column.name}: {value!r} is not a string")
            data = value.encode("utf-8")
            out += struct.pack("<i", len(data)) + data
    elif column.kind == "decimal":
        for value in values:
            out += _decimal_bytes(column, value)
    elif column.kind == "double":
        for value in values:
            if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
                raise ParquetError(f"{column.name}: {value!r} is not a number")
            out += struct.pack("<d", float(value))
    elif column.kind == "int64":
        for value in values:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParquetError(f"{column.name}: {value!r} is not an integer")
            out += struct.pack("<q", value)
    elif column.kind == "timestamp":
        for value in values:
            out += struct.pack("<q", _timestamp_micros(column, value))
    elif column.kind == "boolean":
        bits = 0
        for n, value in enumerate(values):
            if not isinstance(value, bool):
                raise ParquetError(f"{column.name}: {value!r} is not a boolean")
            bits |= int(value) << n
        out += bits.to_bytes((len(values) + 7) // 8, "little")
    return bytes(out)


def _definition_levels(present: Sequence[bool]) -> bytes:
    """RLE runs of 1 (value) and 0 (null), bit width 1, with the v1 page's length prefix."""
    runs = bytearray()
    n = 0
    while n < len(present):
        value = present[n]
        length = 1
        while n + length < len(present) and present[n + length] == value:
            length += 1
        runs += _varint(length << 1) + bytes([int(value)])
        n += length
    return struct.pack("<i", len(runs)) + bytes(runs)


# --------------------------------------------------------------------------------- schema
def _schema_element(column: Column) -> _Struct:
    element = _Struct().i32(1, _physical_type(column))
    if column.kind == "decimal":
        element.i32(2, column.byte_width)
    element.i32(3, _OPTIONAL if column.nullable else _REQUIRED)
    element.binary(4, column.name)
    logical = _Struct()
    if column.kind == "string":
        element.i32(6, _UTF8)
        logical.struct(1, _Struct())  # STRING
    elif column.kind == "decimal":
        element.i32(6, _DECIMAL).i32(7, column.scale).i32(8, column.precision)
        logical.struct(5, _Struct().i32(1, column.scale).i32(2, column.precision))
    elif column.kind == "timestamp":
        element.i32(6, _TIMESTAMP_MICROS)
        unit = _Struct().struct(2, _Struct())  # MICROS
        logical.struct(8, _Struct().boolean(1, True).struct(2, unit))  # isAdjustedToUTC
    else:
        return element
    return element.struct(10, logical)


def _column_chunk(
    column: Column, rows: Sequence[Mapping[str, Any]], offset: int, compression: Compression
) -> tuple[bytes, _Struct, int]:
    """The column's page (header + body) and its ColumnChunk metadata."""
    values = [row.get(column.name) for row in rows]
    present = [value is not None for value in values]
    if not column.nullable and not all(present):
        raise ParquetError(f"{column.name}: a null in a column that allows none")
    body = _plain(column, [value for value in values if value is not None])
    if column.nullable:
        body = _definition_levels(present) + body
    stored = body if compression == "none" else _gzip(body)
    page_header = (
        _Struct()
        .i32(1, 0)  # DATA_PAGE
        .i32(2, len(body))
        .i32(3, len(stored))
        .struct(5, _Struct().i32(1, len(rows)).i32(2, _PLAIN).i32(3, _RLE).i32(4, _RLE))
        .bytes()
    )
    page = page_header + stored
    meta = (
        _Struct()
        .i32(1, _physical_type(column))
        .i32_list(2, [_PLAIN, _RLE])
        .binary_list(3, [column.name])
        .i32(4, _CODECS[compression])
        .i64(5, len(rows))
        .i64(6, len(page_header) + len(body))
        .i64(7, len(page))
        .i64(9, offset)
    )
    chunk = _Struct().i64(2, offset).struct(3, meta)
    return page, chunk, len(page_header) + len(body)


def _physical_type(column: Column) -> int:
    return {
        "string": _BYTE_ARRAY,
        "decimal": _FIXED,
        "double": _DOUBLE,
        "boolean": _BOOLEAN,
        "int64": _INT64,
        "timestamp": _INT64,
    }[column.kind]


def _gzip(data: bytes) -> bytes:
    """GZIP framing with a zero mtime and no file name: the same bytes on every run."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


def write_parquet(
    columns: Sequence[Column],
    rows: Sequence[Mapping[str, Any]],
    *,
    compression: Compression = "none",
    metadata: Mapping[str, str] | None = None,
) -> bytes:
    """One Parquet file of ``rows`` (mappings by column name; a missing key is a null)."""
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ParquetError("column names must be unique")
    out = bytearray(MAGIC)
    chunks: list[_Struct] = []
    total = 0
    if rows:
        for column in columns:
            page, chunk, size = _column_chunk(column, rows, len(out), compression)
            out += page
            chunks.append(chunk)
            total += size
    root = _Struct().binary(4, "schema").i32(5, len(columns))
    file_meta = (
        _Struct()
        .i32(1, 2)
        .struct_list(2, [root, *(_schema_element(c) for c in columns)])
        .i64(3, len(rows))
        .struct_list(
            4,
            [_Struct().struct_list(1, chunks).i64(2, total).i64(3, len(rows))] if rows else [],
        )
    )
    if metadata:
        file_meta.struct_list(
            5, [_Struct().binary(1, k).binary(2, v) for k, v in sorted(metadata.items())]
        )
    file_meta.binary(6, CREATED_BY)
    footer = file_meta.bytes()
    out += footer + struct.pack("<i", len(footer)) + MAGIC
    return bytes(out)

"""A minimal Parquet reader in the standard library: the flat columns a reconciliation
needs from an AWS Data Exports file, without pyarrow (which no function carries).

Reads: top-level primitive columns (nested ones, such as CUR 2.0's ``resource_tags`` map,
are skipped: they are never decoded), data pages v1 and v2, PLAIN and dictionary
encodings (what Arrow and Spark write by default), RLE definition levels, uncompressed,
GZIP or Snappy pages (Snappy decoded here). Types: BOOLEAN, INT32/INT64 (DATE,
TIMESTAMP, DECIMAL), INT96 timestamps, FLOAT/DOUBLE, strings and DECIMAL bytes. Anything
else (ZSTD, delta encodings) is a ``ParquetReadError`` naming it.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TIME_UNIT = {1: 1_000, 2: 1, 3: 0.001}  # logical TIMESTAMP unit -> microseconds per unit


class ParquetReadError(ValueError):
    """A file (or part of one) this reader cannot read: one line that says why."""


# ------------------------------------------------------------- Thrift compact protocol
class _Thrift:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def byte(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, kind: int) -> Any:
        if kind in (1, 2):
            return kind == 1
        if kind == 3:
            return struct.unpack("b", bytes([self.byte()]))[0]
        if kind in (4, 5, 6):
            return self.zigzag()
        if kind == 7:
            self.pos += 8
            return struct.unpack_from("<d", self.data, self.pos - 8)[0]
        if kind == 8:
            n = self.varint()
            self.pos += n
            return self.data[self.pos - n : self.pos]
        if kind in (9, 10):
            header = self.byte()
            size, elem = header >> 4, header & 0x0F
            if size == 15:
                size = self.varint()
            if elem in (1, 2):
                return [self.byte() == 1 for _ in range(size)]
            return [self.value(elem) for _ in range(size)]
        if kind == 11:
            size = self.varint()
            types = self.byte() if size else 0
            return {self.value(types >> 4): self.value(types & 0x0F) for _ in range(size)}
        if kind == 12:
            return self.struct()
        raise ParquetReadError(f"unknown Thrift type {kind} in the file's metadata")

    def struct(self) -> dict[int, Any]:
        fields: dict[int, Any] = {}
        last = 0
        while True:
            header = self.byte()
            if header == 0:
                return fields
            delta, kind = header >> 4, header & 0x0F
            last = last + delta if delta else self.zigzag()
            fields[last] = self.value(kind)


# ------------------------------------------------------------------------- decoding
def snappy_decompress(data: bytes) -> bytes:
    """Raw Snappy (as Parquet pages use it, no framing)."""
    t = _Thrift(data)
    size = t.varint()
    out = bytearray()
    pos = t.pos
    while pos < len(data):
        tag = data[pos]
        pos += 1
        if tag & 3 == 0:
            length = (tag >> 2) + 1
            if length > 60:
                extra = length - 60
                length = int.from_bytes(data[pos : pos + extra], "little") + 1
                pos += extra
            out += data[pos : pos + length]
            pos += length
            continue
        if tag & 3 == 1:
            length, offset = ((tag >> 2) & 7) + 4, ((tag >> 5) << 8) | data[pos]
            pos += 1
        else:
            width = 2 if tag & 3 == 2 else 4
            length, offset = (tag >> 2) + 1, int.from_bytes(data[pos : pos + width], "little")
            pos += width
        if not 0 < offset <= len(out):
            raise ParquetReadError("corrupt Snappy page")
        start = len(out) - offset
        for i in range(length):  # a copy may overlap what it writes
            out.append(out[start + i])
    if len(out) != size:
        raise ParquetReadError("corrupt Snappy page (wrong length)")
    return bytes(out)


def _decompress(codec: int, data: bytes) -> bytes:
    if codec == 0:
        return data
    if codec == 1:
        return snappy_decompress(data)
    if codec == 2:
        return zlib.decompress(data, 31)
    names = {3: "LZO", 4: "BROTLI", 5: "LZ4", 6: "ZSTD", 7: "LZ4_RAW"}
    raise ParquetReadError(f"{names.get(codec, codec)} compression is not supported")


def _hybrid(data: bytes, pos: int, end: int, width: int, count: int) -> list[int]:
    """The RLE / bit-packed hybrid encoding: ``count`` values of ``width`` bits."""
    out: list[int] = []
    t = _Thrift(data, pos)
    mask = (1 << width) - 1
    while len(out) < count and t.pos < end:
        header = t.varint()
        if header & 1:
            groups = header >> 1
            n = groups * width
            chunk = int.from_bytes(data[t.pos : t.pos + n], "little")
            t.pos += n
            out += [(chunk >> (i * width)) & mask for i in range(groups * 8)]
        else:
            n = (width + 7) // 8
            value = int.from_bytes(data[t.pos : t.pos + n], "little")
            t.pos += n
            out += [value] * (header >> 1)
    return out[:count]


def _plain(data: bytes, pos: int, physical: int, count: int, type_length: int) -> list[Any]:
    if physical == 0:
        return [bool((data[pos + i // 8] >> (i % 8)) & 1) for i in range(count)]
    fixed = {1: ("<i", 4), 2: ("<q", 8), 4: ("<f", 4), 5: ("<d", 8)}
    if physical in fixed:
        fmt, size = fixed[physical]
        return [v[0] for v in struct.iter_unpack(fmt, data[pos : pos + size * count])]
    if physical == 3:
        return [data[pos + 12 * i : pos + 12 * i + 12] for i in range(count)]
    if physical == 7:
        return [data[pos + type_length * i : pos + type_length * (i + 1)] for i in range(count)]
    out = []
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        out.append(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return out


def _logical(element: dict[int, Any], value: Any) -> Any:
    """A physical value as its logical type (string, date, timestamp, decimal)."""
    converted, logical = element.get(6), element.get(10) or {}
    if 5 in logical or converted == 5:
        scale = logical.get(5, {}).get(1, element.get(7, 0))
        raw = value if isinstance(value, int) else int.from_bytes(value, "big", signed=True)
        return Decimal(raw).scaleb(-scale)
    if 6 in logical or converted == 6:
        return date(1970, 1, 1) + timedelta(days=value)
    if isinstance(value, bytes) and element.get(1) == 3:  # INT96: nanos of day, Julian day
        nanos, julian = struct.unpack("<qi", value)
        return _EPOCH + timedelta(days=julian - 2_440_588, microseconds=nanos // 1000)
    if 8 in logical or converted in (9, 10):
        unit = (
            next(iter(logical[8].get(2, {1: {}}))) if 8 in logical else (1 if converted == 9 else 2)
        )
        return _EPOCH + timedelta(microseconds=value * _TIME_UNIT[unit])
    if isinstance(value, bytes) and element.get(1) == 6:
        return (
            value.decode("utf-8", "replace") if (1 in logical or converted in (0, None)) else value
        )
    return value


# ---------------------------------------------------------------------------- reading
def _metadata(data: bytes) -> dict[int, Any]:
    if len(data) < 12 or data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        raise ParquetReadError("not a Parquet file (no PAR1 magic)")
    (length,) = struct.unpack_from("<I", data, len(data) - 8)
    try:
        return _Thrift(data, len(data) - 8 - length).struct()
    except (IndexError, struct.error) as exc:
        raise ParquetReadError("not a Parquet file (unreadable footer)") from exc


def _column(data: bytes, meta: dict[int, Any], element: dict[int, Any]) -> list[Any]:
    physical, codec, total = meta[1], meta[4], meta[5]
    optional = element.get(3, 0) == 1
    dictionary: list[Any] = []
    pos = meta.get(11) or meta[9]
    pos = min(pos, meta[9])
    values: list[Any] = []
    while len(values) < total:
        t = _Thrift(data, pos)
        header = t.struct()
        body = data[t.pos : t.pos + header[3]]
        pos = t.pos + header[3]
        page_type = header[1]
        if page_type == 2:  # dictionary page
            raw = _decompress(codec, body)
            dictionary = _plain(raw, 0, physical, header[7][1], element.get(2, 0))
            continue
        if page_type == 0:
            page = _decompress(codec, body)
            n, encoding = header[5][1], header[5][2]
            start = 0
            levels = [1] * n
            if optional:
                (size,) = struct.unpack_from("<I", page, 0)
                levels = _hybrid(page, 4, 4 + size, 1, n)
                start = 4 + size
        elif page_type == 3:
            v2 = header[8]
            n, encoding, def_len, rep_len = v2[1], v2[4], v2[5], v2[6]
            levels = _hybrid(body, rep_len, rep_len + def_len, 1, n) if optional else [1] * n
            rest = body[rep_len + def_len :]
            page = _decompress(codec, rest) if v2.get(7, True) else rest
            start = 0
        else:
            continue  # an index page
        present = sum(levels)
        if encoding == 0:
            found = _plain(page, start, physical, present, element.get(2, 0))
        elif encoding in (2, 8):
            width = page[start]
            found = [dictionary[i] for i in _hybrid(page, start + 1, len(page), width, present)]
        elif encoding == 3 and physical == 0:  # RLE booleans (data page v2)
            (size,) = struct.unpack_from("<I", page, start)
            found = [bool(b) for b in _hybrid(page, start + 4, start + 4 + size, 1, present)]
        else:
            raise ParquetReadError(f"column {element[4].decode()}: encoding {encoding} unsupported")
        it = iter(found)
        values += [next(it) if level else None for level in levels]
    return [None if v is None else _logical(element, v) for v in values]


def read_columns(data: bytes, wanted: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of a Parquet file, each a dict of the ``wanted`` top-level columns the
    file has (a column it lacks is left out)."""
    meta = _metadata(data)
    schema = meta[2]
    top: dict[str, dict[int, Any]] = {}
    i = 1
    while i < len(schema):  # schema[0] is the root; skip each nested column whole
        element, skip = schema[i], 1
        stack = element.get(5, 0)
        while stack:
            stack += schema[i + skip].get(5, 0) - 1
            skip += 1
        if not element.get(5) and element.get(3, 0) != 2:
            top[element[4].decode()] = element
        i += skip
    names = [n for n in wanted if n in top]
    rows: list[dict[str, Any]] = []
    try:
        for group in meta.get(4, []):
            columns: dict[str, list[Any]] = {}
            for chunk in group[1]:
                path = [p.decode() for p in chunk[3][3]]
                if len(path) == 1 and path[0] in names:
                    columns[path[0]] = _column(data, chunk[3], top[path[0]])
            rows += [{n: columns[n][r] for n in names if n in columns} for r in range(group[3])]
    except (IndexError, KeyError, struct.error, zlib.error) as exc:
        raise ParquetReadError(f"a corrupt or unsupported Parquet file ({exc!r})") from exc
    return rows

"""Opening source files: transparent gzip, and decoding or decompression failures explained, not a traceback."""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

from medlink.terminology.diagnostics import SourceError

_GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == _GZIP_MAGIC


def open_binary(path: Path | str) -> IO[bytes]:
    """Open a file for reading bytes, decompressing gzip whatever the file's name says."""
    path = Path(path)
    if not path.exists():
        raise SourceError(path, "file not found")
    if path.is_dir():
        raise SourceError(path, "is a folder, expected a file")
    if is_gzip(path):
        return cast(IO[bytes], gzip.open(path, "rb"))
    if path.suffix == ".gz":
        raise SourceError(path, "name ends in .gz but the file is not gzip-compressed; rename it or recompress it")
    return open(path, "rb")


MAX_LINE_BYTES = 16 << 20  # no terminology or corpus line comes near; a longer one is damage, or a bomb


def iter_lines(path: Path | str, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line without its line ending)``; line numbers start at 1. A line over
    :data:`MAX_LINE_BYTES` is an error naming it, found without reading past the limit."""
    path = Path(path)
    number = 0
    try:
        with open_binary(path) as raw:
            while data := raw.readline(MAX_LINE_BYTES + 1):
                number += 1
                if len(data) > MAX_LINE_BYTES:
                    raise SourceError(path, f"a line over {MAX_LINE_BYTES:,} bytes: not a line of text", number)
                yield number, decode_line(path, number, data, encoding).rstrip("\r\n")
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:
        raise SourceError(path, f"compressed data is corrupt or truncated after line {number} ({error})") from None


def decode_line(path: Path, number: int, data: bytes, encoding: str) -> str:
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        raise SourceError(
            path,
            f"not valid {encoding} (byte 0x{data[error.start]:02x} at column {error.start + 1}); "
            "convert the file to UTF-8 or pass the encoding it uses",
            number,
        ) from None
    return text.lstrip("\ufeff") if number == 1 else text


def open_text(path: Path | str, encoding: str = "utf-8") -> io.TextIOBase:
    """A whole-file text stream for parsers that need one (CSV, XML); decoding errors surface as SourceError."""
    return io.TextIOWrapper(open_binary(path), encoding=encoding, errors="strict", newline="")

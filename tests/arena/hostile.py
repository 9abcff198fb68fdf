"""Hypothesis strategies for hostile input: names, texts, uploads (zips with escaping paths,
links, bombs, lying headers, broken bytes), and any protobuf message built field by field from
its descriptor (so a field added later is fuzzed too)."""

from __future__ import annotations

import functools
import io
import stat
import struct
import warnings
import zipfile
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

from tests.arena.helpers import bot_source

GOOD_BOT = bot_source("fuzz")

SPECIAL_TEXT = [
    "", " ", "a", "alice", "bob", "admin", "main", "tacobot", "alice/tacobot", "alice/tacobot@1",
    "main.1.0123456789abcdef", "A", "Alice", "a" * 40, "a" * 41, "x" * 5000, "-a", "_a",
    "a b", "a\tb", "a\nb", "a\rb", "a\x00b", "\x00", "\x1b[31mred", "\u202eevil", "İ", "ı",
    "ａｌｉｃｅ", "alice\u200b", "über", "日本", "🐈", "a/b", "a\\b", "../x", "../../etc/passwd",
    "/etc/passwd", "C:\\x", "c:x", "{main}", "main}", "user:x", "*", "?", "[a]", "%s%n",
    "{0}", "'; DROP TABLE x; --", "tct_" + "a" * 43, "Bearer x", "NaN", "-1", "0",
]
"""Strings that broke something somewhere once: separators, control characters, unicode
look-alikes, Redis key syntax, very long ones."""

hostile_text = st.one_of(st.sampled_from(SPECIAL_TEXT), st.text(max_size=60),
                         st.from_regex(r"[a-z0-9][a-z0-9_-]{0,39}", fullmatch=True))
# A few huge ones, rarely: 100 kB of text (the arena caps what it echoes back).
huge_text = st.sampled_from(["a" * 100_000, "é" * 50_000, "/" * 70_000])


# ------------------------------------------------------------------ zips


@dataclass(frozen=True)
class Entry:
    name: str
    data: bytes
    link: bool = False
    encrypted: bool = False


UNSAFE_NAMES = ["/bot.py", "/etc/passwd", "../bot.py", "a/../../bot.py", "..", "a/..",
                "C:/bot.py", "c:bot.py", "a\\..\\bot.py", "\\bot.py", "bot.py\x00.txt", "",
                "./../x"]
SAFE_NAMES = ["bot.py", "lib/helper.py", "data/table.txt", "lib/", "./bot.py", "README",
              "deep/" * 10 + "x.py", "ünïcode.txt", "x" * 200 + ".txt", "bot.PY"]

contents = st.one_of(
    st.just(GOOD_BOT), st.just(b"X = 1\n"), st.just(b""),
    st.just(b"def broken(:\n"), st.just(b"\xff\xfe\x00not utf-8"),
    st.just(b"print('hi')\x00"), st.just(b"(" * 500 + b")" * 500),  # deep nesting
    st.just(b"#!/bin/sh\nrm -rf /\n"), st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
)
entries = st.builds(
    Entry,
    name=st.one_of(st.sampled_from(SAFE_NAMES), st.sampled_from(UNSAFE_NAMES),
                   st.text(max_size=30)),
    data=contents,
    link=st.sampled_from([False, False, False, True]),
    encrypted=st.sampled_from([False, False, False, True]),
)


def build_zip(items: list[Entry], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", compression) as archive:
        warnings.simplefilter("ignore")  # duplicate names are on purpose
        for item in items:
            info = zipfile.ZipInfo(item.name or "x")
            info.filename = item.name  # ZipInfo normalises; keep the hostile name as given
            info.compress_type = compression
            if item.link:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, item.data)
    data = buffer.getvalue()
    encrypted = {item.name.encode() for item in items if item.encrypted}
    return _flag_encrypted(data, encrypted) if encrypted else data


def _flag_encrypted(data: bytes, names: set[bytes]) -> bytes:
    """Set the "encrypted" bit of the named entries (zipfile cannot write encrypted zips)."""
    out = bytearray(data)
    at = out.find(b"PK\x01\x02")
    while at != -1:
        name_length = struct.unpack_from("<H", out, at + 28)[0]
        if bytes(out[at + 46:at + 46 + name_length]) in names:
            out[at + 8] |= 0x1
            local = struct.unpack_from("<I", out, at + 42)[0]
            out[local + 6] |= 0x1
        at = out.find(b"PK\x01\x02", at + 46)
    return bytes(out)


@functools.cache
def zip_bomb(size: int = 9 * 1024 * 1024, *, lie: bool) -> bytes:
    """``bot.py`` plus a file of ``size`` zeros (a few kB compressed); with ``lie``, its local
    and central headers claim it is 10 bytes."""
    data = build_zip([Entry("bot.py", GOOD_BOT), Entry("zeros.bin", bytes(size))])
    if not lie:
        return data
    # Rewrite the uncompressed size (central directory and local header) to 10 bytes.
    out = bytearray(data)
    for signature, offset in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):
        at = out.rfind(signature)
        struct.pack_into("<I", out, at + offset, 10)
    return bytes(out)


def mutate(data: bytes, flips: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for position, value in flips:
        if out:
            out[position % len(out)] = value
    return bytes(out)


@st.composite
def uploads(draw: st.DrawFn) -> tuple[str, bytes]:
    """A ``(filename, bytes)`` upload, mostly hostile."""
    kind = draw(st.sampled_from(["zip", "zip", "zip", "py", "bomb", "mutated", "raw", "many"]))
    name = draw(st.sampled_from(["bot.zip", "BOT.ZIP", "x.py", "bot.py", "a/b/../bot.zip",
                                 "noext", "bot.py.zip", "bot.zip.py", "", "\x00.py"]))
    if kind == "zip":
        items = draw(st.lists(entries, max_size=6))
        if draw(st.booleans()):
            items.append(Entry("bot.py", draw(contents)))
        data = build_zip(items, compression=draw(st.sampled_from(
            [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])))
        return (name if name.endswith((".zip", ".ZIP")) else "bot.zip"), data
    if kind == "py":
        return (name if name.endswith(".py") else "bot.py"), draw(contents)
    if kind == "bomb":
        return "bomb.zip", zip_bomb(lie=draw(st.booleans()))
    if kind == "many":
        return "many.zip", build_zip([Entry("bot.py", GOOD_BOT)] + [
            Entry(f"f{i}.txt", b"") for i in range(draw(st.integers(190, 260)))])
    if kind == "mutated":
        base = build_zip([Entry("bot.py", GOOD_BOT), Entry("lib/helper.py", b"X = 1\n")])
        flips = draw(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)),
                              min_size=1, max_size=8))
        return "bot.zip", mutate(base, flips)
    return name, draw(st.binary(max_size=300))


# ------------------------------------------------------------------ protobuf messages

_INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1), FieldDescriptor.TYPE_SINT32:
    (-(2**31), 2**31 - 1), FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1), FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1), FieldDescriptor.TYPE_SINT64:
    (-(2**63), 2**63 - 1), FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1), FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}


def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    edges = [v for v in (low, high, 0, 1, 2, 3, 10, 20, 1000, -1) if low <= v <= high]
    return st.one_of(st.sampled_from(edges), st.integers(low, high),
                     st.integers(max(low, -50), min(high, 50)))


def _scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind in _INT_RANGES:
        return _integers(*_INT_RANGES[kind])
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.one_of(st.sampled_from([0.0, -0.0, 0.5, 1.0, 600.0, 601.0, -1.0, 1e308,
                                          float("inf"), float("-inf"), float("nan")]),
                         st.floats(allow_nan=True, width=32 if kind ==
                                   FieldDescriptor.TYPE_FLOAT else 64))
    if kind == FieldDescriptor.TYPE_STRING:
        return st.one_of(hostile_text, hostile_text, hostile_text, huge_text)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.one_of(st.binary(max_size=100), uploads().map(lambda u: u[1]))
    if kind == FieldDescriptor.TYPE_ENUM:
        values = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(values), st.integers(-5, 50))
    raise AssertionError(f"no strategy for field type {kind}")


@st.composite
def messages(draw: st.DrawFn, descriptor: Descriptor, cls: type[Message] | None = None,
             depth: int = 0) -> Message:
    """A message of ``descriptor``'s type with random (mostly hostile) values in a random
    subset of its fields."""
    from google.protobuf import message_factory  # noqa: PLC0415

    msg = (cls or message_factory.GetMessageClass(descriptor))()
    for field in descriptor.fields:
        if not draw(st.booleans()):
            continue
        _fill(draw, msg, field, depth)
    return msg


def _fill(draw: st.DrawFn, msg: Message, field: FieldDescriptor, depth: int) -> None:
    target: Any = getattr(msg, field.name)
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        key_field, value_field = field.message_type.fields_by_name["key"], \
            field.message_type.fields_by_name["value"]
        for _ in range(draw(st.integers(0, 4 if depth < 2 else 0))):
            key = draw(_scalar(key_field))
            if value_field.message_type is None:
                target[key] = draw(_scalar(value_field))
        return
    if field.is_repeated:
        for _ in range(draw(st.integers(0, 8 if depth < 2 else 0))):
            if field.message_type is not None:
                target.add().CopyFrom(draw(messages(field.message_type, depth=depth + 1)))
            else:
                target.append(draw(_scalar(field)))
        return
    if field.message_type is not None:
        if depth < 3:
            target.CopyFrom(draw(messages(field.message_type, depth=depth + 1)))
        return
    setattr(msg, field.name, draw(_scalar(field)))

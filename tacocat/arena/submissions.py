"""Checking an uploaded bot before it is stored: a ``.py`` file, or a zip with ``bot.py`` or
with a ``bot.toml`` (a bot in another language, :mod:`tacocat.protocol.manifest`).

What is checked here is what can be checked without running the code: the size of the
upload, that a zip is safe to unpack (no absolute paths, no ``..``, no links, a bounded
unpacked size and file count, so a zip bomb cannot fill a disk), that it has ``bot.py`` or a
valid ``bot.toml`` at its root, and that every Python file is UTF-8 and compiles. Whether
the bot actually builds and plays is the smoke game's job, run by the worker in the
sandbox (see ``BotVersion.status``).

:func:`unpack` writes a validated upload into a directory for the sandbox, re-checking every
path, so a worker never trusts the stored bytes blindly.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from tacocat.protocol.manifest import MANIFEST, ManifestError, parse_manifest

from .errors import InvalidArgument, SubmissionRejected

BOT_FILE: Final = "bot.py"
_ZIP_MAGIC: Final = (b"PK\x03\x04", b"PK\x05\x06")
_CHUNK: Final = 64 * 1024
_BROKEN: Final = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError,
                  NotImplementedError, OSError, RuntimeError, zlib.error, lzma.LZMAError,
                  struct.error)
"""What zipfile and its decompressors raise on damaged or hostile bytes (a corrupt deflate
stream is ``zlib.error``, bzip2 ``OSError``, an encrypted entry ``RuntimeError``, a cut
header ``struct.error``): every one means "not a readable zip"."""


@dataclass(frozen=True)
class SubmissionLimits:
    """Bounds on an upload. The defaults suit a bot with a small data file or two."""

    max_upload_bytes: int = 1024 * 1024
    """Largest upload (the .py file or the zip itself)."""
    max_unpacked_bytes: int = 8 * 1024 * 1024
    """Largest total size of a zip's files once unpacked."""
    max_files: int = 200
    """Most entries (files and folders) in a zip."""

    def __post_init__(self) -> None:
        for name in ("max_upload_bytes", "max_unpacked_bytes", "max_files"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidArgument(f"SubmissionLimits.{name} must be >= 1, got {value!r}")


DEFAULT_LIMITS: Final = SubmissionLimits()


@dataclass(frozen=True)
class Submission:
    """A validated upload. ``files`` lists the files it unpacks to (``("bot.py",)`` for a
    single file); ``unpacked_size`` is their total size."""

    filename: str
    kind: str
    data: bytes
    sha256: str
    files: tuple[str, ...]
    unpacked_size: int

    @property
    def size(self) -> int:
        return len(self.data)


def validate_submission(
    filename: str, data: bytes, limits: SubmissionLimits = DEFAULT_LIMITS
) -> Submission:
    """Check an upload and describe it; raise :class:`SubmissionRejected` naming the rule.

    ``filename`` decides the kind: ``*.py`` is a single bot file, ``*.zip`` an archive with
    ``bot.py`` at its root (case-insensitive extension; any folders are dropped from it).
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidArgument(f"the upload must be bytes, got {type(data).__name__}")
    data = bytes(data)
    base = _basename(filename)
    if len(data) > limits.max_upload_bytes:
        raise SubmissionRejected(
            "too_large",
            f"{base} is {len(data):,} bytes, more than the server accepts; keep a submission "
            f"under {limits.max_upload_bytes // 1024} KiB (zip it, drop data files)",
        )
    if not data:
        raise SubmissionRejected("empty", f"{base} is empty; upload your bot's source")
    digest = hashlib.sha256(data).hexdigest()
    lowered = base.lower()
    if lowered.endswith(".py"):
        if data.startswith(_ZIP_MAGIC):
            raise SubmissionRejected(
                "not_utf8", f"{base} is a zip archive, not Python source; name it .zip"
            )
        _check_python(BOT_FILE, data, shown=base)
        return Submission(base, "py", data, digest, (BOT_FILE,), len(data))
    if lowered.endswith(".zip"):
        files, unpacked = _check_zip(base, data, limits)
        return Submission(base, "zip", data, digest, files, unpacked)
    raise SubmissionRejected(
        "bad_name",
        f"{base!r} is neither a .py file nor a .zip archive; upload bot.py, or a zip with "
        "bot.py (or a bot.toml, for another language) at its root",
    )


def unpack(kind: str, data: bytes, dest: Path, limits: SubmissionLimits = DEFAULT_LIMITS) -> Path:
    """Write a stored upload into the existing directory ``dest``; returns ``dest/bot.py``.

    Paths are re-checked and sizes re-bounded while writing, so even bytes that bypassed
    :func:`validate_submission` cannot escape ``dest`` or fill the disk.
    """
    if kind == "py":
        target = dest / BOT_FILE
        target.write_bytes(data)
        return target
    if kind != "zip":
        raise InvalidArgument(f"unknown submission kind {kind!r}; expected 'py' or 'zip'")
    _check_zip("the stored zip", data, limits)
    root = dest.resolve()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            parts = _safe_parts(info.filename)
            target = root.joinpath(*parts)
            if not target.resolve().is_relative_to(root):
                raise SubmissionRejected("unsafe_path", f"{info.filename!r} escapes {dest}")
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_read_bounded(archive, info, limits.max_unpacked_bytes, limits))
    return root / BOT_FILE


# -- checks ------------------------------------------------------------------------------------


def _basename(filename: str) -> str:
    if not isinstance(filename, str) or not filename.strip():
        raise SubmissionRejected("bad_name", "the upload needs a file name ending in .py or .zip")
    base = filename.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].strip()
    if not base or "\x00" in base or len(base) > 255:
        raise SubmissionRejected("bad_name", f"file name {filename!r} is not usable")
    return base


def _check_python(name: str, data: bytes, *, shown: str) -> str:
    try:
        # utf-8-sig: a byte-order mark is legal at the start of Python source.
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SubmissionRejected(
            "not_utf8",
            f"{shown} is not UTF-8 text (byte {exc.start}: {exc.reason}); save it as UTF-8",
        ) from None
    try:
        # Compiling never runs the code; it is the cheapest complete syntax check.
        compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise SubmissionRejected(
            "syntax_error", f"{shown}, line {exc.lineno}: {exc.msg}; it must be valid Python"
        ) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        # ValueError: NUL bytes (before 3.12); the others: absurdly deep nesting.
        raise SubmissionRejected(
            "syntax_error", f"{shown} does not compile as Python: {exc}"
        ) from None
    return source


def _check_zip(base: str, data: bytes, limits: SubmissionLimits) -> tuple[tuple[str, ...], int]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _BROKEN as exc:
        raise SubmissionRejected("not_zip", f"{base} is not a readable zip archive: {exc}") \
            from None
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.max_files:
            raise SubmissionRejected(
                "too_many_files",
                f"{base} has {len(infos)} entries; the limit is {limits.max_files}",
            )
        seen: set[str] = set()
        files: list[str] = []
        declared = 0
        for info in infos:
            parts = _safe_parts(info.filename)
            normal = "/".join(parts)
            if normal.lower() in seen:
                raise SubmissionRejected(
                    "unsafe_path", f"{base} holds {normal!r} twice; each path may appear once"
                )
            seen.add(normal.lower())
            if info.flag_bits & 0x1:
                raise SubmissionRejected(
                    "encrypted", f"{normal!r} in {base} is encrypted; upload a plain zip"
                )
            # Unix file type bits, when the zip has them (0: a plain entry from any tool).
            kind = stat.S_IFMT(info.external_attr >> 16)
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise SubmissionRejected(
                    "unsafe_path",
                    f"{normal!r} in {base} is a link or special file; only plain files and "
                    "folders are allowed",
                )
            if not info.is_dir():
                files.append(normal)
                declared += info.file_size
        # The declared sizes can lie; this refuses an honest bomb early, and the bounded
        # reads below catch a dishonest one.
        if declared > limits.max_unpacked_bytes:
            raise SubmissionRejected(
                "zip_bomb",
                f"{base} unpacks to {declared} bytes; the limit is "
                f"{limits.max_unpacked_bytes} bytes",
            )
        if BOT_FILE not in files and MANIFEST not in files:
            found = [f for f in files if f.rsplit("/", 1)[-1] in (BOT_FILE, MANIFEST)]
            hint = f" (found {found[0]!r}: zip the folder's contents, not the folder)" \
                if found else ""
            raise SubmissionRejected("no_bot_py", f"{base} has neither {BOT_FILE} nor "
                                     f"{MANIFEST} (a bot in another language) at its "
                                     f"root{hint}")
        budget = limits.max_unpacked_bytes
        manifest_text = b""
        for info in infos:
            if info.is_dir():
                continue
            content = _read_bounded(archive, info, budget, limits, shown=base)
            budget -= len(content)
            if info.filename.endswith(".py"):
                _check_python(info.filename, content, shown=f"{info.filename} in {base}")
            if "/".join(_safe_parts(info.filename)) == MANIFEST:
                manifest_text = content
    if manifest_text:
        _check_manifest(base, manifest_text, files)
    return tuple(files), limits.max_unpacked_bytes - budget


def _check_manifest(base: str, data: bytes, files: list[str]) -> None:
    """A zip's ``bot.toml`` must parse, and name files the zip has (a Python bot's
    ``bot.py``; a program of its own when nothing builds it)."""
    try:
        manifest = parse_manifest(data.decode("utf-8"), f"{MANIFEST} in {base}")
    except UnicodeDecodeError as exc:
        raise SubmissionRejected("bad_manifest", f"{MANIFEST} in {base} is not UTF-8 text "
                                 f"(byte {exc.start}); save it as UTF-8") from None
    except ManifestError as exc:
        raise SubmissionRejected("bad_manifest", str(exc)) from None
    if manifest.is_python and BOT_FILE not in files:
        raise SubmissionRejected("no_bot_py", f"{base}: {MANIFEST} says Python, and a Python "
                                 f"bot needs {BOT_FILE} at the root")
    program = manifest.command[0] if manifest.command else ""
    if program.startswith("./") and not manifest.build and program[2:] not in files:
        raise SubmissionRejected("bad_manifest", f"{base}: {MANIFEST}'s command runs "
                                 f"{program!r}, which the zip does not hold and no build "
                                 "step makes")


def _safe_parts(name: str) -> list[str]:
    """The path components of a zip entry, refusing anything that could escape a folder."""
    if not name or "\x00" in name or "\\" in name:
        raise SubmissionRejected(
            "unsafe_path", f"zip entry {name!r} has an empty name, a NUL or a backslash"
        )
    path = PurePosixPath(name)
    if path.is_absolute():
        raise SubmissionRejected("unsafe_path", f"zip entry {name!r} is an absolute path")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts or ".." in parts or ":" in parts[0]:
        raise SubmissionRejected(
            "unsafe_path", f"zip entry {name!r} points outside the archive's folder"
        )
    return parts


def _read_bounded(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    budget: int,
    limits: SubmissionLimits,
    *,
    shown: str = "the zip",
) -> bytes:
    """The entry's bytes, refusing to decompress more than ``budget`` of them."""
    chunks: list[bytes] = []
    total = 0
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(_CHUNK):
                total += len(chunk)
                if total > budget:
                    raise SubmissionRejected(
                        "zip_bomb",
                        f"{shown} unpacks to more than {limits.max_unpacked_bytes} bytes (at "
                        f"{info.filename!r}); the declared sizes understate it, or the "
                        "files are too large",
                    )
                chunks.append(chunk)
    except SubmissionRejected:
        raise
    except _BROKEN as exc:
        raise SubmissionRejected(
            "not_zip", f"{info.filename!r} in {shown} cannot be read: {exc}"
        ) from None
    return b"".join(chunks)

"""Upload validation (size, zip safety, UTF-8, syntax) and the version lifecycle."""

from __future__ import annotations

import hashlib
import io
import stat
import zipfile
from pathlib import Path

import pytest
import redis as redis_py

from tacocat.arena import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    SubmissionLimits,
    SubmissionRejected,
    VersionStatus,
    unpack,
    validate_submission,
)

from .helpers import bot_source, make_field

GOOD = bot_source("good")


def make_zip(files: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def rejected(filename: str, data: bytes, limits: SubmissionLimits | None = None) -> str:
    with pytest.raises(SubmissionRejected) as info:
        validate_submission(filename, data, limits or SubmissionLimits())
    return info.value.problem


def test_a_single_file_is_accepted() -> None:
    found = validate_submission("my_bot.py", GOOD)
    assert (found.kind, found.files, found.filename) == ("py", ("bot.py",), "my_bot.py")
    assert found.sha256 == hashlib.sha256(GOOD).hexdigest()
    assert validate_submission("C:\\Users\\me\\BOT.PY", GOOD).filename == "BOT.PY"
    assert validate_submission("bom.py", b"\xef\xbb\xbf" + GOOD).kind == "py"


def test_a_zip_with_bot_py_and_helpers_is_accepted() -> None:
    data = make_zip({"bot.py": GOOD, "lib/": b"", "lib/helper.py": b"X = 1\n",
                     "weights.bin": bytes(range(256))})
    found = validate_submission("bot.zip", data)
    assert found.kind == "zip"
    assert set(found.files) == {"bot.py", "lib/helper.py", "weights.bin"}
    assert found.unpacked_size == len(GOOD) + 6 + 256


def test_oversized_upload_is_refused() -> None:
    limits = SubmissionLimits(max_upload_bytes=100)
    assert rejected("bot.py", b"#" * 101 + b"\n", limits) == "too_large"
    assert rejected("bot.py", b"") == "empty"


def test_zip_bomb_is_refused_by_declared_size() -> None:
    bomb = make_zip({"bot.py": GOOD, "zeros.bin": bytes(20 * 1024 * 1024)})
    assert len(bomb) < 100_000  # tiny upload, huge payload
    assert rejected("bot.zip", bomb) == "zip_bomb"


def test_zip_bomb_with_lying_sizes_is_refused_while_reading() -> None:
    bomb = bytearray(make_zip({"bot.py": GOOD, "zeros.bin": bytes(4 * 1024 * 1024)}))
    # Rewrite every declared uncompressed size of zeros.bin (local header and central
    # directory) to 10 bytes: the declared-size check passes, the bounded read must not.
    real = (4 * 1024 * 1024).to_bytes(4, "little")
    assert bomb.count(real) == 2
    bomb = bytearray(bytes(bomb).replace(real, (10).to_bytes(4, "little")))
    problem = rejected("bot.zip", bytes(bomb), SubmissionLimits(max_unpacked_bytes=1024 * 1024))
    assert problem in ("zip_bomb", "not_zip")


@pytest.mark.parametrize("name", ["/etc/passwd", "../evil.py", "lib/../../evil.py",
                                  "C:/evil.py", "lib\\evil.py"])
def test_escaping_paths_are_refused(name: str) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", GOOD)
        archive.writestr(zipfile.ZipInfo(name), b"x = 1\n")
    assert rejected("bot.zip", buffer.getvalue()) == "unsafe_path"


def test_symlinks_and_encrypted_entries_are_refused() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", GOOD)
        link = zipfile.ZipInfo("data")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    assert rejected("bot.zip", buffer.getvalue()) == "unsafe_path"
    # Set the "encrypted" flag bit in the local header and the central directory entry.
    data = bytearray(make_zip({"bot.py": GOOD}, compression=zipfile.ZIP_STORED))
    central = data.index(b"PK\x01\x02")
    data[6] |= 0x1
    data[central + 8] |= 0x1
    assert rejected("bot.zip", bytes(data)) == "encrypted"


def test_zip_needs_bot_py_at_its_root() -> None:
    assert rejected("bot.zip", make_zip({"main.py": GOOD})) == "no_bot_py"
    with pytest.raises(SubmissionRejected, match="zip the folder's contents"):
        validate_submission("bot.zip", make_zip({"mybot/bot.py": GOOD}))


def test_too_many_files_and_duplicates_are_refused() -> None:
    files = {"bot.py": GOOD} | {f"f{i}.txt": b"x" for i in range(10)}
    assert rejected("bot.zip", make_zip(files), SubmissionLimits(max_files=5)) == \
        "too_many_files"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, pytest.warns(UserWarning):
        archive.writestr("bot.py", GOOD)
        archive.writestr("bot.py", GOOD)
    assert rejected("bot.zip", buffer.getvalue()) == "unsafe_path"


def test_non_utf8_and_non_python_are_refused() -> None:
    assert rejected("bot.py", "x = 'caf\u00e9'\n".encode("latin-1")) == "not_utf8"
    assert rejected("bot.py", b"def broken(:\n") == "syntax_error"
    assert rejected("bot.py", b"x = 1\x00\n") == "syntax_error"
    assert rejected("bot.zip", make_zip({"bot.py": GOOD, "util.py": b"\xff\xfe"})) == "not_utf8"
    assert rejected("bot.zip", make_zip({"bot.py": b"class (\n"})) == "syntax_error"
    with pytest.raises(SubmissionRejected, match="line 1"):
        validate_submission("bot.py", b"def broken(:\n")


def test_wrong_kinds_are_refused() -> None:
    assert rejected("bot.zip", GOOD) == "not_zip"
    assert rejected("bot.txt", GOOD) == "bad_name"
    assert rejected("", GOOD) == "bad_name"
    assert rejected("bot.py", make_zip({"bot.py": GOOD})) == "not_utf8"


def test_unpack_writes_files_inside_the_folder(tmp_path: Path) -> None:
    data = make_zip({"bot.py": GOOD, "lib/helper.py": b"X = 1\n"})
    assert unpack("zip", data, tmp_path) == tmp_path.resolve() / "bot.py"
    assert (tmp_path / "lib" / "helper.py").read_bytes() == b"X = 1\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.py", GOOD)
        archive.writestr(zipfile.ZipInfo("../escape.py"), b"x = 1\n")
    with pytest.raises(SubmissionRejected):
        unpack("zip", buffer.getvalue(), tmp_path / "lib")
    assert not (tmp_path / "escape.py").exists()
    assert unpack("py", GOOD, tmp_path).read_bytes() == GOOD


def test_versions_are_numbered_stored_and_decided_once(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.users.create(field.admin, "alice")
    alice = arena.users.authenticate(arena.users.create_token(field.admin, "alice"))
    first = arena.bots.submit(alice, "tacobot", "bot.py", bot_source("1"))
    assert (first.id, first.number, first.status) == ("alice/tacobot@1", 1, VersionStatus.PENDING)
    assert first.sha256 == hashlib.sha256(bot_source("1")).hexdigest()
    assert arena.bots.source(first.id) == bot_source("1")
    with pytest.raises(AlreadyExists, match="identical to alice/tacobot@1"):
        arena.bots.submit(alice, "tacobot", "other_name.py", bot_source("1"))
    second = arena.bots.submit(alice, "alice/tacobot", "bot.zip",
                               make_zip({"bot.py": bot_source("2")}))
    assert second.number == 2 and second.kind == "zip"
    assert [v.id for v in arena.bots.pending()] == [first.id, second.id]
    assert arena.bots.get("alice/tacobot").current == 0

    rejected_version = arena.bots.reject(first.id, "crash: ImportError")
    assert rejected_version.status is VersionStatus.REJECTED
    assert rejected_version.reason == "crash: ImportError"
    assert arena.bots.reject(first.id, "again").status is VersionStatus.REJECTED  # no-op
    with pytest.raises(FailedPrecondition, match="already rejected"):
        arena.bots.activate(first.id)
    # A rejected upload may be submitted again, as a new version.
    assert arena.bots.submit(alice, "tacobot", "bot.py", bot_source("1")).number == 3

    assert arena.bots.activate(second.id).status is VersionStatus.ACTIVE
    assert arena.bots.activate(second.id).status is VersionStatus.ACTIVE  # a retried job
    assert arena.bots.get("alice/tacobot").current_version == "alice/tacobot@2"
    assert [v.number for v in arena.bots.versions("alice/tacobot")] == [1, 2, 3]
    assert [v.id for v in arena.bots.pending()] == ["alice/tacobot@3"]
    with pytest.raises(InvalidArgument, match="reason"):
        arena.bots.reject("alice/tacobot@3", " ")
    with pytest.raises(NotFound):
        arena.bots.activate("alice/tacobot@9")
    with pytest.raises(SubmissionRejected):
        arena.bots.submit(alice, "tacobot", "bot.py", b"def (:\n")
    assert [b.id for b in arena.bots.all("alice")] == ["alice/tacobot"]


def test_smoke_tests_are_handed_out_once(redis: redis_py.Redis) -> None:
    now = [1000.0]
    field = make_field(redis, clock=lambda: now[0])
    arena = field.arena
    arena.users.create(field.admin, "alice")
    alice = arena.users.authenticate(arena.users.create_token(field.admin, "alice"))
    version = arena.bots.submit(alice, "tacobot", "bot.py", bot_source("1"))
    assert arena.bots.due_smoke_tests(retry_after=60) == [version.id]
    assert arena.bots.due_smoke_tests(retry_after=60) == []
    now[0] += 61
    assert arena.bots.due_smoke_tests(retry_after=60) == [version.id]  # the job was lost
    arena.bots.activate(version.id)
    now[0] += 61
    assert arena.bots.due_smoke_tests(retry_after=60) == []

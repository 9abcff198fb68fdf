"""Hostile uploads, fuzzed: whatever bytes arrive, validation either accepts a safe bot or
refuses with a known rule and a message that names the file, and unpacking never writes
outside its folder or more than the limits, even for bytes that skipped validation."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tacocat.arena import SubmissionLimits, SubmissionRejected, unpack, validate_submission
from tacocat.arena.submissions import BOT_FILE

from .hostile import (
    GOOD_BOT,
    UNSAFE_NAMES,
    Entry,
    build_zip,
    entries,
    uploads,
    zip_bomb,
)

PROBLEMS = {"too_large", "bad_name", "empty", "not_zip", "unsafe_path", "zip_bomb",
            "too_many_files", "no_bot_py", "encrypted", "not_utf8", "syntax_error"}
LIMITS = SubmissionLimits()
FUZZ = settings(max_examples=250, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def check_accepted_or_refused(filename: str, data: bytes) -> SubmissionRejected | None:
    """Validate; on acceptance check the result is safe, on refusal that it says why."""
    try:
        found = validate_submission(filename, data, LIMITS)
    except SubmissionRejected as exc:
        assert exc.problem in PROBLEMS, exc.problem
        message = str(exc)
        assert message and len(message) < 2000
        return exc
    assert found.kind in ("py", "zip")
    assert BOT_FILE in found.files
    assert len(found.files) <= LIMITS.max_files
    assert found.unpacked_size <= LIMITS.max_unpacked_bytes
    assert found.size <= LIMITS.max_upload_bytes
    for path in found.files:
        parts = path.split("/")
        assert ".." not in parts and not path.startswith("/") and "\\" not in path, path
        assert "\x00" not in path and ":" not in parts[0], path
    return None


def check_unpack(kind: str, data: bytes, accepted: bool) -> None:
    """Unpack into a fresh folder inside an empty parent: nothing may land outside it."""
    with tempfile.TemporaryDirectory() as parent:
        dest = Path(parent) / "bot"
        dest.mkdir()
        try:
            bot = unpack(kind, data, dest, LIMITS)
        except SubmissionRejected as exc:
            assert not accepted, f"validated, then refused by unpack: {exc}"
        else:
            assert bot == dest.resolve() / BOT_FILE and bot.is_file()
        assert os.listdir(parent) == ["bot"]
        total = 0
        for root, dirs, files in os.walk(dest):
            for name in [*dirs, *files]:
                path = Path(root) / name
                assert not path.is_symlink(), path
                assert path.resolve().is_relative_to(dest.resolve()), path
            total += sum((Path(root) / f).stat().st_size for f in files)
        assert total <= LIMITS.max_unpacked_bytes


@FUZZ
@given(uploads())
@example(("bomb.zip", zip_bomb(lie=False)))
@example(("bomb.zip", zip_bomb(lie=True)))
@example(("bot.py", b"\xff\xfe not utf-8"))
@example(("bot.py", b"<html>not python</html>"))
@example(("bot.py", b"x" * (LIMITS.max_upload_bytes + 1)))
def test_any_upload_is_accepted_safely_or_refused_with_a_rule(upload: tuple[str, bytes]) -> None:
    filename, data = upload
    refusal = check_accepted_or_refused(filename, data)
    if refusal is None and filename.lower().endswith(".zip"):
        check_unpack("zip", data, accepted=True)


@FUZZ
@given(st.lists(entries, min_size=1, max_size=6))
def test_hostile_zip_entries_are_refused_for_what_they_are(items: list[Entry]) -> None:
    data = build_zip([Entry(BOT_FILE, GOOD_BOT), *items])
    refusal = check_accepted_or_refused("bot.zip", data)
    unsafe = [i for i in items if i.name in UNSAFE_NAMES or i.link or i.encrypted]
    if unsafe:
        assert refusal is not None, f"accepted an archive holding {unsafe[0]}"
        assert refusal.problem in {"unsafe_path", "encrypted", "not_zip"}, refusal
    # The worker re-checks what it unpacks, whatever validation said.
    check_unpack("zip", data, accepted=refusal is None)


@FUZZ
@given(st.binary(max_size=2000), st.sampled_from(["bot.py", "bot.zip"]))
def test_random_bytes_never_escape_or_crash(data: bytes, filename: str) -> None:
    refusal = check_accepted_or_refused(filename, data)
    if filename.endswith(".zip"):
        check_unpack("zip", data, accepted=refusal is None)


@pytest.mark.parametrize(("name", "words"), [
    ("/etc/passwd", "is an absolute path"),
    ("../bot.py", "points outside the archive's folder"),
    ("a/../../x", "points outside the archive's folder"),
    ("C:/x.py", "points outside the archive's folder"),
    ("a\\..\\x", "has an empty name, a NUL or a backslash"),
])
def test_escaping_entries_are_named_in_the_refusal(name: str, words: str) -> None:
    data = build_zip([Entry(BOT_FILE, GOOD_BOT), Entry(name, b"x")])
    refusal = check_accepted_or_refused("evil.zip", data)
    assert refusal is not None and refusal.problem == "unsafe_path"
    assert repr(name) in str(refusal) and words in str(refusal)


def test_a_symlink_is_refused_by_name() -> None:
    data = build_zip([Entry(BOT_FILE, GOOD_BOT), Entry("link", b"/etc/shadow", link=True)])
    refusal = check_accepted_or_refused("bot.zip", data)
    assert refusal is not None and refusal.problem == "unsafe_path"
    assert "'link' in bot.zip is a link or special file" in str(refusal)

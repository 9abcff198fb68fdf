"""Bots in JavaScript and C through the arena's jobs: built once per version in the sandbox,
smoke-tested, played in a match; bad builds and bad manifests refused with clear reasons,
nothing stored half-done. Real Redis, real bwrap, real node and cc."""

from __future__ import annotations

import io
import struct
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
import redis as redis_py

from tacocat.arena import MatchStatus, SubmissionRejected
from tacocat.cli._newbot import write_starter
from tacocat.protocol.manifest import load_manifest
from tacocat.worker import JobContext, Launcher, WorkerSettings, run_match, run_smoke_test
from tacocat.worker.build import BuildFailedError, BuildLimits, build_bot

from .worker_helpers import SANDBOX, good_bot, make_field

pytestmark = pytest.mark.timeout(120)

SETTINGS = WorkerSettings(smoke_decision_seconds=0.5, lease=3, sandbox=SANDBOX)
CONTEXT = JobContext(SETTINGS, Launcher(SETTINGS.sandbox_policy(), sandbox=SANDBOX), "test")


def starter_zip(tmp_path: Path, language: str, **replace: str) -> bytes:
    """The ``language`` starter as a zip, its files' text changed by ``replace``
    (file name -> new text)."""
    files = write_starter("mybot", language, tmp_path)
    for name, text in replace.items():
        (tmp_path / "mybot" / name).write_text(text)
    return zip_of({p.name: p.read_bytes() for p in files} | {
        n: t.encode() for n, t in replace.items()})


def zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_javascript_and_c_bots_are_built_once_smoke_tested_and_play_a_match(
        redis: redis_py.Redis, tmp_path: Path) -> None:
    field = make_field(redis)
    arena = field.arena
    user = field.user("ann")
    js = arena.bots.submit(user, "js", "js.zip", starter_zip(tmp_path / "js", "javascript")).id
    c = arena.bots.submit(user, "c", "c.zip", starter_zip(tmp_path / "c", "c")).id
    for version in (js, c):
        report = run_smoke_test(arena, version, CONTEXT)
        assert report.outcome == "activated", report.reason
    assert arena.bots.build(js) is None  # nothing to build
    built = arena.bots.build(c)
    assert built is not None and b"./bot" in built  # the tar holds the binary
    assert arena.bots.build_log(user, c) == b""  # cc said nothing
    with pytest.raises(Exception, match="owner"):
        arena.bots.build_log(field.user("bob"), c)
    arena.ladders.create(field.admin, "main", games_per_pairing=8, games_per_match=8)
    field.join("ann", "js", "main")
    field.join("ann", "c", "main")
    arena.matches.schedule("main", lambda match_id: None)
    [match] = arena.matches.of_ladder("main")
    report = run_match(arena, None, match.id, CONTEXT)
    assert report.outcome == "recorded" and report.games == 8, report
    assert not report.forfeits["a"] and not report.forfeits["b"], report.forfeits
    assert arena.matches.get(match.id).status is MatchStatus.RECORDED
    board = arena.ladders.leaderboard("main")
    rated = {s.version: s for s in board.standings}
    assert set(rated) == {js, c}
    assert all(s.rating is not None and s.games == 8 for s in rated.values()), rated


def test_a_failed_build_rejects_the_version_and_keeps_only_its_log(
        redis: redis_py.Redis, tmp_path: Path) -> None:
    field = make_field(redis)
    user = field.user("ann")
    broken = starter_zip(tmp_path, "c", **{"bot.c": "int main(void) { return nope; }\n"})
    version = field.arena.bots.submit(user, "c", "c.zip", broken).id
    report = run_smoke_test(field.arena, version, CONTEXT)
    assert report.outcome == "rejected"
    assert "the build failed: exit code 1" in report.reason
    assert "nope" not in report.reason  # the compiler's words are the owner's only
    assert f"tacocat bot build-log {version}" in report.reason
    assert b"nope" in field.arena.bots.build_log(user, version)
    assert field.arena.bots.build(version) is None


def test_a_binary_for_another_machine_is_refused_by_name(
        redis: redis_py.Redis) -> None:
    field = make_field(redis)
    # An ELF header for aarch64 (e_machine 183), little-endian, 64-bit.
    elf = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<HH", 2, 183) + bytes(44)
    upload = zip_of({"bot.toml": b'command = ["./bot"]\n', "bot": elf})
    version = field.arena.bots.submit(field.user("ann"), "arm", "arm.zip", upload).id
    report = run_smoke_test(field.arena, version, CONTEXT)
    assert report.outcome == "rejected"
    assert "./bot is a binary for aarch64" in report.reason
    assert "build step" in report.reason


@pytest.mark.parametrize(("manifest", "error"), [
    (b'language = "cobol"\n', "unknown language 'cobol'; known: python, javascript, c"),
    (b'language = "c"\ncommand = "./bot"\n', "command must be a list of strings"),
    (b'command = ["/usr/bin/env", "python"]\n', "name a program on the system's PATH"),
    (b'command = ["./missing"]\n', "which the zip does not hold"),
    (b'language = "c"\nbiuld = []\n', "unknown field 'biuld'"),
    (b'language = \n', "not valid TOML"),
])
def test_a_bad_manifest_is_refused_at_upload(redis: redis_py.Redis, manifest: bytes,
                                             error: str) -> None:
    field = make_field(redis)
    with pytest.raises(SubmissionRejected, match=error.replace("(", r"\(")) as caught:
        field.arena.bots.submit(field.user("ann"), "b", "b.zip",
                                zip_of({"bot.toml": manifest, "bot.c": b"int main;"}))
    assert caught.value.problem == "bad_manifest"
    assert not field.arena.bots.all()  # nothing stored


def test_a_zip_with_neither_bot_py_nor_a_manifest_says_both(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    with pytest.raises(SubmissionRejected, match=r"neither bot\.py nor bot\.toml"):
        field.arena.bots.submit(field.user("ann"), "b", "b.zip", zip_of({"bot.js": b"1"}))
    # ... and a Python upload is what it was.
    assert field.submit("ann", "py", good_bot("py"))


def _c_folder(tmp_path: Path, build: str) -> Path:
    write_starter("slow", "c", tmp_path)
    folder = tmp_path / "slow"
    (folder / "bot.toml").write_text(f'language = "c"\nbuild = {build}\n')
    for path in (folder, *folder.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def test_a_build_that_runs_forever_is_stopped_at_its_time_limit(tmp_path: Path) -> None:
    folder = _c_folder(tmp_path, '["sh", "-c", "while :; do :; done"]')
    with pytest.raises(BuildFailedError, match=r"took more than 2 s") as caught:
        build_bot(CONTEXT.launcher, folder, load_manifest(folder),
                  limits=BuildLimits(seconds=2))
    assert "while" not in caught.value.reason  # the manifest's words stay the owner's
    assert not (folder / "bot").exists()


def test_the_workers_build_limit_rejects_a_version_whose_build_runs_on(
        redis: redis_py.Redis, tmp_path: Path) -> None:
    """An operator's ``tacocat worker --build-seconds 2`` reaches the smoke test's build."""
    settings = replace(SETTINGS, build_seconds=2)
    context = JobContext(settings, CONTEXT.launcher, "test")
    field = make_field(redis)
    slow = starter_zip(tmp_path, "c", **{"bot.toml": 'language = "c"\n'
                                                     'build = ["sh", "-c", "sleep 30"]\n'})
    version = field.arena.bots.submit(field.user("ann"), "c", "c.zip", slow).id
    report = run_smoke_test(field.arena, version, context)
    assert report.outcome == "rejected"
    assert report.reason.startswith("the build took more than 2 s"), report.reason


def test_a_build_that_prints_without_end_is_stopped(tmp_path: Path) -> None:
    folder = _c_folder(tmp_path, '["yes", "spam"]')
    with pytest.raises(BuildFailedError, match=r"printed more than 65,536 bytes") as caught:
        build_bot(CONTEXT.launcher, folder, load_manifest(folder),
                  limits=BuildLimits(seconds=30, log_bytes=64 * 1024))
    assert caught.value.log.startswith(b"spam\nspam\n")
    assert len(caught.value.log) < 70 * 1024  # the owner's copy is capped too


def test_a_build_that_makes_too_much_is_stopped(tmp_path: Path) -> None:
    folder = _c_folder(tmp_path, '["sh", "-c", "head -c 3000000 /dev/zero > big"]')
    limits = BuildLimits(seconds=30, folder_bytes=1 << 20)
    with pytest.raises(BuildFailedError) as caught:
        build_bot(CONTEXT.launcher, folder, load_manifest(folder), limits=limits)
    # The tmpfs is full (the build fails) or the tar is over the cap: refused either way.
    assert "exit code" in caught.value.reason or "made more than" in caught.value.reason
    assert not (folder / "big").exists()


def test_the_build_sees_the_toolchain_and_no_host_files(tmp_path: Path) -> None:
    if not SANDBOX:
        pytest.fail("the sandbox is needed here: ./dev setup installs it")
    folder = _c_folder(tmp_path, '["sh", "-c", "ls /etc > seen; command -v cc >> seen"]')
    build_bot(CONTEXT.launcher, folder, load_manifest(folder))
    seen = (folder / "seen").read_text().split()
    assert "passwd" not in seen and "ld.so.cache" in seen, seen
    assert any(line.endswith("/cc") for line in seen), seen

"""bot.toml, the one parser (tacocat.protocol.manifest): defaults by language, precise
refusals, programs made absolute, binaries for another machine named."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from tacocat.protocol.manifest import (
    CUSTOM,
    ManifestError,
    check_executable,
    load_manifest,
    parse_manifest,
    program_argv,
)
from tacocat.sdk._bot_zip import zip_bot_folder


def test_languages_give_their_defaults_and_a_command_alone_runs_anything() -> None:
    c = parse_manifest('language = "c"\n')
    assert c.command == ("./bot",) and c.build[0] == "cc" and c.build_programs() == ("cc",)
    js = parse_manifest('language = "JavaScript"\n')
    assert (js.language, js.command, js.build) == ("javascript", ("node", "bot.js"), ())
    assert parse_manifest('language = "python"\n').is_python
    own = parse_manifest('command = ["python3", "mine.py"]\n')
    assert (own.language, own.command, own.programs()) == (CUSTOM, ("python3", "mine.py"),
                                                          ("python3",))
    assert parse_manifest('language = "c"\nbuild = []\n').build == ()  # prebuilt


@pytest.mark.parametrize(("text", "words"), [
    ('language = "cobol"', "unknown language 'cobol'; known: python, javascript, c"),
    ("language = 3", "language must be a string"),
    ('command = "./bot"', "write command = ['./bot']"),
    ("command = []", "command is empty"),
    ('command = ["../up"]', "command[0] is '../up'"),
    ('build = ["/usr/bin/cc"]', "build[0] is '/usr/bin/cc'"),
    ('language = "python"\ncommand = ["x"]', "a Python bot runs through the SDK's host"),
    ('nmae = "x"', "unknown field 'nmae'"),
    ("", "names neither a language"),
    ("language = ", "is not valid TOML"),
])
def test_a_bad_manifest_says_what_and_where(text: str, words: str) -> None:
    with pytest.raises(ManifestError, match=r"^bot\.toml") as caught:
        parse_manifest(text + "\n")
    assert words in str(caught.value)


def test_a_folder_needs_a_manifest_or_bot_py(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"has no bot\.toml \(and no bot\.py\)"):
        load_manifest(tmp_path)
    (tmp_path / "bot.py").write_text("")
    assert load_manifest(tmp_path).is_python


def test_programs_are_made_absolute_or_refused(tmp_path: Path) -> None:
    assert program_argv(("./bot", "-v"), "/bot") == ["/bot/bot", "-v"]
    assert Path(program_argv(("sh", "-c", "true"), tmp_path)[0]).is_absolute()
    with pytest.raises(ManifestError, match="'no-such-program' is not installed"):
        program_argv(("no-such-program",), tmp_path)


def test_a_binary_for_another_machine_is_named(tmp_path: Path) -> None:
    manifest = parse_manifest('command = ["./bot"]\n')
    with pytest.raises(ManifestError, match="is not a file of the bot"):
        check_executable(tmp_path, manifest)
    (tmp_path / "bot").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(9)
                                   + struct.pack("<HH", 2, 40) + bytes(44))
    with pytest.raises(ManifestError, match="binary for arm, and this host runs"):
        check_executable(tmp_path, manifest)
    (tmp_path / "bot").write_text("#!/bin/sh\n")  # a script: its #! decides
    check_executable(tmp_path, manifest)


def test_a_folder_zips_without_what_is_the_authors_machines_alone(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text('language = "c"\n')
    (tmp_path / "bot.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "bot").write_bytes(b"\x7fELF" + bytes(60))  # built here: rebuilt there
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "x.js").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "book.txt").write_text("opening")
    zipped = tmp_path / "out.zip"
    zipped.write_bytes(zip_bot_folder(tmp_path))
    with zipfile.ZipFile(zipped) as archive:
        names = sorted(archive.namelist())
    assert names == ["bot.c", "bot.toml", "data/book.txt"]

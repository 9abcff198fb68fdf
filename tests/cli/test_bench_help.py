"""Every ``tacocat bench KIND --help`` says what that benchmark does and measures, not only
its options: the figures a benchmark prints mean nothing without that."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from tacocat.cli import build_parser


def _bench_kinds() -> dict[str, argparse.ArgumentParser]:
    bench = _subparsers(build_parser())["bench"]
    return _subparsers(bench)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError(f"{parser.prog} has no subcommands")


@pytest.mark.parametrize("kind", sorted(_bench_kinds()))
def test_every_benchmark_help_describes_what_it_measures(
        kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(["bench", kind, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    description = out.split("\n\n", 1)[1].split("options:", 1)[0]
    assert len(description.split()) >= 15, f"tacocat bench {kind} --help: {out}"


def test_bench_help_lists_every_benchmark_of_the_lab() -> None:
    done = subprocess.run([sys.executable, "-m", "tacocat.cli", "bench", "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    listed = {line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ")
              and line[2] != " "}
    assert listed >= {"engine", "referee", "ladder", "load", "scale", "refit", "chaos",
                      "neighbour"}, done.stdout


# The lab not installed, as after `pip install tacocat-arena`: its import fails as a missing
# module's does.
_WITHOUT_LAB = ("import sys; sys.modules['tacocat_lab'] = None; from tacocat.cli import main; "
                "sys.exit(main(sys.argv[1:]))")


@pytest.mark.parametrize("argv", [["bench", "engine", "--games", "10"], ["bench"]])
def test_bench_without_the_lab_says_how_to_get_it(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", _WITHOUT_LAB, *argv], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "./dev setup" in done.stderr and "pip install -e lab/" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_other_commands_work_without_the_lab() -> None:
    done = subprocess.run([sys.executable, "-c", _WITHOUT_LAB, "replay", "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "replay" in done.stdout, done.stderr

"""Every ``tacocat bench KIND --help`` says what that benchmark does and measures, not only
its options: the figures a benchmark prints mean nothing without that."""

from __future__ import annotations

import argparse

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

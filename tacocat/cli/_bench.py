"""``tacocat bench``: the benchmarks live in the lab (``lab/``, package ``tacocat_lab``),
which the development install brings and ``pip install tacocat-arena`` does not."""

from __future__ import annotations

import argparse
import sys

MISSING = """\
tacocat bench: the benchmarks come with the lab (the package tacocat_lab in the
repository's lab/ folder), which is not installed here. From a checkout of the repository,
run ./dev setup, or pip install -e lab/ in this environment; then run tacocat bench again."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    try:
        from tacocat_lab import bench  # noqa: PLC0415 - only in a development install
    except ImportError as exc:
        # Not installed, or installed and broken: either way the other commands still work.
        why = MISSING if getattr(exc, "name", None) == "tacocat_lab" else (
            f"tacocat bench: the lab (tacocat_lab) is installed but does not import: "
            f"{type(exc).__name__}: {exc}; run ./dev setup again, or pip install -e lab/")
        p = sub.add_parser("bench", help="run a benchmark (needs the lab: ./dev setup)",
                           description=why, formatter_class=argparse.RawTextHelpFormatter)
        p.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        p.set_defaults(run=lambda args: _unavailable(why))
        return
    bench.add_parser(sub)


def _unavailable(why: str) -> int:
    print(why, file=sys.stderr)
    return 2

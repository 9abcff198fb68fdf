"""What the benchmarks' ``--help`` pages share."""

from __future__ import annotations

import argparse


def doc_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser], name: str,
               help_text: str, doc: str | None) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` is its module docstring past the first paragraph."""
    return kinds.add_parser(name, help=help_text, description=(doc or "").split("\n\n", 1)[1],
                            formatter_class=argparse.RawTextHelpFormatter)

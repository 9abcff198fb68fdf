"""The ``tacocat`` command. Every subcommand has ``--help``.

Besides :func:`main`, what other programs that play or serve for long (the lab's benchmarks)
share with ``tacocat serve``: :func:`run_async` and :func:`settle_heap`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from types import FrameType

from . import (
    _account_cmds,
    _arena_cmds,
    _bench,
    _newbot,
    _play,
    _replay,
    _serve,
    _trial_cmds,
    _up,
    _worker,
)
from ._bot_folders import build as build_bot_folder
from ._newbot import write_bot, write_starter
from ._serve import run_async, settle_heap

__all__ = ["build_bot_folder", "build_parser", "main", "run_async", "settle_heap", "write_bot",
           "write_starter"]

DESCRIPTION = """\
Tacocat Arena: play, test and run tournaments of Tacocat Spelled Backwards bots.

Run `tacocat COMMAND --help` for what each command does.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tacocat", description=DESCRIPTION,
                                     formatter_class=argparse.RawTextHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _up.add_parser(sub)
    _play.add_parser(sub)
    _replay.add_parser(sub)
    _bench.add_parser(sub)
    _serve.add_parser(sub)
    _worker.add_parser(sub)
    _newbot.add_parser(sub)
    _arena_cmds.add_parsers(sub)
    _account_cmds.add_parsers(sub)
    _trial_cmds.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # SIGTERM and SIGHUP stop a command as Ctrl-C does, so its clean-up runs (children,
    # embedded Redis); commands with a stop of their own (serve, worker) install theirs.
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        code: int = args.run(args)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _closed_stdout(args)
        return 141  # as if killed by SIGPIPE, as other commands in a pipe are
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code


def _closed_stdout(args: argparse.Namespace) -> None:
    """The reader of our output went away (``tacocat replay show ... | head``): say so in
    one line, and send what is still buffered nowhere, so the exit flush stays quiet."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    what = " ".join(str(p) for p in (args.command, getattr(args, "replay_command", None) or
                                     getattr(args, "action", None)) if p)
    with contextlib.suppress(OSError):
        print(f"tacocat {what}: the output was closed before it ended (the rest is not "
              "shown)", file=sys.stderr)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())

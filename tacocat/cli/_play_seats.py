"""How ``tacocat play`` seats each bot: as the arena does wherever a decision is timed.

A bot file under a time limit runs in its own host process (``python -m tacocat.sdk.host``,
a :class:`~tacocat.referee.ProcessSeat`), exactly as a worker runs it: a decision that spins
or sleeps past the referee's backstop gets its process killed and restarted, the game
forfeits on time and the match goes on. ``--sandbox`` starts that process through the
worker's own :class:`~tacocat.worker.launch.Launcher` (its sandbox, its limits, its CPU
accounting). A bot stays in this process (:class:`~tacocat.referee.InProcessSeat`) only
where nothing is timed (``--no-time-limit``: for a debugger) and for house bots (our own
code, fast and quiet).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from tacocat.engine import Bot, Observation, Outcome, Round, Ruleset
from tacocat.protocol.manifest import ManifestError, program_argv
from tacocat.referee import Answer, Failure, HostProcess, InProcessSeat, ProcessSeat, Seat
from tacocat.sdk.loader import split_spec

from ._play_logs import Printed, SideOutput, StreamLog, logged

if TYPE_CHECKING:
    from ._play_plan import MatchPlan

SIDES = ("A", "B")


class SeatError(Exception):
    """A bot cannot be seated as asked (the sandbox refuses its folder, say)."""


def in_process(spec: str, time_limit: float | None) -> bool:
    """Whether bot ``spec`` plays in this process (house bots, or nothing timed)."""
    return time_limit is None or spec.startswith("house:")


class LocalSeats:
    """Both seats of one run of a local match; a context manager that ends their processes
    (and the sandbox's cgroups) whatever happened."""

    def __init__(self, plan: MatchPlan) -> None:
        self.outputs = tuple(SideOutput(side, plan.logs, echo=plan.show_output)
                             for side in SIDES)
        self.seats: list[Seat] = []
        self._closers: list[Callable[[], object]] = []
        self._logs: list[StreamLog] = []
        try:
            for side in (0, 1):
                self.seats.append(self._seat(plan, side))
        except BaseException:
            self.close()
            raise

    def _seat(self, plan: MatchPlan, side: int) -> Seat:
        spec, output = plan.specs[side], self.outputs[side]
        if plan.time_limit is None or in_process(spec, plan.time_limit):
            return _Logged(plan.bots[side], output, plan.time_limit)
        log = StreamLog(output)
        self._logs.append(log)
        argv = plan.commands[side]
        if plan.launcher is None:
            host = HostProcess(spec, log=log, command=program_argv(argv, spec) if argv else None,
                               cwd=spec if argv else None)
            self._closers.append(host.close)
            return ProcessSeat(host, plan.time_limit)
        from tacocat.worker.launch import BotSpec  # noqa: PLC0415 - the server extra's

        if argv:
            bot = BotSpec(plan.names[side], Path(spec), command=argv)
        else:
            path, class_name = _split_spec(spec)
            bot = BotSpec(plan.names[side], path.parent, path.name + class_name)
        try:
            command = plan.launcher.command(bot)
        except (ValueError, OSError, ManifestError) as exc:  # the sandbox's words say what to fix
            raise SeatError(f"--sandbox: {exc}") from exc
        host = HostProcess(spec, log=log, **command.host_process_kwargs())

        def close() -> None:
            try:
                host.close()
            finally:
                command.close()

        self._closers.append(close)
        # As on the arena: the bot tree's CPU beyond its decisions counts against it.
        return ProcessSeat(host, plan.time_limit,
                           cpu_usage=command.cpu_seconds if command.tree else None)

    def printed(self) -> tuple[Printed, Printed]:
        for log in self._logs:
            log.flush()
        return self.outputs[0].printed, self.outputs[1].printed

    def close(self) -> None:
        for close in self._closers:
            with contextlib.suppress(Exception):  # one side's clean-up must not skip the other
                close()
        self._closers = []

    def __enter__(self) -> LocalSeats:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class _Logged:
    """An :class:`~tacocat.referee.InProcessSeat` whose bots print to ``output``, each in
    its game's part (a game played again gets a new bot, which must log to it too)."""

    def __init__(self, factory: Callable[[], Bot], output: SideOutput,
                 time_limit: float | None) -> None:
        self._game = 0
        self.seat = InProcessSeat(logged(factory, output, lambda: self._game),
                                  time_limit=time_limit)

    @property
    def broken(self) -> Failure | None:
        return self.seat.broken

    @property
    def lost(self) -> str | None:
        return self.seat.lost

    @property
    def never_started(self) -> bool:
        return self.seat.never_started

    @property
    def time_limit(self) -> float | None:
        return self.seat.time_limit

    @property
    def spent(self) -> float:
        return self.seat.spent

    def start(self, game: int, games: int, seat: int, rules: Ruleset, opponent: str) -> None:
        self._game = game
        self.seat.start(game, games, seat, rules, opponent)

    def ask(self, game: int, obs: Observation) -> None:
        self.seat.ask(game, obs)

    def refuse(self, game: int, failure: Failure) -> None:
        self.seat.refuse(game, failure)

    def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        self.seat.end(game, outcome, rounds)

    async def send(self) -> None:
        await self.seat.send()

    async def answers(self) -> list[Answer]:
        return await self.seat.answers()

    def restart(self) -> None:
        self.seat.restart()

    def give_up(self, failure: Failure) -> None:
        self.seat.give_up(failure)


def _split_spec(spec: str) -> tuple[Path, str]:
    """``path/to/bot.py[:Class]`` as the absolute path and ``":Class"`` (or ``""``)."""
    path, class_name = split_spec(spec)
    return Path(path).resolve(), f":{class_name}" if class_name else ""

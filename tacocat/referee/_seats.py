"""The seats: one bot of a match as :func:`~tacocat.referee.referee_match` sees it.

A seat queues what its bot must be told (game starts, requests, refusals, results), sends it
all at once in :meth:`Seat.send` (one frame per lockstep step for a bot process, so the pipe
round trip is paid once for every game in flight), and hands back the answers in the order
asked. :class:`InProcessSeat` is a :class:`Bot` in this process, :class:`ProcessSeat` a bot
in a :class:`HostProcess` (the arena's sandbox); the live referee's seat (a gRPC stream) is
the server's. The methods of these two never suspend, so they sit at a table run without an
event loop (:func:`~tacocat.referee.play_match`) as well as at an asyncio one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from google.protobuf.message import DecodeError

from tacocat.engine import (
    Bot,
    BotDriver,
    Fault,
    Observation,
    Outcome,
    Round,
    Ruleset,
    bot_factory,
    describe_exception,
)
from tacocat.protocol import MAX_CLIENT_MESSAGE
from tacocat.protocol.proto.v1 import game_pb2 as pb

from ._errors import HostError
from ._feed import OVERSIZED, UNDECODABLE, Answer, Failure, SeatFeed
from ._host import HostProcess
from ._stall import STALLS, StallWatch

BACKGROUND_ALLOWANCE = 0.001
"""CPU seconds a bot's tree may use per decision besides the decision itself before that
counts as background work: an honest host spends tens of microseconds decoding a request
and encoding its answer."""

PROGRESS_LIMITS = 5
"""Decision limits of wall time the referee waits for the next answer of a frame before it
kills the process (the host answers in the order asked, and sends what it has every quarter
limit, so the wait is for one decision, whatever the batch). Far above the limit: a
decision is judged by the bot's own time (the host's clock stops while another process holds
the CPU, :mod:`tacocat.sdk._own_time`), and an honest bot on a core shared with a spinning
opponent and a loaded machine may need several times its own time in wall time. This only
bounds a bot that never answers (a sleeper, an endless loop)."""

DecisionTimer = Callable[[float], None]
"""Called with each decision's seconds (failures included): how metrics time decisions."""


class Seat(Protocol):
    """One bot of a match: the I/O the loop needs, nothing else."""

    @property
    def broken(self) -> Failure | None:
        """Why the bot lost its process (it died, went silent, garbled its output or did not
        start): the first game it was asked about in the step forfeits, the loop plays its
        other games in flight again; ``None`` while it works."""

    @property
    def lost(self) -> str | None:
        """Why the bot can never play again (a live client left); ``None`` otherwise."""

    @property
    def never_started(self) -> bool:
        """Whether no process of this bot ever came up (only a process seat can say yes)."""

    @property
    def time_limit(self) -> float | None:
        """Seconds per decision (None: not measured, and no time bank)."""

    @property
    def spent(self) -> float:
        """Seconds charged to the bot's time bank so far (the policy's bank,
        :mod:`tacocat.referee._policy`): what its decisions took, as measured (or the time
        the referee waited for them, if more), and the starts of restarted processes."""

    def start(self, game: int, games: int, seat: int, rules: Ruleset, opponent: str) -> None:
        """A game begins, the bot in ``seat``."""

    def ask(self, game: int, obs: Observation) -> None:
        """Ask for ``obs.decision`` in ``game``."""

    def refuse(self, game: int, failure: Failure) -> None:
        """Tell the bot it forfeits ``game``, and why."""

    def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        """``game`` ended (``rounds``: all of its rounds, public)."""

    async def send(self) -> None:
        """Send everything queued; the bot's clock starts for every request in it."""

    async def answers(self) -> list[Answer]:
        """The answers to the requests sent since the last call, in the order asked."""

    def restart(self) -> None:
        """After :attr:`broken`: forget the games in flight, be ready for new ones."""

    def give_up(self, failure: Failure) -> None:
        """The side gave up: release what it holds (its process, its stream)."""


class InProcessSeat:
    """A :class:`Bot` in this process, one bot object per game (``bot`` is a factory or a
    bot to copy for each game: :func:`~tacocat.engine.bot_factory`).

    A bot that raises forfeits that game with ``crash``. With ``time_limit``, a decision
    that took longer forfeits on time once it returns (a bot in this process cannot be
    interrupted; ``None`` measures nothing, for stepping through a bot in a debugger).
    """

    __slots__ = ("_answers", "_drivers", "_failed", "factory", "on_decision", "spent",
                 "time_limit")

    broken: Failure | None = None
    lost: str | None = None
    never_started = False

    def __init__(self, bot: Bot | Callable[[], Bot], *, time_limit: float | None = None,
                 on_decision: DecisionTimer | None = None) -> None:
        self.factory = bot_factory(bot)
        self.time_limit = time_limit
        self.on_decision = on_decision
        self.spent = 0.0
        self._drivers: dict[int, BotDriver] = {}
        self._failed: dict[int, Failure] = {}
        self._answers: list[Answer] = []

    def start(self, game: int, games: int, seat: int, rules: Ruleset, opponent: str) -> None:
        try:
            driver = BotDriver(self.factory())
            driver.start(seat, rules, opponent)
        except Exception as exc:  # the bot's failure shows when it is asked
            self._failed[game] = Failure(Fault.CRASH, describe_exception(exc))
            return
        self._drivers[game] = driver

    def ask(self, game: int, obs: Observation) -> None:
        failed = self._failed.get(game)
        if failed is not None:
            self._answers.append(failed)
            return
        decide = self._drivers[game].decide
        if self.time_limit is None and self.on_decision is None:
            try:
                self._answers.append(decide(obs))
            except Exception as exc:  # any bot failure is a forfeit
                self._answers.append(Failure(Fault.CRASH, describe_exception(exc)))
            return
        started = time.perf_counter()
        try:
            answer: Answer = decide(obs)
        except Exception as exc:
            answer = Failure(Fault.CRASH, describe_exception(exc))
        took = time.perf_counter() - started
        self.spent += took
        if self.on_decision is not None:
            self.on_decision(took)
        if self.time_limit is not None and took > self.time_limit:
            answer = Failure(Fault.TIMEOUT, f"took {took:.3g} s; the limit is "
                                            f"{self.time_limit:g} s")
        self._answers.append(answer)

    def refuse(self, game: int, failure: Failure) -> None:
        pass

    def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        self._failed.pop(game, None)
        driver = self._drivers.pop(game, None)
        if driver is not None:
            with contextlib.suppress(Exception):  # a hook failing after the game changes nothing
                driver.finish(outcome, rounds)

    async def send(self) -> None:
        pass

    async def answers(self) -> list[Answer]:
        answers, self._answers = self._answers, []
        return answers

    def restart(self) -> None:
        pass

    def give_up(self, failure: Failure) -> None:
        pass


class ProcessSeat:
    """A bot in a :class:`HostProcess`, with ``time_limit`` seconds per decision.

    The process is started when the first frame goes out (and again after :meth:`restart`);
    one that cannot be started is :attr:`broken` with ``crash``. Each decision's own time (as
    the host measures it, its clock stopped while others hold the CPU) must stay within
    ``time_limit``, or that game forfeits. The backstop (past it the process is killed, the
    game it was deciding forfeits, the loop plays its other games again): the answers of a
    frame must keep coming, :data:`PROGRESS_LIMITS` limits of wall time at most apart (the
    host sends a slow frame's answers in parts), so a hung bot costs that, not ``k`` limits,
    whatever the batch. A stall of this process (:mod:`._stall`) extends the wait and
    suspends the host's reported times for that frame. The methods block on the pipes: play
    through :func:`~tacocat.referee.play_match`, or from a thread.

    ``on_decision`` gets each decision's seconds as the host measured them (failures of the
    whole frame count the time waited): how a worker times sandboxed decisions.

    ``cpu_usage`` (seconds of CPU the bot's whole process tree used so far, e.g. read from
    its cgroup) makes background work count: from one frame's answers to the next's, the
    tree's CPU beyond the time its decisions took (and a small allowance per decision) is
    background work (children or threads left spinning while the opponent and the referee
    run). It adds up over the process's life; once it exceeds one decision's limit, the
    frame's games forfeit with ``timeout`` and the process is restarted.
    """

    def __init__(self, host: HostProcess, time_limit: float, *,
                 on_decision: DecisionTimer | None = None,
                 cpu_usage: Callable[[], float | None] | None = None) -> None:
        if time_limit <= 0:
            raise ValueError(f"time_limit must be positive, got {time_limit}")
        self.host = host
        self.time_limit = time_limit
        self.on_decision = on_decision
        self.cpu_usage = cpu_usage
        self.background_cpu = 0.0
        """CPU seconds the bot's tree used besides its decisions (see above)."""
        self._cpu_mark: float | None = None
        self._frame_think = 0.0
        self.feed = SeatFeed(time_limit)
        self.broken: Failure | None = None
        self.never_started = True
        self.lost: str | None = None
        self.spent = 0.0
        """Seconds charged to the time bank: per frame, the decisions' time as the host
        reported it or the time the referee waited for the answers, whichever is more; and
        restarts."""
        self.starts = 0
        self.start_seconds = 0.0
        """Wall time spent starting processes (until their Hello)."""
        self._frame = pb.ServerFrame()
        self._asked: list[int] = []
        self._sent: list[int] = []
        self._deadline = 0.0
        self._sent_at = 0.0
        self._stalls = STALLS.watch()

    # -- queueing ---------------------------------------------------------------------------

    def start(self, game: int, games: int, seat: int, rules: Ruleset, opponent: str) -> None:
        self.feed.game_start(self._frame.messages.add(), game, games, seat, rules, opponent)

    def ask(self, game: int, obs: Observation) -> None:
        self._asked.append(self.feed.request(self._frame.messages.add(), game, obs))

    def refuse(self, game: int, failure: Failure) -> None:
        if self.feed.knows(game):
            self.feed.refusal(self._frame.messages.add(), game, failure)

    def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        if self.feed.knows(game):  # not a game a dead process had
            self.feed.result(self._frame.messages.add(), game, outcome, rounds)

    # -- the pipe ---------------------------------------------------------------------------

    async def send(self) -> None:
        self._sent, self._asked = self._asked, []
        frame, self._frame = self._frame, pb.ServerFrame()
        if self.broken is not None or not frame.messages:
            return
        self._sent_at = time.monotonic()  # a start that fails is waited on from here
        self._frame_think = 0.0
        if not self.host.running and not self._start_process():
            return
        if self.cpu_usage is not None and self._cpu_mark is None:
            self._cpu_mark = self.cpu_usage()  # a fresh process: count from its first frame
        self._frame_think = 0.0
        self._stalls = STALLS.watch()
        now = time.monotonic()
        self._sent_at = now
        # The backstop: answers must keep coming, PROGRESS_LIMITS limits at most apart (no
        # cap on the whole frame: that would charge one game for the others' time).
        self._deadline = now + PROGRESS_LIMITS * self.time_limit
        failed = self.host.send(frame.SerializeToString(), self._deadline)
        if failed is not None:
            self._break(failed)

    async def answers(self) -> list[Answer]:
        sent, self._sent = self._sent, []
        if not sent:
            return []
        got: dict[int, Answer] = {}
        entered = time.monotonic()
        waiting_since = self._sent_at
        stalls = self._stalls
        while self.broken is None and len(got) < len(sent):
            data = self.host.receive(self._deadline)
            if isinstance(data, Failure):
                stalled = STALLS.within(waiting_since, time.monotonic())
                if data.fault is Fault.TIMEOUT and stalled > 0:
                    # This process (the referee) was not running for part of the wait: a
                    # paused machine or worker, which is no bot's fault. The wait goes on.
                    waiting_since += stalled
                    self._deadline += stalled
                    continue
                if data.fault is Fault.TIMEOUT:  # the same words for every batch size
                    data = Failure(Fault.TIMEOUT, (
                        f"no answer within {PROGRESS_LIMITS * self.time_limit:g} s (the "
                        f"limit is {self.time_limit:g} s)"))
                self._break(data)
                break
            answered = len(got)
            self._read_frame(data, got, stalls)
            if len(got) > answered:
                waiting_since = time.monotonic()
                self._deadline = waiting_since + PROGRESS_LIMITS * self.time_limit
        # The bank's charge: what the host reported (never more than the time since the frame
        # went out), or the time this call kept the referee waiting if that is more: a host
        # can be rewritten to under-report, the wait cannot be, and a match lasts the sum of
        # such waits. (Another seat's wait may have come first: answers ready by then kept
        # nobody waiting.) A stretch the referee itself did not run is nobody's.
        now = time.monotonic()
        paused = STALLS.within(entered, now)
        self.spent += max(min(self._frame_think, now - self._sent_at), now - entered - paused)
        if self.broken is not None:
            waited = time.monotonic() - self._sent_at
            if self.on_decision is not None:
                for _ in range(len(sent) - len(got)):
                    self.on_decision(waited)
            return [got.get(request_id, self.broken) for request_id in sent]
        if self.cpu_usage is not None:
            # The failure comes back from the call: the compiled form keeps what the type
            # checker narrowed ``self.broken`` to above, even across a call that sets it.
            over = self._over_background_budget(len(sent))
            if over is not None:
                return [over] * len(sent)
        return [got[request_id] for request_id in sent]

    def _over_background_budget(self, decisions: int) -> Failure | None:
        """Count the tree's CPU since the last frame's answers beyond this frame's decisions;
        break the seat (and return why) once the total passes one decision's limit."""
        assert self.cpu_usage is not None
        now, mark = self.cpu_usage(), self._cpu_mark
        self._cpu_mark = now
        if now is None or mark is None:
            return None
        spent = now - mark - self._frame_think - decisions * BACKGROUND_ALLOWANCE
        self.background_cpu += max(0.0, spent)
        if self.background_cpu <= self.time_limit:
            return None
        failure = Failure(Fault.TIMEOUT, (
            f"the bot's processes used {self.background_cpu:.3g} s of CPU besides its "
            f"decisions, more than one decision's {self.time_limit:g} s (background work "
            "counts against the bot's time)"))
        self._break(failure)
        return failure

    def _read_frame(self, data: bytes, got: dict[int, Answer], stalls: StallWatch) -> None:
        if len(data) > MAX_CLIENT_MESSAGE:
            self._break(Failure(Fault.PROTOCOL, OVERSIZED, f"a frame of {len(data)} bytes"))
            return
        try:
            frame = pb.ClientFrame.FromString(data)
        except DecodeError:
            self._break(Failure(Fault.PROTOCOL, UNDECODABLE, f"{len(data)} bytes"))
            return
        timer = self.on_decision
        # Late by the host's clock while this process was stopped: the host was most likely
        # stopped with it, the machine's fault, so the time is not judged.
        timed = not stalls.seen()
        for msg in frame.messages:
            sorted_ = self.feed.read(msg, timed=timed)
            if isinstance(sorted_, Failure):
                self._break(sorted_)
                return
            if sorted_ is not None:
                request_id, answer = sorted_
                got[request_id] = answer
                kind = msg.WhichOneof("kind")
                think = msg.action.think_us if kind == "action" else msg.failure.think_us
                # As the host measured it: within the limit, or the feed refused it above.
                self._frame_think += think / 1e6
                if timer is not None:  # metrics: never longer than the referee waited, so
                    # a forged report puts no number of the bot's choosing into them
                    timer(min(think / 1e6, time.monotonic() - self._sent_at))

    def _start_process(self) -> bool:
        started = time.perf_counter()
        self.starts += 1
        try:
            self.host.start()
        except HostError as exc:  # what the process wrote is in its log, not the record
            self._break(Failure(Fault.CRASH, exc.public))
            return False
        finally:
            took = time.perf_counter() - started
            self.start_seconds += took
            if self.starts > 1:  # a restart follows the bot's own fault: its time
                self.spent += took
        self.never_started = False
        return True

    def _break(self, failure: Failure) -> None:
        if self.broken is None:
            self.broken = failure
            if self.host.log is not None:  # the owner reads why the process was lost
                said = f" ({failure.said})" if failure.said else ""
                self.host.log.note(f"{failure.fault.value}: {failure.detail}{said}; the game it "
                                   "was deciding forfeits, the others are played again")

    # -- after a fault ----------------------------------------------------------------------

    def restart(self) -> None:
        """Kill the process (stuck, garbled or dead: the next frame starts a fresh one)."""
        self.host.kill()
        if self.host.log is not None:
            self.host.log.note("the bot's process is restarted for the next games")
        self.background_cpu, self._cpu_mark = 0.0, None
        self.feed.forget()
        self._frame = pb.ServerFrame()
        self._asked, self._sent = [], []
        self.broken = None

    def give_up(self, failure: Failure) -> None:
        self.host.kill()
        self.feed.forget()
        # What is queued (the refusals of the step it gave up in) would start a process for
        # a side that plays no more.
        self._frame = pb.ServerFrame()
        self._asked = []

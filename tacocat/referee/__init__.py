"""The match runtime: the one loop every match is played by, its seats and its fault policy.

- :func:`referee_match` / :func:`play_match`: play a match's schedule between two seats,
  ``batch`` games at once in lockstep (:mod:`._loop`); :func:`play_in_process` for two
  bots in this process;
- seats: :class:`InProcessSeat` (a bot in this process), :class:`ProcessSeat` (a bot in a
  :class:`HostProcess`, e.g. the arena's sandbox), :class:`LiveSeat` (a remote bot on a
  :class:`Connection`: the live referee hands in its gRPC stream as a
  :class:`MessageStream`);
- :class:`FaultPolicy`: what each fault costs, restarts and giving up (the table in
  :mod:`._policy`), and each side's :class:`TimeBank` for a match (:func:`match_bound`: how
  long a match can take);
- :class:`SeatFeed`: the referee's half of the protocol for a remote bot.

Local play (``tacocat play``, :func:`tacocat.sdk.play_local`), the workers' matches and
smoke tests, the live referee and the benchmarks all play through here; none has a loop of
its own. Imports the engine and the protocol, never grpc.

Exceptions::

    MatchRuntimeError
     ├── HostError            a bot host process could not be started
     └── NoBotStartedError    neither bot of a match ever started (the machine's fault)
"""

# First: importing the engine decides whether this package's hot modules load compiled or
# from source (tacocat/engine/_compiled.py), which must happen before any of them is found.
import tacocat.engine  # noqa: F401

from ._errors import HostError, MatchRuntimeError, NoBotStartedError
from ._feed import DETAIL_LIMIT, Answer, Failure, SeatFeed, clean_text, error_message, match_end
from ._host import HostProcess
from ._live import INBOX_LIMIT, Connection, LiveSeat, MessageStream
from ._loop import (
    DEFAULT_BATCH,
    GameSink,
    PlayedMatch,
    play_in_process,
    play_match,
    referee_match,
    run_blocking,
)
from ._policy import (
    BANK_LIMITS_PER_GAME,
    DEFAULT_MAX_STRIKES,
    FaultPolicy,
    SideReport,
    TimeBank,
    match_bank,
    match_bound,
)
from ._seats import PROGRESS_LIMITS, DecisionTimer, InProcessSeat, ProcessSeat, Seat

__all__ = [
    "BANK_LIMITS_PER_GAME",
    "DEFAULT_BATCH",
    "DEFAULT_MAX_STRIKES",
    "DETAIL_LIMIT",
    "INBOX_LIMIT",
    "PROGRESS_LIMITS",
    "Answer",
    "Connection",
    "DecisionTimer",
    "Failure",
    "FaultPolicy",
    "GameSink",
    "HostError",
    "HostProcess",
    "InProcessSeat",
    "LiveSeat",
    "MatchRuntimeError",
    "MessageStream",
    "NoBotStartedError",
    "PlayedMatch",
    "ProcessSeat",
    "Seat",
    "SeatFeed",
    "SideReport",
    "TimeBank",
    "clean_text",
    "error_message",
    "match_bank",
    "match_bound",
    "match_end",
    "play_in_process",
    "play_match",
    "referee_match",
    "run_blocking",
]

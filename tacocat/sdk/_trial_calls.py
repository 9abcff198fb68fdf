"""The trial calls of :class:`~tacocat.sdk.ArenaClient` (unrated SPRT tests on the arena's
workers): a mixin over the client's stub and error mapping."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, TypeVar

import grpc

from tacocat.engine.sprt import Sprt
from tacocat.models import Trial
from tacocat.protocol.proto.v1 import arena_pb2 as apb
from tacocat.protocol.proto.v1 import arena_pb2_grpc as apb_grpc

from ._errors import ArenaApiError, ServerUnavailableError
from ._follow import Reconnecting, reconnecting
from ._trial_types import trial_from_pb

_T = TypeVar("_T")


class TrialCalls:
    """create_trial, trial, watch_trial, trials, cancel_trial."""

    _stub: apb_grpc.ArenaStub

    if TYPE_CHECKING:  # ArenaClient's plumbing
        def _metadata(self) -> tuple[tuple[str, str], ...]: ...
        def _call(self, method: Callable[..., _T], request: object) -> _T: ...
        def _error(self, exc: grpc.RpcError) -> ArenaApiError: ...

    def create_trial(self, candidate: str, baseline: str, *, sprt: Sprt | None = None,
                     max_games: int = 0, games_per_match: int = 0,
                     decision_seconds: float = 0.0) -> Trial:
        """Start an unrated SPRT test of your version ``candidate`` (``name@N`` or
        ``owner/name@N``; it may still wait for its smoke test) against ``baseline`` (any
        active version). 0 leaves a setting to the server (20,000 games, matches of 20,
        1 s per decision); ``sprt`` defaults to elo0 0, elo1 5, alpha = beta = 0.05."""
        sprt = sprt or Sprt()
        request = apb.CreateTrialRequest(
            candidate=candidate, baseline=baseline, elo0=sprt.elo0, elo1=sprt.elo1,
            alpha=sprt.alpha, beta=sprt.beta, max_games=max_games,
            games_per_match=games_per_match, decision_seconds=decision_seconds)
        return trial_from_pb(self._call(self._stub.CreateTrial, request))

    def trial(self, trial_id: str) -> Trial:
        return trial_from_pb(self._call(self._stub.GetTrial, apb.GetTrialRequest(id=trial_id)))

    def watch_trial(self, trial_id: str, *, reconnect: Reconnecting | None = None,
                    ) -> Generator[Trial, None, None]:
        """The test now, then after every change; the iterator ends once the test has
        (a verdict, the games ran out, cancelled, failed). A stream that ends or fails while
        the test is still open raises ``ServerUnavailableError``; with ``reconnect``, it is
        opened again with backoff instead (``ArenaClient.watch``)."""
        yield from reconnecting(lambda: self._watch_trial_once(trial_id), reconnect)

    def _watch_trial_once(self, trial_id: str) -> Generator[Trial, None, None]:
        call: Any = self._stub.WatchTrial(apb.GetTrialRequest(id=trial_id),
                                          metadata=self._metadata())
        trial = None
        try:
            for message in call:
                trial = trial_from_pb(message)
                yield trial
        except grpc.RpcError as exc:
            raise self._error(exc) from None
        finally:
            call.cancel()
        if trial is not None and trial.status.open:  # the server shut down cleanly
            raise ServerUnavailableError("UNAVAILABLE", f"the server ended the watch of test "
                                         f"{trial_id} while it runs; reconnect")

    def trials(self, *, owner: str | None = None, version: str | None = None,
               count: int = 100) -> list[Trial]:
        """Tests, newest first: ``owner``'s, or with ``version`` on either side."""
        return self.trial_list(owner=owner, version=version, count=count)[0]

    def trial_list(self, *, owner: str | None = None, version: str | None = None,
                   count: int = 100) -> tuple[list[Trial], bool]:
        """:meth:`trials`, and whether more tests match than the list holds (``count``, at
        most 1000)."""
        reply = self._call(self._stub.ListTrials, apb.ListTrialsRequest(
            owner=owner or "", version=version or "", count=count))
        return [trial_from_pb(t) for t in reply.trials], reply.more

    def cancel_trial(self, trial_id: str) -> Trial:
        """Stop scheduling a test of yours: queued matches are skipped, one being played is
        not counted; returns the test as it stopped."""
        return trial_from_pb(self._call(self._stub.CancelTrial,
                                        apb.CancelTrialRequest(id=trial_id)))

# ruff: noqa: N802 - the servicer's methods are named after the RPCs
"""The trial RPCs of ``tacocat.v1.Arena`` (unrated SPRT tests, :mod:`tacocat.arena.trials`):
a mixin of :class:`~tacocat.server._arena_service.ArenaService`, whose plumbing (thread
pool, authentication, refusals) they use."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import grpc.aio

from tacocat.arena import Arena, User
from tacocat.arena.trials import (
    DEFAULT_GAMES_PER_MATCH,
    DEFAULT_MAX_GAMES,
    Trial,
    Trials,
    TrialStatus,
    make_sprt,
)
from tacocat.engine.sprt import Sprt
from tacocat.protocol.proto.v1 import arena_pb2 as apb

from ._refusals import refusals

Context = grpc.aio.ServicerContext[Any, Any]
_R = TypeVar("_R")

WATCH_POLL: Final = 0.5
"""Seconds between two looks at a watched trial (it changes once per recorded match)."""
MAX_LIST: Final = 1000

TRIAL_STATUS: Final = {
    TrialStatus.WAITING: apb.TRIAL_STATUS_WAITING,
    TrialStatus.RUNNING: apb.TRIAL_STATUS_RUNNING,
    TrialStatus.H0: apb.TRIAL_STATUS_H0,
    TrialStatus.H1: apb.TRIAL_STATUS_H1,
    TrialStatus.EXHAUSTED: apb.TRIAL_STATUS_EXHAUSTED,
    TrialStatus.CANCELLED: apb.TRIAL_STATUS_CANCELLED,
    TrialStatus.FAILED: apb.TRIAL_STATUS_FAILED,
}


def trial_to_pb(trial: Trial) -> apb.Trial:
    msg = apb.Trial(
        id=trial.id, owner=trial.owner, candidate=trial.candidate, baseline=trial.baseline,
        elo0=trial.sprt.elo0, elo1=trial.sprt.elo1, alpha=trial.sprt.alpha,
        beta=trial.sprt.beta, max_games=trial.max_games,
        games_per_match=trial.games_per_match, decision_seconds=trial.decision_seconds,
        status=TRIAL_STATUS[trial.status], reason=trial.reason, created_at=trial.created_at,
        matches_created=trial.matches_created, matches_recorded=trial.matches_recorded,
        games=trial.games, wins=trial.wins, ties=trial.ties, losses=trial.losses,
        aborted=trial.aborted, forfeits_a=trial.forfeits_a, forfeits_b=trial.forfeits_b,
        pentanomial=list(trial.penta))
    if trial.ended_at is not None:
        msg.ended_at = trial.ended_at
    return msg


def _version_ref(user: User, ref: str) -> str:
    """``name@N`` is the caller's bot; ``owner/name@N`` stays as it is."""
    return ref if "/" in ref else f"{user.name}/{ref}"


class TrialRpcs:
    """CreateTrial, GetTrial, WatchTrial, ListTrials, CancelTrial."""

    arena: Arena
    closing: bool

    if TYPE_CHECKING:  # ArenaService's plumbing
        async def run(self, function: Callable[..., _R], *args: Any, **kwargs: Any) -> _R: ...
        async def user(self, context: Context, *, required: bool = True) -> User | None: ...
        async def actor(self, context: Context) -> User: ...
        async def abort(self, context: Context, exc: BaseException) -> None: ...

    @refusals
    async def CreateTrial(self, request: apb.CreateTrialRequest,
                          context: Context) -> apb.Trial:
        actor = await self.actor(context)
        default = Sprt()
        sprt = make_sprt(
            request.elo0 if request.HasField("elo0") else default.elo0,
            request.elo1 if request.HasField("elo1") else default.elo1,
            request.alpha if request.HasField("alpha") else default.alpha,
            request.beta if request.HasField("beta") else default.beta)
        settings: dict[str, Any] = {"max_games": request.max_games or DEFAULT_MAX_GAMES,
                                    "games_per_match": request.games_per_match
                                    or DEFAULT_GAMES_PER_MATCH}
        if request.decision_seconds:
            settings["decision_seconds"] = request.decision_seconds
        trial = await self.run(Trials(self.arena).create, actor,
                               _version_ref(actor, request.candidate),
                               _version_ref(actor, request.baseline), sprt=sprt, **settings)
        return trial_to_pb(trial)

    @refusals
    async def GetTrial(self, request: apb.GetTrialRequest, context: Context) -> apb.Trial:
        await self.user(context, required=False)
        return trial_to_pb(await self.run(Trials(self.arena).get, request.id))

    async def WatchTrial(self, request: apb.GetTrialRequest,
                         context: Context) -> AsyncIterator[apb.Trial]:
        trials = Trials(self.arena)
        sent: Trial | None = None
        try:
            await self.user(context, required=False)
            while not self.closing:
                trial = await self.run(trials.get, request.id)
                if trial != sent:
                    yield trial_to_pb(trial)
                    sent = trial
                if not trial.status.open:
                    return
                await asyncio.sleep(WATCH_POLL)
        except Exception as exc:
            await self.abort(context, exc)

    @refusals
    async def ListTrials(self, request: apb.ListTrialsRequest,
                         context: Context) -> apb.ListTrialsResponse:
        await self.user(context, required=False)
        count = min(request.count or 100, MAX_LIST)
        # One more than asked: whether the reply holds all of them.
        found = await self.run(Trials(self.arena).find, owner=request.owner or None,
                               version=request.version or None, count=count + 1)
        return apb.ListTrialsResponse(trials=[trial_to_pb(t) for t in found[:count]],
                                      more=len(found) > count)

    @refusals
    async def CancelTrial(self, request: apb.CancelTrialRequest,
                          context: Context) -> apb.Trial:
        actor = await self.actor(context)
        return trial_to_pb(await self.run(Trials(self.arena).cancel, actor, request.id))

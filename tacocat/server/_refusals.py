"""The decorator that turns a failed arena RPC into its gRPC status (the servicer's
``abort``: arena refusals keep their message, anything else is INTERNAL and logged)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

import grpc.aio

Context = grpc.aio.ServicerContext[Any, Any]


class Aborts(Protocol):
    async def abort(self, context: Context, exc: BaseException) -> None: ...


_R = TypeVar("_R")
_S = TypeVar("_S", bound=Aborts)
_Q = TypeVar("_Q")


def refusals(
    method: Callable[[_S, _Q, Context], Awaitable[_R]],
) -> Callable[[_S, _Q, Context], Coroutine[Any, Any, _R]]:
    """Turn arena refusals into gRPC statuses with the arena's message."""

    @functools.wraps(method)
    async def wrapper(self: _S, request: _Q, context: Context) -> _R:
        try:
            return await method(self, request, context)
        except Exception as exc:
            await self.abort(context, exc)
            raise  # abort() raised already; this keeps type checkers content

    return wrapper

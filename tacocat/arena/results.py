"""Match results in storage: the stored summary read back, compressed replays unpacked,
and the one JSON form of every JSON value the arena keeps in Redis.

The result itself (:class:`~tacocat.models.MatchResult`, its games, totals and forfeits) is
:mod:`tacocat.models`'s; the worker builds it with ``MatchResult.from_records``.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from typing import Any, Final

from tacocat.engine import GameRecord, RecordError
from tacocat.models import MatchResult, ModelError

from .errors import InvalidArgument

_MAX_REPLAY_TEXT: Final = 512 * 1024 * 1024
"""Decompression stops here: a stored blob is ours, but a bug must not exhaust memory."""


def parse_result(data: Mapping[str, Any], replays: bytes = b"") -> MatchResult:
    """A stored result (:meth:`MatchResult.summary_json`'s data); :class:`InvalidArgument`
    names what is malformed."""
    try:
        return MatchResult.from_summary_json(data, replays)
    except ModelError as exc:
        raise InvalidArgument(str(exc)) from exc


def replay_lines(blob: bytes) -> list[str]:
    """The JSON Lines in a compressed replay blob (empty blob: no lines)."""
    if not blob:
        return []
    decompressor = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip framing
    try:
        data = decompressor.decompress(blob, _MAX_REPLAY_TEXT)
    except zlib.error as exc:
        raise InvalidArgument(f"replays are not valid gzip data: {exc}") from exc
    if decompressor.unconsumed_tail:
        raise InvalidArgument(f"replays expand beyond {_MAX_REPLAY_TEXT} bytes; refusing")
    return [line for line in data.decode().splitlines() if line.strip()]


def decompress_replays(blob: bytes) -> list[GameRecord]:
    """The game records in a compressed replay blob, in game order."""
    records = []
    for number, line in enumerate(replay_lines(blob), 1):
        try:
            records.append(GameRecord.loads(line))
        except RecordError as exc:
            raise InvalidArgument(f"replay line {number}: {exc}") from exc
    return records


def dumps_json(data: Any) -> str:
    """Compact JSON, the form every JSON value in Redis takes."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True)

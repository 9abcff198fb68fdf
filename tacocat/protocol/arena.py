"""The arena API's wire constants (``proto/tacocat/v1/arena.proto``), shared by the
client (:class:`tacocat.sdk.ArenaClient`) and the server. A module of its own so that the
game protocol's users (a bot host) do not load the arena's messages."""

from __future__ import annotations

from typing import Final

from .proto.v1 import arena_pb2 as apb

ARENA_SERVICE: Final = apb.DESCRIPTOR.services_by_name["Arena"].full_name
"""``tacocat.v1.Arena``, as gRPC, health checking and reflection name it."""
MAX_SUBMISSION_BYTES: Final = 1024 * 1024
"""The default upload limit of an arena (a server may set its own: ``ServerInfo``)."""
MAX_ARENA_REQUEST: Final = MAX_SUBMISSION_BYTES + 64 * 1024
"""The largest request message an arena server accepts: an upload at the limit plus room
for the rest of the request, so an upload just over the limit gets the arena's own readable
refusal rather than gRPC's RESOURCE_EXHAUSTED."""
MAX_ARENA_RESPONSE: Final = 64 * 1024 * 1024
"""The largest response the client takes (a leaderboard with a big crosstable)."""
REPLAY_CHUNK_BYTES: Final = 256 * 1024
"""Replays are streamed in chunks of at most this many bytes."""

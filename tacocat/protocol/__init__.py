"""The game protocol on the wire, shared by the bot's side and the referee's side.

``proto/tacocat/v1/game.proto`` is the one definition; its generated modules live in
:mod:`tacocat.protocol.proto.v1`. This package adds the codec (engine types <-> messages,
converted here and nowhere else), the stdio transport's length-prefixed frames, and the
limits both sides enforce. It imports the engine and protobuf, never grpc.

Exceptions::

    ProtocolError   a peer broke the protocol (bad frame, undecodable or unexpected message)
"""

# First: importing the engine decides whether the codec loads compiled or from source
# (tacocat/engine/_compiled.py), which must happen before it is found.
import tacocat.engine  # noqa: F401
from tacocat.engine import DEFAULT_TIME_LIMIT

from ._codec import (
    DECISION_FROM_PB,
    DECISION_TO_PB,
    FAULT_ERROR_CODE,
    FAULT_FROM_PB,
    FAULT_TO_PB,
    REASON_FROM_PB,
    REASON_TO_PB,
    ObservationDecoder,
    RequestEncoder,
    error_code_name,
    outcome_from_pb,
    outcome_to_pb,
    round_from_pb,
    round_to_pb,
    ruleset_from_pb,
    ruleset_to_pb,
    ruleset_to_pb_cached,
)
from ._errors import ProtocolError
from ._framing import (
    DEFAULT_ADDRESS,
    DEFAULT_PORT,
    HEADER_SIZE,
    MAX_ACTION_CARDS,
    MAX_BATCH,
    MAX_CLIENT_MESSAGE,
    MAX_SERVER_MESSAGE,
    PLAY_METHOD,
    PROTOCOL_VERSION,
    REFEREE_SERVICE,
    FrameBuffer,
    frame,
    read_frame,
)

__all__ = [
    "DECISION_FROM_PB", "DECISION_TO_PB", "DEFAULT_ADDRESS", "DEFAULT_PORT",
    "DEFAULT_TIME_LIMIT", "FAULT_ERROR_CODE", "FAULT_FROM_PB", "FAULT_TO_PB", "HEADER_SIZE",
    "MAX_ACTION_CARDS", "MAX_BATCH", "MAX_CLIENT_MESSAGE", "MAX_SERVER_MESSAGE", "PLAY_METHOD",
    "PROTOCOL_VERSION", "REASON_FROM_PB", "REASON_TO_PB", "REFEREE_SERVICE",
    "FrameBuffer", "ObservationDecoder", "ProtocolError", "RequestEncoder", "error_code_name",
    "frame", "outcome_from_pb", "outcome_to_pb", "read_frame", "round_from_pb", "round_to_pb",
    "ruleset_from_pb", "ruleset_to_pb", "ruleset_to_pb_cached",
]

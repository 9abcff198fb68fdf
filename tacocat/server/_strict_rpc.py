"""gRPC handlers that decode requests themselves: undecodable bytes are the client's error.

With the generated ``add_*Servicer_to_server``, gRPC decodes each request before the
servicer runs; bytes that do not parse make it log a traceback and answer an opaque
status. Here a service's handlers take raw bytes and decode them in the call, so a bad
request answers ``INVALID_ARGUMENT`` saying which message was expected, and logs nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from types import ModuleType
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError, Message

Context = grpc.aio.ServicerContext[Any, Any]


async def _decode(data: bytes, request_type: type[Message], context: Context) -> Message:
    try:
        return request_type.FromString(data)
    except DecodeError as exc:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                            f"the request is not a valid {request_type.DESCRIPTOR.full_name} "
                            f"message ({len(data)} bytes): {exc}")
        raise  # abort raises; this keeps type checkers sure


def _unary(impl: Callable[..., Any], request_type: type[Message]) -> Callable[..., Any]:
    async def call(data: bytes, context: Context) -> Any:
        return await impl(await _decode(data, request_type, context), context)
    return call


def _streaming(impl: Callable[..., AsyncIterator[Any]],
               request_type: type[Message]) -> Callable[..., AsyncIterator[Any]]:
    async def call(data: bytes, context: Context) -> AsyncIterator[Any]:
        async for item in impl(await _decode(data, request_type, context), context):
            yield item
    return call


def strict_handler(servicer: object, module: ModuleType, service: str) -> grpc.GenericRpcHandler:
    """Every method of ``service`` (described in the generated ``module``) on ``servicer``,
    taking raw bytes. Unary-unary and unary-stream methods only (all the arena has)."""
    descriptor = module.DESCRIPTOR.services_by_name[service.rsplit(".", 1)[-1]]
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in descriptor.methods:
        if method.client_streaming:
            raise ValueError(f"{method.full_name}: client streaming is not supported here")
        request_type = getattr(module, method.input_type.name)
        respond = getattr(module, method.output_type.name).SerializeToString
        impl = getattr(servicer, method.name)
        if method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                _streaming(impl, request_type), response_serializer=respond)
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                _unary(impl, request_type), response_serializer=respond)
    return grpc.method_handlers_generic_handler(descriptor.full_name, handlers)

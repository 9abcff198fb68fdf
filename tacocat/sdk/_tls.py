"""TLS for the SDK's gRPC clients: :class:`Tls` says what to trust and who to be.

``connect(bot, "arena.example.org:50051", token, tls=True)`` trusts the system's root
certificates; ``tls=Tls(ca="ca.pem")`` trusts a private CA instead; ``Tls(ca=...,
cert="me.pem", key="me.key")`` also presents a client certificate, for a server that asks for
one (``tacocat serve --tls-client-ca``). Files may be given as paths or as PEM bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

import grpc

from ._errors import SdkError

Pem: TypeAlias = str | Path | bytes
"""A PEM file's path, or its contents as bytes."""


@dataclass(frozen=True)
class Tls:
    """How a client speaks TLS.

    ``ca``: the root certificates to trust (default: the system's). ``cert`` and ``key``:
    this client's certificate (chain) and private key, for mutual TLS; both or neither.
    ``server_name``: the name the server's certificate must carry when it differs from the
    host in the address (e.g. connecting by IP to a certificate for a DNS name).
    """

    ca: Pem | None = None
    cert: Pem | None = None
    key: Pem | None = None
    server_name: str | None = None

    def __post_init__(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise SdkError("TLS: a client certificate needs its key and the key its "
                           "certificate; give both cert and key, or neither")

    def credentials(self) -> grpc.ChannelCredentials:
        """The channel credentials; :class:`SdkError` naming a file that cannot be read."""
        return grpc.ssl_channel_credentials(
            root_certificates=_read(self.ca, "CA certificates"),
            private_key=_read(self.key, "client key"),
            certificate_chain=_read(self.cert, "client certificate"))

    def channel_options(self) -> list[tuple[str, str]]:
        return ([("grpc.ssl_target_name_override", self.server_name)]
                if self.server_name else [])


TlsOption: TypeAlias = Tls | bool | None
"""What ``connect(tls=...)`` and ``ArenaClient(tls=...)`` take: a :class:`Tls`, ``True``
(TLS trusting the system's roots), or ``None``/``False`` (plaintext)."""


def connect_hint(secure: bool, cli: bool = False) -> str:
    """What to check when a connection cannot be made, TLS-wise: in Python's words, or with
    ``cli`` in the ``tacocat`` command's flags."""
    if not secure:
        return ("if the server speaks TLS, add --tls (--tls-ca CA.pem for a private CA)"
                if cli else "if the server speaks TLS, pass tls=True (tls=Tls(ca=...) for a "
                            "private CA)")
    if cli:
        return ("check the TLS settings: the server's certificate must be signed by the CA "
                "in --tls-ca for this host name (--tls-server-name when it carries another), "
                "and a server that requires client certificates needs --tls-cert and "
                "--tls-key")
    return ("check the TLS settings: the server's certificate must be signed by the CA given "
            "(tls=Tls(ca=...)) for this host name, and a server that requires client "
            "certificates needs cert= and key=")


def resolve_tls(tls: TlsOption) -> Tls | None:
    if tls is None or tls is False:
        return None
    if tls is True:
        return Tls()
    if isinstance(tls, Tls):
        return tls
    raise SdkError(f"tls must be a tacocat.sdk.Tls, True or None, not {type(tls).__name__}")


def _read(value: Pem | None, what: str) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    path = Path(value)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SdkError(f"TLS: cannot read the {what} file {str(path)!r}: {exc.strerror}") \
            from None
    if b"-----BEGIN " not in data:
        raise SdkError(f"TLS: the {what} file {str(path)!r} is not PEM (no '-----BEGIN' line)")
    return data

"""TLS for the gRPC port: a certificate chain and key, and optionally a client CA (mutual TLS).

``tacocat serve --tls-cert server.pem --tls-key server.key [--tls-client-ca clients.pem]``.
With a client CA every connection must present a certificate signed by it; the TLS handshake
fails otherwise, before any call is made. docs/SECURITY.md shows how to make the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import grpc

from ._errors import ConfigError


@dataclass(frozen=True)
class ServerTls:
    """Where the server's TLS files are (PEM). ``cert`` may hold the whole chain, leaf
    first; ``client_ca``, when given, makes client certificates mandatory."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    @property
    def mutual(self) -> bool:
        return self.client_ca is not None

    def credentials(self) -> grpc.ServerCredentials:
        """The server credentials; :class:`ConfigError` naming the file that is unusable."""
        chain = read_pem(self.cert, "--tls-cert", "CERTIFICATE")
        key = read_pem(self.key, "--tls-key", "PRIVATE KEY")
        client_ca = (read_pem(self.client_ca, "--tls-client-ca", "CERTIFICATE")
                     if self.client_ca is not None else None)
        try:
            return grpc.ssl_server_credentials([(key, chain)], root_certificates=client_ca,
                                               require_client_auth=client_ca is not None)
        except (ValueError, TypeError, RuntimeError) as exc:
            raise ConfigError(f"TLS: {exc}") from exc

    def describe(self) -> str:
        return "TLS, client certificates required" if self.mutual else "TLS"


def read_pem(path: Path, what: str, kind: str) -> bytes:
    """The PEM file's bytes, or :class:`ConfigError` saying why they cannot be used."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{what} {str(path)!r}: cannot read it ({exc.strerror})") from None
    if b"-----BEGIN " not in data or kind.encode() + b"-----" not in data:
        raise ConfigError(
            f"{what} {str(path)!r} holds no PEM {kind.lower()} (a '-----BEGIN ...{kind}-----' "
            "block); docs/SECURITY.md shows how to make one")
    return data

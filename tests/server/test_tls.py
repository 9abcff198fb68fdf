"""TLS and mutual TLS on the gRPC port, with a throwaway CA made by ``cryptography``: real
handshakes over loopback, the arena API and the referee on one port, and ``tacocat serve``
with its --tls-* flags as a real process."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import redis as redis_py

from tacocat.arena import Arena
from tacocat.cli import main as cli_main
from tacocat.engine.bots import GreedyBot
from tacocat.sdk import (
    ArenaClient,
    ConnectionLostError,
    SdkError,
    ServerUnavailableError,
    Tls,
    connect,
)
from tacocat.server import RefereeConfig, RefereeServer, ServerTls, StartError
from tests.live_referee import ROOT

from .arena_server import ServerThread, serve_in_thread
from .tls_certs import Ca, Issued, make_ca


@dataclass(frozen=True)
class Pki:
    ca: Ca
    server: Issued
    alice: Issued
    other_ca: Ca
    mallory: Issued  # a client certificate from a CA the server does not trust


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca = make_ca(folder / "ca")
    other = make_ca(folder / "other", "some other CA")
    return Pki(ca, ca.issue(folder, "server", server=True),
               ca.issue(folder, "alice", server=False), other,
               other.issue(folder, "mallory", server=False))


@pytest.fixture(autouse=True)
def _no_ambient_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("TACOCAT_TOKEN", "TACOCAT_TOKEN_FILE", "TACOCAT_ADDRESS", "TACOCAT_TLS_CA",
                 "TACOCAT_TLS_CERT", "TACOCAT_TLS_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@contextlib.contextmanager
def tls_server(redis: redis_py.Redis, tls: ServerTls) -> Iterator[tuple[ServerThread, str]]:
    arena = Arena(redis)
    token = arena.users.bootstrap_admin()
    assert token is not None
    with serve_in_thread(arena, RefereeConfig(tls=tls)) as server:
        yield server, token


def test_tls_serves_both_services_and_refuses_plaintext(redis: redis_py.Redis, pki: Pki) -> None:
    with tls_server(redis, ServerTls(pki.server.cert, pki.server.key)) as (server, token):
        trusted = Tls(ca=pki.ca.cert)
        with ArenaClient(server.address, token, tls=trusted, timeout=10) as client:
            assert client.whoami().name == "admin"
        results = connect(GreedyBot(), server.address, tls=trusted, opponent="house:random")
        assert len(results) == 1
        # The same files as bytes, and by DNS name through the certificate's SAN.
        as_bytes = Tls(ca=pki.ca.cert.read_bytes())
        with ArenaClient(f"localhost:{server.server.port}", token, tls=as_bytes,
                         timeout=10) as client:
            assert client.server_info().referee

        # A plaintext client cannot talk to a TLS port, and is told what to check.
        with ArenaClient(server.address, token, timeout=5) as plain, \
                pytest.raises(ServerUnavailableError) as caught:
            plain.whoami()
        assert caught.value.status == "UNAVAILABLE"
        assert "speaks TLS" in str(caught.value) and "tls=True" in str(caught.value)
        with pytest.raises(ConnectionLostError) as lost:
            connect(GreedyBot(), server.address, opponent="house:random", timeout=5)
        assert lost.value.status == "UNAVAILABLE" and "tls=" in str(lost.value)

        # TLS trusting the wrong CA (or the system's roots) refuses the server.
        for tls in (Tls(ca=pki.other_ca.cert), True):
            with ArenaClient(server.address, token, tls=tls, timeout=5) as doubtful, \
                    pytest.raises(ServerUnavailableError) as caught:
                doubtful.whoami()
            assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
            assert "signed by the CA given" in str(caught.value)


def test_mutual_tls_requires_a_client_certificate_from_the_ca(redis: redis_py.Redis,
                                                              pki: Pki) -> None:
    tls = ServerTls(pki.server.cert, pki.server.key, client_ca=pki.ca.cert)
    assert tls.describe() == "TLS, client certificates required"
    with tls_server(redis, tls) as (server, token):
        alice = Tls(ca=pki.ca.cert, cert=pki.alice.cert, key=pki.alice.key)
        with ArenaClient(server.address, token, tls=alice, timeout=10) as client:
            assert client.whoami().name == "admin"  # the certificate admits, the token names
        assert len(connect(GreedyBot(), server.address, tls=alice,
                           opponent="house:random")) == 1
        refused = {
            "no client certificate": Tls(ca=pki.ca.cert),
            "a certificate from another CA": Tls(ca=pki.ca.cert, cert=pki.mallory.cert,
                                                 key=pki.mallory.key),
            "plaintext": None,
        }
        for why, option in refused.items():
            with ArenaClient(server.address, token, tls=option, timeout=5) as client, \
                    pytest.raises(ServerUnavailableError) as caught:
                client.whoami()
            assert caught.value.status == "UNAVAILABLE", why
            with pytest.raises(ConnectionLostError) as lost:
                connect(GreedyBot(), server.address, tls=option, opponent="house:random",
                        timeout=5)
            assert lost.value.status == "UNAVAILABLE", why
            assert "cert= and key=" in str(lost.value) or option is None, why


def test_unusable_tls_files_are_named(tmp_path: Path, pki: Pki) -> None:
    missing = tmp_path / "missing.pem"
    with pytest.raises(SdkError, match=r"cannot read the CA certificates file .*missing\.pem"):
        Tls(ca=missing).credentials()
    with pytest.raises(SdkError, match="give both cert and key"):
        Tls(cert=pki.alice.cert)
    not_pem = tmp_path / "junk.pem"
    not_pem.write_text("hello\n")
    with pytest.raises(SdkError, match="is not PEM"):
        Tls(ca=not_pem).credentials()

    async def start(tls: ServerTls) -> None:
        await RefereeServer(RefereeConfig(port=0, tls=tls)).start()

    for tls, words in [
        (ServerTls(missing, pki.server.key), r"--tls-cert .*missing\.pem.*cannot read"),
        (ServerTls(pki.server.cert, pki.server.cert), r"--tls-key .* holds no PEM private key"),
        (ServerTls(pki.server.cert, pki.server.key, not_pem), r"--tls-client-ca .*junk\.pem"),
    ]:
        with pytest.raises(StartError, match=words):
            asyncio.run(start(tls))
    # tacocat serve checks the files before it starts anything (exit status 2).
    assert cli_main(["serve", "--no-arena", "--port", "0", "--tls-cert", str(missing),
                     "--tls-key", str(pki.server.key)]) == 2
    assert cli_main(["serve", "--no-arena", "--port", "0", "--tls-cert",
                     str(pki.server.cert)]) == 2
    assert cli_main(["serve", "--no-arena", "--port", "0", "--tls-client-ca",
                     str(pki.ca.cert)]) == 2


def test_tacocat_serve_with_mutual_tls_and_the_cli_flags(
        redis_url: str, redis: redis_py.Redis, pki: Pki, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tacocat.cli", "serve", "--port", "0", "--no-web",
         "--log-level", "WARNING", "--grace", "0", "--redis-url", redis_url,
         "--data-dir", str(data), "--tls-cert", str(pki.server.cert), "--tls-key",
         str(pki.server.key), "--tls-client-ca", str(pki.ca.cert)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = ""
        while "listening on" not in line:
            line = proc.stdout.readline()
            assert line, f"tacocat serve did not start: {proc.stderr.read() if proc.stderr else ''}"
        address = line.rsplit(" ", 1)[1].strip()
        token = (data / "admin.token").read_text().strip()
        flags = ["--server", address, "--token", token, "--tls-ca", str(pki.ca.cert),
                 "--tls-cert", str(pki.alice.cert), "--tls-key", str(pki.alice.key)]
        capsys.readouterr()
        assert cli_main(["ladder", "create", "main", *flags]) == 0
        assert cli_main(["ladder", "list", *flags]) == 0
        assert "main" in capsys.readouterr().out
        # Without the client certificate the CLI is refused and says what to check.
        assert cli_main(["ladder", "list", *flags[:6]]) == 1
        err = capsys.readouterr().err
        assert "cannot reach the arena server" in err and "--tls-cert" in err
        assert cli_main(["ladder", "list", "--server", address]) == 1
        assert "speaks TLS" in capsys.readouterr().err
        alice = Tls(ca=pki.ca.cert, cert=pki.alice.cert, key=pki.alice.key)
        assert len(connect(GreedyBot(), address, tls=alice, opponent="house:random")) == 1
    finally:
        proc.terminate()
        proc.wait(15)
    assert proc.returncode == 0


def test_a_plaintext_channel_never_gets_ready(redis: redis_py.Redis, pki: Pki) -> None:
    # The raw gRPC view: the handshake fails, so no call ever reaches a handler.
    with tls_server(redis, ServerTls(pki.server.cert, pki.server.key)) as (server, _), \
            grpc.insecure_channel(server.address) as channel, \
            pytest.raises(grpc.FutureTimeoutError):
        grpc.channel_ready_future(channel).result(timeout=1.0)

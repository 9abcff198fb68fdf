"""``tacocat up``: the whole arena on this machine, and a demo round robin on it.

Starts the embedded Redis (data in ``.tacocat/data``), then ``tacocat serve`` and
``tacocat worker`` as child processes (logs in ``.tacocat/logs``), submits the house bots as
the user ``house``'s bots to a demo ladder (again on a re-run only what changed), shows a
progress bar while the round robin plays, prints the leaderboard and keeps running until
Ctrl-C (``--once``: stops there). Ctrl-C (or SIGTERM, SIGHUP) at any point stops everything
it started: the workers, then the server, then Redis.

The children run in process groups of their own, so a Ctrl-C reaches only this process,
which then stops them in order (a SIGTERM to each group, SIGKILL after a grace period). They
also get the parent-death signal, so they stop if this process is killed outright.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, TextIO

from tacocat.sdk import DEFAULT_PORT, SdkError
from tacocat.sdk.arena import (
    ADMIN_TOKEN_FILE,
    DEFAULT_DATA_DIR,
    AlreadyExistsError,
    ArenaClient,
    AuthError,
    LadderStatus,
    LeaderboardUpdate,
    VersionStatus,
)

from ._arena_cmds import leaderboard_text, status_line
from ._house_bots import HOUSE_USER, submit_house_bots
from ._output import plural

DESCRIPTION = f"""\
Run the whole arena on this machine and play a demo round robin on it:

  1. the embedded Redis, persisting to --data-dir (default {DEFAULT_DATA_DIR});
  2. `tacocat serve` (referee + arena API on --port) and `tacocat worker --workers N`,
     as child processes logging to .tacocat/logs/;
  3. the house bots (random, greedy, strong) submitted as user bots of the user `house` to
     the ladder --ladder (default demo), each smoke-tested in the sandbox like any upload;
  4. a progress bar while the round robin plays, then the leaderboard and the link to
     the web UI (--web-port, default 8080);
  5. then it keeps running, like `docker compose up`, taking new bots into the ladder,
     and prints the commands to submit one; --once stops after step 4 instead.

Ctrl-C (or SIGTERM, SIGHUP) stops every process it started. Re-running is safe: the ladder
and the bots are reused, and only new games are played (a finished ladder just shows its
standings; pass --ladder NAME for a fresh one). The admin token is printed on the first run
and kept in DATA_DIR/{ADMIN_TOKEN_FILE} (mode 0600), where the other commands find it.

examples:
  tacocat up                                  # the quick start: 3,000 games, under a minute
  tacocat up --once                           # play the demo, print, stop (scripts)
  tacocat up --ladder bigger --games-per-pairing 4000 --workers 2
"""

HOUSE_TOKEN_FILE: Final = "house.token"
_LISTENING: Final = re.compile(r"referee listening on (\S+)")
_PR_SET_PDEATHSIG: Final = 1
_STOP_SECONDS: Final = 15.0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("up", help="run the arena locally with a demo ladder",
                       description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter)
    # Big matches: a match starts two sandboxed bot processes (~0.14 s each on a quiet
    # machine), which 200 games amortise and 20 did not (docs/WORKER.md, "The demo").
    p.add_argument("--games-per-pairing", type=int, default=1000, metavar="N",
                   help="games each pair of house bots plays (default 1000)")
    p.add_argument("--games-per-match", type=int, default=200, metavar="N",
                   help="games per match (even, divides the above; default 200)")
    p.add_argument("--ladder", default="demo", help="the demo ladder's name (default demo)")
    p.add_argument("--workers", type=int, default=2, metavar="N",
                   help="worker processes (default 2)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"the server's port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--web-port", type=int, default=8080, metavar="PORT",
                   help="the web UI's port (default 8080; 0 picks a free one)")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, metavar="DIR",
                   help=f"Redis data and tokens (default {DEFAULT_DATA_DIR}); logs go to "
                        "its parent's logs/")
    p.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""), metavar="URL",
                   help="use this Redis instead of the embedded one (default $REDIS_URL)")
    p.add_argument("--once", action="store_true",
                   help="play the demo, print the leaderboard and stop (for scripts); by "
                        "default the arena keeps running until Ctrl-C")
    p.add_argument("--keep-running", action="store_true", help=argparse.SUPPRESS)  # the default
    p.add_argument("--timeout", type=float, default=900.0, metavar="SECONDS",
                   help="give up if the round robin has not finished by then (default 900)")
    p.add_argument("--insecure-no-sandbox", action="store_true",
                   help="let the workers run bots without the sandbox (trusted bots only)")
    p.set_defaults(run=run)


# ------------------------------------------------------------------------------- the run


class UpError(Exception):
    """The demo cannot go on; the message says why and what to look at."""


def run(args: argparse.Namespace) -> int:
    if args.games_per_pairing < 2 or args.workers < 1:
        print("tacocat up: --games-per-pairing must be at least 2 and --workers at least 1",
              file=sys.stderr)
        return 2
    arena = LocalArena(args)
    try:
        arena.start()
        demo(args, arena)
        if not args.once:
            print(keep_running_text(args, arena.address), flush=True)
            arena.wait()
        return 0
    except UpError as exc:
        print(f"\ntacocat up: {exc}", file=sys.stderr)
        return 1
    except SdkError as exc:
        print(f"\ntacocat up: {exc}", file=sys.stderr)
        arena.show_logs()
        return 1
    except KeyboardInterrupt:
        print("\ntacocat up: interrupted", file=sys.stderr)
        return 130
    finally:
        with _no_interrupts():
            arena.stop()


def keep_running_text(args: argparse.Namespace, address: str) -> str:
    """What to do with the arena now that it is up: commands that work pasted as printed,
    in another terminal in this folder, that make a user and submit as that user (a bot
    submitted with the admin token would belong to the admin)."""
    admin = "" if Path(args.data_dir) == DEFAULT_DATA_DIR else (
        f"  export TACOCAT_TOKEN_FILE={Path(args.data_dir).absolute() / ADMIN_TOKEN_FILE}\n")
    return (f"\nthe arena keeps running at {address}; Ctrl-C stops it (--once: play the demo "
            "and exit).\nEnter a bot of your own, from another terminal in this folder:\n"
            f"  export TACOCAT_ADDRESS={address}\n"
            f"{admin}"
            "  tacocat user create alice          # as the admin (the token up saved)\n"
            "  export TACOCAT_TOKEN=$(tacocat token create --user alice)   # now you are "
            "alice\n"
            "  tacocat new-bot mybot              # writes mybot/mybot.py and its test\n"
            f"  tacocat submit mybot/mybot.py --ladder {args.ladder} --wait\n"
            f"  tacocat leaderboard {args.ladder} --watch")


@contextlib.contextmanager
def _no_interrupts() -> Iterator[None]:
    """Shield the shutdown from another Ctrl-C, SIGTERM or SIGHUP, which would abandon
    children halfway; it is bounded anyway (SIGKILL after a grace period)."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN)
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def demo(args: argparse.Namespace, arena: LocalArena) -> None:
    with ArenaClient(arena.address, arena.admin_token) as admin:
        admin.wait_until_ready(20.0)
        ladder = ensure_ladder(admin, args)
        house = house_token(admin, args.data_dir)
        with ArenaClient(arena.address, house) as client:
            versions = submit_house_bots(client, ladder)
            active = wait_for_smoke_tests(client, versions, arena)
            if len(active) < 2:
                raise UpError("fewer than two house bots passed their smoke games: nothing to "
                              f"play; see {arena.logs / 'worker.log'}")
            final = follow(client, ladder, len(active), arena, args.timeout)
            print()
            print(leaderboard_text(final.leaderboard))
            print(status_line(final.status))
            web = client.server_info().web_url
            if web:
                print(f"\nweb leaderboard: {web.rstrip('/')}/ladders/{ladder}")


# ------------------------------------------------------------------------------- processes


@dataclass
class LocalArena:
    """Redis, the server and the workers of ``tacocat up``, started and stopped in order."""

    args: argparse.Namespace
    address: str = ""
    admin_token: str | None = None
    redis_url: str = ""
    children: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _valkey: object | None = None

    @property
    def data_dir(self) -> Path:
        return Path(self.args.data_dir)

    @property
    def logs(self) -> Path:
        return self.data_dir.absolute().parent / "logs"

    def start(self) -> None:
        # the server extra
        from tacocat.arena import ArenaError, EmbeddedValkey, check_redis_url  # noqa: PLC0415

        self.logs.mkdir(parents=True, exist_ok=True)
        try:
            if self.args.redis_url:
                check_redis_url(self.args.redis_url, ping=True)
                self.redis_url = self.args.redis_url
                where = "Redis " + self.redis_url.split("@")[-1]
            else:
                server = EmbeddedValkey(self.data_dir)
                server.start()
                self._valkey = server
                self.redis_url = server.url
                where = f"embedded Redis in {self.data_dir}"
            self.admin_token = bootstrap(self.redis_url, self.data_dir)
        except ArenaError as exc:
            raise UpError(str(exc)) from None
        print(f"tacocat up: {where}; logs in {self.logs}", flush=True)
        self._spawn("serve", ["serve", "--host", "127.0.0.1", "--port", str(self.args.port),
                              "--web-port", str(self.args.web_port), "--redis-url",
                              self.redis_url, "--data-dir", str(self.data_dir)])
        self.address = self._wait_for_server()
        # A short grace: a match cut off at shutdown is simply played again next time.
        worker = ["worker", "--workers", str(self.args.workers), "--redis-url", self.redis_url,
                  "--data-dir", str(self.data_dir), "--grace", "3"]
        if self.args.insecure_no_sandbox:
            worker.append("--insecure-no-sandbox")
        else:
            from tacocat.worker.sandbox import check_host  # noqa: PLC0415 - the server extra

            report = check_host()
            if not report.ready:
                # The house's own bots still play (outside the sandbox, with its limits);
                # submitted ones wait for a worker that can bound them.
                worker += ["--trust-owner", HOUSE_USER]
                print("tacocat up: this machine cannot sandbox submitted bots, so the demo "
                      "plays the house bots outside the sandbox and submitted bots wait. "
                      "To run them, fix:\n" + "\n".join(
                          f"  {c.name}: {c.found}" + (f"\n    fix: {c.fix}" if c.fix else "")
                          for c in report.missing())
                      + "\n  (`tacocat worker --check` shows the whole report)",
                      file=sys.stderr, flush=True)
        self._spawn("worker", worker)
        print(f"tacocat up: server at {self.address}, {self.args.workers} workers", flush=True)

    def _spawn(self, name: str, arguments: list[str]) -> None:
        log = (self.logs / f"{name}.log").open("ab")
        with log:
            log.write(f"\n--- tacocat up: starting tacocat {' '.join(arguments)} at "
                      f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
            log.flush()
            self.children[name] = subprocess.Popen(
                [sys.executable, "-m", "tacocat.cli", *arguments],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                process_group=0, preexec_fn=_die_with_parent,  # noqa: PLW1509 - no threads yet
            )

    def _wait_for_server(self, timeout: float = 30.0) -> str:
        log_path = self.logs / "serve.log"
        start = log_path.stat().st_size if log_path.exists() else 0
        deadline = time.monotonic() + timeout
        process = self.children["serve"]
        while time.monotonic() < deadline:
            text = _read_from(log_path, start)
            found = _LISTENING.findall(text)
            if found:
                return str(found[-1])
            if process.poll() is not None:
                ports = f"port {self.args.port} or web port {self.args.web_port}"
                raise UpError(f"tacocat serve exited with code {process.returncode}:\n"
                              f"{_tail(text)}\n({ports} taken? try --port 0 --web-port 0)")
            time.sleep(0.05)
        raise UpError(f"tacocat serve did not start within {timeout:g} s; see {log_path}")

    def check(self) -> None:
        """Raise :class:`UpError` if a child died."""
        for name, process in self.children.items():
            if process.poll() is not None:
                raise UpError(f"tacocat {name} exited with code {process.returncode}:\n"
                              f"{_tail(_read_from(self.logs / f'{name}.log', 0))}")

    def wait(self) -> None:
        while True:
            self.check()
            time.sleep(0.5)

    def show_logs(self) -> None:
        for name in self.children:
            print(f"(tacocat {name}'s log: {self.logs / f'{name}.log'})", file=sys.stderr)

    def stop(self) -> None:
        """The workers first (their running matches are re-run later), then the server,
        then Redis; each child's whole process group, SIGKILLed after a grace period."""
        for name in ("worker", "serve"):
            process = self.children.pop(name, None)
            if process is not None:
                _stop_group(process, _STOP_SECONDS)
        server, self._valkey = self._valkey, None
        if server is not None:
            from tacocat.arena import EmbeddedValkey  # noqa: PLC0415

            assert isinstance(server, EmbeddedValkey)
            try:
                server.stop()
            finally:
                server.kill()


def _die_with_parent() -> None:
    """In the child: SIGTERM when ``tacocat up`` dies, however it dies (Linux)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _stop_group(process: subprocess.Popen[bytes], grace: float) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace)
    # Whatever is left of the group (bots, RQ work horses) goes too.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _read_from(path: Path, offset: int) -> str:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


# ------------------------------------------------------------------------------- the demo


def bootstrap(redis_url: str, data_dir: Path) -> str | None:
    """The admin token (created and printed on the first run, recovered into the token file
    if it was lost: this process owns the Redis)."""
    import redis  # noqa: PLC0415

    from tacocat.arena import Arena  # noqa: PLC0415
    from tacocat.server import bootstrap_admin_token  # noqa: PLC0415

    client = redis.Redis.from_url(redis_url)
    try:
        admin = bootstrap_admin_token(Arena(client), data_dir / ADMIN_TOKEN_FILE, recover=True)
    finally:
        client.close()
    if admin.created and admin.token is not None:
        print(f"tacocat up: the admin token (shown once; kept in {admin.path}, mode 0600):\n"
              f"  {admin.token}", flush=True)
    return admin.token


def ensure_ladder(admin: ArenaClient, args: argparse.Namespace) -> str:
    try:
        ladder = admin.create_ladder(args.ladder, games_per_pairing=args.games_per_pairing,
                                     games_per_match=args.games_per_match)
        print(f"ladder {ladder.name}: {ladder.games_per_pairing} games per pairing, matches of "
              f"{ladder.games_per_match}", flush=True)
    except AlreadyExistsError:
        ladder = admin.ladder(args.ladder)
        note = ""
        if (ladder.games_per_pairing, ladder.games_per_match) != (args.games_per_pairing,
                                                                  args.games_per_match):
            note = " (its settings stay; use --ladder NAME for a new ladder)"
        print(f"ladder {ladder.name} exists: {ladder.games_per_pairing} games per pairing, "
              f"matches of {ladder.games_per_match}{note}", flush=True)
    return ladder.name


def house_token(admin: ArenaClient, data_dir: Path) -> str:
    """A token of the user ``house`` (created with it on the first run, kept in a 0600 file
    next to the admin token)."""
    from tacocat.server import read_token_file, write_token_file  # noqa: PLC0415

    path = data_dir / HOUSE_TOKEN_FILE
    saved = read_token_file(path)
    if saved is not None:
        with ArenaClient(admin.address, saved) as probe:
            try:
                if probe.whoami().name == HOUSE_USER:
                    return saved
            except AuthError:
                pass
    with contextlib.suppress(AlreadyExistsError):
        admin.create_user(HOUSE_USER)
    token = admin.create_token(HOUSE_USER, label="tacocat up").token
    write_token_file(path, token)
    return token


def wait_for_smoke_tests(client: ArenaClient, versions: list[str], arena: LocalArena,
                         timeout: float = 180.0) -> list[str]:
    """Wait until every version is decided; the active ones."""
    deadline = time.monotonic() + timeout
    shown = ""
    while True:
        arena.check()
        states = {}
        for version in versions:
            bot = version.rpartition("@")[0]
            found = next(v for v in client.list_versions(bot) if v.id == version)
            states[version] = found
        pending = [v for v, s in states.items() if s.status is VersionStatus.PENDING]
        line = f"smoke games: {len(versions) - len(pending)}/{len(versions)} decided"
        if line != shown:
            print(line, flush=True)
            shown = line
        if not pending:
            break
        if time.monotonic() > deadline:
            raise UpError(f"no smoke game decided {', '.join(pending)} within {timeout:g} s; "
                          f"see {arena.logs / 'worker.log'}")
        time.sleep(0.3)
    for version, state in states.items():
        if state.status is VersionStatus.REJECTED:
            print(f"  {version} was rejected: {state.reason}", flush=True)
    return [v for v, s in states.items() if s.status is VersionStatus.ACTIVE]


def follow(client: ArenaClient, ladder: str, playing: int, arena: LocalArena,
           timeout: float) -> LeaderboardUpdate:
    """Show a progress bar from the ladder's live updates until its round robin is done."""
    updates: queue.Queue[LeaderboardUpdate | BaseException] = queue.Queue()
    stop = threading.Event()

    def listen() -> None:
        watch = client.watch(ladder)
        try:
            for update in watch:
                updates.put(update)
                if stop.is_set():
                    return
        except BaseException as exc:  # handed to the main thread
            updates.put(exc)
        finally:
            watch.close()

    threading.Thread(target=listen, daemon=True, name="tacocat-up-watch").start()
    deadline = time.monotonic() + timeout
    bar = _Bar(f"ladder {ladder}")
    latest: LeaderboardUpdate | None = None
    try:
        while True:
            arena.check()
            try:
                item = updates.get(timeout=0.5)
            except queue.Empty:
                item = None
            if isinstance(item, BaseException):
                raise item
            if item is not None:
                latest = item
                bar.show(item.status)
                if _done(item.status, playing):
                    return item
            if time.monotonic() > deadline:
                raise UpError(f"the round robin did not finish within {timeout:g} s "
                              f"({status_line(latest.status) if latest else 'no updates'}); "
                              f"see {arena.logs / 'worker.log'}")
    finally:
        stop.set()
        bar.close()


class _Bar:
    """Games toward the ladder's target: a redrawn bar on a terminal, else a line per
    change (at most every few seconds)."""

    def __init__(self, label: str, stream: TextIO = sys.stdout) -> None:
        self.label = label
        self.stream = stream
        self.tty = stream.isatty()
        self.first: tuple[float, int] | None = None
        self.last_line = 0.0
        self.drawn = False

    def show(self, status: LadderStatus) -> None:
        done, total = status.games_toward_target, max(status.games_target, 1)
        now = time.monotonic()
        if self.first is None:
            self.first = (now, done)
        since, start = self.first
        rate = (done - start) / (now - since) if now > since and done > start else 0.0
        share = min(done / total, 1.0)
        text = (f"{self.label}: {done}/{total} games ({share:.0%})"
                + (f", {rate:.0f}/s" if rate else "")
                + f" · round {status.rounds_completed}/{status.rounds}"
                + f" · {plural(status.matches_pending, 'match', 'matches')} queued")
        if self.tty:
            width = 30
            filled = int(share * width)
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {text}\033[K")
            self.drawn = True
        elif now - self.last_line >= 3.0 or status.complete:
            self.stream.write(text + "\n")
            self.last_line = now
        self.stream.flush()

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def _done(status: LadderStatus, playing: int) -> bool:
    return status.playing >= playing and status.complete


def _note(status: LadderStatus) -> str:
    return f"· round {status.rounds_completed}/{status.rounds} · " \
           f"{plural(status.matches_pending, 'match', 'matches')} queued"


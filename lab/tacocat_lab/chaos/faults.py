"""The faults: each takes a :class:`~tacocat_lab.chaos.cluster.Cluster` whose ladder
(:class:`~tacocat_lab.chaos.ladder.Ladder`) has started, injects its fault while matches run,
waits for the ladder to finish and returns its :class:`~tacocat_lab.chaos.ladder.Counts`.
"""

from __future__ import annotations

import contextlib
import errno
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from tacocat.arena.recording import read_log
from tacocat.worker import IDLE_SWEEP_EVERY, match_folders_of
from tacocat.worker.queue import worker_stats

from .cluster import Cluster, WorkerHost
from .ladder import LADDER, Counts, Ladder, bot_source, recorded_at
from .procs import ChaosError, alive, children_of, cmdline, parent, signal_all, wait_for

Say = Callable[[str], None]


# -- the faults ----------------------------------------------------------------------------------


def kill_workers(cluster: Cluster, ladder: Ladder, kills: int, rng: random.Random, say: Say,
                 *, timeout: float = 600) -> Counts:
    """Fault 1: SIGKILL a random supervisor, RQ worker or work horse ``kills`` times at
    random moments; a killed supervisor is started again (as systemd would), the others are
    restarted by their parents. Recovery: from a kill to the victim's matches recorded."""
    counts_by_role = {"supervisor": 0, "rq_worker": 0, "horse": 0}
    victims: list[tuple[float, list[str]]] = []
    horses: set[int] = set()  # killed, or killed with their worker
    done_kills = 0
    while done_kills < kills and not ladder.done():
        time.sleep(rng.uniform(0.2, 1.2))
        for host in cluster.workers.values():
            if host.supervisor is None:  # exited by itself: systemd would start it again
                cluster.start_worker(host.host)
        # The role first, then a process in it: right after a kill only supervisors exist
        # for a while (a loaded machine starts Python slowly), and picking among what
        # exists would make nearly every kill a supervisor's.
        role = rng.choice(sorted(counts_by_role))
        found = _victims(cluster, role, rng, wait=5.0) or _victims(cluster, "supervisor", rng)
        if found is None:
            continue
        host, victim = found
        role = role if victim != host.supervisor else "supervisor"
        rq = host.rq_workers() if role == "supervisor" else \
            [victim] if role == "rq_worker" else [parent(victim)]
        matches = cluster.matches_of(rq)
        horses.update([victim] if role == "horse" else
                      [h for w in rq for h in children_of(w) if parent(h) == w])
        signal_all([victim], signal.SIGKILL)
        at = time.time()
        done_kills += 1
        counts_by_role[role] += 1
        say(f"kill {done_kills}/{kills}: {role} {victim} on {host.host}"
            + (f" (running {', '.join(matches)})" if matches else " (idle)"))
        if role == "supervisor":
            wait_for(lambda h=host: h.proc is not None and h.proc.poll() is not None, 10,  # type: ignore[misc]
                     "the killed supervisor to be reaped")
            cluster.start_worker(host.host)
        if matches:
            victims.append((at, matches))
    ladder.wait_done(timeout)
    recoveries = [when - at for at, matches in victims
                  if (when := recorded_at(ladder, matches)) is not None]
    counts = ladder.counts("kill")
    counts.injections = done_kills
    counts.recovery_seconds = recoveries
    time.sleep(IDLE_SWEEP_EVERY + 2)  # the idle supervisors' sweep, with slack
    counts.notes = {"by_role": counts_by_role,
                    "supervisor_starts": {h.host: h.starts for h in cluster.workers.values()},
                    # Both bots' sources, left behind by a killed horse: target none.
                    "match_folders_left": _folders_of(horses)}
    return counts


def _folders_of(pids: set[int]) -> list[str]:
    """The match folders still on disk of the processes ``pids`` (all dead by now)."""
    return sorted(f.name for pid in pids for f in match_folders_of(pid))


def _victims(cluster: Cluster, role: str, rng: random.Random,
             wait: float = 0.0) -> tuple[WorkerHost, int] | None:
    """A random host's random process in ``role`` (supervisor, rq_worker, horse), waiting
    up to ``wait`` seconds for one to exist."""
    def pick() -> tuple[WorkerHost, int] | None:
        hosts = list(cluster.workers.values())
        rng.shuffle(hosts)
        for host in hosts:
            pids = {"supervisor": [host.supervisor] if host.supervisor else [],
                    "rq_worker": host.rq_workers(), "horse": host.horses()}[role]
            if pids:
                return host, rng.choice(pids)
        return None
    deadline = time.monotonic() + wait
    while (found := pick()) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _busy_worker(cluster: Cluster, timeout: float = 60) -> tuple[WorkerHost, list[str]]:
    """A worker host that is not the dispatcher, once its match's games are under way (both
    bots up): (host, its matches).

    Not the dispatcher: a stalled dispatcher also stalls the orphan sweep until its lock's
    TTL runs out, which is a different, slower fault than the one under test."""
    def busy() -> tuple[WorkerHost, list[str]] | None:
        chief = cluster.dispatcher_host()
        for host in cluster.workers.values():
            bots = [p for h in host.horses() for p in children_of(h)
                    if "tacocat.sdk.host" in cmdline(p)]
            if host.host != chief and len(bots) >= 2 \
                    and (matches := cluster.matches_of(host.rq_workers())):
                return host, matches
        return None
    return wait_for(busy, timeout, "a busy worker host that is not the dispatcher")


def _rq_jobs_done(cluster: Cluster, rq_pid: int) -> int:
    """How many jobs the RQ worker process ``rq_pid`` finished, as RQ counts them."""
    from rq import Worker  # noqa: PLC0415

    for worker in Worker.all(connection=cluster.redis):
        if f"-{rq_pid}-" in worker.name:
            return int(worker.successful_job_count) + int(worker.failed_job_count)
    return -1


def _stall(cluster: Cluster, ladder: Ladder, fault: str, seconds: float, say: Say,
           begin: Callable[[WorkerHost], None], end: Callable[[WorkerHost], None],
           timeout: float) -> Counts:
    """Faults 2 and 3: stall a busy worker host for ``seconds`` (longer than the lease),
    then let it go on. Its match is re-enqueued and recorded once: by the re-run elsewhere
    (the stalled run's late result is then refused) or, if the stalled run finished first,
    by it (the re-run is then skipped or refused). The stalled worker goes on by itself:
    same processes, and it finishes its run."""
    host, matches = _busy_worker(cluster)
    rq = host.rq_workers()
    tree = host.tree()
    jobs_before = {pid: _rq_jobs_done(cluster, pid) for pid in rq}
    began = time.time()
    begin(host)
    say(f"{fault}: {host.host} stalled for {seconds:.1f} s while running {', '.join(matches)}")
    time.sleep(seconds)
    end(host)
    say(f"{fault}: {host.host} going on")
    recovered = ladder.wait_recorded(matches, timeout)
    wait_for(lambda: all(_rq_jobs_done(cluster, p) > jobs_before[p] for p in rq), timeout,
             f"the stalled worker on {host.host} to finish its run")
    ladder.wait_done(timeout)
    stalled_won = [m for m in matches if any(
        f"-{pid}-" in (ladder.arena.matches.get(m).result.worker  # type: ignore[union-attr]
                       ) for pid in rq)]
    counts = ladder.counts(fault)
    counts.injections = 1
    # From the stall to the match recorded (by whichever run): how long it was held up.
    counts.recovery_seconds = [recovered - began]
    logs = "".join(h.text for h in cluster.workers.values())
    counts.notes = {
        "host": host.host, "matches": matches, "stall_seconds": seconds,
        "recorded_by": "stalled worker" if stalled_won else "another worker",
        "requeued": all(any("re-enqueued" in line and m in line for line in logs.splitlines())
                        for m in matches),
        "same_processes": all(alive(p) for p in tree if p in (host.supervisor, *rq)),
        "restarts": host.starts - 1, "exited_lines": host.text.count("exited with"),
        "duplicate_lines": sum(line.count("duplicate ") for line in logs.splitlines()
                               if any(m in line for m in matches)),
    }
    return counts


class _TreePause:
    """SIGSTOP a worker host's whole tree (supervisor, RQ worker, horse, bots: a paused VM),
    and SIGCONT it again: the bots first, or with ``parents_first`` the referee (the horse)
    before its bots, as on a resumed VM where the referee's wait has run out before a bot
    in mid-decision got the CPU to answer."""

    def __init__(self, *, parents_first: bool = False) -> None:
        self.stopped: list[int] = []
        self.parents_first = parents_first

    def begin(self, host: WorkerHost) -> None:
        for _ in range(2):  # again, for a child forked between listing and stopping
            fresh = [p for p in host.tree() if p not in self.stopped]
            signal_all(fresh, signal.SIGSTOP)
            self.stopped.extend(fresh)

    def end(self, host: WorkerHost) -> None:
        signal_all(self.stopped if self.parents_first else self.stopped[::-1], signal.SIGCONT)


def pause_worker(cluster: Cluster, ladder: Ladder, say: Say, *, factor: float = 3.0,
                 timeout: float = 120) -> Counts:
    """Fault 3: SIGSTOP a busy worker host's whole tree for ``factor`` x the lease, then
    SIGCONT it. The stalled run's faults (its bots "took" the pause) must count nowhere
    when its late result is refused (``notes["failures_counted"]``)."""
    pause = _TreePause()
    counts = _stall(cluster, ladder, "pause", factor * cluster.settings.lease, say,
                    pause.begin, pause.end, timeout)
    counts.notes["failures_counted"] = _failures_counted(cluster)
    return counts


SHORT_PAUSE: Final = 5.0
"""Seconds of the short pause: longer than a decision's limit (the chaos ladder's 2 s),
shorter than the lease it needs (``short_pause``)."""


def short_pause(cluster: Cluster, ladder: Ladder, say: Say, *, seconds: float = SHORT_PAUSE,
                timeout: float = 120) -> Counts:
    """Fault 3b: SIGSTOP a busy worker host's whole tree for ``seconds``, shorter than the
    lease (so its match is not re-run: the paused run records it), then SIGCONT it, the
    referee first (:class:`_TreePause`). The host's pause is nobody's fault: every bot here
    answers in milliseconds, so each forfeit in the ladder (``notes["forfeits_charged"]``,
    target 0) and each bot failure in the workers' counts was charged by the pause."""
    if seconds >= cluster.settings.lease:
        raise ChaosError(f"the short pause ({seconds:g} s) must be shorter than the lease "
                         f"({cluster.settings.lease:g} s): ClusterSettings(lease=...)")
    host, matches = _busy_worker(cluster)
    # In the middle of the games (not while the bots start): a first game has ended.
    wait_for(lambda: any((live := ladder.arena.live.match(m)[1]) is not None and live.games
                         for m in matches), 30, "a first game of the busy match")
    pause = _TreePause(parents_first=True)
    began = time.time()
    pause.begin(host)
    say(f"short pause: {host.host} stopped for {seconds:g} s while running "
        f"{', '.join(matches)}")
    time.sleep(seconds)
    pause.end(host)
    recovered = ladder.wait_recorded(matches, timeout)
    ladder.wait_done(timeout)
    counts = ladder.counts("short_pause")
    counts.injections = 1
    counts.recovery_seconds = [recovered - began]
    forfeits = [f"{m.id} game {n + 1}: side {g.offender} {g.fault.value if g.fault else '?'}"
                for m in ladder.arena.matches.of_ladder(LADDER, count=1000)
                if m.result is not None
                for n, g in enumerate(m.result.games) if g.offender is not None]
    counts.notes = {"host": host.host, "matches": matches, "pause_seconds": seconds,
                    "lease": cluster.settings.lease, "forfeits_charged": len(forfeits),
                    "forfeits": forfeits[:5], "failures_counted": _failures_counted(cluster)}
    return counts


def _failures_counted(cluster: Cluster) -> int:
    """Bot failures in the workers' counts (``worker:stats failures:*``)."""
    return int(sum(v for k, v in worker_stats(cluster.redis).items()
                   if k.startswith("failures:")))


def partition_worker(cluster: Cluster, ladder: Ladder, say: Say, *, factor: float = 2.5,
                     timeout: float = 120) -> Counts:
    """Fault 2: cut a busy worker host off the network for ``factor`` x the lease (its
    packets vanish), then heal it."""
    return _stall(cluster, ladder, "partition", factor * cluster.settings.lease, say,
                  lambda host: cluster.net.partition(host.host),
                  lambda host: cluster.net.heal(host.host), timeout)


def kill_redis(cluster: Cluster, ladder: Ladder, say: Say, *, kills: int = 1,
               down_seconds: float = 1.0, timeout: float = 180) -> Counts:
    """Fault 4: SIGKILL Redis mid-ladder, start it again on the same data and port. Every
    result the observer saw recorded before the kill must still be there after it."""
    recoveries = []
    lost_acknowledged = 0
    for n in range(kills):
        due = (n + 1) * ladder.spec.matches // (kills + 2)
        wait_for(lambda d=due: ladder.recorded() >= d or ladder.done(),  # type: ignore[misc]
                 timeout, "results before killing Redis")
        if ladder.done():
            break
        seen = {e.match for e in read_log(cluster.redis, cluster.arena.keys, LADDER)}
        cluster.valkey.kill()
        say(f"redis kill {n + 1}/{kills}: {len(seen)} results acknowledged before it")
        time.sleep(down_seconds)
        cluster.valkey.start()
        back = time.time()
        after = {e.match for e in read_log(cluster.redis, cluster.arena.keys, LADDER)}
        lost_acknowledged += len(seen - after)
        count = len(after)
        wait_for(lambda c=count: ladder.recorded() > c or ladder.done(), timeout,  # type: ignore[misc]
                 "a result after the restart")
        recoveries.append(time.time() - back)
    ladder.wait_done(timeout)
    counts = ladder.counts("redis_kill")
    counts.injections = len(recoveries)
    counts.recovery_seconds = recoveries
    counts.lost += lost_acknowledged
    counts.notes = {"acknowledged_lost": lost_acknowledged,
                    # "Live now" entries left once the ladder is done (a result recorded just
                    # before a kill must not stay "playing"): target none.
                    "live_left": [m.id for m in ladder.arena.live.matches(LADDER)],
                    "appendfsync": cluster.settings.appendfsync,
                    "worker_restarts": sum(h.text.count("exited with")
                                           for h in cluster.workers.values())}
    return counts


def fill_disk(cluster: Cluster, ladder: Ladder, say: Say, *, full_seconds: float = 6.0,
              timeout: float = 180) -> Counts:
    """Fault 5: fill Redis' data volume (a small tmpfs: ``ClusterSettings.redis_dir``) mid
    ladder for ``full_seconds``, then free it. Redis refuses writes meanwhile; workers say
    so and wait (no restarts), the server and the CLI say so; afterwards the ladder
    resumes and nothing recorded before is lost."""
    folder = cluster.settings.redis_dir
    if folder is None:
        raise ChaosError("the full-disk fault needs Redis on a small volume of its own: "
                         "ClusterSettings(redis_dir=a tmpfs)")
    wait_for(lambda: ladder.recorded() >= ladder.spec.matches // 3, timeout,
             "results before filling the disk")
    seen = {e.match for e in read_log(cluster.redis, cluster.arena.keys, LADDER)}
    restarts_before = _restarts(cluster)
    filler = folder / "filler"
    _fill(filler)
    began = time.time()
    say(f"full disk: {folder} filled, {len(seen)} results recorded before")
    wait_for(lambda: _log_line(cluster, "Redis refuses writes"), 30,
             "a worker host to log that Redis refuses writes")
    cli = _cli_write(cluster, ladder) if cluster.settings.serve else ""
    time.sleep(max(0.0, full_seconds - (time.time() - began)))
    restarts = _restarts(cluster) - restarts_before
    recorded_full = ladder.recorded()
    filler.unlink()
    freed = time.time()
    say(f"full disk: space back after {freed - began:.1f} s; {restarts} worker restarts")
    wait_for(lambda: ladder.recorded() > recorded_full or ladder.done(), timeout,
             "a result after space returned")
    recovered = time.time()
    ladder.wait_done(timeout)
    after = {e.match for e in read_log(cluster.redis, cluster.arena.keys, LADDER)}
    counts = ladder.counts("full_disk")
    counts.injections = 1
    counts.recovery_seconds = [recovered - freed]
    counts.lost += len(seen - after)
    server = next((line for line in cluster.serve_text.splitlines()
                   if "refuses writes" in line), "")
    # An RQ worker blocked in BLPOP meanwhile never hears of the refusal: only the busy
    # ones (and the dispatcher, every pass) log it.
    counts.notes = {"full_seconds": round(freed - began, 1), "worker_restarts": restarts,
                    "dispatcher_log": _log_line(cluster, "dispatcher: Redis refuses") or "",
                    # If the lock lapsed meanwhile: a refused write, never "a stall".
                    "dispatcher_lock_log": _log_line(cluster, "dispatcher: lost the lock") or "",
                    "worker_log": _log_line(cluster, "(not restarting)") or "",
                    "server_log": server, "cli": cli,
                    "recorded_lost": len(seen - after)}
    return counts


REDIS_VOLUME_KB = 160 * 1024
"""The tmpfs the full-disk fault gives Redis: room for a ladder's data and an AOF rewrite
(16 MiB filled up by itself once matches kept their bots' logs, 64 MiB once they also kept
their failure counts and live-entry checks), the rest is filled."""


def _fill(path: Path) -> None:
    """Write zeros to ``path`` until its file system is full."""
    chunk = bytes(1 << 16)
    try:
        # Unbuffered: a buffered file would flush its partial last chunk again on close and
        # raise ENOSPC there, after the loop below had taken "full" for the answer.
        opened = path.open("wb", buffering=0)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        raise ChaosError(f"{path.parent} was full before the fault began: Redis' data "
                         "outgrew the volume; give it a bigger one (REDIS_VOLUME_KB)") from exc
    with opened as f:
        try:
            while True:
                f.write(chunk)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise


def _restarts(cluster: Cluster) -> int:
    return sum(h.text.count("exited with") for h in cluster.workers.values())


def _log_line(cluster: Cluster, needle: str) -> str | None:
    for host in cluster.workers.values():
        for line in host.text.splitlines():
            if needle in line:
                return line.strip()
    return None


def _cli_write(cluster: Cluster, ladder: Ladder) -> str:
    """What ``tacocat submit`` (a write, through the server) prints while Redis refuses."""
    source = cluster.folder / "late.py"
    source.write_bytes(bot_source("late", 0.0))
    done = subprocess.run([sys.executable, "-m", "tacocat.cli", "submit", str(source),
                           "--server", cluster.serve_target, "--token", ladder.tokens[0]],
                          capture_output=True, text=True, timeout=60, check=False)
    return f"exit {done.returncode}: {(done.stderr or done.stdout).strip()}"


_LIVE_CLIENT: Final = """
import sys, time
from tacocat.engine.bots import GreedyBot
from tacocat.sdk import connect

class Slow(GreedyBot):
    def duel(self, obs):
        time.sleep(float(sys.argv[3]))
        return super().duel(obs)

try:
    results = connect(Slow(), sys.argv[1], games=int(sys.argv[2]), timeout=60)
    print(f"ok: {len(results)} games")
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}")
"""


def _live_client(cluster: Cluster, games: int, delay: float) -> subprocess.Popen[str]:
    """A live bot (from the observer, over the bridge) playing ``games`` against a house
    bot through the SDK's ``connect``; prints ``ok: N games`` or the error it got."""
    return subprocess.Popen([sys.executable, "-c", _LIVE_CLIENT, cluster.serve_target,
                             str(games), str(delay)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)


def _outcome(client: subprocess.Popen[str], timeout: float = 90) -> str:
    out, _ = client.communicate(timeout=timeout)
    lines = [line for line in out.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"no output (exit {client.returncode})"


class _Follower:
    """``tacocat leaderboard --watch --json`` (from the observer) across the restart."""

    def __init__(self, cluster: Cluster) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tacocat.cli", "leaderboard", LADDER, "--watch", "--json",
             "--server", cluster.serve_target], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        self.updates: list[float] = []  # when each update line came
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr or ()),
                         daemon=True).start()

    def _read(self) -> None:
        for _ in self.proc.stdout or ():
            self.updates.append(time.time())

    def outcome(self, back: float, timeout: float = 30) -> str:
        """``reconnected (N updates after the restart)``, or what it said instead; stops it."""
        with contextlib.suppress(ChaosError):
            wait_for(lambda: any("reconnected to" in e for e in self.stderr)
                     or self.proc.poll() is not None, timeout, "the follower to reconnect")
        self.close()
        said = [e.strip() for e in self.stderr if e.strip()]
        if any("reconnected to" in e for e in said):
            return f"reconnected ({sum(t >= back for t in self.updates)} updates after)"
        return said[-1] if said else f"no word (exit {self.proc.returncode})"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def restart_serve(cluster: Cluster, ladder: Ladder, say: Say, *, timeout: float = 180) -> Counts:
    """Fault 7: restart ``tacocat serve`` mid-ladder while a live client plays through it.
    The workers do not notice (same processes, no errors); the live client gets a clear
    status; a client that connects while the server is down is told why; one that connects
    after the restart plays."""
    if cluster.serve_proc is None:
        raise ChaosError("the serve fault needs the serve host: ClusterSettings(serve=True)")
    wait_for(lambda: ladder.recorded() >= 1, timeout, "a first result")
    trees = {h.host: h.tree()[:2] for h in cluster.workers.values()}
    restarts_before = _restarts(cluster)
    live = _live_client(cluster, games=200, delay=0.02)
    watch = _Follower(cluster)
    try:
        time.sleep(2.5)  # the server logs no game starts: by now the client plays its first games
        if live.poll() is not None:
            raise ChaosError(f"the live client ended before the restart: {_outcome(live)}")
        began = time.time()
        cluster.stop_serve()
        say(f"serve restart: stopped after {time.time() - began:.1f} s")
        during = _outcome(live)
        down = _outcome(_live_client(cluster, games=2, delay=0.0))
        cluster.start_serve()
        back = time.time()
        after = _outcome(_live_client(cluster, games=2, delay=0.0))
        say(f"serve restart: back after {back - began:.1f} s; live client: {during}")
        ladder.wait_done(timeout)
        watched = watch.outcome(back)
    finally:
        watch.close()
    counts = ladder.counts("serve_restart")
    counts.injections = 1
    counts.recovery_seconds = [back - began]
    counts.notes = {
        "live_during": during, "live_while_down": down, "live_after": after,
        "watch_follower": watched,
        "workers_unaffected": _restarts(cluster) == restarts_before and all(
            h.tree()[:2] == trees[h.host] for h in cluster.workers.values()),
    }
    return counts


def slow_network(cluster: Cluster, ladder: Ladder, say: Say, *, timeout: float = 240) -> Counts:
    """Fault 6: every worker reaches Redis over a slow, lossy link (the cluster's
    ``slow_link``) for the whole ladder. It must finish with no lease lost spuriously: no
    match re-enqueued, no duplicate run."""
    if not cluster.settings.slow_link:
        raise ChaosError("the slow-network fault needs ClusterSettings(slow_link=True)")
    say("slow network: workers reach Redis with +50 ms round trips, 1% of chunks +200 ms")
    ladder.wait_done(timeout)
    counts = ladder.counts("slow_network")
    logs = "".join(h.text for h in cluster.workers.values())
    stats = worker_stats(cluster.redis)
    counts.notes = {
        "requeued": sum(line.count(LADDER + ".") for line in logs.splitlines()
                        if "re-enqueued" in line),
        "match_seconds": round(stats.get("match_seconds", 0.0)
                               / max(1.0, stats.get("matches", 0.0)), 2),
        "record_ms": round(1000 * stats.get("record_seconds", 0.0)
                           / max(1.0, stats.get("matches", 0.0)), 1),
    }
    return counts

"""Hosts made of Linux network namespaces on one bridge, all inside this machine (as root).

::

    root namespace (the observer: tests, the benchmark)  OBSERVER_ADDRESS .1
        └── veth ── switch namespace: bridge br0 ── veth ── host "redis"   .2
                                                   ├── veth ── host "serve"   .3
                                                   ├── veth ── host "w0"      .4 ...

Each host is a namespace of its own with one interface, ``eth0``, on the bridge; a process
started on a host (:meth:`Network.popen`) sees only that interface and loopback, so a worker
reaches Redis by Redis' address on the bridge, never over loopback. The bridge lives in a
namespace of its own so that nothing of the root namespace's firewall or routing touches
the hosts' traffic, and so that pulling a host's cable (:meth:`Network.partition`: its port
on the bridge goes down, packets vanish silently, as with a dead switch port) is one link.

Names carry the owning process id (``tacocat-chaos-PID-HOST``, root-side link ``tcxPID``),
so a run can tell its own namespaces from those of a run that was killed before its clean-up
(:func:`remove_leftovers`: processes killed, namespaces and links deleted, tmpfs unmounted)
and from a concurrent run's (whose owner is alive).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Final

from .procs import ChaosError, alive

NETNS_PREFIX: Final = "tacocat-chaos-"
LINK_PREFIX: Final = "tcx"
_OWNED: Final = re.compile(rf"^{re.escape(NETNS_PREFIX)}(\d+)-")
_OWNED_LINK: Final = re.compile(rf"^{LINK_PREFIX}(\d+)(@|$)")
_TOOLS: Final = ("ip", "nsenter")


class NetworkError(ChaosError):
    """The machine cannot build the hosts (not root, no ``ip``, no namespaces), or a
    command on them failed; the message says which and what to do."""


def check_support() -> None:
    """Raise :class:`NetworkError` unless this process can build namespace hosts."""
    if os.geteuid() != 0:
        raise NetworkError("the chaos hosts are network namespaces and need root: run as root "
                           "(CI runs the suite as root), or in a container with CAP_NET_ADMIN "
                           "and CAP_SYS_ADMIN")
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        raise NetworkError(f"the chaos hosts need {' and '.join(missing)} (Debian: iproute2, "
                           "util-linux); install them")


@dataclass(frozen=True)
class Host:
    """One namespace host: its name, its namespace and its address on the bridge."""

    name: str
    netns: str
    address: str
    port: str
    """Its port's link name on the bridge (in the switch namespace)."""

    @property
    def enter(self) -> list[str]:
        """The command prefix that runs a program on this host (``nsenter`` execs it, so the
        process id is the program's own)."""
        return ["nsenter", f"--net=/run/netns/{self.netns}", "--"]


class Network:
    """The switch and its hosts; build with :meth:`build` (or ``with``), always
    :meth:`close` (kills every process left on a host, deletes every namespace and link)."""

    def __init__(self, hosts: Sequence[str], *, owner: int | None = None) -> None:
        if len(set(hosts)) != len(hosts) or not hosts:
            raise NetworkError(f"host names must be distinct and at least one: {list(hosts)}")
        self.owner = os.getpid() if owner is None else owner
        self.subnet = _free_subnet(self.owner)
        addresses = self.subnet.hosts()
        self.observer_address = str(next(addresses))
        self.switch = f"{NETNS_PREFIX}{self.owner}-switch"
        self.observer_link = f"{LINK_PREFIX}{self.owner}"
        self.hosts: dict[str, Host] = {
            name: Host(name, f"{NETNS_PREFIX}{self.owner}-{name}", str(next(addresses)),
                       f"p{index}")
            for index, name in enumerate(hosts, start=1)}
        self._built = False
        self._procs: list[subprocess.Popen[bytes]] = []

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    # -- building ----------------------------------------------------------------------------

    def build(self) -> None:
        check_support()
        remove_leftovers()
        self._built = True
        prefix = self.subnet.prefixlen
        _ip("netns", "add", self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        _ip("-n", self.switch, "link", "set", "lo", "up")
        _ip("link", "add", self.observer_link, "type", "veth", "peer", "name", "p0",
            "netns", self.switch)
        _ip("-n", self.switch, "link", "set", "p0", "master", "br0", "up")
        _ip("addr", "add", f"{self.observer_address}/{prefix}", "dev", self.observer_link)
        _ip("link", "set", self.observer_link, "up")
        for host in self.hosts.values():
            _ip("netns", "add", host.netns)
            _ip("-n", host.netns, "link", "set", "lo", "up")
            _ip("link", "add", "eth0", "netns", host.netns, "type", "veth", "peer", "name",
                host.port, "netns", self.switch)
            _ip("-n", self.switch, "link", "set", host.port, "master", "br0", "up")
            _ip("-n", host.netns, "addr", "add", f"{host.address}/{prefix}", "dev", "eth0")
            _ip("-n", host.netns, "link", "set", "eth0", "up")

    def __enter__(self) -> Network:
        try:
            self.build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Kill what runs on the hosts, delete namespaces and links. Safe to call twice."""
        for proc in self._procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        self._procs.clear()
        if self._built:
            _remove_owner(self.owner)
            self._built = False

    # -- processes -----------------------------------------------------------------------------

    def popen(self, host: str, argv: Sequence[str], *, log: IO[bytes] | None = None,
              env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start ``argv`` on ``host`` in a session of its own; output to ``log``.

        The process is killed (with its process group) at :meth:`close` if still running;
        anything else it left on the host dies with the host's namespace clean-up."""
        proc = subprocess.Popen([*self.hosts[host].enter, *argv], stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT if log else None,
                                env=None if env is None else dict(env),
                                start_new_session=True)
        self._procs.append(proc)
        return proc

    def pids(self, host: str) -> list[int]:
        """Every process in the host's namespace (not the bots: the sandbox gives each its
        own, networkless namespace)."""
        return _netns_pids(self.hosts[host].netns)

    # -- faults ------------------------------------------------------------------------------

    def partition(self, host: str) -> None:
        """Cut ``host`` off the bridge: its packets vanish silently (no reset, no error)."""
        _ip("-n", self.switch, "link", "set", self.hosts[host].port, "down")

    def heal(self, host: str) -> None:
        _ip("-n", self.switch, "link", "set", self.hosts[host].port, "up")


# -- clean-up ------------------------------------------------------------------------------------


def remove_leftovers() -> list[str]:
    """Remove the namespaces, links and tmpfs mounts of chaos runs whose owner process is
    dead (a run killed before its clean-up); returns what was removed."""
    owners = {int(m.group(1)) for name in _netns_names() if (m := _OWNED.match(name))}
    owners |= {int(m.group(1)) for name in _root_links() if (m := _OWNED_LINK.match(name))}
    owners |= {owner for owner, _ in _owned_mounts()}
    removed = []
    for owner in sorted(owners):
        if owner != os.getpid() and not alive(owner):
            removed += _remove_owner(owner)
    return removed


def _remove_owner(owner: int) -> list[str]:
    removed = []
    spaces = [n for n in _netns_names() if n.startswith(f"{NETNS_PREFIX}{owner}-")]
    for netns in spaces:
        for pid in _netns_pids(netns):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    for mount_owner, path in _owned_mounts():
        if mount_owner == owner:
            subprocess.run(["umount", "-l", path], check=False, capture_output=True)
            removed.append(path)
    link = f"{LINK_PREFIX}{owner}"
    if link in _root_links():
        subprocess.run(["ip", "link", "del", link], check=False, capture_output=True)
        removed.append(link)
    for netns in spaces:
        subprocess.run(["ip", "netns", "del", netns], check=False, capture_output=True)
        removed.append(netns)
    return removed


def tmpfs_name(owner: int) -> str:
    """The folder name chaos tmpfs mounts carry, so :func:`remove_leftovers` finds them."""
    return f"{NETNS_PREFIX}{owner}-tmpfs"


@contextlib.contextmanager
def tmpfs(path: Path, size_kb: int, owner: int | None = None) -> Iterator[Path]:
    """A tmpfs of ``size_kb`` KiB mounted at ``path / tmpfs_name(owner)`` for the block."""
    mount = path / tmpfs_name(os.getpid() if owner is None else owner)
    mount.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0755", "tmpfs",
                           str(mount)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NetworkError(f"cannot mount a tmpfs at {mount}: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)


def _owned_mounts() -> list[tuple[int, str]]:
    found = []
    pattern = re.compile(rf"/{re.escape(NETNS_PREFIX)}(\d+)-tmpfs$")
    with contextlib.suppress(OSError), open("/proc/self/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            fields = line.split()
            if len(fields) > 1 and (m := pattern.search(fields[1])):
                found.append((int(m.group(1)), fields[1]))
    return found


def _netns_names() -> list[str]:
    try:
        return [n for n in os.listdir("/run/netns") if n.startswith(NETNS_PREFIX)]
    except FileNotFoundError:
        return []


def _root_links() -> list[str]:
    return [n for n in os.listdir("/sys/class/net") if n.startswith(LINK_PREFIX)]


def _netns_pids(netns: str) -> list[int]:
    done = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True,
                          check=False)
    return [int(p) for p in done.stdout.split()]


def _free_subnet(owner: int) -> ipaddress.IPv4Network:
    """A /24 in 10.0.0.0/8 that no route of the root namespace touches, picked from the
    owner pid so that concurrent runs differ."""
    used = subprocess.run(["ip", "-4", "route", "show", "table", "all"], capture_output=True,
                          text=True, check=False).stdout
    taken = []
    for word in used.split():
        with contextlib.suppress(ValueError):
            taken.append(ipaddress.ip_network(word, strict=False))
    for step in range(256 * 200):
        index = (owner + step * 7919) % (200 * 256)
        subnet = ipaddress.IPv4Network(f"10.{40 + index // 256}.{index % 256}.0/24")
        if not any(subnet.overlaps(other) for other in taken if other.version == 4
                   and other.prefixlen > 0):
            return subnet
    raise NetworkError("no free /24 in 10.40.0.0-10.239.255.0 for the chaos hosts")


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NetworkError(f"`ip {' '.join(args)}` failed: {done.stderr.strip()}")


def wait_gone(netns_prefix: str, timeout: float = 5.0) -> bool:
    """Whether no namespace named ``netns_prefix...`` is left within ``timeout``."""
    deadline = time.monotonic() + timeout
    while any(n.startswith(netns_prefix) for n in _netns_names()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True

"""The namespace hosts themselves: isolated from each other but for the bridge, torn down
after a failure, and a killed run's leftovers (namespaces, links, processes) removed by the
next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tacocat_lab.chaos.hosts import (
    NETNS_PREFIX,
    Network,
    NetworkError,
    check_support,
    remove_leftovers,
)
from tacocat_lab.chaos.procs import alive, wait_for

pytestmark = pytest.mark.timeout(60)

_SERVE_ONCE = textwrap.dedent("""
    import socket, sys
    server = socket.create_server((sys.argv[1], 7000))
    print("listening", flush=True)
    conn, _ = server.accept()
    conn.sendall(b"hello from " + sys.argv[1].encode())
""")
_CONNECT = textwrap.dedent("""
    import socket, sys
    try:
        with socket.create_connection((sys.argv[1], 7000), timeout=2) as conn:
            print(conn.recv(100).decode())
    except OSError as exc:
        print(type(exc).__name__)
""")


def _mine(owner: int) -> list[str]:
    names = os.listdir("/run/netns") if os.path.isdir("/run/netns") else []
    links = os.listdir("/sys/class/net")
    return [n for n in names if n.startswith(f"{NETNS_PREFIX}{owner}-")] + \
        [n for n in links if n == f"tcx{owner}"]


def test_hosts_reach_each_other_by_bridge_address_only_and_vanish_after_a_failure() -> None:
    check_support()
    with pytest.raises(RuntimeError, match="a failing test"), Network(["a", "b"]) as net:
        server = net.popen("b", [sys.executable, "-c", _SERVE_ONCE, net["b"].address],
                           log=subprocess.PIPE)  # type: ignore[arg-type]
        assert server.stdout is not None and server.stdout.readline() == b"listening\n"
        assert net.pids("b") == [server.pid] and net.pids("a") == []

        def reach(host: str, address: str) -> str:
            done = subprocess.run([*net[host].enter, sys.executable, "-c", _CONNECT, address],
                                  capture_output=True, text=True, timeout=30, check=True)
            return done.stdout.strip()

        assert reach("a", "127.0.0.1") == "ConnectionRefusedError"  # a's own loopback
        assert reach("a", net["b"].address) == f"hello from {net['b'].address}"
        net.partition("a")
        assert reach("a", net["b"].address) in ("TimeoutError", "timeout")
        raise RuntimeError("a failing test")
    assert wait_for(lambda: not _mine(os.getpid()), 5, "the namespaces to go") is True
    assert not alive(server.pid)


def test_a_killed_runs_namespaces_links_and_processes_are_removed_by_the_next_run() -> None:
    check_support()
    builder = subprocess.Popen(
        [sys.executable, "-c", "from tacocat_lab.chaos.hosts import Network\n"
         "net = Network(['a'])\nnet.build()\nsleeper = net.popen('a', ['sleep', '300'])\n"
         "print(sleeper.pid, flush=True)\nimport time\ntime.sleep(300)"],
        stdout=subprocess.PIPE, text=True)
    assert builder.stdout is not None
    sleeper = int(builder.stdout.readline())
    builder.send_signal(signal.SIGKILL)  # no clean-up runs
    builder.wait()
    assert len(_mine(builder.pid)) == 3 and alive(sleeper)  # switch, host a, root link

    removed = remove_leftovers()

    assert f"{NETNS_PREFIX}{builder.pid}-a" in removed
    wait_for(lambda: not _mine(builder.pid) and not alive(sleeper), 5, "the leftovers to go")


def test_a_machine_without_namespaces_says_so() -> None:
    if os.geteuid() == 0:
        with pytest.raises(NetworkError, match="distinct"):
            Network(["a", "a"])
    else:
        with pytest.raises(NetworkError, match="need root"):
            check_support()

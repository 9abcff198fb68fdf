"""The sandbox on the hosts operators run, for real: a cgroup-v2 kernel (Debian's, booted
under QEMU by ``scripts/cgroup2-vm``, no KVM needed), first as root in the guest's root
cgroup, then as a non-root worker in a delegated subtree (``tests/hosts/vm_suite.sh``).

This machine is cgroup v1, where the same tests run in ``tests/worker`` directly. Python is
several times slower in the guest, so it runs only the tests whose outcome depends on the
host: the status and set-up, the host check, the tree bounds (four forked 300 MB children, a
background spinner), the fork bomb and clean-up, and a clean sandboxed match.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(1500)

# What the issue asks of each host kind: the host check, a hostile bot's four forked 300 MB
# children bounded as one tree, a clean sandboxed match (all in test_host_bounds), a
# background spinner charged, a fork bomb bounded, nothing left behind (checked by each and
# by the suite script). The rest of tests/worker runs on this machine's cgroup v1.
VM_TESTS = [
    "tests/worker/test_host_bounds.py",
    "tests/worker/test_tree_bounds.py::test_a_background_spinner_forfeits_on_time",
    "tests/worker/test_sandbox_limits.py::test_fork_bomb_is_bounded_and_killed",
]


def test_the_sandbox_bounds_bots_on_cgroup_v2_as_root_and_as_a_delegated_user(
        tmp_path: Path) -> None:
    command = [str(REPO / "scripts/cgroup2-vm"), "--share", str(tmp_path), "--timeout", "1380",
               "--", "tests/hosts/vm_suite.sh", sys.executable, *VM_TESTS, "--", *VM_TESTS]
    # Its own process group: whatever happens here, QEMU goes with it.
    vm = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, process_group=0)
    try:
        out, _ = vm.communicate(timeout=1440)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(vm.pid, signal.SIGKILL)
        vm.wait()
    print(out)
    assert "cgroup v2 controllers:" in out and "cpuset cpu" in out, out[-3000:]
    assert re.search(r"vm-suite: root exit 0 in \d+ s", out), out[-6000:]
    assert re.search(r"vm-suite: delegated exit 0 in \d+ s", out), out[-6000:]
    assert "host-bounds: cgroup v2, uid 0:" in out, out[-3000:]
    assert "host-bounds: cgroup v2, uid 10001:" in out, out[-3000:]
    assert "vm-suite: leftover cgroups: 0" in out
    assert "vm-suite: leftover processes: 0" in out
    assert vm.returncode == 0, out[-3000:]

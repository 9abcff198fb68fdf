"""What this host gives the sandbox: ``tacocat worker --check``.

:func:`check_host` looks at each thing a submitted bot's sandbox needs on the host it runs on
(as isolate's ``--check-environment`` does) and says, for each missing one, the command or
setting that fixes it; it also lists the bot languages this host can build and run. The
worker runs the same check at start: a worker that cannot run submitted bots says so once,
with this report, and exports it (``/metrics``, the web's health).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tacocat.protocol.manifest import LANGUAGES

from ._bwrap import _bwrap_path, sandbox_status
from ._cgroups import cgroup_report
from ._policy import SandboxPolicy
from ._seccomp import ABIS

_DELEGATE_FIX = {
    "v2": ("give the worker its own cgroup subtree: as root nothing is needed; as a systemd "
           "service, Delegate=cpu cpuset memory pids (deploy/systemd/tacocat-worker.service); in "
           "a container, --cgroupns=private and a writable /sys/fs/cgroup (deploy/compose.yaml, "
           "deploy/k8s/worker.yaml)"),
    "v1": "run the worker as root (cgroup v1 cannot be delegated safely), or boot with cgroup v2",
    "hybrid": "run the worker as root, or boot with cgroup v2 alone "
              "(systemd.unified_cgroup_hierarchy=1)",
    "none": "mount the cgroup2 filesystem on /sys/fs/cgroup",
}


@dataclass(frozen=True)
class Check:
    """One thing the sandbox needs, as found on this host."""

    name: str
    ok: bool
    found: str
    fix: str = ""
    required: bool = True
    """False: informational (its absence does not stop submitted bots)."""


@dataclass(frozen=True)
class HostReport:
    """Every :class:`Check` of this host, and the verdict."""

    checks: tuple[Check, ...]

    @property
    def ready(self) -> bool:
        """Whether submitted bots can run here with every bound."""
        return all(c.ok for c in self.checks if c.required)

    def missing(self) -> list[Check]:
        return [c for c in self.checks if c.required and not c.ok]

    def table(self) -> str:
        """The report as a readable table, then the verdict."""
        width = max(len(c.name) for c in self.checks)
        lines = []
        for c in self.checks:
            mark = "ok" if c.ok else ("MISSING" if c.required else "no")
            lines.append(f"  {mark:<7}  {c.name:<{width}}  {c.found}")
            if not c.ok and c.fix:
                lines.append(f"  {'':<7}  {'':<{width}}  fix: {c.fix}")
        verdict = ("submitted bots can run here with every bound" if self.ready else
                   "submitted bots cannot run here: fix what is MISSING above "
                   "(house bots still play, outside the sandbox)")
        return "\n".join(lines) + f"\n\n{verdict}"

    def summary(self) -> str:
        """One line: what is missing, each with its fix (for logs and the web's health)."""
        if self.ready:
            return "sandbox ready: every bound available"
        return "sandbox unavailable: " + "; ".join(
            f"{c.name}: {c.found}" + (f" (fix: {c.fix})" if c.fix else "")
            for c in self.missing())


def check_host(policy: SandboxPolicy | None = None) -> HostReport:
    """Look at everything the sandbox needs here (a second or so: it starts a real
    sandboxed process at the end)."""
    root = os.geteuid() == 0
    checks = [_bwrap(), _seccomp(), _identity(root)]
    report = cgroup_report()
    checks.append(Check("cgroup version", report.mode != "none",
                        {"v1": "v1", "hybrid": "hybrid (v1 controllers, v2 mounted beside)",
                         "v2": "v2 (unified)", "none": "no cgroup filesystem mounted"}
                        [report.mode] + (f", worker's cgroup {report.own}" if report.own else ""),
                        _DELEGATE_FIX["none"]))
    fix = _DELEGATE_FIX[report.mode]
    checks.append(Check("cgroup delegation", report.delegated,
                        "this worker can make its bots' cgroups" if report.delegated
                        else report.problem, fix))
    for controller, usable, why in report.controllers:
        checks.append(Check(f"controller {controller}", usable,
                            "usable" if usable else why, fix))
    checks += _writable_paths(root)
    checks += language_checks()
    status = sandbox_status()
    checks.append(Check("sandboxed test process", status.available,
                        status.describe() if status.available else "; ".join(status.problems),
                        "fix what is missing above"))
    return HostReport(tuple(checks))


_DEBIAN_PACKAGES = {"node": "nodejs", "cc": "gcc libc6-dev"}
"""What installs each language's programs on Debian (./dev and deploy/Dockerfile do)."""


def language_checks() -> list[Check]:
    """One informational line per language (:data:`~tacocat.protocol.manifest.LANGUAGES`):
    whether this host has what its bots need to run and to build. A missing one stops only
    the bots in that language (their jobs wait for a worker that has it)."""
    checks = []
    for language in LANGUAGES.values():
        needs = (*language.runtime, *language.toolchain)
        missing = [p for p in needs if shutil.which(p) is None]
        found = ", ".join(f"{p} ({_version(p)})" for p in needs) or "this Python (the SDK's host)"
        fix = " ".join(_DEBIAN_PACKAGES.get(p, p) for p in missing)
        checks.append(Check(f"language {language.name}", not missing,
                            f"missing {', '.join(missing)}" if missing else found,
                            f"apt-get install {fix}" if fix else "", required=False))
    return checks


def _version(program: str) -> str:
    try:
        out = subprocess.run([program, "--version"], capture_output=True, text=True,
                             timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return "version unknown"
    first = out.strip().splitlines()[0] if out.strip() else "version unknown"
    return first[:60]


def _bwrap() -> Check:
    path = _bwrap_path()
    if path is None:
        return Check("bubblewrap", False, "not installed" + (
            f" at $TACOCAT_BWRAP ({os.environ['TACOCAT_BWRAP']!r})"
            if os.environ.get("TACOCAT_BWRAP") is not None else ""),
                     "apt-get install bubblewrap (dnf install bubblewrap, apk add bubblewrap)")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=10, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("bubblewrap", False, f"{path} does not run: {exc}",
                     "reinstall bubblewrap")
    numbers = tuple(int(x) for x in version.rpartition(" ")[2].split(".")[:2] if x.isdigit())
    if numbers and numbers < (0, 8):
        return Check("bubblewrap", False, f"{version} at {path}: 0.8 or newer is needed",
                     "install bubblewrap 0.8+ (Debian 12, Ubuntu 24.04 and newer have it)")
    return Check("bubblewrap", True, f"{version} at {path}")


def _seccomp() -> Check:
    machine = platform.machine()
    supported = machine in ABIS and os.path.exists("/proc/self/status") and any(
        line.startswith("Seccomp:") for line in Path("/proc/self/status").read_text().splitlines())
    return Check("seccomp", supported,
                 f"seccomp filters for {machine}" if supported else
                 f"no seccomp filter for {machine} (x86_64 and aarch64 only) or no seccomp "
                 "in this kernel",
                 "run the worker on x86_64 or aarch64 with a kernel built with seccomp; in a "
                 "container, a seccomp profile that allows bwrap's (seccomp=unconfined)")


def _identity(root: bool) -> Check:
    if root:
        return Check("bot identity", True,
                     "root: each bot runs as a dedicated uid of its own slot (setpriv "
                     + ("found" if shutil.which("setpriv") else "missing: a Python stub instead")
                     + ")")
    maximum = _read_int("/proc/sys/user/max_user_namespaces")
    clone = _read_int("/proc/sys/kernel/unprivileged_userns_clone")
    apparmor = _read_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
    problems = []
    if maximum == 0:
        problems.append(("user.max_user_namespaces is 0",
                         "sysctl -w user.max_user_namespaces=15000"))
    if clone == 0:
        problems.append(("kernel.unprivileged_userns_clone is 0",
                         "sysctl -w kernel.unprivileged_userns_clone=1"))
    if apparmor == 1:
        problems.append(("AppArmor restricts unprivileged user namespaces",
                         "an AppArmor profile allowing userns for bwrap, or sysctl -w "
                         "kernel.apparmor_restrict_unprivileged_userns=0"))
    if problems:
        return Check("user namespaces", False, "; ".join(p for p, _ in problems),
                     "; ".join(f for _, f in problems))
    return Check("user namespaces", True,
                 f"uid {os.geteuid()}: bots run as the worker's uid in a user namespace")


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _writable_paths(root: bool) -> list[Check]:
    tmp = tempfile.gettempdir()
    checks = [Check("match folders", os.access(tmp, os.W_OK | os.X_OK),
                    f"{tmp} (bots' sources for a match, removed after it)",
                    f"make {tmp} writable, or set TMPDIR to a writable folder")]
    if root:
        slots = Path("/run/tacocat-sandbox")
        usable = (slots.is_dir() and os.access(slots, os.W_OK)) or os.access("/run", os.W_OK)
        checks.append(Check("uid slot locks", True,
                            str(slots) if usable else f"{tmp}/tacocat-sandbox-slots (no /run)",
                            required=False))
    return checks

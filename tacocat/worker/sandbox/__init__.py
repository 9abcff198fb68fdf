"""The sandbox a submitted (untrusted) bot runs in: bubblewrap, seccomp, rlimits, a pids bound.

Threat model (docs/SECURITY.md has the long form). A submitted bot is arbitrary Python that
runs on our workers, next to the worker's Redis credentials, the other bot of the match and
every other user's bot source. It may be actively hostile. It must not be able to: reach any
network (exfiltrate sources, attack Redis or the internet); read anything but its own
directory and the read-only runtime it needs (other bots' sources, the worker's files and
environment secrets such as ``REDIS_URL``); write anything that outlives it or that another
process reads; see, signal or ptrace any process but its own; change anything in the kernel
(sysctls, core pattern); exhaust the machine (memory, CPU, disk, processes, file
descriptors); or outlive its match. It may crash, hang or print garbage: those are the
referee's business (:mod:`tacocat.referee` turns them into forfeits and caps frame
sizes), not the sandbox's.

The layers, outermost first, and why each is there:

1. **rlimits** (set in ``preexec_fn`` before ``bwrap`` is exec'ed, inherited by everything
   below it): CPU seconds (SIGXCPU, then SIGKILL one second later), address space (a memory
   hog gets ``MemoryError``), file size, open files, no core dumps. Cheap, per process, and
   they hold whatever else fails.
2. **Never root, in any namespace that matters.** When the worker runs as root (CI, most
   containers) every bot runs as a *dedicated unprivileged uid per bot slot*
   (``uid_base + slot``, the slot leased with ``flock``): bwrap runs as root without a user
   namespace, keeps only CAP_SETUID/CAP_SETGID, and the system's ``setpriv`` (or a tiny
   trusted stub) drops to the slot's uid before exec'ing the bot, which clears every
   capability. We do *not* use a user namespace as root: bwrap maps the sandbox's uid to
   the caller's, i.e. to uid 0 outside, and the kernel grants write access to
   ``/proc/sys`` (``kernel.core_pattern``: a host root escape) by that global uid alone,
   capabilities or not (tested: it opens for writing). When the worker is not root, bwrap's
   user namespace maps the bot to the worker's own unprivileged uid, which is safe in that
   respect.
3. **A process-count bound that holds for root.** ``RLIMIT_NPROC`` never binds uid 0 (the
   kernel exempts the root user outright), and a fork bomb in a PID namespace still fills
   the host's PID table. So: a *pids cgroup* per bot (``pids.max``), joined in
   ``preexec_fn``, where the worker may manage cgroups (v1 as root; v2 as root or in a
   delegated subtree: :mod:`~tacocat.worker._cgroups`), and, as root,
   ``RLIMIT_NPROC`` on the slot's dedicated uid (it binds a non-root uid, and the uid is the
   bot's alone). Either bound suffices; both apply where both are available. Both also give
   :meth:`SandboxedCommand.kill` an exact list of everything the bot started.
4. **bubblewrap namespaces**: new mount, PID, network, IPC, UTS and cgroup namespaces (what
   ``--unshare-all`` does, spelled out, since as root the user namespace is left out, see 2).
   The network namespace has only a down loopback: no network at all, DNS included. The mount
   namespace contains only read-only binds of the system (``/usr`` and its ``/lib`` links), the
   Python installation(s) and the ``tacocat`` package, the bot's own directory at ``/bot`` (a
   read-only copy: a bind would name the host's match folder in ``/proc/self/mountinfo``), a
   fresh ``/proc`` and a ``/dev`` of five devices (no ptys: they are a host-wide allowance;
   docs/SECURITY.md has every such resource), and one size-capped tmpfs at ``/tmp`` (also
   ``HOME``); the root and ``/dev`` are remounted read-only so nothing else can be written (an
   unbounded tmpfs would be a memory hole). Its own PID namespace means it cannot name, signal
   or ptrace anything outside, and killing the namespace's init (bwrap's reaper) kills
   everything inside. ``--cap-drop ALL``, ``--new-session`` (no TIOCSTI into a terminal),
   ``--die-with-parent``, ``--clearenv`` with only ``PATH``, ``HOME``, ``TMPDIR``, ``LANG`` and
   ``PYTHON*`` set.
5. **seccomp** (a BPF program built here with the standard library, handed to bwrap with
   ``--seccomp FD``, applied just before the ``execve`` of the command, with no-new-privileges):
   ``socket``/``socketpair`` refused except ``AF_UNIX`` (asyncio needs a socketpair; unix
   sockets reach nothing outside the namespaces); no ``ptrace``, ``process_vm_*``; no new
   namespaces (``unshare``, ``setns``, namespace flags to ``clone``; ``clone3`` answers
   ``ENOSYS`` so libc falls back to ``clone``, whose flags a filter can inspect); no
   ``io_uring`` (it can open sockets behind seccomp's back), ``bpf``, ``perf_event_open``,
   ``userfaultfd``, keyrings, inotify, fanotify, message queues, SysV IPC, mounts, modules,
   kexec, ``open_by_handle_at``. Syscalls of other ABIs (i386 ``int 0x80`` on x86-64, 32-bit
   arm) kill the process; x32 numbers are refused. Namespaces, uids and capabilities already
   forbid most of this: seccomp shrinks the kernel surface a hostile bot can poke at if one of
   them has a hole.
6. **Parent death**: ``PR_SET_PDEATHSIG`` (SIGKILL) on the bwrap process (set in
   ``preexec_fn``, last, since a credential change would clear it) and bwrap's own
   ``--die-with-parent`` for the bot: a worker killed with SIGKILL takes its bots with it.

How the worker uses it::

    if not use_sandbox(insecure_no_sandbox=args.insecure_no_sandbox, logger=log):
        ...  # every submitted bot then runs through unsandboxed_command (loudly logged)
    cmd = sandboxed_command(policy, bot_dir, [sys.executable, "-m", "tacocat.sdk.host",
                                              "bot.py"])
    host = HostProcess(bot_name, **cmd.host_process_kwargs())
    try:
        ...  # host.start(), play the match
    finally:
        host.close()
        cmd.close()  # kills whatever is left, removes the cgroup, releases the uid slot

Paths in ``python_argv`` after the interpreter are relative to the bot's directory: it is the
working directory both inside the sandbox (``/bot``) and without one. As root, the bot's
directory and files must be world-readable (the bot's uid is not the owner).

Its public names are all here; its modules are private:

- ``_policy``: :class:`SandboxPolicy`, the limits;
- ``_mounts``: what the bot sees (binds, visible Python, environment);
- ``_preexec``: the fork-to-exec hook (cgroup, rlimits, parent death);
- ``_seccomp``: the seccomp filter;
- ``_cgroups``: the bot's cgroups on cgroup v1 or v2 (bounds, CPU use);
- ``_confine``: killing what a bot started, the uid slots, and :func:`pid_alive`;
- ``_command``: :class:`SandboxedCommand`, its start and its clean-up;
- ``_bwrap``: the command itself (:func:`sandboxed_command`, :func:`unsandboxed_command`)
  and whether the sandbox works here at all (:func:`sandbox_status`, :func:`use_sandbox`);
- ``_check``: what this host gives the sandbox, each missing thing with its fix
  (:func:`check_host`, ``tacocat worker --check``); imported on first use, since a worker's
  start does not need it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import SandboxUnavailableError
from ._bwrap import (
    INSECURE_WARNING,
    SandboxStatus,
    log_insecure_warning,
    sandbox_available,
    sandbox_status,
    sandboxed_command,
    unsandboxed_command,
    use_sandbox,
)
from ._command import SandboxedCommand
from ._confine import pid_alive
from ._mounts import BOT_DIR, SANDBOX_TMP
from ._policy import SandboxPolicy
from ._seccomp import seccomp_program

if TYPE_CHECKING:
    from ._check import HostReport

__all__ = [
    "BOT_DIR",
    "INSECURE_WARNING",
    "SANDBOX_TMP",
    "SandboxPolicy",
    "SandboxStatus",
    "SandboxUnavailableError",
    "SandboxedCommand",
    "check_host",
    "log_insecure_warning",
    "pid_alive",
    "sandbox_available",
    "sandbox_status",
    "sandboxed_command",
    "seccomp_program",
    "unsandboxed_command",
    "use_sandbox",
]


def check_host(policy: SandboxPolicy | None = None) -> HostReport:
    """Look at everything the sandbox needs on this host (a second or so: it starts a real
    sandboxed process at the end); the report says what is missing, each with its fix."""
    # Imported here: the check is for ``tacocat worker --check`` and a worker's start report,
    # not for every ``import tacocat.worker``.
    from ._check import check_host as check  # noqa: PLC0415

    return check(policy)

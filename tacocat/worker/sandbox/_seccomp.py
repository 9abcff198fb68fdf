"""The seccomp filter of the bot sandbox, assembled as classic BPF with the standard library.

bubblewrap loads it (``--seccomp FD``). It allows sockets only for ``AF_UNIX`` (asyncio needs a
socketpair) and refuses ptrace, new namespaces, io_uring, bpf, keyrings, mounts and the like;
any foreign syscall ABI kills the process. :mod:`tacocat.worker.sandbox` has the threat model.
"""

from __future__ import annotations

import platform
import struct
from dataclasses import dataclass

from ..errors import SandboxUnavailableError

# struct sock_filter {u16 code; u8 jt; u8 jf; u32 k;}; struct seccomp_data {int nr;
# u32 arch; u64 instruction_pointer; u64 args[6];}. Both supported ABIs are little-endian.
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_OFF_NR, _OFF_ARCH, _OFF_ARG0 = 0, 4, 16

_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000
_EPERM, _ENOSYS = 1, 38
_AF_UNIX = 1
_X32_SYSCALL_BIT = 0x40000000
_CLONE_NEW_NAMESPACES = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
                         | 0x20000000 | 0x40000000)  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|
#                                                      NEWPID|NEWNET

# Refused syscalls and the errno they answer. ENOSYS where a caller should fall back
# (glibc retries clone3 as clone; io_uring users fall back to plain I/O).
_DENIED: dict[str, int] = {
    "ptrace": _EPERM, "process_vm_readv": _EPERM, "process_vm_writev": _EPERM,
    "kcmp": _EPERM, "pidfd_getfd": _EPERM,
    "unshare": _EPERM, "setns": _EPERM, "clone3": _ENOSYS,
    "mount": _EPERM, "umount2": _EPERM, "pivot_root": _EPERM, "chroot": _EPERM,
    "fsopen": _EPERM, "fsconfig": _EPERM, "fsmount": _EPERM, "fspick": _EPERM,
    "move_mount": _EPERM, "open_tree": _EPERM, "mount_setattr": _EPERM,
    "io_uring_setup": _ENOSYS, "io_uring_enter": _ENOSYS, "io_uring_register": _ENOSYS,
    "bpf": _EPERM, "perf_event_open": _EPERM, "userfaultfd": _EPERM,
    "keyctl": _EPERM, "add_key": _EPERM, "request_key": _EPERM,
    "kexec_load": _EPERM, "kexec_file_load": _EPERM, "init_module": _EPERM,
    "finit_module": _EPERM, "delete_module": _EPERM,
    "open_by_handle_at": _EPERM, "name_to_handle_at": _EPERM, "lookup_dcookie": _EPERM,
    "swapon": _EPERM, "swapoff": _EPERM, "reboot": _EPERM, "acct": _EPERM,
    "quotactl": _EPERM, "syslog": _EPERM,
    # A bot's threads stay on the worker's core at the worker's priority (its cpuset holds
    # them there too): no moving to the other worker's core, no real-time class.
    "sched_setaffinity": _EPERM, "sched_setscheduler": _EPERM, "sched_setparam": _EPERM,
    "sched_setattr": _EPERM,
    # Kernel objects counted per uid or per host rather than per bot (docs/SECURITY.md,
    # "Host-wide kernel resources"): a bot that runs as the worker's own uid (no root) would
    # spend the worker's allowance. No bot needs them; SysV IPC and message queues would
    # be in the bot's own IPC namespace, but out of reach is simpler to prove.
    "inotify_init": _EPERM, "inotify_init1": _EPERM, "fanotify_init": _EPERM,
    "mq_open": _EPERM, "msgget": _EPERM, "semget": _EPERM, "shmget": _EPERM,
}


@dataclass(frozen=True)
class _Abi:
    audit_arch: int
    x32: bool  # x86-64: numbers with the x32 bit set are another ABI
    numbers: dict[str, int]


ABIS: dict[str, _Abi] = {
    "x86_64": _Abi(0xC000003E, True, {
        "socket": 41, "socketpair": 53, "clone": 56, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "kcmp": 312, "pidfd_getfd": 438, "unshare": 272,
        "setns": 308, "clone3": 435, "mount": 165, "umount2": 166, "pivot_root": 155,
        "chroot": 161, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "move_mount": 429, "open_tree": 428, "mount_setattr": 442, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "bpf": 321, "perf_event_open": 298,
        "userfaultfd": 323, "keyctl": 250, "add_key": 248, "request_key": 249,
        "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
        "delete_module": 176, "open_by_handle_at": 304, "name_to_handle_at": 303,
        "lookup_dcookie": 212, "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163,
        "quotactl": 179, "syslog": 103, "sched_setaffinity": 203, "sched_setscheduler": 144,
        "sched_setparam": 142, "sched_setattr": 314, "inotify_init": 253,
        "inotify_init1": 294, "fanotify_init": 300, "mq_open": 240, "msgget": 68,
        "semget": 64, "shmget": 29,
    }),
    "aarch64": _Abi(0xC00000B7, False, {
        "socket": 198, "socketpair": 199, "clone": 220, "ptrace": 117,
        "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "pidfd_getfd": 438,
        "unshare": 97, "setns": 268, "clone3": 435, "mount": 40, "umount2": 39,
        "pivot_root": 41, "chroot": 51, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217,
        "request_key": 218, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105,
        "finit_module": 273, "delete_module": 106, "open_by_handle_at": 265,
        "name_to_handle_at": 264, "lookup_dcookie": 18, "swapon": 224, "swapoff": 225,
        "reboot": 142, "acct": 89, "quotactl": 60, "syslog": 116, "sched_setaffinity": 122,
        "sched_setscheduler": 119, "sched_setparam": 118, "sched_setattr": 274,
        "inotify_init1": 26, "fanotify_init": 262, "mq_open": 180, "msgget": 186,
        "semget": 190, "shmget": 194,  # no inotify_init: aarch64 has only inotify_init1
    }),
}
ABIS["amd64"] = ABIS["x86_64"]
ABIS["arm64"] = ABIS["aarch64"]


class _Assembler:
    """A few classic-BPF instructions with symbolic jump targets (``None``: the next one)."""

    def __init__(self) -> None:
        self._code: list[tuple[int, str | None, str | None, int]] = []
        self._labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def load(self, offset: int) -> None:
        self._code.append((_LD_ABS, None, None, offset))

    def jump(self, op: int, k: int, true: str | None, false: str | None = None) -> None:
        self._code.append((op, true, false, k))

    def ret(self, value: int) -> None:
        self._code.append((_RET, None, None, value))

    def assemble(self) -> bytes:
        out = bytearray()
        for pos, (code, true, false, k) in enumerate(self._code):
            out += struct.pack("<HBBI", code, self._offset(pos, true), self._offset(pos, false),
                               k)
        return bytes(out)

    def _offset(self, pos: int, target: str | None) -> int:
        if target is None:
            return 0
        offset = self._labels[target] - pos - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"BPF jump to {target} out of range ({offset})")
        return offset


def seccomp_program(machine: str | None = None) -> bytes:
    """The compiled seccomp filter (an array of ``struct sock_filter``) bwrap loads.

    It serves both ABIs it knows (x86-64 and aarch64) whatever ``machine`` is; ``machine``
    (default: this one) must be one of them.
    """
    machine = machine or platform.machine()
    if machine not in ABIS:
        raise SandboxUnavailableError(f"no seccomp filter for this machine ({machine}); "
                                      "supported: x86_64, aarch64")
    asm = _Assembler()
    asm.load(_OFF_ARCH)
    asm.jump(_JEQ, ABIS["x86_64"].audit_arch, "x86_64")
    asm.jump(_JEQ, ABIS["aarch64"].audit_arch, "aarch64")
    asm.ret(_RET_KILL_PROCESS)  # another ABI (i386 int 0x80, arm32): no filter applies
    for name in ("x86_64", "aarch64"):
        abi = ABIS[name]
        nr = abi.numbers
        asm.label(name)
        asm.load(_OFF_NR)
        if abi.x32:
            asm.jump(_JGE, _X32_SYSCALL_BIT, f"{name}.deny")
        for syscall, errno_ in _DENIED.items():
            if syscall not in nr:
                continue
            asm.jump(_JEQ, nr[syscall], None, f"{name}.not.{syscall}")
            asm.ret(_RET_ERRNO | errno_)
            asm.label(f"{name}.not.{syscall}")
        # socket(2), socketpair(2): AF_UNIX only (the domain is the first argument).
        asm.jump(_JEQ, nr["socket"], f"{name}.socket")
        asm.jump(_JEQ, nr["socketpair"], f"{name}.socket")
        asm.jump(_JEQ, nr["clone"], f"{name}.clone")
        asm.ret(_RET_ALLOW)
        asm.label(f"{name}.socket")
        asm.load(_OFF_ARG0)
        asm.jump(_JEQ, _AF_UNIX, f"{name}.allow", f"{name}.deny")
        asm.label(f"{name}.clone")  # clone(flags, ...): no new namespaces
        asm.load(_OFF_ARG0)
        asm.jump(_JSET, _CLONE_NEW_NAMESPACES, f"{name}.deny", f"{name}.allow")
        asm.label(f"{name}.allow")
        asm.ret(_RET_ALLOW)
        asm.label(f"{name}.deny")
        asm.ret(_RET_ERRNO | _EPERM)
    return asm.assemble()

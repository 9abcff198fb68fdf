#!/bin/bash
# Runs inside the cgroup-v2 VM (scripts/cgroup2-vm), from the checkout: the sandbox's
# host-dependent tests, first as root in the guest's root cgroup, then as a non-root worker
# in a delegated subtree (what systemd's Delegate=yes or a container runtime gives it:
# a cgroup of its own, owned by its uid, with the controllers enabled above it).
#   tests/hosts/vm_suite.sh PYTHON ROOT_TESTS... -- USER_TESTS...
set -u
python=$1; shift
root_tests=(); user_tests=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do root_tests+=("$1"); shift; done
[ $# -gt 0 ] && shift
user_tests=("$@")
# Under emulation an interpreter start takes seconds: bots get 2 minutes to say Hello.
export PYTHONDONTWRITEBYTECODE=1 TACOCAT_TEST_STARTUP=120
pytest_args=(-q -s --color=no --durations=3 -p no:cacheprovider -o addopts= --timeout 600 -W ignore::pytest.PytestUnraisableExceptionWarning)

echo "vm-suite: phase root"
started=$(date +%s)
"$python" -m pytest "${pytest_args[@]}" "${root_tests[@]}"
echo "vm-suite: root exit $? in $(( $(date +%s) - started )) s"

# The delegated subtree: a cgroup owned by the worker's uid, controllers enabled for it.
uid=10001
deleg=/sys/fs/cgroup/tacocat-delegated
mkdir -p $deleg
echo "+cpu +cpuset +memory +pids" > /sys/fs/cgroup/cgroup.subtree_control
chown $uid:$uid $deleg $deleg/cgroup.procs $deleg/cgroup.subtree_control $deleg/cgroup.threads
mkdir -p /tmp/worker-home && chown $uid:$uid /tmp/worker-home
echo "vm-suite: phase delegated (uid $uid in $deleg)"
started=$(date +%s)
(
  echo $BASHPID > $deleg/cgroup.procs
  exec setpriv --reuid=$uid --regid=$uid --clear-groups --inh-caps=-all \
    env HOME=/tmp/worker-home "$python" -m pytest "${pytest_args[@]}" "${user_tests[@]}"
)
echo "vm-suite: delegated exit $? in $(( $(date +%s) - started )) s"
left=$(find /sys/fs/cgroup -mindepth 1 -type d -name '[0-9]*-[0-9]*-*')
echo "vm-suite: leftover cgroups: $(echo -n "$left" | grep -c .) $left"
echo "vm-suite: leftover processes: $(ps -eo uid= | awk '$1 >= 1600000000 || $1 == 10001' | wc -l)"

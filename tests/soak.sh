#!/usr/bin/env bash
# soak.sh: create/start/delete (and run) cycles, then check that nothing
# grew: host mount table, cgroup directories of the soak's containers,
# entries of the state root, fds of this shell, processes of the soak.
#
#   SOAK_COUNT=1000 RUNTIME=/path/to/sandrun tests/soak.sh
#
# SOAK_COUNT (default 1000; CI runs a short one, e.g. 50), RUNTIME (default:
# the build in tests/.work/build/sandrun, or `sandrun` in PATH).  Needs root
# and busybox-static (for contrib/scripts/mkbundle.sh).  Exit status 0 when
# nothing leaked, 1 otherwise; one line per problem on stderr, and the
# verdict as one TAP test on stdout (for tests/run-all.sh).
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "$0")/.." && pwd)
COUNT=${SOAK_COUNT:-1000}
RUNTIME=${RUNTIME:-$REPO_ROOT/tests/.work/build/sandrun}
[[ -x $RUNTIME ]] || RUNTIME=$(command -v sandrun) || {
	echo "soak.sh: no runtime (set RUNTIME)" >&2
	exit 1
}
TIMEOUT=60

WORK=$(mktemp -d /tmp/sandrun-soak-XXXXXX)
BUNDLE=$WORK/bundle
ROOT=$WORK/root
PREFIX=soak-$$
MARK="SANDRUN_SOAK_MARK=$WORK"

cleanup() {
	local dir
	for dir in "$ROOT"/*; do
		[[ -d $dir ]] || continue
		timeout "$TIMEOUT" "$RUNTIME" --root "$ROOT" delete -f "${dir##*/}" >/dev/null 2>&1 || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

rt() {
	timeout --kill-after=5 "$TIMEOUT" "$RUNTIME" --root "$ROOT" "$@"
}

# Mounts at or under the soak's directory (the host's whole table is
# reported too, but other processes may mount and unmount meanwhile).
work_mounts() { awk -v w="$WORK" 'index($5, w) == 1' /proc/self/mountinfo | wc -l; }
host_mounts() { wc -l </proc/self/mountinfo; }
cgroup_dirs() { find /sys/fs/cgroup -maxdepth 5 -type d -name "$PREFIX-*" 2>/dev/null | wc -l; }
root_entries() { find "$ROOT" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
shell_fds() { find /proc/$$/fd -mindepth 1 -maxdepth 1 | wc -l; }
# Processes of the soak: the containers' (marked) and this shell's children.
soak_procs() {
	{
		grep -lzxF "$MARK" /proc/[0-9]*/environ 2>/dev/null || true
		pgrep -P $$ || true
	} | wc -l
}

snapshot() {
	echo "mounts=$(work_mounts) cgroups=$(cgroup_dirs) root=$(root_entries) fds=$(shell_fds) procs=$(soak_procs)"
}

# Two bundles on one rootfs: a long-lived process for create/start/kill, a
# short one for run.
"$REPO_ROOT/contrib/scripts/mkbundle.sh" --no-terminal "$BUNDLE" -- sleep 1000 >/dev/null
jq --arg m "$MARK" '.process.env += [$m]' "$BUNDLE/config.json" >"$BUNDLE/c" && mv "$BUNDLE/c" "$BUNDLE/config.json"
mkdir -p "$WORK/short" "$ROOT"
jq --arg r "$BUNDLE/rootfs" '.root.path = $r | .process.args = ["true"]' "$BUNDLE/config.json" >"$WORK/short/config.json"

cycle() {
	local id=$PREFIX-$1
	# create, start, state, kill, delete --force
	rt create -b "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 || return 1
	rt start "$id" || return 1
	rt state "$id" >/dev/null || return 1
	rt kill "$id" KILL || return 1
	rt delete --force "$id" || return 1
	# and a foreground run, which cleans up after itself
	rt run -b "$WORK/short" "$id-r" </dev/null >/dev/null 2>&1 || return 1
}

# Warm-up: the first cycles may create lasting things on purpose (the
# seccomp cache, parent cgroups).
for i in 1 2 3; do
	cycle "warm$i" || {
		echo "soak.sh: warm-up cycle $i failed" >&2
		exit 1
	}
done
before=$(snapshot)
host_before=$(host_mounts)
start=$(date +%s)
failures=0
for ((i = 1; i <= COUNT; i++)); do
	if ! cycle "$i"; then
		failures=$((failures + 1))
		echo "soak.sh: cycle $i failed" >&2
		((failures < 10)) || break
	fi
	((i % 100)) || echo "soak.sh: $i cycles, $(snapshot)"
done
cycles=$((i > COUNT ? COUNT : i))
# Processes may take a moment to be reaped by whoever inherited them.
for _ in $(seq 1 50); do
	[[ $(soak_procs) -eq 0 ]] && break
	sleep 0.1
done
after=$(snapshot)
host_after=$(host_mounts)
elapsed=$(($(date +%s) - start))
echo "soak.sh: $cycles cycles in ${elapsed}s; before: $before; after: $after; host mount table: $host_before -> $host_after lines"

echo "1..1"
status=0
((failures == 0)) || {
	echo "soak.sh: $failures cycles failed" >&2
	status=1
}
[[ $before == "$after" ]] || {
	echo "soak.sh: something grew: before: $before; after: $after" >&2
	status=1
}
# Informative only: other processes on the host may change it too.
((host_after <= host_before)) ||
	echo "soak.sh: warning: the host's mount table grew by $((host_after - host_before)) lines" >&2
if ((status == 0)); then
	echo "ok 1 soak: $cycles create/start/delete and run cycles, nothing grew"
else
	echo "not ok 1 soak: $cycles cycles, $failures failed; before: $before; after: $after"
fi
exit $status

# Shared helpers of the bats integration suite.
#
# Every test gets its own bundle ($BUNDLE, copied from a busybox rootfs built
# once per run) and its own state root ($ROOT, passed as --root), both under
# $BATS_TEST_TMPDIR, so a test never touches /run/sandrun or another test's
# containers.  The suite is written against runc's CLI semantics and runs with
# any runc-compatible binary:
#
#   RUNTIME=crun bats tests/integration        # default: the built sandrun

bats_require_minimum_version 1.5.0

REPO_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
WORK_DIR=${SANDRUN_TEST_WORK:-$REPO_ROOT/tests/.work}
MKBUNDLE=$REPO_ROOT/contrib/scripts/mkbundle.sh
ROOTFS_CACHE=$WORK_DIR/rootfs
ROOTFS_LOCK=$WORK_DIR/.rootfs.lock
# In the emulated cgroup-v2 guest (vm-run) the work tree is a 9p share, twenty
# times slower to copy from than the guest's tmpfs: the tests copy their rootfs
# from a cache there, itself copied once from the host's.
if [[ -n ${VM_RUN:-} ]]; then
	ROOTFS_CACHE=/tmp/sandrun-test-rootfs
	ROOTFS_LOCK=/tmp/sandrun-test-rootfs.lock
fi
RECVTTY=${RECVTTY:-$WORK_DIR/recvtty}
# Seconds one runtime invocation may take before it counts as hung.
RUNTIME_TIMEOUT=${RUNTIME_TIMEOUT:-60}

RUNTIME=${RUNTIME:-$WORK_DIR/build/sandrun}
if [[ $RUNTIME != */* ]]; then
	RUNTIME=$(command -v "$RUNTIME" || echo "$RUNTIME")
fi
export RUNTIME
# sandrun, crun or runc: only to word messages, never to skip a test.
RUNTIME_NAME=$(basename "$RUNTIME")

# --- one-time preparation ----------------------------------------------------

# The cached rootfs is built once (under a lock, so parallel bats jobs agree).
ensure_rootfs_cache() {
	[[ -x $ROOTFS_CACHE/bin/busybox ]] && return 0
	mkdir -p "$WORK_DIR"
	(
		flock 9
		if [[ ! -x $ROOTFS_CACHE/bin/busybox ]]; then
			rm -rf "$ROOTFS_CACHE.tmp"
			if [[ $ROOTFS_CACHE != "$WORK_DIR/rootfs" && -x $WORK_DIR/rootfs/bin/busybox ]]; then
				cp -a "$WORK_DIR/rootfs" "$ROOTFS_CACHE.tmp"
			else
				"$MKBUNDLE" --rootfs-only "$ROOTFS_CACHE.tmp"
			fi && mv "$ROOTFS_CACHE.tmp" "$ROOTFS_CACHE"
		fi
	) 9>"$ROOTFS_LOCK"
}

# --- per-test bundle and state root -------------------------------------------

# setup_bundle [ARG...]: fresh $BUNDLE (terminal off, args ARG... or `true`),
# fresh $ROOT, and $CID, a container id unique to this test.
setup_bundle() {
	[[ -x $RUNTIME ]] || fail "RUNTIME $RUNTIME is not an executable (build sandrun or set RUNTIME)"
	ensure_rootfs_cache || fail "cannot build the busybox rootfs cache"
	BUNDLE=$BATS_TEST_TMPDIR/bundle
	ROOT=$BATS_TEST_TMPDIR/root
	CID=srt-$$-${BATS_SUITE_TEST_NUMBER:-0}
	# Every process of the container inherits this, so leftovers can be found.
	TEST_MARK="SANDRUN_TEST_MARK=$BATS_TEST_TMPDIR"
	mkdir -p "$ROOT"
	local -a args=("$@")
	((${#args[@]})) || args=(true)
	"$MKBUNDLE" --no-terminal --rootfs-from "$ROOTFS_CACHE" "$BUNDLE" -- "${args[@]}" ||
		fail "mkbundle.sh failed"
	update_config --arg m "$TEST_MARK" '.process.env += [$m]'
	export BUNDLE ROOT CID TEST_MARK
}

# bundle_traversable: let any uid reach the rootfs (bats makes its temporary
# directories 0700), for containers whose root is not the host's root (user
# namespaces).
bundle_traversable() {
	local d=$BUNDLE
	while [[ $d == "$BATS_RUN_TMPDIR"* ]]; do
		chmod o+x "$d"
		d=$(dirname "$d")
	done
}

# teardown_bundle: delete every container of this test, whatever state the
# runtime left them in, then kill its stray processes, undo stray mounts and
# remove its directories.
teardown_bundle() {
	[[ -n ${ROOT:-} ]] || return 0
	local id ids
	ids=$(container_ids)
	while IFS= read -r id; do
		[[ -n $id ]] || continue
		runtime delete -f "$id" </dev/null >/dev/null 2>&1 || true
	done <<<"$ids"
	kill_marked_processes
	umount_bundle_mounts
	remove_leaked_cgroups "$CID" $ids
	stop_recvtty
	rm -rf "$ROOT" "$BUNDLE"
}

# remove_leaked_cgroups ID...: rmdir the (empty) cgroups a broken runtime
# left behind for these containers, so one failing run does not pollute the
# next; assert_no_leftovers is what reports them.
remove_leaked_cgroups() {
	local id d
	for id in "$@"; do
		[[ -n $id && $id != */* && $id != .* ]] || continue
		for d in $(cgroups_named "$id"); do
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
		done
	done
	return 0
}

# Ids the runtime knows plus the entries of the state root (a broken `list`
# must not hide a container from the cleanup).
container_ids() {
	{
		runtime list -q </dev/null 2>/dev/null
		find "$ROOT" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null
	} | sort -u
}

# PIDs of the processes carrying this test's mark in their environment.
marked_pids() {
	local f pid
	for f in $(grep -lzxF "$TEST_MARK" /proc/[0-9]*/environ 2>/dev/null); do
		pid=${f#/proc/}
		pid=${pid%/environ}
		[[ $pid == "$$" || $pid == "$BASHPID" ]] || echo "$pid"
	done
}

live_marked_pids() {
	local pid
	for pid in $(marked_pids); do
		pid_alive "$pid" && echo "$pid"
	done
	return 0
}

kill_marked_processes() {
	local pid
	for pid in $(marked_pids); do
		kill -9 "$pid" 2>/dev/null || true
	done
	return 0
}

# Mount points (host mount namespace) at or under the bundle.
bundle_mounts() {
	awk -v b="$BUNDLE" '$5 == b || index($5, b "/") == 1 { print $5 }' /proc/self/mountinfo
}

umount_bundle_mounts() {
	local m
	for m in $(bundle_mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	return 0
}

# --- running the runtime ---------------------------------------------------------

# runtime ARG...: the runtime under test with this test's --root, bounded in
# time.  Use as `run runtime state "$CID"`.  fd 3 is bats' own output: a
# container that inherited it would keep bats waiting forever.
runtime() {
	timeout --kill-after=5 "$RUNTIME_TIMEOUT" "$RUNTIME" --root "$ROOT" "$@" 3>&-
}

# with_ignored_signals CMD...: CMD with SIGPIPE, SIGUSR1 and SIGUSR2
# ignored, as an engine or a shell may start the runtime (an ignored signal
# survives execve).
with_ignored_signals() {
	(
		trap '' PIPE USR1 USR2
		"$@"
	)
}

# runtime_stdout_to_file ARG...: `runtime ARG...` with stdin from /dev/null
# and stdout to $BATS_TEST_TMPDIR/stdout, for `run --separate-stderr` of a
# command that may (wrongly or not) leave a container holding its stdout.
runtime_stdout_to_file() {
	runtime "$@" </dev/null >>"$BATS_TEST_TMPDIR/stdout"
}

# update_config [JQ-OPTION...] FILTER: edit $BUNDLE/config.json in place.
update_config() {
	local tmp=$BUNDLE/config.json.tmp
	if ! jq "$@" "$BUNDLE/config.json" >"$tmp" || [[ ! -s $tmp ]]; then
		fail "update_config failed: $*"
		return 1
	fi
	mv "$tmp" "$BUNDLE/config.json"
}

# set_args ARG...: process.args = the ARGs.
set_args() {
	update_config --argjson a "$(json_array "$@")" '.process.args = $a'
}

# json_array ARG...: the ARGs as a JSON array of strings, with one jq (each
# ARG goes in with an "x" in front, or jq would take one such as -c for its
# own option, and comes out without it).
json_array() {
	jq -cn '$ARGS.positional | map(.[1:])' --args "${@/#/x}"
}

# set_cmd 'SHELL CODE': process.args = ["sh", "-c", CODE].
set_cmd() {
	set_args sh -c "$1"
}

# state_field ID FIELD: one field of `state` (e.g. status, pid).
state_field() {
	runtime state "$1" | jq -r ".$2"
}

# wait_status ID STATUS [TRIES]: poll until the container has STATUS (each try
# 0.1 s).
wait_status() {
	local id=$1 want=$2 tries=${3:-100} got=
	while ((tries-- > 0)); do
		got=$(state_field "$id" status 2>/dev/null)
		[[ $got == "$want" ]] && return 0
		sleep 0.1
	done
	echo "container $id: status '$got', wanted '$want'" >&2
	return 1
}

# A detached container keeps the stdio of the command that created it, so
# never let it inherit the pipe of bats' `run` (that would hang the test):
# these helpers send it to $BATS_TEST_TMPDIR/ID.out (stdout and stderr).
ct_out() {
	echo "$BATS_TEST_TMPDIR/$1.out"
}

# create_container [OPTION...] ID: `create -b $BUNDLE OPTION... ID`; sets
# $status and $output (the runtime's messages, read from the .out file).
create_container() {
	local id=${*: -1}
	status=0
	runtime create -b "$BUNDLE" "$@" </dev/null >"$(ct_out "$id")" 2>&1 || status=$?
	output=$(cat "$(ct_out "$id")")
}

# run_detached [OPTION...] ID: `run -d -b $BUNDLE OPTION... ID`, likewise.
run_detached() {
	local id=${*: -1}
	status=0
	runtime run -d -b "$BUNDLE" "$@" </dev/null >"$(ct_out "$id")" 2>&1 || status=$?
	output=$(cat "$(ct_out "$id")")
}

# wait_output ID TEXT [TRIES]: poll the container's output for TEXT.
wait_output() {
	local tries=${3:-100}
	while ((tries-- > 0)); do
		grep -qF -- "$2" "$(ct_out "$1")" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "container $1 never printed '$2'; output: $(cat "$(ct_out "$1")" 2>&1)"
}

# create_running [ID]: create + start a container running `sleep 1000`
# (args left as they are when the caller set them already with KEEP_ARGS=1).
create_running() {
	local id=${1:-$CID}
	[[ -n ${KEEP_ARGS:-} ]] || set_args sleep 1000
	create_container "$id"
	[[ $status -eq 0 ]] || fail "create $id failed: $output"
	runtime start "$id" || fail "start $id failed"
	wait_status "$id" running || fail "container $id not running"
}

# pid_alive PID: the process exists and is not a zombie (the container's
# first process is reaped by whoever inherited it, maybe a little later).
pid_alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# wait_pid_gone PID [TRIES]: poll (0.1 s) until PID is dead or a zombie.
wait_pid_gone() {
	local tries=${2:-50}
	while pid_alive "$1" && ((tries-- > 0)); do
		sleep 0.1
	done
	! pid_alive "$1" || fail "process $1 still alive"
}

# --- assertions ------------------------------------------------------------------

fail() {
	echo "$@" >&2
	return 1
}

# assert_success / assert_failure [STATUS]: on bats' $status, with the output
# shown when it does not hold.
assert_success() {
	if [[ $status -ne 0 ]]; then
		fail "expected success, got status $status; output: $output"
	fi
}

assert_failure() {
	if [[ $status -eq 0 ]]; then
		fail "expected failure, got success; output: $output"
	elif [[ -n ${1:-} && $status -ne $1 ]]; then
		fail "expected status $1, got $status; output: $output"
	fi
}

# assert_output_equals STRING / assert_output_contains STRING
assert_output_equals() {
	[[ $output == "$1" ]] || fail "expected output '$1', got '$output'"
}

assert_output_contains() {
	[[ $output == *"$1"* ]] || fail "expected output containing '$1', got '$output'"
}

# assert_one_error_line [WORD...]: the failure printed exactly one non-empty
# line on stderr (use `run --separate-stderr`), mentioning each WORD (in any
# case).
assert_one_error_line() {
	local n w
	n=$(grep -c . <<<"$stderr")
	((n == 1)) || fail "expected one error line on stderr, got $n: '$stderr'"
	for w in "$@"; do
		grep -qiF -- "$w" <<<"$stderr" || fail "error line does not mention '$w': '$stderr'"
	done
}

# assert_no_container ID: the runtime does not know ID and its state is gone.
assert_no_container() {
	local id=$1
	run runtime state "$id"
	[[ $status -ne 0 ]] || fail "state $id succeeds after delete: $output"
	[[ ! -e $ROOT/$id ]] || fail "state dir $ROOT/$id left behind"
	run runtime list -q
	! grep -qxF "$id" <<<"$output" || fail "list still shows $id"
}

# assert_no_leftovers [ID]: nothing of the test's container(s) is left: no
# state, no mount under the bundle in the host mount namespace, no process, no
# cgroup named after the container.
assert_no_leftovers() {
	local id=${1:-$CID} mounts pids cgs
	assert_no_container "$id"
	mounts=$(bundle_mounts)
	[[ -z $mounts ]] || fail "mounts left behind: $mounts"
	pids=$(live_marked_pids)
	[[ -z $pids ]] || fail "processes left behind: $(ps -o pid,args -p "${pids//$'\n'/,}" 2>&1)"
	cgs=$(cgroups_named "$id")
	[[ -z $cgs ]] || fail "cgroups left behind: $cgs"
}

# cgroups_named ID: cgroup directories (v1 or v2) called ID.
cgroups_named() {
	local d fs
	for d in $(find /sys/fs/cgroup -maxdepth 4 -type d -name "$1" 2>/dev/null); do
		fs=$(stat -f -c %T "$d" 2>/dev/null)
		[[ $fs == cgroupfs || $fs == cgroup2fs ]] && echo "$d"
	done
	return 0
}

# --- inside the container ------------------------------------------------------------

# run_in_container 'SHELL CODE': run it (sh -c) in a fresh container with
# `run`; sets $status and $output like bats' run.
run_in_container() {
	set_cmd "$1"
	run runtime run -b "$BUNDLE" "$CID"
}

# Capability bitmask (hex, 16 digits) of a list of names.
cap_mask() {
	local name mask=0 bit
	for name in "$@"; do
		bit=$(cap_number "$name") || return 1
		mask=$((mask | (1 << bit)))
	done
	printf '%016x\n' "$mask"
}

cap_number() {
	local caps=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID
		SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW
		IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT
		SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE
		AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM
		BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE)
	local i want=${1#CAP_}
	for i in "${!caps[@]}"; do
		[[ ${caps[i]} == "$want" ]] && {
			echo "$i"
			return 0
		}
	done
	return 1
}

# --- host feature checks (skip only when the HOST cannot do it) ------------------

requires_root() {
	[[ $(id -u) -eq 0 ]] || skip "needs root"
}

requires_kernel_file() {
	[[ -e $1 ]] || skip "kernel lacks $1"
}

requires_recvtty() {
	[[ -x $RECVTTY ]] || fail "$RECVTTY missing (tests/run-all.sh builds it from tests/helpers/recvtty.c)"
}

# --- console socket ----------------------------------------------------------------

# start_recvtty: listen on $CONSOLE_SOCKET; the received pty's output goes to
# $BATS_TEST_TMPDIR/tty.out.  Input, if any, comes from $1 (default /dev/null).
start_recvtty() {
	requires_recvtty
	CONSOLE_SOCKET=$BATS_TEST_TMPDIR/console.sock
	TTY_OUT=$BATS_TEST_TMPDIR/tty.out
	"$RECVTTY" "$CONSOLE_SOCKET" <"${1:-/dev/null}" >"$TTY_OUT" 2>"$BATS_TEST_TMPDIR/recvtty.err" &
	RECVTTY_PID=$!
	local tries=50
	while [[ ! -S $CONSOLE_SOCKET ]] && ((tries-- > 0)); do
		sleep 0.1
	done
	[[ -S $CONSOLE_SOCKET ]] || fail "recvtty did not create $CONSOLE_SOCKET"
	export CONSOLE_SOCKET TTY_OUT RECVTTY_PID
}

# wait_recvtty: wait (bounded) for the relay to finish, i.e. the pty closed.
wait_recvtty() {
	local tries=100
	while kill -0 "$RECVTTY_PID" 2>/dev/null && ((tries-- > 0)); do
		sleep 0.1
	done
	stop_recvtty
}

stop_recvtty() {
	[[ -n ${RECVTTY_PID:-} ]] || return 0
	kill "$RECVTTY_PID" 2>/dev/null || true
	wait "$RECVTTY_PID" 2>/dev/null || true
	RECVTTY_PID=
	return 0
}

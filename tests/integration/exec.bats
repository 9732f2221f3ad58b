#!/usr/bin/env bats
# exec: one more process in a live container, with runc's flags and
# semantics (namespaces, cgroup, identity, capabilities, environment,
# terminal, detach, exit status).

load helpers

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

# init_pid: the pid of the container's init.
init_pid() {
	state_field "$CID" pid
}

# exec_fails WORD...: the last `run --separate-stderr runtime exec ...` failed
# with one error line mentioning each WORD.
exec_fails() {
	assert_failure
	assert_one_error_line "$@"
}

# wait_output_file FILE TEXT: poll FILE for TEXT (5 s).
wait_output_file() {
	local tries=50
	while ((tries-- > 0)); do
		grep -qF -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "$1 never had '$2': $(cat "$1")"
}

# assert_file_contains FILE TEXT
assert_file_contains() {
	grep -qF -- "$2" "$1" || fail "$1 lacks '$2': $(cat "$1")"
}

# The namespaces of a process, one "TYPE:[INODE]" per line.
ns_of() {
	local t
	for t in ipc mnt net pid uts cgroup user; do
		readlink "/proc/$1/ns/$t"
	done
}

@test "exec: runs a command in a running container" {
	create_running
	run --separate-stderr runtime exec "$CID" echo hello from exec
	assert_success
	assert_output_equals "hello from exec"
}

@test "exec: the exit status of the process propagates" {
	create_running
	run runtime exec "$CID" sh -c 'exit 42'
	assert_failure 42
	run runtime exec "$CID" true
	assert_success
}

@test "exec: 128+N when the process is killed by signal N" {
	create_running
	# Not the pid namespace's init: its own SIGTERM takes it down.
	run runtime exec "$CID" sh -c 'kill -TERM $$; sleep 5'
	assert_failure 143
}

@test "exec: the process is in every namespace of the container's init" {
	create_running
	local pid
	pid=$(init_pid)
	run --separate-stderr runtime exec "$CID" sh -c \
		'for t in ipc mnt net pid uts cgroup user; do readlink /proc/self/ns/$t; done'
	assert_success
	[[ $output == "$(ns_of "$pid")" ]] || fail "namespaces differ: exec '$output', init '$(ns_of "$pid")'"
	# A process of the container's pid namespace: the init is pid 1 there.
	run --separate-stderr runtime exec "$CID" cat /proc/1/cmdline
	assert_success
	[[ $output == sleep* ]] || fail "pid 1 is not the init: '$output'"
}

@test "exec: in a user namespace, the process sees the container's id maps" {
	# Mapped onto the host's ids from 0, so that the test's directories stay
	# reachable; the namespace is the container's own all the same.
	update_config '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]
		| .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]'
	create_running
	run --separate-stderr runtime exec "$CID" sh -c 'cat /proc/self/uid_map; id -u'
	assert_success
	[[ $output == *"0          0      65536"* ]] || fail "uid_map: '$output'"
	[[ ${output##*$'\n'} == 0 ]] || fail "not root in the container: '$output'"
	[[ $(readlink "/proc/$(init_pid)/ns/user") != "$(readlink /proc/self/ns/user)" ]] ||
		fail "the container has no user namespace of its own"
	run --separate-stderr runtime exec -u 1000:1000 "$CID" id
	assert_success
	assert_output_contains "uid=1000 gid=1000"
}

@test "exec: the process runs in the container's cgroup" {
	create_running
	run --separate-stderr runtime exec "$CID" cat /proc/self/cgroup
	assert_success
	[[ $output == "$(cat "/proc/$(init_pid)/cgroup")" ]] ||
		fail "cgroups differ: exec '$output', init '$(cat "/proc/$(init_pid)/cgroup")'"
}

@test "exec: into a created container (before start) runs at once" {
	set_args sleep 1000
	create_container "$CID"
	assert_success
	run --separate-stderr runtime exec "$CID" echo created ok
	assert_success
	assert_output_equals "created ok"
	[[ $(state_field "$CID" status) == created ]]
}

@test "exec: into a stopped container is refused" {
	create_running
	runtime kill "$CID" KILL
	wait_status "$CID" stopped
	run --separate-stderr runtime exec "$CID" true
	exec_fails stopped
}

@test "exec: into a container that does not exist" {
	run --separate-stderr runtime exec "$CID-nope" true
	exec_fails "not exist"
}

@test "exec: a paused container needs --ignore-paused, and runs once resumed" {
	create_running
	run runtime pause "$CID"
	[[ $status -eq 0 || $output != *"unknown command"* ]] || skip "the runtime has no pause command"
	assert_success
	run --separate-stderr runtime exec "$CID" true
	exec_fails paused
	# The new process is frozen with the others until resume.
	runtime exec --ignore-paused "$CID" echo thawed >"$BATS_TEST_TMPDIR/ep.out" 2>&1 &
	local exec_pid=$!
	sleep 1
	[[ ! -s $BATS_TEST_TMPDIR/ep.out ]] || fail "ran while paused: $(cat "$BATS_TEST_TMPDIR/ep.out")"
	runtime resume "$CID"
	local st=0
	wait "$exec_pid" || st=$?
	[[ $st -eq 0 ]] || fail "exec --ignore-paused exited $st: $(cat "$BATS_TEST_TMPDIR/ep.out")"
	[[ $(cat "$BATS_TEST_TMPDIR/ep.out") == thawed ]]
}

@test "exec: without a command" {
	create_running
	run --separate-stderr runtime exec "$CID"
	assert_failure
	assert_one_error_line
}

@test "exec: a missing executable is one error naming it" {
	create_running
	run --separate-stderr runtime exec "$CID" no-such-command
	exec_fails no-such-command "not found"
	run --separate-stderr runtime exec "$CID" /bin/no-such-file
	exec_fails /bin/no-such-file "no such file"
}

# --- environment, cwd, user ------------------------------------------------------------

@test "exec -e: adds variables and overrides the container's, PATH kept" {
	update_config '.process.env += ["FOO=container", "KEEP=yes"]'
	create_running
	# (runc takes no mix of -e and --env)
	run --separate-stderr runtime exec -e FOO=exec -e NEW=1 -e OTHER=a=b "$CID" env
	assert_success
	local path
	path=$(jq -r '.process.env[] | select(startswith("PATH="))' "$BUNDLE/config.json")
	assert_output_contains "$path"
	assert_output_contains "KEEP=yes"
	assert_output_contains "NEW=1"
	assert_output_contains "OTHER=a=b"
	[[ $(grep -c '^FOO=' <<<"$output") -eq 1 ]] || fail "FOO set twice: $output"
	assert_output_contains "FOO=exec"
}

@test "exec -e: an entry without '=' is refused" {
	create_running
	run --separate-stderr runtime exec -e FOO "$CID" true
	exec_fails FOO
}

@test "exec: the container's cwd by default, --cwd overrides it" {
	update_config '.process.cwd = "/tmp"'
	create_running
	run --separate-stderr runtime exec "$CID" pwd
	assert_success
	assert_output_equals /tmp
	run --separate-stderr runtime exec --cwd /etc "$CID" pwd
	assert_success
	assert_output_equals /etc
	run --separate-stderr runtime exec --cwd /no/such/dir "$CID" pwd
	exec_fails /no/such/dir
}

@test "CVE-2024-21626: --cwd /proc/self/fd/N never lands outside the container" {
	create_running
	local fd
	for fd in 3 4 5 6 7 8 9 10; do
		run --separate-stderr runtime exec --cwd "/proc/self/fd/$fd" "$CID" sh -c 'ls -a; pwd'
		if ((status == 0)); then
			[[ $output != *cgroup.procs* && $output != *state.json* && $output != *exec.fifo* ]] ||
				fail "fd $fd: the cwd is a host directory: $output"
		fi
	done
}

@test "exec -u: uid and gid; a uid alone keeps the container's gid" {
	create_running
	run --separate-stderr runtime exec -u 1000:1000 "$CID" id
	assert_success
	assert_output_contains "uid=1000 gid=1000"
	run --separate-stderr runtime exec --user 1000 "$CID" id -g
	assert_success
	assert_output_equals "$(jq -r .process.user.gid "$BUNDLE/config.json")"
	run --separate-stderr runtime exec -u nobody "$CID" true
	exec_fails nobody
}

@test "exec -g: additional gids" {
	create_running
	run --separate-stderr runtime exec -u 1000:1000 -g 10 -g 20 "$CID" id -G
	assert_success
	assert_output_equals "1000 10 20"
	run --separate-stderr runtime exec --user 1000:1000 --additional-gids 30 "$CID" id -G
	assert_success
	assert_output_equals "1000 30"
}

# --- capabilities, no_new_privs, rlimits, labels ---------------------------------------

caps_cmd='grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status'

# cap_field NAME: the hex mask of NAME in $output.
cap_field() {
	awk -v n="$1:" '$1 == n { print $2 }' <<<"$output"
}

@test "exec --cap: added to bounding, effective, permitted; never inheritable or ambient (CVE-2022-29162)" {
	update_config '.process.capabilities = {
		bounding: ["CAP_KILL", "CAP_CHOWN"], effective: ["CAP_KILL", "CAP_CHOWN"],
		permitted: ["CAP_KILL", "CAP_CHOWN"], inheritable: ["CAP_KILL"], ambient: []}'
	create_running
	# (runc takes no mix of -c and --cap)
	run --separate-stderr runtime exec --cap CAP_SYS_ADMIN --cap CAP_NET_ADMIN "$CID" sh -c "$caps_cmd"
	assert_success
	local want
	want=$(cap_mask CAP_KILL CAP_CHOWN CAP_SYS_ADMIN CAP_NET_ADMIN)
	[[ $(cap_field CapBnd) == "$want" ]] || fail "CapBnd: $output"
	[[ $(cap_field CapEff) == "$want" ]] || fail "CapEff: $output"
	[[ $(cap_field CapPrm) == "$want" ]] || fail "CapPrm: $output"
	[[ $(cap_field CapInh) == "$(cap_mask CAP_KILL)" ]] || fail "CapInh: $output"
	[[ $(cap_field CapAmb) == 0000000000000000 ]] || fail "CapAmb: $output"
	# Without --cap: the container's sets.
	run --separate-stderr runtime exec "$CID" sh -c "$caps_cmd"
	assert_success
	[[ $(cap_field CapEff) == "$(cap_mask CAP_KILL CAP_CHOWN)" ]] || fail "CapEff: $output"
}

@test "exec --no-new-privs: sets it; the container's setting is inherited" {
	update_config '.process.noNewPrivileges = false'
	create_running
	run --separate-stderr runtime exec "$CID" grep NoNewPrivs /proc/self/status
	assert_success
	assert_output_equals "NoNewPrivs:	0"
	run --separate-stderr runtime exec --no-new-privs "$CID" grep NoNewPrivs /proc/self/status
	assert_success
	assert_output_equals "NoNewPrivs:	1"
}

@test "exec: noNewPrivileges of the container holds for exec" {
	update_config '.process.noNewPrivileges = true'
	create_running
	run --separate-stderr runtime exec "$CID" grep NoNewPrivs /proc/self/status
	assert_success
	assert_output_equals "NoNewPrivs:	1"
}

@test "exec: the container's rlimits apply" {
	update_config '.process.rlimits = [{type: "RLIMIT_NOFILE", hard: 512, soft: 256}]'
	create_running
	run --separate-stderr runtime exec "$CID" sh -c 'ulimit -n; ulimit -Hn'
	assert_success
	assert_output_equals $'256\n512'
}

@test "exec: the container's seccomp profile applies" {
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: 1}]}'
	create_running
	run --separate-stderr runtime exec "$CID" sh -c 'mkdir /tmp/x 2>&1; echo rc=$?'
	assert_success
	assert_output_contains "rc=1"
	assert_output_contains "not permitted"
}

@test "exec --apparmor / --process-label: refused where the host lacks the LSM" {
	create_running
	if [[ ! -e /sys/kernel/security/apparmor ]]; then
		run --separate-stderr runtime exec --apparmor some-profile "$CID" true
		exec_fails apparmor
	fi
	if [[ ! -e /sys/fs/selinux/enforce ]]; then
		run --separate-stderr runtime exec --process-label system_u:system_r:container_t:s0 "$CID" true
		exec_fails selinux
	fi
}

# --- --process --------------------------------------------------------------------------

@test "exec -p: the process from a file" {
	create_running
	cat >"$BATS_TEST_TMPDIR/process.json" <<-'EOF'
		{"args": ["sh", "-c", "id; pwd; echo $GREETING"], "cwd": "/etc",
		 "env": ["GREETING=from the file", "PATH=/bin"], "user": {"uid": 5, "gid": 6}}
	EOF
	run --separate-stderr runtime exec -p "$BATS_TEST_TMPDIR/process.json" "$CID"
	assert_success
	assert_output_equals $'uid=5 gid=6\n/etc\nfrom the file'
	run --separate-stderr runtime exec --process "$BATS_TEST_TMPDIR/process.json" "$CID"
	assert_success
}

@test "exec -p: a process without args is refused" {
	create_running
	echo '{"args": [], "cwd": "/"}' >"$BATS_TEST_TMPDIR/process.json"
	run --separate-stderr runtime exec -p "$BATS_TEST_TMPDIR/process.json" "$CID"
	exec_fails args
}

@test "exec -p: a file that is not JSON" {
	create_running
	echo '{"args": ' >"$BATS_TEST_TMPDIR/process.json"
	run --separate-stderr runtime exec -p "$BATS_TEST_TMPDIR/process.json" "$CID"
	assert_failure
	assert_one_error_line
}

# --- detach, pid file, signals ---------------------------------------------------------

@test "exec -d --pid-file: returns once started; the pid is the process in the container" {
	create_running
	local out=$BATS_TEST_TMPDIR/detached.out
	runtime exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CID" sh -c 'echo started; exec sleep 1000' \
		</dev/null >"$out" 2>&1
	local pid
	pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
	[[ $pid =~ ^[0-9]+$ ]] || fail "pid file: '$pid'"
	pid_alive "$pid" || fail "process $pid not running"
	[[ $(readlink "/proc/$pid/ns/pid") == "$(readlink "/proc/$(init_pid)/ns/pid")" ]] ||
		fail "process $pid is not in the container's pid namespace"
	wait_output_file "$out" started
	run runtime ps "$CID"
	assert_output_contains "$pid"
	kill -9 "$pid"
	wait_pid_gone "$pid"
}

@test "exec -d: a failure before execve is reported, not a success" {
	create_running
	run --separate-stderr runtime_stdout_to_file exec -d "$CID" no-such-command
	exec_fails no-such-command
}

@test "exec: signals to the runtime reach the process" {
	create_running
	local out=$BATS_TEST_TMPDIR/sig.out
	# The runtime itself in the background (not under `timeout`), so that $!
	# is its pid.
	"$RUNTIME" --root "$ROOT" exec "$CID" sh -c \
		'trap "echo got TERM; exit 3" TERM; echo ready; while :; do sleep 0.1; done' \
		</dev/null >"$out" 2>&1 &
	local exec_pid=$!
	wait_output_file "$out" ready
	kill -TERM "$exec_pid"
	local st=0
	wait "$exec_pid" || st=$?
	[[ $st -eq 3 ]] || fail "exec exited $st, wanted 3: $(cat "$out")"
	assert_file_contains "$out" "got TERM"
}

# --- fds ----------------------------------------------------------------------------

@test "exec: the process gets stdio and nothing else of the runtime" {
	create_running
	run --separate-stderr runtime exec "$CID" ls /proc/self/fd
	assert_success
	# 3 is ls's own directory.
	assert_output_equals $'0\n1\n2\n3'
}

@test "exec: what the runtime ignores is not ignored in the process; none blocked" {
	create_running
	run --separate-stderr with_ignored_signals runtime exec "$CID" \
		grep -E '^Sig(Ign|Blk)' /proc/self/status
	assert_success
	assert_output_equals $'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000'
}

@test "exec --preserve-fds: passes fds 3.. on, and only those" {
	create_running
	echo three >"$BATS_TEST_TMPDIR/f3"
	echo four >"$BATS_TEST_TMPDIR/f4"
	# Not through `runtime`, which closes fd 3 (bats' own).
	local out=$BATS_TEST_TMPDIR/fds.out
	timeout --kill-after=5 "$RUNTIME_TIMEOUT" "$RUNTIME" --root "$ROOT" exec --preserve-fds 2 "$CID" sh -c 'cat <&3; cat <&4; ls /proc/self/fd' \
		3<"$BATS_TEST_TMPDIR/f3" 4<"$BATS_TEST_TMPDIR/f4" 5<"$BATS_TEST_TMPDIR/f4" >"$out" 2>&1 ||
		fail "exec failed: $(cat "$out")"
	# 5 is ls's own directory.
	[[ $(cat "$out") == $'three\nfour\n0\n1\n2\n3\n4\n5' ]] || fail "unexpected: $(cat "$out")"
}

@test "exec --preserve-fds: the runtime's own fds never fill the range's holes" {
	create_running
	echo three >"$BATS_TEST_TMPDIR/f3"
	local out=$BATS_TEST_TMPDIR/fds.out
	# Only fd 3 is the caller's: 4..7 are free for the runtime's own.
	# (runc 1.1 hands its own fds that land there to the process.)
	timeout --kill-after=5 "$RUNTIME_TIMEOUT" "$RUNTIME" --root "$ROOT" exec --preserve-fds 5 "$CID" \
		ls /proc/self/fd 3<"$BATS_TEST_TMPDIR/f3" 4>&- 5>&- 6>&- 7>&- >"$out" 2>&1 ||
		fail "exec failed: $(cat "$out")"
	# 4 is ls's own directory.
	[[ $(cat "$out") == $'0\n1\n2\n3\n4' ]] || fail "unexpected fds: $(cat "$out")"
}

# --- terminal -------------------------------------------------------------------------

@test "exec -t --console-socket -d: the pty master goes to the socket" {
	create_running
	start_recvtty
	runtime exec -t -d --console-socket "$CONSOLE_SOCKET" "$CID" sh -c 'tty; echo tty ok' \
		</dev/null >"$BATS_TEST_TMPDIR/exec.out" 2>&1 || fail "exec failed: $(cat "$BATS_TEST_TMPDIR/exec.out")"
	wait_recvtty
	grep -q "^/dev/pts/" "$TTY_OUT" || fail "not a pty: $(cat "$TTY_OUT")"
	grep -q "tty ok" "$TTY_OUT" || fail "no output: $(cat "$TTY_OUT")"
}

@test "exec -t: a detached exec with a terminal needs --console-socket" {
	create_running
	run --separate-stderr runtime_stdout_to_file exec -t -d "$CID" true
	assert_failure
	assert_one_error_line
}

@test "exec -t without --console-socket: the runtime is the terminal's other end" {
	command -v script >/dev/null || skip "script(1) is not installed"
	create_running
	run script -qec "$RUNTIME --root $ROOT exec -t $CID sh -c 'tty; exit 5'" /dev/null </dev/null
	assert_failure 5
	assert_output_contains "/dev/pts/"
}

@test "exec: without -t there is no terminal" {
	create_running
	run --separate-stderr runtime exec "$CID" sh -c 'tty || true'
	assert_output_contains "not a tty"
}

# --- --cgroup ---------------------------------------------------------------------------

# cgroup_dir CONTROLLER: the container's cgroup directory in the hierarchy of
# CONTROLLER ("" for cgroup2).
cgroup_dir() {
	local line rel mnt
	line=$(grep -E "^[0-9]+:([^:]*,)?$1(,[^:]*)?:" "/proc/$(init_pid)/cgroup" | head -1)
	[[ -n $line ]] || return 1
	rel=${line#*:*:}
	# mountinfo: ... MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
	mnt=$(awk -v c="$1" '{
		for (i = 7; $i != "-"; i++) {}
		if (c == "" ? $(i + 1) == "cgroup2" : $(i + 1) == "cgroup" && index("," $(i + 3) ",", "," c ","))
			{ print $5; exit }
	}' /proc/self/mountinfo)
	[[ -n $mnt ]] && echo "$mnt$rel"
}

@test "exec --cgroup: a sub-cgroup of the container's" {
	create_running
	local ctrl arg dir
	if [[ $(stat -f -c %T /sys/fs/cgroup) == cgroup2fs ]]; then
		ctrl='' arg=sub
	else
		ctrl=pids arg=pids:sub
	fi
	dir=$(cgroup_dir "$ctrl") || fail "no $ctrl cgroup for the container"
	mkdir "$dir/sub"
	run --separate-stderr runtime exec --cgroup "$arg" "$CID" cat /proc/self/cgroup
	rmdir "$dir/sub" 2>/dev/null || true
	assert_success
	grep -qE "^[0-9]+:$ctrl:.*/sub\$" <<<"$output" || fail "not in the sub-cgroup: $output"
}

@test "exec --cgroup: a sub-cgroup that does not exist, or that climbs out" {
	create_running
	run --separate-stderr runtime exec --cgroup no-such-sub "$CID" true
	exec_fails no-such-sub
	run --separate-stderr runtime exec --cgroup ../.. "$CID" true
	assert_failure
	assert_one_error_line
	run --separate-stderr runtime exec --cgroup no-such-controller:sub "$CID" true
	assert_failure
	assert_one_error_line
}

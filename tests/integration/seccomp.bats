#!/usr/bin/env bats
# linux.seccomp (issue #4), with real containers: actions, errnoRet, argument
# operators, architectures (i386 `int $0x80`, x32), flags, noNewPrivileges,
# SCMP_ACT_NOTIFY with a listener at listenerPath, the compiled-BPF cache
# under --root and contrib/seccomp/default.json.
#
# The container runs /seccomp_probe (tests/helpers/seccomp_probe.c), which
# makes raw system calls with chosen numbers and arguments and prints, one
# line each, "NR: ok RET" or "NR: errno E".  The numbers are x86_64's.
#
# Syscalls the rules are written on, chosen because they ignore their
# arguments (so a rule can test any register value) and neither the
# runtime's init nor the probe's libc startup makes them:
#   24 sched_yield  102 getuid  104 getgid  107 geteuid  108 getegid
#   110 getppid  111 getpgrp  121 getpgid  186 gettid
# and for default.json: 56 clone, 165 mount, 250 keyctl, 272 unshare,
# 41 socket, 135 personality, 435 clone3; i386: 20 getpid, 120 clone.

load helpers
load attack_helpers

setup() {
	[[ $(uname -m) == x86_64 ]] || skip "the probes use x86_64 syscall numbers"
	attack_setup
	install_helper seccomp_probe
	LISTENER_PID=
	RUN_N=0
}

teardown() {
	stop_listener
	attack_teardown
}

# --- helpers ----------------------------------------------------------------------

# seccomp JQ-EXPR [JQ-OPTION...]: .linux.seccomp = the expression.
seccomp() {
	local expr=$1
	shift
	update_config "$@" ".linux.seccomp = ($expr)"
}

# deny_profile ACTION [ERRNO]: default ALLOW, getpgid (121) gets ACTION.
deny_profile() {
	seccomp '{defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["getpgid"], action: $a} + (if $e == "" then {} else {errnoRet: ($e | tonumber)} end)]}' \
		--arg a "$1" --arg e "${2:-}"
}

# allow_list: the JSON list of syscalls the runtime's init needs once the
# filter is loaded, and busybox and the probe's static libc need (getpgid,
# getpgrp, sched_yield are not in it).
allow_list() {
	json_array read write readv writev open openat close close_range fstat newfstatat \
		stat lstat statx lseek mmap mprotect munmap mremap brk madvise rt_sigaction \
		rt_sigprocmask rt_sigreturn ioctl access faccessat faccessat2 pipe pipe2 dup dup2 \
		dup3 poll ppoll select pselect6 getpid gettid getuid geteuid getgid getegid \
		getppid getcwd chdir fchdir fcntl getdents64 readlink readlinkat uname clone \
		clone3 fork vfork execve execveat exit exit_group wait4 waitid kill tgkill \
		set_tid_address set_robust_list rseq arch_prctl prlimit64 getrlimit getrandom \
		futex sendmsg recvmsg sendto recvfrom nanosleep clock_nanosleep clock_gettime \
		sysinfo umask setpgid sched_getaffinity
}

# run_probe [ARG...]: a fresh container (id $CID-N) running /seccomp_probe
# ARG... in the foreground; $status and $output as bats' run, with
# "NR: ok VALUE" shortened to "NR: ok" (pids, ids: the value varies).
run_probe() {
	set_args /seccomp_probe "$@"
	run_fresh
}

# run_fresh: `run` the bundle as it is in a fresh container (id $CID-N).
run_fresh() {
	RUN_N=$((RUN_N + 1))
	run runtime run -b "$BUNDLE" "$CID-$RUN_N" </dev/null
	output=$(sed -E 's/^(-?[0-9]+: ok) -?[0-9]+$/\1/' <<<"$output")
}

# assert_killed_by_sigsys: the container's process died of SIGSYS (128+31).
assert_killed_by_sigsys() {
	[[ $status -eq 159 ]] || fail "expected death by SIGSYS (status 159), got $status; output: $output"
}

# requires_i386_abi: the host kernel runs `int $0x80` from x86_64 processes
# (IA32 emulation compiled in and enabled).
requires_i386_abi() {
	local probe pid
	probe=$(attack_helper seccomp_probe) || return 1
	pid=$("$probe" -i386 20 2>/dev/null | sed -n 's/^20: ok //p')
	[[ -n $pid ]] || skip "the host kernel has no i386 syscall ABI (IA32 emulation)"
}

# --- the listener at listenerPath ----------------------------------------------------

# start_listener VALUE: tests/helpers/seccomp_listener.c on $LISTENER_SOCK,
# answering notifications with VALUE; its report in $LISTENER_OUT, the state
# JSON it got in $LISTENER_STATE.
start_listener() {
	local bin
	bin=$(attack_helper seccomp_listener) || return 1
	LISTENER_SOCK=$BATS_TEST_TMPDIR/listener.sock
	LISTENER_OUT=$BATS_TEST_TMPDIR/listener.out
	LISTENER_STATE=$BATS_TEST_TMPDIR/listener.state
	rm -f "$LISTENER_SOCK" "$LISTENER_STATE"
	"$bin" "$LISTENER_SOCK" "$LISTENER_STATE" "$1" >"$LISTENER_OUT" 2>&1 3>&- &
	LISTENER_PID=$!
	local tries=50
	while ! grep -qx listening "$LISTENER_OUT" 2>/dev/null && ((tries-- > 0)); do
		sleep 0.1
	done
	grep -qx listening "$LISTENER_OUT" || fail "the listener did not start: $(cat "$LISTENER_OUT")"
}

stop_listener() {
	[[ -n ${LISTENER_PID:-} ]] || return 0
	kill "$LISTENER_PID" 2>/dev/null || true
	wait "$LISTENER_PID" 2>/dev/null || true
	LISTENER_PID=
	return 0
}

# wait_listener_hangup: the listener saw the filter lose its last task.
wait_listener_hangup() {
	local tries=50
	while ! grep -qx hangup "$LISTENER_OUT" && ((tries-- > 0)); do
		sleep 0.1
	done
	grep -qx hangup "$LISTENER_OUT" || fail "the listener never saw the hangup: $(cat "$LISTENER_OUT")"
}

# --- actions -----------------------------------------------------------------------------

@test "seccomp: SCMP_ACT_ERRNO default with defaultErrnoRet: what the allow list lacks fails with that errno" {
	seccomp '{defaultAction: "SCMP_ACT_ERRNO", defaultErrnoRet: 38,
		syscalls: [{action: "SCMP_ACT_ALLOW", names: $allow}]}' --argjson allow "$(allow_list)"
	set_cmd 'echo shell works; ls /etc >/dev/null && cat /etc/hostname >/dev/null && echo ls cat work; /seccomp_probe 39 121,0 110'
	run_fresh
	assert_success
	assert_output_equals "shell works
ls cat work
39: ok
121: errno 38
110: ok"
}

@test "seccomp: a rule with SCMP_ACT_ERRNO and errnoRet (default ALLOW); without errnoRet the errno is EPERM" {
	seccomp '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [
		{names: ["getpgid"], action: "SCMP_ACT_ERRNO", errnoRet: 42},
		{names: ["getpgrp"], action: "SCMP_ACT_ERRNO"}]}'
	run_probe 121,0 111 110
	assert_success
	assert_output_equals "121: errno 42
111: errno 1
110: ok"
}

@test "seccomp: SCMP_ACT_KILL, KILL_THREAD and KILL_PROCESS kill the process with SIGSYS" {
	local action
	for action in SCMP_ACT_KILL SCMP_ACT_KILL_THREAD SCMP_ACT_KILL_PROCESS; do
		deny_profile "$action"
		run_probe 110 121,0
		assert_killed_by_sigsys || fail "with $action"
		# The call before the denied one went through.
		assert_output_equals "110: ok" || fail "with $action"
	done
}

@test "seccomp: SCMP_ACT_KILL is KILL_THREAD (as in runc): only the calling thread dies; KILL_PROCESS takes the process" {
	deny_profile SCMP_ACT_KILL
	run_probe -thread 121,0
	assert_success
	assert_output_equals "121: thread killed
main: alive"

	deny_profile SCMP_ACT_KILL_THREAD
	run_probe -thread 121,0
	assert_success
	assert_output_equals "121: thread killed
main: alive"

	deny_profile SCMP_ACT_KILL_PROCESS
	run_probe -thread 121,0
	assert_killed_by_sigsys
	assert_output_equals ""
}

@test "seccomp: SCMP_ACT_TRAP delivers SIGSYS (code SYS_SECCOMP, the syscall number); unhandled, it kills" {
	deny_profile SCMP_ACT_TRAP
	run_probe -trap 121,0 110
	assert_success
	assert_output_equals "121: sigsys code=1 syscall=121 data=0
110: ok"

	run_probe 121,0
	assert_killed_by_sigsys
}

@test "seccomp: SCMP_ACT_LOG and SCMP_ACT_ALLOW let the call through; SCMP_ACT_TRACE without a tracer fails it with ENOSYS" {
	deny_profile SCMP_ACT_LOG
	run_probe 121,0
	assert_success
	assert_output_equals "121: ok"

	# ALLOW rules under an ERRNO default without defaultErrnoRet (EPERM).
	seccomp '{defaultAction: "SCMP_ACT_ERRNO", syscalls: [{names: $allow, action: "SCMP_ACT_ALLOW"}]}' \
		--argjson allow "$(allow_list)"
	run_probe 39 121,0
	assert_success
	assert_output_equals "39: ok
121: errno 1"

	# seccomp(2): with no tracer attached the syscall is not made and fails
	# with ENOSYS, whatever errnoRet says (it is data for the tracer).
	deny_profile SCMP_ACT_TRACE 42
	run_probe 121,0
	assert_success
	assert_output_equals "121: errno 38"
}

# --- arguments -------------------------------------------------------------------------------

@test "seccomp: args: each operator (NE LT LE EQ GE GT MASKED_EQ), 64-bit values" {
	# One syscall per operator, errno 42 when the condition holds.
	seccomp '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [
		{names: ["getppid"], action: "SCMP_ACT_ERRNO", errnoRet: 42, args: [{index: 0, value: 5, op: "SCMP_CMP_NE"}]},
		{names: ["getpgrp"], action: "SCMP_ACT_ERRNO", errnoRet: 42, args: [{index: 1, value: 5, op: "SCMP_CMP_LT"}]},
		{names: ["sched_yield"], action: "SCMP_ACT_ERRNO", errnoRet: 42, args: [{index: 2, value: 5, op: "SCMP_CMP_LE"}]},
		{names: ["gettid"], action: "SCMP_ACT_ERRNO", errnoRet: 42, args: [{index: 3, value: 5, op: "SCMP_CMP_EQ"}]},
		{names: ["getuid"], action: "SCMP_ACT_ERRNO", errnoRet: 42, args: [{index: 4, value: 5, op: "SCMP_CMP_GE"}]},
		{names: ["getgid"], action: "SCMP_ACT_ERRNO", errnoRet: 42, args: [{index: 5, value: 5, op: "SCMP_CMP_GT"}]},
		{names: ["getegid"], action: "SCMP_ACT_ERRNO", errnoRet: 42,
		 args: [{index: 0, value: 240, valueTwo: 48, op: "SCMP_CMP_MASKED_EQ"}]},
		{names: ["geteuid"], action: "SCMP_ACT_ERRNO", errnoRet: 42, args: [{index: 0, value: 4294967301, op: "SCMP_CMP_EQ"}]}]}'
	run_probe \
		110,5 110,6 110,0x100000005 \
		111,0,4 111,0,5 111,0,0x100000004 \
		24,0,0,5 24,0,0,6 24,0,0,0 \
		186,0,0,0,5 186,0,0,0,4 186,0,0,0,0x100000005 \
		102,0,0,0,0,5 102,0,0,0,0,4 102,0,0,0,0,0x100000000 \
		104,0,0,0,0,0,6 104,0,0,0,0,0,5 104,0,0,0,0,0,-1 \
		108,0x35 108,0x45 108,0x1000000f3f \
		107,0x100000005 107,5
	assert_success
	assert_output_equals "110: ok
110: errno 42
110: errno 42
111: errno 42
111: ok
111: ok
24: errno 42
24: ok
24: errno 42
186: errno 42
186: ok
186: ok
102: errno 42
102: ok
102: errno 42
104: errno 42
104: ok
104: errno 42
108: errno 42
108: ok
108: errno 42
107: errno 42
107: ok"
}

@test "seccomp: args: conditions on different arguments are ANDed, two on the same argument are ORed (runc)" {
	seccomp '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [
		{names: ["getppid"], action: "SCMP_ACT_ERRNO", errnoRet: 42,
		 args: [{index: 0, value: 1, op: "SCMP_CMP_EQ"}, {index: 1, value: 2, op: "SCMP_CMP_EQ"}]},
		{names: ["getpgrp"], action: "SCMP_ACT_ERRNO", errnoRet: 43,
		 args: [{index: 0, value: 1, op: "SCMP_CMP_EQ"}, {index: 0, value: 3, op: "SCMP_CMP_EQ"}]}]}'
	run_probe 110,1,2 110,1,3 110,0,2 111,1 111,3 111,2
	assert_success
	assert_output_equals "110: errno 42
110: ok
110: ok
111: errno 43
111: errno 43
111: ok"
}

# --- architectures ------------------------------------------------------------------------------

@test "seccomp: architectures: a syscall of an ABI the profile does not list kills the process (i386 int 0x80, x32)" {
	requires_i386_abi
	seccomp '{defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64"],
		syscalls: [{names: ["getpid"], action: "SCMP_ACT_ERRNO", errnoRet: 42}]}'
	run_probe 39
	assert_success
	assert_output_equals "39: errno 42"

	# i386 getpid (20) from an x86_64 process: not to fall through to ALLOW.
	run_probe -i386 20
	assert_killed_by_sigsys
	assert_output_equals ""
	# Even a syscall the profile has no rule for.
	run_probe -i386 64
	assert_killed_by_sigsys

	# x32 getpid (39 | 0x40000000): same audit arch, told apart by the bit.
	run_probe -x32 39
	assert_killed_by_sigsys
	assert_output_equals ""

	# No architectures at all: only the native one.
	seccomp '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["getpid"], action: "SCMP_ACT_ERRNO", errnoRet: 42}]}'
	run_probe -i386 20
	assert_killed_by_sigsys
}

@test "seccomp: architectures: with SCMP_ARCH_X86 and SCMP_ARCH_X32 listed, their getpid gets the errno" {
	requires_i386_abi
	seccomp '{defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		syscalls: [{names: ["getpid"], action: "SCMP_ACT_ERRNO", errnoRet: 42}]}'
	run_probe -i386 20
	assert_success
	assert_output_equals "20: errno 42"
	run_probe -x32 39
	assert_success
	assert_output_equals "39: errno 42"
	# i386's getppid (64) is allowed.
	run_probe -i386 64
	assert_success
	assert_output_equals "64: ok"
}

# --- flags, unknown names -----------------------------------------------------------------

@test "seccomp: flags SECCOMP_FILTER_FLAG_LOG, SPEC_ALLOW and TSYNC are accepted and the filter applies" {
	local flag
	for flag in SECCOMP_FILTER_FLAG_LOG SECCOMP_FILTER_FLAG_SPEC_ALLOW SECCOMP_FILTER_FLAG_TSYNC; do
		deny_profile SCMP_ACT_ERRNO 42
		update_config --arg f "$flag" '.linux.seccomp.flags = [$f]'
		run_probe 121,0
		assert_success || fail "with $flag"
		assert_output_equals "121: errno 42" || fail "with $flag"
	done
}

@test "seccomp: an unknown flag is an error (one line naming it), nothing left behind" {
	deny_profile SCMP_ACT_ERRNO 42
	update_config '.linux.seccomp.flags = ["SECCOMP_FILTER_FLAG_BOGUS"]'
	run --separate-stderr runtime_stdout_to_file run -b "$BUNDLE" "$CID"
	assert_failure
	assert_runtime_error SECCOMP_FILTER_FLAG_BOGUS
	[[ ! -s $BATS_TEST_TMPDIR/stdout ]] || fail "the container ran: $(cat "$BATS_TEST_TMPDIR/stdout")"
	assert_no_leftovers
}

@test "seccomp: unknown syscall names in a rule are skipped, the rule's other names still apply" {
	seccomp '{defaultAction: "SCMP_ACT_ALLOW", syscalls: [
		{names: ["sandrun_no_such_syscall", "getpgid"], action: "SCMP_ACT_ERRNO", errnoRet: 42},
		{names: ["another_unknown_one"], action: "SCMP_ACT_KILL"}]}'
	run_probe 121,0
	assert_success
	assert_output_equals "121: errno 42"
}

# --- noNewPrivileges ----------------------------------------------------------------------

@test "seccomp: noNewPrivileges true and false both load the filter (false: before the capabilities go)" {
	deny_profile SCMP_ACT_ERRNO 42
	local nnp
	for nnp in true false; do
		update_config --argjson n "$nnp" '.process.noNewPrivileges = $n'
		set_cmd 'grep -E "^(NoNewPrivs|Seccomp|Seccomp_filters):" /proc/self/status | tr -s "\t " " "; /seccomp_probe 121,0'
		run_fresh
		assert_success
		assert_output_equals "NoNewPrivs: $([[ $nnp == true ]] && echo 1 || echo 0)
Seccomp: 2
Seccomp_filters: 1
121: errno 42"
	done

	# An unprivileged user without any capability: the init loaded the
	# filter while it still could.
	update_config '.process.noNewPrivileges = false | .process.user = {uid: 1000, gid: 1000}
		| .process.capabilities = {bounding: [], effective: [], permitted: []}'
	run_probe 121,0 102
	assert_success
	assert_output_equals "121: errno 42
102: ok"
}

#!/usr/bin/env bats
# `sandrun sandbox`: smoke tests of the one-shot sandbox (issue 12): it runs
# code, passes exit statuses through, names the limit that stopped a run,
# caps output, writes a valid receipt and leaves nothing behind.  The
# hostile-code tests are in sandbox_*.bats.

load helpers

setup() {
	ROOT=$BATS_TEST_TMPDIR/root
	TEST_MARK="SANDRUN_TEST_MARK=$BATS_TEST_TMPDIR"
	mkdir -p "$ROOT"
	export ROOT TEST_MARK
}

teardown() {
	kill_marked_processes
	[[ -n ${SANDRUN_PID:-} ]] && kill -9 "$SANDRUN_PID" 2>/dev/null
	rm -rf "$ROOT"
}

# sandbox ARG...: `sandrun sandbox` with this test's root, its processes
# marked, the receipt in $BATS_TEST_TMPDIR/receipt.json.
sandbox() {
	runtime sandbox --env "$TEST_MARK" --receipt "$BATS_TEST_TMPDIR/receipt.json" "$@"
}

# sandbox_bg ARG...: the same in the background, not under `timeout`, so
# that $SANDRUN_PID is sandrun itself.
sandbox_bg() {
	"$RUNTIME" --root "$ROOT" sandbox --env "$TEST_MARK" \
		--receipt "$BATS_TEST_TMPDIR/receipt.json" "$@" >"$BATS_TEST_TMPDIR/out" 3>&- &
	SANDRUN_PID=$!
	for _ in $(seq 100); do grep -q started "$BATS_TEST_TMPDIR/out" && return 0; sleep 0.1; done
	fail "the sandbox did not start"
}

receipt() {
	jq -r "$1" "$BATS_TEST_TMPDIR/receipt.json"
}

# Nothing of any sandbox is left: no lock directory, container, cgroup,
# mount or process.
assert_sandbox_gone() {
	local left cgs
	left=$(find "$ROOT/.sandbox" -mindepth 1 -maxdepth 1 -name 'sandbox-*' 2>/dev/null)
	[[ -z $left ]] || fail "sandbox directories left behind: $left"
	run runtime list -q
	[[ -z $output ]] || fail "containers left behind: $output"
	if [[ -s $BATS_TEST_TMPDIR/receipt.json ]]; then
		cgs=$(cgroups_named "$(receipt .id)")
		[[ -z $cgs ]] || fail "cgroups left behind: $cgs"
		! grep -qF "$(receipt .id)" /proc/self/mountinfo || fail "mounts left behind"
	fi
	[[ -z $(live_marked_pids) ]] || fail "processes left behind: $(live_marked_pids)"
}

@test "sandbox: runs python3 and writes a receipt that is valid JSON" {
	run --separate-stderr sandbox -- python3 -c 'print(6 * 7)'
	assert_success
	[[ $output == 42 ]] || fail "stdout: '$output'"
	receipt . >/dev/null || fail "receipt is not valid JSON"
	[[ $(receipt .stdout) == 42 ]]
	[[ $(receipt .exit_code) == 0 ]]
	[[ $(receipt .limit_exceeded) == null ]]
	[[ $(receipt '.command | join(" ")') == "python3 -c print(6 * 7)" ]]
	[[ $(receipt '.network | length') == 0 ]]
	[[ $(receipt '.policy.network') == none ]]
	for k in id started_at finished_at duration_ms cpu_ms peak_memory_bytes pids_peak signal \
		limits_hit message stdout_truncated stderr_truncated files policy sandrun; do
		[[ $(receipt "has(\"$k\")") == true ]] || fail "receipt lacks $k"
	done
	assert_sandbox_gone
}

@test "sandbox: the exit status is the command's, 128+N for signal N" {
	run sandbox -- sh -c 'exit 3'
	[[ $status -eq 3 ]] || fail "status $status"
	[[ $(receipt .exit_code) == 3 ]]
	# The command is the pid namespace's init, which only a fault can kill.
	run sandbox -- python3 -c 'import ctypes; ctypes.string_at(0)'
	[[ $status -eq 139 ]] || fail "status $status"
	[[ $(receipt .exit_code) == null && $(receipt .signal) == SIGSEGV ]]
	run sandbox -- /no/such/command
	[[ $status -eq 127 ]] || fail "status $status"
	assert_sandbox_gone
}

@test "sandbox: a bad option is 125 with one error line" {
	run --separate-stderr runtime sandbox --memory 12Q -- true
	[[ $status -eq 125 ]] || fail "status $status"
	assert_one_error_line --memory 12Q size
	run --separate-stderr runtime sandbox true
	[[ $status -eq 125 ]] || fail "status $status"
	assert_one_error_line --
	run --separate-stderr runtime sandbox --rootfs "$BATS_TEST_TMPDIR/none" -- true
	[[ $status -eq 125 ]] || fail "status $status"
	assert_one_error_line rootfs
}

@test "sandbox: no privilege, no capability, seccomp, none of the caller's environment" {
	SECRET_FROM_CALLER=1 run sandbox -- sh -c 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; env; id -u'
	assert_success
	[[ $output == *"CapEff:	0000000000000000"* ]] || fail "$output"
	[[ $output == *"NoNewPrivs:	1"* && $output == *"Seccomp:	2"* ]] || fail "$output"
	[[ $output != *SECRET_FROM_CALLER* ]] || fail "the caller's environment leaked: $output"
	[[ $output == *"HOME=/work"* && $output == *"LANG=C.UTF-8"* ]] || fail "$output"
	[[ ${output##*$'\n'} == 1000 ]] || fail "uid: $output"
}

@test "sandbox: the wall-clock limit is named in the receipt" {
	run sandbox --timeout 1s -- sh -c 'trap "" TERM; sleep 60'
	[[ $status -eq 137 ]] || fail "status $status"
	[[ $(receipt .limit_exceeded) == timeout ]]
	[[ $(receipt .message) == *"1 s wall-clock limit"* ]] || fail "$(receipt .message)"
	assert_sandbox_gone
}

@test "sandbox: the memory limit is named in the receipt" {
	# small tmpfs sizes: the cgroup limit is --memory plus them (policy.c)
	run sandbox --memory 32M --disk 1M --tmp-size 1M --timeout 120s -- python3 -c '
a = []
while True: a.append(bytearray(4 << 20))'
	[[ $status -eq 137 ]] || fail "status $status"
	[[ $(receipt .limit_exceeded) == memory ]] || fail "$(receipt .message)"
	[[ $(receipt .message) == *"32 MiB memory limit"* ]] || fail "$(receipt .message)"
	assert_sandbox_gone
}

@test "sandbox: output beyond --output-limit is cut and ends the run" {
	run --separate-stderr sandbox --output-limit 1K -- python3 -c '
import sys
while True: sys.stdout.write("x" * 4096)'
	[[ $status -eq 137 ]] || fail "status $status"
	[[ ${#output} -eq 1024 ]] || fail "streamed ${#output} bytes"
	[[ $(receipt .limit_exceeded) == output && $(receipt .stdout_truncated) == true ]]
	[[ $(receipt '.stdout | length') == 1024 ]]
	assert_sandbox_gone
}

@test "sandbox: output that is not UTF-8 is escaped, not dropped" {
	run sandbox --quiet -- printf 'a\377b\n'
	assert_success
	[[ $(receipt .stdout) == 'a\xFFb' ]] || fail "$(receipt .stdout)"
}

@test "sandbox: files written to --workdir belong to its owner and are listed with hashes" {
	local wd=$BATS_TEST_TMPDIR/wd
	mkdir "$wd"
	chmod o+x "$BATS_TEST_TMPDIR"
	chown 4321:4321 "$wd"
	run sandbox --workdir "$wd" -- sh -c 'echo hello > out.txt; mkdir d; echo x > d/y'
	assert_success
	[[ $(stat -c %u:%g "$wd/out.txt") == 4321:4321 ]] || fail "owner $(stat -c %u:%g "$wd/out.txt")"
	[[ $(stat -c %u "$wd/d/y") == 4321 ]]
	[[ $(receipt '.files[] | select(.path == "out.txt") | .sha256') == \
		"$(sha256sum <"$wd/out.txt" | cut -d' ' -f1)" ]] || fail "$(receipt .files)"
	[[ $(receipt '.files[] | select(.path == "out.txt") | .change') == created ]]
	assert_sandbox_gone
}

@test "sandbox: SIGTERM to sandrun stops the sandbox and marks the receipt interrupted" {
	sandbox_bg -- sh -c 'trap "" TERM; echo started; sleep 60'
	kill -TERM "$SANDRUN_PID"
	wait "$SANDRUN_PID" && status=0 || status=$?
	[[ $status -eq 143 ]] || fail "status $status"
	[[ $(receipt .interrupted) == true ]] || fail "$(receipt .)"
	[[ $(receipt .message) == *SIGTERM* ]]
	assert_sandbox_gone
}

@test "sandbox: a SIGKILLed sandrun leaves no process behind, the next run reclaims the rest" {
	sandbox_bg -- sh -c 'sleep 60 & echo started; sleep 60'
	[[ -n $(live_marked_pids) ]] || fail "the sandbox did not start"
	kill -KILL "$SANDRUN_PID"
	wait "$SANDRUN_PID" || true
	for _ in $(seq 50); do [[ -z $(live_marked_pids) ]] && break; sleep 0.1; done
	[[ -z $(live_marked_pids) ]] || fail "processes outlived sandrun: $(live_marked_pids)"
	run sandbox -- true
	assert_success
	assert_sandbox_gone
}

@test "sandbox: a root-owned --workdir is refused; a --workdir growing past --disk is stopped" {
	local wd=$BATS_TEST_TMPDIR/wd
	mkdir "$wd"
	chmod o+x "$BATS_TEST_TMPDIR"
	run --separate-stderr runtime sandbox --workdir "$wd" -- true
	[[ $status -eq 125 ]] || fail "status $status"
	assert_one_error_line root
	chown 4321:4321 "$wd"
	run sandbox --workdir "$wd" --disk 4M --file-size 1G -- sh -c 'while :; do cat /usr/bin/* > big 2>/dev/null; cp big big2; done'
	[[ $status -eq 137 ]] || fail "status $status"
	[[ $(receipt .limit_exceeded) == disk ]] || fail "$(receipt .message)"
	[[ $(receipt .message) == *"4 MiB disk limit"* ]] || fail "$(receipt .message)"
	assert_sandbox_gone
}

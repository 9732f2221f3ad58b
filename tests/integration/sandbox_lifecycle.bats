#!/usr/bin/env bats
# `sandrun sandbox`: ephemeral and robust (issue 12: "Ephemeral, and
# robust"): nothing remains after any ending, a signal to sandrun stops the
# sandbox and still writes the receipt, SIGKILL to sandrun takes the sandbox
# down with it and the next invocation reclaims the rest; many concurrent
# and many sequential runs neither interfere nor leak.

load sandbox_helpers

# Sequential runs of the leak test (the issue says a thousand; CI runs
# fewer to stay fast: SANDBOX_SEQ_RUNS=1000 for the full count).
SEQ_RUNS=${SANDBOX_SEQ_RUNS:-200}
CONCURRENT=${SANDBOX_CONCURRENT:-50}

# start_waiting [OPTION...]: a sandbox in the background whose command
# signals readiness through its --workdir and then waits (ignoring nothing:
# sandrun must stop it); returns when it is ready, with its cgroups noted.
start_waiting() {
	W=$(sb_workdir)
	sb_start --workdir "$W" --receipt "$RECEIPT" --timeout "$(sb_secs 120)" "$@" -- \
		/bin/sh -c 'sleep 1000 & touch ready; wait'
	sb_wait_for "$W/ready"
	sb_record_running
	[[ -s $SB_CGROUPS ]] || fail "no cgroup of the running sandbox found"
}

signal_test() { # SIGNAL NUMBER
	start_waiting
	kill -s "$1" "$SB_PID"
	sb_wait_exit "$SB_PID"
	[[ $status -eq $((128 + $2)) ]] ||
		fail "sandrun exited $status after SIG$1, expected $((128 + $2)); stderr: $(cat "$BATS_TEST_TMPDIR/bg.err")"
	sb_check_receipt "$RECEIPT"
	assert_rf .interrupted true
	rf .message | grep -q interrupted || fail "message: $(rf .message)"
	rf .message | grep -q "$1" || fail "message does not name SIG$1: $(rf .message)"
	sb_assert_no_leftovers
}

@test "sandbox lifecycle: SIGINT to sandrun stops the sandbox, the receipt says interrupted, nothing left" {
	signal_test INT 2
}

@test "sandbox lifecycle: SIGTERM to sandrun stops the sandbox, the receipt says interrupted, nothing left" {
	signal_test TERM 15
}

@test "sandbox lifecycle: SIGHUP to sandrun stops the sandbox, the receipt says interrupted, nothing left" {
	signal_test HUP 1
}

@test "sandbox lifecycle: SIGKILL to sandrun: the sandbox's processes die, the next invocation reclaims the rest" {
	start_waiting
	local sandboxed
	sandboxed=$(sb_sandboxed_pids)
	[[ -n $sandboxed ]] || fail "no sandboxed process found"
	kill -9 "$SB_PID"
	sb_wait_exit "$SB_PID"
	# the issue says within a second; the deadline is generous, the
	# mechanism (not a later sandrun call) is what is tested
	local deadline=$((SECONDS + 10)) pid alive
	while :; do
		alive=
		for pid in $sandboxed; do
			pid_alive "$pid" && alive+=" $pid"
		done
		[[ -z $alive ]] && break
		((SECONDS < deadline)) || fail "sandboxed processes alive after sandrun was killed:$alive"
		sleep 0.05
	done
	# the next invocation on the same root reclaims state, cgroups, mounts
	sb_run -- /bin/true
	assert_success
	sb_wait_gone_marked 10
	sb_assert_no_leftovers
}

@test "sandbox lifecycle: a sandrun killed during set-up leaves nothing the next invocation does not reclaim" {
	local i
	for i in 1 2 3 4 5; do
		sb_start -- /bin/true
		# at increasing points of its start-up
		sleep "$(printf 0.%02d $((i * 2)))"
		sb_record_running
		kill -9 "$SB_PID" 2>/dev/null || true
		sb_wait_exit "$SB_PID"
	done
	sb_wait_gone_marked 10
	sb_run -- /bin/true
	assert_success
	sb_wait_gone_marked 10
	sb_assert_no_leftovers
}

@test "sandbox lifecycle: $CONCURRENT concurrent sandboxes do not interfere" {
	local i pids=() d
	for ((i = 0; i < CONCURRENT; i++)); do
		d=$(sb_workdir "w$i")
		env "$TEST_MARK" "$RUNTIME" --root "$ROOT" sandbox --env "$TEST_MARK" --workdir "$d" \
			--receipt "$BATS_TEST_TMPDIR/r$i.json" --timeout "$(sb_secs 120)" --env "N=$i" -- \
			/bin/sh -c 'echo "$N" > mine; sleep 0.5; cat mine; ls' \
			</dev/null >"$BATS_TEST_TMPDIR/o$i" 2>"$BATS_TEST_TMPDIR/e$i" 3>&- &
		pids+=($!)
		SB_BG_PIDS+=($!)
	done
	for ((i = 0; i < CONCURRENT; i++)); do
		sb_wait_exit "${pids[i]}" 180
		[[ $status -eq 0 ]] || fail "sandbox $i exited $status: $(cat "$BATS_TEST_TMPDIR/e$i")"
	done
	local receipts=()
	for ((i = 0; i < CONCURRENT; i++)); do
		receipts+=("$BATS_TEST_TMPDIR/r$i.json")
	done
	sb_check_receipt "${receipts[@]}"
	for ((i = 0; i < CONCURRENT; i++)); do
		[[ $(cat "$BATS_TEST_TMPDIR/o$i") == "$i"$'\n'mine ]] ||
			fail "sandbox $i printed '$(cat "$BATS_TEST_TMPDIR/o$i")'"
		assert_rf '[.files[] | .path] | @json' '["mine"]' "$BATS_TEST_TMPDIR/r$i.json"
		assert_no_limit "$BATS_TEST_TMPDIR/r$i.json"
		[[ $(cat "$BATS_TEST_TMPDIR/w$i/mine") == "$i" ]]
	done
	[[ $(sort -u "$SB_IDS" | wc -l) -eq $CONCURRENT ]] || fail "ids are not unique: $(sort "$SB_IDS" | uniq -d)"
	sb_assert_no_leftovers
}

@test "sandbox lifecycle: $SEQ_RUNS sequential runs leak nothing (state, slots, cgroups, mounts, fds, processes)" {
	local i mounts_before fds_before
	mounts_before=$(wc -l </proc/self/mountinfo)
	fds_before=$(ls /proc/self/fd | wc -l)
	sb_run -- /bin/true
	assert_success
	for ((i = 1; i < SEQ_RUNS; i++)); do
		timeout 60 env "$TEST_MARK" "$RUNTIME" --root "$ROOT" sandbox --env "$TEST_MARK" \
			--audit-log "$BATS_TEST_TMPDIR/audit.jsonl" -- /bin/true </dev/null >/dev/null 2>>"$BATS_TEST_TMPDIR/err" 3>&- ||
			fail "run $i failed: $(tail -3 "$BATS_TEST_TMPDIR/err")"
	done
	[[ ! -s $BATS_TEST_TMPDIR/err ]] || fail "sandrun complained: $(head -5 "$BATS_TEST_TMPDIR/err")"
	[[ $(wc -l <"$BATS_TEST_TMPDIR/audit.jsonl") -eq $((SEQ_RUNS - 1)) ]]
	jq -r .id "$BATS_TEST_TMPDIR/audit.jsonl" >>"$SB_IDS"
	[[ $(sort -u "$SB_IDS" | wc -l) -eq $SEQ_RUNS ]] || fail "ids repeat"
	# one sandbox at a time: one slot (host uid range), reused every time
	local slots
	slots=$(find "$ROOT" -path '*/slots/*' | wc -l)
	((slots <= 1)) || fail "$slots uid slots for sequential runs: $(find "$ROOT" -path '*/slots/*')"
	sb_assert_no_leftovers
	# the host's mount table and our descriptors did not grow with the runs
	# (other suites may mount meanwhile: a leak would be one per run)
	local mounts_after
	mounts_after=$(wc -l </proc/self/mountinfo)
	((mounts_after < mounts_before + SEQ_RUNS / 4)) ||
		fail "the mount table grew from $mounts_before to $mounts_after over $SEQ_RUNS runs"
	[[ $(ls /proc/self/fd | wc -l) -eq $fds_before ]]
	# an audit line for every run: each validates
	run "$PY" "$SB_VALIDATE" --audit "$BATS_TEST_TMPDIR/audit.jsonl"
	assert_success
}

@test "sandbox lifecycle: a limit kill leaves nothing, and the next run is unaffected" {
	sb_run --timeout "$(sb_secs 1)" -- /bin/sh -c 'sleep 100 & sleep 100 & wait'
	assert_failure
	assert_limit timeout
	sb_assert_no_leftovers
	sb_run -- /bin/echo next
	assert_success
	assert_no_limit
	assert_rf .stdout next$'\n'
	sb_assert_no_leftovers
}

#!/usr/bin/env bats
# Faults: `create` killed with SIGKILL at various points of its work, and
# concurrent creates and deletes.  Whatever happened, `delete --force`
# removes everything (state, cgroup, init process), and concurrent commands
# never corrupt the state.

load helpers
load attack_helpers # setup too

teardown() {
	local pid
	for pid in $(hook_pids); do
		kill -9 "$pid" 2>/dev/null || true
	done
	attack_teardown
}

# sleeping_hook KIND: a KIND hook that touches
# $BATS_TEST_TMPDIR/hook-KIND.started and sleeps about 60 s (exec'd: the
# sleep is the hook process; its duration is unique to the test, which is
# how hook_pids finds it, whatever pid namespace it runs in).
sleeping_hook() {
	local kind=$1 dir=$BATS_TEST_TMPDIR
	HOOK_TOKEN=$(printf '59.%05d%05d' $RANDOM $RANDOM)
	update_config --arg k "$kind" --arg c "touch $dir/hook-$kind.started; exec sleep $HOOK_TOKEN" \
		'.hooks[$k] = [{path: "/bin/sh", args: ["sh", "-c", $c]}]'
}

hook_pids() {
	[[ -n ${HOOK_TOKEN:-} ]] || return 0
	pgrep -f -x "sleep $HOOK_TOKEN" || true
}

# wait_file PATH [TRIES]: poll (0.1 s) until PATH exists.
wait_file() {
	local tries=${2:-100}
	while [[ ! -e $1 ]] && ((tries-- > 0)); do
		sleep 0.1
	done
	[[ -e $1 ]] || fail "$1 never appeared"
}

# recorded_init_pid: $INIT_PID, the init's pid in the state record (0 when
# there is none yet).
recorded_init_pid() {
	INIT_PID=$(jq -r '.pid // 0' "$ROOT/$CID/state.json" 2>/dev/null) || INIT_PID=0
	[[ $INIT_PID =~ ^[0-9]+$ ]] || INIT_PID=0
}

# create_killed_in_hook KIND: start `create`, SIGKILL it while its KIND hook
# runs; sets $INIT_PID to the init's pid as recorded (0 when none).
create_killed_in_hook() {
	local kind=$1 pid
	sleeping_hook "$kind"
	# Not through `runtime`: $! must be the runtime itself.
	"$RUNTIME" --root "$ROOT" create -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1 &
	pid=$!
	wait_file "$BATS_TEST_TMPDIR/hook-$kind.started"
	recorded_init_pid
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# assert_force_delete_cleans: `delete --force` succeeds and nothing is left:
# no state, cgroup, mount or process of the container, no init, no hook.
assert_force_delete_cleans() {
	run --separate-stderr runtime delete --force "$CID"
	[[ $status -eq 0 ]] || fail "delete --force failed: $stderr"
	assert_no_leftovers
	if ((INIT_PID > 0)); then
		wait_pid_gone "$INIT_PID"
	fi
	local pid
	for pid in $(hook_pids); do
		wait_pid_gone "$pid" 30 || fail "hook $pid outlived the killed create"
	done
	[[ -z $(bundle_pids) ]] || fail "processes left: $(bundle_pids)"
}

@test "faults: create killed during a createRuntime hook; delete --force cleans up" {
	create_killed_in_hook createRuntime
	((INIT_PID > 0)) || fail "no init recorded before createRuntime"
	assert_force_delete_cleans
}

@test "faults: create killed during a prestart hook; delete --force cleans up" {
	create_killed_in_hook prestart
	assert_force_delete_cleans
}

@test "faults: create killed during a createContainer hook (the init in mid-setup)" {
	create_killed_in_hook createContainer
	assert_force_delete_cleans
}

@test "faults: create killed while the init is waiting for the parent (right after clone)" {
	# The createRuntime hook runs in the parent right after the clone, while
	# the init waits on the sync socket: kill the parent there, the init
	# must not survive or linger once deleted.
	create_killed_in_hook createRuntime
	((INIT_PID > 0)) || fail "no init recorded"
	# The init notices its parent's death (EOF on the sync socket).
	wait_pid_gone "$INIT_PID" 50
	assert_force_delete_cleans
}

@test "faults: create killed at random points, 20 times; delete --force always cleans up" {
	local try pid delay
	for try in $(seq 1 20); do
		"$RUNTIME" --root "$ROOT" create -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1 &
		pid=$!
		delay=$(printf '0.%03d' $((RANDOM % 60)))
		sleep "$delay"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		recorded_init_pid
		run --separate-stderr runtime delete --force "$CID"
		# A create killed before it reserved the id leaves nothing to delete.
		if ((status != 0)); then
			[[ $stderr == *"does not exist"* ]] || fail "try $try (after ${delay}s): delete --force: $stderr"
		fi
		assert_no_leftovers
		((INIT_PID == 0)) || wait_pid_gone "$INIT_PID"
	done
}

@test "faults: 20 parallel creates of distinct ids, then 20 parallel deletes" {
	set_args sleep 1000
	local k pids=()
	for k in $(seq 1 20); do
		runtime create -b "$BUNDLE" "$CID-$k" </dev/null >"$(ct_out "$CID-$k")" 2>&1 &
		pids+=($!)
	done
	for k in "${!pids[@]}"; do
		wait "${pids[k]}" || fail "create $CID-$((k + 1)) failed: $(cat "$(ct_out "$CID-$((k + 1))")")"
	done
	run runtime list -q
	assert_success
	[[ $(grep -c "^$CID-" <<<"$output") -eq 20 ]] || fail "list: $output"
	for k in $(seq 1 20); do
		[[ $(state_field "$CID-$k" status) == created ]] || fail "$CID-$k not created"
	done
	pids=()
	for k in $(seq 1 20); do
		runtime delete --force "$CID-$k" >"$BATS_TEST_TMPDIR/del-$k" 2>&1 &
		pids+=($!)
	done
	for k in "${!pids[@]}"; do
		wait "${pids[k]}" || fail "delete $CID-$((k + 1)) failed: $(cat "$BATS_TEST_TMPDIR/del-$((k + 1))")"
	done
	for k in $(seq 1 20); do
		assert_no_leftovers "$CID-$k"
	done
}

@test "faults: two creates of the same id at once: exactly one wins, the state stays sound" {
	set_args sleep 1000
	local try a b sa sb
	for try in $(seq 1 10); do
		runtime create -b "$BUNDLE" "$CID" </dev/null >"$BATS_TEST_TMPDIR/a" 2>&1 &
		a=$!
		runtime create -b "$BUNDLE" "$CID" </dev/null >"$BATS_TEST_TMPDIR/b" 2>&1 &
		b=$!
		sa=0 sb=0
		wait "$a" || sa=$?
		wait "$b" || sb=$?
		if ((sa == 0 && sb == 0)) || ((sa != 0 && sb != 0)); then
			fail "try $try: statuses $sa and $sb: $(cat "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b")"
		fi
		grep -q "already exists" "$BATS_TEST_TMPDIR/$( ((sa != 0)) && echo a || echo b)" ||
			fail "try $try: the loser did not say 'already exists': $(cat "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b")"
		[[ $(state_field "$CID" status) == created ]] || fail "try $try: state: $(runtime state "$CID" 2>&1)"
		local pid
		pid=$(state_field "$CID" pid)
		pid_alive "$pid" || fail "try $try: the winner's init $pid is not alive"
		runtime start "$CID"
		[[ $(state_field "$CID" status) == running ]]
		runtime delete --force "$CID"
		assert_no_leftovers
	done
}

@test "faults: delete --force while create is still running hooks waits or wins cleanly" {
	sleeping_hook createRuntime
	update_config '.hooks.createRuntime[0].timeout = 3'
	runtime create -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1 &
	local pid=$!
	wait_file "$BATS_TEST_TMPDIR/hook-createRuntime.started"
	run --separate-stderr runtime delete --force "$CID"
	local st=0
	wait "$pid" || st=$?
	# Either the delete waited for the create (which then failed on its
	# hook timeout and undid itself) or it removed the container: in both
	# cases nothing remains.
	runtime delete --force "$CID" >/dev/null 2>&1 || true
	assert_no_leftovers
	((st != 0)) || fail "create succeeded despite its hook timing out"
}

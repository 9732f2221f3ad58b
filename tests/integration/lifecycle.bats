#!/usr/bin/env bats
# The container lifecycle as runc's CLI drives it: run, create/start, state,
# kill, delete, list, ps, --pid-file, run --detach, spec.

load helpers

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

@test "run: prints the container's output and leaves nothing behind" {
	set_args echo hello from a container
	run runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_equals "hello from a container"
	assert_no_leftovers
}

@test "run: the exit status of the process propagates" {
	set_cmd 'exit 42'
	run runtime run -b "$BUNDLE" "$CID"
	assert_failure 42
	assert_no_leftovers
}

@test "run: 128+N when the process is killed by signal N" {
	# Without a pid namespace the shell is not an init, so its own SIGTERM
	# takes it down with the default action.
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	set_cmd 'kill -TERM $$; sleep 5'
	run runtime run -b "$BUNDLE" "$CID"
	assert_failure 143
	assert_no_leftovers
}

@test "run: SIGKILL through kill gives 137" {
	set_args sleep 1000
	runtime run -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1 &
	local run_pid=$!
	wait_status "$CID" running
	runtime kill "$CID" KILL
	local st=0
	wait "$run_pid" || st=$?
	[[ $st -eq 137 ]] || fail "run exited $st, wanted 137"
	assert_no_leftovers
}

@test "run --keep: the stopped container stays until deleted" {
	set_args true
	run runtime run --keep -b "$BUNDLE" "$CID"
	assert_success
	[[ $(state_field "$CID" status) == stopped ]]
	runtime delete "$CID"
	assert_no_leftovers
}

@test "create, start, state, delete: created -> running -> stopped" {
	set_cmd 'read x; echo done'
	# The process blocks on its stdin (a fifo we hold) until we let it go.
	mkfifo "$BATS_TEST_TMPDIR/in"
	exec 7<>"$BATS_TEST_TMPDIR/in"
	runtime create -b "$BUNDLE" "$CID" <"$BATS_TEST_TMPDIR/in" >"$(ct_out "$CID")" 2>&1
	[[ $(state_field "$CID" status) == created ]]
	local pid
	pid=$(state_field "$CID" pid)
	[[ $pid -gt 0 ]] && pid_alive "$pid"
	# Nothing ran yet: the process is still the runtime's init, before execve.
	[[ ! -s $(ct_out "$CID") ]]

	runtime start "$CID"
	[[ $(state_field "$CID" status) == running ]]
	[[ $(state_field "$CID" pid) == "$pid" ]]

	echo go >&7
	exec 7>&-
	wait_status "$CID" stopped
	wait_output "$CID" done

	runtime delete "$CID"
	assert_no_leftovers
}

@test "state: has the fields of the runtime spec and runc" {
	update_config '.annotations = {"org.example.key": "value"}'
	create_running
	run runtime state "$CID"
	assert_success
	local s=$output pid
	jq -e . <<<"$s" >/dev/null || fail "state is not JSON: $s"
	[[ $(jq -r .id <<<"$s") == "$CID" ]]
	[[ $(jq -r .status <<<"$s") == running ]]
	pid=$(jq -r .pid <<<"$s")
	[[ $pid -gt 0 ]] && pid_alive "$pid"
	[[ $(jq -r .bundle <<<"$s") == "$BUNDLE" ]]
	[[ $(jq -r .ociVersion <<<"$s") =~ ^1\.[0-9]+\.[0-9]+ ]]
	[[ $(jq -r '.annotations["org.example.key"]' <<<"$s") == value ]]
	# created: RFC 3339 in UTC, as runc writes it.
	[[ $(jq -r .created <<<"$s") =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$ ]]
	jq -e 'has("owner")' <<<"$s" >/dev/null || fail "state has no owner: $s"
}

@test "state: a stopped container keeps its bundle and id" {
	set_args true
	create_container "$CID"
	assert_success
	runtime start "$CID"
	wait_status "$CID" stopped
	run runtime state "$CID"
	assert_success
	[[ $(jq -r .id <<<"$output") == "$CID" ]]
	[[ $(jq -r .bundle <<<"$output") == "$BUNDLE" ]]
}

@test "create: the container survives the exit of the create process" {
	set_cmd 'echo started'
	create_container "$CID"
	assert_success
	# create has returned; its init must still be there, waiting for start.
	local pid
	pid=$(state_field "$CID" pid)
	sleep 0.5
	pid_alive "$pid" || fail "init $pid died with the create process"
	[[ $(state_field "$CID" status) == created ]]
	runtime start "$CID"
	wait_output "$CID" started
	wait_status "$CID" stopped
}

@test "create --pid-file: holds the pid of the container's process" {
	create_container --pid-file "$BATS_TEST_TMPDIR/pid" "$CID"
	assert_success
	[[ -s $BATS_TEST_TMPDIR/pid ]] || fail "pid file is empty or missing"
	[[ $(cat "$BATS_TEST_TMPDIR/pid") == "$(state_field "$CID" pid)" ]]
}

@test "create --pid-file: a relative path is taken from the current directory" {
	cd "$BATS_TEST_TMPDIR"
	create_container --pid-file pid.rel "$CID"
	assert_success
	[[ $(cat "$BATS_TEST_TMPDIR/pid.rel") == "$(state_field "$CID" pid)" ]]
}

@test "create: a relative bundle path is made absolute in the state" {
	cd "$BUNDLE"
	runtime create -b . "$CID" </dev/null >/dev/null 2>&1
	[[ $(state_field "$CID" bundle) == "$BUNDLE" ]]
}

@test "create: without --bundle the current directory is the bundle" {
	cd "$BUNDLE"
	runtime create "$CID" </dev/null >/dev/null 2>&1
	[[ $(state_field "$CID" bundle) == "$BUNDLE" ]]
}

@test "run --detach: returns at once, the container keeps running" {
	set_args sleep 1000
	run_detached "$CID"
	assert_success
	[[ $(state_field "$CID" status) == running ]]
	runtime kill "$CID" KILL
	wait_status "$CID" stopped
	runtime delete "$CID"
	assert_no_leftovers
}

@test "run --detach --pid-file" {
	set_args sleep 1000
	run_detached --pid-file "$BATS_TEST_TMPDIR/pid" "$CID"
	assert_success
	[[ $(cat "$BATS_TEST_TMPDIR/pid") == "$(state_field "$CID" pid)" ]]
}

@test "start: fails on a running container" {
	create_running
	run runtime start "$CID"
	assert_failure
	[[ $(state_field "$CID" status) == running ]]
}

@test "start: fails the second time (container already stopped)" {
	set_args true
	create_container "$CID"
	assert_success
	runtime start "$CID"
	wait_status "$CID" stopped
	run runtime start "$CID"
	assert_failure
}

@test "delete: fails on a running container without --force" {
	create_running
	run runtime delete "$CID"
	assert_failure
	[[ $(state_field "$CID" status) == running ]]
	pid_alive "$(state_field "$CID" pid)"
}

@test "delete --force: kills and removes a running container" {
	create_running
	local pid
	pid=$(state_field "$CID" pid)
	run runtime delete --force "$CID"
	assert_success
	wait_pid_gone "$pid"
	assert_no_leftovers
}

@test "delete: a created (never started) container is removed" {
	create_container "$CID"
	assert_success
	local pid
	pid=$(state_field "$CID" pid)
	run runtime delete "$CID"
	assert_success
	wait_pid_gone "$pid"
	assert_no_leftovers
}

@test "delete: a stopped container is removed, and twice is an error" {
	set_args true
	create_container "$CID"
	runtime start "$CID"
	wait_status "$CID" stopped
	runtime delete "$CID"
	assert_no_leftovers
	run runtime delete "$CID"
	assert_failure
}

@test "delete --force: a container that does not exist is not an error" {
	# Engines' cleanup paths call it blindly (runc and crun exit 0).
	run runtime delete --force "$CID"
	assert_success
	[[ -z $output ]] || fail "unexpected output: $output"
	run runtime delete "$CID"
	assert_failure
	assert_output_contains "does not exist"
	rm -rf "$ROOT"
	run runtime delete -f "$CID"
	assert_success
}

@test "kill: the default signal is SIGTERM" {
	set_cmd 'trap "echo got TERM; exit 0" TERM; echo ready; while :; do sleep 0.1; done'
	KEEP_ARGS=1 create_running
	wait_output "$CID" ready
	runtime kill "$CID"
	wait_status "$CID" stopped
	wait_output "$CID" "got TERM"
}

@test "kill: signal names with and without SIG, and numbers" {
	set_cmd 'for s in USR1 USR2 HUP INT; do trap "echo got $s" $s; done
		echo ready; while :; do sleep 0.1; done'
	KEEP_ARGS=1 create_running
	wait_output "$CID" ready
	runtime kill "$CID" USR1
	wait_output "$CID" "got USR1"
	runtime kill "$CID" SIGUSR2
	wait_output "$CID" "got USR2"
	runtime kill "$CID" 1
	wait_output "$CID" "got HUP"
	runtime kill "$CID" sigint
	wait_output "$CID" "got INT"
	runtime kill "$CID" 9
	wait_status "$CID" stopped
}

@test "kill: an unknown signal is an error and the container lives on" {
	create_running
	run runtime kill "$CID" NOSUCHSIGNAL
	assert_failure
	run runtime kill "$CID" 99
	assert_failure
	[[ $(state_field "$CID" status) == running ]]
}

@test "kill: signal 0 probes a live container and fails on a stopped one" {
	create_running
	run runtime kill "$CID" 0
	assert_success
	[[ $(state_field "$CID" status) == running ]]
	runtime kill "$CID" KILL
	wait_status "$CID" stopped
	run runtime kill "$CID" 0
	assert_failure
}

@test "kill: a created container can be killed" {
	create_container "$CID"
	assert_success
	runtime kill "$CID" KILL
	wait_status "$CID" stopped
}

@test "kill: a stopped container is an error" {
	set_args true
	create_container "$CID"
	runtime start "$CID"
	wait_status "$CID" stopped
	run runtime kill "$CID" KILL
	assert_failure
}

@test "kill --all: signals every process of the container" {
	# Without a pid namespace, killing the first process leaves its children;
	# --all reaches them too.
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	set_cmd 'sleep 1000 & sleep 1000 & echo ready; wait'
	KEEP_ARGS=1 create_running
	wait_output "$CID" ready
	[[ $(live_marked_pids | wc -l) -ge 3 ]] || fail "expected 3 processes: $(marked_pids)"
	runtime kill --all "$CID" KILL
	local tries=50
	while [[ -n $(live_marked_pids) ]] && ((tries-- > 0)); do sleep 0.1; done
	[[ -z $(live_marked_pids) ]] || fail "processes left after kill --all: $(live_marked_pids)"
	wait_status "$CID" stopped
}

@test "list: table, -q and --format json" {
	create_running "$CID"
	create_running "$CID-b"
	run runtime list
	assert_success
	local header=${lines[0]}
	[[ $header == *PID* && $header == *STATUS* && $header == *BUNDLE* ]] || fail "no header: $output"
	grep -E "^$CID[[:space:]]+[0-9]+[[:space:]]+running[[:space:]]+$BUNDLE" <<<"$output"
	grep -E "^$CID-b[[:space:]]" <<<"$output"

	run runtime list -q
	assert_success
	[[ $(sort <<<"$output") == "$(printf '%s\n' "$CID" "$CID-b" | sort)" ]]

	run runtime list --format json
	assert_success
	[[ $(jq length <<<"$output") -eq 2 ]]
	[[ $(jq -r ".[] | select(.id == \"$CID\") | .status" <<<"$output") == running ]]
	[[ $(jq -r ".[] | select(.id == \"$CID\") | .bundle" <<<"$output") == "$BUNDLE" ]]
	[[ $(jq -r ".[] | select(.id == \"$CID\") | .pid" <<<"$output") == "$(state_field "$CID" pid)" ]]
	jq -e '.[0] | has("created") and has("owner")' <<<"$output" >/dev/null
}

@test "list: an empty or missing root lists nothing" {
	run runtime list -q
	assert_success
	[[ -z $output ]]
	run timeout 30 "$RUNTIME" --root "$BATS_TEST_TMPDIR/none" list --format json
	assert_success
	[[ $(jq length <<<"${output:-[]}") -eq 0 ]]
}

@test "ps: table and --format json" {
	set_cmd 'sleep 1000 & sleep 1000'
	KEEP_ARGS=1 create_running
	local pid
	pid=$(state_field "$CID" pid)
	run runtime ps --format json "$CID"
	assert_success
	jq -e "index($pid) != null" <<<"$output" >/dev/null || fail "pid $pid not in $output"
	local tries=50
	while (($(jq length <<<"$output") < 2)) && ((tries-- > 0)); do
		sleep 0.1
		run runtime ps --format json "$CID"
	done
	[[ $(jq length <<<"$output") -eq 2 ]] || fail "expected 2 processes: $output"

	run runtime ps "$CID"
	assert_success
	[[ ${lines[0]} == *PID* ]] || fail "no header: $output"
	grep -qw "$pid" <<<"$output"
}

@test "ps: an unknown container is an error" {
	run runtime ps nosuchcontainer
	assert_failure
}

@test "spec: writes a runc-shaped config.json into the bundle" {
	local dir=$BATS_TEST_TMPDIR/spec
	mkdir "$dir"
	run runtime spec --bundle "$dir"
	assert_success
	local c=$dir/config.json
	jq -e . "$c" >/dev/null
	[[ $(jq -r .root.path "$c") == rootfs ]]
	[[ $(jq -r '.process.args | join(" ")' "$c") == sh ]]
	jq -e '.ociVersion | test("^1\\.")' "$c" >/dev/null
	jq -e '.linux.namespaces | map(.type) | index("mount") != null' "$c" >/dev/null
	jq -e '.mounts | map(.destination) | index("/proc") != null' "$c" >/dev/null
	jq -e '.linux.namespaces | map(.type) | index("user") == null' "$c" >/dev/null
	# An existing config.json is not overwritten.
	run runtime spec --bundle "$dir"
	assert_failure
}

@test "spec: the generated config runs in a bundle" {
	rm "$BUNDLE/config.json"
	run runtime spec --bundle "$BUNDLE"
	assert_success
	update_config '.process.terminal = false | .process.args = ["echo", "spec ok"]'
	run runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_equals "spec ok"
}

@test "spec --rootless: user namespace with mappings, no network namespace" {
	local dir=$BATS_TEST_TMPDIR/spec
	mkdir "$dir"
	run runtime spec --rootless --bundle "$dir"
	assert_success
	local c=$dir/config.json
	jq -e '.linux.namespaces | map(.type) | index("user") != null' "$c" >/dev/null
	jq -e '.linux.namespaces | map(.type) | index("network") == null' "$c" >/dev/null
	jq -e '.linux.uidMappings[0].hostID == 0 and .linux.gidMappings[0].hostID == 0' "$c" >/dev/null
	[[ $(jq -r '.linux.uidMappings[0].size' "$c") -ge 1 ]]
}

@test "two containers from the same bundle run side by side" {
	create_running "$CID"
	create_running "$CID-b"
	[[ $(state_field "$CID" pid) != "$(state_field "$CID-b" pid)" ]]
	runtime delete -f "$CID-b"
	[[ $(state_field "$CID" status) == running ]]
	assert_no_container "$CID-b"
}

#!/usr/bin/env bats
# The processes of a container, from its cgroup: ps (json and table, ps(1)
# options passed through) and kill --all.

load helpers
load cgroups_helpers

# A container with three processes: sh and two sleeps.
start_three() {
	set_cmd 'sleep 1000 & sleep 1001 & wait'
	KEEP_ARGS=1 create_running
	local tries=50
	while ((tries-- > 0)); do
		[[ $(runtime ps --format json "$CID" | jq length) -eq 3 ]] && return 0
		sleep 0.1
	done
	fail "the container never had 3 processes"
}

@test "ps --format json: every process of the container, the init first or not" {
	start_three
	run runtime ps --format json "$CID"
	assert_success
	local pid init
	init=$(ct_pid)
	[[ $(jq length <<<"$output") -eq 3 ]] || fail "expected 3 pids: $output"
	jq -e --argjson p "$init" 'index($p) != null' <<<"$output" >/dev/null || fail "no init $init in $output"
	for pid in $(jq '.[]' <<<"$output"); do
		[[ $(cg_dir "$pid" pids) == "$(cg_dir "$init" pids)" ]] || fail "$pid is not in the container's cgroup"
	done
}

@test "ps: the table of ps -ef, only the container's lines" {
	start_three
	run runtime ps "$CID"
	assert_success
	[[ ${lines[0]} == *PID* && ${lines[0]} == *CMD* ]] || fail "no header: ${lines[0]}"
	[[ ${#lines[@]} -eq 4 ]] || fail "expected a header and 3 lines: $output"
	assert_output_contains "sleep 1000"
	assert_output_contains "sleep 1001"
}

@test "ps: ps(1) options after the id are passed through" {
	start_three
	run runtime ps "$CID" -o pid,comm
	assert_success
	[[ ${lines[0]} =~ PID.*COMMAND ]] || fail "header: ${lines[0]}"
	[[ ${#lines[@]} -eq 4 ]] || fail "expected a header and 3 lines: $output"
	[[ $(grep -c sleep <<<"$output") -eq 2 ]] || fail "expected 2 sleeps: $output"
}

@test "ps: a stopped container has no processes" {
	set_args true
	create_container "$CID"
	runtime start "$CID"
	wait_status "$CID" stopped
	run runtime ps --format json "$CID"
	assert_success
	[[ $(jq length <<<"$output") -eq 0 ]] || fail "pids of a stopped container: $output"
}

@test "kill --all: every process of the container gets the signal" {
	start_three
	local pids
	pids=$(runtime ps --format json "$CID" | jq '.[]')
	run runtime kill --all "$CID" KILL
	assert_success
	wait_status "$CID" stopped
	local p
	for p in $pids; do
		wait_pid_gone "$p"
	done
}

@test "kill --all TERM: the children die, the shell (pid 1, no handler) does not" {
	start_three
	local init
	init=$(ct_pid)
	runtime kill --all "$CID" TERM
	# sh waits for its children, which die: then sh exits as well.
	wait_status "$CID" stopped
	wait_pid_gone "$init"
}

@test "kill without --all signals only the init" {
	# Without a pid namespace the sleeps survive their parent.
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	start_three
	local init others
	init=$(ct_pid)
	others=$(runtime ps --format json "$CID" | jq --argjson i "$init" '.[] | select(. != $i)')
	runtime kill "$CID" KILL
	wait_pid_gone "$init"
	local p
	for p in $others; do
		pid_alive "$p" || fail "$p died with the init"
	done
	runtime delete -f "$CID"
	for p in $others; do
		wait_pid_gone "$p"
	done
}

@test "delete --force kills every process of the container" {
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	start_three
	local pids
	pids=$(runtime ps --format json "$CID" | jq '.[]')
	runtime delete -f "$CID"
	local p
	for p in $pids; do
		wait_pid_gone "$p"
	done
	assert_no_leftovers
}

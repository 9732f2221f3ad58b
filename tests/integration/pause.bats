#!/usr/bin/env bats
# pause and resume: the cgroup freezer (v1 freezer.state, v2 cgroup.freeze),
# the "paused" status, runc's errors, and what delete/kill do to a paused
# container.

load helpers
load cgroups_helpers

# A container that counts into /dev/shm/n (the rootfs is read-only).
start_counter() {
	set_cmd 'i=0; while :; do i=$((i + 1)); echo $i >/dev/shm/n; sleep 0.05; done'
	KEEP_ARGS=1 create_running
	local tries=50
	while [[ ! -s /proc/$(ct_pid)/root/dev/shm/n ]] && ((tries-- > 0)); do
		sleep 0.1
	done
}

counter() {
	cat "/proc/$(ct_pid)/root/dev/shm/n"
}

frozen_cgroup() {
	if [[ $(cg_version freezer) == v1 ]]; then
		cg_file freezer freezer.state
	else
		cg_file "" cgroup.freeze
	fi
}

@test "pause: the status is paused and nothing runs; resume: it runs again" {
	start_counter
	sleep 0.3
	runtime pause "$CID"
	[[ $(state_field "$CID" status) == paused ]] || fail "status $(state_field "$CID" status)"
	case $(frozen_cgroup) in FROZEN | 1) ;; *) fail "cgroup not frozen: $(frozen_cgroup)" ;; esac
	local a b
	a=$(counter)
	sleep 0.5
	b=$(counter)
	[[ $a == "$b" ]] || fail "the counter moved while paused: $a -> $b"
	runtime resume "$CID"
	[[ $(state_field "$CID" status) == running ]]
	sleep 0.5
	[[ $(counter) -gt $b ]] || fail "the counter did not move after resume"
}

@test "pause, resume: list shows the status too" {
	create_running
	runtime pause "$CID"
	run runtime list
	assert_output_contains paused
	runtime resume "$CID"
	run runtime list
	assert_output_contains running
}

@test "pause of a paused container: container not running" {
	create_running
	runtime pause "$CID"
	run --separate-stderr runtime pause "$CID"
	assert_failure
	assert_one_error_line "not running"
	[[ $(state_field "$CID" status) == paused ]]
}

@test "resume of a running container: container not paused" {
	create_running
	run --separate-stderr runtime resume "$CID"
	assert_failure
	assert_one_error_line "not paused"
}

@test "pause of a stopped container: container not running" {
	set_args true
	create_container "$CID"
	runtime start "$CID"
	wait_status "$CID" stopped
	run --separate-stderr runtime pause "$CID"
	assert_failure
	assert_one_error_line "not running"
	run --separate-stderr runtime resume "$CID"
	assert_failure
	assert_one_error_line "not paused"
}

@test "pause of a container that does not exist" {
	run --separate-stderr runtime pause nosuch-$$
	assert_failure
	assert_one_error_line "does not exist"
}

@test "pause of a created container (as runc), resume gives it back created" {
	set_args true
	create_container "$CID"
	[[ $status -eq 0 ]] || fail "create: $output"
	runtime pause "$CID"
	[[ $(state_field "$CID" status) == paused ]]
	runtime resume "$CID"
	[[ $(state_field "$CID" status) == created ]]
	runtime start "$CID"
	wait_status "$CID" stopped
}

@test "pause, resume: the usage errors" {
	run runtime pause
	assert_failure
	run runtime resume a b
	assert_failure
}

@test "delete without --force refuses a paused container" {
	create_running
	runtime pause "$CID"
	run --separate-stderr runtime delete "$CID"
	assert_failure
	assert_one_error_line paused
	[[ $(state_field "$CID" status) == paused ]]
}

@test "delete --force of a paused container thaws and kills it" {
	create_running
	local pid
	pid=$(ct_pid)
	runtime pause "$CID"
	run runtime delete --force "$CID"
	assert_success
	wait_pid_gone "$pid"
	assert_no_leftovers
}

@test "kill --all KILL stops a paused container" {
	create_running
	local pid
	pid=$(ct_pid)
	runtime pause "$CID"
	runtime kill --all "$CID" KILL
	wait_pid_gone "$pid"
	wait_status "$CID" stopped
}

@test "kill KILL (the init only) stops a paused container: it is thawed (runc)" {
	create_running
	local pid
	pid=$(ct_pid)
	runtime pause "$CID"
	runtime kill "$CID" KILL
	wait_pid_gone "$pid"
	wait_status "$CID" stopped
}

@test "kill TERM leaves a paused container paused" {
	create_running
	runtime pause "$CID"
	runtime kill "$CID" TERM
	sleep 0.3
	[[ $(state_field "$CID" status) == paused ]]
}

@test "pause: every process of the container is frozen, not only the init" {
	set_cmd 'count() { i=0; while :; do i=$((i + 1)); echo $i >/dev/shm/$1; sleep 0.05; done; }
		count child & count init'
	KEEP_ARGS=1 create_running
	local root a b
	root=/proc/$(ct_pid)/root/dev/shm
	sleep 0.5
	runtime pause "$CID"
	a=$(cat "$root/child" "$root/init")
	sleep 0.5
	b=$(cat "$root/child" "$root/init")
	[[ $a == "$b" ]] || fail "a process ran while paused: $a -> $b"
	runtime resume "$CID"
	sleep 0.5
	[[ $(cat "$root/child") -gt ${b%%$'\n'*} ]] || fail "the child did not run after resume"
}

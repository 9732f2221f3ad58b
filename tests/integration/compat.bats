#!/usr/bin/env bats
# What engines depend on beyond single commands: kill, delete --force and
# state at every step of a container's life, including the transitions (a
# create held by a hook, an init that exited but is not deleted), with
# runc's exit codes and one error line on stderr.

load helpers

setup() {
	setup_bundle
}

teardown() {
	[[ -z ${HOLD:-} ]] || rm -f "$HOLD"
	[[ -z ${CREATE_PID:-} ]] || kill -9 "$CREATE_PID" 2>/dev/null || true
	teardown_bundle
}

# hold_create: a createRuntime hook that waits until $HOLD goes, so that
# the container stays "creating"; create runs in the background
# ($CREATE_PID) until the hook says it is running.
hold_create() {
	HOLD=$BATS_TEST_TMPDIR/hold
	local started=$BATS_TEST_TMPDIR/hook-started
	touch "$HOLD"
	update_config --arg h "$HOLD" --arg s "$started" '.hooks.createRuntime = [{path: "/bin/sh",
		args: ["sh", "-c", "touch \($s); while [ -e \($h) ]; do sleep 0.05; done"]}]'
	runtime create -b "$BUNDLE" "$CID" </dev/null >"$BATS_TEST_TMPDIR/create.out" 2>&1 &
	CREATE_PID=$!
	local tries=200
	while [[ ! -e $started ]] && ((tries-- > 0)); do sleep 0.05; done
	[[ -e $started ]] || fail "the hook did not start: $(cat "$BATS_TEST_TMPDIR/create.out")"
}

# release_create_expect_failure: let the held create go on; it must fail.
release_create_expect_failure() {
	rm -f "$HOLD"
	local rc=0
	wait "$CREATE_PID" || rc=$?
	CREATE_PID=
	((rc != 0)) || fail "create succeeded: $(cat "$BATS_TEST_TMPDIR/create.out")"
}

# assert_error_only: failed, with one error line on stderr naming $1 and
# nothing on stdout (what engines show their users).
assert_error_only() {
	assert_failure
	assert_one_error_line "$1"
}

@test "transition: while a hook holds create, state says creating; delete --force ends it and create fails, nothing left" {
	hold_create
	run runtime state "$CID"
	assert_success
	[[ $(jq -r .status <<<"$output") == creating ]] || fail "state: $output"
	run runtime list -q
	assert_success
	assert_output_equals "$CID"
	run runtime delete --force "$CID"
	assert_success
	release_create_expect_failure
	run --separate-stderr runtime state "$CID"
	assert_error_only "does not exist"
	assert_no_leftovers
}

@test "transition: while a hook holds create, kill KILL reaches the init: create fails, delete --force leaves nothing" {
	hold_create
	run runtime kill "$CID" KILL
	assert_success
	release_create_expect_failure
	run runtime delete --force "$CID"
	assert_success
	assert_no_leftovers
}

@test "transition: created: state, kill 0, kill, delete --force" {
	create_container "$CID"
	assert_success
	[[ $(state_field "$CID" status) == created ]]
	runtime kill "$CID" 0
	runtime kill "$CID" KILL
	wait_status "$CID" stopped
	run runtime delete --force "$CID"
	assert_success
	assert_no_leftovers
}

@test "transition: init exited but not deleted: state stopped, kill fails as runc's, delete with and without --force" {
	set_args true
	create_container "$CID"
	assert_success
	runtime start "$CID"
	wait_status "$CID" stopped
	run runtime state "$CID"
	assert_success
	jq -e '.status == "stopped" and .id == $id and (.bundle | length > 0)' --arg id "$CID" <<<"$output" >/dev/null ||
		fail "state: $output"
	run --separate-stderr runtime kill "$CID" KILL
	assert_error_only "not running"
	run --separate-stderr runtime kill "$CID" 0
	assert_error_only "not running"
	run runtime list --format json
	assert_success
	jq -e --arg id "$CID" 'map(select(.id == $id)) | .[0].status == "stopped"' <<<"$output" >/dev/null ||
		fail "list: $output"
	run runtime delete --force "$CID"
	assert_success
	assert_no_leftovers
	# And without --force, on another one.
	create_container "$CID"
	runtime start "$CID"
	wait_status "$CID" stopped
	run runtime delete "$CID"
	assert_success
	assert_no_leftovers
}

@test "transition: paused: state paused, kill KILL ends it (thawed), delete --force of a paused one too" {
	create_running
	runtime pause "$CID"
	[[ $(state_field "$CID" status) == paused ]]
	runtime kill "$CID" KILL
	wait_status "$CID" stopped
	runtime delete "$CID"
	create_running
	runtime pause "$CID"
	run runtime delete --force "$CID"
	assert_success
	assert_no_leftovers
}

@test "errors: exit status 1, one line on stderr, nothing on stdout, for each command on a missing container" {
	local cmd
	for cmd in state start kill pause resume ps delete events exec update; do
		local -a args=("$cmd" "nosuch-$$")
		case $cmd in
		events) args=(events --stats "nosuch-$$") ;;
		exec) args=(exec "nosuch-$$" true) ;;
		update) args=(update --pids-limit 10 "nosuch-$$") ;;
		esac
		run --separate-stderr runtime "${args[@]}"
		# runc's: 255 for exec (its own process's status is passed
		# through), 1 for the others.
		if [[ $cmd == exec ]]; then
			[[ $status -eq 255 ]] || fail "exec: exit status $status, runc's is 255"
		else
			[[ $status -eq 1 ]] || fail "$cmd: exit status $status, runc's is 1"
		fi
		assert_one_error_line "nosuch-$$"
		[[ -z $output ]] || fail "$cmd: stdout: $output"
	done
}

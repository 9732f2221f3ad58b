#!/usr/bin/env bats
# Failures: a bad bundle or a wrong operation fails with one clear error line
# on stderr, a non-zero status, and leaves nothing behind (no state, no mount,
# no process, no cgroup).

load helpers

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

# create_fails WORD...: `create` must fail with one error line mentioning
# each WORD, and leave nothing behind.
create_fails() {
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line "$@"
	assert_no_leftovers
}

@test "config.json that is not JSON" {
	echo '{"ociVersion": "1.0.2", "process": {' >"$BUNDLE/config.json"
	create_fails
}

@test "config.json missing" {
	rm "$BUNDLE/config.json"
	create_fails config.json
}

@test "bundle directory missing" {
	run --separate-stderr runtime_stdout_to_file create -b "$BATS_TEST_TMPDIR/nonexistent" "$CID"
	assert_failure
	assert_one_error_line nonexistent
	assert_no_leftovers
}

@test "wrong type: process.args is a string" {
	update_config '.process.args = "true"'
	create_fails process.args
}

@test "wrong type: process.user.uid is a string" {
	update_config '.process.user.uid = "0"'
	create_fails uid
}

@test "wrong type: linux.namespaces is an object" {
	update_config '.linux.namespaces = {"type": "pid"}'
	create_fails namespaces
}

@test "wrong type: mounts[].options is a string" {
	update_config '.mounts[1].options = "nosuid"'
	create_fails options
}

@test "ociVersion outside the supported range is refused" {
	update_config '.ociVersion = "2.0.0"'
	create_fails version
}

@test "unknown fields are ignored" {
	update_config '.someFutureField = {"x": 1} | .process.alsoNew = [1, 2] | .process.args = ["echo", "ok"]'
	run runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_equals ok
}

@test "rootfs missing" {
	rm -rf "$BUNDLE/rootfs"
	create_fails rootfs
}

@test "root.path pointing nowhere" {
	update_config '.root.path = "no-such-rootfs"'
	create_fails no-such-rootfs
}

@test "process.args empty" {
	update_config '.process.args = []'
	create_fails
}

@test "process.args names a program that does not exist" {
	set_args /bin/no-such-program
	create_fails no-such-program
}

@test "process.cwd relative" {
	update_config '.process.cwd = "tmp"'
	create_fails cwd
}

@test "a mount of an unknown filesystem type" {
	update_config '.mounts += [{"destination": "/mnt", "type": "no-such-fs", "source": "none"}]'
	create_fails /mnt
}

@test "a bind mount of a source that does not exist" {
	update_config --arg s "$BATS_TEST_TMPDIR/missing-source" \
		'.mounts += [{"destination": "/mnt", "type": "bind", "source": $s, "options": ["bind"]}]'
	create_fails missing-source
}

@test "a namespace path that does not exist" {
	update_config '.linux.namespaces += [{"type": "cgroup", "path": "/proc/self/ns/no-such-ns"}]'
	create_fails no-such-ns
}

@test "a namespace path of the wrong namespace type" {
	update_config '.linux.namespaces |= map(select(.type != "network"))
		| .linux.namespaces += [{"type": "network", "path": "/proc/self/ns/uts"}]'
	create_fails
}

@test "an id already in use is refused; the first container is untouched" {
	create_running
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line exist
	[[ $(state_field "$CID" status) == running ]]
}

@test "invalid container ids are refused" {
	local id
	for id in "a/b" ".." "../escape" "bad id"; do
		run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$id"
		assert_failure
		[[ -n $stderr ]] || fail "no error message for id '$id'"
	done
	[[ ! -e $BATS_TEST_TMPDIR/escape ]]
	[[ -z $(find "$ROOT" -mindepth 1 -maxdepth 1) ]] || fail "state left: $(ls "$ROOT")"
}

@test "an unknown id: state, start, kill, delete, ps fail with one line" {
	local cmd
	for cmd in state start kill delete ps; do
		run --separate-stderr runtime "$cmd" no-such-container
		assert_failure
		assert_one_error_line
	done
}

@test "kill of a stopped container: \"container not running\", runc's words" {
	# containerd's runc shim matches this text to tell a finished process
	# from a failed kill; other words hang a pod's StopPodSandbox.
	create_container "$CID"
	runtime start "$CID"
	wait_status "$CID" stopped
	run --separate-stderr runtime kill "$CID" KILL
	assert_failure
	assert_one_error_line "container not running"
	runtime delete "$CID"
}

@test "an unknown command or option is an error" {
	run runtime no-such-command
	assert_failure
	run --separate-stderr runtime_stdout_to_file create --no-such-option -b "$BUNDLE" "$CID"
	assert_failure
	assert_no_leftovers
}

@test "a missing container id is an error" {
	local cmd
	for cmd in create start state kill delete; do
		run --separate-stderr runtime_stdout_to_file "$cmd"
		assert_failure
	done
}

@test "--version and --help" {
	run "$RUNTIME" --version
	assert_success
	[[ $output =~ [0-9]+\.[0-9]+ ]] || fail "no version number: $output"
	run "$RUNTIME" --help
	assert_success
	[[ -n $output ]]
}

@test "run: a failed create reports and leaves nothing behind" {
	set_args /bin/no-such-program
	run --separate-stderr runtime run -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line no-such-program
	assert_no_leftovers
}

@test "a failed create in a later setup step undoes the earlier ones" {
	# Mounts that succeed, then one that cannot: the earlier ones must not
	# survive anywhere (they live in the container's mount namespace only).
	update_config --arg s "$BATS_TEST_TMPDIR/missing-source" \
		'.mounts += [{"destination": "/mnt", "type": "tmpfs", "source": "tmpfs"},
		             {"destination": "/opt", "type": "bind", "source": $s, "options": ["bind"]}]'
	create_fails
	[[ -z $(find "$BUNDLE/rootfs/mnt" -mindepth 1) ]]
}

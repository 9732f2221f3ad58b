#!/usr/bin/env bats
# The core's C API for callers that stay alive (the sandbox layer), driven
# by the unit test binary tests/unit/test-api (built by `make check`): one
# process creates containers from an in-memory config with its own pipes as
# stdio, waits for them with a deadline on their pidfd, reads their stats
# and lists them, kills and deletes them; nothing is left behind.

load helpers

setup() {
	setup_bundle
	API_TEST=${API_TEST:-$(dirname "$RUNTIME")/tests/unit/test-api}
}

teardown() {
	teardown_bundle
}

@test "api: one process creates, waits for and deletes several containers from memory" {
	[[ -x $API_TEST ]] || fail "$API_TEST is missing: build it with 'make check TESTS='"
	run env SR_TEST_ROOTFS="$BUNDLE/rootfs" SR_TEST_ROOT="$ROOT" SR_TEST_ID="$CID" \
		SR_TEST_ENV="$TEST_MARK" timeout 120 "$API_TEST"
	echo "$output"
	[[ $output != *skipping* ]] || fail "the container tests did not run"
	[[ $output != *"not ok"* ]] || fail "a check failed"
	[ "$status" -eq 0 ]
	for id in "$CID-0" "$CID-1" "$CID-t" "$CID-s"; do
		assert_no_leftovers "$id"
	done
}

#!/usr/bin/env bats
# contrib/python (the `sandrun` Python package): its pytest tests, run with
# Debian's python3 and python3-pytest, against the fake sandbox (the client
# alone) and against the runtime's real sandbox when it has one.

load helpers

PY=/usr/bin/python3 # not a pyenv shim that may shadow it on PATH

setup() {
	"$PY" -m pytest --version >/dev/null 2>&1 || fail "python3-pytest is missing (contrib/scripts/install-deps.sh --tests)"
	export FAKE_SANDRUN_STATE=$BATS_TEST_TMPDIR/fake-state
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir -p "$TMPDIR"
}

pytest_() {
	cd "$REPO_ROOT/contrib/python"
	timeout 300 "$PY" -B -m pytest -q -p no:cacheprovider -rs tests 3>&-
}

@test "python client: pytest against the fake sandbox" {
	SANDRUN=$REPO_ROOT/tests/helpers/fake-sandrun run pytest_
	echo "$output"
	assert_success
	[[ -z $(ls -A "$FAKE_SANDRUN_STATE") ]] || fail "sessions left: $(ls -A "$FAKE_SANDRUN_STATE")"
	[[ -z $(ls -A "$TMPDIR") ]] || fail "temporary files left: $(ls -A "$TMPDIR")"
}

@test "python client: pytest against the real sandbox" {
	"$RUNTIME" sandbox --help >/dev/null 2>&1 || skip "$RUNTIME_NAME has no sandbox command yet (issue 12)"
	local sessions=0
	"$RUNTIME" sandbox --help 2>&1 | grep -q "start --name" && sessions=1
	SANDRUN=$RUNTIME SANDRUN_SESSIONS=$sessions SANDRUN_KERNEL=$sessions run pytest_
	echo "$output"
	assert_success
}

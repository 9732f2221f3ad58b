#!/usr/bin/env bats
# --log, --log-format text|json, --debug: what containerd's shim reads (one
# JSON object per line with level, msg and time).

load helpers

setup() {
	setup_bundle
	LOG=$BATS_TEST_TMPDIR/runtime.log
}

teardown() {
	teardown_bundle
}

# assert_json_log FILE: every line is one JSON object with string level, msg
# and time, and level is a known one.
assert_json_log() {
	local line n=0
	[[ -s $1 ]] || fail "log $1 is empty"
	while IFS= read -r line; do
		n=$((n + 1))
		jq -e 'type == "object" and (.level | type) == "string" and (.msg | type) == "string"
			and (.time | type) == "string"
			and (.level | IN("debug", "info", "warning", "error", "fatal", "panic"))' \
			<<<"$line" >/dev/null || fail "log line $n is not a JSON log entry: $line"
	done <"$1"
}

@test "--log-format json: a failed create logs one error entry per line" {
	set_args /bin/no-such-program
	run --separate-stderr runtime_stdout_to_file --log "$LOG" --log-format json create -b "$BUNDLE" "$CID"
	assert_failure
	assert_json_log "$LOG"
	jq -se 'map(select(.level == "error")) | length >= 1' "$LOG" >/dev/null ||
		fail "no error entry: $(cat "$LOG")"
	jq -se 'map(select(.level == "error")) | .[0].msg | test("no-such-program")' "$LOG" >/dev/null ||
		fail "the error entry does not name the cause: $(cat "$LOG")"
	# time is RFC 3339
	jq -se '.[0].time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}")' "$LOG" >/dev/null
	assert_no_leftovers
}

@test "--log: the error still goes to stderr too" {
	set_args /bin/no-such-program
	run --separate-stderr runtime_stdout_to_file --log "$LOG" --log-format json create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line no-such-program
}

@test "--log appends: what the file held stays" {
	echo '{"level":"info","msg":"written before","time":"2026-01-01T00:00:00Z"}' >"$LOG"
	set_args /bin/no-such-program
	run --separate-stderr runtime_stdout_to_file --log "$LOG" --log-format json create -b "$BUNDLE" "$CID"
	assert_failure
	[[ $(head -1 "$LOG") == *"written before"* ]] || fail "log truncated: $(cat "$LOG")"
	[[ $(wc -l <"$LOG") -ge 2 ]]
	assert_json_log "$LOG"
}

@test "--debug --log-format json: debug entries for a successful run, all valid" {
	set_args true
	run runtime --debug --log "$LOG" --log-format json run -b "$BUNDLE" "$CID"
	assert_success
	assert_json_log "$LOG"
	jq -se 'map(select(.level == "debug")) | length >= 1' "$LOG" >/dev/null ||
		fail "no debug entry: $(cat "$LOG")"
}

@test "--debug: a debug line for each setup step, in text and in json" {
	set_args true
	local fmt step
	for fmt in text json; do
		rm -f "$LOG"
		run runtime --debug --log "$LOG" --log-format "$fmt" run -b "$BUNDLE" "$CID"
		assert_success
		[[ $fmt == text ]] || assert_json_log "$LOG"
		# config loaded, cgroup joined, namespaces, each mount, the pivot,
		# the init ready: what a user debugging a failed start looks for.
		for step in 'config of bundle' 'in cgroup' 'namespaces entered' 'mount "/proc"' \
			'mount "/sys"' 'into "' 'ready'; do
			if [[ $fmt == json ]]; then
				jq -se --arg s "$step" 'any(.[]; .level == "debug" and (.msg | contains($s)))' "$LOG" >/dev/null
			else
				grep -F "$step" "$LOG" | grep -q debug
			fi || fail "$fmt: no debug line for '$step': $(cat "$LOG")"
		done
	done
}

@test "without --debug a successful run logs no error" {
	set_args true
	run runtime --log "$LOG" --log-format json run -b "$BUNDLE" "$CID"
	assert_success
	if [[ -s $LOG ]]; then
		assert_json_log "$LOG"
		jq -se 'map(select(.level == "error" or .level == "debug")) | length == 0' "$LOG" >/dev/null ||
			fail "unexpected entries: $(cat "$LOG")"
	fi
}

@test "--log-format text: readable lines naming the error" {
	set_args /bin/no-such-program
	run --separate-stderr runtime_stdout_to_file --log "$LOG" --log-format text create -b "$BUNDLE" "$CID"
	assert_failure
	[[ -s $LOG ]] || fail "empty log"
	grep -q no-such-program "$LOG" || fail "$(cat "$LOG")"
	grep -qi error "$LOG" || fail "no level in: $(cat "$LOG")"
	! jq -e . "$LOG" >/dev/null 2>&1 || fail "text log is JSON: $(cat "$LOG")"
}

@test "--log-format with an unknown value is an error" {
	run --separate-stderr runtime --log-format xml list
	assert_failure
	assert_one_error_line xml
}

@test "--log and --log-format also apply to the other commands" {
	run --separate-stderr runtime --log "$LOG" --log-format json state no-such-container
	assert_failure
	assert_json_log "$LOG"
	jq -se 'map(select(.level == "error")) | length >= 1' "$LOG" >/dev/null
}

@test "--log-format json with a message holding quotes and newlines stays one line" {
	set_args '/bin/no "such"
program'
	run --separate-stderr runtime_stdout_to_file --log "$LOG" --log-format json create -b "$BUNDLE" "$CID"
	assert_failure
	assert_json_log "$LOG"
}

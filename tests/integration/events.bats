#!/usr/bin/env bats
# events: runc's JSON objects, one per line: {"type":"stats","id":…,"data":…}
# (--stats once, else every --interval) and {"type":"oom","id":…} for every
# OOM kill; the stream ends when the container does, or on SIGINT/SIGTERM.

load helpers
load cgroups_helpers

setup() {
	setup_bundle
	EVENTS_PID=
}

teardown() {
	if [[ -n $EVENTS_PID ]]; then
		kill "$EVENTS_PID" 2>/dev/null || true
		wait "$EVENTS_PID" 2>/dev/null || true
	fi
	teardown_bundle
}

# events_bg ARG...: `events ARG... $CID` in the background, output to
# $EVENTS_OUT; $EVENTS_PID is the runtime itself (no timeout wrapper: the
# tests signal it), killed in teardown.
events_bg() {
	EVENTS_OUT=$BATS_TEST_TMPDIR/events.out
	"$RUNTIME" --root "$ROOT" events "$@" "$CID" >"$EVENTS_OUT" 2>"$BATS_TEST_TMPDIR/events.err" </dev/null &
	EVENTS_PID=$!
}

# wait_events_watching: until events has set up its signal handling (it
# blocks SIGINT and SIGTERM for its signalfd): a signal before that would
# find the default action.
wait_events_watching() {
	local tries=100 blk exe
	exe=$(readlink -f "$RUNTIME")
	while ((tries-- > 0)); do
		# The runtime itself, not the shell that forks it (which blocks
		# signals for a moment too).
		if [[ $(readlink "/proc/$EVENTS_PID/exe" 2>/dev/null) == "$exe" ]]; then
			blk=$(sed -n 's/^SigBlk:[[:space:]]*//p' "/proc/$EVENTS_PID/status" 2>/dev/null)
			[[ -n $blk ]] && (((16#$blk & 0x4002) == 0x4002)) && return 0
		fi
		sleep 0.1
	done
	fail "events never blocked SIGINT and SIGTERM"
}

# wait_events_exit [TRIES]: the background events exits (status in $status).
wait_events_exit() {
	local tries=${1:-100}
	while kill -0 "$EVENTS_PID" 2>/dev/null && ((tries-- > 0)); do
		sleep 0.1
	done
	kill -0 "$EVENTS_PID" 2>/dev/null && fail "events still running: $(cat "$EVENTS_OUT")"
	status=0
	wait "$EVENTS_PID" || status=$?
	EVENTS_PID=
}

@test "events --stats: one stats object with runc's keys" {
	run_with_resources '{"pids": {"limit": 77}}'
	run --separate-stderr runtime events --stats "$CID"
	assert_success
	[[ ${#lines[@]} -eq 1 ]] || fail "expected one line: $output"
	jq -e --arg id "$CID" '.type == "stats" and .id == $id' <<<"$output" >/dev/null ||
		fail "not a stats event of $CID: $output"
	jq -e '.data | has("cpu") and has("memory") and has("pids") and has("blkio")
		and has("hugetlb") and has("intel_rdt") and has("network_interfaces")' <<<"$output" >/dev/null ||
		fail "missing keys: $(jq -c '.data | keys' <<<"$output")"
	[[ $(jq '.data.pids.current' <<<"$output") -ge 1 ]] || fail "pids.current: $output"
	[[ $(jq '.data.pids.limit' <<<"$output") -eq 77 ]] || fail "pids.limit: $output"
}

@test "events --stats: memory usage and limit, cpu usage" {
	[[ $(cg_version memory) != none ]] || skip "no memory controller"
	set_cmd 'x=$(head -c 3000000 /dev/zero | tr "\0" a); i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; sleep 1000'
	resources '{"memory": {"limit": 67108864}}'
	KEEP_ARGS=1 create_running
	sleep 1
	run runtime events --stats "$CID"
	assert_success
	[[ $(jq '.data.memory.usage.limit' <<<"$output") -eq 67108864 ]] || fail "limit: $(jq -c .data.memory.usage <<<"$output")"
	[[ $(jq '.data.memory.usage.usage' <<<"$output") -gt 0 ]] || fail "usage: $(jq -c .data.memory.usage <<<"$output")"
	[[ $(jq '.data.memory.usage.max // 0' <<<"$output") -ge $(jq '.data.memory.usage.usage' <<<"$output") ||
		$(jq '.data.memory.usage.max // 0' <<<"$output") -eq 0 ]]
	[[ $(jq '.data.cpu.usage.total' <<<"$output") -gt 0 ]] || fail "cpu: $(jq -c .data.cpu <<<"$output")"
	jq -e '.data.memory.raw | length > 0' <<<"$output" >/dev/null || fail "no memory.stat"
}

@test "events --stats: cpu throttling with a quota" {
	[[ $(cg_version cpu) != none ]] || skip "no cpu controller"
	set_cmd 'while :; do :; done'
	resources '{"cpu": {"quota": 10000, "period": 100000}}'
	KEEP_ARGS=1 create_running
	sleep 1
	run runtime events --stats "$CID"
	assert_success
	[[ $(jq '.data.cpu.throttling.periods // 0' <<<"$output") -gt 0 ]] || fail "throttling: $(jq -c .data.cpu <<<"$output")"
	[[ $(jq '.data.cpu.throttling.throttledPeriods // 0' <<<"$output") -gt 0 ]] || fail "throttling: $(jq -c .data.cpu <<<"$output")"
}

@test "events --stats: hugetlb page sizes are listed" {
	[[ $(cg_version hugetlb) != none ]] || skip "no hugetlb controller"
	run_with_resources '{"hugepageLimits": [{"pageSize": "2MB", "limit": 4194304}]}'
	run runtime events --stats "$CID"
	assert_success
	jq -e '.data.hugetlb | has("2MB")' <<<"$output" >/dev/null || fail "hugetlb: $(jq -c .data.hugetlb <<<"$output")"
}

@test "events --stats of a paused container works" {
	create_running
	runtime pause "$CID"
	run runtime events --stats "$CID"
	assert_success
	jq -e '.type == "stats"' <<<"$output" >/dev/null
}

@test "events: stats every --interval until the container stops, then exit 0" {
	create_running
	events_bg --interval 200ms
	sleep 1.5
	runtime kill "$CID" KILL
	wait_events_exit
	assert_success
	local n
	n=$(grep -c '"type":"stats"' "$EVENTS_OUT")
	((n >= 3)) || fail "only $n stats objects in 1.5 s: $(cat "$EVENTS_OUT")"
	jq -e -s 'all(.type == "stats")' "$EVENTS_OUT" >/dev/null || fail "$(cat "$EVENTS_OUT")"
}

@test "events: the first stats come after one interval (default 5s)" {
	create_running
	events_bg
	sleep 1
	[[ ! -s $EVENTS_OUT ]] || fail "stats before the interval: $(cat "$EVENTS_OUT")"
	runtime kill "$CID" KILL
	wait_events_exit
	assert_success
}

@test "events: SIGTERM and SIGINT end the stream with status 0" {
	create_running
	local sig
	for sig in TERM INT; do
		events_bg --interval 100ms
		wait_events_watching
		kill -s "$sig" "$EVENTS_PID"
		wait_events_exit
		assert_success
	done
	[[ $(state_field "$CID" status) == running ]]
}

@test "events: the container is deleted meanwhile (run ends): exit 0" {
	set_cmd 'sleep 1'
	runtime run -d -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1
	events_bg --interval 100ms
	wait_status "$CID" stopped
	wait_events_exit
	assert_success
}

@test "events of a stopped container: not running" {
	set_args true
	create_container "$CID"
	runtime start "$CID"
	wait_status "$CID" stopped
	run --separate-stderr runtime events --stats "$CID"
	assert_failure
	assert_one_error_line "not running"
}

@test "events: bad --interval values" {
	create_running
	run --separate-stderr runtime events --interval 0s "$CID"
	assert_failure
	assert_one_error_line "greater than 0"
	run --separate-stderr runtime events --interval fast "$CID"
	assert_failure
	assert_one_error_line fast
	run --separate-stderr runtime events --interval 5 "$CID"
	assert_failure
	run --separate-stderr runtime events --stats nosuch-$$
	assert_failure
	assert_one_error_line nosuch-$$
}

@test "events: Go durations (1m30s, 1.5s, 250ms) are accepted" {
	create_running
	local d
	for d in 1m30s 1.5s 250ms 1h; do
		events_bg --interval "$d"
		wait_events_watching
		kill "$EVENTS_PID"
		wait_events_exit
		assert_success
	done
}

# --- OOM ---------------------------------------------------------------------------

@test "events: an OOM kill is reported; only the container dies (a neighbour lives on)" {
	[[ $(cg_version memory) != none ]] || skip "no memory controller"
	local other=${CID}-neighbour
	create_running "$other"
	resources '{"memory": {"limit": 33554432}}'
	# Created, the init waits: start it once events watches.
	set_cmd 'x=$(head -c 100000000 /dev/zero | tr "\0" a); echo survived'
	create_container "$CID"
	[[ $status -eq 0 ]] || fail "create: $output"
	events_bg --interval 100s
	wait_events_watching
	runtime start "$CID"
	wait_events_exit 300
	assert_success
	grep -qxF "{\"type\":\"oom\",\"id\":\"$CID\"}" "$EVENTS_OUT" || fail "no oom event: $(cat "$EVENTS_OUT")"
	[[ $(state_field "$other" status) == running ]] || fail "the neighbour was killed"
	[[ $(state_field "$CID" status) == stopped ]]
}

@test "run: a container killed by the OOM killer exits 137 and events reports it" {
	[[ $(cg_version memory) != none ]] || skip "no memory controller"
	resources '{"memory": {"limit": 33554432}}'
	# The hog waits for /dev/shm/go: events must watch before the kill.
	set_cmd 'while [ ! -e /dev/shm/go ]; do sleep 0.1; done
		x=$(head -c 100000000 /dev/zero | tr "\0" a); echo survived'
	runtime run -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1 &
	local run_pid=$! st=0
	wait_status "$CID" running
	events_bg --interval 100s
	wait_events_watching
	touch "/proc/$(ct_pid)/root/dev/shm/go"
	wait "$run_pid" || st=$?
	[[ $st -eq 137 ]] || fail "run exited $st, wanted 137: $(cat "$(ct_out "$CID")")"
	! grep -q survived "$(ct_out "$CID")"
	wait_events_exit 100
	grep -qF '"type":"oom"' "$EVENTS_OUT" || fail "no oom event: $(cat "$EVENTS_OUT")"
	assert_no_leftovers
}

@test "events: one oom event per OOM kill, however the kernel's notifications come" {
	[[ $(cg_version memory) != none ]] || skip "no memory controller"
	resources '{"memory": {"limit": 33554432}}'
	# Two hogs one after the other in a container that lives on.
	set_cmd 'while [ ! -e /dev/shm/go ]; do sleep 0.1; done
		for i in 1 2; do dd if=/dev/zero of=/dev/null bs=100M count=1 2>/dev/null; sleep 1.5; done
		echo hogs-ended; sleep 1000'
	KEEP_ARGS=1 create_running
	events_bg --interval 100s
	wait_events_watching
	touch "/proc/$(ct_pid)/root/dev/shm/go"
	wait_output "$CID" hogs-ended 900
	local kills tries=20
	while ((tries-- > 0)); do
		kills=$(runtime events --stats "$CID" | jq '.data.memory.event_count.oom_kill // 0')
		((kills >= 2)) && break
		sleep 0.1
	done
	((kills >= 2)) || fail "fewer than two OOM kills counted: $kills"
	local tries=50
	while (($(grep -c '"type":"oom"' "$EVENTS_OUT") < kills)) && ((tries-- > 0)); do sleep 0.1; done
	kill "$EVENTS_PID"
	wait_events_exit
	[[ $(grep -c '"type":"oom"' "$EVENTS_OUT") -eq $kills ]] ||
		fail "$kills OOM kills, events said: $(cat "$EVENTS_OUT")"
}

@test "events --stats: the OOM kill count after the fact" {
	[[ $(cg_version memory) != none ]] || skip "no memory controller"
	resources '{"memory": {"limit": 33554432}}'
	# The hog is a child: the container lives on after the kill.
	set_cmd 'sh -c "x=\$(head -c 100000000 /dev/zero | tr \"\\0\" a)"; echo hog-ended; sleep 1000'
	KEEP_ARGS=1 create_running
	# The kernel counts the kill before the victim dies; a loaded host may
	# take a while to get there.
	wait_output "$CID" hog-ended 600
	local tries=20
	while ((tries-- > 0)); do
		run runtime events --stats "$CID"
		[[ $(jq '.data.memory.event_count.oom_kill // 0' <<<"$output") -ge 1 ]] && break
		sleep 0.1
	done
	case $(cg_version memory) in
	v1) [[ $(jq '.data.memory.usage.failcnt' <<<"$output") -gt 0 ]] || fail "failcnt: $output" ;;
	v2) [[ $(jq '.data.memory.event_count.max // 0' <<<"$output") -gt 0 ]] || fail "max events: $output" ;;
	esac
	[[ $(jq '.data.memory.event_count.oom_kill // 0' <<<"$output") -ge 1 ]] ||
		fail "no oom_kill count: $(jq -c .data.memory <<<"$output" | cut -c1-300)"
}

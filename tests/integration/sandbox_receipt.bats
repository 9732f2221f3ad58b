#!/usr/bin/env bats
# `sandrun sandbox`: the command line, the exit statuses, the output and the
# receipt (issue 12: "Command", "Output", "Exit status", "The receipt").

load sandbox_helpers

# --- the receipt -----------------------------------------------------------------

@test "sandbox receipt: a plain run validates against the schema and says what ran" {
	sb_run -- /bin/sh -c 'echo out; echo err >&2'
	assert_success
	[[ $output == out ]] || fail "stdout '$output', expected 'out' (streamed through)"
	[[ $stderr == err ]] || fail "stderr '$stderr', expected 'err' (streamed through)"
	assert_rf '.command | @json' '["/bin/sh","-c","echo out; echo err >&2"]'
	assert_rf .stdout out$'\n'
	assert_rf .stderr err$'\n'
	assert_rf .exit_code 0
	assert_rf .signal null
	assert_rf .session null
	assert_rf .interrupted false
	assert_rf '[.stdout_truncated, .stderr_truncated] | @json' '[false,false]'
	assert_no_limit
	assert_rf '.network | @json' '[]'
	assert_rf .policy.network none
	assert_rf '.files | @json' '[]'
	# the sandrun version is the binary's own
	assert_rf '.sandrun | length > 0' true
	"$RUNTIME" --version | grep -qF -- "$(rf .sandrun)" ||
		fail "receipt sandrun '$(rf .sandrun)' is not in '$("$RUNTIME" --version)'"
	[[ -n $(rf .message) ]]
	sb_assert_no_leftovers
}

@test "sandbox receipt: the policy lists the defaults of the issue (10 s, 256M, 64 pids, 1M output, 256M disk)" {
	sb_run -- /bin/true
	assert_success
	assert_rf .policy.limits.timeout_ms 10000
	assert_rf .policy.limits.memory_bytes $((256 << 20))
	assert_rf .policy.limits.pids 64
	assert_rf .policy.limits.output_bytes $((1 << 20))
	assert_rf .policy.limits.disk_bytes $((256 << 20))
	assert_rf '.policy.seccomp | length > 0' true
	assert_rf '.policy.mounts[] | select(.destination == "/") | .mode' ro
	# the mounts that applied: /work and the host's system directories
	assert_rf 'any(.policy.mounts[]; .destination == "/work")' true
	assert_rf 'any(.policy.mounts[]; .destination == "/usr" and .mode == "ro")' true
}

@test "sandbox receipt: the limits given on the command line are the ones in the policy" {
	sb_run --timeout "$(sb_secs 7)" --memory 100M --pids 33 --output-limit 4K --disk 20M \
		--tmp-size 9M --cpus 0.5 --cpu-time "$(sb_secs 3)" --file-size 1M --open-files 99 -- /bin/true
	assert_success
	assert_rf .policy.limits.timeout_ms 7000
	assert_rf .policy.limits.memory_bytes $((100 << 20))
	assert_rf .policy.limits.pids 33
	assert_rf .policy.limits.output_bytes 4096
	assert_rf .policy.limits.disk_bytes $((20 << 20))
	assert_rf .policy.limits.tmp_bytes $((9 << 20))
	assert_rf .policy.limits.cpus 0.5
	assert_rf .policy.limits.cpu_time_s 3
	assert_rf .policy.limits.file_size_bytes $((1 << 20))
	assert_rf .policy.limits.open_files 99
}

@test "sandbox receipt: timing, cpu, memory and pids are measured" {
	sb_run -- "$PY" -c '
import os, time
b = bytearray(40 << 20)            # 40 MiB, touched
for i in range(0, len(b), 4096): b[i] = 1
end = time.process_time() + 0.3    # 300 ms of CPU
while time.process_time() < end: pass
pids = [os.fork() for _ in range(3)]
for p in pids:
    if p == 0: time.sleep(0.2); os._exit(0)
for p in pids: os.waitpid(p, 0)
'
	assert_success
	assert_rf '.duration_ms >= 300' true
	assert_rf '.cpu_ms.user + .cpu_ms.system >= 250' true
	assert_rf '.peak_memory_bytes >= 40 * 1048576' true
	assert_rf '.pids_peak >= 4' true
	# finished_at - started_at is the duration, give or take a second
	local s f
	s=$(date -d "$(rf .started_at)" +%s)
	f=$(date -d "$(rf .finished_at)" +%s)
	((f >= s && f - s <= $(rf '.duration_ms / 1000 | floor') + 1)) ||
		fail "started_at/finished_at $(rf .started_at)/$(rf .finished_at) do not match duration_ms $(rf .duration_ms)"
	((s >= $(date +%s) - 120)) || fail "started_at $(rf .started_at) is not now"
}

@test "sandbox receipt: files created, changed and deleted under a --workdir are listed with size and sha256" {
	local w
	w=$(sb_workdir)
	echo old >"$w/changed.txt"
	echo doomed >"$w/deleted.txt"
	echo same >"$w/untouched.txt"
	chown -R "$SB_OWNER:$SB_OWNER" "$w"
	sb_run --workdir "$w" -- /bin/sh -c '
		echo new >> changed.txt && rm deleted.txt && mkdir -p sub/dir &&
		head -c 100000 /dev/urandom > sub/dir/data.bin && printf x > /work/created.txt'
	assert_success
	assert_file_entry created.txt created "$w/created.txt"
	assert_file_entry sub/dir/data.bin created "$w/sub/dir/data.bin"
	assert_file_entry changed.txt changed "$w/changed.txt"
	assert_file_entry deleted.txt deleted
	assert_rf 'any(.files[]; .path == "untouched.txt")' false
	assert_rf '[.files[] | select(.change == "deleted") | .size, .sha256] | @json' '[null,null]'
	# a file that exists neither before nor after the run is no change
	sb_run --workdir "$w" -- /bin/sh -c 'echo tmp > t && rm t'
	assert_success
	assert_rf '.files | map(select(.path == "t")) | length' 0
	sb_assert_no_leftovers
}

@test "sandbox receipt: files of the ephemeral /work are listed too" {
	sb_run -- /bin/sh -c 'cd /work && printf hello > a.txt && mkdir d && printf bye > d/b.txt'
	assert_success
	assert_rf '[.files[] | [.path, .change, .size, .sha256]] | sort | @json' \
		"$(jq -cn --arg a "$(printf hello | sha256sum | cut -c1-64)" --arg b "$(printf bye | sha256sum | cut -c1-64)" \
			'[["a.txt","created",5,$a],["d/b.txt","created",3,$b]]')"
}

@test "sandbox receipt: output that is not UTF-8 is escaped, never dropped" {
	sb_run -- /bin/sh -c 'printf "a\377b\300\n"; printf "\342\202" >&2'
	assert_success
	# every byte is still there: the valid ones as they are, the others
	# escaped in a form that keeps their value (\xff, \\u00ff, ...)
	rf .stdout | grep -q '^a.*[fF][fF].*b.*[cC]0' || fail "stdout in the receipt: '$(rf .stdout)'"
	rf .stderr | grep -qi 'e2.*82' || fail "stderr in the receipt: '$(rf .stderr)'"
	# and the caller got the raw bytes
	[[ $(printf '%s' "$output" | od -An -tx1 | tr -d ' \n') == 61ff62c0 ]] ||
		fail "stdout passed through is not the raw bytes: $(printf '%s' "$output" | od -An -tx1)"
}

@test "sandbox receipt: output streams through as it comes, not at the end" {
	local w
	w=$(sb_workdir)
	# the command goes on only once the caller has seen its first line
	sb_start --workdir "$w" --receipt "$RECEIPT" --timeout "$(sb_secs 60)" -- /bin/sh -c \
		'echo first; echo first-err >&2; while [ ! -e go ]; do sleep 0.05; done; echo second'
	local deadline=$((SECONDS + 30))
	until grep -qx first "$BATS_TEST_TMPDIR/bg.out" && grep -qx first-err "$BATS_TEST_TMPDIR/bg.err"; do
		((SECONDS < deadline)) || fail "the first lines never reached the caller: '$(cat "$BATS_TEST_TMPDIR/bg.out")'"
		sleep 0.05
	done
	touch "$w/go"
	sb_wait_exit "$SB_PID"
	assert_success
	[[ $(cat "$BATS_TEST_TMPDIR/bg.out") == $'first\nsecond' ]]
	sb_check_receipt "$RECEIPT"
	assert_rf .stdout $'first\nsecond\n'
	sb_assert_no_leftovers
}

@test "sandbox receipt: --receipt - prints the receipt on stdout, the output only in the receipt" {
	run --separate-stderr sb --receipt - -- /bin/sh -c 'echo to-stdout; echo to-stderr >&2'
	assert_success
	printf '%s' "$output" >"$RECEIPT"
	sb_check_receipt "$RECEIPT"
	assert_rf .stdout to-stdout$'\n'
	assert_rf .stderr to-stderr$'\n'
	[[ $stderr != *to-stdout* ]] || fail "the command's stdout leaked onto stderr: $stderr"
}

@test "sandbox receipt: --quiet passes no output through but keeps it in the receipt" {
	sb_run --quiet -- /bin/sh -c 'echo hidden; echo hidden2 >&2'
	assert_success
	[[ -z $output && -z $stderr ]] || fail "--quiet printed: '$output' '$stderr'"
	assert_rf .stdout hidden$'\n'
	assert_rf .stderr hidden2$'\n'
}

@test "sandbox receipt: --audit-log appends one JSON line per execution, without the output bodies" {
	local log=$BATS_TEST_TMPDIR/audit.jsonl
	echo '{"earlier":"line"}' >"$log"
	sb_run --audit-log "$log" -- /bin/echo first
	assert_success
	sb_run --audit-log "$log" -- /bin/sh -c 'echo second; exit 3'
	assert_failure 3
	[[ $(wc -l <"$log") -eq 3 && $(head -1 "$log") == '{"earlier":"line"}' ]] ||
		fail "audit log is not the earlier line plus two: $(cat "$log")"
	tail -n 2 "$log" >"$BATS_TEST_TMPDIR/two.jsonl"
	run "$PY" "$SB_VALIDATE" --audit "$BATS_TEST_TMPDIR/two.jsonl"
	assert_success
	[[ $(sed -n 2p "$log" | jq -r '.command[1]') == first ]]
	[[ $(sed -n 3p "$log" | jq -r .exit_code) == 3 ]]
	# the same execution as its receipt
	[[ $(sed -n 3p "$log" | jq -r .id) == $(rf .id) ]]
}

@test "sandbox receipt: --audit-log alone (no --receipt) writes the line, and nothing on stdout but the command's" {
	local log=$BATS_TEST_TMPDIR/audit.jsonl
	run --separate-stderr sb --audit-log "$log" -- /bin/echo only
	assert_success
	assert_output_equals only
	run "$PY" "$SB_VALIDATE" --audit "$log"
	assert_success
	jq -r .id "$log" >>"$SB_IDS"
	sb_assert_no_leftovers
}

@test "sandbox receipt: the ids of two runs differ" {
	sb_run -- /bin/true
	local first
	first=$(rf .id)
	sb_run -- /bin/true
	[[ $(rf .id) != "$first" ]] || fail "two runs share the id $first"
}

# --- exit statuses --------------------------------------------------------------------

@test "sandbox exit: the command's own status" {
	sb_run -- /bin/sh -c 'exit 42'
	assert_failure 42
	assert_rf .exit_code 42
	assert_rf .signal null
	assert_no_limit
}

@test "sandbox exit: 128+N when signal N ended the command, exit_code null, signal named" {
	# a real fault: the command may be the first process of its pid
	# namespace, which signals it sends itself do not end
	sb_run -- python3 -c 'import ctypes; ctypes.string_at(0)'
	assert_failure $((128 + 11))
	assert_rf .exit_code null
	assert_rf .signal SIGSEGV
	assert_no_limit
	rf .message | grep -q SEGV || fail "message does not name the signal: $(rf .message)"
}

@test "sandbox exit: 125 and one line for a bad option, no receipt, nothing left" {
	local bad
	for bad in "--memory 12Q" "--timeout soon" "--pids -3" "--no-such-option" "--net host" "--env NOEQUALS" \
		"--ro-bind nocolon" "--output-limit 1X"; do
		# shellcheck disable=SC2086
		run --separate-stderr sb --receipt "$RECEIPT" $bad -- /bin/true
		[[ $status -eq 125 ]] || fail "'$bad': status $status, expected 125; stderr: $stderr"
		assert_one_error_line "${bad%% *}"
		[[ ! -e $RECEIPT ]] || fail "'$bad': a receipt was written"
	done
	sb_assert_no_leftovers
}

@test "sandbox exit: 125 and one line when the -- or the command is missing" {
	run --separate-stderr sb /bin/true
	assert_failure 125
	assert_one_error_line --
	run --separate-stderr sb --
	assert_failure 125
	assert_one_error_line command
}

@test "sandbox exit: 125 and one line for a missing --rootfs, --workdir or --stdin" {
	run --separate-stderr sb --rootfs "$BATS_TEST_TMPDIR/nope" -- /bin/true
	assert_failure 125
	assert_one_error_line nope
	run --separate-stderr sb --workdir "$BATS_TEST_TMPDIR/nowork" -- /bin/true
	assert_failure 125
	assert_one_error_line nowork
	run --separate-stderr sb --stdin "$BATS_TEST_TMPDIR/noinput" -- /bin/true
	assert_failure 125
	assert_one_error_line noinput
	sb_assert_no_leftovers
}

@test "sandbox --help: documents every option of the issue, each limit with its default" {
	run --separate-stderr "$RUNTIME" sandbox --help
	assert_success
	local opt
	for opt in --rootfs --workdir --ro-bind --collect --env --stdin --timeout --memory --cpus \
		--cpu-time --pids --output-limit --file-size --disk --tmp-size --open-files --net \
		--quiet --receipt --audit-log; do
		grep -qe "$opt\b" <<<"$output" || fail "--help does not document $opt"
	done
	# the safe defaults of the issue, on each limit's line
	grep -E -- '--timeout' <<<"$output" | grep -qE '10 ?s' || fail "--timeout's default (10 s) not shown"
	grep -E -- '--memory' <<<"$output" | grep -qE '256 ?M' || fail "--memory's default (256M) not shown"
	grep -E -- '--pids' <<<"$output" | grep -qE '\b64\b' || fail "--pids's default (64) not shown"
	grep -E -- '--output-limit' <<<"$output" | grep -qE '1 ?M' || fail "--output-limit's default (1M) not shown"
	grep -E -- '--disk' <<<"$output" | grep -qE '256 ?M' || fail "--disk's default (256M) not shown"
	for opt in --cpus --cpu-time --file-size --tmp-size --open-files --net; do
		grep -E -- "$opt\b" <<<"$output" | grep -qi default ||
			fail "--help shows no default for $opt: $(grep -E -- "$opt\b" <<<"$output")"
	done
}

# --- environment and stdin ---------------------------------------------------------------

@test "sandbox env: only --env and PATH, HOME=/work, LANG=C.UTF-8, TMPDIR=/tmp; nothing of the caller's" {
	SANDBOX_CALLER_SECRET=hunter2 sb_run --env FOO=bar --env 'WITH=an = sign' -- /usr/bin/env
	assert_success
	local keys
	keys=$(rf .stdout | grep . | cut -d= -f1 | sort | tr '\n' ' ')
	[[ $keys == "FOO HOME LANG PATH SANDRUN_TEST_MARK TMPDIR WITH " ]] ||
		fail "environment keys: '$keys'"
	rf .stdout | grep -qxF 'HOME=/work'
	rf .stdout | grep -qxF 'LANG=C.UTF-8'
	rf .stdout | grep -qxF 'TMPDIR=/tmp'
	rf .stdout | grep -qxF 'FOO=bar'
	rf .stdout | grep -qxF 'WITH=an = sign'
	! rf .stdout | grep -q hunter2
	# the cwd is /work
	sb_run -- /bin/pwd
	assert_rf .stdout /work$'\n'
}

@test "sandbox stdin: passed through, and --stdin FILE reads it from a file" {
	run --separate-stderr sb --receipt "$RECEIPT" -- /usr/bin/wc -c < <(head -c 12345 /dev/zero)
	assert_success
	sb_check_receipt "$RECEIPT"
	assert_rf '.stdout | tonumber' 12345
	printf 'line one\nline two\n' >"$BATS_TEST_TMPDIR/in.txt"
	sb_run --stdin "$BATS_TEST_TMPDIR/in.txt" -- /usr/bin/tail -n1
	assert_success
	assert_rf .stdout $'line two\n'
}

# --- --collect ----------------------------------------------------------------------------------

@test "sandbox --collect: copies the files the run created or changed out of /work, only those" {
	local c=$BATS_TEST_TMPDIR/collected
	sb_run --collect "$c" -- /bin/sh -c 'mkdir -p out && echo result > out/r.txt && echo log > run.log'
	assert_success
	[[ $(cat "$c/out/r.txt") == result && $(cat "$c/run.log") == log ]] ||
		fail "collected: $(find "$c" 2>&1)"
	assert_file_entry out/r.txt created "$c/out/r.txt"
	# with a workdir: the untouched input is not copied
	local w
	w=$(sb_workdir)
	echo input >"$w/input.csv"
	sb_run --workdir "$w" --collect "$BATS_TEST_TMPDIR/c2" -- /bin/sh -c 'wc -l < input.csv > count'
	assert_success
	[[ -f $BATS_TEST_TMPDIR/c2/count && ! -e $BATS_TEST_TMPDIR/c2/input.csv ]] ||
		fail "collected: $(find "$BATS_TEST_TMPDIR/c2" 2>&1)"
	sb_assert_no_leftovers
}

@test "sandbox --workdir: files written belong to the directory's owner on the host, never to root" {
	local w
	w=$(sb_workdir)
	sb_run --workdir "$w" -- /bin/sh -c 'mkdir d && echo x > d/f && echo y > top && id -u'
	assert_success
	local f
	for f in "$w/d" "$w/d/f" "$w/top"; do
		[[ $(stat -c %u:%g "$f") == "$SB_OWNER:$SB_OWNER" ]] ||
			fail "$f belongs to $(stat -c %u:%g "$f"), expected $SB_OWNER:$SB_OWNER"
	done
	# the process is not root inside either
	[[ $(rf .stdout) != 0$'\n' ]] || fail "the sandboxed process runs as uid 0"
}

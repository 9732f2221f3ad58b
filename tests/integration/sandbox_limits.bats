#!/usr/bin/env bats
# `sandrun sandbox`: each limit holds and is named correctly in
# limit_exceeded, limits_hit and message (issue 12: "Limits"; the hostile
# suite has the fork bomb, memory bomb, disk and /tmp fills and the huge
# line).

load sandbox_helpers

@test "sandbox limit timeout: the wall clock ends the run, in the issue's words" {
	sb_run --timeout "$(sb_secs 1)" -- /bin/sleep 100
	assert_failure 137
	assert_limit timeout
	assert_rf .signal SIGKILL
	assert_rf .message "the execution exceeded its 1 s wall-clock limit and was stopped"
	assert_rf '.duration_ms >= 1000' true
	sb_assert_no_leftovers
}

@test "sandbox limit timeout: milliseconds, and a command that ends in time hits nothing" {
	sb_run --timeout 800ms -- /bin/sleep 100
	assert_failure
	assert_limit timeout
	assert_rf .policy.limits.timeout_ms 800
	sb_run --timeout "$(sb_secs 20)" -- /bin/sleep 0.1
	assert_success
	assert_no_limit
}

@test "sandbox limit memory: the issue's sentence, and the cgroup's limit is the policy's, without swap" {
	# small tmpfs room (the cgroup's limit includes it) and a timeout a slow
	# guest cannot reach: only the memory limit can end this run
	sb_run --memory 64M --tmp-size 8M --disk 8M --timeout "$(sb_secs 120)" -- python3 -c 'b = [bytearray(8 << 20) for _ in range(100)]'
	assert_failure 137
	assert_limit memory
	assert_rf .message "python3 was killed by the kernel when the sandbox used its 64 MiB memory limit"
	# the cgroup of a running sandbox
	local w
	w=$(sb_workdir)
	sb_start --workdir "$w" --memory 96M --cpus 0.5 --pids 40 --receipt "$RECEIPT" --timeout "$(sb_secs 300)" -- /bin/sh -c 'touch ready; while [ ! -e stop ]; do sleep 0.05; done'
	sb_wait_for "$w/ready"
	sb_record_running
	local mem='' swap='' cpu='' pids='' d
	while read -r d; do
		[[ -f $d/memory.max ]] && mem=$(cat "$d/memory.max") && swap=$(cat "$d/memory.swap.max" 2>/dev/null)
		[[ -f $d/memory.limit_in_bytes ]] && mem=$(cat "$d/memory.limit_in_bytes") &&
			swap=$(($(cat "$d/memory.memsw.limit_in_bytes" 2>/dev/null || echo "$mem") - mem))
		[[ -f $d/cpu.max ]] && cpu=$(awk '{ printf "%.2f", $1 / $2 }' "$d/cpu.max")
		[[ -f $d/cpu.cfs_quota_us ]] && cpu=$(awk -v q="$(cat "$d/cpu.cfs_quota_us")" '{ printf "%.2f", q / $1 }' "$d/cpu.cfs_period_us")
		[[ -f $d/pids.max ]] && pids=$(cat "$d/pids.max")
	done < <(grep -v '/$' "$SB_CGROUPS")
	touch "$w/stop"
	sb_wait_exit "$SB_PID"
	assert_success
	sb_check_receipt "$RECEIPT"
	[[ -n $mem ]] || fail "no memory cgroup found among: $(cat "$SB_CGROUPS")"
	assert_rf .policy.limits.memory_bytes $((96 << 20))
	((mem == 96 << 20)) || fail "the cgroup's memory limit $mem is not --memory 96M"
	[[ $swap == 0 ]] || fail "swap allowed: '$swap'"
	[[ $cpu == 0.50 ]] || fail "cpu bandwidth $cpu, expected 0.50 for --cpus 0.5"
	[[ $pids == 40 ]] || fail "pids.max $pids, expected 40"
	sb_assert_no_leftovers
}

@test "sandbox limit cpu: --cpu-time ends a busy loop, named cpu" {
	sb_run --cpu-time "$(sb_secs 1)" --timeout "$(sb_secs 30)" -- python3 -c 'while True: pass'
	assert_failure
	assert_limit cpu
	rf .message | grep -qi 'cpu' || fail "$(rf .message)"
	assert_rf '.cpu_ms.user + .cpu_ms.system >= 900' true
	sb_assert_no_leftovers
}

@test "sandbox limit pids: a failed fork is a limit hit even when the run goes on" {
	sb_run --pids 10 -- python3 -c '
import os, time
kids = []
try:
    while True:
        pid = os.fork()
        if pid == 0: time.sleep(30); os._exit(0)
        kids.append(pid)
except OSError:
    print("forks refused after", len(kids))
for k in kids: os.kill(k, 9); os.waitpid(k, 0)
'
	assert_success
	assert_limit_hit pids
	assert_rf .limit_exceeded null
	assert_rf '.pids_peak <= 10' true
	rf .stdout | grep -q 'forks refused after [0-9]' || fail "$(rf .stdout)"
}

@test "sandbox limit output: stderr past the limit ends the run, stdout is not truncated" {
	sb_run --output-limit 64K -- python3 -c '
import sys
print("fine")
sys.stdout.flush()
for _ in range(1000): sys.stderr.write("e" * 1024); sys.stderr.flush()
print("after", flush=True)
'
	assert_failure
	assert_limit output
	assert_rf '[.stdout_truncated, .stderr_truncated] | @json' '[false,true]'
	assert_rf '.stderr | length' 65536
	rf .message | grep -q stderr || fail "message does not say which stream: $(rf .message)"
	[[ $(rf .stdout) != *after* ]] || fail "the run went on"
	sb_assert_no_leftovers
}

@test "sandbox limit output: exactly the limit is not past it" {
	sb_run --output-limit 64K -- python3 -c 'import sys; sys.stdout.write("o" * 65536)'
	assert_success
	assert_no_limit
	assert_rf '.stdout | length' 65536
	assert_rf .stdout_truncated false
}

@test "sandbox limit file_size: a file past --file-size cannot be written, named file_size" {
	sb_run --file-size 1M -- /bin/sh -c 'dd if=/dev/zero of=/work/big bs=64K count=100 2>&1; exit $?'
	assert_failure
	assert_limit file_size
	local size
	size=$(rf '.files[] | select(.path == "big") | .size')
	((size <= 1 << 20)) || fail "big is $size bytes, past --file-size 1M"
	sb_assert_no_leftovers
}

@test "sandbox limit open_files: --open-files caps the descriptors" {
	sb_run --open-files 32 -- python3 -c '
import os, resource
print(resource.getrlimit(resource.RLIMIT_NOFILE))
fds = []
try:
    while True: fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    print("opened", len(fds), e.strerror)
'
	assert_success
	rf .stdout | grep -qx '(32, 32)' || fail "RLIMIT_NOFILE: $(rf .stdout)"
	local n
	n=$(rf .stdout | sed -n 's/^opened \([0-9]*\) .*/\1/p')
	((n > 0 && n <= 32)) || fail "opened $n descriptors with --open-files 32"
	assert_rf .policy.limits.open_files 32
}

@test "sandbox limits: no limit, no mention: a clean run's message is about its exit" {
	sb_run -- /bin/sh -c 'exit 0'
	assert_success
	assert_no_limit
	rf .message | grep -qiE 'exit|status|success' || fail "$(rf .message)"
}

#!/usr/bin/env bats
# update: runc's resource flags and -r/--resources (a linux.resources
# object, "-" for stdin).  Every change reaches the cgroup and is kept, so
# that later updates build on it (runc merges into the saved config too).

load helpers
load cgroups_helpers

# saved_resources: linux.resources as sandrun keeps them (its state dir);
# empty for a runtime that keeps them elsewhere.
saved_resources() {
	[[ -f $ROOT/$CID/config.json ]] || return 0
	jq -c '.linux.resources' "$ROOT/$CID/config.json"
}

# assert_saved JQ-EXPR: the saved resources satisfy JQ-EXPR (when known).
assert_saved() {
	local r
	r=$(saved_resources)
	[[ -z $r ]] && return 0
	jq -e "$1" <<<"$r" >/dev/null || fail "saved resources: $r (expected $1)"
}

memory_limit() {
	case $(cg_version memory) in
	v1) cg_file memory memory.limit_in_bytes ;;
	v2) cg_file memory memory.max ;;
	esac
}

requires_memory() {
	[[ $(cg_version memory) != none ]] || skip "no memory controller"
}

# --- memory ---------------------------------------------------------------------

@test "update --memory: sizes with units as runc takes them" {
	requires_memory
	create_running
	local v want
	for v in 64M:67108864 64m:67108864 64MiB:67108864 65536k:67108864 "48 MB:50331648" \
		0.5g:536870912 100000000:100000000; do
		want=${v##*:}
		runtime update --memory "${v%:*}" "$CID"
		[[ $(memory_limit) == "$((want / 4096 * 4096))" ]] || fail "--memory ${v%:*}: $(memory_limit), wanted $want"
	done
	assert_saved '.memory.limit == 100000000'
}

@test "update --memory -1: no limit, and no swap limit either (runc)" {
	requires_memory
	run_with_resources '{"memory": {"limit": 67108864, "swap": 134217728}}'
	runtime update --memory -1 "$CID"
	case $(cg_version memory) in
	v1) [[ $(memory_limit) -gt $((1 << 60)) ]] || fail "still limited: $(memory_limit)" ;;
	v2) [[ $(memory_limit) == max ]] || fail "still limited: $(memory_limit)" ;;
	esac
	assert_saved '.memory.limit == -1 and .memory.swap == -1'
}

@test "update --memory-reservation" {
	requires_memory
	create_running
	runtime update --memory 128M --memory-reservation 32M "$CID"
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.soft_limit_in_bytes 33554432 ;;
	v2) assert_cg_file memory memory.low 33554432 ;;
	esac
}

@test "update --memory-swap, then a later update sees the saved memory limit" {
	requires_memory
	case $(cg_version memory) in
	v1) requires_cg_file memory memory.memsw.limit_in_bytes ;;
	v2) requires_cg_file memory memory.swap.max ;;
	esac
	create_running
	runtime update --memory 64M --memory-swap 128M "$CID"
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.memsw.limit_in_bytes 134217728 ;;
	v2) assert_cg_file memory memory.swap.max 67108864 ;;
	esac
	# The swap alone: on v2 swap.max = swap - the limit saved before.
	runtime update --memory-swap 96M "$CID"
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.memsw.limit_in_bytes 100663296 ;;
	v2) assert_cg_file memory memory.swap.max 33554432 ;;
	esac
	[[ $(memory_limit) == 67108864 ]] || fail "the limit changed: $(memory_limit)"
}

@test "update: raising the limit above the old memory+swap works (v1 ordering)" {
	requires_cgroup_v1 memory
	requires_cg_file memory memory.memsw.limit_in_bytes
	run_with_resources '{"memory": {"limit": 33554432, "swap": 67108864}}'
	runtime update --memory 256M --memory-swap 512M "$CID"
	assert_cg_file memory memory.limit_in_bytes 268435456
	assert_cg_file memory memory.memsw.limit_in_bytes 536870912
	runtime update --memory 16M --memory-swap 32M "$CID"
	assert_cg_file memory memory.limit_in_bytes 16777216
	assert_cg_file memory memory.memsw.limit_in_bytes 33554432
}

@test "update --kernel-memory is accepted and ignored; --kernel-memory-tcp reaches kmem.tcp (v1)" {
	requires_memory
	create_running
	run runtime update --kernel-memory 64M --kernel-memory-tcp 16M "$CID"
	assert_success
	if [[ $(cg_version memory) == v1 ]] && kernel_has memory memory.kmem.tcp.limit_in_bytes; then
		assert_cg_file memory memory.kmem.tcp.limit_in_bytes 16777216
	fi
}

# --- cpu ----------------------------------------------------------------------------

@test "update --cpu-share" {
	[[ $(cg_version cpu) != none ]] || skip "no cpu controller"
	create_running
	runtime update --cpu-share 512 "$CID"
	case $(cg_version cpu) in
	v1) assert_cg_file cpu cpu.shares 512 ;;
	v2) assert_cg_file cpu cpu.weight 59 ;; # runc's conversion of 512
	esac
	assert_saved '.cpu.shares == 512'
}

@test "update --cpu-period and --cpu-quota; a later quota keeps the period" {
	[[ $(cg_version cpu) != none ]] || skip "no cpu controller"
	create_running
	runtime update --cpu-period 200000 --cpu-quota 50000 "$CID"
	case $(cg_version cpu) in
	v1)
		assert_cg_file cpu cpu.cfs_period_us 200000
		assert_cg_file cpu cpu.cfs_quota_us 50000
		;;
	v2) assert_cg_file cpu cpu.max "50000 200000" ;;
	esac
	runtime update --cpu-quota 80000 "$CID"
	case $(cg_version cpu) in
	v1) assert_cg_file cpu cpu.cfs_period_us 200000 ;;
	v2) assert_cg_file cpu cpu.max "80000 200000" ;;
	esac
	runtime update --cpu-quota -1 "$CID"
	case $(cg_version cpu) in
	v1) assert_cg_file cpu cpu.cfs_quota_us -1 ;;
	v2) assert_cg_file cpu cpu.max "max 200000" ;;
	esac
}

@test "update --cpu-burst" {
	case $(cg_version cpu) in
	v1) requires_cg_file cpu cpu.cfs_burst_us ;;
	v2) requires_cg_file cpu cpu.max.burst ;;
	*) skip "no cpu controller" ;;
	esac
	create_running
	runtime update --cpu-quota 50000 --cpu-period 100000 --cpu-burst 30000 "$CID"
	case $(cg_version cpu) in
	v1) assert_cg_file cpu cpu.cfs_burst_us 30000 ;;
	v2) assert_cg_file cpu cpu.max.burst 30000 ;;
	esac
}

@test "update --cpu-rt-period and --cpu-rt-runtime (v1); refused on v2" {
	[[ $(cg_version cpu) != none ]] || skip "no cpu controller"
	create_running
	if [[ $(cg_version cpu) == v2 ]]; then
		run --separate-stderr runtime update --cpu-rt-period 1000000 --cpu-rt-runtime 10000 "$CID"
		assert_failure
		assert_one_error_line realtime
		return
	fi
	requires_cg_file cpu cpu.rt_runtime_us
	runtime update --cpu-rt-period 1000000 --cpu-rt-runtime 20000 "$CID"
	assert_cg_file cpu cpu.rt_period_us 1000000
	assert_cg_file cpu cpu.rt_runtime_us 20000
}

@test "update: a failed change leaves the cgroup and the saved config as they were" {
	requires_memory
	[[ $(cg_version cpu) != none ]] || skip "no cpu controller"
	run_with_resources '{"memory": {"limit": 67108864}}'
	local before
	before=$(saved_resources)
	# The memory limit is written first, then the kernel refuses a CFS
	# period below 1 ms: the limit must be back as it was.
	run --separate-stderr runtime update --memory 32M --cpu-period 500 --cpu-quota 1000 "$CID"
	assert_failure
	assert_one_error_line cpu
	[[ $(memory_limit) == 67108864 ]] || fail "memory limit changed: $(memory_limit)"
	[[ $(saved_resources) == "$before" ]] || fail "saved config changed: $(saved_resources)"
}

@test "update --cpuset-cpus and --cpuset-mems" {
	[[ $(cg_version cpuset) != none ]] || skip "no cpuset controller"
	create_running
	runtime update --cpuset-cpus 0 --cpuset-mems 0 "$CID"
	assert_cg_file cpuset cpuset.cpus 0
	assert_cg_file cpuset cpuset.mems 0
	assert_saved '.cpu.cpus == "0" and .cpu.mems == "0"'
}

@test "update --cpu-idle" {
	requires_cg_file cpu cpu.idle
	create_running
	runtime update --cpu-idle 1 "$CID"
	assert_cg_file cpu cpu.idle 1
	runtime update --cpu-idle 0 "$CID"
	assert_cg_file cpu cpu.idle 0
}

# --- pids, blkio, RDT -------------------------------------------------------------------

@test "update --pids-limit" {
	[[ $(cg_version pids) != none ]] || skip "no pids controller"
	create_running
	runtime update --pids-limit 20 "$CID"
	assert_cg_file pids pids.max 20
	runtime update --pids-limit -1 "$CID"
	assert_cg_file pids pids.max max
}

@test "update --blkio-weight" {
	local f=
	case $(cg_version blkio)/$(cg_version io) in
	v1/*) for f in blkio.weight blkio.bfq.weight; do kernel_has blkio "$f" && break; f=; done ;;
	*/v2) for f in io.bfq.weight io.weight; do kernel_has io "$f" && break; f=; done ;;
	esac
	[[ -n $f ]] || skip "no blkio/io weight file in this kernel"
	create_running
	runtime update --blkio-weight 300 "$CID"
	case $f in
	io.weight) run cg_file io io.weight ;;
	io.bfq.weight) run cg_file io io.bfq.weight ;;
	*) run cg_file blkio "$f" ;;
	esac
	case $f in
	io.weight) assert_output_contains "default 2930" ;; # 1 + (300-10)*9999/990
	io.bfq.weight) assert_output_contains "default 300" ;;
	*) assert_output_contains 300 ;;
	esac
}

@test "update --l3-cache-schema / --mem-bw-schema without Intel RDT: runc's errors" {
	[[ ! -d /sys/fs/resctrl/info ]] || skip "this host has resctrl"
	create_running
	run --separate-stderr runtime update --l3-cache-schema "L3:0=f" "$CID"
	assert_failure
	assert_one_error_line "l3 cache schema is not enabled"
	run --separate-stderr runtime update --mem-bw-schema "MB:0=50" "$CID"
	assert_failure
	assert_one_error_line "memory bandwidth schema is not enabled"
}

# --- -r / --resources -------------------------------------------------------------------

@test "update -r FILE: memory, cpu and pids at once" {
	requires_memory
	create_running
	cat >"$BATS_TEST_TMPDIR/r.json" <<-'EOF'
		{"memory": {"limit": 50331648}, "cpu": {"shares": 256}, "pids": {"limit": 33}}
	EOF
	runtime update -r "$BATS_TEST_TMPDIR/r.json" "$CID"
	[[ $(memory_limit) == 50331648 ]]
	assert_cg_file pids pids.max 33
	[[ $(cg_version cpu) != v1 ]] || assert_cg_file cpu cpu.shares 256
	assert_saved '.memory.limit == 50331648 and .cpu.shares == 256 and .pids.limit == 33'
}

@test "update -r -: from stdin; the other flags are ignored (runc)" {
	[[ $(cg_version pids) != none ]] || skip "no pids controller"
	create_running
	runtime update -r - --pids-limit 99 "$CID" <<<'{"pids": {"limit": 44}}'
	assert_cg_file pids pids.max 44
}

@test "update --resources=FILE (long form)" {
	[[ $(cg_version pids) != none ]] || skip "no pids controller"
	create_running
	echo '{"pids": {"limit": 45}}' >"$BATS_TEST_TMPDIR/r.json"
	runtime update --resources="$BATS_TEST_TMPDIR/r.json" "$CID"
	assert_cg_file pids pids.max 45
}

@test "update -r: unified keys (v2), merged with the ones saved" {
	requires_pure_v2
	run_with_resources '{"unified": {"memory.high": "104857600"}}'
	runtime update -r - "$CID" <<<'{"unified": {"pids.max": "9"}}'
	assert_cg_file pids pids.max 9
	assert_cg_file memory memory.high 104857600
	assert_saved '.unified["memory.high"] == "104857600" and .unified["pids.max"] == "9"'
}

@test "update -r: hugepageLimits" {
	case $(cg_version hugetlb) in
	v1) requires_cg_file hugetlb hugetlb.2MB.limit_in_bytes ;;
	v2) requires_cg_file hugetlb hugetlb.2MB.max ;;
	*) skip "no hugetlb controller" ;;
	esac
	create_running
	runtime update -r - "$CID" <<<'{"hugepageLimits": [{"pageSize": "2MB", "limit": 8388608}]}'
	case $(cg_version hugetlb) in
	v1) assert_cg_file hugetlb hugetlb.2MB.limit_in_bytes 8388608 ;;
	v2) assert_cg_file hugetlb hugetlb.2MB.max 8388608 ;;
	esac
}

@test "update -r: device rules are not changed (ignored, as with runc)" {
	create_running
	run runtime update -r - "$CID" <<<'{"devices": [{"allow": true, "access": "rwm"}], "pids": {"limit": 30}}'
	assert_success
	assert_saved '.devices == [{"allow": false, "access": "rwm"}]'
	if [[ $(cg_version devices) == v1 ]]; then
		run cg_file devices devices.list
		[[ $output != "a *:* rwm" ]] || fail "every device is allowed now"
	fi
}

@test "update -r: invalid documents are refused with the field named" {
	create_running
	run --separate-stderr runtime update -r - "$CID" <<<'{"memory": {"limit": "lots"}}'
	assert_failure
	assert_one_error_line limit
	run --separate-stderr runtime update -r - "$CID" <<<'{"memory": '
	assert_failure
	run --separate-stderr runtime update -r - "$CID" <<<'[1, 2]'
	assert_failure
	run --separate-stderr runtime update -r "$BATS_TEST_TMPDIR/missing.json" "$CID"
	assert_failure
	assert_one_error_line missing.json
}

# --- errors and states -------------------------------------------------------------------

@test "update: invalid flag values name the flag" {
	create_running
	local f
	for f in "--memory abc" "--memory -5" "--memory 10X" "--cpu-share -1" "--cpu-quota 1.5" \
		"--pids-limit ten" "--cpu-period 1e5" "--blkio-weight x"; do
		# shellcheck disable=SC2086
		run --separate-stderr runtime update $f "$CID"
		assert_failure
		assert_one_error_line "${f%% *}"
	done
	run --separate-stderr runtime update --no-such-flag 1 "$CID"
	assert_failure
}

@test "update of a stopped container: not running" {
	set_args true
	create_container "$CID"
	runtime start "$CID"
	wait_status "$CID" stopped
	run --separate-stderr runtime update --pids-limit 10 "$CID"
	assert_failure
	assert_one_error_line "not running"
}

@test "update of a container that does not exist" {
	run --separate-stderr runtime update --pids-limit 10 nosuch-$$
	assert_failure
	assert_one_error_line nosuch-$$
}

@test "update: options after the container id (runc takes them there too)" {
	requires_memory
	create_running
	runtime update "$CID" --memory 64M --pids-limit 42
	[[ $(memory_limit) == 67108864 ]] || fail "memory: $(memory_limit)"
	assert_saved '.memory.limit == 67108864 and .pids.limit == 42'
	run runtime update "$CID" -r - <<<'{"pids": {"limit": 43}}'
	assert_success
	assert_saved '.pids.limit == 43'
}

@test "update: usage errors" {
	run runtime update
	assert_failure
	run runtime update a b
	assert_failure
}

@test "update of a created container; it starts with the new limits" {
	[[ $(cg_version pids) != none ]] || skip "no pids controller"
	set_args sleep 1000
	create_container "$CID"
	runtime update --pids-limit 12 "$CID"
	runtime start "$CID"
	wait_status "$CID" running
	assert_cg_file pids pids.max 12
}

@test "update of a paused container: applied, still paused" {
	[[ $(cg_version pids) != none ]] || skip "no pids controller"
	create_running
	runtime pause "$CID"
	runtime update --pids-limit 13 "$CID"
	assert_cg_file pids pids.max 13
	[[ $(state_field "$CID" status) == paused ]]
	runtime resume "$CID"
}

@test "update: concurrent updates all land (the container lock, the atomic writer)" {
	[[ $(cg_version pids) != none && $(cg_version cpu) != none ]] || skip "needs pids and cpu"
	create_running
	local pids=() i
	runtime update --pids-limit 77 "$CID" &
	pids+=($!)
	runtime update --cpu-share 700 "$CID" &
	pids+=($!)
	runtime update --cpu-quota 70000 --cpu-period 100000 "$CID" &
	pids+=($!)
	runtime update -r - "$CID" <<<'{"memory": {"reservation": 7340032}}' &
	pids+=($!)
	for i in "${pids[@]}"; do
		wait "$i" || fail "an update failed"
	done
	assert_cg_file pids pids.max 77
	assert_saved '.pids.limit == 77 and .cpu.shares == 700 and .cpu.quota == 70000 and .memory.reservation == 7340032'
	if [[ -f $ROOT/$CID/config.json ]]; then
		jq -e '.process.args == ["sleep", "1000"]' "$ROOT/$CID/config.json" >/dev/null ||
			fail "the rest of the config was lost"
	fi
}

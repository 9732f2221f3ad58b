#!/usr/bin/env bats
# linux.resources.blockIO: weights and throttles, read back from the
# container's blkio (v1) or io (v2) cgroup.  The per-device entries use a
# loop device made for the test (detached in teardown).

load helpers
load cgroups_helpers

setup() {
	setup_bundle
	LOOP=
}

teardown() {
	teardown_bundle
	drop_loop
}

# blkio_weight_file: the weight file this kernel has (v1: CFQ's, else
# BFQ's; v2: BFQ's, else io.weight), empty when none.
blkio_weight_file() {
	local f
	case $(cg_version blkio)/$(cg_version io) in
	v1/*) for f in blkio.weight blkio.bfq.weight; do kernel_has blkio "$f" && echo "$f" && return; done ;;
	*/v2) for f in io.bfq.weight io.weight; do kernel_has io "$f" && echo "$f" && return; done ;;
	esac
	return 0
}

# io_ctrl: the name of the controller here (blkio on v1, io on v2).
io_ctrl() {
	if [[ $(cg_version blkio) == v1 ]]; then echo blkio; else echo io; fi
}

requires_io() {
	[[ $(cg_version blkio) == v1 || $(cg_version io) == v2 ]] || skip "no blkio/io controller"
}

@test "blockIO.weight: the cgroup's weight, or an error naming the file the kernel lacks" {
	requires_io
	resources '{"blockIO": {"weight": 500}}'
	local f
	f=$(blkio_weight_file)
	if [[ -z $f ]]; then
		# No CFQ or BFQ on this host (v1): runc fails the same way.
		create_refused weight
		return
	fi
	create_running
	case $f in
	blkio.weight | blkio.bfq.weight | io.bfq.weight) run cg_file "$(io_ctrl)" "$f" ;;
	io.weight) run cg_file io io.weight ;;
	esac
	case $f in
	io.weight) assert_output_contains "default 4950" ;; # 1 + (500-10)*9999/990
	io.bfq.weight) assert_output_contains "default 500" ;;
	*) assert_output_equals 500 ;;
	esac
}

@test "blockIO.leafWeight: v1 only (CFQ), ignored on v2" {
	requires_io
	resources '{"blockIO": {"leafWeight": 300}}'
	if [[ $(cg_version blkio) == v1 ]]; then
		if kernel_has blkio blkio.leaf_weight; then
			create_running
			assert_cg_file blkio blkio.leaf_weight 300
		else
			create_refused leaf_weight
		fi
	else
		create_running
	fi
}

@test "blockIO.weightDevice: a per-device weight" {
	requires_io
	make_loop
	# Per-device weights are BFQ's (or iocost's): give our loop device BFQ
	# where the kernel has it.
	echo bfq >"/sys/block/${LOOP#/dev/}/queue/scheduler" 2>/dev/null || true
	resources "$(jq -nc --argjson M "$(loop_major)" --argjson m "$(loop_minor)" \
		'{blockIO: {weightDevice: [{major: $M, minor: $m, weight: 200}]}}')"
	local f
	f=$(blkio_weight_file)
	if [[ -z $f ]]; then
		create_refused weight_device
		return
	fi
	set_args sleep 1000
	create_container "$CID"
	if [[ $status -ne 0 && $f == io.weight ]]; then
		# io.weight per device needs the iocost policy on the device; the
		# kernel refuses otherwise, and the error names the file.
		[[ $output == *io.weight* ]] || fail "unclear error: $output"
		return
	fi
	[[ $status -eq 0 ]] || fail "create failed: $output"
	runtime start "$CID"
	wait_status "$CID" running
	case $f in
	blkio.weight) run cg_file blkio blkio.weight_device ;;
	blkio.bfq.weight) run cg_file blkio blkio.bfq.weight_device ;;
	*) run cg_file io "$f" ;;
	esac
	case $f in
	io.weight) assert_output_contains "$LOOP_MAJMIN 2" ;; # converted
	*) assert_output_contains "$LOOP_MAJMIN 200" ;;
	esac
}

@test "blockIO throttles: read/write bps and iops on a loop device" {
	requires_io
	make_loop
	resources "$(jq -nc --argjson M "$(loop_major)" --argjson m "$(loop_minor)" '{blockIO: {
		throttleReadBpsDevice: [{major: $M, minor: $m, rate: 1048576}],
		throttleWriteBpsDevice: [{major: $M, minor: $m, rate: 2097152}],
		throttleReadIOPSDevice: [{major: $M, minor: $m, rate: 100}],
		throttleWriteIOPSDevice: [{major: $M, minor: $m, rate: 200}]}}')"
	create_running
	if [[ $(cg_version blkio) == v1 ]]; then
		assert_cg_file blkio blkio.throttle.read_bps_device "$LOOP_MAJMIN 1048576"
		assert_cg_file blkio blkio.throttle.write_bps_device "$LOOP_MAJMIN 2097152"
		assert_cg_file blkio blkio.throttle.read_iops_device "$LOOP_MAJMIN 100"
		assert_cg_file blkio blkio.throttle.write_iops_device "$LOOP_MAJMIN 200"
	else
		run cg_file io io.max
		assert_output_contains "$LOOP_MAJMIN rbps=1048576 wbps=2097152 riops=100 wiops=200"
	fi
}

@test "blockIO throttles: the root disk's major:minor" {
	requires_io
	local majmin
	majmin=$(lsblk -dno MAJ:MIN "$(findmnt -no SOURCE / 2>/dev/null)" 2>/dev/null | tr -d ' ')
	[[ $majmin == *:* ]] || skip "/ is not on a block device here"
	resources "$(jq -nc --argjson M "${majmin%%:*}" --argjson m "${majmin##*:}" \
		'{blockIO: {throttleWriteBpsDevice: [{major: $M, minor: $m, rate: 10485760}]}}')"
	create_running
	if [[ $(cg_version blkio) == v1 ]]; then
		assert_cg_file blkio blkio.throttle.write_bps_device "$majmin 10485760"
	else
		run cg_file io io.max
		assert_output_contains "$majmin rbps=max wbps=10485760"
	fi
}

@test "blockIO throttles: a device that does not exist is refused" {
	requires_io
	# Not 1:3: block major 1 is the RAM disk, which the kernel may load
	# on demand.
	resources '{"blockIO": {"throttleReadBpsDevice": [{"major": 4000, "minor": 4000, "rate": 1048576}]}}'
	create_refused 4000:4000
}

@test "blockIO throttles: the stats of events name the device" {
	requires_io
	make_loop
	update_config --arg l "$LOOP" --argjson M "$(loop_major)" --argjson m "$(loop_minor)" '
		.linux.devices += [{path: "/dev/sdtest", type: "b", major: $M, minor: $m}]
		| .linux.resources.devices += [{allow: true, type: "b", major: $M, minor: $m, access: "r"}]
		| .linux.resources.blockIO = {throttleReadBpsDevice: [{major: $M, minor: $m, rate: 10485760}]}'
	set_cmd 'dd if=/dev/sdtest of=/dev/null bs=4096 count=64 iflag=direct 2>/dev/null || dd if=/dev/sdtest of=/dev/null bs=4096 count=64; sleep 1000'
	KEEP_ARGS=1 create_running
	local tries=50
	while ((tries-- > 0)); do
		run runtime events --stats "$CID"
		# runc leaves out a minor number 0 (omitempty).
		jq -e --argjson M "$(loop_major)" --argjson m "$(loop_minor)" '
			any(.data.blkio.ioServiceBytesRecursive[]?;
				.major == $M and (.minor // 0) == $m and .op == "Read" and (.value // 0) > 0)' \
			<<<"$output" >/dev/null && return 0
		sleep 0.1
	done
	fail "no blkio entry for $LOOP_MAJMIN: $(jq -c .data.blkio <<<"$output")"
}

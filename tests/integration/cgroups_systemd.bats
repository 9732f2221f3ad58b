#!/usr/bin/env bats
# The systemd cgroup driver (--systemd-cgroup, cgroupsPath
# "slice:prefix:name").  No systemd runs here (nor in the v2 guest): the
# driver's errors are checked against no bus and a bus without systemd, and
# the driver itself against tests/helpers/fake-systemd.c, which owns
# org.freedesktop.systemd1 on a private dbus-daemon, creates the units'
# cgroups like systemd (under a slice made for the test) and records every
# call and property it gets.
#
#   vm-run -e RUNTIME=$PWD/sandrun -- bats tests/integration/cgroups_systemd.bats

load helpers
load cgroups_helpers

FAKE_SRC=$REPO_ROOT/tests/helpers/fake-systemd.c
FAKE_SYSTEMD=$WORK_DIR/fake-systemd

setup_file() {
	cg_cache_init
	mkdir -p "$WORK_DIR"
	# Built once per source change (bats may run files in parallel).
	(
		flock 9
		if [[ ! -x $FAKE_SYSTEMD || $FAKE_SRC -nt $FAKE_SYSTEMD ]] &&
			pkg-config --exists libsystemd 2>/dev/null; then
			# shellcheck disable=SC2046
			${CC:-cc} -O2 -Wall -o "$FAKE_SYSTEMD.tmp" "$FAKE_SRC" \
				$(pkg-config --cflags --libs libsystemd) && mv "$FAKE_SYSTEMD.tmp" "$FAKE_SYSTEMD"
		fi
	) 9>"$WORK_DIR/.fake-systemd.lock"
}

setup() {
	setup_bundle
	# A slice of this test's own: the fake makes the units' cgroups in it.
	SLICE=srt$$n${BATS_SUITE_TEST_NUMBER:-0}.slice
	UNIT=sr-$CID.scope
	BUS_DIR=$BATS_TEST_TMPDIR/bus
	BUS_PID= FAKE_PID=
	# Never the host's bus, whatever the host runs.
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$BUS_DIR/none
}

teardown() {
	teardown_bundle
	local pid d
	for pid in $FAKE_PID $BUS_PID; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# The test's slice, and a slice unit at the top (the last test).
	for d in /sys/fs/cgroup/{,*/}"$SLICE" /sys/fs/cgroup/{,*/}"$UNIT"; do
		[[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}

requires_systemd_driver() {
	[[ $(runtime features | jq .linux.cgroup.systemd) == true ]] ||
		skip "$RUNTIME_NAME is built without the systemd cgroup driver"
}

# wait_file TEST PATH: poll (5 s at most) until `test TEST PATH` holds.
wait_file() {
	local tries=100
	until test "$1" "$2"; do
		((tries-- > 0)) || return 1
		sleep 0.05
	done
}

# start_bus: a private dbus-daemon on $BUS_DIR/sock, as the system bus.
start_bus() {
	command -v dbus-daemon >/dev/null || skip "no dbus-daemon (Debian package dbus)"
	mkdir -p "$BUS_DIR"
	cat >"$BUS_DIR/bus.conf" <<-EOF
		<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
		 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
		<busconfig>
		  <type>custom</type>
		  <listen>unix:path=$BUS_DIR/sock</listen>
		  <auth>EXTERNAL</auth>
		  <policy context="default">
		    <allow send_destination="*" eavesdrop="true"/>
		    <allow eavesdrop="true"/>
		    <allow own="*"/>
		  </policy>
		</busconfig>
	EOF
	dbus-daemon --config-file="$BUS_DIR/bus.conf" --nofork --nopidfile \
		</dev/null >"$BUS_DIR/daemon.log" 2>&1 3>&- &
	BUS_PID=$!
	wait_file -S "$BUS_DIR/sock" || fail "dbus-daemon did not start: $(cat "$BUS_DIR/daemon.log")"
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$BUS_DIR/sock
}

# start_fake_systemd: the bus, and the fake systemd on it; RECORD is what
# it was called with.
start_fake_systemd() {
	requires_systemd_driver
	[[ -x $FAKE_SYSTEMD ]] || skip "fake-systemd not built (needs cc and libsystemd-dev)"
	local root
	root=$(cg_v2_mount)
	[[ -n $root ]] || root=$(cg_v1_mount name=systemd)
	[[ -n $root ]] || skip "neither cgroup2 nor a name=systemd hierarchy"
	start_bus
	RECORD=$BUS_DIR/record
	"$FAKE_SYSTEMD" "$RECORD" "$root" "$BUS_DIR/ready" </dev/null >"$BUS_DIR/fake.log" 2>&1 3>&- &
	FAKE_PID=$!
	wait_file -e "$BUS_DIR/ready" || fail "fake-systemd did not start: $(cat "$BUS_DIR/fake.log")"
}

# sd_runtime ARG...: `runtime --systemd-cgroup ARG...`.
sd_runtime() {
	runtime --systemd-cgroup "$@"
}

# assert_recorded LINE...: each LINE is a whole line of the record.
assert_recorded() {
	local l
	for l in "$@"; do
		grep -qxF -- "$l" "$RECORD" || fail "fake systemd did not get '$l'; it got: $(cat "$RECORD")"
	done
}

# assert_no_unit_cgroups: no directory of the unit in any hierarchy.
assert_no_unit_cgroups() {
	local left
	left=$(cgroups_named "$UNIT")
	[[ -z $left ]] || fail "the unit's cgroups are left: $left"
}

# --- errors -----------------------------------------------------------------------

@test "systemd driver: the binary does not link libsystemd (it is opened when the driver is used)" {
	[[ $RUNTIME_NAME == sandrun* ]] || skip "a property of sandrun's binary"
	# Linked, it and the libraries it needs would be mapped and constructed by
	# every sandrun process (twice per start, with the re-execution).
	run ldd "$RUNTIME"
	[ "$status" -eq 0 ]
	! grep -q libsystemd <<<"$output" || fail "linked: $output"
}

@test "systemd driver: no system bus: one clear error, nothing left" {
	requires_systemd_driver
	run --separate-stderr runtime_stdout_to_file --systemd-cgroup create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line "\"$CID\"" "systemd cgroup driver" "connect to the system bus" \
		"No such file or directory"
	assert_no_leftovers
	[[ -z $(cgroups_named "sandrun-$CID.scope") ]] || fail "a cgroup was made"
}

@test "systemd driver: a bus without systemd on it: one clear error, nothing left" {
	requires_systemd_driver
	start_bus
	run --separate-stderr runtime_stdout_to_file --systemd-cgroup create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line "\"$CID\"" "systemd cgroup driver" "org.freedesktop.systemd1"
	assert_no_leftovers
}

@test "systemd driver: cgroupsPath must be slice:prefix:name with valid names" {
	requires_systemd_driver
	local p
	for p in /machine/web web a:b a:b:c:d system.slice:p: system:p:web a--b.slice:p:web \
		a/b.slice:p:web system.slice:p:web@1 -.slice:p:-.slice; do
		update_config --arg p "$p" '.linux.cgroupsPath = $p'
		run --separate-stderr runtime_stdout_to_file --systemd-cgroup create -b "$BUNDLE" "$CID"
		assert_failure
		assert_one_error_line "\"$CID\"" "cgroupsPath \"$p\""
		assert_no_leftovers
	done
}

# --- with a (fake) systemd ----------------------------------------------------------

@test "systemd driver: a transient scope with the resources as properties" {
	start_fake_systemd
	set_args sleep 1000
	update_config --arg p "$SLICE:sr:$CID" '.linux.cgroupsPath = $p'
	resources '{"memory": {"limit": 67108864}, "pids": {"limit": 77},
		"cpu": {"quota": 50000, "period": 100000}}'
	runtime --systemd-cgroup run -d -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1 ||
		fail "run failed: $(cat "$(ct_out "$CID")")"
	local pid mem line
	pid=$(ct_pid)
	mem=MemoryLimit
	[[ $(cg_layout) == v2 ]] && mem=MemoryMax
	assert_recorded "StartTransientUnit $UNIT replace" "  Slice=$SLICE" "  Delegate=yes" \
		"  PIDs=[$pid]" "  DefaultDependencies=no" "  MemoryAccounting=yes" \
		"  TasksAccounting=yes" "  $mem=67108864" "  TasksMax=77" \
		"  CPUQuotaPerSecUSec=500000" "  CPUQuotaPeriodUSec=100000" "  DevicePolicy=strict"
	# The init sits in the unit's cgroup in every hierarchy, and the files
	# carry the limits (the cgroupfs side, as after systemd).
	while IFS= read -r line; do
		[[ $line == *":/$SLICE/$UNIT" ]] || fail "init not in the unit's cgroup: $line"
	done <"/proc/$pid/cgroup"
	case $(cg_version pids) in
	v1 | v2) assert_cg_file pids pids.max 77 ;;
	esac
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.limit_in_bytes 67108864 ;;
	v2) assert_cg_file memory memory.max 67108864 ;;
	esac

	# update: the unit's properties too, at runtime.
	run runtime update --pids-limit 50 "$CID"
	assert_success
	assert_recorded "SetUnitProperties $UNIT runtime" "  TasksMax=50"
	assert_cg_file pids pids.max 50

	# delete: the unit stops, nothing is left.
	run runtime delete -f "$CID"
	assert_success
	assert_recorded "StopUnit $UNIT replace"
	assert_no_leftovers
	assert_no_unit_cgroups
}

@test "systemd driver: v1 and v2 get their own property names" {
	start_fake_systemd
	update_config --arg p "$SLICE:sr:$CID" '.linux.cgroupsPath = $p'
	resources '{"memory": {"limit": 67108864, "reservation": 33554432},
		"cpu": {"shares": 1024}, "blockIO": {"weight": 500}}'
	run --separate-stderr runtime_stdout_to_file --systemd-cgroup run -b "$BUNDLE" "$CID"
	assert_success
	if [[ $(cg_layout) == v2 ]]; then
		assert_recorded "  MemoryMax=67108864" "  MemoryLow=33554432" "  CPUWeight=100" \
			"  IOAccounting=yes"
		grep -q "IOWeight=" "$RECORD" || fail "no IOWeight: $(cat "$RECORD")"
	else
		assert_recorded "  MemoryLimit=67108864" "  CPUShares=1024" "  BlockIOWeight=500" \
			"  BlockIOAccounting=yes"
	fi
	# run ended: the unit with it.
	assert_recorded "StopUnit $UNIT replace"
	assert_no_leftovers
	assert_no_unit_cgroups
}

@test "systemd driver: a create that fails after the unit started stops it" {
	start_fake_systemd
	update_config --arg p "$SLICE:sr:$CID" '.linux.cgroupsPath = $p |
		.hooks.createRuntime = [{"path": "/bin/false"}]'
	run --separate-stderr runtime_stdout_to_file --systemd-cgroup create -b "$BUNDLE" "$CID"
	assert_failure
	assert_recorded "StartTransientUnit $UNIT replace" "StopUnit $UNIT replace"
	assert_no_leftovers
	assert_no_unit_cgroups
}

@test "systemd driver: a slice unit (name ending in .slice) holds the init itself" {
	start_fake_systemd
	UNIT=srtpod$$n${BATS_SUITE_TEST_NUMBER:-0}.slice
	set_args sleep 1000
	update_config --arg p "$SLICE:ignored:$UNIT" '.linux.cgroupsPath = $p'
	runtime --systemd-cgroup run -d -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1 ||
		fail "run failed: $(cat "$(ct_out "$CID")")"
	assert_recorded "StartTransientUnit $UNIT replace" "  Wants=$SLICE"
	! grep -q "PIDs=\|Delegate=" "$RECORD" || fail "a slice got PIDs or Delegate: $(cat "$RECORD")"
	local line
	while IFS= read -r line; do
		[[ $line == *":/$UNIT" ]] || fail "init not in the slice's cgroup: $line"
	done <"/proc/$(ct_pid)/cgroup"
	run runtime delete -f "$CID"
	assert_success
	assert_recorded "StopUnit $UNIT replace"
	assert_no_leftovers
	assert_no_unit_cgroups
}

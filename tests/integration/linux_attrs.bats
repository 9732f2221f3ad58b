#!/usr/bin/env bats
# The per-process and per-container Linux attributes (config.md "Linux
# Process", config-linux.md): personality, scheduler, ioPriority,
# execCPUAffinity, memoryPolicy, netDevices, intelRdt, AppArmor and SELinux
# labels.  Each is checked from inside a real container, and every refusal
# is one clear error line that leaves nothing behind.

load helpers

setup() {
	setup_bundle
	NETDEVS=()
}

teardown() {
	teardown_bundle
	local d
	for d in "${NETDEVS[@]}"; do
		ip link del "$d" 2>/dev/null || true
	done
}

# attr_refused WORD...: `create` fails with one error line mentioning each
# WORD and leaves nothing behind.
attr_refused() {
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line "$@"
	assert_no_leftovers
}

# stat_field N: field N of the container shell's /proc/PID/stat (its comm,
# "sh", has no space).
stat_field() {
	echo "cut -d' ' -f$1 /proc/\$\$/stat"
}

# --- personality ---------------------------------------------------------------

@test "personality LINUX32: uname reports a 32-bit machine" {
	local host
	host=$(uname -m)
	[[ $host == x86_64 ]] || skip "32-bit name of $host not known to this test"
	update_config '.linux.personality = {"domain": "LINUX32"}'
	run_in_container 'uname -m'
	assert_success
	assert_output_equals i686
}

@test "personality LINUX: the host's machine" {
	update_config '.linux.personality = {"domain": "LINUX"}'
	run_in_container 'uname -m'
	assert_success
	assert_output_equals "$(uname -m)"
}

@test "personality: an unknown domain and any flag are refused" {
	update_config '.linux.personality = {"domain": "LINUX64"}'
	attr_refused personality LINUX64
	update_config '.linux.personality = {"domain": "LINUX", "flags": ["ADDR_NO_RANDOMIZE"]}'
	attr_refused personality ADDR_NO_RANDOMIZE
}

# --- scheduler -----------------------------------------------------------------

@test "scheduler: SCHED_BATCH with nice 7" {
	update_config '.process.scheduler = {"policy": "SCHED_BATCH", "nice": 7}'
	run_in_container "$(stat_field 19) && $(stat_field 41)"
	assert_success
	assert_output_equals $'7\n3'
}

@test "scheduler: SCHED_IDLE" {
	update_config '.process.scheduler = {"policy": "SCHED_IDLE"}'
	run_in_container "$(stat_field 41)"
	assert_success
	assert_output_equals 5
}

@test "scheduler: SCHED_FLAG_RESET_ON_FORK resets a negative nice in children" {
	update_config '.process.scheduler = {"policy": "SCHED_OTHER", "nice": -5, "flags": ["SCHED_FLAG_RESET_ON_FORK"]}'
	# The shell keeps its nice; cut, its child (not the last command, so not
	# exec'd in place), starts at 0 (sched(7)).
	run_in_container "$(stat_field 19) && cut -d' ' -f19 /proc/self/stat; true"
	assert_success
	assert_output_equals $'-5\n0'
}

@test "scheduler: SCHED_FIFO with a priority" {
	update_config '.process.scheduler = {"policy": "SCHED_FIFO", "priority": 10}'
	# With RT group scheduling (cgroup v1) the cgroup needs a realtime budget.
	if [[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ]]; then
		update_config '.linux.resources.cpu = {"realtimeRuntime": 10000, "realtimePeriod": 1000000}'
	fi
	run_in_container "$(stat_field 40) && $(stat_field 41)"
	assert_success
	assert_output_equals $'10\n1'
}

@test "scheduler: SCHED_DEADLINE with runtime, deadline and period" {
	update_config '.process.scheduler = {"policy": "SCHED_DEADLINE", "runtime": 1000000, "deadline": 5000000, "period": 10000000}'
	run_in_container "$(stat_field 41)"
	assert_success
	assert_output_equals 6
}

@test "scheduler: values runc's validator rejects are refused" {
	update_config '.process.scheduler = {"policy": "SCHED_OTHER", "nice": 20}'
	attr_refused scheduler.nice 20
	update_config '.process.scheduler = {"policy": "SCHED_OTHER", "priority": 5}'
	attr_refused scheduler.priority SCHED_FIFO
	update_config '.process.scheduler = {"policy": "SCHED_BATCH", "runtime": 1000}'
	attr_refused scheduler SCHED_DEADLINE
	update_config '.process.scheduler = {"policy": "SCHED_FIFO", "priority": 100}'
	attr_refused scheduler.priority 100
	update_config '.process.scheduler = {"policy": "SCHED_OTHER", "flags": ["SCHED_FLAG_NOPE"]}'
	attr_refused scheduler.flags SCHED_FLAG_NOPE
	update_config '.process.scheduler = {"policy": "SCHED_NOPE"}'
	attr_refused scheduler.policy SCHED_NOPE
	update_config '.process.scheduler = {"policy": "SCHED_ISO"}'
	attr_refused SCHED_ISO
}

# --- ioPriority ------------------------------------------------------------------

@test "ioPriority: each class" {
	update_config '.process.ioPriority = {"class": "IOPRIO_CLASS_BE", "priority": 5}'
	run_in_container 'ionice -p $$'
	assert_success
	assert_output_equals "best-effort: prio 5"

	update_config '.process.ioPriority = {"class": "IOPRIO_CLASS_RT", "priority": 3}'
	run_in_container 'ionice -p $$'
	assert_success
	assert_output_equals "realtime: prio 3"

	update_config '.process.ioPriority = {"class": "IOPRIO_CLASS_IDLE", "priority": 0}'
	run_in_container 'ionice -p $$'
	assert_success
	assert_output_equals "idle"
}

@test "ioPriority: unknown class and out-of-range priority are refused" {
	update_config '.process.ioPriority = {"class": "IOPRIO_CLASS_NOPE", "priority": 1}'
	attr_refused ioPriority.class IOPRIO_CLASS_NOPE
	update_config '.process.ioPriority = {"class": "IOPRIO_CLASS_BE", "priority": 8}'
	attr_refused ioPriority.priority 8
}

# --- execCPUAffinity ----------------------------------------------------------------

@test "execCPUAffinity: not applied to the init (config.md), but checked" {
	local want
	want=$(grep Cpus_allowed_list /proc/self/status)
	update_config '.process.execCPUAffinity = {"initial": "0", "final": "0"}'
	run_in_container 'grep Cpus_allowed_list /proc/self/status'
	assert_success
	assert_output_equals "$want"
}

@test "CPU affinity: a runtime started pinned to one CPU does not pin the container or an exec'd process" {
	(($(nproc --all) > 1)) || skip "one CPU"
	local want
	want=$(grep Cpus_allowed_list /proc/self/status)
	set_args sh -c 'grep Cpus_allowed_list /proc/self/status; sleep 1000'
	taskset -c 0 "$RUNTIME" --root "$ROOT" run -d -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1 3>&- ||
		fail "run -d: $(cat "$(ct_out "$CID")")"
	wait_output "$CID" Cpus_allowed_list
	[[ $(grep Cpus_allowed_list "$(ct_out "$CID")") == "$want" ]] ||
		fail "init: $(cat "$(ct_out "$CID")"), want $want"
	run taskset -c 0 "$RUNTIME" --root "$ROOT" exec "$CID" grep Cpus_allowed_list /proc/self/status 3>&-
	assert_success
	assert_output_equals "$want"
}

@test "execCPUAffinity: malformed lists and CPUs the host lacks are refused" {
	local bad
	for bad in "0-" "1-0" "a" "0,,1" " 0" "0," "-1" "+1" "0x1"; do
		update_config --arg l "$bad" '.process.execCPUAffinity = {"initial": $l}'
		attr_refused execCPUAffinity.initial "$bad"
	done
	update_config '.process.execCPUAffinity = {"final": "0,100000"}'
	attr_refused execCPUAffinity.final 100000
}

# --- memoryPolicy ----------------------------------------------------------------

requires_numa() {
	[[ -e /sys/devices/system/node/node0 ]] || skip "kernel without NUMA"
}

@test "memoryPolicy: MPOL_BIND and MPOL_INTERLEAVE on node 0" {
	requires_numa
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "0"}'
	run_in_container 'grep -c " bind:0 " /proc/self/numa_maps >/dev/null && echo bound'
	assert_success
	assert_output_equals bound

	update_config '.linux.memoryPolicy = {"mode": "MPOL_INTERLEAVE", "nodes": "0", "flags": ["MPOL_F_STATIC_NODES"]}'
	run_in_container 'grep -c " interleave=static:0 " /proc/self/numa_maps >/dev/null && echo interleaved'
	assert_success
	assert_output_equals interleaved
}

@test "memoryPolicy: MPOL_DEFAULT keeps the default policy" {
	requires_numa
	update_config '.linux.memoryPolicy = {"mode": "MPOL_DEFAULT", "nodes": ""}'
	run_in_container 'grep -c " bind:" /proc/self/numa_maps'
	assert_failure 1
	assert_output_equals 0
}

@test "memoryPolicy: unknown names, bad lists and absent nodes are refused" {
	update_config '.linux.memoryPolicy = {"mode": "MPOL_NOPE", "nodes": "0"}'
	attr_refused memoryPolicy.mode MPOL_NOPE
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_NOPE"]}'
	attr_refused memoryPolicy.flags MPOL_F_NOPE
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "0-"}'
	attr_refused memoryPolicy.nodes
	update_config '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "4095"}'
	attr_refused memoryPolicy.nodes 4095
}

@test "memoryPolicy: the kernel's refusal names the policy" {
	requires_numa
	# A node list with MPOL_DEFAULT is the kernel's EINVAL.
	update_config '.linux.memoryPolicy = {"mode": "MPOL_DEFAULT", "nodes": "0"}'
	attr_refused memoryPolicy MPOL_DEFAULT
}

# --- netDevices -------------------------------------------------------------------

# make_link NAME: a host interface NAME (dummy where the kernel has it, else
# one end of a veth pair), remembered for teardown.
make_link() {
	if ! ip link add "$1" type dummy 2>/dev/null; then
		ip link add "$1" type veth peer name "${1}p" || fail "cannot create $1"
		NETDEVS+=("${1}p")
	fi
	NETDEVS+=("$1")
}

netdev_name() {
	echo "srt${BATS_SUITE_TEST_NUMBER:-0}x$$" | cut -c1-12
}

# make_link_up NAME ADDRESS: make_link, with ADDRESS, up.
make_link_up() {
	make_link "$1"
	ip addr add "$2" dev "$1"
	ip link set "$1" up
}

@test "netDevices: a host interface moves in, renamed, with its address, up" {
	requires_root
	local dev
	dev=$(netdev_name)
	make_link_up "$dev" 10.213.7.5/24
	update_config --arg d "$dev" '.linux.netDevices = {($d): {"name": "ctr0"}}'
	run_in_container 'ip -o link show ctr0 | grep -o "<[^>]*>"; ip -o -4 addr show ctr0 | grep -o "inet [0-9./]*"'
	assert_success
	[[ ${lines[0]} == *UP* ]] || fail "ctr0 not up: $output"
	[[ ${lines[1]} == "inet 10.213.7.5/24" ]] || fail "address not kept: $output"
	# Virtual: it went with the container's network namespace.
	! ip link show "$dev" >/dev/null 2>&1 || fail "$dev is still on the host"
}

@test "netDevices: a name template gets a number from the kernel" {
	requires_root
	local dev
	dev=$(netdev_name)
	make_link "$dev"
	update_config --arg d "$dev" '.linux.netDevices = {($d): {"name": "net%d"}}'
	run_in_container 'ip -o link show | grep -o " net[0-9]*"'
	assert_success
	assert_output_equals " net0"
}

@test "netDevices: without a name it keeps the host's" {
	requires_root
	local dev
	dev=$(netdev_name)
	make_link "$dev"
	update_config --arg d "$dev" '.linux.netDevices = {($d): {}}'
	run_in_container "ip -o link show $dev >/dev/null && echo there"
	assert_success
	assert_output_equals there
}

@test "netDevices: a name taken inside fails and the interface stays on the host, up" {
	requires_root
	local dev
	dev=$(netdev_name)
	make_link_up "$dev" 10.213.8.5/24
	update_config --arg d "$dev" '.linux.netDevices = {($d): {"name": "lo"}}'
	attr_refused netDevices '"lo"'
	ip -o link show "$dev" | grep -q "[<,]UP[,>]" || fail "$dev not up again"
	ip -o -4 addr show "$dev" | grep -q 10.213.8.5 || fail "$dev lost its address"
}

@test "netDevices: refused without a network namespace, or for an unknown interface" {
	requires_root
	local dev
	dev=$(netdev_name)
	make_link "$dev"
	update_config --arg d "$dev" '.linux.netDevices = {($d): {}} | .linux.namespaces |= map(select(.type != "network"))'
	attr_refused netDevices "network namespace"
	ip link show "$dev" >/dev/null || fail "$dev is gone"

	update_config '.linux.netDevices = {"srt-nope0": {}} | .linux.namespaces += [{"type": "network"}]'
	attr_refused netDevices srt-nope0
}

@test "netDevices: invalid interface names are refused" {
	local bad
	for bad in "a/b" "a b" "a:b" "." "0123456789abcdef" "eth%s"; do
		update_config --arg n "$bad" '.linux.netDevices = {"eth0": {"name": $n}}'
		attr_refused netDevices name
	done
}

# --- intelRdt, AppArmor, SELinux ------------------------------------------------------

@test "intelRdt: refused where resctrl is not mounted" {
	[[ $(stat -f -c %T /sys/fs/resctrl 2>/dev/null) != resctrl ]] || skip "resctrl is mounted"
	update_config '.linux.intelRdt = {"closID": "sandrun-test"}'
	attr_refused intelRdt "resctrl is not mounted"
}

apparmor_enabled() {
	[[ -d /sys/kernel/security/apparmor ]] &&
		[[ $(cat /sys/module/apparmor/parameters/enabled 2>/dev/null) == Y* ]]
}

@test "apparmorProfile: refused on a host without AppArmor; empty is unset" {
	apparmor_enabled && skip "AppArmor is enabled here"
	update_config '.process.apparmorProfile = "sandrun-test"'
	attr_refused apparmorProfile "AppArmor is not enabled"
	update_config '.process.apparmorProfile = ""'
	run_in_container 'echo ran'
	assert_success
	assert_output_equals ran
}

@test "apparmorProfile: applied at execve where AppArmor is enabled, unknown ones refused" {
	apparmor_enabled || skip "AppArmor is not enabled here"
	update_config '.process.apparmorProfile = "unconfined"'
	run_in_container 'cat /proc/self/attr/current'
	assert_success
	assert_output_contains unconfined
	update_config '.process.apparmorProfile = "sandrun-test-not-loaded"'
	attr_refused apparmorProfile sandrun-test-not-loaded "not loaded"
}

selinux_enabled() {
	[[ $(stat -f -c %T /sys/fs/selinux 2>/dev/null) == selinux ]]
}

@test "selinuxLabel: refused on a host without SELinux; empty is unset" {
	selinux_enabled && skip "SELinux is enabled here"
	update_config '.process.selinuxLabel = "system_u:system_r:container_t:s0"'
	attr_refused selinuxLabel "SELinux is not enabled"
	update_config '.process.selinuxLabel = ""'
	run_in_container 'echo ran'
	assert_success
	assert_output_equals ran
}

@test "mountLabel: ignored with a warning on a host without SELinux (as runc)" {
	selinux_enabled && skip "SELinux is enabled here"
	update_config '.linux.mountLabel = "system_u:object_r:container_file_t:s0"'
	set_args echo ran
	run --separate-stderr runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_equals ran
	[[ $stderr == *mountLabel*ignored* ]] || fail "no warning: '$stderr'"
}

# The label is quoted in the mount data (context="..."): a quote in it would
# end that early, a line break would split the label.  Refused whether or
# not SELinux is enabled.
@test "mountLabel: a label with a double quote or a line break is refused" {
	update_config '.linux.mountLabel = "system_u:object_r:container_file_t:s0\",mode=777"'
	attr_refused mountLabel "double quote"
	update_config '.linux.mountLabel = "system_u:object_r:container_file_t:s0\nx"'
	attr_refused mountLabel "line break"
}

# Written for an SELinux host with container-selinux's policy (Fedora,
# RHEL); not yet run on one: the test hosts have no SELinux.
@test "mountLabel: the container's tmpfs mounts get it where SELinux is enabled" {
	selinux_enabled || skip "SELinux is not enabled here"
	update_config '.linux.mountLabel = "system_u:object_r:container_file_t:s0:c1,c2"'
	run_in_container 'grep " /dev tmpfs " /proc/self/mounts'
	assert_success
	assert_output_contains 'context="system_u:object_r:container_file_t:s0:c1,c2"'
}

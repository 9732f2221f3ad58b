#!/usr/bin/env bats
# linux.resources at create time (config-linux.md "Control groups"): every
# field is read back from the container's cgroup on the host (and a few from
# inside the container), the v1 way where a v1 hierarchy carries the
# controller, the v2 way elsewhere.  blockIO is in cgroups_io.bats, devices
# in cgroups_devices.bats.
#
# Runs on the v1 hybrid host and, for pure v2, inside tools/vm-run:
#   vm-run -e RUNTIME=$PWD/sandrun -- bats tests/integration/cgroups.bats

load helpers
load cgroups_helpers

MIB=1048576

# --- memory ---------------------------------------------------------------------

@test "memory.limit: the cgroup's hard limit" {
	run_with_resources '{"memory": {"limit": 67108864}}'
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.limit_in_bytes 67108864 ;;
	v2) assert_cg_file memory memory.max 67108864 ;;
	*) skip "no memory controller" ;;
	esac
}

@test "memory.limit: seen from inside the container (cgroup namespace)" {
	update_config '.linux.namespaces += [{"type": "cgroup"}]'
	resources '{"memory": {"limit": 67108864}}'
	case $(cg_version memory) in
	v1) run_in_container 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes' ;;
	v2) run_in_container 'cat /sys/fs/cgroup/memory.max' ;;
	*) skip "no memory controller" ;;
	esac
	assert_success
	assert_output_equals 67108864
}

@test "memory.reservation: the soft limit (v1) / memory.low (v2)" {
	run_with_resources '{"memory": {"limit": 67108864, "reservation": 33554432}}'
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.soft_limit_in_bytes 33554432 ;;
	v2) assert_cg_file memory memory.low 33554432 ;;
	esac
}

@test "memory.swap: memory+swap (v1) / swap alone (v2)" {
	case $(cg_version memory) in
	v1) requires_cg_file memory memory.memsw.limit_in_bytes ;;
	v2) requires_cg_file memory memory.swap.max ;;
	esac
	run_with_resources '{"memory": {"limit": 67108864, "swap": 134217728}}'
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.memsw.limit_in_bytes 134217728 ;;
	v2) assert_cg_file memory memory.swap.max 67108864 ;;
	esac
}

@test "memory.swap equal to the limit: no swap at all" {
	case $(cg_version memory) in
	v1) requires_cg_file memory memory.memsw.limit_in_bytes ;;
	v2) requires_cg_file memory memory.swap.max ;;
	esac
	run_with_resources '{"memory": {"limit": 67108864, "swap": 67108864}}'
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.memsw.limit_in_bytes 67108864 ;;
	v2) assert_cg_file memory memory.swap.max 0 ;;
	esac
}

@test "memory.swap -1: unlimited swap" {
	run_with_resources '{"memory": {"limit": 67108864, "swap": -1}}'
	case $(cg_version memory) in
	v1)
		requires_cg_file memory memory.memsw.limit_in_bytes
		[[ $(cg_file memory memory.memsw.limit_in_bytes) -gt $((1 << 60)) ]] || fail "memsw is limited"
		;;
	v2)
		requires_cg_file memory memory.swap.max
		assert_cg_file memory memory.swap.max max
		;;
	esac
}

@test "memory.swappiness: set on v1, ignored on v2" {
	run_with_resources '{"memory": {"swappiness": 10}}'
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.swappiness 10 ;;
	v2) [[ $(state_field "$CID" status) == running ]] ;;
	esac
}

@test "memory.swappiness above 100 is refused" {
	requires_cgroup_v1 memory
	resources '{"memory": {"swappiness": 101}}'
	create_refused swappiness 101
}

@test "memory.disableOOMKiller: oom_kill_disable 1 (v1), ignored on v2" {
	run_with_resources '{"memory": {"limit": 67108864, "disableOOMKiller": true}}'
	case $(cg_version memory) in
	v1)
		run cg_file memory memory.oom_control
		assert_output_contains "oom_kill_disable 1"
		;;
	v2) assert_cg_file memory memory.max 67108864 ;;
	esac
}

@test "memory.useHierarchy: memory.use_hierarchy (v1 only)" {
	requires_cgroup_v1 memory
	run_with_resources '{"memory": {"useHierarchy": true}}'
	assert_cg_file memory memory.use_hierarchy 1
}

@test "memory.kernel is ignored (deprecated), memory.kernelTCP reaches kmem.tcp (v1)" {
	run_with_resources '{"memory": {"kernel": 67108864, "kernelTCP": 16777216}}'
	if [[ $(cg_version memory) == v1 ]] && kernel_has memory memory.kmem.tcp.limit_in_bytes; then
		assert_cg_file memory memory.kmem.tcp.limit_in_bytes 16777216
	fi
	[[ $(state_field "$CID" status) == running ]]
}

@test "memory.checkBeforeUpdate: a limit below the usage is refused by update" {
	[[ $(cg_version memory) != none ]] || skip "no memory controller"
	run_with_resources '{"memory": {"limit": 67108864}}'
	run runtime update -r - "$CID" <<<'{"memory": {"limit": 4096, "checkBeforeUpdate": true}}'
	assert_failure
	case $(cg_version memory) in
	v1) assert_cg_file memory memory.limit_in_bytes 67108864 ;;
	v2) assert_cg_file memory memory.max 67108864 ;;
	esac
}

@test "memory: the OOM killer stops the container at its limit, nothing else" {
	[[ $(cg_version memory) != none ]] || skip "no memory controller"
	# A neighbour without a limit must survive.
	local other=${CID}-other
	create_running "$other"
	resources '{"memory": {"limit": 33554432}}'
	run_in_container 'x=$(head -c 100000000 /dev/zero | tr "\0" a); echo survived'
	assert_failure 137
	[[ $(state_field "$other" status) == running ]] || fail "the neighbour was killed"
}

# --- cpu --------------------------------------------------------------------------

# v2's cpu.weight for cpu.shares (runc/crun's formula).
shares_to_weight() {
	awk -v s="$1" 'BEGIN {
		l = log(s) / log(2);
		w = exp(log(10) * ((l * l + 125 * l) / 612.0 - 7.0 / 34.0));
		printf "%d\n", (w == int(w)) ? w : int(w) + 1
	}'
}

@test "cpu.shares: cpu.shares (v1) / cpu.weight (v2)" {
	run_with_resources '{"cpu": {"shares": 2048}}'
	case $(cg_version cpu) in
	v1) assert_cg_file cpu cpu.shares 2048 ;;
	v2) assert_cg_file cpu cpu.weight "$(shares_to_weight 2048)" ;;
	*) skip "no cpu controller" ;;
	esac
}

@test "cpu.quota and cpu.period: CFS bandwidth" {
	run_with_resources '{"cpu": {"quota": 50000, "period": 200000}}'
	case $(cg_version cpu) in
	v1)
		assert_cg_file cpu cpu.cfs_quota_us 50000
		assert_cg_file cpu cpu.cfs_period_us 200000
		;;
	v2) assert_cg_file cpu cpu.max "50000 200000" ;;
	*) skip "no cpu controller" ;;
	esac
}

@test "cpu.quota alone keeps the default period" {
	run_with_resources '{"cpu": {"quota": 30000}}'
	case $(cg_version cpu) in
	v1) assert_cg_file cpu cpu.cfs_quota_us 30000 ;;
	v2) assert_cg_file cpu cpu.max "30000 100000" ;;
	*) skip "no cpu controller" ;;
	esac
}

@test "cpu.burst: cfs_burst_us (v1) / cpu.max.burst (v2)" {
	case $(cg_version cpu) in
	v1) requires_cg_file cpu cpu.cfs_burst_us ;;
	v2) requires_cg_file cpu cpu.max.burst ;;
	*) skip "no cpu controller" ;;
	esac
	run_with_resources '{"cpu": {"quota": 50000, "period": 100000, "burst": 20000}}'
	case $(cg_version cpu) in
	v1) assert_cg_file cpu cpu.cfs_burst_us 20000 ;;
	v2) assert_cg_file cpu cpu.max.burst 20000 ;;
	esac
}

@test "cpu.realtimePeriod and realtimeRuntime: the RT budget (v1)" {
	requires_cgroup_v1 cpu
	requires_cg_file cpu cpu.rt_runtime_us
	run_with_resources '{"cpu": {"realtimePeriod": 1000000, "realtimeRuntime": 10000}}'
	assert_cg_file cpu cpu.rt_period_us 1000000
	assert_cg_file cpu cpu.rt_runtime_us 10000
}

@test "cpu.realtimeRuntime is refused on cgroup v2" {
	requires_cgroup_v2 cpu
	resources '{"cpu": {"realtimePeriod": 1000000, "realtimeRuntime": 10000}}'
	create_refused realtime
}

@test "cpu.cpus and cpu.mems: the cpuset" {
	run_with_resources '{"cpu": {"cpus": "0", "mems": "0"}}'
	[[ $(cg_version cpuset) != none ]] || skip "no cpuset controller"
	assert_cg_file cpuset cpuset.cpus 0
	assert_cg_file cpuset cpuset.mems 0
	# The init runs on that CPU only.
	run grep Cpus_allowed_list "/proc/$(ct_pid)/status"
	assert_output_contains $'\t0'
}

@test "cpu.cpus: a CPU that does not exist is refused" {
	[[ $(cg_version cpuset) != none ]] || skip "no cpuset controller"
	resources '{"cpu": {"cpus": "4095"}}'
	create_refused cpuset.cpus 4095
}

@test "cpu.idle: SCHED_IDLE for the cgroup" {
	requires_cg_file cpu cpu.idle
	run_with_resources '{"cpu": {"idle": 1}}'
	assert_cg_file cpu cpu.idle 1
}

# --- pids ---------------------------------------------------------------------------

@test "pids.limit: pids.max, and forks beyond it fail" {
	[[ $(cg_version pids) != none ]] || skip "no pids controller"
	resources '{"pids": {"limit": 5}}'
	# Only builtins count the processes: a fork more would fail.
	run_in_container 'for i in 1 2 3 4 5 6 7 8; do sleep 30 & done 2>/dev/null
		set -- /proc/[0-9]*; echo $#'
	# sh itself and 4 sleeps at most.
	[[ ${output##*$'\n'} -le 5 ]] || fail "more than 5 processes: $output"
}

@test "pids.limit: read back from pids.max" {
	[[ $(cg_version pids) != none ]] || skip "no pids controller"
	run_with_resources '{"pids": {"limit": 42}}'
	assert_cg_file pids pids.max 42
}

@test "pids.limit -1: no limit" {
	[[ $(cg_version pids) != none ]] || skip "no pids controller"
	run_with_resources '{"pids": {"limit": -1}}'
	assert_cg_file pids pids.max max
}

# --- hugepageLimits --------------------------------------------------------------------

@test "hugepageLimits: the 2MB limit (on a hybrid host: in the cgroup2 hierarchy)" {
	case $(cg_version hugetlb) in
	v1) requires_cg_file hugetlb hugetlb.2MB.limit_in_bytes ;;
	v2) requires_cg_file hugetlb hugetlb.2MB.max ;;
	*) skip "no hugetlb controller" ;;
	esac
	run_with_resources '{"hugepageLimits": [{"pageSize": "2MB", "limit": 4194304}]}'
	case $(cg_version hugetlb) in
	v1) assert_cg_file hugetlb hugetlb.2MB.limit_in_bytes 4194304 ;;
	v2)
		assert_cg_file hugetlb hugetlb.2MB.max 4194304
		if kernel_has hugetlb hugetlb.2MB.rsvd.max; then
			assert_cg_file hugetlb hugetlb.2MB.rsvd.max 4194304
		fi
		;;
	esac
}

@test "hugepageLimits: 1GB pages too" {
	case $(cg_version hugetlb) in
	v1) requires_cg_file hugetlb hugetlb.1GB.limit_in_bytes ;;
	v2) requires_cg_file hugetlb hugetlb.1GB.max ;;
	*) skip "no hugetlb controller" ;;
	esac
	run_with_resources '{"hugepageLimits": [{"pageSize": "1GB", "limit": 1073741824}]}'
	case $(cg_version hugetlb) in
	v1) assert_cg_file hugetlb hugetlb.1GB.limit_in_bytes 1073741824 ;;
	v2) assert_cg_file hugetlb hugetlb.1GB.max 1073741824 ;;
	esac
}

@test "hugepageLimits: a page size that is not a size is refused" {
	resources '{"hugepageLimits": [{"pageSize": "../2MB", "limit": 4194304}]}'
	create_refused "../2MB"
}

@test "hugepageLimits: a page size the kernel does not have is refused" {
	[[ $(cg_version hugetlb) != none ]] || skip "no hugetlb controller"
	resources '{"hugepageLimits": [{"pageSize": "64KB", "limit": 65536}]}'
	create_refused 64KB
}

# --- network (net_cls, net_prio: v1 only) --------------------------------------------------

@test "network.classID: net_cls, or a clear error where it is not mounted" {
	resources '{"network": {"classID": 1048577}}'
	if [[ $(cg_version net_cls) == v1 ]]; then
		create_running
		assert_cg_file net_cls net_cls.classid 1048577
	else
		create_refused classID
	fi
}

@test "network.priorities: net_prio, or a clear error where it is not mounted" {
	resources '{"network": {"priorities": [{"name": "lo", "priority": 5}]}}'
	if [[ $(cg_version net_prio) == v1 ]]; then
		create_running
		run cg_file net_prio net_prio.ifpriomap
		assert_output_contains "lo 5"
	else
		create_refused priorities
	fi
}

# --- rdma ---------------------------------------------------------------------------------

@test "rdma: a clear error without the controller or the device" {
	resources '{"rdma": {"mlx5_0": {"hcaHandles": 3, "hcaObjects": 10000}}}'
	if [[ $(cg_version rdma) != none ]] && [[ -d /sys/class/infiniband/mlx5_0 ]]; then
		create_running
		run cg_file rdma rdma.max
		assert_output_contains "mlx5_0 hca_handle=3 hca_object=10000"
	else
		# No rdma controller (this hybrid host), or one without the device
		# (the v2 VM): the kernel's answer, naming rdma.
		create_refused rdma
	fi
}

# --- unified ---------------------------------------------------------------------------------

@test "unified: raw cgroup2 files (pure v2)" {
	requires_pure_v2
	run_with_resources '{"unified": {"memory.high": "52428800", "pids.max": "7"}}'
	assert_cg_file memory memory.high 52428800
	assert_cg_file pids pids.max 7
}

@test "unified overrides the converted value of the same file" {
	requires_pure_v2
	run_with_resources '{"pids": {"limit": 42}, "unified": {"pids.max": "7"}}'
	assert_cg_file pids pids.max 7
}

@test "unified: a v1 controller's file is an error on a v1/hybrid host" {
	[[ $(cg_layout) != v2 ]] || skip "needs a v1 or hybrid host"
	resources '{"unified": {"memory.high": "52428800"}}'
	create_refused memory.high
}

@test "unified: on a hybrid host the cgroup2 hierarchy's own controllers work" {
	[[ $(cg_layout) == hybrid ]] || skip "needs a hybrid host (this one is $(cg_layout))"
	requires_cgroup_v2 hugetlb
	requires_cg_file hugetlb hugetlb.2MB.max
	run_with_resources '{"unified": {"hugetlb.2MB.max": "6291456"}}'
	assert_cg_file hugetlb hugetlb.2MB.max 6291456
}

@test "unified: interface files that move processes are refused" {
	[[ $(cg_layout) != v1 ]] || skip "no cgroup2 hierarchy"
	resources '{"unified": {"cgroup.procs": "1"}}'
	create_refused cgroup.procs
}

@test "unified: a file name with a slash is refused" {
	[[ $(cg_layout) != v1 ]] || skip "no cgroup2 hierarchy"
	resources '{"unified": {"../../cgroup.procs": "1"}}'
	create_refused cgroup.procs
}

# --- the cgroup itself ----------------------------------------------------------------------

@test "cgroupsPath: an absolute path is used as is, in every hierarchy" {
	local p=/sandrun-test-$$-$BATS_SUITE_TEST_NUMBER
	update_config --arg p "$p" '.linux.cgroupsPath = $p'
	create_running
	local d
	d=$(cg_dir "$(ct_pid)" pids)
	[[ $d == */sandrun-test-$$-$BATS_SUITE_TEST_NUMBER ]] || fail "pids cgroup at $d"
	runtime delete -f "$CID"
	[[ ! -d $d ]] || fail "$d left behind"
}

@test "cgroupsPath in use by a running container: joined with a warning, as runc does; delete leaves the other's processes" {
	# The dir is named $CID, so that teardown finds it whatever happens.
	update_config --arg p "/$CID" '.linux.cgroupsPath = $p'
	create_running
	local d first
	first=$(ct_pid)
	d=$(cg_dir "$first" pids)
	create_container "$CID-2"
	assert_success
	[[ $output == *warning*"already has"*process* ]] || fail "no warning: $output"
	local second
	second=$(ct_pid "$CID-2")
	[[ $(cg_dir "$second" pids) == "$d" ]] || fail "the second container is not in $d"
	run runtime delete -f "$CID-2"
	assert_success
	wait_pid_gone "$second"
	pid_alive "$first" || fail "deleting the second container killed the first"
	[[ -d $d ]] || fail "the shared cgroup was removed under the first container"
	[[ $(state_field "$CID" status) == running ]]
	runtime delete -f "$CID"
	[[ ! -d $d ]] || fail "$d left behind"
	assert_no_leftovers
}

@test "cgroupsPath: a cgroup frozen by someone else is refused at once, not waited on (runc refuses it too)" {
	local dir file
	if [[ -n $(cg_v1_mount freezer) ]]; then
		dir=$(cg_v1_mount freezer)/$CID file=freezer.state
	else
		dir=$(cg_v2_mount)/$CID file=cgroup.freeze
	fi
	mkdir "$dir"
	if [[ $file == freezer.state ]]; then echo FROZEN >"$dir/$file"; else echo 1 >"$dir/$file"; fi
	update_config --arg p "/$CID" '.linux.cgroupsPath = $p'
	RUNTIME_TIMEOUT=20 create_container "$CID"
	if [[ $file == freezer.state ]]; then echo THAWED >"$dir/$file"; else echo 0 >"$dir/$file"; fi
	((status != 124 && status != 137)) || fail "create hung on the frozen cgroup"
	assert_failure
	[[ $output == *frozen* ]] || fail "message: $output"
	assert_no_container "$CID"
	rmdir "$dir"
}

@test "cgroups: delete removes the container's cgroup from every hierarchy" {
	run_with_resources '{"memory": {"limit": 67108864}, "pids": {"limit": 100}}'
	local pid dirs=() line ctrls
	pid=$(ct_pid)
	while IFS= read -r line; do
		ctrls=${line#*:}
		ctrls=${ctrls%%:*}
		dirs+=("$(cg_dir "$pid" "$ctrls")")
	done <"/proc/$pid/cgroup"
	runtime delete -f "$CID"
	local d
	for d in "${dirs[@]}"; do
		[[ ! -d $d ]] || fail "$d left behind"
	done
	assert_no_leftovers
}

# On a hybrid host a controller enabled in the cgroup2 hierarchy is lost to
# cgroup v1 (and crun refuses to run on such a host): sandrun enables one
# only for a resource that needs it (docs/cgroups.md).
@test "cgroups (hybrid): a cgroup2 controller is enabled on the way down only when a resource needs it" {
	[[ $(cg_layout) == hybrid ]] || skip "needs a hybrid host (this one is $(cg_layout))"
	local v2 parent
	v2=$(cg_v2_mount)
	parent=$v2/$CID
	update_config --arg p "/$CID/c" '.linux.cgroupsPath = $p'
	create_running
	[[ -z $(<"$parent/cgroup.subtree_control") ]] ||
		fail "enabled without need: $(<"$parent/cgroup.subtree_control")"
	runtime delete -f "$CID"
	rmdir "$parent"
	[[ " $(<"$v2/cgroup.controllers") " == *" hugetlb "* ]] || skip "no hugetlb on cgroup2 here"
	[[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]] || skip "no 2MB huge pages"
	resources '{"hugepageLimits": [{"pageSize": "2MB", "limit": 0}]}'
	create_running
	[[ " $(<"$parent/cgroup.subtree_control") " == *" hugetlb "* ]] ||
		fail "hugetlb not enabled for hugepageLimits: $(<"$parent/cgroup.subtree_control")"
	runtime delete -f "$CID"
	rmdir "$parent"
}

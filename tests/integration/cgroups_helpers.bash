# Helpers of the cgroup suites (cgroups*.bats, update.bats, pause.bats,
# events.bats).  They find a container's cgroup from the host side, through
# /proc/PID/cgroup of its init, so they work with any runtime and any
# layout: pure v2, v1, or hybrid (v1 controllers plus a cgroup2 hierarchy,
# e.g. hugetlb only, at /sys/fs/cgroup/unified).
#
# The same files run on a v1/hybrid host and inside tools/vm-run (pure v2);
# a test that needs one layout skips clearly on the other.

# The suites' hooks: the host's hierarchies parsed once per file, a fresh
# bundle per test.  A file with more to do defines its own after `load`.
setup_file() {
	cg_cache_init
}

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

# The host's hierarchies, parsed once (bash only: every fork counts under
# vm-run's emulation) and exported, so that setup_file can fill the cache
# for all the tests of a file:
#   CG_V1_MOUNTS  " ctrl=mountpoint ..." for every v1 controller/name
#   CG_V2_MOUNT   the cgroup2 mount point ("" when none)
#   CG_V2_CTRLS   " ctrl ... " offered by the cgroup2 root
cg_cache_init() {
	[[ -n ${CG_CACHE_DONE:-} ]] && return 0
	local line pre post fields fstype super o
	CG_V1_MOUNTS=" "
	CG_V2_MOUNT=
	while IFS= read -r line; do
		pre=${line%% - *}
		post=${line#* - }
		read -r fstype _ super <<<"$post"
		read -ra fields <<<"$pre"
		case $fstype in
		cgroup)
			local IFS=,
			for o in $super; do
				[[ $o == rw || $o == ro || $o == relatime || $o == clone_children ]] ||
					CG_V1_MOUNTS+="$o=${fields[4]} "
			done
			unset IFS
			;;
		cgroup2) [[ -n $CG_V2_MOUNT ]] || CG_V2_MOUNT=${fields[4]} ;;
		esac
	done </proc/self/mountinfo
	CG_V2_CTRLS=" "
	if [[ -n $CG_V2_MOUNT && -r $CG_V2_MOUNT/cgroup.controllers ]]; then
		CG_V2_CTRLS+="$(<"$CG_V2_MOUNT/cgroup.controllers") "
	fi
	CG_CACHE_DONE=1
	export CG_V1_MOUNTS CG_V2_MOUNT CG_V2_CTRLS CG_CACHE_DONE
}

# cg_v1_mount CONTROLLER: the mount point of the v1 hierarchy that carries
# CONTROLLER ("memory", "cpu", "name=systemd"), empty when none.
cg_v1_mount() {
	cg_cache_init
	local rest=${CG_V1_MOUNTS#* "$1"=}
	[[ $rest != "$CG_V1_MOUNTS" ]] && echo "${rest%% *}"
	return 0
}

# cg_v2_mount: the mount point of the cgroup2 hierarchy, empty when none.
cg_v2_mount() {
	cg_cache_init
	echo "$CG_V2_MOUNT"
}

# cg_version CONTROLLER: v1 when a v1 hierarchy carries it, v2 when the
# cgroup2 hierarchy offers it, else none.
cg_version() {
	cg_cache_init
	if [[ $CG_V1_MOUNTS == *" $1="* ]]; then
		echo v1
	elif [[ -n $CG_V2_MOUNT && $CG_V2_CTRLS == *" $1 "* ]]; then
		echo v2
	else
		echo none
	fi
}

# The host's layout: v2 (cgroup2 at /sys/fs/cgroup), hybrid or v1.
cg_layout() {
	cg_cache_init
	if [[ $CG_V2_MOUNT == /sys/fs/cgroup ]]; then
		echo v2
	elif [[ -n $CG_V2_MOUNT ]]; then
		echo hybrid
	else
		echo v1
	fi
}

# requires_cgroup_v2 / requires_cgroup_v1 CONTROLLER: skip unless the
# controller is handled the v2 (or the v1) way on this host.
requires_cgroup_v2() {
	[[ $(cg_version "$1") == v2 ]] || skip "needs cgroup v2 ($1 is $(cg_version "$1") here)"
}

requires_cgroup_v1() {
	[[ $(cg_version "$1") == v1 ]] || skip "needs cgroup v1 ($1 is $(cg_version "$1") here)"
}

requires_pure_v2() {
	[[ $(cg_layout) == v2 ]] || skip "needs a pure cgroup v2 host (this one is $(cg_layout))"
}

# cg_dir PID CONTROLLER: the host path of PID's cgroup in the hierarchy
# that carries CONTROLLER (v1 first, else cgroup2; "" for cgroup2).
cg_dir() {
	local pid=$1 ctrl=$2 mnt= rel= line ctrls
	[[ -z $ctrl ]] || mnt=$(cg_v1_mount "$ctrl")
	[[ -n $mnt ]] || ctrl=
	[[ -n $mnt ]] || mnt=$(cg_v2_mount)
	while IFS= read -r line; do
		line=${line#*:}
		ctrls=${line%%:*}
		if [[ -z $ctrl && -z $ctrls ]] || [[ -n $ctrl && ,$ctrls, == *",$ctrl,"* ]]; then
			rel=${line#*:}
			break
		fi
	done <"/proc/$pid/cgroup"
	[[ -n $mnt && -n $rel ]] || {
		echo "no ${ctrl:-cgroup2} cgroup for pid $pid" >&2
		return 1
	}
	echo "$mnt${rel%/}"
}

# ct_pid [ID]: the init pid of a container.
ct_pid() {
	runtime state "${1:-$CID}" | jq -r .pid
}

# cg_file CONTROLLER FILE [ID]: the content of FILE in the container's
# cgroup of CONTROLLER.
cg_file() {
	local d
	d=$(cg_dir "$(ct_pid "${3:-$CID}")" "$1") || return 1
	cat "$d/$2"
}

# assert_cg_file CONTROLLER FILE EXPECTED [ID]
assert_cg_file() {
	local got
	got=$(cg_file "$1" "$2" "${4:-$CID}") || fail "cannot read $2 of ${4:-$CID}"
	[[ $got == "$3" ]] || fail "$2: expected '$3', got '$got'"
}

# resources JSON: merge JSON into linux.resources of the bundle.
resources() {
	update_config --argjson r "$1" '.linux.resources += $r'
}

# run_with_resources JSON: create + start `sleep 1000` with those resources.
run_with_resources() {
	resources "$1"
	create_running
}

# create_refused WORD...: create fails with one error line mentioning each
# WORD and leaves nothing behind.
create_refused() {
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line "$@"
	assert_no_leftovers
}

# kernel_has CONTROLLER FILE: the kernel offers FILE for CONTROLLER, in a
# probe cgroup made and removed right away (many files, e.g. BFQ's weights
# or most cgroup2 files, do not exist in a hierarchy's root).
kernel_has() {
	local mnt probe r=1
	case $(cg_version "$1") in
	v1) mnt=$(cg_v1_mount "$1") ;;
	v2) mnt=$(cg_v2_mount) ;;
	*) return 1 ;;
	esac
	[[ -e $mnt/$2 ]] && return 0
	probe=$mnt/sandrun-probe-$$-$BASHPID
	mkdir "$probe" 2>/dev/null || return 1
	[[ -e $probe/$2 ]] && r=0
	rmdir "$probe"
	return $r
}

requires_cg_file() {
	kernel_has "$1" "$2" || skip "kernel lacks the $1 file $2"
}

# --- loop devices (blockIO) -----------------------------------------------

# make_loop: a 16 MiB loop device for this test ($LOOP, $LOOP_MAJMIN);
# detached by drop_loop in teardown.
make_loop() {
	command -v losetup >/dev/null || skip "losetup is missing"
	[[ -e /dev/loop-control ]] || modprobe loop 2>/dev/null || true
	truncate -s 16M "$BATS_TEST_TMPDIR/loop.img"
	LOOP=$(losetup -f --show "$BATS_TEST_TMPDIR/loop.img" 2>"$BATS_TEST_TMPDIR/losetup.err") ||
		skip "cannot set up a loop device: $(cat "$BATS_TEST_TMPDIR/losetup.err")"
	LOOP_MAJMIN=$(lsblk -dno MAJ:MIN "$LOOP" | tr -d ' ')
	export LOOP LOOP_MAJMIN
}

drop_loop() {
	[[ -n ${LOOP:-} ]] || return 0
	losetup -d "$LOOP" 2>/dev/null || true
	LOOP=
}

loop_major() { echo "${LOOP_MAJMIN%%:*}"; }
loop_minor() { echo "${LOOP_MAJMIN##*:}"; }

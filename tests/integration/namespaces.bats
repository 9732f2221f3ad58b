#!/usr/bin/env bats
# Namespaces: new ones, joined ones (by path), the user namespace with its
# mappings, the time namespace with its offsets, and linux.sysctl (refused
# for a namespace the container does not own).

load helpers

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

# ns_inode TYPE: the host's (this shell's) namespace of TYPE.
ns_inode() {
	readlink "/proc/self/ns/$1"
}

# print_ns TYPE...: shell code printing "TYPE ns-link" for each TYPE.
print_ns() {
	local t code=''
	for t in "$@"; do
		code+="echo \"$t \$(readlink /proc/self/ns/$t)\"; "
	done
	echo "$code"
}

userns_mappings='.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
	| .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'

@test "new namespaces: pid, network, ipc, uts, mount, cgroup differ from the host's" {
	update_config '.linux.namespaces += [{"type": "cgroup"}]'
	run_in_container "$(print_ns pid net ipc uts mnt cgroup)"
	assert_success
	local t
	for t in pid net ipc uts mnt cgroup; do
		local inside
		inside=$(awk -v t="$t" '$1 == t {print $2}' <<<"$output")
		[[ -n $inside ]] || fail "no $t in: $output"
		[[ $inside != "$(ns_inode "$t")" ]] || fail "$t namespace is the host's: $inside"
	done
}

@test "a namespace left out of the config is the host's" {
	update_config '.linux.namespaces |= map(select(.type != "network" and .type != "ipc"))'
	run_in_container "$(print_ns net ipc uts)"
	assert_success
	[[ $(awk '$1 == "net" {print $2}' <<<"$output") == "$(ns_inode net)" ]] || fail "$output"
	[[ $(awk '$1 == "ipc" {print $2}' <<<"$output") == "$(ns_inode ipc)" ]] || fail "$output"
	[[ $(awk '$1 == "uts" {print $2}' <<<"$output") != "$(ns_inode uts)" ]] || fail "$output"
}

@test "network namespace: only a loopback interface" {
	run_in_container 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
	assert_success
	assert_output_equals lo
}

@test "pid namespace: only the container's processes are visible" {
	run_in_container 'ls /proc | grep -E "^[0-9]+$" | sort -n | tr "\n" " "'
	assert_success
	# sh (1), ls, grep, sort, tr: all low numbers of the new namespace
	local p
	for p in $output; do
		((p < 10)) || fail "a host process is visible: $p (all: $output)"
	done
}

@test "cgroup namespace: the container sees its cgroup as the root" {
	update_config '.linux.namespaces += [{"type": "cgroup"}]'
	run_in_container 'cat /proc/self/cgroup'
	assert_success
	local line
	while IFS= read -r line; do
		[[ $line == *:/ ]] || fail "cgroup path not / inside: $line (all: $output)"
	done <<<"$output"
}

@test "join by path: network, ipc and uts of a running container" {
	create_running "$CID"
	local pid
	pid=$(state_field "$CID" pid)
	update_config --arg p "/proc/$pid/ns" '.linux.namespaces |= map(
		if .type == "network" then .path = ($p + "/net")
		elif .type == "ipc" then .path = ($p + "/ipc")
		elif .type == "uts" then .path = ($p + "/uts")
		else . end) | del(.hostname)'
	set_cmd "$(print_ns net ipc uts pid)"
	run runtime run -b "$BUNDLE" "$CID-b"
	assert_success
	local t
	for t in net ipc uts; do
		[[ $(awk -v t="$t" '$1 == t {print $2}' <<<"$output") == "$(readlink "/proc/$pid/ns/$t")" ]] ||
			fail "$t not joined: $output"
	done
	# pid was not joined: a namespace of its own
	[[ $(awk '$1 == "pid" {print $2}' <<<"$output") != "$(readlink "/proc/$pid/ns/pid")" ]] || fail "$output"
}

@test "join by path: the pid namespace of a running container" {
	create_running "$CID"
	local pid
	pid=$(state_field "$CID" pid)
	update_config --arg p "/proc/$pid/ns/pid" '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)'
	set_cmd 'ls /proc | grep -E "^[0-9]+$" | sort -n | head -1'
	run runtime run -b "$BUNDLE" "$CID-b"
	assert_success
	# the first container's init (pid 1) is visible from the second
	assert_output_equals 1
}

@test "a namespace type given twice is refused" {
	update_config '.linux.namespaces += [{"type": "network"}]'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line
	assert_no_leftovers
}

@test "an unknown namespace type is refused" {
	update_config '.linux.namespaces += [{"type": "no-such-ns"}]'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line no-such-ns
	assert_no_leftovers
}

@test "user namespace: mappings written, root inside is an unprivileged uid outside" {
	bundle_traversable
	update_config '.linux.namespaces += [{"type": "user"}]'
	update_config "$userns_mappings"
	set_cmd 'cat /proc/self/uid_map /proc/self/gid_map; id -u; sleep 1000'
	create_container "$CID"
	assert_success
	runtime start "$CID"
	wait_output "$CID" "0"
	local pid
	pid=$(state_field "$CID" pid)
	sleep 0.3
	run cat "$(ct_out "$CID")"
	[[ $(echo ${lines[0]}) == "0 100000 65536" ]] || fail "uid_map: $output"
	[[ $(echo ${lines[1]}) == "0 100000 65536" ]] || fail "gid_map: $output"
	[[ ${lines[2]} == 0 ]] || fail "id: $output"
	# Seen from the host, the process runs as uid 100000.
	[[ $(awk '/^Uid:/ {print $2}' "/proc/$pid/status") == 100000 ]] || fail "host uid: $(grep Uid "/proc/$pid/status")"
	[[ $(readlink "/proc/$pid/ns/user") != "$(ns_inode user)" ]]
}

@test "user namespace: files of host root show as nobody, the devices still work" {
	bundle_traversable
	update_config '.linux.namespaces += [{"type": "user"}]'
	update_config "$userns_mappings"
	run_in_container 'stat -c %u /bin/busybox; echo x >/dev/null && head -c 1 /dev/zero | wc -c'
	assert_success
	[[ ${lines[0]} == 65534 && ${lines[1]} == 1 ]] || fail "$output"
}

@test "user namespace without mappings is refused" {
	update_config '.linux.namespaces += [{"type": "user"}]'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line
	assert_no_leftovers
}

@test "time namespace: boottime and monotonic offsets" {
	requires_kernel_file /proc/self/ns/time
	update_config '.linux.namespaces += [{"type": "time"}]
		| .linux.timeOffsets = {"boottime": {"secs": 172800, "nanosecs": 0}, "monotonic": {"secs": 86400}}'
	local before
	before=$(cut -d. -f1 /proc/uptime)
	run_in_container 'cut -d. -f1 /proc/uptime; readlink /proc/self/ns/time'
	assert_success
	local up=${lines[0]}
	((up >= before + 172800 && up < before + 172800 + 60)) || fail "uptime $up, host $before"
	[[ ${lines[1]} != "$(ns_inode time)" ]] || fail "time namespace is the host's"
}

@test "sysctl: network and ipc values are set inside only" {
	local host_fwd host_msgmax
	host_fwd=$(cat /proc/sys/net/ipv4/ip_forward)
	host_msgmax=$(cat /proc/sys/kernel/msgmax)
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.msgmax": "4242",
		"net/ipv4/tcp_syncookies": "0"}'
	run_in_container 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/msgmax /proc/sys/net/ipv4/tcp_syncookies'
	assert_success
	[[ $output == $'1\n4242\n0' ]] || fail "$output"
	[[ $(cat /proc/sys/net/ipv4/ip_forward) == "$host_fwd" ]]
	[[ $(cat /proc/sys/kernel/msgmax) == "$host_msgmax" ]]
}

@test "sysctl: a net.* value without a network namespace of its own is refused" {
	update_config '.linux.namespaces |= map(select(.type != "network"))
		| .linux.sysctl = {"net.ipv4.ip_forward": "0"}'
	local host_fwd
	host_fwd=$(cat /proc/sys/net/ipv4/ip_forward)
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line net.ipv4.ip_forward
	[[ $(cat /proc/sys/net/ipv4/ip_forward) == "$host_fwd" ]]
	assert_no_leftovers
}

# run_in_private_mntns: `run` the bundle with $RUNTIME inside a private mount
# namespace of the test's own (never the host's: a runtime that set up the
# rootfs there would replace its root), and report from inside it what the
# run left of the caller's mount namespace.
run_in_private_mntns() {
	run --separate-stderr unshare -m --propagation private -- sh -c '
		before=$(cat /proc/self/mountinfo)
		timeout 60 "$1" --root "$2" run -b "$3" "$4" </dev/null; echo "status $?"
		echo "root $(stat -c %d:%i /)"
		[ "$(cat /proc/self/mountinfo)" = "$before" ] && echo "mounts unchanged"
		[ -x "$1" ] && echo "runtime reachable"' _ "$RUNTIME" "$ROOT" "$BUNDLE" "$CID"
}

@test "mount namespace: a config without a new one is refused at once (one line, exit 1), the caller's mounts untouched" {
	local expected
	expected="status 1
root $(stat -c %d:%i /)
mounts unchanged
runtime reachable"
	update_config '.linux.namespaces |= map(select(.type != "mount"))'
	run_in_private_mntns
	assert_success
	assert_output_equals "$expected"
	assert_one_error_line "sandrun: run \"$CID\": linux.namespaces: a mount namespace is required" \
		"never changes the mount table of a namespace it did not create"
	assert_no_leftovers

	# Joining one by path is refused alike: it is not sandrun's either.
	update_config '.linux.namespaces += [{"type": "mount", "path": "/proc/self/ns/mnt"}]'
	run_in_private_mntns
	assert_success
	assert_output_equals "$expected"
	assert_one_error_line "joining the mount namespace \"/proc/self/ns/mnt\" is not supported"
	assert_no_leftovers
}

@test "sysctl: an ipc value without an ipc namespace of its own is refused" {
	update_config '.linux.namespaces |= map(select(.type != "ipc"))
		| .linux.sysctl = {"kernel.msgmax": "4242"}'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line kernel.msgmax
	assert_no_leftovers
}

@test "sysctl: a value not namespaced at all is refused" {
	local host
	host=$(cat /proc/sys/vm/swappiness)
	update_config '.linux.sysctl = {"vm.swappiness": "7"}'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line vm.swappiness
	[[ $(cat /proc/sys/vm/swappiness) == "$host" ]]
	assert_no_leftovers
}

@test "sysctl: a name climbing out of /proc/sys is refused" {
	update_config '.linux.sysctl = {"net/../../../proc/self/oom_score_adj": "1"}'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_no_leftovers
}

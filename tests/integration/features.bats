#!/usr/bin/env bats
# `features` (runtime-spec features.md): the document is checked against
# behaviour, so it cannot drift from the code: every namespace, mount
# option, capability, seccomp action/operator/architecture/flag, hook kind
# and memory policy it lists works in a real container, and what it says is
# unsupported is refused.

load helpers
load idmap_helpers

setup() {
	setup_bundle
	FEATURES=$(runtime features) || fail "features failed"
	cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/config.orig"
}

teardown() {
	stop_listener
	teardown_bundle
	idmap_teardown
}

# feature JQ-FILTER: values of the features document, one per line.
feature() {
	jq -r "$1" <<<"$FEATURES"
}

reset_config() {
	cp "$BATS_TEST_TMPDIR/config.orig" "$BUNDLE/config.json"
}

# run_true: the container runs `true` and leaves nothing behind.
run_true() {
	set_args true
	run --separate-stderr runtime run -b "$BUNDLE" "$CID"
	[[ $status -eq 0 ]] || fail "$1: status $status: $stderr"
	assert_no_leftovers
}

@test "features: one JSON document with the runtime-spec fields" {
	run runtime features
	assert_success
	jq -e '.ociVersionMin and .ociVersionMax and (.hooks | length > 0)
		and (.mountOptions | length > 0) and .linux.namespaces
		and .linux.capabilities and .linux.cgroup and .linux.seccomp
		and .annotations["run.oci.sandrun.version"]
		and (.potentiallyUnsafeConfigAnnotations == [])' <<<"$output" >/dev/null ||
		fail "missing fields: $output"
	# Indented like runc's (4 spaces).
	[[ ${lines[1]} == '    "ociVersionMin": "1.0.0",' ]] || fail "layout: ${lines[1]}"
	run runtime features extra
	assert_failure
}

@test "features: ociVersionMin and ociVersionMax are accepted, beyond is not" {
	local v
	for v in "$(feature .ociVersionMin)" "$(feature .ociVersionMax)"; do
		update_config --arg v "$v" '.ociVersion = $v'
		run_true "ociVersion $v"
	done
	update_config '.ociVersion = "1.99.0"'
	run --separate-stderr runtime run -b "$BUNDLE" "$CID"
	assert_failure
}

@test "features: every namespace listed works" {
	local ns
	for ns in $(feature '.linux.namespaces[]'); do
		reset_config
		case $ns in
		time) requires_kernel_file /proc/self/timens_offsets ;;
		user)
			# Identity-mapped: the bundle sits under bats' 0700 directories.
			update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]
				| .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]'
			;;
		esac
		update_config --arg t "$ns" '.linux.namespaces |= (map(select(.type != $t)) + [{"type": $t}])'
		run_true "namespace $ns"
	done
}

@test "features: every mount option listed is accepted by a container mount" {
	local opt mounts='[]'
	mkdir -p "$BATS_TEST_TMPDIR/src"
	for opt in $(feature '.mountOptions[]'); do
		case $opt in
		bind | rbind)
			mounts=$(jq --arg o "$opt" --arg s "$BATS_TEST_TMPDIR/src" \
				'. + [{"destination": ("/mnt/" + $o), "type": "none", "source": $s, "options": [$o]}]' <<<"$mounts")
			;;
		idmap | ridmap)
			# A bind with mappings, of a filesystem the kernel can idmap.
			make_idmap_fs "$(idmap_fs_root)/$opt"
			mounts=$(jq --arg o "$opt" --arg s "$(idmap_fs_root)/$opt" \
				'. + [{"destination": ("/mnt/" + $o), "type": "none", "source": $s, "options": ["rbind", $o],
					"uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
					"gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}]}]' <<<"$mounts")
			;;
		remount)
			mounts=$(jq '. + [{"destination": "/mnt/remount", "type": "tmpfs", "source": "tmpfs"},
				{"destination": "/mnt/remount", "type": "tmpfs", "source": "tmpfs", "options": ["remount", "ro"]}]' <<<"$mounts")
			;;
		*)
			mounts=$(jq --arg o "$opt" \
				'. + [{"destination": ("/mnt/" + $o), "type": "tmpfs", "source": "tmpfs", "options": [$o]}]' <<<"$mounts")
			;;
		esac
	done
	update_config --argjson m "$mounts" '.mounts += $m'
	run_true "mount options"
}

@test "features: mount options not listed are refused (idmap, ridmap)" {
	local opt
	for opt in idmap ridmap; do
		feature '.mountOptions[]' | grep -qx "$opt" && continue
		reset_config
		update_config --arg o "$opt" '.mounts += [{"destination": "/mnt", "type": "bind", "source": "/tmp", "options": ["rbind", $o]}]'
		run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
		assert_failure
		assert_one_error_line "$opt"
		assert_no_leftovers
	done
}

@test "features: mountExtensions.idmap enabled means an idmapped bind mount works" {
	[[ $(feature .linux.mountExtensions.idmap.enabled) == true ]] || skip "idmapped mounts not supported"
	make_idmap_fs "$(idmap_fs_root)/src"
	update_config --arg s "$(idmap_fs_root)/src" '.mounts += [{"destination": "/mnt", "type": "bind", "source": $s,
		"options": ["rbind", "idmap"],
		"uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
		"gidMappings": [{"containerID": 0, "hostID": 2000, "size": 1}]}]'
	set_args stat -c %u:%g /mnt
	run runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_equals 1000:2000
}

@test "features: mountExtensions.idmap disabled means uidMappings are refused" {
	[[ $(feature .linux.mountExtensions.idmap.enabled) == false ]] || skip "idmapped mounts supported"
	update_config '.mounts += [{"destination": "/mnt", "type": "bind", "source": "/tmp", "options": ["rbind"],
		"uidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}],
		"gidMappings": [{"containerID": 0, "hostID": 1000, "size": 1}]}]'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line /mnt
	assert_no_leftovers
}

@test "features: every capability listed is recognised, and granted when the host has it" {
	local all usable mask host c
	host=$(awk '/^CapBnd/ { print $2 }' /proc/self/status)
	all=$(feature '.linux.capabilities' | jq -c .)
	usable=()
	for c in $(feature '.linux.capabilities[]'); do
		(((0x$host >> $(cap_number "$c")) & 1)) && usable+=("$c")
	done
	mask=$(cap_mask "${usable[@]}")
	# Bounding names them all: one the host lacks is simply not there.
	update_config --argjson a "$all" --argjson u "$(json_array "${usable[@]}")" \
		'.process.capabilities = {"bounding": $a, "effective": $u, "permitted": $u}'
	run_in_container 'grep CapEff /proc/self/status'
	assert_success
	local got=${output##*:}
	got=${got//[[:space:]]/}
	(((0x$got & 0x$mask) == 0x$mask)) || fail "CapEff $got lacks some of $mask"
}

# A rule with every argument comparison `op` on a syscall the container never
# makes, so that loading it is all that is tested.
seccomp_rule() {
	jq -n --arg a "$1" --arg op "${2:-SCMP_CMP_EQ}" \
		'{"names": ["mincore"], "action": $a, "args": [{"index": 0, "value": 1, "valueTwo": 1, "op": $op}]}'
}

# start_listener: a seccomp agent that takes the notify fd and keeps it.
start_listener() {
	LISTENER=$BATS_TEST_TMPDIR/listener.sock
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(8)
while True:
    c, _ = s.accept()
    c.recvmsg(65536, socket.CMSG_SPACE(64))
' "$LISTENER" &
	LISTENER_PID=$!
	local tries=50
	while [[ ! -S $LISTENER ]] && ((tries-- > 0)); do sleep 0.1; done
	[[ -S $LISTENER ]] || fail "listener did not start"
}

stop_listener() {
	[[ -n ${LISTENER_PID:-} ]] || return 0
	kill "$LISTENER_PID" 2>/dev/null || true
	wait "$LISTENER_PID" 2>/dev/null || true
	LISTENER_PID=
}

@test "features: every seccomp action and operator listed loads" {
	local a op rule
	start_listener
	for a in $(feature '.linux.seccomp.actions[]'); do
		[[ $a == SCMP_ACT_ALLOW ]] && continue # the default action below
		reset_config
		rule=$(seccomp_rule "$a")
		update_config --argjson r "$rule" --arg l "$LISTENER" \
			'.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $l, "syscalls": [$r]}'
		run_true "seccomp action $a"
	done
	for op in $(feature '.linux.seccomp.operators[]'); do
		reset_config
		rule=$(seccomp_rule SCMP_ACT_ERRNO "$op")
		update_config --argjson r "$rule" '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [$r]}'
		run_true "seccomp operator $op"
	done
}

@test "features: every seccomp architecture and supported flag listed loads" {
	local arch flag rule
	rule=$(seccomp_rule SCMP_ACT_ERRNO)
	# Each alone: libseccomp cannot join architectures of the other
	# endianness to the native one, but must still know every name.
	for arch in $(feature '.linux.seccomp.archs[]'); do
		reset_config
		update_config --argjson r "$rule" --arg a "$arch" \
			'.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": [$a], "syscalls": [$r]}'
		set_args true
		run --separate-stderr runtime run -b "$BUNDLE" "$CID"
		if [[ $status -ne 0 ]]; then
			[[ $stderr == *"$arch"* && $stderr != *unknown* ]] || fail "$arch: $stderr"
		fi
		assert_no_leftovers
	done
	start_listener
	for flag in $(feature '.linux.seccomp.supportedFlags[]'); do
		reset_config
		# SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV only goes with a listener.
		rule=$(seccomp_rule SCMP_ACT_NOTIFY)
		update_config --argjson r "$rule" --arg f "$flag" --arg l "$LISTENER" \
			'.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "flags": [$f], "listenerPath": $l, "syscalls": [$r]}'
		run_true "seccomp flag $flag"
	done
	# Known but not supported: refused, never ignored.
	for flag in $(jq -rn --argjson f "$FEATURES" \
		'$f.linux.seccomp.knownFlags - $f.linux.seccomp.supportedFlags | .[]'); do
		reset_config
		update_config --arg f "$flag" '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "flags": [$f]}'
		run --separate-stderr runtime run -b "$BUNDLE" "$CID"
		assert_failure
	done
}

@test "features: every hook kind listed runs" {
	local out=$BATS_TEST_TMPDIR/hooks kind hooks='{}'
	mkdir -p "$out"
	for kind in $(feature '.hooks[]'); do
		local target="$out/$kind"
		# startContainer runs in the container: the directory is mounted there.
		[[ $kind == startContainer ]] && target="/hooks/$kind"
		hooks=$(jq --arg k "$kind" --arg t "$target" \
			'.[$k] = [{"path": "/bin/sh", "args": ["sh", "-c", ("echo ran > " + $t)]}]' <<<"$hooks")
	done
	update_config --argjson h "$hooks" --arg o "$out" \
		'.hooks = $h | .mounts += [{"destination": "/hooks", "type": "bind", "source": $o, "options": ["rbind"]}]'
	run_true "hooks"
	for kind in $(feature '.hooks[]'); do
		[[ -s $out/$kind ]] || fail "hook $kind did not run"
	done
}

@test "features: every memory policy mode and flag listed is accepted" {
	[[ -e /sys/devices/system/node/node0 ]] || skip "kernel without NUMA"
	local mode flag nodes
	for mode in $(feature '.linux.memoryPolicy.modes[]'); do
		reset_config
		nodes=0
		[[ $mode == MPOL_DEFAULT || $mode == MPOL_LOCAL ]] && nodes=
		update_config --arg m "$mode" --arg n "$nodes" '.linux.memoryPolicy = {"mode": $m, "nodes": $n}'
		run_true "memory policy $mode"
	done
	for flag in $(feature '.linux.memoryPolicy.flags[]'); do
		reset_config
		update_config --arg f "$flag" '.linux.memoryPolicy = {"mode": "MPOL_BIND", "nodes": "0", "flags": [$f]}'
		run_true "memory policy flag $flag"
	done
}

@test "features: what is not enabled is refused" {
	if [[ $(feature .linux.intelRdt.enabled) == false ]]; then
		update_config '.linux.intelRdt = {"closID": "sandrun-test"}'
		run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
		assert_failure
		assert_one_error_line intelRdt
		assert_no_leftovers
	fi
	if [[ $(feature .linux.cgroup.systemd) == false ]]; then
		reset_config
		run --separate-stderr timeout --kill-after=5 "$RUNTIME_TIMEOUT" "$RUNTIME" --root "$ROOT" \
			--systemd-cgroup create -b "$BUNDLE" "$CID" </dev/null
		assert_failure
		assert_one_error_line systemd
		assert_no_leftovers
	fi
}

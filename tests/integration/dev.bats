#!/usr/bin/env bats
# /dev inside the container: the default devices, the symlinks, /dev/pts and
# /dev/ptmx, linux.devices, and nothing of the host's.

load helpers

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

@test "/dev: the default character devices with their numbers and mode 0666" {
	run_in_container 'for d in null zero full random urandom tty; do
		stat -c "%n %F %t:%T %a" /dev/$d; done'
	assert_success
	local want=("/dev/null 1:3" "/dev/zero 1:5" "/dev/full 1:7" "/dev/random 1:8"
		"/dev/urandom 1:9" "/dev/tty 5:0") w name num line
	for w in "${want[@]}"; do
		name=${w% *}
		num=${w#* }
		line=$(grep "^$name " <<<"$output") || fail "$name missing: $output"
		[[ $line == "$name character special file $num 666" ]] || fail "got '$line', want $num 666"
	done
}

@test "/dev: the devices work" {
	run_in_container 'echo "null:$(cat /dev/null | wc -c)"
		echo "zero:$(head -c 4 /dev/zero | od -An -tx1 | tr -d " ")"
		echo "urandom:$(head -c 16 /dev/urandom | wc -c)"
		echo x 2>/dev/null >/dev/full || echo "full: refused"
		echo discarded >/dev/null && echo "null: writable"'
	assert_success
	[[ $output == *null:0* && $output == *zero:00000000* && $output == *urandom:16* ]] || fail "$output"
	[[ $output == *"full: refused"* && $output == *"null: writable"* ]] || fail "$output"
}

@test "/dev: fd, stdin, stdout, stderr symlinks and ptmx -> pts/ptmx" {
	run_in_container 'for l in fd stdin stdout stderr ptmx; do echo "$l -> $(readlink /dev/$l)"; done'
	assert_success
	grep -qx 'fd -> /proc/self/fd' <<<"$output"
	grep -qx 'stdin -> /proc/self/fd/0' <<<"$output"
	grep -qx 'stdout -> /proc/self/fd/1' <<<"$output"
	grep -qx 'stderr -> /proc/self/fd/2' <<<"$output"
	grep -qx 'ptmx -> pts/ptmx' <<<"$output"
}

@test "/dev/pts: a new instance, and /dev/ptmx opens a pty in it" {
	run_in_container 'ls /dev/pts; stat -c "%t:%T" /dev/pts/ptmx'
	assert_success
	[[ ${lines[0]} == ptmx ]] || fail "host ptys visible or ptmx missing: $output"
	[[ ${lines[1]} == 5:2 ]] || fail "$output"
}

@test "/dev: nothing but the runtime's devices (no host device leaks in)" {
	run_in_container 'ls -A /dev'
	assert_success
	local allowed=" console core fd full mqueue null ptmx pts random shm stderr stdin stdout tty urandom zero "
	local e
	for e in $output; do
		[[ $allowed == *" $e "* ]] || fail "unexpected /dev entry: $e (all: $output)"
	done
}

@test "/dev/tty exists but there is no controlling terminal without process.terminal" {
	run_in_container '[ -c /dev/tty ] && echo present; (exec 3</dev/tty) 2>/dev/null || echo "no ctty"'
	assert_success
	[[ $output == $'present\nno ctty' ]] || fail "$output"
}

@test "linux.devices: a character device with mode, uid and gid" {
	update_config '.linux.devices = [{"path": "/dev/mynull", "type": "c", "major": 1, "minor": 3,
		"fileMode": 384, "uid": 1000, "gid": 1001}]
		| .linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"}]
		| .process.user = {"uid": 1000, "gid": 1001}'
	# Written by its owner: root in the container has no CAP_DAC_OVERRIDE.
	run_in_container 'stat -c "%F %t:%T %a %u:%g" /dev/mynull; echo x >/dev/mynull && echo writable'
	assert_success
	[[ ${lines[0]} == "character special file 1:3 600 1000:1001" ]] || fail "$output"
	[[ ${lines[1]} == writable ]] || fail "$output"
}

@test "linux.devices: a device in a subdirectory of /dev that does not exist" {
	update_config '.linux.devices = [{"path": "/dev/sub/dir/zero", "type": "c", "major": 1, "minor": 5}]
		| .linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 5, "access": "rwm"}]'
	run_in_container 'stat -c "%F %t:%T" /dev/sub/dir/zero; head -c 2 /dev/sub/dir/zero | wc -c'
	assert_success
	[[ ${lines[0]} == "character special file 1:5" && ${lines[1]} == 2 ]] || fail "$output"
}

@test "linux.devices: a fifo ('p')" {
	update_config '.linux.devices = [{"path": "/dev/myfifo", "type": "p"}]'
	run_in_container 'stat -c %F /dev/myfifo'
	assert_success
	assert_output_equals fifo
}

@test "linux.devices: a path outside /dev is refused, or created inside the root only" {
	update_config '.linux.devices = [{"path": "/dev/../../../../tmp/escaped-dev", "type": "c", "major": 1, "minor": 3}]'
	run --separate-stderr runtime_stdout_to_file run -b "$BUNDLE" "$CID"
	[[ ! -e /tmp/escaped-dev ]] || {
		rm -f /tmp/escaped-dev
		fail "a device node was created on the host"
	}
}

@test "linux.devices: an unknown type is refused" {
	update_config '.linux.devices = [{"path": "/dev/odd", "type": "x", "major": 1, "minor": 3}]'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line
	assert_no_leftovers
}

@test "/dev/shm is the config's tmpfs, writable" {
	run_in_container 'grep " /dev/shm " /proc/self/mountinfo; echo x >/dev/shm/f && echo ok'
	assert_success
	[[ ${lines[0]} == *" - tmpfs "* && ${lines[1]} == ok ]] || fail "$output"
}

@test "/dev without a tmpfs mount in the config: the devices are still there" {
	# The rootfs's own (empty) /dev gets the default devices.
	update_config '.root.readonly = false | .mounts |= map(select(.destination | startswith("/dev") | not))'
	run_in_container 'for d in null zero full random urandom tty; do [ -c /dev/$d ] || echo "missing $d"; done; echo checked'
	assert_success
	assert_output_equals checked
}

#!/usr/bin/env bats
# The root filesystem and the mounts list: bind/rbind (ro, recursive
# attributes), tmpfs/proc/sysfs/mqueue/devpts options, propagation,
# root.readonly, maskedPaths/readonlyPaths, --no-pivot.  Checked from inside
# through /proc/self/mountinfo and by trying.

load helpers

setup() {
	setup_bundle
	# Host-side sources live under the bundle, so the teardown's unmount of
	# everything under $BUNDLE cleans up their mounts too.
	SRC=$BUNDLE/host-src
	mkdir -p "$SRC"
	echo "from the host" >"$SRC/file"
}

teardown() {
	teardown_bundle
}

# add_mount JSON: append one mount to config.json.
add_mount() {
	update_config --argjson m "$1" '.mounts += [$m]'
}

bind_mount() { # DEST OPTION...
	local dest=$1
	shift
	add_mount "$(jq -cn --arg d "$dest" --arg s "$SRC" --argjson o "$(json_array "$@")" \
		'{destination: $d, type: "bind", source: $s, options: $o}')"
}

# mount_line DEST: the container's mountinfo line of DEST (from $output).
mount_line() {
	awk -v d="$1" '$5 == d' <<<"$output" | tail -1
}

# mount_opts DEST: per-mount options, then super options, of DEST.
mount_opts() {
	local l
	l=$(mount_line "$1")
	[[ -n $l ]] || fail "no mount at $1 in: $output"
	echo "${l#* - }" | awk '{print $3}'
	awk '{print $6}' <<<"$l"
}

@test "bind ro: the host directory is visible and read-only" {
	bind_mount /mnt bind ro
	run_in_container 'cat /mnt/file; touch /mnt/new 2>/dev/null && echo WROTE; grep " /mnt " /proc/self/mountinfo'
	assert_success
	[[ ${lines[0]} == "from the host" ]]
	[[ $output != *WROTE* ]] || fail "wrote into a read-only bind"
	[[ $(echo "$output" | awk '$5 == "/mnt" {print $6}') == ro,* ]] || fail "$output"
	[[ ! -e $SRC/new ]]
}

@test "bind rw: writes reach the host directory" {
	bind_mount /mnt bind rw
	run_in_container 'echo from the container >/mnt/back'
	assert_success
	[[ $(cat "$SRC/back") == "from the container" ]]
}

@test "bind of a single file, onto a destination that does not exist yet" {
	add_mount "$(jq -cn --arg s "$SRC/file" '{destination: "/etc/hostfile", type: "bind", source: $s, options: ["bind", "ro"]}')"
	run_in_container 'cat /etc/hostfile'
	assert_success
	assert_output_equals "from the host"
	[[ -f $BUNDLE/rootfs/etc/hostfile ]] # the mount point was created in the rootfs
}

@test "mount destinations are created, even under a read-only root" {
	update_config '.root.readonly = true
		| .mounts += [{"destination": "/deep/new/dir", "type": "tmpfs", "source": "tmpfs"}]'
	run_in_container 'touch /deep/new/dir/ok && echo ok'
	assert_success
	assert_output_equals ok
}

@test "bind vs rbind: only rbind brings the submounts" {
	mkdir -p "$SRC/sub"
	mount -t tmpfs -o size=1m tmpfs "$SRC/sub"
	echo "in the submount" >"$SRC/sub/inner"
	bind_mount /mnt bind
	bind_mount /opt rbind
	run_in_container 'cat /mnt/sub/inner 2>/dev/null || echo "no submount"; cat /opt/sub/inner'
	assert_success
	[[ ${lines[0]} == "no submount" ]] || fail "bind brought the submount: $output"
	[[ ${lines[1]} == "in the submount" ]] || fail "rbind lost the submount: $output"
}

@test "rbind ro: the top is read-only; rro makes the submounts read-only too" {
	mkdir -p "$SRC/sub"
	mount -t tmpfs -o size=1m tmpfs "$SRC/sub"
	bind_mount /mnt rbind ro
	bind_mount /opt rbind rro
	run_in_container 'touch /mnt/x 2>/dev/null && echo "mnt top writable"
		touch /opt/x 2>/dev/null && echo "opt top writable"
		touch /opt/sub/x 2>/dev/null && echo "opt sub writable"
		echo done'
	assert_success
	[[ $output != *"mnt top writable"* ]] || fail "$output"
	[[ $output != *"opt top writable"* ]] || fail "$output"
	[[ $output != *"opt sub writable"* ]] || fail "rro left a submount writable: $output"
}

@test "bind with nosuid, nodev, noexec, noatime" {
	cp /bin/busybox "$SRC/bb"
	bind_mount /mnt bind nosuid nodev noexec noatime
	run_in_container '/mnt/bb true 2>/dev/null && echo EXECUTED; grep " /mnt " /proc/self/mountinfo'
	assert_success
	[[ $output != *EXECUTED* ]] || fail "noexec not applied"
	local opts
	opts=$(awk '$5 == "/mnt" {print $6}' <<<"$output")
	[[ ,$opts, == *,nosuid,* && ,$opts, == *,nodev,* && ,$opts, == *,noexec,* && ,$opts, == *,noatime,* ]] ||
		fail "options: $opts"
}

@test "atime family: strictatime, relatime, nodiratime" {
	update_config '.mounts += [
		{"destination": "/a", "type": "tmpfs", "source": "tmpfs", "options": ["strictatime"]},
		{"destination": "/b", "type": "tmpfs", "source": "tmpfs", "options": ["relatime", "nodiratime"]}]'
	run_in_container 'cat /proc/self/mountinfo'
	assert_success
	local a b
	a=$(awk '$5 == "/a" {print $6}' <<<"$output")
	b=$(awk '$5 == "/b" {print $6}' <<<"$output")
	[[ ,$a, != *,relatime,* && ,$a, != *,noatime,* ]] || fail "/a: $a"
	[[ ,$b, == *,relatime,* && ,$b, == *,nodiratime,* ]] || fail "/b: $b"
}

@test "tmpfs: size, mode and flags" {
	update_config '.mounts += [{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs",
		"options": ["nosuid", "nodev", "noexec", "size=1m", "mode=0700"]}]'
	run_in_container 'stat -c %a /scratch; grep " /scratch " /proc/self/mountinfo
		dd if=/dev/zero of=/scratch/big bs=64k count=32 2>/dev/null && echo "2M FIT"; true'
	assert_success
	[[ ${lines[0]} == 700 ]] || fail "mode: $output"
	[[ ${lines[1]} == *" - tmpfs "*size=1024k* ]] || fail "size: $output"
	[[ $output != *"2M FIT"* ]] || fail "size limit not applied"
}

@test "proc: the container's pid namespace, read-only and masked parts" {
	run_in_container 'ls /proc | grep -E "^[0-9]+$" | sort -n | head -1
		echo "keys:$(cat /proc/keys 2>/dev/null | wc -c)"
		echo 1 2>/dev/null >/proc/sys/kernel/printk && echo "WROTE SYSCTL"
		echo done'
	assert_success
	[[ ${lines[0]} == 1 ]] || fail "pid 1 not first in /proc: $output"
	[[ $output == *keys:0* ]] || fail "/proc/keys not masked: $output"
	[[ $output != *"WROTE SYSCTL"* ]] || fail "/proc/sys writable"
}

@test "proc and sysfs: a destination that is a symlink in the image is refused (runc, crun)" {
	local d
	for d in proc sys; do
		rm -rf "$BUNDLE"
		setup_bundle
		mkdir "$BUNDLE/rootfs/elsewhere"
		rm -rf "${BUNDLE:?}/rootfs/$d"
		ln -s elsewhere "$BUNDLE/rootfs/$d"
		run --separate-stderr runtime_stdout_to_file run -b "$BUNDLE" "$CID"
		assert_failure
		assert_one_error_line "/$d"
		[[ -z $(ls "$BUNDLE/rootfs/elsewhere") ]] || fail "$d was mounted through the link"
		assert_no_leftovers
	done
}

@test "sysfs read-only, mqueue and devpts with their options" {
	run_in_container 'cat /proc/self/mountinfo'
	assert_success
	[[ $(mount_line /sys) == *" - sysfs "* ]] || fail "$(mount_line /sys)"
	[[ $(awk '$5 == "/sys" {print $6}' <<<"$output") == ro,* ]] || fail "/sys not ro"
	[[ $(mount_line /dev/mqueue) == *" - mqueue "* ]] || fail "no mqueue: $output"
	local pts
	pts=$(mount_line /dev/pts)
	[[ $pts == *" - devpts "* ]] || fail "no devpts: $output"
	[[ $pts == *gid=5* && $pts == *mode=620* && $pts == *ptmxmode=666* ]] || fail "devpts options: $pts"
}

@test "mounts keep their order: a later mount covers an earlier one" {
	update_config '.mounts += [
		{"destination": "/layer", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]},
		{"destination": "/layer", "type": "tmpfs", "source": "tmpfs", "options": ["size=2m"]}]'
	run_in_container 'grep " /layer " /proc/self/mountinfo | tail -1'
	assert_success
	[[ $output == *size=2048k* ]] || fail "$output"
}

@test "propagation: rslave receives host mounts made later, rprivate does not" {
	# The source must be a shared mount for anything to propagate.
	mount --bind "$SRC" "$SRC"
	mount --make-shared "$SRC"
	mkdir -p "$SRC/sub"
	bind_mount /slave rbind rslave
	bind_mount /private rbind rprivate
	set_cmd 'for i in $(seq 100); do [ -e /slave/sub/marker ] && break; sleep 0.1; done
		[ -e /slave/sub/marker ] && echo "slave sees it"
		[ -e /private/sub/marker ] && echo "private sees it"
		echo done'
	create_container "$CID"
	assert_success
	runtime start "$CID"
	mount -t tmpfs -o size=1m tmpfs "$SRC/sub"
	touch "$SRC/sub/marker"
	wait_output "$CID" done
	run cat "$(ct_out "$CID")"
	[[ $output == *"slave sees it"* ]] || fail "rslave mount did not receive: $output"
	[[ $output != *"private sees it"* ]] || fail "rprivate mount received: $output"
}

@test "propagation: mounts made in the container do not reach the host" {
	mount --bind "$SRC" "$SRC"
	mount --make-shared "$SRC"
	bind_mount /mnt rbind rw
	update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]
		| .process.capabilities.effective += ["CAP_SYS_ADMIN"]
		| .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
	run_in_container 'mkdir -p /mnt/inside && mount -t tmpfs tmpfs /mnt/inside && echo mounted'
	assert_success
	! grep -qF " $SRC/inside " /proc/self/mountinfo || fail "a container mount leaked to the host"
}

@test "rootfsPropagation private: the container's root has no peer group" {
	update_config '.linux.rootfsPropagation = "private"'
	run_in_container 'cat /proc/self/mountinfo'
	assert_success
	local root
	root=$(mount_line /)
	[[ -n $root ]] || fail "no / in $output"
	[[ $root != *shared:* && $root != *master:* ]] || fail "/ propagates: $root"
}

@test "root.readonly: the root cannot be written, mounts on it can" {
	update_config '.root.readonly = true | .mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}]'
	run_in_container 'touch /newfile 2>/dev/null && echo "ROOT WRITABLE"; touch /tmp/ok && echo tmp ok'
	assert_success
	assert_output_equals "tmp ok"
	[[ ! -e $BUNDLE/rootfs/newfile ]]
}

@test "root.readonly false: the root can be written, and it is the bundle's rootfs" {
	update_config '.root.readonly = false'
	run_in_container 'echo hi >/written && echo ok'
	assert_success
	[[ $(cat "$BUNDLE/rootfs/written") == hi ]]
}

@test "maskedPaths: files read empty, directories are empty and read-only" {
	mkdir -p "$BUNDLE/rootfs/secret-dir"
	echo secret >"$BUNDLE/rootfs/secret-dir/data"
	echo secret >"$BUNDLE/rootfs/etc/secret-file"
	update_config '.linux.maskedPaths += ["/secret-dir", "/etc/secret-file", "/does/not/exist"]'
	run_in_container 'echo "file:[$(cat /etc/secret-file)]"; echo "dir:[$(ls /secret-dir)]"
		echo "timer_list:$(cat /proc/timer_list | wc -c)"
		echo "firmware:$(ls /sys/firmware | wc -l)"
		touch /secret-dir/new 2>/dev/null && echo "WROTE DIR"; true'
	assert_success
	[[ $output == *"file:[]"* && $output == *"dir:[]"* ]] || fail "$output"
	[[ $output == *timer_list:0* && $output == *firmware:0* ]] || fail "$output"
	[[ $output != *secret* && $output != *WROTE* ]] || fail "masked content visible or writable: $output"
}

@test "readonlyPaths: listed paths are read-only, the rest of the root is not" {
	update_config '.root.readonly = false | .linux.readonlyPaths += ["/etc"]'
	run_in_container 'touch /etc/x 2>/dev/null && echo "ETC WRITABLE"
		echo 1 2>/dev/null >/proc/sys/vm/overcommit_memory && echo "PROC SYS WRITABLE"
		grep -q "^hostname" /etc/hostname 2>/dev/null; cat /etc/hostname
		touch /tmp/x && echo "tmp ok"'
	assert_success
	[[ $output == "sandrun"$'\n'"tmp ok" ]] || fail "$output"
}

@test "--no-pivot: the container runs with the same mounts" {
	update_config '.mounts += [{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs"}]'
	set_cmd 'cat /etc/hostname; grep -c " /scratch " /proc/self/mountinfo'
	run runtime run --no-pivot -b "$BUNDLE" "$CID"
	assert_success
	[[ ${lines[0]} == sandrun && ${lines[1]} -ge 1 ]] || fail "$output"
	assert_no_leftovers
}

@test "--no-pivot: a nested user namespace cannot mount a fresh, unmasked /proc (runc, crun)" {
	# With every capability, a user namespace made inside keeps the process
	# dumpable, so that it can write its own maps (busybox unshare -r).
	# (every one this process has: the kernel's order, numbers 0 to 40)
	local names=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP
		LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER
		SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE
		SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP
		MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF
		CHECKPOINT_RESTORE)
	local bnd i caps=()
	bnd=$((16#$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
	for ((i = 0; i < ${#names[@]}; i++)); do
		(((bnd >> i) & 1)) && caps+=("CAP_${names[i]}")
	done
	caps=$(printf '%s\n' "${caps[@]}" | jq -Rcs 'split("\n")[:-1]')
	mkdir -p "$BUNDLE/rootfs/mnt/p"
	update_config --argjson c "$caps" '.process.capabilities = {bounding: $c, effective: $c, permitted: $c}
		| .root.readonly = false'
	set_cmd 'unshare -U -m -p -f -r sh -c "id -u && mount -t proc proc /mnt/p && echo MOUNTED"'
	run runtime run --no-pivot -b "$BUNDLE" "$CID"
	[[ ${lines[0]} == 0 ]] || skip "no nested user namespace here: $output"
	[[ $output != *MOUNTED* ]] || fail "a fresh proc was mounted: $output"
	assert_no_leftovers
}

@test "a failed mount in the middle of the list leaves no mount on the host" {
	update_config --arg s "$BATS_TEST_TMPDIR/missing" \
		'.mounts += [{"destination": "/a", "type": "tmpfs", "source": "tmpfs"},
		             {"destination": "/b", "type": "bind", "source": $s, "options": ["bind"]}]'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_no_leftovers
}

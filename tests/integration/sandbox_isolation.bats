#!/usr/bin/env bats
# `sandrun sandbox`: the isolation that always applies (issue 12: "Isolation,
# always", "Filesystem", "Working directory").

load sandbox_helpers

@test "sandbox privileges: CapEff 0, CapBnd 0, NoNewPrivs 1, Seccomp 2 (filter), not root, no core dumps" {
	sb_sh 'grep -E "^(Uid|Gid|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status; ulimit -c'
	assert_success
	assert_stdout_has '^CapEff:\t0{16}$' '^CapPrm:\t0{16}$' '^CapBnd:\t0{16}$' '^CapAmb:\t0{16}$' \
		'^NoNewPrivs:\t1$' '^Seccomp:\t2$' '^Uid:\t[1-9]' '^0$'
	local st
	st=$(rf .stdout | grep .)
	[[ $(tail -n1 <<<"$st") == 0 ]] || fail "core dumps allowed: ulimit -c is $(tail -n1 <<<"$st")"
}

@test "sandbox namespaces: user, pid, mount, ipc, uts, cgroup and net are all new" {
	local ns script=''
	for ns in user pid mnt ipc uts cgroup net; do
		script+="readlink /proc/self/ns/$ns; "
	done
	sb_sh "$script"
	assert_success
	local inside
	mapfile -t inside < <(rf .stdout)
	local i=0
	for ns in user pid mnt ipc uts cgroup net; do
		[[ ${inside[i]} != "$(readlink /proc/self/ns/$ns)" ]] ||
			fail "the sandbox shares the host's $ns namespace (${inside[i]})"
		i=$((i + 1))
	done
	# the sandbox's first process is pid 1 or close to it: a new pid namespace
	sb_sh 'echo $$'
	assert_rf '.stdout | tonumber < 10' true
}

@test "sandbox user namespace: an unprivileged host uid, distinct for two concurrent sandboxes" {
	local a b
	a=$(sb_workdir a)
	b=$(sb_workdir b)
	sb_start --workdir "$a" --timeout "$(sb_secs 300)" -- /bin/sh -c 'touch ready; while [ ! -e stop ]; do sleep 0.05; done'
	local pa=$SB_PID
	sb_wait_for "$a/ready"
	env "$TEST_MARK" "$RUNTIME" --root "$ROOT" sandbox --env "$TEST_MARK" --workdir "$b" --timeout "$(sb_secs 300)" \
		-- /bin/sh -c 'touch ready; while [ ! -e stop ]; do sleep 0.05; done' \
		</dev/null >/dev/null 2>"$BATS_TEST_TMPDIR/b.err" 3>&- &
	local pb=$!
	SB_BG_PIDS+=("$pb")
	sb_wait_for "$b/ready"
	sb_record_running
	# the host uids of the sandboxed processes (those in another pid
	# namespace: not sandrun nor its helpers)
	local pid uids=() u
	for pid in $(sb_sandboxed_pids); do
		u=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || continue
		[[ -n $u ]] && uids+=("$u")
	done
	touch "$a/stop" "$b/stop"
	sb_wait_exit "$pa"
	assert_success
	sb_wait_exit "$pb"
	assert_success
	local distinct
	distinct=$(printf '%s\n' "${uids[@]}" | sort -u)
	! grep -qx 0 <<<"$distinct" || fail "a sandboxed process runs as host root: uids ${uids[*]}"
	[[ $(grep -c . <<<"$distinct") -ge 2 ]] ||
		fail "two concurrent sandboxes share host uid(s): ${uids[*]}"
	sb_assert_no_leftovers
}

@test "sandbox network: loopback only, and it works" {
	sb_sh 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "'
	assert_success
	assert_rf .stdout lo$'\n'
	sb_run -- "$PY" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
c.sendall(b"ping"); print(a.recv(4).decode())'
	assert_success
	assert_rf .stdout ping$'\n'
}

@test "sandbox filesystem: the host's system directories read-only, nothing else of the host" {
	sb_sh 'ls -A /; for d in /home /root /var /run /srv /mnt /media /opt /boot; do [ -e $d ] && echo "present: $d ($(ls -A $d | head -3 | tr "\n" " "))"; done; true'
	assert_success
	local present
	present=$(rf .stdout | grep '^present:' || true)
	[[ -z $present ]] || fail "host directories visible: $present"
	sb_sh 'for d in /usr /bin /sbin /lib /etc /; do touch $d/.sbtest 2>/dev/null && echo "wrote $d"; done; true'
	assert_success
	[[ -z $(rf .stdout) ]] || fail "$(rf .stdout)"
	[[ ! -e /usr/.sbtest && ! -e /etc/.sbtest ]] || fail "a write reached the host's /usr or /etc"
	# python3 and the host's libraries work with zero set-up
	sb_run -- python3 -c 'import ssl, json, sqlite3; print("ok")'
	assert_success
	assert_rf .stdout ok$'\n'
}

@test "sandbox filesystem: /etc holds the allow-listed files and generated passwd, group and hosts" {
	sb_sh 'find /etc -maxdepth 1 | sort; echo ---; cat /etc/passwd; echo ---; cat /etc/hosts; echo ---; id'
	assert_success
	local out listing
	out=$(rf .stdout)
	listing=$(sed -n '1,/^---$/p' <<<"$out")
	local f
	for f in shadow gshadow sudoers ssh machine-id hostname fstab crontab sandrun; do
		! grep -qx "/etc/$f" <<<"$listing" || fail "/etc/$f is visible in the sandbox"
	done
	for f in passwd group hosts ld.so.cache; do
		grep -qx "/etc/$f" <<<"$listing" || fail "/etc/$f is missing from the sandbox: $listing"
	done
	# passwd is generated: not the host's (whose users the sandbox must not learn)
	local passwd
	passwd=$(sed -n '/^---$/,/^---$/p' <<<"$out" | sed 1d | sed '$d' | head -n 50)
	[[ $passwd != "$(cat /etc/passwd)" ]] || fail "/etc/passwd is the host's"
	grep -q '^sshd:\|^_apt:\|^systemd' <<<"$passwd" && fail "host users in /etc/passwd: $passwd"
	# and the sandbox's own user has a name
	! grep -q 'uid=[0-9]*(' <<<"$(tail -n1 <<<"$out")" && fail "id gives no user name: $(tail -n1 <<<"$out")"
	grep -q 'localhost' <<<"$out" || fail "/etc/hosts has no localhost: $out"
}

@test "sandbox filesystem: /tmp is a writable size-capped tmpfs, /proc is new, /dev minimal, /sys absent or read-only" {
	sb_sh '
		stat -fc %T /tmp; df -k /tmp | tail -1 | tr -s " " | cut -d" " -f2; echo x > /tmp/x && echo tmp-writable
		ls /dev | sort | tr "\n" " "; echo
		ls /proc | grep -c "^[0-9]"
		if [ -e /sys/kernel ]; then touch /sys/kernel/x 2>/dev/null && echo sys-writable; grep -w /sys /proc/mounts | grep -qw ro && echo sys-ro; else echo sys-absent; fi
		cat /proc/sys/kernel/core_pattern > /dev/null && echo > /proc/sys/kernel/core_pattern 2>/dev/null && echo proc-sys-writable; true' \
		--tmp-size 8M
	assert_success
	local out
	mapfile -t out < <(rf .stdout)
	[[ ${out[0]} == tmpfs ]] || fail "/tmp is ${out[0]}, not tmpfs"
	((out[1] <= 8192)) || fail "/tmp is ${out[1]} KiB, more than --tmp-size 8M"
	[[ ${out[2]} == tmp-writable ]] || fail "/tmp is not writable"
	local devs=${out[3]} d
	for d in null zero full random urandom; do
		[[ " $devs" == *" $d "* ]] || fail "/dev/$d missing: $devs"
	done
	for d in sda vda mem kmem port kmsg loop-control fuse net; do
		[[ " $devs" != *" $d "* ]] || fail "/dev/$d present: $devs"
	done
	((out[4] <= 5)) || fail "/proc shows ${out[4]} processes: the host's pid namespace?"
	[[ ${out[5]} == sys-absent || ${out[5]} == sys-ro ]] || fail "/sys: ${out[5]}"
	[[ ${out[*]} != *proc-sys-writable* ]] || fail "/proc/sys is writable"
}

@test "sandbox --ro-bind: the input is readable at its destination and read-only" {
	local data=$BATS_TEST_TMPDIR/dataset
	mkdir -p "$data"
	echo 'a,b' >"$data/in.csv"
	sb_run --ro-bind "$data:/data" -- /bin/sh -c 'cat /data/in.csv; echo x > /data/in.csv && echo wrote; touch /data/new && echo created; true'
	assert_success
	assert_rf .stdout 'a,b'$'\n'
	[[ $(cat "$data/in.csv") == a,b && ! -e $data/new ]] || fail "the read-only bind was written to"
	assert_rf '.policy.mounts | any(.destination == "/data" and .mode == "ro")' true
	sb_assert_no_leftovers
}

@test "sandbox --rootfs: a directory as the read-only root instead of the host's" {
	ensure_rootfs_cache || fail "cannot build the busybox rootfs"
	sb_run --rootfs "$ROOTFS_CACHE" -- /bin/sh -c 'ls /bin/busybox && ls /usr/bin/python3 2>/dev/null; touch /bin/x 2>/dev/null && echo wrote; pwd'
	assert_success
	assert_rf .stdout $'/bin/busybox\n/work\n'
	assert_rf '.policy.mounts[] | select(.destination == "/") | .source' "$ROOTFS_CACHE"
	[[ ! -e $ROOTFS_CACHE/bin/x ]] || fail "the rootfs was written to"
}

@test "sandbox seccomp: no new user namespaces, ptrace, keyring, bpf, userfaultfd or perf_event_open" {
	sb_run -- "$PY" -c '
import ctypes, os, errno
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *a):
    r = libc.syscall(nr, *[ctypes.c_long(x) for x in a])
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
# x86_64 numbers
print("unshare", sc(272, 0x10000000))                 # CLONE_NEWUSER
print("clone", sc(56, 0x10000000 | 17, 0, 0, 0, 0))  # CLONE_NEWUSER|SIGCHLD
print("ptrace", sc(101, 16, os.getppid(), 0, 0))      # PTRACE_ATTACH
print("add_key", sc(248, 0, 0, 0, 0, 0))
print("keyctl", sc(250, 0, -1, 0, 0, 0))              # KEYCTL_GET_KEYRING_ID
print("bpf", sc(321, 0, 0, 0))
print("userfaultfd", sc(323, 0))
print("perf_event_open", sc(298, 0, 0, -1, -1, 0))
'
	assert_success
	local line
	while read -r line; do
		[[ $line != *" ok" ]] || fail "allowed in the sandbox: $line"
	done <<<"$(rf .stdout)"
	[[ $(rf .stdout | grep -c .) -eq 8 ]] || fail "$(rf .stdout) $(rf .stderr)"
}

#!/usr/bin/env bats
# Attacks of a hostile container (or rootfs) on the host, one CVE class per
# group: the runtime binary through /proc/PID/exe (CVE-2019-5736), leaked
# fds and cwd (CVE-2024-21626), symlinks in the rootfs (CVE-2025-31133,
# CVE-2025-52565, CVE-2024-45310 and co), capabilities and no_new_privs, the
# runtime's environment.  Each test asserts the host is untouched.

load helpers
load attack_helpers # setup and teardown too

# --- CVE-2019-5736: /proc/PID/exe of a runtime process -----------------------------

# start_exe_attacker SECONDS: a detached container with every capability
# (so that only the runtime's own defence protects the binary) running
# exe_attack against the processes of its pid namespace named like the
# runtime or "decoy".  The runtime used is a copy, $RT, with checksum
# $RT_SUM; $ATK_PID is the attacker's pid.
#
# The attacker has a pid namespace of its own: runtime processes reach it
# by entering it (exec, or a container created into it, as in a pod).  A
# container in the host's pid namespace with CAP_SYS_PTRACE would see every
# runtime process from its execve on, before any self-protection can run,
# and could as well open /proc/1/root: that is host root, not this attack.
start_exe_attacker() {
	ATK=$CID-atk
	RT=$(runtime_copy)
	RT_SUM=$(sha256sum <"$RT")
	ATTACKER=$BATS_TEST_TMPDIR/attacker
	make_bundle "$ATTACKER" /exe_attack "$RUNTIME_NAME,decoy" "$1"
	install_helper exe_attack "$ATTACKER"
	privileged "$ATTACKER"
	timeout 30 "$RT" --root "$ROOT" run -d -b "$ATTACKER" "$ATK" </dev/null >"$(ct_out "$ATK")" 2>&1 ||
		fail "attacker container did not start: $(cat "$(ct_out "$ATK")")"
	wait_output "$ATK" ready
	ATK_PID=$(timeout 30 "$RT" --root "$ROOT" state "$ATK" | jq -r .pid)
}

# run_decoy: a plain copy of sleep, run for a moment in the attacker's pid
# namespace: the attack must work on it, or the test proves nothing.
run_decoy() {
	DECOY=$BATS_TEST_TMPDIR/bin/decoy
	cp /bin/sleep "$DECOY"
	DECOY_SUM=$(sha256sum <"$DECOY")
	nsenter --target "$ATK_PID" --pid -- "$DECOY" 0.5
}

# finish_exe_attack: let the attacker retry a moment (the victims have
# exec'd or exited by now), stop it and read its report; the runtime copy is
# untouched although the attacker reached runtime processes, and the decoy
# was overwritten.
finish_exe_attack() {
	sleep 1
	timeout 30 "$RT" --root "$ROOT" kill "$ATK" USR1
	wait_output "$ATK" "done " 300
	local report
	report=$(cat "$(ct_out "$ATK")")
	[[ $(sha256sum <"$RT") == "$RT_SUM" ]] || fail "the runtime binary was overwritten: $report"
	! grep -q "^WRITTEN .* $RUNTIME_NAME\$" <<<"$report" || fail "attack reported success: $report"
	grep -q "^target .* $RUNTIME_NAME\$" <<<"$report" ||
		fail "the attacker never saw a runtime process (the test proves nothing): $report"
	[[ $(sha256sum <"$DECOY") != "$DECOY_SUM" ]] ||
		fail "the attack did not even work on the decoy: $report"
	# Every runtime process reached had its binary behind a read-only
	# handle: refused while it ran (ETXTBSY) and after (EROFS, or EPERM for
	# a sealed memfd).
	grep -qE "^reopen [0-9]+ (write )?(EROFS|EPERM)" <<<"$report" ||
		fail "no reopen of a runtime binary was refused as read-only: $report"
}

# pod_victims: containers created into the attacker's pid namespace, with
# the runtime copy; output in their .out files; $VICTIMS says what failed.
pod_victims() {
	local i id
	VICTIMS=ok
	for i in 1 2 3; do
		id=$CID-vc$i
		timeout 30 "$RT" --root "$ROOT" create -b "$BUNDLE" "$id" </dev/null >"$(ct_out "$id")" 2>&1 ||
			VICTIMS="create $id: $(cat "$(ct_out "$id")")"
		[[ $VICTIMS == ok ]] || return 1
		sleep 0.3
		VICTIMS=$(timeout 30 "$RT" --root "$ROOT" start "$id" 2>&1) && VICTIMS=ok || VICTIMS="start $id: $VICTIMS"
		[[ $VICTIMS == ok ]] || return 1
		RUNTIME=$RT wait_status "$id" stopped 2>"$BATS_TEST_TMPDIR/wait.err" ||
			VICTIMS="wait $id: $(cat "$BATS_TEST_TMPDIR/wait.err")"
		[[ $VICTIMS == ok ]] || return 1
		VICTIMS=$(timeout 30 "$RT" --root "$ROOT" delete "$id" 2>&1) && VICTIMS=ok || VICTIMS="delete $id: $VICTIMS"
		[[ $VICTIMS == ok ]] || return 1
	done
	set_args sleep 0.2
	timeout 30 "$RT" --root "$ROOT" run -b "$BUNDLE" "$CID-vr" </dev/null >"$(ct_out "$CID-vr")" 2>&1 ||
		VICTIMS="run $CID-vr: $(cat "$(ct_out "$CID-vr")")"
	[[ $VICTIMS == ok ]]
}

@test "CVE-2019-5736: a container cannot overwrite the runtime through /proc/PID/exe of an init created in its pid namespace" {
	requires_root
	start_exe_attacker 120
	run_decoy
	# A container joining the attacker's pid namespace (a pod): its init is
	# the runtime's image, visible to the attacker, until start.
	update_config --arg ns "/proc/$ATK_PID/ns/pid" \
		'.linux.namespaces |= map(if .type == "pid" then .path = $ns else . end)'
	pod_victims || true
	finish_exe_attack
	[[ $VICTIMS == ok ]] || fail "a victim container failed: $VICTIMS"
}

@test "CVE-2019-5736: the same attack against exec" {
	requires_root
	! "$RUNTIME" exec --help 2>&1 | grep -q "unknown command" || skip "exec not implemented yet"
	start_exe_attacker 120
	run_decoy
	local i execs=ok out
	# At least 8 execs, and more (up to 60) until the attacker has caught a
	# runtime process: a fast exec is a short window for its /proc scan.
	for i in $(seq 60); do
		out=$(timeout 30 "$RT" --root "$ROOT" exec "$ATK" true 2>&1) || {
			execs="exec $i failed: $out"
			break
		}
		((i >= 8)) && grep -q "^target .* $RUNTIME_NAME\$" "$(ct_out "$ATK")" && break
	done
	finish_exe_attack
	[[ $execs == ok ]] || fail "$execs"
}

@test "CVE-2019-5736: a session's supervisor, which starts every execution in the sandbox, runs from a read-only handle" {
	requires_root
	local name=cve-$$ sup
	runtime sandbox start --name "$name"
	sup=$("$RUNTIME" --root "$ROOT" sandbox list --format json | jq -r --arg n "$name" '.[] | select(.name == $n) | .pid')
	[[ -n $sup ]] || { runtime sandbox stop "$name"; fail "no supervisor"; }
	local same=no kind
	[[ $(stat -L -c %d:%i "/proc/$sup/exe") == $(stat -c %d:%i "$RUNTIME") ]] && same=yes
	kind=$(stat -L -f -c %T "/proc/$sup/exe"; readlink "/proc/$sup/exe")
	runtime sandbox stop "$name"
	[[ $same == no ]] || fail "the supervisor runs the runtime's own inode"
	[[ $kind == overlayfs* || $kind == *"/memfd:"* ]] || fail "neither overlay nor memfd: $kind"
}

@test "CVE-2019-5736: the runtime runs from a read-only handle on another inode (overlay or sealed memfd)" {
	requires_root
	# The init of a created container is the runtime's image.
	create_container "$CID"
	assert_success
	local pid
	pid=$(state_field "$CID" pid)
	# Not the binary's own inode: write attempts on it must not even touch
	# the binary (see the ETXTBSY test below).
	[[ $(stat -L -c %d:%i "/proc/$pid/exe") != $(stat -c %d:%i "$RUNTIME") ]] ||
		fail "the init runs the runtime's own inode: $(readlink "/proc/$pid/exe")"
	[[ $(stat -L -f -c %T "/proc/$pid/exe") == overlayfs ]] ||
		[[ $(readlink "/proc/$pid/exe") == /memfd:* ]] ||
		fail "the init's binary is neither on an overlay nor a memfd: $(readlink "/proc/$pid/exe")"
	run python3 -c '
import errno, os, sys
fd = os.open("/proc/%s/exe" % sys.argv[1], os.O_PATH)
for how in ("/proc/%s/exe" % sys.argv[1], "/proc/self/fd/%d" % fd):
    try:
        os.close(os.open(how, os.O_WRONLY))
        print("writable", how)
    except OSError as e:
        print(errno.errorcode[e.errno])
' "$pid"
	assert_success
	[[ $output != *writable* ]] || fail "$output"
}

@test "CVE-2019-5736: write attempts through /proc/PID/exe of a runtime process never make the host's execs of the runtime fail (ETXTBSY)" {
	requires_root
	# An attacker keeps the handle of an init's binary from before start
	# and retries open(O_WRONLY) on it; were that the binary's own inode,
	# each try would take write access on it for an instant (refused
	# later, EROFS), and an execve of the runtime at that instant fails
	# with ETXTBSY.  The host plays the attacker: the same syscalls on the
	# same handle as from inside the pid namespace, and no scheduling luck
	# needed to catch the init.
	local rt
	rt=$(runtime_copy)
	RUNTIME=$rt create_container "$CID"
	assert_success
	run timeout 60 python3 - "$(state_field "$CID" pid)" "$rt" "$ROOT" "$CID" <<-'EOF'
		import errno, os, subprocess, sys, time
		pid, rt, root, cid = sys.argv[1:]
		exe = os.open("/proc/%s/exe" % pid, os.O_PATH)
		subprocess.run([rt, "--root", root, "start", cid], check=True)
		attacker = os.fork()
		if attacker == 0:
		    while True:
		        try:
		            fd = os.open("/proc/self/fd/%d" % exe, os.O_WRONLY)
		        except OSError:
		            continue
		        try:  # a sealed memfd opens, and refuses the write
		            os.pwrite(fd, b"\x7f", 0)  # ELF's first byte: harmless
		            os.write(1, b"writable\n")
		        except OSError:
		            pass
		        os.close(fd)
		# An execve fails with ETXTBSY when it opens the binary, long
		# before an argument too long to copy (E2BIG): no process needed.
		# At least 3 s and 2000 tries (a slow VM), at most 40 s.
		big = "x" * (256 << 10)
		execs = busy = 0
		start = time.monotonic()
		try:
		    while (time.monotonic() < start + 3 or execs < 2000) and time.monotonic() < start + 40:
		        try:
		            os.execv(rt, [rt, big])
		        except OSError as e:
		            if e.errno == errno.ETXTBSY:
		                busy += 1
		            elif e.errno == errno.E2BIG:
		                execs += 1
		            else:
		                raise
		finally:
		    os.kill(attacker, 9)
		    os.waitpid(attacker, 0)
		print("execs %d busy %d" % (execs, busy))
	EOF
	assert_success
	[[ $output == *"execs "*" busy 0" && $output != *writable* ]] || fail "$output"
	local execs=${output##*execs }
	((${execs%% *} >= 2000)) || fail "too few execs to tell: $output"
}

@test "CVE-2019-5736: without the mount API the runtime runs from a sealed memfd" {
	requires_root
	[[ $RUNTIME_NAME == sandrun ]] || skip "sandrun's own defence"
	# In a user namespace of its own, the runtime may not clone mounts of
	# the host's mount namespace: open_tree fails, the memfd copy remains.
	run --separate-stderr unshare --user --map-root-user "$RUNTIME" --debug --root "$ROOT" run -b /nonexistent "$CID"
	assert_failure
	[[ $stderr == *"runtime binary: sealed memfd"* ]] || fail "no memfd: $stderr"
}

@test "CVE-2019-5736: a binary on a read-only filesystem runs as it is, one on a read-only bind does not, a stray marker does not skip the defence" {
	requires_root
	[[ $RUNTIME_NAME == sandrun ]] || skip "sandrun's own defence"
	local dir=$BATS_TEST_TMPDIR/rofs
	mkdir -p "$dir"
	EXTRA_BUNDLES+=("$dir")
	mount -t tmpfs -o size=16m tmpfs "$dir"
	cp "$RUNTIME" "$dir/"
	mount -o remount,ro "$dir"
	run --separate-stderr "$dir/$RUNTIME_NAME" --debug --root "$ROOT" run -b /nonexistent "$CID"
	assert_failure
	[[ $stderr == *"runtime binary: read-only filesystem"* && $stderr != *re-executing* ]] ||
		fail "binary on a read-only filesystem re-executed: $stderr"
	# A read-only bind of a writable filesystem (ostree's /usr): the inode
	# is writable elsewhere, so the runtime still moves to another one.
	local bind=$BATS_TEST_TMPDIR/robind
	mkdir -p "$bind"
	EXTRA_BUNDLES+=("$bind")
	cp "$RUNTIME" "$bind/"
	mount --bind "$bind" "$bind"
	mount -o remount,bind,ro "$bind"
	run --separate-stderr "$bind/$RUNTIME_NAME" --debug --root "$ROOT" run -b /nonexistent "$CID"
	assert_failure
	[[ $stderr == *re-executing* ]] || fail "binary on a read-only bind not re-executed: $stderr"
	# The loop marker of another process (here: set by hand) is not ours.
	run --separate-stderr env _SANDRUN_EXESEALED=1 "$RUNTIME" --debug --root "$ROOT" run -b /nonexistent "$CID"
	assert_failure
	[[ $stderr == *re-executing* ]] || fail "a stray marker skipped the defence: $stderr"
}

# --- CVE-2024-21626: leaked fds, cwd through /proc/self/fd -------------------------

# open_fds_of_ls OUTPUT: the fd numbers in `ls -l /proc/self/fd` output, but
# the one ls itself holds on that directory.  (A shell would be no good
# witness: busybox ash keeps pipe ends and moves its own fds around.)
open_fds_of_ls() {
	awk '/ -> / && $NF !~ /^\/proc\/[0-9]+\/fd$/ { print $(NF - 2) }' <<<"$1" | sort -n | tr '\n' ' '
}

@test "fds: the container process has only 0, 1 and 2, whatever the caller had open" {
	set_cmd 'exec ls -l /proc/self/fd'
	exec 7</etc/hostname 8>"$BATS_TEST_TMPDIR/junk" 9<"$BUNDLE"
	run runtime run -b "$BUNDLE" "$CID" 3</dev/null
	exec 7<&- 8>&- 9<&-
	assert_success
	output=$(open_fds_of_ls "$output")
	assert_output_equals "0 1 2 "
	assert_no_leftovers
}

@test "fds: --preserve-fds 2 passes exactly 3 and 4" {
	set_cmd 'exec ls -l /proc/self/fd'
	# Not through runtime(), which closes fd 3 (bats' own) for every call.
	run timeout 60 "$RUNTIME" --root "$ROOT" run --preserve-fds 2 -b "$BUNDLE" "$CID" \
		3</dev/null 4</dev/null 5</dev/null 6</dev/null
	assert_success
	output=$(open_fds_of_ls "$output")
	assert_output_equals "0 1 2 3 4 "
	assert_no_leftovers
}

@test "CVE-2024-21626: process.cwd /proc/self/fd/N (N = 3..12) fails cleanly or stays inside" {
	local fdn # (not `i` or `n`: names bats' run may assign)
	set_cmd 'pwd -P && ls -d "$(pwd -P)/../../../../../../../../../../../.." && cat /etc/hostname'
	for fdn in $(seq 3 12); do
		update_config --arg c "/proc/self/fd/$fdn" '.process.cwd = $c'
		run --separate-stderr runtime_stdout_to_file run -b "$BUNDLE" "$CID-$fdn"
		if ((status != 0)); then
			assert_runtime_error
		fi
		assert_no_leftovers "$CID-$fdn"
	done
	# Whatever ran printed the container's hostname, never the host's: the
	# cwd, even when reachable, was inside the container.
	if [[ -s $BATS_TEST_TMPDIR/stdout ]]; then
		! grep -qxF "$(hostname)" "$BATS_TEST_TMPDIR/stdout" || fail "$(cat "$BATS_TEST_TMPDIR/stdout")"
		! grep -q unreachable "$BATS_TEST_TMPDIR/stdout" || fail "$(cat "$BATS_TEST_TMPDIR/stdout")"
	fi
}

# Host paths an fd of PID points to (directories, and files other than the
# exec fifo), one per line.
host_fd_targets() {
	local pid=$1 fifo=$2 fd target
	for fd in /proc/"$pid"/fd/*; do
		target=$(readlink "$fd") || continue
		[[ ${fd##*/} -le 2 || $target == "$fifo" || $target != /* ]] && continue
		[[ $target == /dev/null ]] && continue
		echo "${fd##*/} -> $target"
	done
}

@test "fds: the init of a created container holds no host directory or file but the exec fifo" {

	create_container "$CID" 9<"$BUNDLE"
	assert_success
	local pid leaked
	pid=$(state_field "$CID" pid)
	leaked=$(host_fd_targets "$pid" "$ROOT/$CID/exec.fifo")
	[[ -z $leaked ]] || fail "the created init holds host paths: $leaked"
}

@test "fds: the init of a created container that joined a namespace by path no longer holds its fd" {
	requires_root
	unshare --net sleep 60 &
	local holder=$!
	sleep 0.3
	update_config --arg p "/proc/$holder/ns/net" \
		'.linux.namespaces |= map(if .type == "network" then .path = $p else . end)'
	create_container "$CID"
	local pid fds
	pid=$(state_field "$CID" pid)
	fds=$(ls -l "/proc/$pid/fd/" | grep -E -- '-> (net|mnt|pid|ipc|uts|user|cgroup|time):\[' || true)
	kill "$holder"
	assert_success
	[[ -z $fds ]] || fail "the created init holds namespace fds: $fds"
}

@test "fds: the created init is non-dumpable: without CAP_SYS_PTRACE its fds and exe are closed, after start they are not" {
	requires_root
	command -v capsh >/dev/null || skip "needs capsh (libcap2-bin)"
	set_args sleep 1000
	create_container "$CID"
	assert_success
	local pid
	pid=$(state_field "$CID" pid)
	# Host root, minus CAP_SYS_PTRACE: the same uid, a superset of the
	# init's capabilities, so only dumpability can stop it.
	run capsh --drop=cap_sys_ptrace -- -c "readlink /proc/$pid/fd/0 || echo denied-fd; readlink /proc/$pid/exe || echo denied-exe"
	[[ $output == *denied-fd* && $output == *denied-exe* ]] || fail "the created init is reachable: $output"
	runtime start "$CID"
	wait_status "$CID" running
	run capsh --drop=cap_sys_ptrace -- -c "readlink /proc/$pid/fd/0 || echo denied-fd"
	[[ $output != *denied-fd* ]] || fail "the started process is still non-dumpable (the check above proves nothing): $output"
}

@test "CVE-2024-21626 shape: a pod sibling with CAP_SYS_PTRACE cannot reach a host directory through the init's fds" {

	local sib=$BATS_TEST_TMPDIR/sibling
	# The sibling looks at the created init (while the init sets up it holds
	# the host's paths, and /proc/PID/root is the host's root until
	# pivot_root: any runtime whose init enters the pid namespace does; see
	# docs/security.md), so it waits for /go, which the test makes once
	# create returned.  It stays: a pid namespace whose first process exited
	# takes no new one.
	make_bundle "$sib" sh -c '
		for t in $(seq 1 600); do [ -e /go ] && break; sleep 0.1; done
		seen=
		for t in $(seq 1 600); do
			for p in /proc/[0-9]*; do
				[ "$(cat $p/comm 2>/dev/null)" = '"$RUNTIME_NAME"' ] || continue
				for f in $p/fd/*; do
					[ -d "$f/" ] && echo "REACHED $f -> $(readlink $f)"
				done
				echo "victim $p"
				seen=1
			done
			[ -n "$seen" ] && break
			sleep 0.1
		done
		echo done
		exec sleep 1000'
	BUNDLE=$sib update_config '.process.capabilities |= {bounding: ["CAP_SYS_PTRACE"], effective: ["CAP_SYS_PTRACE"], permitted: ["CAP_SYS_PTRACE"]}'
	runtime run -d -b "$sib" "$CID-sib" </dev/null >"$(ct_out "$CID-sib")" 2>&1
	local spid
	spid=$(state_field "$CID-sib" pid)
	update_config --arg ns "/proc/$spid/ns/pid" \
		'.linux.namespaces |= map(if .type == "pid" then .path = $ns else . end)'
	create_container "$CID"
	assert_success
	touch "$sib/rootfs/go"
	wait_output "$CID-sib" done
	grep -q "^victim " "$(ct_out "$CID-sib")" || fail "the sibling did not see the init: $(cat "$(ct_out "$CID-sib")")"
	! grep -q REACHED "$(ct_out "$CID-sib")" || fail "$(cat "$(ct_out "$CID-sib")")"
}

# --- symlinks in the rootfs: nothing created, mounted or written outside it -------------

# plant PATH TARGET: $BUNDLE/rootfs/PATH becomes a symlink to TARGET.
plant() {
	local p=$BUNDLE/rootfs/${1#/}
	rm -rf "$p"
	mkdir -p "$(dirname "$p")"
	ln -s "$2" "$p"
}

# no_dev_tmpfs: the container's /dev is the rootfs' own directory (so that
# what the image planted there is what the runtime meets).
no_dev_tmpfs() {
	update_config '.mounts |= map(select(.destination != "/dev"))'
}

# run_hostile [SHELL CODE]: run the container (default: true; the code must
# exit 0 and keep its stderr quiet); the runtime may succeed or fail, but a
# failure is one clear line; then the host canary is intact and nothing is
# left behind.  $HOSTILE_STATUS is the runtime's status, $HOSTILE_OUT the
# container's stdout.
run_hostile() {
	set_cmd "${1:-true}"
	: >"$BATS_TEST_TMPDIR/stdout"
	run --separate-stderr runtime_stdout_to_file run -b "$BUNDLE" "$CID"
	if ((status != 0)); then
		assert_runtime_error
	fi
	HOSTILE_STATUS=$status
	HOSTILE_OUT=$(cat "$BATS_TEST_TMPDIR/stdout")
	assert_canary_intact
	assert_no_leftovers
}

@test "symlink: a mount destination pointing to an absolute host path" {
	make_canary
	plant /mnt/evil "$CANARY"
	plant /mnt/evil-file "$CANARY/file"
	mkdir -p "$BATS_TEST_TMPDIR/src"
	echo source >"$BATS_TEST_TMPDIR/src/f"
	update_config --arg s "$BATS_TEST_TMPDIR/src" '.mounts += [
		{destination: "/mnt/evil", type: "tmpfs", source: "tmpfs"},
		{destination: "/mnt/evil/newdir/sub", type: "tmpfs", source: "tmpfs"},
		{destination: "/mnt/evil/dir", type: "bind", source: $s, options: ["rbind"]},
		{destination: "/mnt/evil-file", type: "bind", source: ($s + "/f"), options: ["bind"]}]'
	run_hostile 'echo pwned >/mnt/evil/file; echo pwned >/mnt/evil/dir/new; echo pwned >/mnt/evil-file; true'
}

@test "symlink: a relative destination climbing out with ../.." {
	make_canary
	plant /mnt/up "../../../../../../../../../..$CANARY"
	update_config '.mounts += [{destination: "/mnt/up/dir", type: "tmpfs", source: "tmpfs"}]'
	update_config --arg d "/../../../../../../..$CANARY/dir" \
		'.mounts += [{destination: $d, type: "tmpfs", source: "tmpfs"}]'
	run_hostile 'echo pwned >/mnt/up/file; true'
}

@test "symlink: /proc pointing to a host path" {
	make_canary
	plant /proc "$CANARY"
	run_hostile 'ls /proc/ | grep -qx self && echo proc-in-root; true'
}

@test "symlink: /proc pointing to /proc/sys inside the container's proc" {
	make_canary
	plant /proc ../../../../../..//proc/sys
	run_hostile
}

@test "symlink: /sys pointing to a host path" {
	make_canary
	plant /sys "$CANARY"
	run_hostile
}

@test "symlink: /dev pointing to a host path (CVE-2026-41579 / CVE-2026-47766 class)" {
	make_canary
	no_dev_tmpfs
	plant /dev "$CANARY"
	run_hostile
}

@test "symlink: /dev/pts pointing to a host path" {
	make_canary
	no_dev_tmpfs
	plant /dev/pts "$CANARY"
	run_hostile
}

@test "symlink: /dev/ptmx pointing to a host file" {
	make_canary
	no_dev_tmpfs
	plant /dev/ptmx "$CANARY/file"
	run_hostile 'echo pwned >/dev/ptmx 2>/dev/null; true'
}

@test "CVE-2025-31133: /dev/null a symlink to a host file, used to mask paths" {
	make_canary
	no_dev_tmpfs
	plant /dev/null "$CANARY/file"
	run_hostile 'echo pwned >/proc/timer_list 2>/dev/null; echo pwned >/dev/null; stat -c "%F %t:%T" /dev/null /proc/timer_list 2>&1'
	if ((HOSTILE_STATUS == 0)); then
		[[ $HOSTILE_OUT == $'character special file 1:3\ncharacter special file 1:3' ]] ||
			fail "masked path not the null device: $HOSTILE_OUT"
	fi
}

@test "CVE-2025-31133: /dev/null a symlink to a procfs file of the container, used to mask paths" {
	no_dev_tmpfs
	make_canary
	plant /dev/null /proc/sys/kernel/hostname
	run_hostile 'cat /proc/timer_list 2>&1; echo; stat -c "%F %t:%T" /proc/timer_list 2>&1'
	if ((HOSTILE_STATUS == 0)); then
		[[ $HOSTILE_OUT != *sandrun* ]] || fail "/proc/timer_list shows the hostname file: $HOSTILE_OUT"
		[[ $HOSTILE_OUT == *"character special file 1:3"* ]] || fail "masked path not the null device: $HOSTILE_OUT"
	fi
}

@test "CVE-2025-52565: /dev/console a symlink to a host file, with a terminal" {
	make_canary
	no_dev_tmpfs
	plant /dev/console "$CANARY/file"
	update_config '.process.terminal = true'
	run_hostile 'echo pwned >/dev/console; true'
}

@test "CVE-2019-16884 / CVE-2025-52881 class: no mount over the procfs files the runtime writes; lxcfs' files may be" {
	# The attack: a file mounted over /proc/sys/kernel/domainname catches the
	# runtime's sysctl write (or, with another procfs file as the source,
	# redirects it there).
	echo original >"$BATS_TEST_TMPDIR/fake"
	update_config --arg f "$BATS_TEST_TMPDIR/fake" '.linux.sysctl = {"kernel.domainname": "redirected"}
		| .mounts += [{destination: "/proc/sys/kernel/domainname", type: "bind", source: $f, options: ["bind"]}]'
	set_cmd 'cat /proc/sys/kernel/domainname'
	run --separate-stderr runtime run -b "$BUNDLE" "$CID"
	[[ $(cat "$BATS_TEST_TMPDIR/fake") == original ]] || fail "the sysctl write reached the file mounted over procfs"
	assert_failure
	assert_one_error_line "/proc/sys/kernel/domainname" procfs
	assert_no_leftovers

	update_config '.linux.sysctl = {} | .mounts[-1].destination = "/proc/cpuinfo"'
	set_cmd 'cat /proc/cpuinfo'
	run --separate-stderr runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_equals original
}

@test "race: a directory and a symlink swapped (RENAME_EXCHANGE) under a bind destination" {
	requires_root
	make_canary
	mkdir -p "$CANARY/d/target"
	canary_snapshot >"$BATS_TEST_TMPDIR/canary.before"
	local swapper vol=$BATS_TEST_TMPDIR/vol
	swapper=$(attack_helper swapper)
	# The shared volume: d is a directory, l climbs out to the canary, from
	# the host as well as from the container's root if it were not clamped.
	mkdir -p "$vol/d/target" "$BATS_TEST_TMPDIR/src"
	ln -s "../../../../../../../../../../..$CANARY/d" "$vol/l"
	echo source >"$BATS_TEST_TMPDIR/src/f"
	update_config --arg v "$vol" --arg s "$BATS_TEST_TMPDIR/src" '.mounts += [
		{destination: "/vol", type: "bind", source: $v, options: ["rbind"]},
		{destination: "/vol/d/target", type: "bind", source: $s, options: ["rbind"]},
		{destination: "/vol/d/target/sub", type: "tmpfs", source: "tmpfs"}]'
	set_args true
	"$swapper" "$vol/d" "$vol/l" 20 >"$BATS_TEST_TMPDIR/swaps" &
	# (not `i`: bats' run assigns it)
	local swapper_pid=$! try ok=0 failed=0
	for try in $(seq 1 40); do
		run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID-$try"
		if ((status == 0)); then
			ok=$((ok + 1))
			runtime delete -f "$CID-$try"
		else
			failed=$((failed + 1))
			assert_runtime_error
		fi
		assert_canary_intact
		assert_no_container "$CID-$try"
	done
	kill "$swapper_pid" 2>/dev/null || true
	wait "$swapper_pid" || true
	echo "# creates: $ok succeeded, $failed refused" >&3
	assert_canary_intact
	[[ -z $(bundle_mounts) ]] || fail "mounts left: $(bundle_mounts)"
}

# --- capabilities and no_new_privs -----------------------------------------------------

# status_field NAME: "NAME:\tVALUE" lines of /proc/self/status, as shell code
# for the container.
caps_cmd='grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status'

@test "capabilities: inheritable and ambient stay empty when the config leaves them out" {
	update_config '.process.capabilities = {
		bounding: ["CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_CHOWN"],
		effective: ["CAP_KILL", "CAP_CHOWN"],
		permitted: ["CAP_KILL", "CAP_CHOWN"]}'
	run_in_container "$caps_cmd"
	assert_success
	local want_bnd want_eff
	want_bnd=$(cap_mask CAP_KILL CAP_NET_BIND_SERVICE CAP_CHOWN)
	want_eff=$(cap_mask CAP_KILL CAP_CHOWN)
	assert_output_contains "CapInh:	0000000000000000"
	assert_output_contains "CapAmb:	0000000000000000"
	assert_output_contains "CapBnd:	$want_bnd"
	assert_output_contains "CapEff:	$want_eff"
	assert_output_contains "CapPrm:	$want_eff"
	assert_no_leftovers
}

@test "capabilities: an empty capabilities object gives none at all" {
	update_config '.process.capabilities = {}'
	run_in_container "$caps_cmd"
	assert_success
	local f
	for f in CapInh CapPrm CapEff CapBnd CapAmb; do
		assert_output_contains "$f:	0000000000000000"
	done
}

@test "capabilities: a non-root user keeps only what the config grants (no root-to-user leftovers)" {
	update_config '.process.user = {uid: 1000, gid: 1000} |
		.process.capabilities = {bounding: ["CAP_KILL"], effective: [], permitted: [], inheritable: [], ambient: []}'
	run_in_container "$caps_cmd; id -u"
	assert_success
	assert_output_contains "CapEff:	0000000000000000"
	assert_output_contains "CapPrm:	0000000000000000"
	assert_output_contains "CapInh:	0000000000000000"
	assert_output_contains "CapAmb:	0000000000000000"
	assert_output_contains "1000"
}

# suid_setup NNP: /suidprobe setuid root in the rootfs; the process runs it as
# uid 1000 with noNewPrivileges = NNP.
suid_setup() {
	# (vm-run's guest mounts /tmp nosuid: no setuid binary works there.)
	[[ ,$(findmnt -no OPTIONS -T "$BUNDLE/rootfs"), != *,nosuid,* ]] ||
		skip "the bundle's filesystem is mounted nosuid"
	install_helper suidprobe
	chown 0:0 "$BUNDLE/rootfs/suidprobe"
	chmod 4755 "$BUNDLE/rootfs/suidprobe"
	update_config --argjson nnp "$1" '.process.user = {uid: 1000, gid: 1000} |
		.process.noNewPrivileges = $nnp |
		.process.capabilities = {bounding: ["CAP_KILL", "CAP_CHOWN"], effective: [], permitted: []}'
	set_args /suidprobe
}

@test "noNewPrivileges: a setuid-root binary in the rootfs gives nothing" {
	suid_setup true
	run runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_contains "ruid=1000 euid=1000"
	assert_output_contains "CapEff=0000000000000000"
	assert_output_contains "NoNewPrivs=1"
	assert_no_leftovers
}

@test "noNewPrivileges false: the same setuid binary does work (the test above has teeth), capped by the bounding set" {
	suid_setup false
	run runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_contains "ruid=1000 euid=0"
	assert_output_contains "CapEff=$(cap_mask CAP_KILL CAP_CHOWN)"
	assert_output_contains "NoNewPrivs=0"
	assert_no_leftovers
}

# --- the runtime's environment ------------------------------------------------------

@test "environment: nothing of the runtime's environment reaches the container" {
	set_args sh -c 'env; echo ---; cat /proc/1/environ | tr "\0" "\n"; echo ---; cat /proc/self/environ | tr "\0" "\n"'
	update_config '.process.env = ["PATH=/bin:/usr/bin", "KEEP=1"]'
	run env SECRET_TOKEN=xyz-secret _SANDRUN_EXESEALED=1 LD_PRELOAD= LISTEN_PID=1 \
		"$RUNTIME" --root "$ROOT" run -b "$BUNDLE" "$CID"
	assert_success
	[[ $output != *xyz-secret* ]] || fail "the runtime's environment leaked: $output"
	[[ $output != *_SANDRUN* ]] || fail "the exeseal marker leaked: $output"
	assert_output_contains "KEEP=1"
	assert_no_leftovers
}

@test "environment: the created init does not show the runtime's environment in /proc (a pod sibling with CAP_SYS_PTRACE could read it)" {
	set_args sleep 1000
	SANDRUN_TEST_SECRET=xyz-secret runtime create -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1 ||
		fail "create: $(cat "$(ct_out "$CID")")"
	local env
	env=$(tr '\0' '\n' <"/proc/$(state_field "$CID" pid)/environ")
	[[ $env != *xyz-secret* ]] || fail "the init's /proc/PID/environ: $env"
}

@test "environment: create then start: the created init's environment does not carry over" {
	# The init (the runtime's image until start) has the runtime's
	# environment; the process it becomes must not.
	set_args sh -c 'cat /proc/self/environ | tr "\0" "\n"'
	update_config '.process.env = ["PATH=/bin:/usr/bin"]'
	SECRET_TOKEN=xyz-secret runtime create -b "$BUNDLE" "$CID" </dev/null >"$(ct_out "$CID")" 2>&1
	runtime start "$CID"
	wait_status "$CID" stopped
	! grep -q xyz-secret "$(ct_out "$CID")" || fail "leaked: $(cat "$(ct_out "$CID")")"
	grep -q "PATH=/bin:/usr/bin" "$(ct_out "$CID")" || fail "no env: $(cat "$(ct_out "$CID")")"
}

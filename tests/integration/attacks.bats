#!/usr/bin/env bats
# Attacks of a hostile container (or rootfs) on the host, one CVE class per
# group: the runtime binary through /proc/PID/exe (CVE-2019-5736), leaked
# fds and cwd (CVE-2024-21626), symlinks in the rootfs (CVE-2025-31133,
# CVE-2025-52565, CVE-2024-45310 and co), capabilities and no_new_privs, the
# runtime's environment.  Each test asserts the host is untouched.

load helpers
load attack_helpers

setup() {
	attack_setup
}

teardown() {
	attack_teardown
}

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
	RT=$(runtime_copy)
	RT_SUM=$(sha256sum <"$RT")
	ATTACKER=$BATS_TEST_TMPDIR/attacker
	make_bundle "$ATTACKER" /exe_attack "$RUNTIME_NAME,decoy" "$1"
	install_helper exe_attack "$ATTACKER"
	privileged "$ATTACKER"
	timeout 30 "$RT" --root "$ROOT" run -d -b "$ATTACKER" atk </dev/null >"$(ct_out atk)" 2>&1 ||
		fail "attacker container did not start: $(cat "$(ct_out atk)")"
	wait_output atk ready
	ATK_PID=$(timeout 30 "$RT" --root "$ROOT" state atk | jq -r .pid)
}

# run_decoy: a plain copy of sleep, run for a moment in the attacker's pid
# namespace: the attack must work on it, or the test proves nothing.
run_decoy() {
	DECOY=$BATS_TEST_TMPDIR/bin/decoy
	cp /bin/sleep "$DECOY"
	DECOY_SUM=$(sha256sum <"$DECOY")
	nsenter --target "$ATK_PID" --pid -- "$DECOY" 0.5
}

# finish_exe_attack: wait for the attacker's report; the runtime copy is
# untouched although the attacker reached runtime processes, and the decoy
# was overwritten.
finish_exe_attack() {
	wait_output atk "done " 300
	local report
	report=$(cat "$(ct_out atk)")
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
# the runtime copy; output in their .out files.
pod_victims() {
	local i
	for i in 1 2 3; do
		timeout 30 "$RT" --root "$ROOT" create -b "$BUNDLE" "vc$i" </dev/null >"$(ct_out "vc$i")" 2>&1 || return 1
		sleep 0.3
		timeout 30 "$RT" --root "$ROOT" start "vc$i" || return 1
		RUNTIME=$RT wait_status "vc$i" stopped || return 1
		timeout 30 "$RT" --root "$ROOT" delete "vc$i" || return 1
	done
	set_args sleep 0.2
	timeout 30 "$RT" --root "$ROOT" run -b "$BUNDLE" vr </dev/null >"$(ct_out vr)" 2>&1
}

@test "CVE-2019-5736: a container cannot overwrite the runtime through /proc/PID/exe of an init created in its pid namespace" {
	requires_root
	start_exe_attacker 6
	run_decoy
	# A container joining the attacker's pid namespace (a pod): its init is
	# the runtime's image, visible to the attacker, until start.
	update_config --arg ns "/proc/$ATK_PID/ns/pid" \
		'.linux.namespaces |= map(if .type == "pid" then .path = $ns else . end)'
	local victims=ok
	pod_victims || victims=failed
	finish_exe_attack
	[[ $victims == ok ]] || fail "the victim containers failed"
}

@test "CVE-2019-5736: the same attack against exec" {
	requires_root
	"$RUNTIME" exec --help >/dev/null 2>&1 || skip "exec not implemented yet"
	start_exe_attacker 6
	run_decoy
	local i
	for i in 1 2 3 4 5; do
		timeout 30 "$RT" --root "$ROOT" exec atk true || fail "exec $i failed"
	done
	finish_exe_attack
}

@test "CVE-2019-5736: the runtime runs from a read-only handle (detached bind or sealed memfd)" {
	requires_root
	# The init of a created container is the runtime's image.
	create_container "$CID"
	assert_success
	local pid
	pid=$(state_field "$CID" pid)
	[[ $(stat -L -c %i "/proc/$pid/exe") == $(stat -c %i "$RUNTIME") ]] ||
		[[ $(readlink "/proc/$pid/exe") == /memfd:* ]] ||
		fail "the init's binary is neither the runtime's inode nor a memfd: $(readlink "/proc/$pid/exe")"
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

@test "CVE-2019-5736: without the mount API the runtime runs from a sealed memfd" {
	requires_root
	[[ $RUNTIME_NAME == sandrun ]] || skip "sandrun's own defence"
	# In a user namespace of its own, the runtime may not clone mounts of
	# the host's mount namespace: open_tree fails, the memfd copy remains.
	run --separate-stderr unshare --user --map-root-user "$RUNTIME" --debug --root "$ROOT" run -b /nonexistent "$CID"
	assert_failure
	[[ $stderr == *"runtime binary: sealed memfd"* ]] || fail "no memfd: $stderr"
}

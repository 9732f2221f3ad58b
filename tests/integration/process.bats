#!/usr/bin/env bats
# The process object: args, env, cwd, user, umask, additionalGids,
# capabilities (all five sets), noNewPrivileges, rlimits, oomScoreAdj; plus
# hostname and domainname.  Checked from inside through /proc/self.

load helpers

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

# status_field NAME: the value of NAME in the container's /proc/self/status
# (from $output of a container that printed it).
status_field() {
	awk -v k="$1:" '$1 == k { print $2 }' <<<"$output"
}

@test "args: passed verbatim, PATH lookup from process.env" {
	set_args printf '[%s]' "two words" '$HOME' "*" ""
	run runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_equals '[two words][$HOME][*][]'
}

@test "args: the process is pid 1 of its pid namespace" {
	run_in_container 'echo $$'
	assert_success
	assert_output_equals 1
}

@test "stdio: stdout and stderr reach the caller separately, stdin is passed" {
	set_cmd 'read line; echo "out:$line"; echo "err:$line" >&2'
	run --separate-stderr bash -c 'echo piped | "$@"' _ \
		timeout 60 "$RUNTIME" --root "$ROOT" run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_equals "out:piped"
	[[ $stderr == "err:piped" ]] || fail "stderr: $stderr"
}

@test "env: exactly process.env, plus HOME from /etc/passwd when unset" {
	update_config --arg m "$TEST_MARK" '.process.env = ["PATH=/bin", "FOO=bar baz", "EMPTY=", $m]'
	run_in_container 'env | sort'
	assert_success
	grep -qx 'FOO=bar baz' <<<"$output"
	grep -qx 'EMPTY=' <<<"$output"
	grep -qx 'PATH=/bin' <<<"$output"
	grep -qx 'HOME=/root' <<<"$output"
	# Nothing of the caller's environment (bats, sudo, CI) leaks in.
	! grep -q '^BATS_' <<<"$output" || fail "caller's environment leaked: $output"
}

@test "env: an explicit HOME is kept" {
	update_config '.process.env += ["HOME=/tmp"]'
	run_in_container 'echo $HOME'
	assert_success
	assert_output_equals /tmp
}

@test "cwd: the process starts there" {
	update_config '.process.cwd = "/etc"'
	run_in_container pwd
	assert_success
	assert_output_equals /etc
}

@test "cwd: created when missing (as runc does)" {
	update_config '.root.readonly = false | .process.cwd = "/new/dir"'
	run_in_container pwd
	assert_success
	assert_output_equals /new/dir
}

@test "user: uid, gid and additionalGids" {
	update_config '.process.user = {"uid": 1000, "gid": 1001, "additionalGids": [10, 20, 30]}'
	run_in_container 'id -u; id -g; grep ^Groups: /proc/self/status'
	assert_success
	[[ ${lines[0]} == 1000 ]]
	[[ ${lines[1]} == 1001 ]]
	[[ $(echo ${lines[2]#Groups:}) == "10 20 30" ]] || fail "groups: ${lines[2]}"
}

@test "user: root with no additionalGids has no supplementary groups" {
	run_in_container 'grep ^Groups: /proc/self/status'
	assert_success
	[[ $(echo ${output#Groups:}) == "" ]] || fail "groups: $output"
}

@test "user: HOME of a uid without a passwd entry is /" {
	update_config '.process.user = {"uid": 4321, "gid": 4321}'
	run_in_container 'echo $HOME'
	assert_success
	assert_output_equals /
}

@test "umask: process.user.umask, 0022 by default" {
	run_in_container umask
	assert_success
	assert_output_equals 0022
	update_config '.process.user.umask = 63'
	run_in_container umask
	assert_success
	assert_output_equals 0077
}

@test "umask: files are created with it" {
	update_config '.root.readonly = false | .process.user.umask = 18'
	run_in_container 'touch /tmp/f; mkdir /tmp/d; stat -c %a /tmp/f /tmp/d'
	assert_success
	[[ ${lines[0]} == 644 && ${lines[1]} == 755 ]] || fail "modes: $output"
}

@test "capabilities: all five sets applied for root" {
	update_config '.process.capabilities = {
		"bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SETUID", "CAP_SETGID"],
		"effective": ["CAP_CHOWN", "CAP_KILL"],
		"permitted": ["CAP_CHOWN", "CAP_KILL"],
		"inheritable": ["CAP_KILL"],
		"ambient": ["CAP_KILL"]}'
	run_in_container 'cat /proc/self/status'
	assert_success
	[[ $(status_field CapBnd) == $(cap_mask CHOWN KILL NET_BIND_SERVICE SETUID SETGID) ]] ||
		fail "CapBnd $(status_field CapBnd)"
	[[ $(status_field CapPrm) == $(cap_mask CHOWN KILL) ]] || fail "CapPrm $(status_field CapPrm)"
	[[ $(status_field CapEff) == $(cap_mask CHOWN KILL) ]] || fail "CapEff $(status_field CapEff)"
	[[ $(status_field CapInh) == $(cap_mask KILL) ]] || fail "CapInh $(status_field CapInh)"
	[[ $(status_field CapAmb) == $(cap_mask KILL) ]] || fail "CapAmb $(status_field CapAmb)"
}

@test "capabilities: a non-root process keeps exactly its ambient set" {
	update_config '.process.user = {"uid": 1000, "gid": 1000}
		| .process.capabilities = {
		"bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SETUID"],
		"effective": ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
		"permitted": ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
		"inheritable": ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
		"ambient": ["CAP_KILL", "CAP_NET_BIND_SERVICE"]}'
	run_in_container 'cat /proc/self/status'
	assert_success
	local want_bnd want2
	want_bnd=$(cap_mask CHOWN KILL NET_BIND_SERVICE SETUID)
	want2=$(cap_mask KILL NET_BIND_SERVICE)
	[[ $(status_field CapBnd) == "$want_bnd" ]] || fail "CapBnd $(status_field CapBnd)"
	[[ $(status_field CapInh) == "$want2" ]] || fail "CapInh $(status_field CapInh)"
	[[ $(status_field CapPrm) == "$want2" ]] || fail "CapPrm $(status_field CapPrm)"
	[[ $(status_field CapEff) == "$want2" ]] || fail "CapEff $(status_field CapEff)"
	[[ $(status_field CapAmb) == "$want2" ]] || fail "CapAmb $(status_field CapAmb)"
}

@test "capabilities: a non-root process without ambient has none effective" {
	update_config '.process.user = {"uid": 1000, "gid": 1000}
		| .process.capabilities = {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"],
		                           "permitted": ["CAP_KILL"]}'
	run_in_container 'cat /proc/self/status'
	assert_success
	[[ $(status_field CapEff) == 0000000000000000 ]] || fail "CapEff $(status_field CapEff)"
	[[ $(status_field CapPrm) == 0000000000000000 ]] || fail "CapPrm $(status_field CapPrm)"
	[[ $(status_field CapBnd) == $(cap_mask KILL) ]] || fail "CapBnd $(status_field CapBnd)"
}

@test "capabilities: they are really enforced (chown without CAP_CHOWN fails)" {
	update_config '.root.readonly = false | .process.capabilities.bounding = ["CAP_KILL"]
		| .process.capabilities.effective = ["CAP_KILL"] | .process.capabilities.permitted = ["CAP_KILL"]
		| .process.capabilities.ambient = []'
	run_in_container 'touch /tmp/f && chown 1234 /tmp/f'
	assert_failure
	update_config '.process.capabilities.bounding += ["CAP_CHOWN"]
		| .process.capabilities.effective += ["CAP_CHOWN"] | .process.capabilities.permitted += ["CAP_CHOWN"]'
	run_in_container 'touch /tmp/f && chown 1234 /tmp/f && stat -c %u /tmp/f'
	assert_success
	assert_output_equals 1234
}

@test "capabilities: an unknown name is ignored, the known ones applied (as runc)" {
	# runc skips names it (or the kernel) does not know, so that a config
	# written for a newer kernel still runs.
	# crun and runc also take malformed names ("NET_ADMIN", "cap_foo") that
	# way: a warning, not a failure.
	update_config '.process.capabilities.bounding += ["CAP_NO_SUCH_THING", "NET_ADMIN", "cap_foo"]'
	set_cmd 'grep ^CapBnd: /proc/self/status'
	run --separate-stderr runtime run -b "$BUNDLE" "$CID"
	assert_success
	[[ $(echo ${output#CapBnd:}) == $(cap_mask AUDIT_WRITE KILL NET_BIND_SERVICE) ]] || fail "$output"
	[[ $stderr == *warning* && $stderr == *CAP_NO_SUCH_THING* && $stderr == *NET_ADMIN* ]] ||
		fail "no warning naming them: $stderr"
}

@test "noNewPrivileges: true and false show in /proc/self/status" {
	update_config '.process.noNewPrivileges = true'
	run_in_container 'grep ^NoNewPrivs: /proc/self/status'
	assert_success
	[[ $(echo ${output#NoNewPrivs:}) == 1 ]] || fail "$output"
	update_config '.process.noNewPrivileges = false'
	run_in_container 'grep ^NoNewPrivs: /proc/self/status'
	assert_success
	[[ $(echo ${output#NoNewPrivs:}) == 0 ]] || fail "$output"
}

@test "rlimits: soft and hard values of several resources" {
	update_config '.process.rlimits = [
		{"type": "RLIMIT_NOFILE", "soft": 512, "hard": 1000},
		{"type": "RLIMIT_CORE", "soft": 0, "hard": 4096},
		{"type": "RLIMIT_NPROC", "soft": 300, "hard": 400},
		{"type": "RLIMIT_MSGQUEUE", "soft": 1024, "hard": 2048}]'
	run_in_container 'cat /proc/self/limits'
	assert_success
	grep -E '^Max open files +512 +1000 ' <<<"$output"
	grep -E '^Max core file size +0 +4096 ' <<<"$output"
	grep -E '^Max processes +300 +400 ' <<<"$output"
	grep -E '^Max msgqueue size +1024 +2048 ' <<<"$output"
}

@test "rlimits: soft above hard is refused" {
	update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 2048, "hard": 1024}]'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line
	assert_no_leftovers
}

@test "rlimits: an unknown type is refused" {
	update_config '.process.rlimits = [{"type": "RLIMIT_NO_SUCH", "soft": 1, "hard": 1}]'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line RLIMIT_NO_SUCH
	assert_no_leftovers
}

@test "oomScoreAdj: written for the process" {
	update_config '.process.oomScoreAdj = 500'
	run_in_container 'cat /proc/self/oom_score_adj'
	assert_success
	assert_output_equals 500
}

@test "oomScoreAdj: absent leaves the caller's value" {
	local mine
	mine=$(cat /proc/self/oom_score_adj)
	run_in_container 'cat /proc/self/oom_score_adj'
	assert_success
	assert_output_equals "$mine"
}

@test "hostname and domainname in the UTS namespace, host unchanged" {
	local host_name host_domain
	host_name=$(hostname)
	host_domain=$(cat /proc/sys/kernel/domainname)
	update_config '.hostname = "box-1" | .domainname = "example.test"'
	run_in_container 'hostname; cat /proc/sys/kernel/domainname'
	assert_success
	[[ ${lines[0]} == box-1 && ${lines[1]} == example.test ]] || fail "$output"
	[[ $(hostname) == "$host_name" ]]
	[[ $(cat /proc/sys/kernel/domainname) == "$host_domain" ]]
}

@test "hostname without a UTS namespace is refused" {
	update_config '.linux.namespaces |= map(select(.type != "uts")) | .hostname = "nope"'
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line
	assert_no_leftovers
}

@test "signals: what the runtime ignores is not ignored in the container; none blocked" {
	# The control: a process started this way does ignore them.
	run with_ignored_signals grep '^SigIgn' /proc/self/status
	[[ $output == "SigIgn:"* && $output != *":"$'\t'"0000000000000000" ]] ||
		fail "the control ignores nothing: $output"
	# No shell in between: busybox sh ignores SIGQUIT in some cases.
	update_config '.process.args = ["grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"]'
	run with_ignored_signals runtime run -b "$BUNDLE" "$CID"
	assert_success
	assert_output_equals $'SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000'
}

@test "a process that forks and exits leaves no orphan behind" {
	# The pid namespace dies with its init: background children go too.
	run_in_container 'sleep 1000 & sleep 1000 & echo started'
	assert_success
	assert_output_equals started
	assert_no_leftovers
}

@test "--preserve-fds: the extra fds reach the process with their content" {
	echo "three" >"$BATS_TEST_TMPDIR/f3"
	echo "four" >"$BATS_TEST_TMPDIR/f4"
	set_cmd 'cat <&3; cat <&4; [ -e /proc/self/fd/5 ] && echo "5 LEAKED"; true'
	# Not through runtime(), which closes fd 3 (bats' own).
	run timeout 60 "$RUNTIME" --root "$ROOT" run --preserve-fds 2 -b "$BUNDLE" "$CID" \
		3<"$BATS_TEST_TMPDIR/f3" 4<"$BATS_TEST_TMPDIR/f4" 5</dev/null
	assert_success
	assert_output_equals $'three\nfour'
}

@test "LISTEN_FDS: socket-activation fds are passed, with LISTEN_FDS and LISTEN_PID=1" {
	echo "activated" >"$BATS_TEST_TMPDIR/f3"
	set_cmd 'echo "fds=$LISTEN_FDS pid=$LISTEN_PID"; cat <&3'
	# LISTEN_PID must name the runtime's own pid (sd_listen_fds), hence exec.
	run timeout 60 bash -c 'export LISTEN_FDS=1 LISTEN_PID=$$; exec "$@"' _ \
		"$RUNTIME" --root "$ROOT" run -b "$BUNDLE" "$CID" 3<"$BATS_TEST_TMPDIR/f3"
	assert_success
	[[ $output == $'fds=1 pid=1\nactivated' ]] || fail "$output"
}

@test "LISTEN_FDS for another pid is ignored" {
	set_cmd 'echo "fds=$LISTEN_FDS"; [ -e /proc/self/fd/3 ] && echo "3 LEAKED"; true'
	run env LISTEN_FDS=1 LISTEN_PID=1 timeout 60 "$RUNTIME" --root "$ROOT" run -b "$BUNDLE" "$CID" 3</dev/null
	assert_success
	assert_output_equals "fds="
}

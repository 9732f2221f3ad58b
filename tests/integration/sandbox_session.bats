#!/usr/bin/env bats
# Sessions (issue 14): `sandrun sandbox start/exec/cp/list/stop` and the
# python kernel.  Each test starts its own sessions, named after the test's
# directory, and stops them (or checks they are gone) by name.

load helpers

setup() {
	ROOT=$BATS_TEST_TMPDIR/root
	TEST_MARK="SANDRUN_TEST_MARK=$BATS_TEST_TMPDIR"
	S=s$$-$BATS_TEST_NUMBER
	mkdir -p "$ROOT"
	export ROOT TEST_MARK S
}

teardown() {
	local pid
	for pid in $(session_pids); do kill -9 "$pid" 2>/dev/null || true; done
	"$RUNTIME" --root "$ROOT" sandbox list >/dev/null 2>&1 || true
	kill_marked_processes
	rm -rf "$ROOT"
}

# The supervisors of this test's sessions.
session_pids() {
	"$RUNTIME" --root "$ROOT" sandbox list --format json 2>/dev/null | jq -r '.[].pid' 2>/dev/null
}

start() {
	runtime sandbox start --env "$TEST_MARK" "$@"
}

# ex NAME ARG...: run an execution (bats' run: $status, $output), its
# receipt in $BATS_TEST_TMPDIR/r.json.
ex() {
	local name=$1
	shift
	rm -f "$BATS_TEST_TMPDIR/r.json"
	run runtime sandbox exec "$name" --receipt "$BATS_TEST_TMPDIR/r.json" "$@"
}

receipt() {
	jq -r "$1" "$BATS_TEST_TMPDIR/r.json"
}

session_id() {
	"$RUNTIME" --root "$ROOT" sandbox list --format json | jq -r --arg n "$1" '.[] | select(.name == $n) | .id'
}

# Nothing of session $1 (container id $2) is left: no state, container,
# cgroup, mount, process or slot lock held.
assert_session_gone() {
	local name=$1 id=$2 left cgs
	[[ ! -e $ROOT/.sandbox/sessions/$name ]] || fail "state left behind: $(ls -la "$ROOT/.sandbox/sessions/$name")"
	left=$(find "$ROOT/.sandbox" -mindepth 1 -maxdepth 1 -name 'sandbox-*' 2>/dev/null)
	[[ -z $left ]] || fail "sandbox directories left behind: $left"
	run runtime list -q
	[[ -z $output ]] || fail "containers left behind: $output"
	cgs=$(cgroups_named "$id")
	[[ -z $cgs ]] || fail "cgroups left behind: $cgs"
	! grep -qF "$id" /proc/[0-9]*/mountinfo 2>/dev/null || fail "mounts left behind"
	[[ -z $(live_marked_pids) ]] || fail "processes left behind: $(live_marked_pids)"
	# every slot lock is free again
	local f
	for f in "$ROOT"/.sandbox/slots/*; do
		[[ -e $f ]] || continue
		flock -n "$f" true || fail "slot lock $f still held"
	done
}

# wait_gone NAME: until the session's state directory is gone (the
# supervisor removes it last); generous, the v2 guest is slow.
wait_gone() {
	for _ in $(seq 300); do
		[[ -e $ROOT/.sandbox/sessions/$1 ]] || return 0
		sleep 0.1
	done
	fail "session $1 is still there"
}

@test "session: /work, /tmp and processes persist across executions; stop removes everything" {
	start --name "$S"
	id=$(session_id "$S")
	[[ $id == sandbox-* ]]
	ex "$S" -- sh -c 'echo one > /work/a; echo two > /tmp/b; sleep 1000 & echo $! > /tmp/pid'
	assert_success
	[[ $(receipt .session) == "$S" ]]
	[[ $(receipt '.files | map(.path) | join(",")') == a ]]
	ex "$S" -- sh -c 'cat /work/a /tmp/b; kill -0 $(cat /tmp/pid) && echo alive'
	assert_success
	[[ $(receipt .stdout) == $'one\ntwo\nalive' ]]
	# files lists what this execution changed only
	[[ $(receipt '.files | length') == 0 ]]
	ex "$S" -- sh -c 'echo three >> /work/a; rm /work/a; echo n > /work/c'
	[[ $(receipt '[.files[] | .path + ":" + .change] | sort | join(",")') == "a:deleted,c:created" ]]
	runtime sandbox stop "$S"
	assert_success
	assert_session_gone "$S" "$id"
	run runtime sandbox exec "$S" -- true
	[[ $status == 125 ]]
	[[ $output == *"no session \"$S\""* ]]
}

@test "session: the policy applies: unprivileged, no network, the session's limits" {
	start --name "$S" --pids 32
	ex "$S" -- sh -c 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; id -u; cat /proc/net/dev | wc -l'
	assert_success
	[[ $(receipt .stdout) == *"CapEff:	0000000000000000"* ]]
	[[ $(receipt .stdout) == *"NoNewPrivs:	1"* ]]
	[[ $(receipt .stdout) == *"Seccomp:	2"* ]]
	[[ $(receipt .policy.limits.pids) == 32 || $(receipt .policy.pids) == 32 || $(receipt '.policy | tostring') == *32* ]]
	ex "$S" --env FOO=bar -- sh -c 'echo $FOO; env | grep -c SANDRUN_TEST_MARK'
	[[ $(receipt .stdout) == $'bar\n1' ]]
	runtime sandbox stop "$S"
}

@test "session: an execution runs in every namespace of the session's init, none of the host's" {
	start --name "$S"
	ex "$S" -- sh -c 'for n in user mnt pid net ipc uts cgroup; do echo "$n $(readlink /proc/self/ns/$n) $(readlink /proc/1/ns/$n)"; done'
	assert_success
	local n ours init
	while read -r n ours init; do
		[[ $ours == "$init" ]] || fail "$n: the execution's $ours is not the init's $init"
		[[ $ours != "$(readlink /proc/self/ns/$n)" ]] || fail "$n: the execution is in the host's namespace"
	done <<<"$(receipt .stdout)"
	[[ $(wc -l <<<"$(receipt .stdout)") == 7 ]]
	runtime sandbox stop "$S"
}

@test "session: an execution whose sandrun is SIGKILLed is stopped with what it started; earlier ones' processes live on" {
	start --name "$S"
	ex "$S" -- sh -c 'sleep 4320 >/dev/null 2>&1 & echo started'
	"$RUNTIME" --root "$ROOT" sandbox exec "$S" --quiet -- sh -c 'setsid sleep 4322 & sleep 4321' &
	local client=$! i
	for i in $(seq 100); do
		ex "$S" -- ps -eo args
		[[ $(receipt .stdout) == *"sleep 4321"* && $(receipt .stdout) == *"sleep 4322"* ]] && break
		sleep 0.1
	done
	[[ $(receipt .stdout) == *"sleep 4321"* ]] || fail "the execution never started"
	kill -9 "$client"
	wait "$client" || true
	for i in $(seq 100); do
		ex "$S" -- ps -eo args
		[[ $(receipt .stdout) != *"sleep 4321"* && $(receipt .stdout) != *"sleep 4322"* ]] && break
		sleep 0.1
	done
	[[ $(receipt .stdout) != *"sleep 4321"* ]] || fail "the execution outlived its sandrun: $(receipt .stdout)"
	[[ $(receipt .stdout) != *"sleep 4322"* ]] || fail "what it started outlived its sandrun: $(receipt .stdout)"
	[[ $(receipt .stdout) == *"sleep 4320"* ]] || fail "an earlier execution's process was killed: $(receipt .stdout)"
	runtime sandbox stop "$S"
}

@test "session: the supervisor's loaded exec sees the container as it is now (paused since: refused; resumed: runs)" {
	start --name "$S"
	ex "$S" -- true
	assert_success
	local id
	id=$(session_id "$S")
	runtime pause "$id"
	run --separate-stderr runtime sandbox exec "$S" -- true
	[[ $status == 125 ]] || fail "status $status: $stderr"
	[[ $stderr == *"paused"* ]] || fail "$stderr"
	runtime resume "$id"
	ex "$S" -- echo back
	assert_success
	[[ $(receipt .stdout) == back ]]
	runtime sandbox stop "$S"
}

@test "session: a command that cannot be started is 127 or 126 with a receipt, as in a one-shot" {
	start --name "$S"
	run -127 runtime sandbox exec "$S" --receipt "$BATS_TEST_TMPDIR/r.json" -- /no/such/command
	[[ $(receipt .exit_code) == 127 ]]
	[[ $(receipt .message) == *'exec "/no/such/command": no such file or directory' ]] || fail "$(receipt .message)"
	[[ $(receipt .message) != *"sandbox-"* ]] || fail "the container's id is in the message: $(receipt .message)"
	run -126 runtime sandbox exec "$S" --receipt "$BATS_TEST_TMPDIR/r.json" -- /etc/passwd
	[[ $(receipt .exit_code) == 126 ]]
	ex "$S" -- true
	assert_success
	runtime sandbox stop "$S"
}

@test "session: a timeout stops the execution and everything it started; the session stays usable" {
	start --name "$S"
	ex "$S" -- sh -c 'sleep 1000 & echo $! > /tmp/old'
	run runtime sandbox exec "$S" --timeout 1s --receipt "$BATS_TEST_TMPDIR/r.json" -- \
		sh -c '(sleep 500 &); setsid sleep 600 & sleep 700'
	[[ $(receipt .limit_exceeded) == timeout ]]
	ex "$S" -- sh -c 'ps -eo args; kill -0 $(cat /tmp/old) && echo old-alive'
	assert_success
	[[ $(receipt .stdout) != *"sleep 500"* ]]
	[[ $(receipt .stdout) != *"sleep 600"* ]]
	[[ $(receipt .stdout) != *"sleep 700"* ]]
	[[ $(receipt .stdout) == *old-alive* ]]
	runtime sandbox stop "$S"
}

@test "session: a memory-limit kill leaves the session usable; output limit per execution" {
	start --name "$S" --memory 64M --disk 16M --tmp-size 16M
	ex "$S" -- python3 -c 'a = bytearray(400 << 20)'
	[[ $(receipt .limit_exceeded) == memory ]]
	ex "$S" -- echo still here
	assert_success
	[[ $(receipt .stdout) == "still here" ]]
	[[ $(receipt .limit_exceeded) == null ]]
	ex "$S" --output-limit 1K -- sh -c 'yes | head -c 100000'
	[[ $(receipt .limit_exceeded) == output ]]
	[[ $(receipt .stdout_truncated) == true ]]
	runtime sandbox stop "$S"
}

@test "session: cp in and out, confined to /work and /tmp, symlinks never followed out" {
	start --name "$S"
	echo secret-of-host > "$BATS_TEST_TMPDIR/host"
	printf 'data\n' > "$BATS_TEST_TMPDIR/in"
	runtime sandbox cp "$S" "$BATS_TEST_TMPDIR/in" /work/in.txt
	assert_success
	ex "$S" -- sh -c 'cat /work/in.txt; stat -c %U /work/in.txt; echo out > /tmp/o.txt
		ln -s '"$BATS_TEST_TMPDIR"'/host /work/link; ln -s / /tmp/root'
	[[ $(receipt .stdout) == $'data\nsandbox' ]]
	runtime sandbox cp "$S:/tmp/o.txt" "$BATS_TEST_TMPDIR/o.txt"
	assert_success
	[[ $(cat "$BATS_TEST_TMPDIR/o.txt") == out ]]
	# out of /work and /tmp, through symlinks, or onto one: refused
	run runtime sandbox cp "$S:/etc/passwd" "$BATS_TEST_TMPDIR/x"
	[[ $status == 125 ]]
	run runtime sandbox cp "$S:/work/../etc/passwd" "$BATS_TEST_TMPDIR/x"
	[[ $status == 125 ]]
	run runtime sandbox cp "$S:/work/link" "$BATS_TEST_TMPDIR/x"
	[[ $status == 125 ]]
	run runtime sandbox cp "$S:/tmp/root/etc/hostname" "$BATS_TEST_TMPDIR/x"
	[[ $status == 125 ]]
	[[ ! -e $BATS_TEST_TMPDIR/x ]]
	run runtime sandbox cp "$S" "$BATS_TEST_TMPDIR/in" /work/link
	[[ $status == 125 ]]
	[[ $(cat "$BATS_TEST_TMPDIR/host") == secret-of-host ]]
	run runtime sandbox cp "$S" "$BATS_TEST_TMPDIR/in" /etc/x
	[[ $status == 125 ]]
	# a relative path is the working directory's, and stays inside it
	run runtime sandbox cp "$S" "$BATS_TEST_TMPDIR/in" rel.txt
	assert_success
	ex "$S" -- cat /work/rel.txt
	[[ $(receipt .stdout) == data ]]
	run runtime sandbox cp "$S:../etc/passwd" "$BATS_TEST_TMPDIR/x"
	[[ $status == 125 ]]
	[[ ! -e $BATS_TEST_TMPDIR/x ]]
	runtime sandbox stop "$S"
}

@test "session: list shows sessions, as JSON with --format json" {
	start --name "$S-a"
	start --name "$S-b" --kernel python
	run runtime sandbox list --format json
	assert_success
	[[ $(jq -r 'map(.name) | sort | join(",")' <<<"$output") == "$S-a,$S-b" ]]
	[[ $(jq -r --arg n "$S-b" '.[] | select(.name == $n) | .kernel' <<<"$output") == python ]]
	run runtime sandbox list
	assert_success
	[[ $output == *"$S-a"* ]]
	run runtime sandbox start --env "$TEST_MARK" --name "$S-a"
	[[ $status == 125 ]]
	[[ $output == *exists* ]]
	runtime sandbox stop "$S-a"
	runtime sandbox stop "$S-b"
	run runtime sandbox list --format json
	[[ $output == "[]" || $(jq length <<<"$output") == 0 ]]
}

@test "session: bad arguments are one clear line and exit 125" {
	run runtime sandbox start --name 'a/b'
	[[ $status == 125 && $output == *'--name "a/b"'* ]]
	run runtime sandbox start --name x --idle-timeout soon
	[[ $status == 125 && $output == *'--idle-timeout "soon"'* ]]
	run runtime sandbox start --name x --kernel ruby
	[[ $status == 125 && $output == *'--kernel "ruby"'* ]]
	run runtime sandbox start --name x -- true
	[[ $status == 125 ]]
	run runtime sandbox exec nosuch -- true
	[[ $status == 125 && $output == *'no session "nosuch"'* ]]
	start --name "$S"
	run runtime sandbox exec "$S" --code 'print(1)'
	[[ $status == 125 && $output == *"--kernel python"* ]]
	run runtime sandbox exec "$S" --memory 1G -- true
	[[ $status == 125 ]]
	runtime sandbox stop "$S"
	[[ -z $(ls "$ROOT/.sandbox/sessions") ]]
}

@test "session: the idle timeout and the maximum lifetime end a session and leave nothing" {
	start --name "$S-idle" --idle-timeout 1s
	idle_id=$(session_id "$S-idle")
	start --name "$S-life" --max-lifetime 2s --idle-timeout 1h
	life_id=$(session_id "$S-life")
	wait_gone "$S-idle"
	wait_gone "$S-life"
	assert_session_gone "$S-idle" "$idle_id"
	assert_session_gone "$S-life" "$life_id"
}

@test "session: a running execution keeps an idle session alive" {
	start --name "$S" --idle-timeout 4s
	ex "$S" --timeout 30s -- sleep 6
	assert_success
	ex "$S" -- true
	assert_success
	runtime sandbox stop "$S"
}

@test "session: a SIGKILLed supervisor: its sandbox dies and the next sandrun reclaims it" {
	start --name "$S"
	id=$(session_id "$S")
	pid=$(session_pids)
	ex "$S" -- sh -c 'sleep 1000 &'
	kill -9 "$pid"
	for _ in $(seq 100); do [[ -z $(live_marked_pids) ]] && break; sleep 0.1; done
	run runtime sandbox list --format json
	assert_success
	[[ $(jq length <<<"$output") == 0 ]]
	assert_session_gone "$S" "$id"
	# the name can be used again
	start --name "$S"
	runtime sandbox stop "$S"
}

@test "kernel: variables persist; stdout, stderr, exception and value per execution" {
	start --name "$S" --kernel python
	ex "$S" --code 'x = 41'
	assert_success
	ex "$S" --code 'print(x + 1)'
	assert_success
	[[ $(receipt .stdout) == 42 ]]
	[[ $(receipt .kernel.state_lost) == false ]]
	ex "$S" --code 'import sys; print("err", file=sys.stderr); x * 2'
	[[ $(receipt .stderr) == err ]]
	[[ $(receipt .kernel.value) == 82 ]]
	ex "$S" --code '1 / 0'
	[[ $status == 1 ]]
	[[ $(receipt .kernel.exception) == "ZeroDivisionError: division by zero" ]]
	[[ $(receipt .kernel.traceback) == *'File "<exec>", line 1'* ]]
	[[ $(receipt .kernel.traceback) != *driver.py* ]]
	# code on stdin; a subprocess's output is the execution's; files
	echo 'import subprocess; subprocess.run(["echo", "sub"]); open("/work/f.txt", "w").write("x")' |
		runtime sandbox exec "$S" --receipt "$BATS_TEST_TMPDIR/r.json"
	[[ $(receipt .stdout) == sub ]]
	[[ $(receipt '.files[0].path') == f.txt ]]
	# and commands still run beside the interpreter
	ex "$S" -- cat /work/f.txt
	[[ $(receipt .stdout) == x ]]
	runtime sandbox stop "$S"
}

@test "kernel: a timeout interrupts (state kept), or restarts a deaf interpreter (state lost)" {
	start --name "$S" --kernel python
	ex "$S" --code 'y = 5'
	ex "$S" --timeout 1s --code 'while True: pass'
	[[ $(receipt .limit_exceeded) == timeout ]]
	[[ $(receipt .kernel.interrupted) == true ]]
	[[ $(receipt .kernel.exception) == KeyboardInterrupt ]]
	[[ $(receipt .kernel.state_lost) == false ]]
	ex "$S" --code 'print(y)'
	[[ $(receipt .stdout) == 5 ]]
	run runtime sandbox exec "$S" --timeout 1s --receipt "$BATS_TEST_TMPDIR/r.json" \
		--code $'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass'
	[[ $(receipt .limit_exceeded) == timeout ]]
	[[ $(receipt .kernel.restarted) == true ]]
	[[ $(receipt .kernel.state_lost) == true ]]
	[[ $(receipt .message) == *"state"* || $(receipt .message) == *"lost"* ]]
	ex "$S" --code 'y = 6'
	assert_success
	[[ $(receipt .kernel.restarted) == false ]]
	ex "$S" --code 'print(y)'
	[[ $(receipt .stdout) == 6 ]]
	runtime sandbox stop "$S"
}

@test "kernel: an interpreter killed at the memory limit is restarted and says its state was lost" {
	start --name "$S" --kernel python --memory 64M --disk 16M --tmp-size 16M
	ex "$S" --code 'z = 1'
	run runtime sandbox exec "$S" --receipt "$BATS_TEST_TMPDIR/r.json" --code 'a = bytearray(400 << 20)'
	[[ $(receipt .limit_exceeded) == memory ]]
	[[ $(receipt .kernel.restarted) == true ]]
	[[ $(receipt .kernel.state_lost) == true ]]
	[[ $(receipt .message) == *lost* ]]
	ex "$S" --code 'print("z" in globals())'
	assert_success
	[[ $(receipt .stdout) == False ]]
	runtime sandbox stop "$S"
}

@test "kernel: a session whose root has no python3 is refused at start and leaves nothing" {
	mkdir -p "$BATS_TEST_TMPDIR/rootfs/bin"
	cp /bin/busybox "$BATS_TEST_TMPDIR/rootfs/bin/" 2>/dev/null || skip "no busybox"
	ln -s busybox "$BATS_TEST_TMPDIR/rootfs/bin/sh"
	ln -s busybox "$BATS_TEST_TMPDIR/rootfs/bin/sleep"
	run runtime sandbox start --env "$TEST_MARK" --name "$S" --kernel python --rootfs "$BATS_TEST_TMPDIR/rootfs"
	[[ $status == 125 ]]
	[[ $output == *python3* ]]
	[[ -z $(ls "$ROOT/.sandbox/sessions") ]]
	[[ -z $(live_marked_pids) ]]
}

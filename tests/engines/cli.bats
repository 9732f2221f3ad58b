#!/usr/bin/env bats
# Docker and podman, driving sandrun, through the scenarios of issue 16.
# Their CLIs take the same flags for these scenarios, so one file serves
# both: ENGINE=docker or ENGINE=podman (tests/engines/run.sh runs it twice).
#
# dockerd runs on its own socket, data root and exec root, with the runtime
# registered by contrib/engines/daemon.json, the cgroupfs driver, the vfs
# storage driver (no overlay mounts to leave behind), no iptables rules and a
# bridge of the test's own (no address on the host side, no forwarding).
# podman runs with its own --root/--runroot and contrib/engines/containers.conf
# (the [engine.runtimes] entry makes sandrun the default runtime), and a CNI
# network of the test's own with the same properties as Docker's.

bats_require_minimum_version 1.5.0
load helpers

IMAGE=localhost/sre-busybox:test

setup_file() {
	[[ ${ENGINE:-} == docker || $ENGINE == podman ]] || return 0
	eng_setup_dir
	export BRIDGE=srb${ENG_DIR##*.}
	export ENG_CGROUP=sre-${ENG_DIR##*.}
	eng_note_dir /etc/docker/key.json
	eng_note_dir /run/containerd/fifo
	eng_note_dir /run/containerd/s
	eng_note_dir /run/containerd
	eng_note_sockets /run/containerd/s
	local c
	for c in /sys/fs/cgroup/*/; do
		eng_note_dir "${c}libpod_parent"
	done
	export SUBNET=10.213.$((RANDOM % 200 + 20))
	eng_rootfs_tar || return 1
	write_client
	ip link add "$BRIDGE" type bridge && ip link set "$BRIDGE" up || return 1
	# dockerd takes its subnet from the bridge's address (forwarding stays
	# off); podman's CNI bridge has no address on the host side.
	[[ $ENGINE == podman ]] || ip addr add "$SUBNET.1/24" dev "$BRIDGE" || return 1
	"${ENGINE}_start" || return 1
	eng import "$ENG_DIR/rootfs.tar" "$IMAGE" >/dev/null
}

teardown_file() {
	[[ -n ${ENG_DIR:-} ]] || return 0
	local ids
	ids=$(eng ps -aq 2>/dev/null)
	[[ -z $ids ]] || eng rm -f $ids >/dev/null 2>&1
	"${ENGINE}_stop"
	ip link del "$BRIDGE" 2>/dev/null
	eng_teardown
}

setup() {
	[[ ${ENGINE:-} == docker || $ENGINE == podman ]] || skip "ENGINE is neither docker nor podman"
	command -v "$(eng_binary)" >/dev/null || skip "$ENGINE is not installed"
}

# --- the engines ------------------------------------------------------------

eng_binary() {
	# /usr/local/bin/docker may be another client: Debian's is the one
	# matching Debian's dockerd.
	[[ $ENGINE == docker ]] && echo /usr/bin/docker || echo /usr/bin/podman
}

# eng ARG...: the engine's client, under a timeout ($ENG_DIR/eng, a script
# so that pipes and `script` can call it too).
eng() {
	"$ENG_DIR/eng" "$@"
}

# write_client: $ENG_DIR/eng.  Docker's warning about forwarding (switched off
# on purpose) is dropped from stderr; ENG_FOREGROUND=1 keeps the client in the
# foreground process group (a terminal's).
write_client() {
	if [[ $ENGINE == docker ]]; then
		cat >"$ENG_DIR/eng" <<-EOF
			#!/bin/bash
			timeout -k 10 \${ENG_FOREGROUND:+--foreground} $ENG_TIMEOUT /usr/bin/docker \\
				-H unix://$ENG_DIR/docker.sock "\$@" 2> >(grep -v 'IPv4 forwarding is disabled' >&2)
		EOF
	else
		cat >"$ENG_DIR/eng" <<-EOF
			#!/bin/bash
			CONTAINERS_CONF=$ENG_DIR/containers.conf exec timeout -k 10 \${ENG_FOREGROUND:+--foreground} \\
				$ENG_TIMEOUT /usr/bin/podman --root $ENG_DIR/root --runroot $ENG_DIR/run \\
				--tmpdir $ENG_DIR/tmp --storage-driver vfs "\$@"
		EOF
	fi
	chmod 755 "$ENG_DIR/eng"
}

docker_start() {
	# contrib/engines/daemon.json, with this build's path, plus crun for
	# the churn comparison and live restore for the daemon-restart test.
	jq --arg p "$RUNTIME" --arg c "$(crun_for_engines "$ENG_DIR/crun")" \
		'.runtimes.sandrun.path = $p | .runtimes.crun.path = $c | ."live-restore" = true' \
		"$REPO_ROOT/contrib/engines/daemon.json" >"$ENG_DIR/daemon.json"
	mkdir -p "$ENG_DIR/data" "$ENG_DIR/exec"
	daemon_start dockerd /usr/sbin/dockerd --config-file "$ENG_DIR/daemon.json" \
		--data-root "$ENG_DIR/data" --exec-root "$ENG_DIR/exec" \
		-H "unix://$ENG_DIR/docker.sock" --pidfile "$ENG_DIR/docker.pidfile" \
		--containerd-namespace sre --containerd-plugins-namespace sre-plugins \
		--storage-driver vfs --exec-opt native.cgroupdriver=cgroupfs \
		--iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
		--bridge "$BRIDGE" \
		--default-runtime sandrun --userland-proxy=false --cgroup-parent "/$ENG_CGROUP"
	wait_until 60 eng version || {
		daemon_log dockerd >&3
		return 1
	}
}

docker_stop() {
	daemon_stop dockerd
}

podman_start() {
	mkdir -p "$ENG_DIR/cni" "$ENG_DIR/tmp"
	# contrib/engines/containers.conf with this build's path, podman's
	# side directories under $ENG_DIR, and the test's network.
	sed -e "s|^sandrun = .*|sandrun = [\"$RUNTIME\"]|" \
		-e "s|^\[engine\]|[engine]\nstatic_dir = \"$ENG_DIR/static\"\nvolume_path = \"$ENG_DIR/volumes\"\nnetwork_cmd_path = \"\"|" \
		-e "s|^\[containers\]|[containers]\ninit_path = \"/usr/bin/tini-static\"|" \
		"$REPO_ROOT/contrib/engines/containers.conf" >"$ENG_DIR/containers.conf"
	cat >>"$ENG_DIR/containers.conf" <<-EOF
		[network]
		network_config_dir = "$ENG_DIR/cni"
		default_network = "srenet"
	EOF
	# A bridge without an address on the host side: no forwarding switched
	# on, no masquerading, no iptables rule.
	cat >"$ENG_DIR/cni/srenet.conflist" <<-EOF
		{ "cniVersion": "0.4.0", "name": "srenet", "plugins": [
		  { "type": "bridge", "bridge": "$BRIDGE", "isGateway": false,
		    "ipMasq": false, "ipam": { "type": "host-local",
		      "dataDir": "$ENG_DIR/ipam",
		      "ranges": [[{ "subnet": "$SUBNET.0/24" }]] } } ] }
	EOF
	eng info >/dev/null || return 1
}

podman_stop() {
	:
}

# runtime_name: how the engine reports the runtime of container $1.
runtime_of() {
	if [[ $ENGINE == docker ]]; then
		eng inspect -f '{{.HostConfig.Runtime}}' "$1"
	else
		eng inspect -f '{{.OCIRuntime}}' "$1"
	fi
}

# in_cgroup FILE-V1 FILE-V2 CONTROLLER: a shell command printing the
# container's own value of a cgroup file, on v1 or v2.
cg_file() {
	echo "cat /sys/fs/cgroup/$3/$1 2>/dev/null || cat /sys/fs/cgroup/$2"
}

# --- scenarios -------------------------------------------------------------

@test "$ENGINE: the configured runtime is sandrun, and sandrun runs the container" {
	run eng run -d --name rt-$$ "$IMAGE" sleep 100
	assert_success
	run runtime_of rt-$$
	[[ $output == sandrun || $output == "$RUNTIME" ]] || fail "runtime: $output"
	# sandrun keeps the container's state.json under the --root the engine
	# passes it (Docker: under its exec root) or its default, /run/sandrun
	# (podman passes none).
	local id
	id=$(eng inspect -f '{{.Id}}' rt-$$)
	[[ -n $(find "$ENG_DIR" /run/sandrun -path "*/$id/state.json" 2>/dev/null) ]] ||
		fail "no sandrun state.json for $id"
	run eng rm -f rt-$$
	assert_success
	[[ -z $(find "$ENG_DIR" /run/sandrun -path "*/$id*" 2>/dev/null) ]] ||
		fail "sandrun state of $id left behind"
}

@test "$ENGINE: --runtime PATH selects sandrun for one command" {
	[[ $ENGINE == podman ]] || skip "Docker takes only runtimes registered in daemon.json (the test above)"
	run eng --runtime "$RUNTIME" run --rm "$IMAGE" echo by-path
	assert_success
	assert_output_equals by-path
}

@test "$ENGINE: output, stderr and the exit status" {
	run eng run --rm "$IMAGE" sh -c 'echo out; echo err >&2; exit 7'
	[[ $status -eq 7 ]] || fail "status $status: $output"
	[[ $output == *out* && $output == *err* ]] || fail "output: $output"
	run eng run --rm "$IMAGE" echo hi
	assert_success
	assert_output_equals hi
}

@test "$ENGINE: a missing command exits 127 and says so" {
	run -127 eng run --rm "$IMAGE" /bin/nope
	[[ ${output,,} == *"no such file"* || ${output,,} == *"not found"* ]] || fail "output: $output"
}

@test "$ENGINE: piped stdin (-i)" {
	run bash -c "printf 'line1\\nline2\\n' | $ENG_DIR/eng run --rm -i $IMAGE sh -c 'wc -l; echo done'"
	assert_success
	[[ $output == *2*done* ]] || fail "output: $output"
}

@test "$ENGINE: -it under a pty: a terminal, its size, and its output" {
	# The client sets the size after the start: wait for it (10 s at most).
	local inner='tty; i=0; until stty size 2>/dev/null | grep -qx "33 91"; do i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.1; done; echo size $(stty size); exit 3'
	run timeout -k 10 "$ENG_TIMEOUT" script -qefc "stty cols 91 rows 33; ENG_FOREGROUND=1 $ENG_DIR/eng run --rm -it $IMAGE sh -c '$inner'" /dev/null </dev/null
	[[ $output == *"/dev/pts/0"* ]] || fail "no terminal: $output"
	[[ $output == *"size 33 91"* ]] || fail "terminal size not passed: $output"
	[[ $status -eq 3 ]] || fail "status $status: $output"
}

@test "$ENGINE: detached container, exec, stop, rm" {
	local n=det-$$
	run eng run -d --name "$n" "$IMAGE" sleep 1000
	assert_success
	run eng exec "$n" sh -c 'echo exec-ok; cat /proc/1/cmdline | tr "\0" " "'
	assert_success
	[[ $output == *exec-ok*"sleep 1000"* ]] || fail "exec: $output"
	run eng exec -e E=1 -w /tmp -u 65534 "$n" sh -c 'echo $E $(pwd) $(id -u)'
	assert_success
	assert_output_equals "1 /tmp 65534"
	run eng exec "$n" sh -c 'exit 5'
	[[ $status -eq 5 ]] || fail "exec status $status: $output"
	run eng stop -t 1 "$n"
	assert_success
	run eng inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$n"
	[[ $output == "exited 137" ]] || fail "after stop: $output"
	run eng rm "$n"
	assert_success
	run eng inspect "$n"
	assert_failure
}

@test "$ENGINE: env, workdir and --user" {
	run eng run --rm -e FOO=bar -w /tmp -u 65534:65534 "$IMAGE" \
		sh -c 'echo $FOO $(pwd) $(id -u) $(id -g)'
	assert_success
	assert_output_equals "bar /tmp 65534 65534"
}

@test "$ENGINE: --read-only rootfs" {
	run eng run --rm --read-only "$IMAGE" sh -c 'touch /x'
	assert_failure
	assert_output_contains "Read-only file system"
	run eng run --rm --read-only "$IMAGE" sh -c 'echo ok > /dev/null && echo w-ok'
	assert_success
}

@test "$ENGINE: --memory reaches the cgroup; an OOM is reported as OOMKilled, 137" {
	run eng run --rm --memory 64m "$IMAGE" sh -c \
		"$(cg_file memory.limit_in_bytes memory.max memory)"
	assert_success
	assert_output_equals 67108864
	local n=oom-$$
	# tail buffers a line that never ends: it grows until the OOM killer.
	run eng run --name "$n" --memory 32m --memory-swap 32m "$IMAGE" tail /dev/zero
	[[ $status -eq 137 ]] || fail "status $status: $output"
	run eng inspect -f '{{.State.OOMKilled}} {{.State.ExitCode}}' "$n"
	eng rm -f "$n" >/dev/null
	if [[ $ENGINE == podman && $(stat -fc %T /sys/fs/cgroup) != cgroup2fs ]]; then
		# podman 4.3's conmon misses the OOM event on a cgroup v1 host
		# with every runtime (crun and runc alike): only the 137 is asserted.
		assert_output_contains " 137"
	else
		assert_output_equals "true 137"
	fi
}

@test "$ENGINE: --pids-limit stops a fork bomb" {
	run eng run --rm --pids-limit 20 "$IMAGE" sh -c \
		"$(cg_file pids.max pids.max pids); n=0; for i in \$(seq 60); do sleep 30 & n=\$((n+1)); done 2>/dev/null; echo procs \$(ls -d /proc/[0-9]* | wc -l); kill -9 -1"
	[[ $output == 20* ]] || fail "pids.max: $output"
	local procs=${output##*procs }
	procs=${procs%%[^0-9]*}
	((procs <= 20)) || fail "$procs processes under a limit of 20: $output"
}

@test "$ENGINE: --cpus sets the CFS quota" {
	run eng run --rm --cpus 0.5 "$IMAGE" sh -c \
		"cat /sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cat /sys/fs/cgroup/cpu.max"
	assert_success
	[[ $output == 50000 || $output == "50000 100000" ]] || fail "quota: $output"
}

@test "$ENGINE: --network none: only loopback" {
	run eng run --rm --network none "$IMAGE" sh -c 'ls /sys/class/net'
	assert_success
	assert_output_equals lo
}

@test "$ENGINE: the engine's bridge network: an address on the test's bridge" {
	run eng run --rm "$IMAGE" sh -c 'ip -4 -o addr show eth0'
	assert_success
	assert_output_contains "inet $SUBNET."
	# Two containers on the bridge reach each other.
	local n=srv-$$ ip
	run eng run -d --name "$n" "$IMAGE" nc -l -p 7777 -e echo pong
	assert_success
	ip=$(eng inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$n")
	run eng run --rm "$IMAGE" sh -c "for i in \$(seq 50); do echo | nc -w 2 $ip 7777 && break; sleep 0.2; done"
	eng rm -f "$n" >/dev/null
	assert_output_contains pong
}

@test "$ENGINE: --cap-drop ALL, --cap-add" {
	run eng run --rm --cap-drop ALL "$IMAGE" sh -c 'grep CapEff /proc/self/status'
	assert_success
	assert_output_contains 0000000000000000
	run eng run --rm --cap-drop ALL --cap-add NET_ADMIN "$IMAGE" sh -c 'grep CapEff /proc/self/status'
	assert_success
	assert_output_contains 0000000000001000
	run eng run --rm --network none --cap-drop ALL --cap-add NET_ADMIN "$IMAGE" ip link set lo mtu 1400
	assert_success
	run eng run --rm --network none --cap-drop ALL "$IMAGE" ip link set lo mtu 1400
	assert_failure
}

@test "$ENGINE: the engine's default seccomp profile is active" {
	run eng run --rm "$IMAGE" sh -c 'grep Seccomp: /proc/self/status'
	assert_success
	assert_output_contains 2
	run eng run --rm --security-opt seccomp=unconfined "$IMAGE" sh -c 'grep Seccomp: /proc/self/status'
	assert_success
	assert_output_contains 0
	# A profile given to the engine reaches the runtime: mkdir(2) and
	# mkdirat(2) refused with EACCES, everything else allowed.
	cat >"$BATS_TEST_TMPDIR/seccomp.json" <<-EOF
		{ "defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
		  { "names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13 } ] }
	EOF
	run eng run --rm --security-opt "seccomp=$BATS_TEST_TMPDIR/seccomp.json" "$IMAGE" mkdir /x
	assert_failure
	assert_output_contains "Permission denied"
	run eng run --rm "$IMAGE" mkdir /x
	assert_success
}

@test "$ENGINE: no-new-privileges" {
	run eng run --rm --security-opt no-new-privileges "$IMAGE" sh -c 'grep NoNewPrivs /proc/self/status'
	assert_success
	assert_output_contains 1
	run eng run --rm "$IMAGE" sh -c 'grep NoNewPrivs /proc/self/status'
	assert_output_contains 0
}

@test "$ENGINE: pause, unpause, top" {
	local n=pause-$$
	run eng run -d --name "$n" "$IMAGE" sleep 1000
	assert_success
	run eng pause "$n"
	assert_success
	run eng inspect -f '{{.State.Status}}' "$n"
	assert_output_equals paused
	run eng unpause "$n"
	assert_success
	run eng inspect -f '{{.State.Status}}' "$n"
	assert_output_equals running
	run eng top "$n"
	assert_success
	assert_output_contains "sleep 1000"
	run eng rm -f "$n"
	assert_success
}

@test "$ENGINE: --init: the engine's init is PID 1 and reaps" {
	run eng run --rm --init "$IMAGE" sh -c 'cat /proc/1/cmdline | tr "\0" " "'
	assert_success
	[[ $output == *init* || $output == *tini* ]] || fail "PID 1: $output"
}

@test "$ENGINE: user namespace with --uidmap" {
	[[ $ENGINE == podman ]] || skip "Docker maps users for the whole daemon (--userns-remap), not per container"
	run eng run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 "$IMAGE" \
		sh -c 'cat /proc/self/uid_map; touch /x && ls -n /x'
	assert_success
	[[ $(tr -s ' ' <<<"${output%%$'\n'*}") == " 0 100000 65536" ]] || fail "uid_map: $output"
	# The container's root owns what it creates (host uid 100000).
	[[ $output =~ [[:space:]]0[[:space:]]+0[[:space:]] ]] || fail "owner of /x: $output"
}

# SUBID_LINE: podman's --userns=auto takes its ranges from the user
# "containers" in /etc/subuid and /etc/subgid.  Where the host has none, the
# test adds this one for its own duration and removes exactly it afterwards.
SUBID_LINE=containers:2000000000:1000000

teardown() {
	if [[ -n ${SUBID_ADDED:-} ]]; then
		sed -i "/^$SUBID_LINE\$/d" /etc/subuid /etc/subgid
	fi
}

@test "$ENGINE: user namespace with --userns=auto" {
	[[ $ENGINE == podman ]] || skip "Docker maps users for the whole daemon (--userns-remap), not per container"
	if ! grep -q '^containers:' /etc/subuid 2>/dev/null || ! grep -q '^containers:' /etc/subgid 2>/dev/null; then
		grep -q '^containers:' /etc/subuid /etc/subgid 2>/dev/null &&
			skip "only one of /etc/subuid and /etc/subgid has a 'containers' range"
		SUBID_ADDED=1
		echo "$SUBID_LINE" >>/etc/subuid
		echo "$SUBID_LINE" >>/etc/subgid
	fi
	run eng run --rm --network none --userns=auto "$IMAGE" sh -c 'cat /proc/self/uid_map; touch /x && ls -n /x'
	assert_success
	local map
	map=$(tr -s ' ' <<<"${output%%$'\n'*}")
	[[ $map =~ ^\ 0\ [1-9][0-9]*\ [0-9]+$ ]] || fail "uid_map: $output"
	[[ $output =~ [[:space:]]0[[:space:]]+0[[:space:]] ]] || fail "owner of /x: $output"
}

@test "$ENGINE: restart of the engine with a container running" {
	[[ $ENGINE == docker ]] || skip "podman has no daemon: every command is a new engine reading the state back (the detached test)"
	local n=live-$$
	run eng run -d --name "$n" "$IMAGE" sleep 1000
	assert_success
	local pid
	pid=$(eng inspect -f '{{.State.Pid}}' "$n")
	docker_stop
	kill -0 "$pid" || fail "the container died with the daemon (live-restore)"
	docker_start
	run eng inspect -f '{{.State.Status}} {{.State.Pid}}' "$n"
	assert_output_equals "running $pid"
	run eng exec "$n" echo after-restart
	assert_output_equals after-restart
	run eng rm -f "$n"
	assert_success
	! kill -0 "$pid" 2>/dev/null || fail "container process $pid left behind"
}

@test "$ENGINE: 50 sequential run --rm, sandrun alternating with crun (benchmark, no assertion)" {
	[[ -x ${CRUN:-} ]] || skip "crun is not installed"
	local crun_rt s c
	if [[ $ENGINE == docker ]]; then
		crun_rt=crun
	else
		crun_rt=$(crun_for_engines "$ENG_DIR/crun")
	fi
	local with_sandrun=(eng run --rm --network none "$IMAGE" true)
	local with_crun=(eng run --rm --runtime "$crun_rt" --network none "$IMAGE" true)
	local out
	out=$(churn_pair 50 with_sandrun with_crun) || fail "$out"
	read -r s c <<<"$out"
	echo "# benchmark $ENGINE: 50 x run --rm, alternating: sandrun $s ms/container, crun $c ms/container$(churn_crun_note)" >&3
}

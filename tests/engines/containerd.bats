#!/usr/bin/env bats
# containerd driving sandrun: through `ctr` (the runc v2 shim with sandrun as
# its runc binary) and through the CRI plugin, as the kubelet drives it, with
# the runtime handler `sandrun` of contrib/engines/containerd-config.toml (the
# handler a RuntimeClass of contrib/engines/runtimeclass.yaml names).
#
# One containerd serves the whole file: its own config, root, state and
# socket under $ENG_DIR, the native snapshotter (bind mounts the shim removes,
# no overlay), the runc shim's state root under $ENG_DIR too.  Images are OCI
# archives made by mkoci.sh from the busybox-static rootfs; the pod sandbox
# image is one of them, tagged as the configured sandbox_image.

bats_require_minimum_version 1.5.0
load helpers

IMAGE=localhost/sre-busybox:test
PAUSE_IMAGE=localhost/sre-pause:test
CTR_NS=sre

setup_file() {
	command -v containerd >/dev/null || return 0
	eng_setup_dir
	export ENG_CGROUP=sre-${ENG_DIR##*.}
	eng_note_dir /run/containerd/fifo
	eng_note_dir /run/containerd/s
	eng_note_dir /run/containerd
	eng_note_sockets /run/containerd/s
	eng_rootfs_tar || return 1
	"$BATS_TEST_DIRNAME/mkoci.sh" "$ENG_DIR/rootfs.tar" "$ENG_DIR/busybox.oci" "$IMAGE" sh &&
		"$BATS_TEST_DIRNAME/mkoci.sh" "$ENG_DIR/rootfs.tar" "$ENG_DIR/pause.oci" "$PAUSE_IMAGE" \
			sleep 2147483647 || return 1
	write_config
	containerd_start || return 1
	local ns
	for ns in "$CTR_NS" k8s.io; do
		ctr_ns "$ns" images import --snapshotter native "$ENG_DIR/busybox.oci" >/dev/null &&
			ctr_ns "$ns" images import --snapshotter native "$ENG_DIR/pause.oci" >/dev/null ||
			return 1
	done
}

teardown_file() {
	[[ -n ${ENG_DIR:-} ]] || return 0
	local id
	for id in $(cri RuntimeService/ListPodSandbox '{}' 2>/dev/null | jq -r '.items[]?.id'); do
		cri RuntimeService/StopPodSandbox "{\"podSandboxId\":\"$id\"}" >/dev/null 2>&1
		cri RuntimeService/RemovePodSandbox "{\"podSandboxId\":\"$id\"}" >/dev/null 2>&1
	done
	for id in $(ctr task ls -q 2>/dev/null); do
		ctr task kill -s KILL "$id" >/dev/null 2>&1
		ctr task delete -f "$id" >/dev/null 2>&1
	done
	for id in $(ctr containers ls -q 2>/dev/null); do
		ctr containers rm "$id" >/dev/null 2>&1
	done
	daemon_stop containerd
	eng_teardown
}

setup() {
	command -v containerd >/dev/null || skip "containerd is not installed"
}

# --- the engine --------------------------------------------------------------

# write_config: containerd's own config.toml, with the handler of
# contrib/engines/containerd-config.toml (this build's path; the shim's state
# root under $ENG_DIR).
write_config() {
	mkdir -p "$ENG_DIR/cni" "$ENG_DIR/pods"
	{
		cat <<-EOF
			version = 2
			root = "$ENG_DIR/root"
			state = "$ENG_DIR/state"
			disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
			  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
		EOF
		sed -e '/^version/d' \
			-e "s|BinaryName = .*|BinaryName = \"$RUNTIME\"\n    Root = \"$ENG_DIR/runc\"|" \
			"$REPO_ROOT/contrib/engines/containerd-config.toml"
		cat <<-EOF
			[grpc]
			  address = "$ENG_DIR/containerd.sock"
			[ttrpc]
			  address = "$ENG_DIR/containerd.sock.ttrpc"
			[debug]
			  address = "$ENG_DIR/debug.sock"
			[plugins."io.containerd.internal.v1.opt"]
			  path = "$ENG_DIR/opt"
			[plugins."io.containerd.grpc.v1.cri"]
			  sandbox_image = "$PAUSE_IMAGE"
			  stream_server_address = "127.0.0.1"
			  stream_server_port = "0"
			  restrict_oom_score_adj = $(restrict_oom)
			  [plugins."io.containerd.grpc.v1.cri".containerd]
			    snapshotter = "native"
			    default_runtime_name = "sandrun"
			  [plugins."io.containerd.grpc.v1.cri".cni]
			    bin_dir = "/usr/lib/cni"
			    conf_dir = "$ENG_DIR/cni"
		EOF
	} >"$ENG_DIR/config.toml"
}

# restrict_oom: true where root lacks CAP_SYS_RESOURCE (some CI machines,
# nested containers): the pause container's oom_score_adj of -998 would be
# refused, by runc as by sandrun; containerd then keeps it at our own.
restrict_oom() {
	local eff
	eff=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
	(((0x$eff >> 24) & 1)) && echo false || echo true
}

containerd_start() {
	daemon_start containerd containerd --config "$ENG_DIR/config.toml"
	wait_until 60 ctr version && wait_until 30 cri RuntimeService/Version '{}' || {
		daemon_log containerd >&3
		return 1
	}
}

# ctr ARG... / ctr_ns NAMESPACE ARG...: the client, under a timeout.
ctr() {
	ctr_ns "$CTR_NS" "$@"
}

ctr_ns() {
	local ns=$1
	shift
	timeout -k 10 "$ENG_TIMEOUT" /usr/bin/ctr -a "$ENG_DIR/containerd.sock" -n "$ns" "$@"
}

# ctr_run [CTR-RUN-OPTION...] -- ID [CMD...]: `ctr run` with sandrun.
ctr_run() {
	local -a opts=()
	while [[ $1 != -- ]]; do
		opts+=("$1")
		shift
	done
	shift
	local id=$1
	shift
	ctr run --fifo-dir "$ENG_DIR/fifo" --runtime io.containerd.runc.v2 --runc-binary "${CTR_RUNC:-$RUNTIME}" \
		--runc-root "$ENG_DIR/runc" --snapshotter native \
		--cgroup "/$ENG_CGROUP/$id" "${opts[@]}" "$IMAGE" "$id" "$@"
}

# cri SERVICE/METHOD JSON: one CRI call; the response as JSON.
cri() {
	CRI_TIMEOUT=$ENG_TIMEOUT timeout -k 10 "$ENG_TIMEOUT" /usr/bin/python3 \
		"$BATS_TEST_DIRNAME/cri.py" "$ENG_DIR/containerd.sock" "$@"
}

# --- ctr ---------------------------------------------------------------------

@test "ctr: output and the exit status, through the runc shim running sandrun" {
	run ctr_run --rm -- c-out-$$ sh -c 'echo out; echo err >&2; exit 7'
	[[ $status -eq 7 ]] || fail "status $status: $output"
	[[ $output == *out* && $output == *err* ]] || fail "output: $output"
}

@test "ctr: piped stdin" {
	# ctr closes the task's stdin at EOF only once the task exists (its
	# closer is set after NewTask): end the input when the task runs.
	local id=c-in-$$
	run ctr_run --rm -- "$id" wc -l < <(printf 'a\nb\nc\n'
		wait_until 60 eval "ctr task ls | grep -q '^$id .*RUNNING'")
	assert_success
	assert_output_equals 3
}

@test "ctr: -t under a pty" {
	run timeout -k 10 "$ENG_TIMEOUT" script -qefc "/usr/bin/ctr -a $ENG_DIR/containerd.sock -n $CTR_NS run --rm -t --fifo-dir $ENG_DIR/fifo --runtime io.containerd.runc.v2 --runc-binary $RUNTIME --runc-root $ENG_DIR/runc --snapshotter native --cgroup /$ENG_CGROUP/c-tty-$$ $IMAGE c-tty-$$ sh -c 'tty; exit 3'" /dev/null </dev/null
	[[ $output == *"/dev/pts/0"* ]] || fail "no terminal: $output"
	[[ $status -eq 3 ]] || fail "status $status: $output"
}

@test "ctr: detached task, exec, pause/resume, ps, kill, delete; sandrun keeps its state" {
	local id=c-det-$$
	run ctr_run -d --env FOO=bar --cwd /tmp -- "$id" sleep 1000
	assert_success
	[[ -f $ENG_DIR/runc/$CTR_NS/$id/state.json ]] || fail "no sandrun state under the shim's root"
	run ctr task exec --fifo-dir "$ENG_DIR/fifo" --exec-id e1 "$id" sh -c 'echo $FOO $(pwd)'
	assert_success
	assert_output_equals "bar /tmp"
	run ctr task exec --fifo-dir "$ENG_DIR/fifo" --exec-id e2 "$id" sh -c 'exit 4'
	[[ $status -eq 4 ]] || fail "exec status $status: $output"
	run ctr task pause "$id"
	assert_success
	run ctr task ls
	[[ $output == *"$id"*PAUSED* ]] || fail "after pause: $output"
	run ctr task resume "$id"
	assert_success
	run ctr task ps "$id"
	assert_success
	[[ $(grep -c '^[0-9]' <<<"$output") -ge 1 ]] || fail "ps: $output"
	run ctr task kill -s KILL "$id"
	assert_success
	wait_until 30 eval "ctr task ls | grep -q '$id.*STOPPED'" || fail "task did not stop: $(ctr task ls)"
	run ctr task delete "$id"
	assert_success
	run ctr containers rm "$id"
	assert_success
	[[ ! -e $ENG_DIR/runc/$CTR_NS/$id ]] || fail "sandrun state of $id left behind"
}

@test "ctr: --read-only rootfs" {
	run ctr_run --rm --read-only -- c-ro-$$ touch /x
	assert_failure
	assert_output_contains "Read-only file system"
}

# host_cgroup_file V1-CONTROLLER V1-FILE V2-FILE ID: the value of a cgroup
# file of task ID, read on the host (ctr's spec mounts no cgroupfs inside).
host_cgroup_file() {
	cat "/sys/fs/cgroup/$1/$ENG_CGROUP/$4/$2" 2>/dev/null ||
		cat "/sys/fs/cgroup/$ENG_CGROUP/$4/$3"
}

# ctr_remove ID: kill and delete task and container ID.
ctr_remove() {
	ctr task kill -s KILL "$1" >/dev/null 2>&1
	wait_until 30 eval "! ctr task ls | grep -q '^$1 .*RUNNING'"
	ctr task delete "$1" >/dev/null 2>&1
	ctr containers rm "$1" >/dev/null 2>&1
}

@test "ctr: --memory-limit and --cpus reach the cgroup; an OOM kill exits 137" {
	local id=c-res-$$
	run ctr_run -d --memory-limit 67108864 --cpus 0.5 -- "$id" sleep 1000
	assert_success
	run host_cgroup_file memory memory.limit_in_bytes memory.max "$id"
	assert_output_equals 67108864
	run host_cgroup_file cpu cpu.cfs_quota_us cpu.max "$id"
	[[ $output == 50000 || $output == "50000 100000" ]] || fail "quota: $output"
	ctr_remove "$id"
	run ctr_run --rm --memory-limit 33554432 -- c-oom-$$ tail /dev/zero
	[[ $status -eq 137 ]] || fail "status $status: $output"
}

@test "ctr: a network namespace of its own with loopback only; --net-host" {
	run ctr_run --rm -- c-net-$$ ls /sys/class/net
	assert_success
	assert_output_equals lo
	run ctr_run --rm --net-host -- c-hnet-$$ ls /sys/class/net
	assert_success
	[[ $output != lo ]] || fail "--net-host: $output"
}

@test "ctr: --cap-drop, --cap-add" {
	# ctr's default set: 0xa80425fb (CAP_NET_RAW is bit 13, CAP_SYS_ADMIN 21).
	run ctr_run --rm -- c-cap0-$$ grep CapEff /proc/self/status
	assert_success
	assert_output_contains 00000000a80425fb
	run ctr_run --rm --cap-drop CAP_NET_RAW --cap-add CAP_SYS_ADMIN -- c-cap-$$ grep CapEff /proc/self/status
	assert_success
	assert_output_contains 00000000a82405fb
}

@test "ctr: --seccomp applies containerd's default profile" {
	run ctr_run --rm --seccomp -- c-sec-$$ grep Seccomp: /proc/self/status
	assert_success
	assert_output_contains 2
	run ctr_run --rm -- c-nosec-$$ grep Seccomp: /proc/self/status
	assert_success
	assert_output_contains 0
}

@test "ctr: flags ctr does not have" {
	skip "ctr run has no --pids-limit, --user, --init, no-new-privileges or bridge network of its own, and with --uidmap ctr 1.6 drops --runc-binary (the shim runs runc): the CRI test covers the kubelet's"
}

@test "ctr: restart of containerd with a task running: the state read back" {
	local id=c-live-$$ pid
	run ctr_run -d -- "$id" sleep 1000
	assert_success
	pid=$(ctr task ls | awk -v id="$id" '$1 == id { print $2 }')
	daemon_stop containerd
	kill -0 "$pid" || fail "the task died with containerd"
	containerd_start || fail "containerd did not come back"
	run ctr task ls
	[[ $output == *"$id"*"$pid"*RUNNING* ]] || fail "after restart: $output"
	run ctr task exec --fifo-dir "$ENG_DIR/fifo" --exec-id e1 "$id" echo after-restart
	assert_output_equals after-restart
	ctr task kill -s KILL "$id"
	wait_until 30 eval "ctr task ls | grep -q '$id.*STOPPED'"
	run ctr task delete "$id"
	assert_success
	ctr containers rm "$id"
	! kill -0 "$pid" 2>/dev/null || fail "task process $pid left behind"
}

# --- the CRI path -----------------------------------------------------------

# pod_config NAME: a PodSandboxConfig (host network: no CNI plugin needed;
# no hostname, which needs a UTS namespace of the pod's own).
pod_config() {
	jq -nc --arg n "$1" --arg logs "$ENG_DIR/pods/$1" --arg cg "/$ENG_CGROUP/$1" '{
		metadata: { name: $n, uid: ("uid-" + $n), namespace: "sre-test", attempt: 0 },
		logDirectory: $logs,
		linux: { cgroupParent: $cg,
			securityContext: { namespaceOptions: { network: "NODE" } } } }'
}

@test "CRI: RunPodSandbox, CreateContainer, StartContainer, ExecSync, StopPodSandbox, RemovePodSandbox with handler sandrun" {
	local pod sb cid out
	pod=$(pod_config pod-$$)
	run cri RuntimeService/RunPodSandbox "$(jq -nc --argjson c "$pod" '{config: $c, runtimeHandler: "sandrun"}')"
	assert_success
	sb=$(jq -r .podSandboxId <<<"$output")
	[[ -n $sb && $sb != null ]] || fail "no sandbox id: $output"
	# The sandbox (pause) container runs under sandrun, in the shim's root.
	[[ -f $ENG_DIR/runc/k8s.io/$sb/state.json ]] || fail "the sandbox is not sandrun's"
	run cri RuntimeService/PodSandboxStatus "{\"podSandboxId\":\"$sb\"}"
	assert_success
	[[ $(jq -r '.status.state' <<<"$output") == SANDBOX_READY ]] || fail "sandbox: $output"
	[[ $(jq -r '.status.runtimeHandler' <<<"$output") == sandrun ]] || fail "handler: $output"

	run cri RuntimeService/CreateContainer "$(jq -nc --arg sb "$sb" --argjson c "$pod" --arg img "$IMAGE" '{
		podSandboxId: $sb, sandboxConfig: $c,
		config: { metadata: { name: "app", attempt: 0 }, image: { image: $img },
			command: ["sh", "-c", "echo started > /tmp/started; exec sleep 1000"],
			envs: [{ key: "GREETING", value: "hello" }], workingDir: "/tmp",
			logPath: "app.log",
			linux: { resources: { memoryLimitInBytes: "67108864", cpuQuota: "50000", cpuPeriod: "100000" },
				securityContext: { capabilities: { dropCapabilities: ["NET_RAW"] },
					noNewPrivs: true, runAsUser: { value: "65534" } } } } }')"
	assert_success
	cid=$(jq -r .containerId <<<"$output")
	run cri RuntimeService/StartContainer "{\"containerId\":\"$cid\"}"
	assert_success
	[[ -f $ENG_DIR/runc/k8s.io/$cid/state.json ]] || fail "the container is not sandrun's"
	run cri RuntimeService/ContainerStatus "{\"containerId\":\"$cid\"}"
	[[ $(jq -r .status.state <<<"$output") == CONTAINER_RUNNING ]] || fail "status: $output"

	run cri RuntimeService/ExecSync "$(jq -nc --arg id "$cid" '{containerId: $id, timeout: "30",
		cmd: ["sh", "-c", "cat /tmp/started; echo $GREETING $(pwd) $(id -u); grep NoNewPrivs /proc/self/status; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; echo oops >&2; exit 3"]}')"
	assert_success
	out=$(jq -r '.stdout | @base64d' <<<"$output")
	[[ $(jq -r '.stderr | @base64d' <<<"$output") == oops* ]] || fail "stderr: $output"
	[[ $(jq -r .exitCode <<<"$output") == 3 ]] || fail "exit code: $output"
	[[ $out == *started*"hello /tmp 65534"*"NoNewPrivs:"*1*67108864* ]] || fail "stdout: $out"

	run cri RuntimeService/StopPodSandbox "{\"podSandboxId\":\"$sb\"}"
	assert_success
	run cri RuntimeService/ContainerStatus "{\"containerId\":\"$cid\"}"
	[[ $(jq -r .status.state <<<"$output") == CONTAINER_EXITED ]] || fail "after stop: $output"
	run cri RuntimeService/RemovePodSandbox "{\"podSandboxId\":\"$sb\"}"
	assert_success
	run cri RuntimeService/ListPodSandbox '{}'
	[[ $(jq '.items // [] | length' <<<"$output") == 0 ]] || fail "sandboxes left: $output"
	[[ ! -e $ENG_DIR/runc/k8s.io/$sb && ! -e $ENG_DIR/runc/k8s.io/$cid ]] || fail "sandrun state left behind"
	[[ -z $(find /sys/fs/cgroup/*/"$ENG_CGROUP"/pod-$$ -mindepth 1 -type d 2>/dev/null) ]] ||
		fail "cgroups left: $(find /sys/fs/cgroup/*/"$ENG_CGROUP"/pod-$$ -mindepth 1 -type d)"
}

# --- churn -------------------------------------------------------------------

@test "ctr: 50 sequential run --rm, sandrun beside crun (benchmark, no assertion)" {
	[[ -x ${CRUN:-} ]] || skip "crun is not installed"
	local s c crun_rt
	crun_rt=$(crun_for_engines "$ENG_DIR/crun")
	s=$(churn sandrun 50 ctr_run --rm -- churn-$$ true) || fail "$s"
	c=$(CTR_RUNC=$crun_rt churn crun 50 ctr_run --rm -- churn-$$ true) || fail "$c"
	echo "# benchmark containerd: 50 x ctr run --rm: sandrun $s ms/container, crun $c ms/container$(churn_crun_note)" >&3
}

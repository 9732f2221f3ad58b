#!/usr/bin/env bats
# podman drives sandrun the way it drives runc: conmon calls create (with a
# console socket for -t), start, state, kill and delete.  The image is
# imported from a busybox-static rootfs tarball, as a new user would.
#
# podman keeps its own state in /var/lib/containers; the test's image has a
# name of its own and is removed at the end, and every container runs with
# --rm or is removed by name.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	command -v podman >/dev/null || return 0
	export PODMAN_IMAGE="localhost/sandrun-test-busybox:$$"
	export PODMAN_CONF=$BATS_FILE_TMPDIR/containers.conf
	# Root here lacks CAP_SYS_RESOURCE: podman's default ulimits would be
	# refused; keep them within this machine's hard limits.
	local nofile nproc
	nofile=$(ulimit -Hn)
	nproc=$(ulimit -Hu)
	((nofile > 1024)) && nofile=1024
	[[ $nproc == unlimited ]] || ((nproc > 4096)) && nproc=4096
	cat >"$PODMAN_CONF" <<-EOF
		[containers]
		default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
		[engine]
		cgroup_manager = "cgroupfs"
		events_logger = "file"
	EOF
	ensure_rootfs_cache
	tar -C "$ROOTFS_CACHE" -cf "$BATS_FILE_TMPDIR/rootfs.tar" .
	CONTAINERS_CONF=$PODMAN_CONF podman import "$BATS_FILE_TMPDIR/rootfs.tar" "$PODMAN_IMAGE" >/dev/null
}

teardown_file() {
	if [[ -z ${PODMAN_IMAGE:-} ]]; then
		return 0
	fi
	CONTAINERS_CONF=$PODMAN_CONF podman rm -f "srpod-$$" >/dev/null 2>&1 || true
	CONTAINERS_CONF=$PODMAN_CONF podman rmi -f "$PODMAN_IMAGE" >/dev/null 2>&1 || true
}

setup() {
	[[ -n ${PODMAN_IMAGE:-} ]] || skip "podman is not installed"
}

pod() {
	CONTAINERS_CONF=$PODMAN_CONF timeout 120 podman --runtime "$RUNTIME" "$@"
}

@test "podman run --rm IMAGE echo hi" {
	run pod run --rm "$PODMAN_IMAGE" echo hi
	assert_success
	[[ $output == hi ]] || fail "output: $output"
}

@test "podman run: the exit status of the process" {
	run pod run --rm "$PODMAN_IMAGE" sh -c 'exit 7'
	[[ $status -eq 7 ]] || fail "status $status: $output"
}

@test "podman run -t: a terminal through the console socket" {
	run pod run --rm -t "$PODMAN_IMAGE" sh -c 'tty && echo tty-ok'
	assert_success
	[[ $output == *"/dev/pts/0"* && $output == *tty-ok* ]] || fail "output: $output"
}

@test "podman run --memory: the limit reaches the container's cgroup" {
	run pod run --rm --memory 64m "$PODMAN_IMAGE" sh -c \
		'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max'
	assert_success
	[[ $output == 67108864 ]] || fail "output: $output"
}

@test "podman create, start, stop, rm: each step through sandrun, nothing left" {
	local name=srpod-$$
	run pod create --name "$name" "$PODMAN_IMAGE" sleep 100
	assert_success
	local id=${output##*$'\n'}
	run pod start "$name"
	assert_success
	run pod inspect -f '{{.State.Status}}' "$name"
	[[ $output == running ]] || fail "status: $output"
	run pod stop -t 1 "$name"
	assert_success
	run pod rm "$name"
	assert_success
	[[ ! -e /run/sandrun/$id ]] || fail "state of $id left in /run/sandrun"
}

@test "podman run: a missing command is reported as not found" {
	run -127 pod run --rm "$PODMAN_IMAGE" /bin/nope
	[[ $output == *"no such file or directory"* ]] || fail "output: $output"
}

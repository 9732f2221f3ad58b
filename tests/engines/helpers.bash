# Shared helpers of the engine suite (tests/engines): podman, Docker,
# containerd and containerd's CRI plugin, from Debian's packages, started by
# the tests on their own sockets and data roots under $ENG_DIR, with sandrun
# as their runtime.  One daemon per engine serves every test of its file
# (setup_file starts it, teardown_file stops it by PID and removes $ENG_DIR),
# so that engine start-up is paid once.  No image is pulled: images are made
# from the busybox-static rootfs of the integration suite.
#
# Every engine call runs under `timeout $ENG_TIMEOUT`, so a hang fails the
# test instead of stalling the run.

load ../integration/helpers

ENG_TIMEOUT=${ENG_TIMEOUT:-90}
# crun, for the churn comparison (not needed by any other test).
CRUN=${CRUN:-$(command -v crun || true)}

# eng_setup_dir: $ENG_DIR, a short directory (unix socket paths are limited to
# 108 bytes) for the engine's sockets, data root and logs.
eng_setup_dir() {
	ENG_DIR=$(mktemp -d /tmp/sre.XXXXXX)
	export ENG_DIR
}

# eng_rootfs_tar: $ENG_DIR/rootfs.tar, the busybox-static rootfs as a tarball.
eng_rootfs_tar() {
	ensure_rootfs_cache || return 1
	tar -C "$ROOTFS_CACHE" -cf "$ENG_DIR/rootfs.tar" .
}

# daemon_start NAME CMD...: start a daemon in the background, its output in
# $ENG_DIR/NAME.log and its PID in $ENG_DIR/NAME.pid.  fd 3 is closed: bats
# waits for it.
daemon_start() {
	local name=$1
	shift
	"$@" >"$ENG_DIR/$name.log" 2>&1 3>&- &
	echo $! >"$ENG_DIR/$name.pid"
}

# wait_until SECONDS CMD...: poll CMD until it succeeds; 1 on timeout.
wait_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# daemon_stop NAME: SIGTERM to the daemon we started, SIGKILL after 20 s.
daemon_stop() {
	local pid
	pid=$(cat "$ENG_DIR/$1.pid" 2>/dev/null) || return 0
	kill -TERM "$pid" 2>/dev/null || return 0
	if ! wait_until 20 eval "! kill -0 $pid"; then
		echo "# $1 ($pid) ignored SIGTERM: killed" >&3
		kill -KILL "$pid" 2>/dev/null
		wait_until 5 eval "! kill -0 $pid"
	fi
	rm -f "$ENG_DIR/$1.pid"
}

# daemon_log NAME: the daemon's last lines, to explain a failure.
daemon_log() {
	tail -20 "$ENG_DIR/$1.log" 2>/dev/null
}

# eng_cleanup_dir: unmount whatever the engine left mounted under $ENG_DIR
# (deepest first), stop processes still running with a cwd or root there,
# remove the directory.
eng_cleanup_dir() {
	[[ -n ${ENG_DIR:-} && -d $ENG_DIR ]] || return 0
	local m
	while read -r m; do
		umount -l "$m" 2>/dev/null
	done < <(awk -v d="$ENG_DIR" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)
	rm -rf "$ENG_DIR"
}

# eng_mounts: mounts of the host under $ENG_DIR (none once the engine is done).
eng_mounts() {
	awk -v d="$ENG_DIR" 'index($2, d) == 1 { print $2 }' /proc/self/mounts
}

# churn_crun_note: how crun was called, for the benchmark line.
churn_crun_note() {
	[[ -z $(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null) ]] ||
		echo " (crun through a mount-namespace wrapper: this hybrid host's cgroup2 root has controllers)"
}

# churn NAME COUNT CMD...: run CMD COUNT times, print one benchmark line with
# the time per container in ms; 1 when a run failed.
churn() {
	local name=$1 count=$2 i start end
	shift 2
	start=$(date +%s%N)
	for ((i = 0; i < count; i++)); do
		"$@" >/dev/null 2>&1 || {
			echo "churn $name: run $i failed: $("$@" 2>&1 | tail -3)"
			return 1
		}
	done
	end=$(date +%s%N)
	echo "$(((end - start) / count / 1000000))"
}

# churn_pair COUNT ARRAY-A ARRAY-B: the commands in the two arrays (named),
# COUNT times each, alternating so that the machine's drift and the engine's
# warm-up hit both alike; prints the mean ms of each, "A B".
churn_pair() {
	local count=$1 i t0 t1 ta=0 tb=0
	local -n cmd_a=$2 cmd_b=$3
	for ((i = 0; i < count; i++)); do
		t0=$(date +%s%N)
		"${cmd_a[@]}" >/dev/null 2>&1 || { echo "churn: run $i of $2 failed: $("${cmd_a[@]}" 2>&1 | tail -3)"; return 1; }
		t1=$(date +%s%N)
		ta=$((ta + t1 - t0))
		"${cmd_b[@]}" >/dev/null 2>&1 || { echo "churn: run $i of $3 failed: $("${cmd_b[@]}" 2>&1 | tail -3)"; return 1; }
		t0=$(date +%s%N)
		tb=$((tb + t0 - t1))
	done
	echo "$((ta / count / 1000000)) $((tb / count / 1000000))"
}

# crun_for_engines PATH: a crun an engine can call on this host.  crun 1.8
# refuses to run on a cgroup v1 hybrid host whose v2 hierarchy has controllers
# enabled; there the wrapper runs each crun call in a private mount namespace
# with the v2 hierarchy covered (the host's mounts are untouched), which adds
# an unshare and a mount to each crun call: churn_crun_note says so in the
# benchmark line.  Prints the path to give the engine.
crun_for_engines() {
	local wrap=$1
	if [[ -z $(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null) ]]; then
		echo "$CRUN"
		return
	fi
	cat >"$wrap" <<-EOF
		#!/bin/sh
		exec unshare -m --propagation private sh -c 'mount -t tmpfs none /sys/fs/cgroup/unified && exec $CRUN "\$@"' crun "\$@"
	EOF
	chmod 755 "$wrap"
	echo "$wrap"
}

# eng_kill_strays: after the daemon is stopped, kill what it left running:
# processes whose command line names $ENG_DIR (shims, conmon) and those in
# the cgroup parent $ENG_CGROUP (containers), by PID.
eng_kill_strays() {
	local pids
	local ps_out
	ps_out=$(ps -eo pid=,args=)
	pids=$(awk -v d="$ENG_DIR" 'index($0, d) { print $1 }' <<<"$ps_out")
	if [[ -n ${ENG_CGROUP:-} ]]; then
		pids+=" $(cat $(find /sys/fs/cgroup/*/"$ENG_CGROUP" -name cgroup.procs 2>/dev/null) 2>/dev/null)"
	fi
	pids=$(tr ' ' '\n' <<<"$pids" | grep -vx -e "$$" -e "$BASHPID" -e '' | sort -u)
	[[ -z $pids ]] && return 0
	echo "# killing what the engine left running: $(tr '\n' ' ' <<<"$pids")" >&3
	kill -KILL $pids 2>/dev/null
	sleep 0.5
}

# eng_remove_cgroups: the cgroup parent $ENG_CGROUP, deepest first.
eng_remove_cgroups() {
	[[ -n ${ENG_CGROUP:-} ]] || return 0
	find /sys/fs/cgroup/*/"$ENG_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null
	return 0
}

# eng_note_dir PATH / eng_remove_noted: remove at the end the directories
# (empty) and files an engine creates outside $ENG_DIR (/run/containerd/s for
# shim sockets, dockerd's /etc/docker/key.json), only if they did not exist
# before.
eng_note_dir() {
	[[ -e $1 ]] || echo "$1" >>"$ENG_DIR/created-dirs"
}

eng_remove_noted() {
	local d
	[[ -f $ENG_DIR/created-dirs ]] || return 0
	while read -r d; do
		if [[ -d $d ]]; then
			rmdir "$d" 2>/dev/null
		else
			rm -f "$d"
		fi
	done < <(sort -r "$ENG_DIR/created-dirs")
}

# eng_note_sockets DIR / eng_remove_dead_sockets: the shims' sockets in DIR
# (/run/containerd/s, whatever containerd's address) that appeared during the
# file and that nobody listens on any more: a shim killed by SIGKILL leaves
# its socket.
eng_note_sockets() {
	ls "$1" >"$ENG_DIR/sockets-before" 2>/dev/null || true
	echo "$1" >"$ENG_DIR/sockets-dir"
}

eng_remove_dead_sockets() {
	local dir f listening
	dir=$(cat "$ENG_DIR/sockets-dir" 2>/dev/null) || return 0
	listening=$(ss -xlH 2>/dev/null)
	for f in "$dir"/*; do
		[[ -S $f ]] || continue
		grep -qxF "$(basename "$f")" "$ENG_DIR/sockets-before" && continue
		grep -qF "$f" <<<"$listening" || rm -f "$f"
	done
}

# eng_teardown: the common end of every engine file.
eng_teardown() {
	eng_kill_strays
	eng_remove_dead_sockets
	eng_remove_cgroups
	eng_remove_noted
	eng_cleanup_dir
}

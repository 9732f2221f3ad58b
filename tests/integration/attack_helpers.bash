# Helpers of the hardening suites (attacks.bats, badinput.bats, faults.bats),
# on top of helpers.bash (load it first).
#
# Every canary, helper binary and copy of the runtime lives under the test's
# own directories and is removed by attack_teardown.

ATTACK_SRC=$REPO_ROOT/tests/helpers
ATTACK_BIN=$WORK_DIR/attack-helpers

# The suites' default hooks (a suite may define its own after loading).
setup() {
	attack_setup
}

teardown() {
	attack_teardown
}

attack_setup() {
	setup_bundle "$@"
	cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/config.orig"
	CANARY=
	EXTRA_BUNDLES=()
}

# reset_config: $BUNDLE/config.json as attack_setup left it.
reset_config() {
	cp "$BATS_TEST_TMPDIR/config.orig" "$BUNDLE/config.json"
}

attack_teardown() {
	local b
	for b in "${EXTRA_BUNDLES[@]}"; do
		umount_mounts_under "$b"
		rm -rf "$b"
	done
	if [[ -n ${CANARY:-} ]]; then
		umount_mounts_under "$CANARY"
		rm -rf "$CANARY"
	fi
	teardown_bundle
}

umount_mounts_under() {
	local m
	for m in $(awk -v b="$1" '$5 == b || index($5, b "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	return 0
}

# attack_helper NAME: the path of tests/helpers/NAME.c built as a static
# binary (built once per source change, under a lock: bats may run in
# parallel).
attack_helper() {
	local src=$ATTACK_SRC/$1.c bin=$ATTACK_BIN/$1
	mkdir -p "$ATTACK_BIN"
	(
		flock 9
		if [[ ! -x $bin || $src -nt $bin ]]; then
			${CC:-cc} -static -O2 -Wall -o "$bin.tmp" "$src" && mv "$bin.tmp" "$bin"
		fi
	) 9>"$ATTACK_BIN/.lock" || {
		fail "cannot build $src (needs a C compiler and static libc)"
		return 1
	}
	echo "$bin"
}

# install_helper NAME [BUNDLE]: tests/helpers/NAME.c built and copied to
# /NAME in the bundle's rootfs.
install_helper() {
	local bin
	bin=$(attack_helper "$1") || return 1
	install -m 0755 "$bin" "${2:-$BUNDLE}/rootfs/$1"
}

# make_bundle DIR [ARG...]: another bundle like $BUNDLE (same mark, terminal
# off), removed at teardown.  Edit it with `BUNDLE=DIR update_config ...`.
make_bundle() {
	local dir=$1
	shift
	local -a args=("$@")
	((${#args[@]})) || args=(true)
	"$MKBUNDLE" --no-terminal --rootfs-from "$ROOTFS_CACHE" "$dir" -- "${args[@]}" >/dev/null ||
		fail "mkbundle.sh $dir failed"
	EXTRA_BUNDLES+=("$dir")
	BUNDLE=$dir update_config --arg m "$TEST_MARK" '.process.env += [$m]'
}

# runtime_copy: a copy of the runtime binary in the test's directory, with
# the same name (so that `comm` names it the same); prints its path.  Attacks
# that might overwrite the binary run this copy, never the build.
runtime_copy() {
	local dir=$BATS_TEST_TMPDIR/bin
	mkdir -p "$dir"
	cp "$RUNTIME" "$dir/$RUNTIME_NAME"
	echo "$dir/$RUNTIME_NAME"
}

# The JSON list of every capability in our own bounding set (the runtime
# cannot give more; this VM's lacks CAP_SYS_RESOURCE, for one).
all_caps_json() {
	local bnd n names=()
	bnd=$(awk '$1 == "CapBnd:" { print $2 }' /proc/self/status)
	for n in CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID \
		SETPCAP LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW \
		IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT \
		SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE \
		AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM \
		BLOCK_SUSPEND AUDIT_READ PERFMON BPF CHECKPOINT_RESTORE; do
		(((0x$bnd >> $(cap_number "$n")) & 1)) && names+=("CAP_$n")
	done
	json_array "${names[@]}"
}

# privileged [BUNDLE]: every capability in the bounding, effective and
# permitted sets, no seccomp filter.
privileged() {
	BUNDLE=${1:-$BUNDLE} update_config --argjson c "$(all_caps_json)" \
		'.process.capabilities |= {bounding: $c, effective: $c, permitted: $c} | del(.linux.seccomp)'
}

# no_pid_namespace [BUNDLE]
no_pid_namespace() {
	BUNDLE=${1:-$BUNDLE} update_config '.linux.namespaces |= map(select(.type != "pid"))'
}

# --- canaries: host paths a container must never reach -------------------------------

# make_canary: $CANARY, a fresh host directory /tmp/canary-XXXXXX holding a
# file, and its snapshot.
make_canary() {
	CANARY=$(mktemp -d /tmp/canary-XXXXXX)
	echo "host data" >"$CANARY/file"
	mkdir "$CANARY/dir"
	canary_snapshot >"$BATS_TEST_TMPDIR/canary.before"
	export CANARY
}

# Every entry under $CANARY (type, mode, size, content hash, mtime) and every
# host mount at or under it.
canary_snapshot() {
	(
		cd "$CANARY" && find . -printf '%p %y %m %s %T@\n' | sort
		find . -type f -exec sha256sum {} + | sort
	)
	awk -v b="$CANARY" '$5 == b || index($5, b "/") == 1 { print "mount", $5 }' /proc/self/mountinfo
}

assert_canary_intact() {
	local now
	now=$(canary_snapshot)
	[[ $now == "$(cat "$BATS_TEST_TMPDIR/canary.before")" ]] ||
		fail "host canary $CANARY changed:"$'\n'"$(diff <(echo "$now") "$BATS_TEST_TMPDIR/canary.before")"
}

# --- leftovers: snapshot what a command may leak, compare after -----------------------

# snapshot_host NAME ID...: mount points of the host, the cgroup dirs named
# after the IDs, the entries of --root, and the processes whose cwd or root is
# under the bundle, into $BATS_TEST_TMPDIR/NAME.snap.
snapshot_host() {
	local name=$1 id
	shift
	{
		echo "# mounts"
		awk '{ print $5 }' /proc/self/mountinfo | sort
		echo "# cgroups"
		for id in "$@"; do
			cgroups_named "$id"
		done
		echo "# root"
		find "$ROOT" -mindepth 1 2>/dev/null | sort
		echo "# processes"
		bundle_pids
	} >"$BATS_TEST_TMPDIR/$name.snap"
}

# PIDs (and commands) of the processes whose cwd or root is in the bundle,
# or that carry the test's mark (one find, one grep: the host may run
# hundreds of processes).
bundle_pids() {
	local d
	for d in $(find /proc/[0-9]*/cwd /proc/[0-9]*/root -maxdepth 0 \
		\( -lname "$BUNDLE" -o -lname "$BUNDLE/*" \) -printf '%h\n' 2>/dev/null | sort -u); do
		echo "${d#/proc/} $(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)"
	done
	live_marked_pids | sort -u
}

# assert_same_snapshot A B: nothing leaked between the two snapshots.
assert_same_snapshot() {
	local d
	d=$(diff "$BATS_TEST_TMPDIR/$1.snap" "$BATS_TEST_TMPDIR/$2.snap") ||
		fail "left behind (diff $1 -> $2):"$'\n'"$d"
}

# assert_runtime_error [WORD...]: the failure printed exactly one line on
# stderr (`run --separate-stderr`), mentioning each WORD, and for sandrun
# starting with "sandrun: ".
assert_runtime_error() {
	assert_one_error_line "$@" || return 1
	[[ $RUNTIME_NAME != sandrun || $stderr == "sandrun: "* ]] ||
		fail "error line does not start with 'sandrun: ': $stderr"
}

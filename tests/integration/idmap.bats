#!/usr/bin/env bats
# Idmapped mounts: mounts[].uidMappings/gidMappings and the "idmap"/"ridmap"
# options (runtime-spec 1.2).  A mapping {containerID C, hostID H} shows a
# file that the source filesystem has as C as owned by H through the mount,
# and writes H back as C.  The Kubernetes case: a container whose user
# namespace maps 0 to 100000 binds a volume owned by the host's root with the
# same mapping, and its root owns the files.
#
# The source is a filesystem the test makes (tmpfs, or an ext4 image where
# tmpfs cannot be idmapped: Linux < 6.3), checked with tests/helpers/
# idmap_probe.c, so a skip says the kernel cannot, never the runtime.

load helpers
load idmap_helpers

setup() {
	setup_bundle
	SRC=$(idmap_fs_root)/src
	make_idmap_fs "$SRC"
	echo "from the host" >"$SRC/file"
	cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/config.orig"
	HOLDER=
}

teardown() {
	[[ -z $HOLDER ]] || kill -9 "$HOLDER" 2>/dev/null || true
	teardown_bundle
	idmap_teardown
}

MAP='[{"containerID": 0, "hostID": 100000, "size": 65536}]'
OVERFLOW="$(cat /proc/sys/kernel/overflowuid):$(cat /proc/sys/kernel/overflowgid)"

# with_userns DIR...: the container in a new user namespace, 0 -> 100000
# (65536); the mount points DIR... made beforehand (its root cannot create
# them in the host root's rootfs).
with_userns() {
	local d
	for d in "$@"; do
		mkdir -p "$BUNDLE/rootfs/$d"
	done
	bundle_traversable
	update_config --argjson m "$MAP" '.linux.namespaces += [{"type": "user"}]
		| .linux.uidMappings = $m | .linux.gidMappings = $m'
}

# bind DEST OPTIONS-JSON [FIELDS-JSON [SOURCE]]: a bind of SOURCE (default
# $SRC) with those options and extra fields (default: uidMappings and
# gidMappings both $MAP; use '{}' for none).
bind() {
	local fields=${3:-"{\"uidMappings\": $MAP, \"gidMappings\": $MAP}"}
	update_config --arg d "$1" --arg s "${4:-$SRC}" --argjson o "$2" --argjson f "$fields" \
		'.mounts += [{destination: $d, type: "bind", source: $s, options: $o} + $f]'
}

# map C H [N]: one mapping, as JSON.
map() {
	echo "[{\"containerID\": $1, \"hostID\": $2, \"size\": ${3:-1}}]"
}

# refused WORD...: create fails with one error line naming the container and
# each WORD, and leaves nothing behind; the config is reset afterwards.
refused() {
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line "\"$CID\"" "$@"
	assert_no_leftovers
	cp "$BATS_TEST_TMPDIR/config.orig" "$BUNDLE/config.json"
}

@test "idmap, user namespace (Kubernetes): host-root files are the container root's, its writes land as host root" {
	with_userns data plain
	update_config '.process.capabilities |= map_values(. + ["CAP_CHOWN"])'
	bind /data '["rbind"]'
	bind /plain '["rbind"]' '{}'
	run_in_container 'stat -c %u:%g /data/file /data /plain/file
		echo written >/data/new && stat -c %u:%g /data/new
		touch /data/user && chown 1000:2000 /data/user && stat -c %u:%g /data/user'
	assert_success
	[[ ${lines[0]} == 0:0 && ${lines[1]} == 0:0 ]] || fail "the idmapped files are not root's: $output"
	[[ ${lines[2]} == "$OVERFLOW" ]] || fail "a plain bind of the same files: $output"
	[[ ${lines[3]} == 0:0 && ${lines[4]} == 1000:2000 ]] || fail "$output"
	[[ $(stat -c %u:%g "$SRC/new") == 0:0 && $(cat "$SRC/new") == written ]] ||
		fail "host view of the new file: $(stat -c %u:%g "$SRC/new")"
	[[ $(stat -c %u:%g "$SRC/user") == 1000:2000 ]] || fail "host view: $(stat -c %u:%g "$SRC/user")"
}

@test "idmap, no user namespace: the files show as the host ids, an unmapped root cannot create" {
	bind /data '["bind"]'
	run_in_container 'stat -c %u:%g /data/file; touch /data/new 2>&1; echo done'
	assert_success
	[[ ${lines[0]} == 100000:100000 ]] || fail "$output"
	assert_output_contains "Value too large" # EOVERFLOW: uid 0 has no id on the source
	[[ ! -e $SRC/new ]]
}

@test "idmap: each direction of a mapping, separate uid and gid mappings, one user namespace per distinct mapping" {
	chown 5:7 "$SRC/file"
	bind /a '["bind", "idmap"]' "{\"uidMappings\": $(map 5 2000), \"gidMappings\": $(map 7 3000)}"
	bind /b '["bind"]' "{\"uidMappings\": $(map 0 4000 10), \"gidMappings\": $(map 0 5000 10)}"
	bind /c '["bind"]' "{\"uidMappings\": $(map 5 2000), \"gidMappings\": $(map 7 3000)}"
	run_in_container 'stat -c %u:%g /a/file /b/file /c/file'
	assert_success
	[[ ${lines[0]} == 2000:3000 ]] || fail "/a: $output"
	[[ ${lines[1]} == 4005:5007 ]] || fail "/b: $output"
	[[ ${lines[2]} == 2000:3000 ]] || fail "/c: $output"
}

@test "idmap without mappings: the container's user namespace's mappings" {
	with_userns data
	bind /data '["rbind", "idmap"]' '{}'
	run_in_container 'stat -c %u:%g /data/file; touch /data/new && stat -c %u:%g /data/new'
	assert_success
	[[ ${lines[0]} == 0:0 && ${lines[1]} == 0:0 ]] || fail "$output"
	[[ $(stat -c %u:%g "$SRC/new") == 0:0 ]]
}

@test "idmap without mappings, joined user namespace: that namespace's mappings" {
	unshare --user sleep 1000 &
	HOLDER=$!
	local tries=50
	until [[ $(readlink "/proc/$HOLDER/ns/user") != "$(readlink /proc/self/ns/user)" ]]; do
		((tries-- > 0)) || fail "the user namespace holder did not start"
		sleep 0.1
	done
	echo "0 100000 65536" >"/proc/$HOLDER/uid_map"
	echo "0 100000 65536" >"/proc/$HOLDER/gid_map"
	mkdir -p "$BUNDLE/rootfs/data"
	bundle_traversable
	update_config --arg p "/proc/$HOLDER/ns/user" '.linux.namespaces += [{"type": "user", "path": $p}]'
	bind /data '["bind", "idmap"]' '{}'
	run_in_container 'stat -c %u:%g /data/file'
	assert_success
	assert_output_equals 0:0
}

@test "idmap vs ridmap: only ridmap maps the submounts of an rbind; a bind has none" {
	make_idmap_fs "$SRC/sub"
	echo inner >"$SRC/sub/inner"
	bind /top '["rbind", "idmap"]'
	bind /rec '["rbind", "ridmap"]'
	bind /single '["bind", "ridmap"]'
	run_in_container 'stat -c %u:%g /top/file /top/sub/inner /rec/file /rec/sub/inner /single/file
		ls /single/sub'
	assert_success
	[[ ${lines[0]} == 100000:100000 ]] || fail "/top: $output"
	[[ ${lines[1]} == 0:0 ]] || fail "idmap mapped a submount: $output"
	[[ ${lines[2]} == 100000:100000 && ${lines[3]} == 100000:100000 ]] || fail "ridmap: $output"
	[[ ${lines[4]} == 100000:100000 && ${#lines[@]} -eq 5 ]] || fail "bind, ridmap: $output"
}

@test "idmap: the mount's flags and propagation apply, in a user namespace too" {
	with_userns data
	bind /data '["rbind", "ro", "nosuid", "nodev", "shared"]'
	run_in_container 'touch /data/new 2>&1; grep " /data " /proc/self/mountinfo'
	assert_success
	assert_output_contains "Read-only file system"
	local line
	line=$(grep " /data " <<<"$output")
	[[ $(awk '{print $6}' <<<"$line") == ro,nosuid,nodev,*idmapped* ]] || fail "per-mount options: $line"
	[[ $line == *" shared:"* ]] || fail "propagation: $line"
}

@test "idmap of a shared host mount: a slave of it, as other binds; the container's mounts under it stay in the container" {
	mount --make-shared "$SRC"
	mkdir "$SRC/sub"
	update_config '.process.capabilities |= map_values(. + ["CAP_SYS_ADMIN"])'
	bind /data '["rbind"]'
	run_in_container 'mount -t tmpfs tmpfs /data/sub && grep " /data " /proc/self/mountinfo'
	assert_success
	[[ $output == *idmapped*" master:"* && $output != *" shared:"* ]] || fail "propagation: $output"
	[[ -z $(awk -v d="$SRC/sub" '$5 == d' /proc/self/mountinfo) ]] || fail "the container's mount reached the host"
}

@test "idmap: a relative source starts at the bundle; the destination is created" {
	bind /new/dir '["bind"]' "{\"uidMappings\": $MAP, \"gidMappings\": $MAP}" ../idfs/src
	run_in_container 'stat -c %u:%g /new/dir/file'
	assert_success
	assert_output_equals 100000:100000
	[[ -d $BUNDLE/rootfs/new/dir ]]
}

@test "idmap: the detached mounts do not reach the container's process" {
	run_in_container 'ls -l /proc/self/fd | tail -n +2 | wc -l'
	assert_success
	local plain=$output
	bind /data '["bind"]'
	bind /more '["bind"]' "{\"uidMappings\": $(map 0 7000), \"gidMappings\": $(map 0 7000)}"
	run_in_container 'ls -l /proc/self/fd | tail -n +2 | wc -l'
	assert_success
	assert_output_equals "$plain"
}

@test "idmap refusals: one error line naming the container and the mount, nothing left behind" {
	update_config '.mounts += [{"destination": "/data", "type": "tmpfs", "source": "tmpfs",
		"uidMappings": [{"containerID": 0, "hostID": 100000, "size": 1}],
		"gidMappings": [{"containerID": 0, "hostID": 100000, "size": 1}]}]'
	refused /data "only bind mounts"
	bind /data '["bind", "idmap"]' '{}'
	refused /data "user namespace"
	bind /data '["bind"]' "{\"uidMappings\": $MAP}"
	refused /data gidMappings
	bind /data '["bind", "idmap=uids=0-100000-65536;gids=0-100000-65536"]'
	refused /data uidMappings
	bind /data '["bind"]' "{\"uidMappings\": $MAP, \"gidMappings\": $MAP}" "$SRC/missing"
	refused /data "$SRC/missing" "No such file"
}

@test "idmap of a filesystem that cannot be idmapped: one clear error line, nothing left behind" {
	local ramfs
	ramfs=$(idmap_fs_root)/ramfs
	mkdir -p "$ramfs"
	mount -t ramfs ramfs "$ramfs"
	! idmap_probe "$ramfs" 2>/dev/null || skip "this kernel idmaps ramfs"
	bind /data '["bind"]' "{\"uidMappings\": $MAP, \"gidMappings\": $MAP}" "$ramfs"
	refused /data "idmapped mount of \"$ramfs\"" "Invalid argument"
}

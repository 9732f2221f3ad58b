# Idmapped mounts in tests (idmap.bats, features.bats), on top of
# helpers.bash: a source filesystem that can be idmapped, made by the test
# and unmounted by idmap_teardown.  Load it before defining the suite's own
# setup/teardown (attack_helpers.bash, loaded for attack_helper, defines
# defaults).

load attack_helpers

# idmap_probe PATH: whether the host can make an idmapped mount of PATH,
# asked of the kernel by tests/helpers/idmap_probe.c, not of the runtime
# under test.
idmap_probe() {
	local bin
	bin=$(attack_helper idmap_probe) || return 2
	"$bin" "$1"
}

# idmap_fs_root: where make_idmap_fs mounts, per test.
idmap_fs_root() {
	echo "$BATS_TEST_TMPDIR/idfs"
}

# make_idmap_fs DIR: a new, empty filesystem at DIR (under idmap_fs_root)
# that the kernel can idmap: a tmpfs (Linux 6.3+), else an ext4 image on a
# loop device; the test is skipped when neither can be.
make_idmap_fs() {
	local dir=$1
	mkdir -p "$dir"
	mount -t tmpfs -o size=4m,mode=0755 tmpfs "$dir" || fail "mount a tmpfs on $dir"
	idmap_probe "$dir" 2>/dev/null && return 0
	umount "$dir"
	truncate -s 16M "$dir.img" && mkfs.ext4 -q "$dir.img" || skip "cannot make an ext4 image"
	# mount(8) does not load the loop driver when it is a module.
	mount -o loop "$dir.img" "$dir" 2>/dev/null ||
		{ modprobe loop && mount -o loop "$dir.img" "$dir"; } ||
		skip "cannot mount an ext4 image for idmapped mounts"
	rm -rf "$dir/lost+found"
	idmap_probe "$dir" || skip "the kernel idmaps neither tmpfs nor ext4"
}

idmap_teardown() {
	umount_mounts_under "$(idmap_fs_root)"
}

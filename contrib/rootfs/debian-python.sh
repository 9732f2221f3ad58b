#!/usr/bin/env bash
# debian-python.sh: a Debian 12 (bookworm) root filesystem with python3,
# numpy, pandas and matplotlib, all from Debian's packages (debootstrap), for
# `sandrun sandbox --rootfs DIR` when a platform wants a fixed environment
# instead of the host's /usr.
#
# The result is cached: a second call returns at once, and the rootfs is
# rebuilt only when this script (or the mirror, suite or package list) changed.
set -euo pipefail

SUITE=bookworm
PACKAGES=python3,python3-numpy,python3-pandas,python3-matplotlib,ca-certificates

usage() {
	cat <<'EOF'
usage: debian-python.sh [OPTIONS]

Build (or reuse) a Debian 12 rootfs with python3, numpy, pandas and
matplotlib, and print its path on stdout. Needs root and debootstrap.

Options:
  --cache DIR     where the rootfs and its stamp live
                  (default: /var/cache/sandrun-test/debian-python;
                  the rootfs is DIR/rootfs)
  --mirror URL    the Debian mirror (default: the first bookworm mirror of
                  /etc/apt/sources.list*, else http://deb.debian.org/debian)
  --force         rebuild even if the cached rootfs is current
  -h, --help      this text

The build takes a few minutes on a clean machine (its duration is printed on
stderr); a failed attempt is retried once from scratch.
EOF
}

die() {
	echo "debian-python.sh: $*" >&2
	exit 1
}

# The first mirror of the host's APT sources that serves $SUITE itself (not
# -security or -updates), in the one-line or the deb822 format.
host_mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[[ -r $f ]] || continue
		awk -v suite="$SUITE" '
			# one-line format: deb [opts] URL SUITE COMPONENTS
			$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
				if ($(i + 1) == suite) { print $i; exit }
			}
			# deb822: a stanza with Types: deb, URIs: and Suites: naming SUITE
			/^[ \t]*$/ { if (deb && uri != "" && hit) { print uri; exit } deb = 0; uri = ""; hit = 0 }
			tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) hit = 1 }
			END { if (deb && uri != "" && hit) print uri }
		' "$f" | head -1
	done | grep -m1 -E '^https?://' || true
}

cache=/var/cache/sandrun-test/debian-python
mirror=
force=
while (($#)); do
	case $1 in
	--cache) cache=${2:?--cache needs a directory}; shift ;;
	--mirror) mirror=${2:?--mirror needs a URL}; shift ;;
	--force) force=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument \"$1\"" ;;
	esac
	shift
done
[[ -n $mirror ]] || mirror=$(host_mirror)
[[ -n $mirror ]] || mirror=http://deb.debian.org/debian

[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap creates device nodes and owners)"
command -v debootstrap >/dev/null ||
	die "debootstrap is not installed (apt-get install debootstrap, or contrib/scripts/install-deps.sh --tests)"

rootfs=$cache/rootfs
stamp_want=$({
	sha256sum <"$0"
	echo "$SUITE $mirror $PACKAGES"
} | sha256sum | cut -d' ' -f1)

current() {
	[[ -z $force && -x $rootfs/usr/bin/python3 && -f $cache/stamp &&
		$(cat "$cache/stamp") == "$stamp_want" ]]
}

# build_once LOG: debootstrap a minimal system into $rootfs.tmp, install the
# packages with APT (debootstrap's own resolver would pull in every
# Recommends: scipy, a C++ compiler, 1.3 GB), check that they import, then
# rename it into place; non-zero (log in LOG) on any failure.
build_once() {
	local log=$1 tmp=$rootfs.tmp
	rm -rf "$tmp"
	debootstrap --variant=minbase "$SUITE" "$tmp" "$mirror" >"$log" 2>&1 || return 1
	# A private mount namespace, so /proc in the chroot (some maintainer
	# scripts want it) goes away with the command, whatever happens.
	unshare -m --propagation private sh -c '
		mount -t proc proc "$1/proc" &&
		chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive sh -c "
			apt-get update -q && apt-get install -y -q --no-install-recommends $2 &&
			apt-get clean"' sh "$tmp" "${PACKAGES//,/ }" >>"$log" 2>&1 || return 1
	rm -rf "$tmp"/var/lib/apt/lists/* "$tmp"/var/cache/apt/*.bin
	chroot "$tmp" /usr/bin/env -i HOME=/tmp MPLBACKEND=Agg /usr/bin/python3 -c \
		'import numpy, pandas, matplotlib.pyplot; print("python", pandas.__version__)' >>"$log" 2>&1 ||
		return 1
	rm -rf "$rootfs"
	mv "$tmp" "$rootfs"
}

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9 # one build at a time; a second caller waits and then reuses it
if current; then
	echo "$rootfs"
	exit 0
fi

rm -f "$cache/stamp"
start=$SECONDS
for attempt in 1 2; do
	log=$cache/build-$attempt.log
	echo "debian-python.sh: building $rootfs from $mirror (attempt $attempt; log: $log)" >&2
	if build_once "$log"; then
		echo "$stamp_want" >"$cache/stamp"
		echo "debian-python.sh: built in $((SECONDS - start)) s ($(du -sh "$rootfs" | cut -f1))" >&2
		echo "$rootfs"
		exit 0
	fi
	echo "debian-python.sh: attempt $attempt failed; last lines of $log:" >&2
	tail -5 "$log" | sed 's/^/    /' >&2
done
rm -rf "$rootfs.tmp"
die "could not build the rootfs from $mirror after 2 attempts (see $cache/build-2.log)"

#!/usr/bin/env bash
# The benchmark: sandrun against crun, runc, bubblewrap and podman in one
# interleaved run.  As root on Debian 12; prints a markdown table on stdout.
#
#   tests/bench/run.sh [-s SANDRUN] [BENCH.PY OPTIONS...]
#
# e.g. `tests/bench/run.sh -n 20 --others 0 100 --only lifecycle exec`.
# See tests/bench/README.md.  A benchmark, not a test: nothing is asserted.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
sandrun=
if [[ ${1:-} == -s ]]; then
	sandrun=$2
	shift 2
fi
if [[ -z $sandrun ]]; then
	for c in "$repo/build/sandrun" "$repo/tests/.work/build/sandrun" "$(command -v sandrun || true)"; do
		[[ -n $c && -x $c ]] && { sandrun=$c; break; }
	done
fi
[[ -x $sandrun ]] || { echo "bench: no sandrun binary (build it, or pass -s PATH)" >&2; exit 2; }
sandrun=$(realpath "$sandrun")

missing=()
for p in crun runc bubblewrap busybox-static libseccomp2 binutils; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "bench: installing ${missing[*]}" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work=$(mktemp -d /tmp/sandrun-bench-tools.XXXXXX)
trap 'rm -rf "$work"' EXIT
cc -O2 -Wall -o "$work/floor" "$here/floor.c"
cc -O2 -Wall -o "$work/rusage" "$here/rusage.c"

# The floor's cgroup work: one directory per hierarchy a runtime would use.
layout=$(stat -fc %T /sys/fs/cgroup)
floor_cg=()
if [[ $layout == cgroup2fs ]]; then
	layout=v2
	floor_cg=(/sys/fs/cgroup/sandrun-bench-floor-$$)
else
	[[ -d /sys/fs/cgroup/unified ]] && layout="v1 hybrid" || layout=v1
	for c in memory pids cpu,cpuacct blkio devices freezer; do
		[[ -d /sys/fs/cgroup/$c ]] && floor_cg+=("/sys/fs/cgroup/$c/sandrun-bench-floor-$$")
	done
fi

args=(--sandrun "$sandrun" --mkbundle "$repo/contrib/scripts/mkbundle.sh" --floor "$work/floor" --rusage "$work/rusage"
	--cgroup-layout "$layout" --floor-cgroups "${floor_cg[@]}" "$@")
# crun 1.8 refuses a hybrid host whose v2 hierarchy has controllers: every
# runtime runs in a private mount namespace with that hierarchy covered, so
# all see the same cgroup v1 layout (the host's own mounts are not touched).
if [[ $layout == "v1 hybrid" && -n $(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null) ]]; then
	unshare -m --propagation private sh -c \
		'mount -t tmpfs none /sys/fs/cgroup/unified && exec /usr/bin/python3 "$@"' sh \
		"$here/bench.py" "${args[@]}"
	exit
fi
/usr/bin/python3 "$here/bench.py" "${args[@]}"

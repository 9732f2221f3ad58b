#!/usr/bin/env bash
# exeseal-bench.sh [N] [BINARY...]: the cost of the CVE-2019-5736 defence per
# start.  Each BINARY (default: the build in tests/.work/build/sandrun) is
# timed two ways, N times each (default 200), interleaved so that background
# load hits every variant alike:
#
#   rw   the binary on a writable filesystem: re-executes itself from a
#        read-only overlayfs view (or a sealed memfd where that fails)
#   ro   the same binary on a read-only filesystem (a tmpfs remounted ro):
#        the defence only checks and goes on, as if it were compiled out
#
# and for each, two commands: `run` of a busybox bundle whose process is
# `true`, and a `run` that fails right after the defence (missing bundle),
# which isolates the defence's own cost.  Prints medians and p90 in ms.
# Needs root and busybox-static.  To time the memfd fallback, pass a binary
# built with the overlay method removed from exeseal.c.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-200}
shift || true
BINARIES=("$@")
((${#BINARIES[@]})) || BINARIES=("$REPO_ROOT/tests/.work/build/sandrun")

WORK=$(mktemp -d /tmp/exeseal-bench-XXXXXX)
cleanup() {
	umount "$WORK/ro" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/rw" "$WORK/ro" "$WORK/times" "$WORK/root"
mount -t tmpfs -o size=256m tmpfs "$WORK/ro"
"$REPO_ROOT/contrib/scripts/mkbundle.sh" --no-terminal "$WORK/bundle" -- true >/dev/null

variants=()
for b in "${BINARIES[@]}"; do
	name=$(basename "$b")
	[[ ! -e $WORK/rw/$name ]] || name=$name-$RANDOM
	cp "$b" "$WORK/rw/$name"
	cp "$b" "$WORK/ro/$name"
	variants+=("rw/$name" "ro/$name")
done
mount -o remount,ro "$WORK/ro"

now_us() { echo $(($(date +%s%N) / 1000)); }

for ((i = 0; i < N; i++)); do
	for v in "${variants[@]}"; do
		key=${v//\//_}
		s=$(now_us)
		"$WORK/$v" --root "$WORK/root" run -b "$WORK/bundle" "bench-$$-$i" >/dev/null
		e=$(now_us)
		echo $((e - s)) >>"$WORK/times/$key.run"
		s=$(now_us)
		"$WORK/$v" --root "$WORK/root" run -b "$WORK/nonexistent" "bench-$$-$i" 2>/dev/null || true
		e=$(now_us)
		echo $((e - s)) >>"$WORK/times/$key.fail"
	done
done

stats() {
	sort -n "$1" | awk '{ a[NR] = $1 } END { printf "median %6.2f ms  p90 %6.2f ms", a[int((NR + 1) / 2)] / 1000, a[int(NR * 0.9)] / 1000 }'
}
echo "exeseal-bench: N=$N, kernel $(uname -r), $(nproc) CPUs"
for v in "${variants[@]}"; do
	key=${v//\//_}
	printf '%-28s run true: %s   failing run: %s\n' "$v ($(stat -c %s "$WORK/$v") B)" \
		"$(stats "$WORK/times/$key.run")" "$(stats "$WORK/times/$key.fail")"
done

#!/usr/bin/env bash
# Start-up benchmark: sandrun against crun (and runc when present), measured
# in the same run on the same bundle.  It prints ratios, never asserts a time.
#
#   contrib/scripts/bench.sh [-n COUNT] [-s SANDRUN]
#
# Each runtime runs `run ID` of a busybox container whose process is `true`,
# COUNT times in a row (after 5 warm-up runs), with its own --root.  crun
# 1.8 refuses hybrid cgroup hosts (v1 controllers plus a v2 hierarchy): on
# such a host, run this inside the cgroup v2 guest:
#   ../shared/tools/vm-run -- contrib/scripts/bench.sh
set -euo pipefail

count=100
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
sandrun=${SANDRUN:-}
while getopts "n:s:" opt; do
	case $opt in
	n) count=$OPTARG ;;
	s) sandrun=$OPTARG ;;
	*) echo "usage: $0 [-n COUNT] [-s SANDRUN]" >&2; exit 2 ;;
	esac
done
if [[ -z $sandrun ]]; then
	for c in "$repo/tests/.work/build/sandrun" "$repo/build/sandrun" "$(command -v sandrun || true)"; do
		[[ -n $c && -x $c ]] && { sandrun=$c; break; }
	done
fi
[[ -x $sandrun ]] || { echo "bench: no sandrun binary (build it, or pass -s)" >&2; exit 2; }

work=$(mktemp -d /tmp/sandrun-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$here/mkbundle.sh" --no-terminal "$work/bundle" -- true >/dev/null
# crun 1.8 and runc 1.1 do not know spec 1.3.0: an older ociVersion suits all.
tmp=$(mktemp)
jq '.ociVersion = "1.0.2"' "$work/bundle/config.json" >"$tmp" && mv "$tmp" "$work/bundle/config.json"

now_ns() { date +%s%N; }

# bench NAME BINARY: prints "NAME ms-per-run", or nothing when it cannot run.
bench() {
	local name=$1 bin=$2 root="$work/root-$1" i start end
	mkdir -p "$root"
	if ! "$bin" --root "$root" run -b "$work/bundle" "$name-probe" >/dev/null 2>"$work/$name.err"; then
		echo "bench: $name cannot run here: $(head -c 200 "$work/$name.err")" >&2
		return 0
	fi
	for i in 1 2 3 4 5; do "$bin" --root "$root" run -b "$work/bundle" "$name-w$i" >/dev/null; done
	start=$(now_ns)
	for ((i = 0; i < count; i++)); do
		"$bin" --root "$root" run -b "$work/bundle" "$name-$i" >/dev/null
	done
	end=$(now_ns)
	echo "$name $(((end - start) / count / 1000))"
}

declare -A us
for rt in sandrun crun runc; do
	bin=$sandrun
	[[ $rt != sandrun ]] && { bin=$(command -v "$rt" || true); [[ -n $bin ]] || continue; }
	read -r name t < <(bench "$rt" "$bin") || continue
	us[$name]=$t
done

echo "kernel $(uname -r), cgroup $(stat -fc %T /sys/fs/cgroup), $count runs each"
for rt in sandrun crun runc; do
	[[ -n ${us[$rt]:-} ]] || continue
	line=$(printf '%-8s %8.2f ms/run' "$rt" "$(echo "${us[$rt]} / 1000" | bc -l)")
	if [[ -n ${us[crun]:-} && $rt != crun ]]; then
		line+=$(printf '   %.2fx crun' "$(echo "${us[$rt]} / ${us[crun]}" | bc -l)")
	fi
	echo "$line"
done

#!/usr/bin/env bash
# Egress gateway benchmark (issue 13), as root, no internet needed:
#  1. one HTTPS download of SIZE_MB from a server in a network namespace of
#     our own: straight from the host, and from a sandbox through the
#     gateway (CONNECT); the ratio of throughputs (target: >= 0.8);
#  2. what the gateway costs a sandbox that does not use the network:
#     `sandbox -- /bin/true` without --allow-host (no gateway at all) and
#     with one (the gateway starts, makes the namespace, and stops).
# usage: tests/bench/egress.sh [SANDRUN] (default: build/sandrun); RUNS, SIZE_MB
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
sandrun=${1:-$repo/build/sandrun}
runs=${RUNS:-5}
size=$((${SIZE_MB:-200} * 1024 * 1024))
ns=srbench$$ hif=srbh$$ sif=srbs$$ net=10.214.$(($$ % 200 + 20))
tmp=$(mktemp -d)
srv_pid=
cleanup() {
	[[ -n $srv_pid ]] && kill "$srv_pid" 2>/dev/null
	ip link del "$hif" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench.test \
	-addext subjectAltName=DNS:bench.test -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
chmod 755 "$tmp"
chmod 644 "$tmp/cert.pem"
ip netns add "$ns"
ip link add "$hif" type veth peer name "$sif"
ip link set "$sif" netns "$ns"
ip addr add "$net.1/24" dev "$hif"
ip link set "$hif" up
ip -n "$ns" addr add "$net.2/24" dev "$sif"
ip -n "$ns" link set "$sif" up
ip -n "$ns" link set lo up
ip netns exec "$ns" python3 "$repo/tests/helpers/egress_servers.py" 0.0.0.0 "$tmp/cert.pem" \
	"$tmp/key.pem" >"$tmp/srv.out" 2>&1 &
srv_pid=$!
for _ in $(seq 100); do grep -q READY "$tmp/srv.out" && break; sleep 0.1; done

url=https://bench.test/bytes/$size
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
direct=() via=()
for _ in $(seq "$runs"); do
	direct+=("$(curl -sS -o /dev/null --cacert "$tmp/cert.pem" --resolve "bench.test:443:$net.2" \
		-w '%{speed_download}' "$url")")
	via+=("$("$sandrun" sandbox --ro-bind "$tmp:/bench" --allow-host bench.test \
		--add-host "bench.test:$net.2" --timeout 120s --memory 512M -- \
		curl -sS -o /dev/null --cacert /bench/cert.pem -w '%{speed_download}' "$url")")
done
d=$(printf '%s\n' "${direct[@]}" | median)
v=$(printf '%s\n' "${via[@]}" | median)
printf 'HTTPS download of %d MiB: direct %.0f MB/s, through the gateway %.0f MB/s, ratio %.2f\n' \
	$((size >> 20)) "$(echo "$d / 1000000" | bc -l)" "$(echo "$v / 1000000" | bc -l)" \
	"$(echo "$v / $d" | bc -l)"

time_ms() {
	local s e
	s=$(date +%s%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s%N)
	echo $(((e - s) / 1000))
}
plain=() gw=()
for _ in $(seq $((runs * 4))); do
	plain+=("$(time_ms "$sandrun" sandbox -- /bin/true)")
	gw+=("$(time_ms "$sandrun" sandbox --allow-host bench.test -- /bin/true)")
done
p=$(printf '%s\n' "${plain[@]}" | median)
g=$(printf '%s\n' "${gw[@]}" | median)
printf 'sandbox -- /bin/true: %.1f ms without --allow-host (no gateway), %.1f ms with one (+%.1f ms)\n' \
	"$(echo "$p / 1000" | bc -l)" "$(echo "$g / 1000" | bc -l)" "$(echo "($g - $p) / 1000" | bc -l)"

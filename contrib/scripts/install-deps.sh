#!/usr/bin/env bash
# Install what building and testing sandrun needs, from Debian's archive.
# Idempotent: packages already present are not fetched again.
set -euo pipefail

build=(build-essential autoconf automake pkg-config
	libseccomp-dev libyajl-dev libcap-dev libsystemd-dev
	libc-ares-dev libnftables-dev) # the last two: sandrun-egress only
runtime=(busybox-static)
tests=(bats jq iproute2 procps util-linux clang libclang-rt-14-dev podman
	dbus-daemon # dbus-daemon: the fake systemd's bus (cgroups_systemd.bats)
	clang-format # CI's format section
	curl openssl python3 # the egress tests' clients and servers
	nodejs python3-pytest # the MCP SDK client (mcp.bats), contrib/python's tests
	# the sandbox tests: the receipt's schema, real work on the host's root
	# and in a debootstrapped one (sandbox_*.bats, contrib/rootfs/)
	python3-jsonschema python3-pandas python3-matplotlib debootstrap
	# tests/engines: the engines, crun for the churn comparison, tini-static
	# for podman --init, python3-grpcio for the CRI client
	docker.io containerd crun tini python3-grpcio)
want=("${build[@]}" "${runtime[@]}")
[[ ${1:-} == --tests ]] && want+=("${tests[@]}")
# npm: Debian's, unless the nodejs installed bundles one (nodesource's does)
[[ ${1:-} == --tests ]] && ! command -v npm >/dev/null && want+=(npm)

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Packages with daemons (docker.io, containerd) must not start them: the
# tests start their own, and a system dockerd would add iptables rules and a
# bridge to the host.  Where no policy-rc.d says so already, one does for the
# time of the install.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

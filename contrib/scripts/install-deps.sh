#!/usr/bin/env bash
# Install what building and testing sandrun needs, from Debian's archive.
# Idempotent: packages already present are not fetched again.
set -euo pipefail

build=(build-essential autoconf automake pkg-config
	libseccomp-dev libyajl-dev libcap-dev libsystemd-dev)
runtime=(busybox-static)
tests=(bats jq iproute2 procps util-linux clang libclang-rt-14-dev podman
	dbus-daemon # dbus-daemon: the fake systemd's bus (cgroups_systemd.bats)
	clang-format) # CI's format section
want=("${build[@]}" "${runtime[@]}")
[[ ${1:-} == --tests ]] && want+=("${tests[@]}")

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# Quick start, step 1: install the build dependencies from Debian, build and
# install sandrun, then run a container from a bundle made on the spot (a
# busybox-static rootfs: no image is downloaded).  Run as root.
set -euo pipefail
cd "$(dirname "$0")/../.."

contrib/scripts/install-deps.sh
./autogen.sh >/dev/null
./configure -q
make -j"$(nproc)" >/dev/null
make install >/dev/null
echo "installed $(command -v sandrun): $(sandrun --version | head -1)"

demo=/tmp/sandrun-demo
rm -rf "$demo"
contrib/scripts/mkbundle.sh --no-terminal "$demo" -- sh -c \
	'echo "hello from sandrun: pid $$ in $(hostname), running as $(id -un)"'
sandrun run -b "$demo" "demo-$$"

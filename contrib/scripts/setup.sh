#!/usr/bin/env bash
# Quick start, step 1: install the build dependencies from Debian, build and
# install sandrun, then run a container from a bundle made on the spot (a
# busybox-static rootfs: no image is downloaded).  Run as root; running it
# again is harmless.
#
# The build is out of tree, in build/: a configured source directory would
# stop the test suite's own out-of-tree builds (tests/run-all.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

contrib/scripts/install-deps.sh
[[ -x configure && configure -nt configure.ac && Makefile.in -nt Makefile.am ]] ||
	./autogen.sh >/dev/null 2>&1
if [[ -f config.status ]]; then
	echo "setup.sh: the source directory is configured in place; run 'make distclean' there first" >&2
	exit 1
fi
mkdir -p build
(
	cd build
	[[ -f Makefile ]] || ../configure -q
	make -j"$(nproc)" >/dev/null
	make install >/dev/null
)
echo "installed $(command -v sandrun): $(sandrun --version | head -1)"

demo=/tmp/sandrun-demo
contrib/scripts/mkbundle.sh --force --no-terminal "$demo" -- sh -c \
	'echo "hello from sandrun: pid $$ in $(hostname), running as $(id -un)"'
sandrun delete --force sandrun-demo >/dev/null 2>&1 || true
sandrun run -b "$demo" sandrun-demo

# The main job: code run in a sandbox on the built-in default (the host's
# /usr read-only, no network, hard limits), and its receipt.
echo
echo "== sandrun sandbox: code in a sandbox, and its receipt"
code='import platform; print("hello from a sandbox, python", platform.python_version()); open("result.txt", "w").write("42\n")'
if [[ -x /usr/bin/python3 ]]; then
	sandrun sandbox --receipt - -- python3 -c "$code"
else
	sandrun sandbox --receipt - -- sh -c 'echo hello from a sandbox; echo 42 >result.txt'
fi

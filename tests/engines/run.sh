#!/usr/bin/env bash
# tests/engines/run.sh [containerd|docker|podman...]: the engine suite, as
# TAP on stdout (`make check-engines`, the `engines` section of
# tests/run-all.sh).  Root only: it starts dockerd and containerd on sockets
# of their own and stops them at the end.  RUNTIME is the sandrun to test.
set -uo pipefail

dir=$(cd "$(dirname "$0")" && pwd)
engines=("$@")
((${#engines[@]})) || engines=(containerd docker podman)
# A hung test fails on its own (every engine call has its own timeout too).
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-600}
rc=0
for e in "${engines[@]}"; do
	case $e in
	containerd) timeout 900 bats --tap "$dir/containerd.bats" || rc=1 ;;
	docker | podman) ENGINE=$e timeout 900 bats --tap "$dir/cli.bats" || rc=1 ;;
	*)
		echo "run.sh: unknown engine '$e' (containerd, docker, podman)" >&2
		rc=2
		;;
	esac
done
exit $rc

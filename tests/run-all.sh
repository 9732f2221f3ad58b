#!/usr/bin/env bash
# Quick start, step 2: the whole test suite, as root on Debian 12.
#
#   tests/run-all.sh            everything
#   SECTIONS="unit integration" tests/run-all.sh   only some sections
#
# Sections: unit (C unit tests), integration (bats, real containers, on this
# host's cgroup layout), asan (the unit tests and part of the integration
# suite against an ASan+UBSan build), cgroupv2 (the cgroup-dependent and
# attack tests inside a pure cgroup v2 guest, ../shared/tools/vm-run), fuzz
# (each libFuzzer target for FUZZ_SECONDS), soak (SOAK_COUNT create/start/
# delete cycles), format (clang-format on contrib/format-checked.txt's files,
# contrib/scripts/check-format.sh), engines (podman, Docker, containerd and
# its CRI plugin driving sandrun end to end: tests/engines, `make
# check-engines`).  It installs what it needs from Debian first, builds out of
# tree under tests/.work/, and ends with the line "N passed, M failed" (and
# ", K skipped"); the exit status is non-zero when anything failed.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
work=$repo/tests/.work
logs=$work/logs
mkdir -p "$logs"
SECTIONS=${SECTIONS:-format unit integration engines asan cgroupv2 fuzz soak}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
export SOAK_COUNT=${SOAK_COUNT:-50}
vm_run=$(cd "$repo/.." && pwd)/shared/tools/vm-run

passed=0 failed=0 skipped=0
failures=()

say() { printf '\n== %s\n' "$*"; }
wants() { [[ " $SECTIONS " == *" $1 "* ]]; }

# failure_details NAME FILE: each failed test of a TAP log with the first lines
# of what it printed (bats' "# " lines), so that a CI log names the cause.
failure_details() {
	awk -v name="$1" '
		/^not ok [0-9]+/ { print name ": " $0; n = 0; infail = 1; next }
		/^(ok|not ok) [0-9]+/ { infail = 0; next }
		infail && /^#/ && n < 20 { print "    " $0; n++ }
	' "$2"
}

# count NAME FILE STATUS: add a TAP log's results; a non-zero status with no
# failed test in the log (a crash, a build error) is one failure of its own.
count() {
	local name=$1 file=$2 status=$3 p f s
	p=$(grep -cE '^ok [0-9]+' "$file" | head -1)
	s=$(grep -cE '^ok [0-9]+.*# [Ss][Kk][Ii][Pp]' "$file" | head -1)
	f=$(grep -cE '^not ok [0-9]+' "$file" | head -1)
	passed=$((passed + p - s))
	skipped=$((skipped + s))
	failed=$((failed + f))
	failure_details "$name" "$file" >>"$logs/failures.txt"
	if ((status != 0 && f == 0)); then
		failed=$((failed + 1))
		echo "$name: exited with status $status (see $file)" >>"$logs/failures.txt"
	fi
	printf '%s: %d passed, %d failed, %d skipped\n' "$name" $((p - s)) "$f" "$s"
}

# run_tap NAME CMD...: run a TAP producer, keep its output, count it.
run_tap() {
	local name=$1
	shift
	"$@" >"$logs/$name.tap" 2>"$logs/$name.err"
	count "$name" "$logs/$name.tap" $?
}

finish() {
	if [[ -s $logs/failures.txt ]]; then
		say "failures"
		cat "$logs/failures.txt"
	fi
	echo
	if ((skipped > 0)); then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	((failed == 0))
	exit
}
: >"$logs/failures.txt"

# build DIR [CONFIGURE-ARGS...]: an out-of-tree build; 0 on success.
build() {
	local dir=$1
	shift
	mkdir -p "$dir"
	(cd "$dir" && "$repo/configure" -q "$@" && make -j"$(nproc)" >/dev/null &&
		make -j"$(nproc)" check TESTS= >/dev/null) >"$dir.log" 2>&1
}

say "dependencies"
if ! contrib/scripts/install-deps.sh --tests; then
	echo "deps: installing the test dependencies failed" >>"$logs/failures.txt"
	failed=$((failed + 1))
	finish
fi

if wants format; then
	say "format"
	run_tap format contrib/scripts/check-format.sh
fi

say "build"
./autogen.sh >"$logs/autogen.log" 2>&1 || { echo "autogen failed" >>"$logs/failures.txt"; failed=$((failed + 1)); finish; }
if ! build "$work/build"; then
	tail -30 "$work/build.log"
	echo "build: failed (see $work/build.log)" >>"$logs/failures.txt"
	failed=$((failed + 1))
	finish
fi
# RUNTIME=crun (or runc, or a path) runs the integration suite against
# another runc-compatible runtime; the default is the sandrun just built.
RUNTIME=${RUNTIME:-$work/build/sandrun}
[[ $RUNTIME == */* ]] || RUNTIME=$(command -v "$RUNTIME" || echo "$RUNTIME")
export RUNTIME
for helper in tests/helpers/recvtty.c; do
	[[ -f $helper ]] && cc -O2 -Wall -o "$work/$(basename "$helper" .c)" "$helper"
done
echo "built $work/build/sandrun; integration tests run $RUNTIME"
# A hung test fails on its own instead of eating the CI budget.
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-300}
# The busybox rootfs the tests copy is built afresh once per run.
rm -rf "$work/rootfs"

# bats_cmd: how to call bats; with crun, in a private mount namespace with the
# hybrid v2 hierarchy covered (crun 1.8 refuses hybrid hosts whose v2
# hierarchy has controllers; the host's own mounts are not touched).
bats_cmd=(bats)
if [[ $(basename "$RUNTIME") == crun && -n $(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null) ]]; then
	bats_cmd=(unshare -m --propagation private sh -c
		'mount -t tmpfs none /sys/fs/cgroup/unified && exec bats "$@"' sh)
fi

unit_tests() { # DIR PREFIX
	local t
	for t in "$1"/tests/unit/test-*; do
		[[ -x $t ]] || continue
		run_tap "$2$(basename "$t")" "$t"
	done
}

integration_files() {
	ls tests/integration/*.bats | grep -v -e soak.bats
}

if wants unit; then
	say "unit tests"
	unit_tests "$work/build" ""
fi

if wants integration; then
	say "integration tests (this host: cgroup $(stat -fc %T /sys/fs/cgroup))"
	# shellcheck disable=SC2046
	run_tap integration timeout 3600 "${bats_cmd[@]}" --tap $(integration_files)
fi

if wants engines; then
	say "engines: podman, Docker, containerd, CRI"
	for e in containerd docker podman; do
		# The churn comparison (100 containers) is one long test.
		BATS_TEST_TIMEOUT=600 run_tap "engines-$e" timeout 900 tests/engines/run.sh "$e"
		grep '^# benchmark' "$logs/engines-$e.tap"
	done
fi

if wants asan; then
	say "ASan + UBSan build"
	if build "$work/build-asan" --enable-sanitizers; then
		export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86
		export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=87
		unit_tests "$work/build-asan" "asan-"
		RUNTIME=$work/build-asan/sandrun run_tap asan-integration timeout 1800 bats --tap \
			$(ls tests/integration/{lifecycle,errors,badinput,attacks,mcp}.bats 2>/dev/null)
	else
		echo "asan: build failed (see $work/build-asan.log)" >>"$logs/failures.txt"
		failed=$((failed + 1))
	fi
fi

if wants cgroupv2; then
	say "cgroup v2 guest"
	if [[ -x $vm_run ]]; then
		# The guest is emulated (5-50 s a test): by default one test per
		# resource family and per cgroup-v2 mechanism (cgroup.freeze,
		# cgroup.kill, the eBPF device filter, memory.events), and those of
		# exec and namespaces whose subject a cgroup v2 host changes (cgroup
		# fds, CLONE_INTO_CGROUP, the cgroup namespace), chosen by name; then
		# every attack test; and one each for the seccomp filter loaded last
		# and the refusal without a mount namespace.  V2_FULL=1 runs every
		# one of these files whole.
		v2_files=$(ls tests/integration/{cgroups,cgroups_*,update,pause,events,exec,namespaces,seccomp}.bats 2>/dev/null | sort -u)
		v2_filter=(-f "memory.limit: the cgroup|memory.swap: memory|cpu.shares|cpu.quota and cpu.period|pids.limit: pids.max|hugepageLimits: the 2MB|unified: raw cgroup2|cgroups: delete removes|devices: a host node|devices: a linux.devices node|pause: the status is paused|delete --force of a paused|events --stats: one stats|killed by the OOM killer exits 137|one oom event per OOM kill|update -r FILE|kill --all: every process|exec: the process runs in the container's cgroup|exec --cgroup: a sub-cgroup|cgroup namespace: the container sees|systemd driver: a transient scope with the resources|seccomp late: a startContainer hook|mount namespace: a config without")
		[[ -z ${V2_FULL:-} ]] || v2_filter=()
		# shellcheck disable=SC2016,SC2086
		run_tap cgroupv2 "$vm_run" --mem 2G --timeout 3000 -- \
			env RUNTIME="$RUNTIME" bash -c 'bats --tap "$@"; a=$?
				bats --tap tests/integration/attacks.bats; b=$?
				exit $((a | b))' _ "${v2_filter[@]}" $v2_files
	else
		echo "cgroupv2: $vm_run not found: skipped" | tee -a "$logs/cgroupv2.tap"
		skipped=$((skipped + 1))
	fi
fi

if wants cgroupv2 && [[ -x $vm_run ]]; then
	say "cgroup v2 guest: sandbox"
	# The sandbox's cgroup-dependent tests: the memory and pids limits, the
	# clean-up after a SIGKILLed sandrun; five of the sessions' (the
	# supervisor's exec, its freezer check, the per-execution timeout and
	# memory kill); three of the egress gateway's (its
	# network namespace and rules; the whole file takes 15 minutes there).  (Not the per-sandbox uid: the
	# guest's /tmp is a tmpfs that Linux 6.1 cannot idmap, so a --workdir
	# there takes the documented fallback, the owner's uid, shared by the
	# sandboxes of one owner; docs/sandbox.md.)
	# shellcheck disable=SC2046
	run_tap cgroupv2-sandbox "$vm_run" --mem 2G --timeout 1500 -- \
		env RUNTIME="$RUNTIME" bats --tap -f "sandbox limit memory: the issue|sandbox limit pids|sandbox lifecycle: SIGKILL to sandrun|sandbox hostile: a shell fork bomb|egress: an allowed name over HTTP|egress: a name not on the list is denied|egress: nothing is left when sandrun is killed|session: /work, /tmp and processes persist|session: an execution runs in every namespace|session: the supervisor's loaded exec|session: a timeout stops the execution|session: a memory-limit kill" \
		$(ls tests/integration/sandbox_{isolation,limits,hostile,lifecycle,egress,session}.bats)
fi

if wants fuzz; then
	say "fuzzing (${FUZZ_SECONDS}s per target)"
	if build "$work/build-fuzz" --enable-fuzzing CC=clang; then
		for f in "$work"/build-fuzz/tests/fuzz/fuzz-*; do
			[[ -x $f ]] || continue
			name=$(basename "$f")
			corpus=$work/corpus-${name#fuzz-}
			mkdir -p "$corpus"
			cp -n tests/fuzz/corpus/"${name#fuzz-}"/* "$corpus"/ 2>/dev/null
			if "$f" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
				-artifact_prefix="$logs/$name-" "$corpus" >"$logs/$name.log" 2>&1; then
				echo "ok 1 $name: no finding in ${FUZZ_SECONDS}s" >"$logs/$name.tap"
			else
				echo "not ok 1 $name: a finding (see $logs/$name.log)" >"$logs/$name.tap"
			fi
			count "$name" "$logs/$name.tap" 0
		done
	else
		echo "fuzz: build failed (see $work/build-fuzz.log)" >>"$logs/failures.txt"
		failed=$((failed + 1))
	fi
fi

if wants soak; then
	say "soak ($SOAK_COUNT cycles)"
	if [[ -f tests/integration/soak.bats ]]; then
		run_tap soak timeout 1800 bats --tap tests/integration/soak.bats
	elif [[ -x tests/soak.sh ]]; then
		run_tap soak timeout 1800 tests/soak.sh
	else
		echo "soak: no soak test yet"
	fi
fi

finish

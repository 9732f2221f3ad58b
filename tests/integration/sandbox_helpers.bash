# Helpers of the `sandrun sandbox` suites (sandbox_*.bats), on top of
# helpers.bash.
#
# Each test gets its own state root ($ROOT, given as --root), a receipt path
# ($RECEIPT) and a mark ($TEST_MARK) in the environment of sandrun and, through
# --env, of every sandboxed process, so that whatever a test leaves behind can
# be found by that mark, by the sandbox ids of its receipts, or by the cgroups
# its sandboxes ran in.  Nothing is skipped because sandrun lacks a feature: a
# missing feature is a failing test.

load helpers
load attack_helpers # umount_mounts_under; its setup and teardown are replaced below

SB_VALIDATE=$REPO_ROOT/tests/helpers/validate-receipt.py
SB_SCHEMA=$REPO_ROOT/contrib/sandbox/receipt.schema.json
# Seconds one sandrun invocation may take before it counts as hung (each
# test sets its own, much shorter, --timeout for the sandbox itself).
SB_HANG=${SB_HANG:-60}
# The Debian interpreter, never a pyenv or venv one of the caller's PATH: the
# sandbox sees the host's /usr only.
PY=/usr/bin/python3

# --- per-test set-up -----------------------------------------------------------

# The suites' default hooks (a suite may define its own after loading).
setup() {
	sb_setup
}

teardown() {
	sb_teardown
}

sb_setup() {
	[[ -x $RUNTIME ]] || fail "RUNTIME $RUNTIME is not an executable (build sandrun or set RUNTIME)"
	ROOT=$BATS_TEST_TMPDIR/root
	RECEIPT=$BATS_TEST_TMPDIR/receipt.json
	TEST_MARK="SANDRUN_TEST_MARK=$BATS_TEST_TMPDIR"
	SB_IDS=$BATS_TEST_TMPDIR/sandbox-ids
	SB_CGROUPS=$BATS_TEST_TMPDIR/sandbox-cgroups
	SB_BG_PIDS=()
	mkdir -p "$ROOT"
	: >"$SB_IDS"
	: >"$SB_CGROUPS"
	export ROOT RECEIPT TEST_MARK
}

# sb_teardown: kill what a failed test left running (by pid or mark), undo
# stray mounts under the test's directory; assertions are the test's job.
sb_teardown() {
	local pid
	for pid in "${SB_BG_PIDS[@]}"; do
		kill -9 "$pid" 2>/dev/null || true
	done
	kill_marked_processes
	umount_mounts_under "$BATS_TEST_TMPDIR"
	# One sandrun call on the same root reclaims what a killed one left.
	[[ -n ${ROOT:-} ]] && timeout 30 "$RUNTIME" --root "$ROOT" list >/dev/null 2>&1 </dev/null 3>&-
	return 0
}

# sb_workdir [NAME]: a fresh directory for --workdir, owned by the
# unprivileged $SB_OWNER (files the sandbox writes must belong to it).
SB_OWNER=${SB_OWNER:-2345}
sb_workdir() {
	local d=$BATS_TEST_TMPDIR/${1:-work}
	mkdir -p "$d"
	chown "$SB_OWNER:$SB_OWNER" "$d"
	chmod 0755 "$d"
	echo "$d"
}

# sb_secs N: a duration of N seconds as the duration options take it.
sb_secs() {
	echo "${1}s"
}

# --- running sandboxes -----------------------------------------------------------

# sb OPTION... -- COMMAND...: `sandrun --root $ROOT sandbox` with the test's
# mark, bounded in time; fd 3 (bats' own) closed.  Use as `run sb ...`.
sb() {
	timeout --kill-after=5 "$SB_HANG" env "$TEST_MARK" \
		"$RUNTIME" --root "$ROOT" sandbox --env "$TEST_MARK" "$@" 3>&-
}

# sb_run OPTION... -- COMMAND...: `run --separate-stderr sb --receipt
# $RECEIPT ...` (stdin from /dev/null unless SB_STDIN names a file); then the
# receipt must exist and validate against the schema, and its id is recorded
# for the leftover checks.
sb_run() {
	rm -f "$RECEIPT"
	run --separate-stderr sb --receipt "$RECEIPT" "$@" <"${SB_STDIN:-/dev/null}"
	sb_check_receipt "$RECEIPT"
}

# sb_check_receipt FILE...: each exists and is valid against the schema (one
# validator run for all: it takes a while to start), and their ids go into
# $SB_IDS.
sb_check_receipt() {
	local f problems
	for f in "$@"; do
		[[ -s $f ]] || fail "no receipt written to $f (status $status; stderr: ${stderr:-})" || return
	done
	problems=$("$PY" "$SB_VALIDATE" "$@" 2>&1) ||
		fail "receipt(s) do not validate against the schema:"$'\n'"$problems"$'\n'"receipt: $(sb_receipt_brief "$1")" ||
		return
	jq -r .id "$@" >>"$SB_IDS"
}

# sb_start OPTION... -- COMMAND...: the sandbox in the background, its
# output in $BATS_TEST_TMPDIR/bg.out and bg.err; $SB_PID is sandrun's pid.
sb_start() {
	env "$TEST_MARK" "$RUNTIME" --root "$ROOT" sandbox --env "$TEST_MARK" "$@" \
		</dev/null >"$BATS_TEST_TMPDIR/bg.out" 2>"$BATS_TEST_TMPDIR/bg.err" 3>&- &
	SB_PID=$!
	SB_BG_PIDS+=("$SB_PID")
}

# sb_wait_exit PID [SECONDS]: wait (bounded, default $SB_HANG) for a
# background sandrun; $status is its exit status.
sb_wait_exit() {
	local pid=$1 deadline=$((SECONDS + ${2:-$SB_HANG}))
	while kill -0 "$pid" 2>/dev/null && ! sb_is_zombie "$pid"; do
		if ((SECONDS >= deadline)); then
			kill -9 "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			fail "sandrun (pid $pid) still running after ${2:-$SB_HANG} s; stderr: $(cat "$BATS_TEST_TMPDIR/bg.err" 2>/dev/null)"
			return 1
		fi
		sleep 0.05
	done
	status=0
	wait "$pid" || status=$?
}

sb_is_zombie() {
	[[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) == Z ]]
}

# sb_wait_for FILE [SECONDS]: poll until FILE exists (default 120 s: the
# emulated cgroup v2 guest starts a sandbox in seconds, not milliseconds).
sb_wait_for() {
	local deadline=$((SECONDS + ${2:-120}))
	until [[ -e $1 ]]; do
		((SECONDS < deadline)) || {
			fail "$1 did not appear within ${2:-120} s; sandbox stderr: $(cat "$BATS_TEST_TMPDIR/bg.err" 2>/dev/null)"
			return 1
		}
		sleep 0.05
	done
}

# sb_wait_gone_marked [SECONDS]: poll until no process carries the mark.
sb_wait_gone_marked() {
	local deadline=$((SECONDS + ${1:-10})) pids
	while pids=$(live_marked_pids) && [[ -n $pids ]]; do
		((SECONDS < deadline)) || {
			fail "processes still alive after ${1:-10} s: $(ps -o pid,user,args -p "${pids//$'\n'/,}" 2>&1)"
			return 1
		}
		sleep 0.05
	done
}

# sb_sandboxed_pids: the marked processes inside a sandbox (another pid
# namespace than ours), not sandrun or its helpers.
sb_sandboxed_pids() {
	local pid ours
	ours=$(readlink /proc/self/ns/pid)
	for pid in $(live_marked_pids); do
		[[ $(readlink "/proc/$pid/ns/pid" 2>/dev/null) != "$ours" ]] && echo "$pid"
	done
	return 0
}

# sb_record_running: note the ids under $ROOT and the host cgroups of every
# marked process (the sandboxes running now), for the leftover checks.
sb_record_running() {
	local pid
	find "$ROOT" -mindepth 1 -maxdepth 2 -type d ! -name slots -printf '%f\n' >>"$SB_IDS" 2>/dev/null
	for pid in $(live_marked_pids); do
		sb_cgroup_dirs "$pid" >>"$SB_CGROUPS"
	done
	sort -u -o "$SB_CGROUPS" "$SB_CGROUPS"
}

# sb_cgroup_dirs PID: the cgroup directories of PID that are not ours.
sb_cgroup_dirs() {
	local line rel ours ctrl dir v2=/sys/fs/cgroup/unified content
	# read at once: the process may end meanwhile
	content=$(cat "/proc/$1/cgroup" 2>/dev/null) || return 0
	[[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]] && v2=/sys/fs/cgroup
	while IFS= read -r line; do
		rel=${line#*:*:}
		ctrl=${line#*:}
		ctrl=${ctrl%%:*}
		ours=$(awk -F: -v c="$ctrl" '$2 == c { sub(/^[^:]*:[^:]*:/, ""); print }' /proc/self/cgroup)
		[[ $rel == / || $rel == "$ours" ]] && continue
		if [[ -z $ctrl ]]; then
			dir=$v2$rel
		else
			dir=/sys/fs/cgroup/${ctrl#name=}$rel
		fi
		echo "$dir"
	done <<<"$content"
}

# sb_sh 'SHELL CODE' [OPTION...] / sb_py 'PYTHON CODE' [OPTION...]: the code
# in a sandbox (the options go before the --), as sb_run.
sb_sh() {
	local code=$1
	shift
	sb_run "$@" -- /bin/sh -c "$code"
}

sb_py() {
	local code=$1
	shift
	sb_run "$@" -- python3 -c "$code"
}

# --- the receipt ------------------------------------------------------------------

# rf FILTER [FILE]: a field of the receipt (jq -r).
rf() {
	jq -r "$1" "${2:-$RECEIPT}"
}

# assert_rf FILTER EXPECTED [FILE]: jq -r FILTER gives exactly EXPECTED.
assert_rf() {
	local got
	# exactly the value: jq -r adds one newline, $(...) would strip them all
	got=$(rf "$1" "${3:-$RECEIPT}" && echo .)
	got=${got%.}
	got=${got%$'\n'}
	[[ $got == "$2" ]] || fail "receipt: $1 is '$got', expected '$2'; receipt: $(sb_receipt_brief "${3:-$RECEIPT}")"
}

# assert_rf_true FILTER [FILE]: the jq expression is true.
assert_rf_true() {
	assert_rf "$1" true "${2:-$RECEIPT}"
}

# sb_receipt_brief [FILE]: the receipt without its output bodies, for
# failure messages.
sb_receipt_brief() {
	jq -c '.stdout |= .[:300]? | .stderr |= .[:300]? | del(.policy.mounts)' "${1:-$RECEIPT}" 2>&1 | head -c 3000
}

# assert_stdout_has REGEX...: each (grep -P) matches a line of the
# receipt's stdout.
assert_stdout_has() {
	local re out
	out=$(rf .stdout)
	for re in "$@"; do
		grep -qP -- "$re" <<<"$out" || fail "no line of stdout matches '$re': $out" || return
	done
}

# assert_limit NAME [FILE]: NAME is the limit that ended the run, is among the
# limits hit, and the message says so in words.
assert_limit() {
	local name=$1 file=${2:-$RECEIPT} word
	assert_rf .limit_exceeded "$name" "$file"
	assert_limit_hit "$name" "$file"
	case $name in
	timeout) word='wall-clock|time' ;;
	pids) word='process' ;;
	disk) word='disk|fill|full|space' ;;
	file_size) word='file' ;;
	*) word=$name ;;
	esac
	rf .message "$file" | grep -qiE -- "$word" ||
		fail "message does not say '$word': $(rf .message "$file")"
}

# assert_limit_hit NAME [FILE]: NAME is in limits_hit.
assert_limit_hit() {
	assert_rf "any(.limits_hit[]; . == \"$1\")" true "${2:-$RECEIPT}"
}

# assert_no_limit [FILE]: no limit ended the run and none was hit.
assert_no_limit() {
	assert_rf '[.limit_exceeded, (.limits_hit | length)] | @json' '[null,0]' "${1:-$RECEIPT}"
}

# assert_file_entry PATH CHANGE [HOSTFILE] [FILE]: files lists PATH with that
# change and, unless deleted, the size and SHA-256 of HOSTFILE.
assert_file_entry() {
	local path=$1 change=$2 host=${3:-} file=${4:-$RECEIPT} entry
	entry=$(jq -c --arg p "$path" '[.files[] | select(.path == $p)]' "$file")
	[[ $(jq length <<<"$entry") == 1 ]] ||
		fail "files lists '$path' $(jq length <<<"$entry") times: $(jq -c .files "$file")"
	[[ $(jq -r '.[0].change' <<<"$entry") == "$change" ]] ||
		fail "files: '$path' change is $(jq -r '.[0].change' <<<"$entry"), expected $change"
	[[ -n $host ]] || return 0
	[[ $(jq -r '.[0].sha256' <<<"$entry") == "$(sha256sum <"$host" | cut -d' ' -f1)" ]] ||
		fail "files: '$path' sha256 $(jq -r '.[0].sha256' <<<"$entry") is not that of $host"
	[[ $(jq -r '.[0].size' <<<"$entry") == "$(stat -c %s "$host")" ]] ||
		fail "files: '$path' size $(jq -r '.[0].size' <<<"$entry") is not that of $host"
}

# --- nothing left behind ------------------------------------------------------------

# sb_state_left: what is under $ROOT besides directories, the fixed set of
# slot lock files (reused, one per concurrent sandbox: the host uid ranges)
# and the core's content-addressed cache (.cache: compiled seccomp
# filters), and any entry named after a sandbox.
sb_state_left() {
	find "$ROOT" -mindepth 1 \( -name slots -o -name .cache \) -prune -o ! -type d -print 2>/dev/null
	find "$ROOT" -mindepth 1 -type d -name 'sandbox-*' 2>/dev/null
	[[ -s $SB_IDS ]] && find "$ROOT" -mindepth 1 2>/dev/null | grep -F -f <(grep -v -e '^$' -e '^null$' -e '^\.' "$SB_IDS")
	return 0
}

# sb_assert_no_leftovers: nothing of this test's sandboxes remains: no state
# entry under $ROOT, no process with the mark, no cgroup they ran in or named
# after a sandbox id, no mount under the test's directory or naming an id, no
# temporary file or directory named after an id.
sb_assert_no_leftovers() {
	local left pids ids problems=''
	left=$(sb_state_left)
	[[ -z $left ]] || problems+=$'\n'"state left under $ROOT: $left"
	pids=$(live_marked_pids)
	[[ -z $pids ]] || problems+=$'\n'"processes left behind: $(ps -o pid,user,args -p "${pids//$'\n'/,}" 2>&1)"
	left=$(while read -r d; do [[ ! -e $d ]] || echo "$d"; done <"$SB_CGROUPS")
	[[ -z $left ]] || problems+=$'\n'"cgroups left behind: $left"
	left=$(awk -v b="$BATS_TEST_TMPDIR" 'index($5, b "/") == 1 { print $5 }' /proc/self/mountinfo)
	[[ -z $left ]] || problems+=$'\n'"mounts left under the test directory: $left"
	ids=$(grep -v '^$' "$SB_IDS" | sort -u | grep -v -e '^null$' -e '^\.' || true)
	if [[ -n $ids ]]; then
		left=$(grep -F -f <(echo "$ids") /proc/self/mountinfo || true)
		[[ -z $left ]] || problems+=$'\n'"mounts naming a sandbox id left behind: $left"
		left=$(find /sys/fs/cgroup -mindepth 1 -maxdepth 5 -type d 2>/dev/null | grep -F -f <(echo "$ids") || true)
		[[ -z $left ]] || problems+=$'\n'"cgroups named after a sandbox left behind: $left"
		left=$(find /tmp /var/tmp /run /dev/shm -maxdepth 3 -path "$BATS_RUN_TMPDIR" -prune -o -print 2>/dev/null |
			grep -F -f <(echo "$ids") || true)
		[[ -z $left ]] || problems+=$'\n'"temporary files named after a sandbox left behind: $left"
	fi
	[[ -z $problems ]] || fail "${problems#$'\n'}"
}

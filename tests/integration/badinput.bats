#!/usr/bin/env bats
# Hostile or broken input: config.json, container ids, paths.  Whatever the
# input, the runtime neither crashes nor hangs; a refusal is exactly one line
# on stderr starting with "sandrun: "; and nothing is left behind: no state
# entry, no cgroup named after the id, no mount, no process (snapshots of
# the host before and after each attempt).

load helpers
load attack_helpers # setup and teardown too

# attempt [ID]: `run` the bundle (process `true`) under a 30 s timeout, with
# snapshots around it.  It may succeed or fail, never crash or hang, and a
# failure is one clear line.  Sets $status, $stderr.
attempt() {
	local id=${1-$CID}
	snapshot_host before "$id"
	: >"$BATS_TEST_TMPDIR/stdout"
	run --separate-stderr timeout --kill-after=5 30 "$RUNTIME" --root "$ROOT" run -b "$BUNDLE" "$id" \
		</dev/null >>"$BATS_TEST_TMPDIR/stdout"
	((status != 124 && status != 137)) || fail "hung (status $status): $stderr"
	((status < 128)) || fail "crashed (status $status): $stderr"
	[[ -z ${VERBOSE:-} ]] || echo "# status $status: ${stderr:0:300}" >&3
	if ((status != 0)); then
		assert_runtime_error
	else
		[[ -z $stderr ]] || fail "success with messages: $stderr"
	fi
	snapshot_host after "$id"
	assert_same_snapshot before after
}

# refused [WORD...]: attempt, which must fail, mentioning each WORD.
refused() {
	attempt
	((status != 0)) || fail "accepted"
	assert_runtime_error "$@"
}

# config_text TEXT: config.json is TEXT, byte for byte.
config_text() {
	printf '%s' "$1" >"$BUNDLE/config.json"
}

# --- malformed JSON -----------------------------------------------------------------

@test "badinput: config.json empty, null, a list, a string, a number" {
	local doc
	for doc in '' 'null' '[]' '"config"' '42' '{}' '{' '}' '{"ociVersion":' $'\x00\x01\x02'; do
		config_text "$doc"
		refused
	done
}

@test "badinput: config.json truncated at every tenth of its length" {
	local full len cut
	full=$(cat "$BUNDLE/config.json")
	len=${#full}
	for cut in 1 2 3 4 5 6 7 8 9; do
		config_text "${full:0:len*cut/10}"
		refused
	done
}

@test "badinput: config.json of random bytes" {
	local k
	for k in 1 2 3 4 5; do
		head -c $((k * 997)) /dev/urandom >"$BUNDLE/config.json"
		refused
	done
}

@test "badinput: config.json nested 100,000 levels deep" {
	local deep
	deep=$(printf '%.0s[' $(seq 1 100000))
	config_text "{\"ociVersion\": \"1.0.2\", \"annotations\": {\"a\": $deep}}"
	refused
	config_text "{\"ociVersion\": \"1.0.2\", \"x\": $deep"
	refused
}

@test "badinput: duplicate keys, invalid UTF-8, NUL inside a string" {
	update_config '.hostname = "x"'
	sed -i 's/"hostname": "x"/"hostname": "x", "hostname": "y"/' "$BUNDLE/config.json"
	attempt
	update_config '.hostname = "ok"'
	sed -i $'s/"hostname": "ok"/"hostname": "o\xff\xfek"/' "$BUNDLE/config.json"
	attempt
	update_config '.hostname = "ok"'
	sed -i 's/"hostname": "ok"/"hostname": "o\\u0000k"/' "$BUNDLE/config.json"
	attempt
}

# --- wrong types, missing fields ----------------------------------------------------

@test "badinput: wrong types in every section" {
	local f
	for f in '.process.env = {"A": "b"}' '.process.env = [1, 2]' '.mounts = "none"' \
		'.mounts = [1]' '.process.rlimits = [{"type": "RLIMIT_NOFILE", "hard": "many", "soft": 1}]' \
		'.linux.resources.memory = {"limit": "lots"}' '.hostname = 7' '.root.readonly = "yes"' \
		'.process.capabilities.bounding = "CAP_KILL"' '.linux.namespaces = [{"type": 5}]' \
		'.process.user.additionalGids = ["x"]' '.process.cwd = ["/"]' '.linux = []' \
		'.process.noNewPrivileges = "true"' '.linux.maskedPaths = [null]' '.annotations = ["a"]'; do
		update_config "$f"
		refused
		reset_config
	done
}

@test "badinput: missing required fields" {
	local f
	for f in 'del(.ociVersion)' 'del(.root)' 'del(.root.path)' 'del(.process)' 'del(.process.args)' \
		'.process.args = []' 'del(.process.cwd)' 'del(.process.user)' 'del(.mounts[0].destination)' \
		'del(.linux.namespaces[0].type)' '.process.rlimits = [{"type": "RLIMIT_NOFILE"}]'; do
		update_config "$f"
		attempt
		reset_config
	done
}

# --- absurd values ----------------------------------------------------------------

@test "badinput: limits negative, zero or 2^64-1" {
	local f
	for f in '.linux.resources.memory = {"limit": -5}' \
		'.linux.resources.memory = {"limit": 18446744073709551615}' \
		'.linux.resources.memory = {"limit": 99999999999999999999999}' \
		'.linux.resources.pids = {"limit": -7}' \
		'.linux.resources.pids = {"limit": 0}' \
		'.linux.resources.cpu = {"shares": 18446744073709551615, "quota": -3, "period": 0}' \
		'.linux.resources.cpu = {"cpus": "0-99999", "mems": "banana"}' \
		'.process.rlimits = [{"type": "RLIMIT_NOFILE", "hard": 18446744073709551615, "soft": 18446744073709551615}]' \
		'.process.rlimits = [{"type": "RLIMIT_NOFILE", "hard": -1, "soft": -1}]' \
		'.process.rlimits = [{"type": "RLIMIT_NOFILE", "hard": 10, "soft": 20}]' \
		'.process.rlimits = [{"type": "RLIMIT_BOGUS", "hard": 1, "soft": 1}]' \
		'.process.user = {"uid": -1, "gid": 4294967295}' \
		'.process.user = {"uid": 4294967296, "gid": 0}' \
		'.process.oomScoreAdj = 100000' \
		'.process.consoleSize = {"height": 4294967295, "width": 99999999}'; do
		update_config "$f"
		attempt
		reset_config
	done
}

@test "badinput: 300 mounts" {
	update_config '.mounts += [range(300) | {destination: "/mnt/m\(.)", type: "tmpfs", source: "tmpfs"}]'
	attempt
}

@test "badinput: a 1 MB argument" {
	local big
	big=$(head -c 1048576 /dev/zero | tr '\0' a)
	update_config --rawfile b <(printf '%s' "$big") '.process.args = ["echo", $b]'
	attempt
}

@test "badinput: 20,000 environment variables" {
	update_config '.process.env += [range(20000) | "VAR\(.)=value\(.)"]'
	attempt
}

@test "badinput: a 70 KB hostname, a 70 KB domainname" {
	local big
	big=$(head -c 71680 /dev/zero | tr '\0' h)
	update_config --arg h "$big" '.hostname = $h'
	refused
	update_config --arg h "$big" '.hostname = "ok" | .domainname = $h'
	refused
}

@test "badinput: a 70 KB path: cwd, mount destination, rootfs" {
	local big
	big=/$(head -c 71680 /dev/zero | tr '\0' d)
	update_config --arg p "$big" '.process.cwd = $p'
	refused
	reset_config
	update_config --arg p "$big" '.mounts += [{destination: $p, type: "tmpfs", source: "tmpfs"}]'
	refused
	reset_config
	update_config --arg p "$big" '.root.path = $p'
	refused
}

# --- container ids ---------------------------------------------------------------

@test "badinput: container ids with /, .., newline, control characters, 5,000 characters" {
	local id long
	long=$(head -c 5000 /dev/zero | tr '\0' a)
	for id in "a/b" ".." "." "../x" $'new\nline' $'tab\there' $'esc\e[31m' "" "-dash" "$long" \
		"$(printf 'x%.0s' $(seq 1 1025))" "ünïcödé" "a b"; do
		attempt "$id"
		((status != 0)) || fail "id '$id' accepted"
	done
	[[ -z $(find "$ROOT" -mindepth 1 -maxdepth 1) ]] || fail "state left: $(ls "$ROOT")"
	[[ ! -e $BATS_TEST_TMPDIR/x ]] || fail "an id escaped --root"
}

@test "badinput: ids in every command that takes one" {
	local cmd id
	for cmd in state start kill delete ps; do
		for id in "../$(basename "$BATS_TEST_TMPDIR")" $'a\nb' ""; do
			run --separate-stderr timeout 30 "$RUNTIME" --root "$ROOT" "$cmd" "$id"
			((status != 0 && status < 124)) || fail "$cmd '$id': status $status"
			assert_runtime_error
		done
	done
}

# --- paths and namespaces -----------------------------------------------------------

@test "badinput: rootfs missing, a file, a dangling symlink" {
	rm -rf "$BUNDLE/rootfs"
	refused rootfs
	touch "$BUNDLE/rootfs"
	refused rootfs
	rm "$BUNDLE/rootfs"
	ln -s /nonexistent-root "$BUNDLE/rootfs"
	refused rootfs
}

@test "badinput: bogus namespace paths" {
	local p
	for p in /nonexistent /etc/passwd /proc/self/ns/net /dev/null /proc/1/ns/../ns/pid; do
		reset_config
		update_config --arg p "$p" '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)'
		refused
	done
}

@test "badinput: bogus and dangerous filesystem types" {
	local t
	for t in bogusfs "" "../../tmp" "proc\nx" bpf; do
		reset_config
		update_config --arg t "$t" '.mounts += [{destination: "/mnt", type: $t, source: "none"}]'
		attempt
	done
}

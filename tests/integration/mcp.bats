#!/usr/bin/env bats
# sandrun mcp: the MCP server on stdio, driven by the official MCP
# TypeScript SDK client (tests/mcp/client.mjs), and fed malformed JSON-RPC.
#
# The server runs each execution as a child `sandrun sandbox`, so its tests
# use either the real sandbox or tests/helpers/fake-sandrun, a stand-in speaking
# the same CLI contract (issues 12 and 14) that isolates nothing: with it
# these tests cover the MCP layer alone, whatever state the sandbox is in.

load helpers

MCP_DIR=$REPO_ROOT/tests/mcp
FAKE=$REPO_ROOT/tests/helpers/fake-sandrun

setup_file() {
	# The SDK, once (cached in tests/mcp/node_modules, ignored by git).
	(
		flock 9
		if [[ ! -f $MCP_DIR/node_modules/.package-lock.json ||
			$MCP_DIR/package-lock.json -nt $MCP_DIR/node_modules/.package-lock.json ]]; then
			npm ci --prefix "$MCP_DIR" --no-audit --no-fund --loglevel=error >&2
		fi
	) 9>"$MCP_DIR/.npm.lock"
}

setup() {
	"$RUNTIME" mcp --help >/dev/null 2>&1 || skip "$RUNTIME_NAME has no mcp command"
	ROOT=$BATS_TEST_TMPDIR/root
	STATE=$BATS_TEST_TMPDIR/fake-state
	# The server's temporary directories land here: the tests check it is empty.
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir -p "$ROOT" "$TMPDIR"
	export FAKE_SANDRUN_STATE=$STATE
	# A number the tests' sleeping executions carry, to find their processes.
	MARK=$((40000 + $$ % 20000))
}

teardown() {
	# Only what this test started: processes carrying its mark.
	local pid
	for pid in $(pgrep -f "^sleep $MARK" || true); do kill -KILL "$pid" 2>/dev/null || true; done
}

# The server with `mcp ARGS`, input from stdin, output in $output.  EOF on
# stdin ends the server and what runs: only for messages answered at once.
mcp() {
	timeout --kill-after=5 60 "$RUNTIME" --root "$ROOT" mcp "$@" 3>&-
}

# mcp_call MESSAGE [ARGS...]: one request to a server with ARGS, its
# response in $output once it came (stdin stays open until then).
mcp_call() {
	local msg=$1
	shift
	coproc SRV { exec timeout --kill-after=5 60 "$RUNTIME" --root "$ROOT" mcp "$@" 2>/dev/null 3>&-; }
	echo "$msg" >&"${SRV[1]}"
	output=
	read -t 50 -r output <&"${SRV[0]}" || true
	exec {SRV[1]}>&-
	wait "$SRV_PID" || true
}

assert_nothing_left() {
	local left
	left=$(ls -A "$TMPDIR")
	[[ -z $left ]] || fail "temporary files left: $left"
	if [[ -d $STATE ]]; then
		left=$(ls -A "$STATE")
		[[ -z $left ]] || fail "sessions left: $left"
	fi
	! pgrep -f "^sleep $MARK" >/dev/null || fail "an execution survived: $(pgrep -af "^sleep $MARK")"
}

@test "mcp: the SDK client lists tools, runs code, hits a limit, uses a session, cancels (fake sandbox)" {
	run env MCP_SESSIONS=files MCP_MARK=$MARK timeout 120 node "$MCP_DIR/client.mjs" \
		"$RUNTIME" --runtime "$FAKE" --timeout 5s --memory 64M
	echo "$output"
	assert_success
	assert_output_contains "ok - closed"
	assert_nothing_left
}

@test "mcp: the SDK client against the real sandbox" {
	"$RUNTIME" sandbox --help >/dev/null 2>&1 || skip "$RUNTIME_NAME has no sandbox command yet (issue 12)"
	local sessions=none
	"$RUNTIME" sandbox --help 2>&1 | grep -q "start --name" && sessions=kernel
	run env MCP_SESSIONS=$sessions MCP_MARK=$MARK timeout 180 node "$MCP_DIR/client.mjs" \
		"$RUNTIME" --timeout 5s --memory 64M
	echo "$output"
	assert_success
	assert_output_contains "ok - closed"
	assert_nothing_left
	if [[ $sessions != none ]]; then
		run runtime sandbox list --format json
		assert_success
		[[ $(jq length <<<"$output") == 0 ]] || fail "sessions left: $output"
	fi
}

# `mcp --allow-host` is the policy of every call, sessions' too: a session
# starts, its executions get the gateway (a name off the list is denied and
# recorded; nothing here leaves the sandbox's namespace), and it stops.
@test "mcp: with --allow-host, session_start works and its executions have the gateway (real sandbox)" {
	"$RUNTIME" sandbox --help 2>&1 | grep -q "start --name" || skip "$RUNTIME_NAME has no sessions"
	local session line
	coproc SRV { exec timeout --kill-after=5 120 "$RUNTIME" --root "$ROOT" mcp --allow-host allowed.test \
		--timeout 20s 2>/dev/null 3>&-; }
	echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"session_start","arguments":{}}}' >&"${SRV[1]}"
	read -t 100 -r line <&"${SRV[0]}" || true
	session=$(jq -r .result.structuredContent.session <<<"$line")
	[[ $(jq .result.isError <<<"$line") != true && $session == mcp-* ]] || fail "session_start: $line"
	echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session_exec","arguments":{"session":"'"$session"'","command":"printenv HTTP_PROXY; python3 -c \"import urllib.request as u; u.urlopen(\u0027http://denied.test/\u0027, timeout=10)\" 2>/dev/null || echo refused"}}}' >&"${SRV[1]}"
	read -t 100 -r line <&"${SRV[0]}" || true
	[[ $(jq -r .result.structuredContent.stdout <<<"$line") == $'http://127.0.0.1:3128\nrefused' ]] || fail "session_exec: $line"
	[[ $(jq -r .result.structuredContent.policy.network <<<"$line") == gateway ]] || fail "$line"
	[[ $(jq -r '[.result.structuredContent.network[] | "\(.host) \(.decision)"] | join(",")' <<<"$line") == \
		"denied.test denied" ]] || fail "session_exec: $line"
	echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"session_stop","arguments":{"session":"'"$session"'"}}}' >&"${SRV[1]}"
	read -t 100 -r line <&"${SRV[0]}" || true
	[[ $(jq .result.structuredContent.stopped <<<"$line") == true ]] || fail "session_stop: $line"
	exec {SRV[1]}>&-
	wait "$SRV_PID" || true
	run runtime sandbox list --format json
	[[ $(jq length <<<"$output") == 0 ]] || fail "sessions left: $output"
	assert_nothing_left
}

# One JSON-RPC message a line; the responses in order (the server answers
# each synchronous message before reading the next).
@test "mcp: malformed JSON-RPC gets JSON-RPC errors, never a crash" {
	local deep nul
	deep=$(printf '[%.0s' {1..100000})
	nul=$(printf '{"jsonrpc":"2.0","id":1,"method":"ping"}' | tr 1 '\000' | base64 -w0)
	run --separate-stderr mcp --runtime "$FAKE" < <(
		echo 'not json'
		echo '[]'
		echo '{"jsonrpc":"1.0","id":1,"method":"ping"}'
		echo "$deep"
		base64 -d <<<"$nul"; echo
		echo '{"jsonrpc":"2.0","id":null,"method":"ping"}'
		echo '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}'
		echo '{"jsonrpc":"2.0","id":2,"method":"no/such/method"}'
		echo '{"jsonrpc":"2.0","id":3,"method":"tools/call"}'
		echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_code","arguments":"print(1)"}}'
		echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":7}}}'
		echo '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"1","timeout":-1}}}'
		echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}'
		echo '{"jsonrpc":"2.0","method":"notifications/whatever"}'
		echo '{"jsonrpc":"2.0","id":7,"result":{}}'
		printf '%s' '{"jsonrpc":"2.0","id":"last","method":"ping"}' # EOF ends it, not a newline
	)
	assert_success
	local -a want=(
		'null -32700' 'null -32600' 'null -32600' 'null -32700' 'null -32700'
		'null -32600' 'null -32600' '2 -32601' '3 -32602' '4 -32602' '5 -32602' '6 -32602'
		'"last" ok'
	)
	local got
	got=$(jq -c 'if .error then "\(.id|tojson) \(.error.code)" else "\(.id|tojson) ok" end' -r <<<"$output")
	[[ $got == "$(printf '%s\n' "${want[@]}")" ]] || fail "responses: $got"$'\n'"output: $output"
	# Every error names what was wrong.
	[[ $(jq -s 'map(select(.error) | .error.message | length > 0) | all' <<<"$output") == true ]] ||
		fail "an error without a message: $output"
	assert_nothing_left
}

@test "mcp: initialize agrees on the client's version, or offers its newest" {
	local v
	for v in 2025-06-18 2025-03-26 2024-11-05; do
		run --separate-stderr mcp --runtime "$FAKE" <<<'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$v'","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
		assert_success
		[[ $(jq -r .result.protocolVersion <<<"$output") == "$v" ]] || fail "asked $v: $output"
	done
	run --separate-stderr mcp --runtime "$FAKE" <<<'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
	[[ $(jq -r .result.protocolVersion <<<"$output") == 2025-11-25 ]] || fail "$output"
	# Before 2025-06-18 there is no outputSchema.
	run --separate-stderr mcp --runtime "$FAKE" < <(
		echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
		echo '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
	)
	[[ $(jq -s '.[1].result.tools | map(select(.outputSchema)) | length' <<<"$output") == 0 ]] || fail "$output"
}

@test "mcp: a client's timeout is capped by the server's" {
	local args
	# The fake sandbox echoes its command line's --timeout into stdout.
	mcp_call '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"shell","code":"echo $FAKE_TIMEOUT","timeout":3600}}}' \
		--runtime "$FAKE" --timeout 2s
	args=$(jq -r .result.structuredContent.stdout <<<"$output")
	[[ $args == 2s ]] || fail "the execution got --timeout '$args': $output"
	mcp_call '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"shell","code":"echo $FAKE_TIMEOUT","timeout":0.5}}}' \
		--runtime "$FAKE" --timeout 2s
	[[ $(jq -r .result.structuredContent.stdout <<<"$output") == 500ms ]] || fail "$output"
}

@test "mcp: sandrun's own failure is a tool error carrying its message" {
	mcp_call '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"shell","code":"true"}}}' \
		--runtime "$FAKE" --memory bad
	[[ $(jq .result.isError <<<"$output") == true ]] || fail "$output"
	[[ $(jq -r '.result.content[0].text' <<<"$output") == 'sandrun sandbox: --memory "bad": expected a size such as 256M' ]] || fail "$output"
}

# A client that goes away: EOF on stdin (the stdio transport's shutdown), or
# a server killed outright; the running execution stops either way.
@test "mcp: a client that disconnects leaves no execution behind" {
	local how rt i
	local -a rts=(fake)
	"$RUNTIME" sandbox --help >/dev/null 2>&1 && rts+=(real)
	for rt in "${rts[@]}"; do
		local -a args=(--timeout 120s)
		[[ $rt == fake ]] && args+=(--runtime "$FAKE")
		for how in eof kill; do
			coproc SRV { exec "$RUNTIME" --root "$ROOT" mcp "${args[@]}" 2>/dev/null 3>&-; }
			echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"shell","code":"sleep '$MARK'"}}}' >&"${SRV[1]}"
			for ((i = 0; i < 200; i++)); do pgrep -f "^sleep $MARK" >/dev/null && break; sleep 0.05; done
			pgrep -f "^sleep $MARK" >/dev/null || fail "$rt: the execution did not start"
			if [[ $how == eof ]]; then
				exec {SRV[1]}>&-
			else
				kill -KILL "$SRV_PID"
			fi
			wait "$SRV_PID" || true
			for ((i = 0; i < 200; i++)); do pgrep -f "^sleep $MARK" >/dev/null || break; sleep 0.05; done
			assert_nothing_left || fail "$rt, $how: something was left"
		done
	done
}

@test "mcp: bad options fail with one line, before serving" {
	run --separate-stderr mcp --no-such-option x </dev/null
	assert_failure 125
	assert_one_error_line 'unknown option "--no-such-option"'
	run --separate-stderr mcp --workdir /tmp </dev/null
	assert_failure 125
	assert_one_error_line '--workdir is set by the server'
	run --separate-stderr mcp --timeout soon </dev/null
	assert_failure 125
	assert_one_error_line '--timeout "soon"'
}

# The receipt's schema (issue 12) is authoritative; run_code's outputSchema
# is a looser copy: the same names, and for each a type the schema's fits in.
@test "mcp: run_code's outputSchema agrees with contrib/sandbox/receipt.schema.json" {
	local schema=$REPO_ROOT/contrib/sandbox/receipt.schema.json
	[[ -f $schema ]] || skip "no $schema in this tree yet (branch sbtests)"
	run --separate-stderr mcp --runtime "$FAKE" < <(
		echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
	)
	assert_success
	local ours disagree
	ours=$(jq -c '.result.tools[] | select(.name == "run_code") | .outputSchema' <<<"$output")
	disagree=$(jq -rn --argjson ours "$ours" --slurpfile theirs "$schema" '
		def type_of(d): d.type // (if d.enum then (d.enum | map(type) | unique) else "?" end);
		def deref(v): if v["$ref"] then $theirs[0]["$defs"][v["$ref"] | sub("#/\\$defs/"; "")] else v end;
		def types(v): if v.oneOf then [v.oneOf[] | type_of(deref(.))] | flatten
			elif v.const then [v.const | type] else [type_of(deref(v))] | flatten end;
		$ours.properties | to_entries[] | .key as $k
		| ($theirs[0].properties[$k]) as $t
		| if $t == null then "\($k): not in the receipt schema"
		  elif (types($t) - [.value.type] - (.value.type | arrays // [])) != [] then
			"\($k): theirs \(types($t)), ours \(.value.type)"
		  else empty end')
	[[ -z $disagree ]] || fail "$disagree"
}

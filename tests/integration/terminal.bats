#!/usr/bin/env bats
# process.terminal with --console-socket: the runtime sends the pty master
# over the socket (SCM_RIGHTS) and the slave becomes the process's stdio and
# controlling terminal.  tests/helpers/recvtty.c plays the engine's part.

load helpers

setup() {
	setup_bundle
	update_config '.process.terminal = true'
}

teardown() {
	teardown_bundle
}

# tty_output: what the container wrote to its terminal, without the \r the
# line discipline adds.
tty_output() {
	tr -d '\r' <"$TTY_OUT"
}

# run_on_tty 'SHELL CODE' [INPUT-FILE]: run it detached on a terminal, wait
# until the terminal closes; its output is in $output.
run_on_tty() {
	set_cmd "$1"
	start_recvtty "${2:-/dev/null}"
	run_detached --console-socket "$CONSOLE_SOCKET" "$CID"
	[[ $status -eq 0 ]] || fail "run -d failed: $output"
	wait_recvtty
	output=$(tty_output)
}

@test "terminal: stdin, stdout and stderr are the pty slave" {
	run_on_tty 'tty; for fd in 0 1 2; do [ -t $fd ] && echo "$fd is a tty"; done'
	[[ ${output%%$'\n'*} == /dev/pts/* ]] || fail "tty: $output"
	[[ $output == *"0 is a tty"*"1 is a tty"*"2 is a tty"* ]] || fail "$output"
}

@test "terminal: the pty comes from the container's own devpts instance" {
	# newinstance devpts: the first pty of the container is number 0.
	run_on_tty 'tty'
	assert_output_equals /dev/pts/0
}

@test "terminal: it is the controlling terminal of a session led by the process" {
	run_on_tty 'set -- $(cat /proc/self/stat | sed "s/.*) //"); echo "session=$4 tty=$5"'
	# fields after the comm: state ppid pgrp session tty_nr
	[[ $output =~ session=([0-9]+)\ tty=([0-9]+) ]] || fail "stat: $output"
	[[ ${BASH_REMATCH[1]} -eq 1 ]] || fail "the process (pid 1) does not lead the session: $output"
	[[ ${BASH_REMATCH[2]} -ne 0 ]] || fail "no controlling terminal: $output"
}

@test "terminal: consoleSize is applied" {
	update_config '.process.consoleSize = {"height": 25, "width": 100}'
	run_on_tty 'stty size'
	assert_output_equals "25 100"
}

@test "terminal: input written to the master reaches the process" {
	printf 'hello tty\n' >"$BATS_TEST_TMPDIR/input"
	run_on_tty 'read line; echo "got:$line"' "$BATS_TEST_TMPDIR/input"
	[[ $output == *"got:hello tty"* ]] || fail "$output"
}

@test "terminal: /dev/console is the pty" {
	run_on_tty 'stat -c "%F %t" /dev/console'
	# pty slaves are major 136 (0x88) onwards
	[[ $output =~ ^character\ special\ file\ (8[89a-f]) ]] || fail "/dev/console: $output"
}

@test "terminal: create, then start, the output arrives after start" {
	set_cmd 'echo from the tty'
	start_recvtty
	create_container --console-socket "$CONSOLE_SOCKET" "$CID"
	assert_success
	[[ $(state_field "$CID" status) == created ]]
	[[ -z $(tty_output) ]] || fail "output before start: $(tty_output)"
	runtime start "$CID"
	wait_recvtty
	[[ $(tty_output) == "from the tty" ]] || fail "$(tty_output)"
	wait_status "$CID" stopped
}

@test "terminal: the exit status still reaches the state, nothing left behind" {
	run_on_tty 'exit 0'
	wait_status "$CID" stopped
	runtime delete "$CID"
	assert_no_leftovers
}

@test "terminal true without --console-socket is refused by create" {
	set_args true
	run --separate-stderr runtime_stdout_to_file create -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line
	assert_no_leftovers
}

@test "--console-socket with terminal false is refused" {
	update_config '.process.terminal = false'
	start_recvtty
	run --separate-stderr runtime_stdout_to_file create --console-socket "$CONSOLE_SOCKET" -b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line
	assert_no_leftovers
}

@test "--console-socket that nobody listens on fails cleanly" {
	set_args true
	run --separate-stderr runtime_stdout_to_file create --console-socket "$BATS_TEST_TMPDIR/nobody.sock" \
		-b "$BUNDLE" "$CID"
	assert_failure
	assert_one_error_line nobody.sock
	assert_no_leftovers
}

#!/usr/bin/env bats
# The help texts and the man page: every command has its help, every option
# a help names is one the command accepts, and a process's own --help (exec)
# or ps(1)'s is theirs.

load helpers

setup() {
	setup_bundle
}

teardown() {
	teardown_bundle
}

# The commands `sandrun --help` lists.
listed_commands() {
	runtime --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'
}

@test "help: --help lists every command; each command's --help, -h and 'help CMD' print its usage" {
	local cmds cmd
	cmds=$(listed_commands)
	[[ $(wc -l <<<"$cmds") -ge 16 ]] || fail "too few commands listed: $cmds"
	for cmd in create start run state kill delete list ps exec pause resume update events spec features; do
		grep -qx "$cmd" <<<"$cmds" || fail "--help does not list $cmd"
	done
	for cmd in $cmds; do
		run --separate-stderr runtime "$cmd" --help
		assert_success
		[[ ${lines[0]} == "Usage: sandrun $cmd"* ]] || fail "$cmd --help: $output"
		[[ -z $stderr ]] || fail "$cmd --help wrote to stderr: $stderr"
		local want=$output
		run runtime "$cmd" -h
		assert_output_equals "$want"
		run runtime help "$cmd"
		assert_output_equals "$want"
	done
}

@test "help: every option a command's help names, the command accepts" {
	local cmd line names arg name bogus
	cd "$BATS_TEST_TMPDIR" # no config.json here: nothing gets created
	for cmd in $(listed_commands); do
		# What the command says of an option it does not know.
		bogus=$(runtime "$cmd" --no-such-option x no-such-container 2>&1 >/dev/null || true)
		bogus=${bogus//--no-such-option/OPTION}
		while read -r line; do
			# "  -b, --bundle DIR   text": the spellings, then the value's name.
			names=$(grep -oE -- '(^| )--?[a-z0-9-]+' <<<"${line%%  *}" | tr -d ' ')
			arg=$(awk '{ print $NF }' <<<"${line%%  *}")
			[[ $arg == -* || $arg == *, ]] && arg=
			for name in $names; do
				run --separate-stderr runtime "$cmd" "$name" ${arg:+x} no-such-container
				[[ ${stderr//$name/OPTION} != "$bogus" && $stderr != *"unknown option"* ]] ||
					fail "$cmd does not accept $name (its help names it): $stderr"
			done
		done < <(runtime "$cmd" --help | awk '/^Options:/ { on = 1; next } on && /^  -/')
	done
}

@test "help: a --help after the container id is the process's (exec) or ps(1)'s" {
	create_running
	run --separate-stderr runtime exec "$CID" sh -c 'echo "args: $*"' _ --help -h
	assert_success
	assert_output_equals "args: --help -h"
	# An option's value is not taken for an option.
	run --separate-stderr runtime exec -e X=--help "$CID" sh -c 'echo "$X"'
	assert_success
	assert_output_equals "--help"
}

@test "help: an unknown command fails with one line" {
	run --separate-stderr runtime help no-such-command
	assert_failure
	assert_one_error_line 'unknown command "no-such-command"'
	run --separate-stderr runtime no-such-command --help
	assert_failure
	assert_one_error_line 'unknown command "no-such-command"'
}

@test "help: the man page documents every command and every global option" {
	local page cmd
	page=$(runtime help --man)
	[[ $page == ".TH SANDRUN 8 "* ]] || fail "not a man page: ${page:0:200}"
	for cmd in $(listed_commands); do
		grep -q "^\.SS $cmd\b" <<<"$page" || fail "the man page lacks $cmd"
	done
	for opt in root log log-format debug systemd-cgroup version help; do
		grep -qF -- "\\-\\-${opt//-/\\-}" <<<"$page" || fail "the man page lacks --$opt"
	done
	if command -v groff >/dev/null; then
		run groff -man -ww -z <<<"$page"
		assert_success
		[[ -z $output ]] || fail "groff warns: $output"
	fi
}

@test "--version: runc's shape (version, commit, spec, libseccomp lines)" {
	run runtime --version
	assert_success
	[[ ${lines[0]} =~ ^[a-z]+\ version\ [0-9][^\ ]*$ ]] || fail "first line: ${lines[0]}"
	grep -qE '^commit: [^ ]+$' <<<"$output" || fail "no commit line: $output"
	grep -qE '^spec: [0-9]+\.[0-9]+\.[0-9]+' <<<"$output" || fail "no spec line: $output"
	grep -qE '^libseccomp: [0-9]+\.[0-9]+\.[0-9]+$' <<<"$output" || fail "no libseccomp line: $output"
	run runtime -v
	assert_success
	[[ ${lines[0]} == *" version "* ]] || fail "-v: $output"
}

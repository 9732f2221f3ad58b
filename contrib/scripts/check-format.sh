#!/usr/bin/env bash
# CI's `format` check, as TAP: clang-format (with the .clang-format at the
# top of the tree) must leave unchanged
#   - every file listed in contrib/format-checked.txt: the files that were
#     clean when the check came, and every new file since (add yours);
#   - with FORMAT_BASE=REV (e.g. main), the lines changed since REV in any C
#     file (git clang-format), so that edits of older files are held to it
#     too without reformatting them whole (which would conflict with every
#     branch in flight).
# `clang-format -i FILE` fixes a listed file; `git clang-format REV` the
# changed lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
list=contrib/format-checked.txt
n=0 bad=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() {
	n=$((n + 1)) bad=$((bad + 1))
	echo "not ok $n - $1"
	sed 's/^/# /' <<<"$2" | head -40
}

command -v clang-format >/dev/null || { echo "not ok 1 - clang-format is not installed"; echo 1..1; exit 1; }
while IFS= read -r f; do
	[[ -z $f || $f == \#* ]] && continue
	if [[ ! -f $f ]]; then
		not_ok "$f: listed in $list but missing" ""
	elif out=$(clang-format "$f" | diff -u "$f" - 2>&1); then
		ok "$f"
	else
		not_ok "$f: not formatted (clang-format -i $f)" "$out"
	fi
done <"$list"
if [[ -n ${FORMAT_BASE:-} ]]; then
	out=$(git clang-format --diff --extensions c,h "$FORMAT_BASE" -- . 2>&1)
	if [[ -z $out || $out == *"no modified files"* || $out == *"did not modify"* ]]; then
		ok "lines changed since $FORMAT_BASE"
	else
		not_ok "lines changed since $FORMAT_BASE: not formatted (git clang-format $FORMAT_BASE)" "$out"
	fi
fi
echo "1..$n"
((bad == 0))

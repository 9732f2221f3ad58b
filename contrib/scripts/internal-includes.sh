#!/bin/sh
# Rewrite the #include lines of the internal headers that moved from
# include/sandrun/ to src/ (core/X.h, util/X.h, core/cgroup/X.h), in the
# files given or, without arguments, in every C file of the tree: for a
# branch that predates the move, after merging it.  Idempotent.
set -e
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || set -- $(git ls-files '*.c' '*.h')
sed -i -E \
	-e 's#"sandrun/(foreground|hooks|idmap|lifecycle|linux_attrs|mountopt|namespaces|process|rootfs|seccomp|spawn|sync|sysctl|terminal|state)\.h"#"core/\1.h"#' \
	-e 's#"sandrun/(fdpass|procfs|safepath|mountinfo)\.h"#"util/\1.h"#' \
	-e 's#"sandrun/(cgroup|cgroup_stats|cgroup_systemd)\.h"#"core/cgroup/\1.h"#' \
	"$@"

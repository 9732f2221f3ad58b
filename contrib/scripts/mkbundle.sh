#!/usr/bin/env bash
# mkbundle.sh: make an OCI bundle (rootfs/ + config.json) from the host's
# busybox-static binary, without downloading any image.
#
# The config.json has the shape `runc spec` generates (same mounts, masked
# and read-only paths, capabilities, rlimits, namespaces), with args ["sh"]
# unless told otherwise.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: mkbundle.sh [OPTIONS] DIR [-- ARG...]

Create the OCI bundle DIR: DIR/rootfs (busybox-static, /etc/passwd and
/etc/group with root and nobody, the usual empty directories) and
DIR/config.json (shaped like `runc spec`). ARGs after `--` become
process.args (default: sh).

Options:
  --no-terminal       set process.terminal to false (default true, as runc spec)
  --args JSON         process.args as a JSON array, e.g. '["echo","hi"]'
  --hostname NAME     the container's hostname (default: sandrun)
  --rootfs-from DIR   copy this rootfs (made earlier with --rootfs-only)
                      instead of building a new one
  --rootfs-only       build only a rootfs, in DIR itself; no config.json
  --busybox PATH      the static busybox to install (default: /bin/busybox)
  --force             replace DIR's rootfs and config.json if they exist
  -h, --help          this text
EOF
}

die() {
	echo "mkbundle.sh: $*" >&2
	exit 1
}

# JSON string literal for $1 (quotes, backslashes and control characters).
json_string() {
	local s=$1 out='' c i code
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		'"') out+='\"' ;;
		'\') out+='\\' ;;
		$'\n') out+='\n' ;;
		$'\t') out+='\t' ;;
		$'\r') out+='\r' ;;
		*)
			printf -v code '%d' "'$c"
			if ((code >= 0 && code < 32)); then
				printf -v c '\\u%04x' "$code"
			fi
			out+=$c
			;;
		esac
	done
	printf '"%s"' "$out"
}

build_rootfs() {
	local root=$1 bb=$2 applet
	[[ -x $bb ]] || die "$bb: no busybox binary (apt-get install busybox-static)"
	# A dynamically linked busybox would not run inside the empty rootfs.
	if LC_ALL=C ldd "$bb" 2>&1 | grep -qv 'not a dynamic executable'; then
		die "$bb: busybox is dynamically linked; install busybox-static"
	fi
	mkdir -p "$root"
	(
		cd "$root"
		mkdir -p bin sbin usr/bin usr/sbin etc root home tmp var/tmp run \
			proc sys dev mnt opt
		chmod 1777 tmp var/tmp
		chmod 0700 root
		install -m 0755 "$bb" bin/busybox
		# Relative links, so they resolve inside the container's root.
		for applet in $("$bb" --list); do
			[[ $applet == busybox ]] && continue
			ln -sf busybox "bin/$applet"
		done
		ln -sf ../../bin/busybox usr/bin/env
		cat >etc/passwd <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
		cat >etc/group <<'EOF'
root:x:0:
tty:x:5:
nogroup:x:65534:
EOF
		echo sandrun >etc/hostname
		: >etc/resolv.conf
		printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >etc/hosts
	)
}

write_config() {
	local file=$1 args_json=$2 terminal=$3 hostname=$4
	cat >"$file" <<EOF
{
	"ociVersion": "1.0.2-dev",
	"process": {
		"terminal": $terminal,
		"user": {
			"uid": 0,
			"gid": 0
		},
		"args": $args_json,
		"env": [
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"TERM=xterm"
		],
		"cwd": "/",
		"capabilities": {
			"bounding": [
				"CAP_AUDIT_WRITE",
				"CAP_KILL",
				"CAP_NET_BIND_SERVICE"
			],
			"effective": [
				"CAP_AUDIT_WRITE",
				"CAP_KILL",
				"CAP_NET_BIND_SERVICE"
			],
			"permitted": [
				"CAP_AUDIT_WRITE",
				"CAP_KILL",
				"CAP_NET_BIND_SERVICE"
			],
			"ambient": [
				"CAP_AUDIT_WRITE",
				"CAP_KILL",
				"CAP_NET_BIND_SERVICE"
			]
		},
		"rlimits": [
			{
				"type": "RLIMIT_NOFILE",
				"hard": 1024,
				"soft": 1024
			}
		],
		"noNewPrivileges": true
	},
	"root": {
		"path": "rootfs",
		"readonly": true
	},
	"hostname": $(json_string "$hostname"),
	"mounts": [
		{
			"destination": "/proc",
			"type": "proc",
			"source": "proc"
		},
		{
			"destination": "/dev",
			"type": "tmpfs",
			"source": "tmpfs",
			"options": [
				"nosuid",
				"strictatime",
				"mode=755",
				"size=65536k"
			]
		},
		{
			"destination": "/dev/pts",
			"type": "devpts",
			"source": "devpts",
			"options": [
				"nosuid",
				"noexec",
				"newinstance",
				"ptmxmode=0666",
				"mode=0620",
				"gid=5"
			]
		},
		{
			"destination": "/dev/shm",
			"type": "tmpfs",
			"source": "shm",
			"options": [
				"nosuid",
				"noexec",
				"nodev",
				"mode=1777",
				"size=65536k"
			]
		},
		{
			"destination": "/dev/mqueue",
			"type": "mqueue",
			"source": "mqueue",
			"options": [
				"nosuid",
				"noexec",
				"nodev"
			]
		},
		{
			"destination": "/sys",
			"type": "sysfs",
			"source": "sysfs",
			"options": [
				"nosuid",
				"noexec",
				"nodev",
				"ro"
			]
		},
		{
			"destination": "/sys/fs/cgroup",
			"type": "cgroup",
			"source": "cgroup",
			"options": [
				"nosuid",
				"noexec",
				"nodev",
				"relatime",
				"ro"
			]
		}
	],
	"linux": {
		"resources": {
			"devices": [
				{
					"allow": false,
					"access": "rwm"
				}
			]
		},
		"namespaces": [
			{
				"type": "pid"
			},
			{
				"type": "network"
			},
			{
				"type": "ipc"
			},
			{
				"type": "uts"
			},
			{
				"type": "mount"
			}
		],
		"maskedPaths": [
			"/proc/acpi",
			"/proc/asound",
			"/proc/kcore",
			"/proc/keys",
			"/proc/latency_stats",
			"/proc/timer_list",
			"/proc/timer_stats",
			"/proc/sched_debug",
			"/sys/firmware",
			"/proc/scsi"
		],
		"readonlyPaths": [
			"/proc/bus",
			"/proc/fs",
			"/proc/irq",
			"/proc/sys",
			"/proc/sysrq-trigger"
		]
	}
}
EOF
}

main() {
	local terminal=true args_json='' hostname=sandrun rootfs_from='' rootfs_only=false
	local busybox=/bin/busybox force=false dir='' a
	local -a args=()
	while (($#)); do
		case $1 in
		--no-terminal) terminal=false ;;
		--args)
			(($# >= 2)) || die "--args needs a JSON array"
			args_json=$2
			shift
			;;
		--hostname)
			(($# >= 2)) || die "--hostname needs a name"
			hostname=$2
			shift
			;;
		--rootfs-from)
			(($# >= 2)) || die "--rootfs-from needs a directory"
			rootfs_from=$2
			shift
			;;
		--rootfs-only) rootfs_only=true ;;
		--busybox)
			(($# >= 2)) || die "--busybox needs a path"
			busybox=$2
			shift
			;;
		--force) force=true ;;
		-h | --help)
			usage
			exit 0
			;;
		--)
			shift
			args=("$@")
			break
			;;
		-*) die "unknown option $1 (see --help)" ;;
		*)
			[[ -z $dir ]] || die "more than one DIR given: $dir, $1"
			dir=$1
			;;
		esac
		shift
	done
	[[ -n $dir ]] || {
		usage >&2
		exit 2
	}

	if $rootfs_only; then
		if [[ -e $dir ]]; then
			$force || die "$dir exists (use --force to replace it)"
			rm -rf "$dir"
		fi
		build_rootfs "$dir" "$busybox"
		return
	fi

	if ((${#args[@]})); then
		[[ -z $args_json ]] || die "give the args either with --args or after --, not both"
		args_json='['
		for a in "${args[@]}"; do
			args_json+="$(json_string "$a"),"
		done
		args_json="${args_json%,}]"
	fi
	[[ -n $args_json ]] || args_json='["sh"]'

	if [[ -e $dir/rootfs || -e $dir/config.json ]]; then
		$force || die "$dir already holds a bundle (use --force to replace it)"
		rm -rf "$dir/rootfs" "$dir/config.json"
	fi
	mkdir -p "$dir"
	if [[ -n $rootfs_from ]]; then
		[[ -x $rootfs_from/bin/busybox ]] || die "$rootfs_from: not a rootfs made by mkbundle.sh"
		cp -a "$rootfs_from" "$dir/rootfs"
	else
		build_rootfs "$dir/rootfs" "$busybox"
	fi
	write_config "$dir/config.json" "$args_json" "$terminal" "$hostname"
}

main "$@"

#!/usr/bin/env bash
# mkoci.sh ROOTFS-TAR OUT-TAR NAME [CMD...]: an OCI image archive (image
# layout, one uncompressed layer) of ROOTFS-TAR, named NAME for
# `ctr images import`, with CMD as the image's command.  Nothing is pulled.
set -euo pipefail

(($# >= 3)) || {
	echo "usage: mkoci.sh ROOTFS-TAR OUT-TAR NAME [CMD...]" >&2
	exit 2
}
layer=$1 out=$2 name=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/blobs/sha256"

# blob FILE: store FILE as a blob; prints "DIGEST SIZE".
blob() {
	local sum size
	sum=$(sha256sum "$1" | cut -d' ' -f1)
	size=$(stat -c %s "$1")
	cp "$1" "$dir/blobs/sha256/$sum"
	echo "sha256:$sum $size"
}

arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
read -r l_digest l_size < <(blob "$layer")
jq -n --arg arch "$arch" --arg diff "$l_digest" --args '{
	architecture: $arch, os: "linux",
	config: { Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
		Cmd: (if ($ARGS.positional | length) > 0 then $ARGS.positional else ["sh"] end) },
	rootfs: { type: "layers", diff_ids: [$diff] } }' "$@" >"$dir/config.json"
read -r c_digest c_size < <(blob "$dir/config.json")
jq -n --arg cd "$c_digest" --argjson cs "$c_size" --arg ld "$l_digest" --argjson ls "$l_size" '{
	schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
	config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs },
	layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $ld, size: $ls }] }' \
	>"$dir/manifest.json"
read -r m_digest m_size < <(blob "$dir/manifest.json")
jq -n --arg md "$m_digest" --argjson ms "$m_size" --arg name "$name" '{
	schemaVersion: 2,
	manifests: [{ mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $md, size: $ms,
		annotations: { "io.containerd.image.name": $name,
			"org.opencontainers.image.ref.name": ($name | sub(".*:"; "")) } }] }' \
	>"$dir/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
rm "$dir/config.json" "$dir/manifest.json"
tar -C "$dir" -cf "$out" oci-layout index.json blobs

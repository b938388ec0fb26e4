#!/usr/bin/env bash
# Builds Praxa's container image without a registry: static binaries
# (CGO_ENABLED=0) for each architecture, each put on an empty root
# filesystem with buildah (`buildah from scratch`: no base image is pulled),
# committed as localhost/praxa:TAG-ARCH and gathered in the manifest list
# localhost/praxa:TAG.
#
#   deploy/image/build.sh [--arch amd64,arm64] [--tag TAG] [--out DIR]
#
# The root filesystem holds /praxa, /etc/ssl/certs/ca-certificates.crt and
# /usr/share/zoneinfo (from this machine's ca-certificates and tzdata),
# /etc/passwd and /etc/group naming the user nonroot (65532), and /data, the
# data directory, a volume owned by nonroot. The image runs as 65532:65532
# and needs nothing written outside /data, so it runs with a read-only root
# filesystem. The binaries carry the version, revision and commit time
# through -ldflags (praxa version), since a container build may have no VCS
# stamping (GOFLAGS=-buildvcs=false).
#
# It prints the manifest list's name on stdout; everything else goes to
# stderr. The binaries stay in DIR (default deploy/image/out), named
# praxa-linux-ARCH.
set -euo pipefail
cd "$(dirname "$0")/../.."

log() { echo "image: $*" >&2; }
die() {
	echo "image: $*" >&2
	exit 1
}

arches=amd64,arm64
out=deploy/image/out
tag=""
while (($#)); do
	case $1 in
	--arch) arches=$2; shift 2 ;;
	--tag) tag=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) die "unknown argument $1 (usage: build.sh [--arch amd64,arm64] [--tag TAG] [--out DIR])" ;;
	esac
done
command -v buildah >/dev/null || die "buildah is not installed (Debian: apt-get install buildah)"
[[ -r /etc/ssl/certs/ca-certificates.crt ]] || die "no /etc/ssl/certs/ca-certificates.crt (Debian: apt-get install ca-certificates)"
[[ -d /usr/share/zoneinfo ]] || die "no /usr/share/zoneinfo (Debian: apt-get install tzdata)"

# What -ldflags stamps: the tag or commit (git describe), the revision and
# its commit time (so two builds of one commit stamp the same).
version=$(git describe --tags --always --dirty 2>/dev/null || echo unknown)
revision=$(git rev-parse HEAD 2>/dev/null || true)
committed=$(git log -1 --format=%cI 2>/dev/null || true)
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
[[ -n $tag ]] || tag=${version//+/-}
ldflags="-s -w -X main.buildVersion=$version -X main.buildRevision=$revision -X main.buildTime=$committed"

mkdir -p "$out"
list=localhost/praxa:$tag
buildah manifest rm "$list" >/dev/null 2>&1 || true
buildah manifest create "$list" >/dev/null
IFS=, read -ra archlist <<<"$arches"
for arch in "${archlist[@]}"; do
	bin=$out/praxa-linux-$arch
	log "building $bin ($version)"
	# -trimpath keeps the build cache's keys free of this clone's path.
	CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$bin" ./cmd/praxa
	# A static binary has no interpreter (a dynamic one names ld.so).
	if LC_ALL=C readelf -l "$bin" 2>/dev/null | grep -q 'Requesting program interpreter'; then
		die "$bin is not static"
	fi

	ctr=$(buildah from --arch "$arch" scratch)
	trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
	root=$(buildah mount "$ctr")
	install -D -m 0755 "$bin" "$root/praxa"
	install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
	mkdir -p "$root/usr/share"
	cp -a /usr/share/zoneinfo "$root/usr/share/zoneinfo"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/data:/sbin/nologin\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
	install -d -m 0700 -o 65532 -g 65532 "$root/data"
	buildah umount "$ctr" >/dev/null
	# The container's own network namespace is its boundary: the image
	# listens on every address of it (praxa serve alone listens on
	# loopback); run with --network=host, pass --addr 127.0.0.1:PORT.
	buildah config \
		--arch "$arch" --os linux \
		--user 65532:65532 \
		--workingdir /data \
		--env PRAXA_DATA_DIR=/data --env HOME=/data \
		--env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
		--volume /data \
		--port 8080/tcp \
		--entrypoint '["/praxa"]' \
		--cmd '["serve","--addr","0.0.0.0:8080"]' \
		--label org.opencontainers.image.title=praxa \
		--label org.opencontainers.image.version="$version" \
		--label org.opencontainers.image.revision="$revision" \
		--label org.opencontainers.image.created="$committed" \
		"$ctr"
	image=localhost/praxa:$tag-$arch
	buildah commit --quiet --squash --omit-history --timestamp "$epoch" --rm "$ctr" "$image" >/dev/null
	trap - EXIT
	buildah manifest add "$list" "$image" >/dev/null
	log "committed $image"
done
echo "$list"

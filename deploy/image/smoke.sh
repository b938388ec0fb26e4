#!/usr/bin/env bash
# Starts an image built by build.sh once and checks that it serves: praxa
# version names the stamped revision, then praxa serve --dev (on a fresh
# data volume, loopback only) answers /readyz with 200 and a praxec.query
# with the home answer, and stops cleanly on SIGTERM.
#
#   deploy/image/smoke.sh IMAGE          (e.g. localhost/praxa:TAG-amd64)
#
# It runs the image with podman run --network=host --read-only
# --read-only-tmpfs=false (no writable path but the /data volume, as in
# Kubernetes with readOnlyRootFilesystem). Where no OCI runtime of podman's
# can start a container on this machine (a sandbox that refuses its
# rlimits or cgroups), it runs the same root filesystem (buildah mount of
# the image) read-only under unshare and chroot, as the image's user, and
# says so. PRAXA_SMOKE=chroot forces that fallback.
set -euo pipefail

log() { echo "smoke: $*" >&2; }
die() {
	echo "smoke: $*" >&2
	exit 1
}

image=${1:?usage: smoke.sh IMAGE}
revision=$(buildah inspect --type image --format '{{index .OCIv1.Config.Labels "org.opencontainers.image.revision"}}' "$image")
work=$(mktemp -d)
data=$work/data
mkdir -p "$data"
chown 65532:65532 "$data"
chmod 0700 "$data"
pid=""
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[[ -n ${ctr:-} ]] && buildah rm "$ctr" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# podman's default rlimits (nofile 1048576) exceed what an unprivileged
# sandbox allows: ask for this shell's hard limit instead.
limits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
run=()
how=""
if [[ ${PRAXA_SMOKE:-} != chroot ]] && command -v podman >/dev/null; then
	for runtime in "" runc; do
		cmd=(podman)
		[[ -n $runtime ]] && cmd+=(--runtime "$runtime")
		cmd+=(run --rm --network=host --read-only --read-only-tmpfs=false "${limits[@]}" -v "$data:/data")
		if out=$("${cmd[@]}" "$image" version 2>&1); then
			run=("${cmd[@]}" "$image")
			how="podman${runtime:+ --runtime $runtime}"
			break
		fi
		log "podman${runtime:+ --runtime $runtime} cannot run a container here: $(tail -n 1 <<<"$out")"
	done
fi
if ((${#run[@]} == 0)); then
	# The same root filesystem, read-only, in a mount namespace of its own,
	# as 65532:65532 with the image's environment; /data bound writable.
	ctr=$(buildah from "$image")
	root=$(buildah mount "$ctr")
	mkdir -p "$root/dev" "$root/proc"
	touch "$root/dev/null"
	cat >"$work/chroot.sh" <<'SH'
set -e
root=$1 data=$2
shift 2
mount --bind "$root" "$root"
mount -o remount,bind,ro "$root"
mount --bind "$data" "$root/data"
mount --bind /dev/null "$root/dev/null"
mount -t proc proc "$root/proc"
cd /
chroot=$(command -v chroot)
exec env -i PRAXA_DATA_DIR=/data HOME=/data SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
	"$chroot" --userspec=65532:65532 "$root" /praxa "$@"
SH
	# unshare execs sh, which execs env, chroot and praxa: one process,
	# so a signal to it reaches praxa.
	run=(unshare --mount --propagation private sh "$work/chroot.sh" "$root" "$data")
	how="unshare and chroot of the image's root filesystem (read-only)"
	out=$("${run[@]}" version 2>&1) || die "the image's binary does not run under chroot: $out"
fi
log "running the image with $how"
log "praxa version: $out"
[[ $out == "praxa "*"revision $revision"* ]] || die "praxa version does not name the stamped revision $revision: $out"

"${run[@]}" serve --dev --addr 127.0.0.1:0 --data-dir /data >"$work/serve.log" 2>&1 &
pid=$!
url=""
for _ in $(seq 300); do
	url=$(sed -n 's/^praxa: listening on \([^ ]*\) .*/\1/p' "$work/serve.log")
	[[ -n $url ]] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
[[ -n $url ]] || die "praxa serve did not start; its log: $(cat "$work/serve.log")"
token=$(sed -n 's/^  export PRAXA_TOKEN=//p' "$work/serve.log")
[[ -n $token ]] || die "praxa serve --dev printed no token; its log: $(cat "$work/serve.log")"

code=$(curl -s -o "$work/readyz" -w '%{http_code}' "$url/readyz")
[[ $code == 200 ]] || die "GET /readyz answered $code: $(cat "$work/readyz")"
log "GET $url/readyz: $code $(head -c 200 "$work/readyz")"

code=$(curl -s -o "$work/query" -w '%{http_code}' -H "Authorization: Bearer $token" \
	-H 'Content-Type: application/json' -d '{}' "$url/v8/praxec/query")
[[ $code == 200 ]] || die "POST /v8/praxec/query answered $code: $(cat "$work/query")"
jq -e '.links | length > 0' "$work/query" >/dev/null || die "praxec.query's home answer has no links: $(cat "$work/query")"
log "POST $url/v8/praxec/query: $code, $(jq -c '[.links[].tool // .links[].rel] | unique' "$work/query" 2>/dev/null)"
[[ -f $data/praxa.db ]] || die "nothing written to the /data volume"

kill -TERM "$pid"
for _ in $(seq 300); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
	kill -KILL "$pid"
	die "praxa serve did not stop within 30 s of SIGTERM; its log: $(tail -n 20 "$work/serve.log")"
fi
rc=0
wait "$pid" || rc=$?
pid=""
((rc == 0)) || die "praxa serve exited $rc on SIGTERM; its log: $(tail -n 20 "$work/serve.log")"
log "stopped cleanly on SIGTERM"

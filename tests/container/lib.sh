# Shared by tests/container/*.sh (sourced): the image under test, podman's
# settings, the origin, and the nfsgw container in front of it.
#
# Environment:
#   NFSGW_IMAGE  an image to test as it is (e.g. localhost/nfsgw:latest from
#                scripts/build-image.sh); when unset, the test builds
#                localhost/nfsgw:test around NFSGW_BIN (the Dockerfile's
#                runtime-prebuilt target), which takes seconds once the base exists
#   NFSGW_BIN    the release nfsgw to put in that image (default: the one ctest
#                passes, else <repo>/build/nfsgw); not a sanitizer build: the
#                runtime image has no ASan runtime
#   KEEP=1       keep the run dir and the container after a pass
# Exit status: 0 pass, 1 fail, 77 skip (no podman, not root).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ctdir=$here  # tests/container (a kernel scenario's host half sets `here` to tests/kernel)
repo=$(cd "$here/../.." && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$repo/docker/podman/containers.conf}

log() { echo "[$(date +%T)] $*"; }
die() { log "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root (podman's storage, nfs-ganesha)"
command -v podman >/dev/null || skip "podman is missing (apt-get install podman buildah runc debootstrap slirp4netns)"
command -v slirp4netns >/dev/null || skip "slirp4netns is missing (the container reaches the loopback origin through it)"

# The image: the one given, or one built around the release nfsgw.
ensure_image() {
  if [ -n "${NFSGW_IMAGE:-}" ]; then
    podman image exists "$NFSGW_IMAGE" || die "NFSGW_IMAGE=$NFSGW_IMAGE does not exist (scripts/build-image.sh)"
    IMAGE=$NFSGW_IMAGE
    return
  fi
  local bin=${NFSGW_BIN:-${NFSGW_BIN_DEFAULT:-$repo/build/nfsgw}}
  [ -x "$bin" ] || skip "no nfsgw binary at $bin (set NFSGW_BIN or NFSGW_IMAGE)"
  if readelf -d "$bin" 2>/dev/null | grep -q 'libasan\|libubsan'; then
    die "$bin is a sanitizer build: the runtime image has no ASan runtime; give the release nfsgw (NFSGW_BIN=build/nfsgw)"
  fi
  IMAGE=localhost/nfsgw:test
  log "building $IMAGE around $bin (scripts/build-image.sh --prebuilt)"
  "$repo/scripts/build-image.sh" --prebuilt "$bin" --tag "$IMAGE" 2>&1 | tail -3
  [ "${PIPESTATUS[0]}" -eq 0 ] || die "the image did not build"
}

# start_origin NFS_PORT MOUNT_PORT: nfs-ganesha exporting $RUN/export.
start_origin() {
  pgrep -x rpcbind >/dev/null || { mkdir -p /run/rpcbind; rpcbind -w || rpcbind; }
  "$repo/scripts/origin-ganesha.sh" start "$RUN/origin" "$RUN/export" "$1" "$2" >/dev/null ||
    die "the origin did not start on $1/$2"
  ORIGIN_STARTED=1
}

# write_config NFS_ORIGIN_PORT MOUNT_ORIGIN_PORT [default-windows]: nfsgw.toml for the container,
# in $RUN/config (bind-mounted read-only at /etc/nfsgw). The container reaches
# the host's loopback, where the origin listens, as 10.0.2.2 (slirp4netns with
# allow_host_loopback). Long windows (unless "default-windows", as the kernel
# scenarios run nfsgw): the walk after a restart is answered from the cache alone.
# SERVER_EXTRA and EXPORT_EXTRA (lines) are added to [server] and the export.
write_config() {
  local windows='attr_ttl = "1h"
dir_ttl = "1h"
access_ttl = "1h"'
  [ "${3:-}" != default-windows ] || windows=
  mkdir -p "$RUN/config"
  cat >"$RUN/config/nfsgw.toml" <<TOML
[server]
listen = "0.0.0.0"
nfs_port = 2049
mount_port = 0
register_rpcbind = ${REGISTER_RPCBIND:-false}
threads = 2
${SERVER_EXTRA:-}

[cache]
dir = "/var/lib/nfsgw"
memory_mb = 128
metadata_max_gb = 1
data_max_gb = 1

[[export]]
path = "/export"
origin = "nfs://10.0.2.2$RUN/export?nfsport=$1&mountport=$2"
squash = "none"
$windows
${EXPORT_EXTRA:-}
TOML
  chmod 0644 "$RUN/config/nfsgw.toml"
}

# run_container NAME HOST_PORT VOLUME [PODMAN_ARGS...]: nfsgw as docker/Dockerfile's
# header runs it (no capabilities, no new privileges, read-only root, the netns
# sysctl for reserved source ports), the config and the cache on volumes, the NFS
# port published on 127.0.0.1:HOST_PORT; PODMAN_ARGS go before the image (the lock
# service's user, capabilities, ports and volume). Sets START_S (seconds to the
# first NFS answer).
run_container() {
  local name=$1 port=$2 volume=$3 t0
  shift 3
  t0=$(date +%s.%N)
  podman run -d --name "$name" \
    --network slirp4netns:allow_host_loopback=true \
    -p "127.0.0.1:$port:2049" \
    --sysctl net.ipv4.ip_unprivileged_port_start=0 \
    --cap-drop ALL --security-opt no-new-privileges --read-only \
    -v "$RUN/config/nfsgw.toml:/etc/nfsgw/nfsgw.toml:ro" \
    -v "$volume:/var/lib/nfsgw" \
    "$@" "$IMAGE" >/dev/null || die "podman run $name failed"
  local waited
  waited=$(python3 "$ctdir/helper.py" wait-nfs "$port" 60) ||
    { podman logs "$name" 2>&1 | tail -30; die "$name did not answer NFS on 127.0.0.1:$port"; }
  START_S=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  log "$name answers NFS on 127.0.0.1:$port ${START_S} s after podman run (probe loop: $waited s)"
}

# stats NAME: "ORIGIN_CALLS BLOCKS_FETCHED" from nfsgw stats --json in the container.
stats() {
  podman exec "$1" nfsgw stats --config /etc/nfsgw/nfsgw.toml --json | python3 "$ctdir/helper.py" origin-calls
}

#!/usr/bin/env bash
# The Linux kernel NFSv3 client under qemu against the nfsgw container, through
# its published port: one of tests/kernel's scenarios (default "ops"), run with
# that directory's own pieces unchanged (build-initramfs.sh, run-qemu.sh, the
# scenario's guest and host halves) but with the container in place of the
# nfsgw process tests/kernel/run-scenario.sh starts. The guest reaches the host's
# 127.0.0.1 as 10.0.2.2 (qemu user networking), where podman publishes nfsgw.
#
#   run-kernel-test.sh [SCENARIO] [NFSGW_BIN]
#
# Single-guest scenarios that do not move rpcbind's entries or stop nfsgw
# themselves: ops, tree, dd, php. Ports: origin 29030/29031, published 29040.
# Environment: lib.sh, and KERNEL_CACHE (the initramfs cache, shared with
# tests/kernel under its lock; default /tmp/kernel-cache).
scenario=${1:-ops}
NFSGW_BIN_DEFAULT=${2:-}
. "$(dirname "$0")/lib.sh"
kdir=$repo/tests/kernel
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is missing"
[ -f "$kdir/scenarios/$scenario.host.sh" ] || die "no kernel scenario $scenario"
ORIGIN_NFS=29030; ORIGIN_MNT=29031; PORT=29040
KERNEL_CACHE=${KERNEL_CACHE:-/tmp/kernel-cache}

RUN=$(mktemp -d /var/tmp/nfsgw-container-kernel.XXXXXX)
EXPORT_DIR=$RUN/export
mkdir -p "$EXPORT_DIR"
NAME=nfsgw-ckernel-$$
VOLUME=nfsgw-ckernel-cache-$$
ORIGIN_STARTED=0
status=1
# The scenario's defaults and hooks, as run-scenario.sh sets them.
GUEST_ROLES="single"; GUEST_TIMEOUT=120; GUEST_MEM=512; NEEDS_RPCBIND=0; GW_STOPPED_BY_SCENARIO=0
host_prepare() { :; }; host_verify() { :; }; guest_env() { :; }; host_cleanup() { :; }
cleanup() {
  host_cleanup || true
  if [ "$status" != 0 ] || [ "${KEEP:-0}" != 1 ]; then
    podman rm -f -t 5 "$NAME" >/dev/null 2>&1 || true
    podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  fi
  [ "$ORIGIN_STARTED" = 0 ] || "$repo/scripts/origin-ganesha.sh" stop "$RUN/origin" || true
  if [ "$status" = 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$RUN"; else echo "run dir kept: $RUN"; fi
}
trap cleanup EXIT
# The scenario's host half finds its guest programs under $here (tests/kernel).
here=$kdir
. "$kdir/scenarios/$scenario.host.sh"
[ "$GUEST_ROLES" = single ] && [ "$NEEDS_RPCBIND" = 0 ] && [ "$GW_STOPPED_BY_SCENARIO" = 0 ] ||
  die "scenario $scenario needs several guests, rpcbind or stops nfsgw itself: not run against the container"

ensure_image
mapfile -t built < <(flock "$KERNEL_CACHE.lock" "$kdir/build-initramfs.sh" "$KERNEL_CACHE")
BASE_CPIO=${built[0]:-}; KERNEL=${built[1]:-}
[ -f "$BASE_CPIO" ] && [ -f "$KERNEL" ] || die "tests/kernel/build-initramfs.sh gave no initramfs/kernel"

start_origin "$ORIGIN_NFS" "$ORIGIN_MNT"
host_prepare
write_config "$ORIGIN_NFS" "$ORIGIN_MNT" default-windows
podman volume create "$VOLUME" >/dev/null
run_container "$NAME" "$PORT" "$VOLUME"

{
  echo "SCENARIO=$scenario"; echo "SERVER=10.0.2.2"
  echo "NFS_PORT=$PORT"; echo "MOUNT_PORT=$PORT"
  echo "EXPORT_PATH=/export"; echo "GUEST_ROLE=single"
  guest_env single
} >"$RUN/env-single"
log "booting the $scenario guest against the container on 127.0.0.1:$PORT"
set +e
QEMU_PIDFILE=$RUN/qemu-single.pid "$kdir/run-qemu.sh" "$BASE_CPIO" "$KERNEL" "$RUN/env-single" \
  "$RUN/console-single" "$RUN/data-single" "$GUEST_TIMEOUT" "$GUEST_MEM" | sed -u 's/^/[single] /'
guest=${PIPESTATUS[0]}
set -e
podman logs "$NAME" >"$RUN/nfsgw.log" 2>&1 || true
[ "$(podman inspect --format '{{.State.Running}}' "$NAME")" = true ] ||
  { tail -30 "$RUN/nfsgw.log"; die "the nfsgw container exited during the scenario"; }
[ "$guest" = 0 ] || { tail -30 "$RUN/nfsgw.log"; die "the guest reported failure or did not finish (run-qemu.sh: $guest)"; }
log "guest passed; checking from the origin side"
host_verify || die "host-side verification failed"
podman stop -t 20 "$NAME" >/dev/null
code=$(podman inspect --format '{{.State.ExitCode}}' "$NAME")
[ "$code" = 0 ] || die "nfsgw exited $code on podman stop"
status=0
log "PASS: kernel $scenario against the container"

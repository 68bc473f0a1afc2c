#!/usr/bin/env bash
# Runs one kernel-client scenario end to end against one target:
#   origin  - the guest mounts nfs-ganesha directly (the control run)
#   gateway - the guest mounts nfsgw, which re-exports the same ganesha origin
#
#   run-scenario.sh origin|gateway SCENARIO
#
# Environment: NFSGW_BIN (default <repo>/build/nfsgw), KERNEL_CACHE (initramfs
# cache dir, default /tmp/kernel-cache), KEEP=1 keeps the run dir after success.
# Steps: build/reuse the initramfs, start the origin (and nfsgw), let the
# scenario's host half prepare the export, boot its guest(s), then let the host
# half check the results from the origin's side. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
target=${1:?origin|gateway}; scenario=${2:?scenario}
[ -f "$here/scenarios/$scenario.host.sh" ] || { echo "unknown scenario $scenario" >&2; exit 2; }
case "$target" in origin|gateway) ;; *) echo "target must be origin or gateway" >&2; exit 2 ;; esac

ORIGIN_NFS_PORT=24490
ORIGIN_MOUNT_PORT=24048
GW_PORT=24049
NFSGW_BIN=${NFSGW_BIN:-$repo/build/nfsgw}
KERNEL_CACHE=${KERNEL_CACHE:-/tmp/kernel-cache}

if [ "$target" = gateway ] && [ ! -x "$NFSGW_BIN" ]; then
  echo "SKIP: build/nfsgw missing ($NFSGW_BIN)"
  exit 77
fi

mapfile -t built < <(flock "$KERNEL_CACHE.lock" "$here/build-initramfs.sh" "$KERNEL_CACHE")
BASE_CPIO=${built[0]}; KERNEL=${built[1]}

RUN=$(mktemp -d "/tmp/kernel-run-$target-$scenario.XXXXXX")
EXPORT_DIR=$RUN/export
mkdir -p "$EXPORT_DIR"
gw_pid=
keeper_pid=
during_pid=
status=1
cleanup() {
  [ -z "$keeper_pid" ] || kill "$keeper_pid" 2>/dev/null || true
  [ -z "$during_pid" ] || kill "$during_pid" 2>/dev/null || true
  host_cleanup || true
  if [ -n "$gw_pid" ]; then
    kill "$gw_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$gw_pid" 2>/dev/null || true
  fi
  "$repo/scripts/origin-ganesha.sh" stop "$RUN/origin" || true
  if [ "$status" = 0 ] && [ "${KEEP:-0}" != 1 ]; then
    rm -rf "$RUN"
  else
    echo "run dir kept: $RUN"
  fi
}
trap cleanup EXIT

log() { echo "[$(date +%T)] $*"; }
die() { log "FAIL: $*"; exit 1; }

# Host helpers (host/*.c), built per run: a second or so.
for c in "$here"/host/*.c; do
  gcc -O2 -Wall -I/usr/include/tirpc -o "$RUN/$(basename "$c" .c)" "$c" -ltirpc || die "building $c"
done

# Defaults a scenario's host half may override.
GUEST_ROLES="single"
GUEST_TIMEOUT=120
GUEST_MEM=512
NEEDS_RPCBIND=0
# A scenario that stops nfsgw itself while the guest runs (failover) sets this.
GW_STOPPED_BY_SCENARIO=0
# Extra lines for the gateway's [[export]] section (writeback: writes = "back").
GW_EXPORT_EXTRA=
host_prepare() { :; }
host_verify() { :; }
guest_env() { :; }
# Optional: host_during runs in the background while the guests run (it sees
# gw_pid); host_cleanup runs on exit, whatever happened.
host_cleanup() { :; }
. "$here/scenarios/$scenario.host.sh"

# A stale server on our ports would answer in place of the one under test.
# A server from the previous test may still be shutting down: wait up to 15 s.
# An origin left by a run that was killed (ctest time-out: ganesha daemonizes,
# so it outlives the test) is stopped; its run dir says which it is.
stop_stale_origins() {
  local conf
  for conf in /tmp/kernel-run-*/origin/ganesha.conf; do
    [ -f "$conf" ] && [ "$conf" != "$RUN/origin/ganesha.conf" ] || continue
    grep -q "NFS_Port = $ORIGIN_NFS_PORT;" "$conf" || continue
    log "stopping a stale origin from $(dirname "$(dirname "$conf")")"
    "$repo/scripts/origin-ganesha.sh" stop "$(dirname "$conf")" || true
  done
}
for port in "$ORIGIN_NFS_PORT" "$GW_PORT"; do
  for i in $(seq 31); do
    "$RUN/rpc_ping" "$port" 100003 3 || break
    [ "$i" = 20 ] && [ "$port" = "$ORIGIN_NFS_PORT" ] && stop_stale_origins
    [ "$i" -lt 31 ] || die "port $port already answers NFS (a stale origin or nfsgw from an earlier run?)"
    sleep 0.5
  done
done

log "starting origin on $ORIGIN_NFS_PORT/$ORIGIN_MOUNT_PORT exporting $EXPORT_DIR"
"$repo/scripts/origin-ganesha.sh" start "$RUN/origin" "$EXPORT_DIR" "$ORIGIN_NFS_PORT" "$ORIGIN_MOUNT_PORT" \
  || die "origin did not start"
# origin-ganesha.sh's readiness probe (rpcinfo -n) can be answered through
# rpcbind by another server; make sure ours answers on its own ports.
for i in $(seq 100); do
  "$RUN/rpc_ping" "$ORIGIN_NFS_PORT" 100003 3 && "$RUN/rpc_ping" "$ORIGIN_MOUNT_PORT" 100005 3 && break
  [ "$i" -lt 100 ] || { tail -20 "$RUN/origin/ganesha.log"; die "origin does not answer on $ORIGIN_NFS_PORT/$ORIGIN_MOUNT_PORT"; }
  sleep 0.2
done
host_prepare

# rpcbind_port PROG VERS: the TCP port rpcbind maps PROG/VERS to on 127.0.0.1.
rpcbind_port() {
  rpcinfo -p 127.0.0.1 | awk -v p="$1" -v v="$2" '$1 == p && $2 == v && $3 == "tcp" { print $4; exit }'
}

if [ "$target" = origin ]; then
  NFS_PORT=$ORIGIN_NFS_PORT; MOUNT_PORT=$ORIGIN_MOUNT_PORT; EXPORT_PATH=$EXPORT_DIR
else
  NFS_PORT=$GW_PORT; MOUNT_PORT=$GW_PORT; EXPORT_PATH=/export
  register=false
  if [ "$NEEDS_RPCBIND" = 1 ]; then
    # Only one server can own rpcbind's NFS/MOUNT entries: take them from the
    # origin (which stays reachable on its explicit ports) and let nfsgw register.
    register=true
    rpcinfo -d 100003 3 2>/dev/null || true
    rpcinfo -d 100005 3 2>/dev/null || true
    rpcinfo -d 100005 1 2>/dev/null || true
  fi
  mkdir -p "$RUN/gw/cache"
  cat > "$RUN/gw/nfsgw.toml" <<TOML
[server]
listen = "127.0.0.1"
nfs_port = $GW_PORT
mount_port = 0
register_rpcbind = $register
threads = 2

[cache]
dir = "$RUN/gw/cache"

[[export]]
path = "/export"
origin = "nfs://127.0.0.1$EXPORT_DIR?nfsport=$ORIGIN_NFS_PORT&mountport=$ORIGIN_MOUNT_PORT"
squash = "none"
$GW_EXPORT_EXTRA
TOML
  log "starting nfsgw on $GW_PORT"
  "$NFSGW_BIN" --config "$RUN/gw/nfsgw.toml" > "$RUN/gw/nfsgw.log" 2>&1 &
  gw_pid=$!
  ready=0
  for _ in $(seq 300); do
    kill -0 "$gw_pid" 2>/dev/null || break
    if "$RUN/rpc_ping" "$GW_PORT" 100003 3 && "$RUN/rpc_ping" "$GW_PORT" 100005 3; then ready=1; break; fi
    sleep 0.1
  done
  if [ "$ready" != 1 ]; then tail -50 "$RUN/gw/nfsgw.log"; die "nfsgw did not answer NFS and MOUNT on $GW_PORT"; fi
fi

if [ "$NEEDS_RPCBIND" = 1 ]; then
  if [ "$target" = gateway ]; then
    # nfsgw must have registered itself (the entries were deleted before it
    # started); give it 5 s after it first answered.
    for i in $(seq 25); do
      [ "$(rpcbind_port 100003 3)" = "$NFS_PORT" ] && [ "$(rpcbind_port 100005 3)" = "$MOUNT_PORT" ] && break
      [ "$i" -lt 25 ] || die "nfsgw did not register with rpcbind (NFSv3/MOUNTv3 map to '$(rpcbind_port 100003 3)/$(rpcbind_port 100005 3)')"
      sleep 0.2
    done
  fi
  # Other engineers' ganesha instances on this host register and unregister as
  # they start and stop: keep the entries on the server under test (for the
  # origin this also restores its own registration) while the guest runs.
  "$RUN/rpcb_claim" "$NFS_PORT" "$MOUNT_PORT" --keep $((GUEST_TIMEOUT + 30)) &
  keeper_pid=$!
  for i in $(seq 25); do
    [ "$(rpcbind_port 100003 3)" = "$NFS_PORT" ] && [ "$(rpcbind_port 100005 3)" = "$MOUNT_PORT" ] && break
    [ "$i" -lt 25 ] || die "rpcbind maps NFSv3/MOUNTv3 to '$(rpcbind_port 100003 3)/$(rpcbind_port 100005 3)', not $NFS_PORT/$MOUNT_PORT"
    sleep 0.2
  done
fi

# Boot the guest(s); several roles boot at the same time, their consoles
# prefixed with the role name.
boot_guest() {
  local role=$1
  QEMU_PIDFILE=$RUN/qemu-$role.pid \
    "$here/run-qemu.sh" "$BASE_CPIO" "$KERNEL" "$RUN/env-$role" "$RUN/console-$role" "$RUN/data-$role" \
    "$GUEST_TIMEOUT" "$GUEST_MEM" | sed -u "s/^/[$role] /"
  return "${PIPESTATUS[0]}"
}
pids=()
for role in $GUEST_ROLES; do
  {
    echo "SCENARIO=$scenario"; echo "SERVER=10.0.2.2"
    echo "NFS_PORT=$NFS_PORT"; echo "MOUNT_PORT=$MOUNT_PORT"
    echo "EXPORT_PATH=$EXPORT_PATH"; echo "GUEST_ROLE=$role"
    guest_env "$role"
  } > "$RUN/env-$role"
  log "booting guest $role"
  boot_guest "$role" &
  pids+=($!)
done
if declare -F host_during >/dev/null; then
  host_during > "$RUN/host-during.log" 2>&1 &
  during_pid=$!
fi
# Guests mount "hard": if nfsgw dies they would hang until their time-out, so
# stop them as soon as the gateway is gone.
if [ -n "$gw_pid" ] && [ "$GW_STOPPED_BY_SCENARIO" != 1 ]; then
  while :; do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break
    if ! kill -0 "$gw_pid" 2>/dev/null; then
      log "nfsgw exited while the guest(s) ran; stopping them"
      for f in "$RUN"/qemu-*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
      break
    fi
    sleep 1
  done
fi
guest_fail=0
for p in "${pids[@]}"; do wait "$p" || guest_fail=1; done
if [ -n "$keeper_pid" ]; then kill "$keeper_pid" 2>/dev/null || true; keeper_pid=; fi
if [ -n "$during_pid" ]; then
  wait "$during_pid" || { cat "$RUN/host-during.log"; die "the scenario's host_during failed"; }
  during_pid=
  cat "$RUN/host-during.log"
fi
if [ "$target" = gateway ] && [ "$GW_STOPPED_BY_SCENARIO" != 1 ] && ! kill -0 "$gw_pid" 2>/dev/null; then
  tail -50 "$RUN/gw/nfsgw.log"; die "nfsgw exited during the scenario"
fi
[ "$guest_fail" = 0 ] || { [ -n "$gw_pid" ] && tail -30 "$RUN/gw/nfsgw.log"; die "guest reported failure or did not finish"; }

log "guest(s) passed; checking from the origin side"
host_verify || die "host-side verification failed"
status=0
log "PASS: $target $scenario"

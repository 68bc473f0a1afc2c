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

# A scenario whose host half has the line KERNEL_NETNS=1 (locks) runs in a
# network and mount namespace of its own: its rpcbind, rpc.statd, origin, nfsgw
# and guests see no other test's (a shared rpcbind holds one NLM entry, 100021,
# for the whole host, and every ganesha with NLM and every nfsgw takes it), and
# it needs none of the fixed ports. The guests are on a bridge (tap devices), each
# with its own address, so that the servers tell them apart and can call them
# back (NLM_GRANTED, found through the guest's rpcbind). See netns_setup below.
KERNEL_NETNS=0
grep -q '^KERNEL_NETNS=1' "$here/scenarios/$scenario.host.sh" && KERNEL_NETNS=1
if [ "$KERNEL_NETNS" = 1 ] && [ -z "${NFSGW_KERNEL_NETNS_INSIDE:-}" ]; then
  exec unshare --net --mount --propagation private -- env NFSGW_KERNEL_NETNS_INSIDE=1 bash "$0" "$@"
fi

ORIGIN_NFS_PORT=24490
ORIGIN_MOUNT_PORT=24048
GW_PORT=24049
if [ "$KERNEL_NETNS" = 1 ]; then
  # Not this suite's fixed ports: a run outside the namespace that finds its
  # port busy stops the origins of /tmp/kernel-run-* configured on it.
  ORIGIN_NFS_PORT=2049
  ORIGIN_MOUNT_PORT=20048
  GW_PORT=3049
fi
# NLM ports in the namespace: the origin's (when the scenario asks for an origin
# with NLM) and nfsgw's (when it asks for nfsgw's NLM service).
ORIGIN_NLM_PORT_NS=4045
GW_NLM_PORT=4046
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
ns_pids=
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
  # The namespace's rpcbind and statd (the namespace goes with its last process).
  local p
  for p in $ns_pids; do kill "$p" 2>/dev/null || true; done
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
# ORIGIN_NLM=1: the origin serves NLM (origin-ganesha.sh with ORIGIN_NLM_PORT;
# namespace scenarios only). GW_NLM=1: nfsgw serves NLM ([server] nlm_port,
# registered with the namespace's rpcbind).
ORIGIN_NLM=0
GW_NLM=0
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
# guest_slot ROLE: the network slot (address, tap device, MAC, host name) of a
# guest role in a namespace scenario; a guest booted again as another role
# (locks: a2 is a after its reboot) keeps its slot. guest_qemu ROLE: extra qemu
# arguments (a disk).
guest_slot() { echo "$1"; }
guest_qemu() { :; }
. "$here/scenarios/$scenario.host.sh"

# slot_index SLOT: a -> 0, b -> 1, ... (addresses 10.0.2.15 + index).
slot_index() { printf '%d' "$(( $(printf '%d' "'$1") - 97 ))"; }

# netns_setup: inside the fresh namespaces: loopback; a private /run (rpcbind's
# socket /run/rpcbind.sock and statd's pid file are paths, shared with the host
# otherwise; the mount namespace keeps ours there); /etc/hosts naming the guests
# (statd and the servers resolve the guests' caller names); a bridge br0 with
# the host's address 10.0.2.2, where the guests' calls to 10.0.2.2 are sent on to
# 127.0.0.1 (the servers listen on loopback; route_localnet lets the bridge's
# packets reach it); rpcbind; rpc.statd with its state in the run dir.
netns_setup() {
  ip link set lo up
  mount -t tmpfs -o mode=0755 nfsgw-kernel-run /run
  mkdir -p /run/rpcbind /run/lock
  chown _rpc /run/rpcbind 2>/dev/null || true
  # (the host's own name too: statd and nfsgw resolve it, as /etc/hosts does)
  { echo "127.0.0.1 localhost $(hostname)"; echo "10.0.2.2 nfs-server"
    local c
    for c in a b c d; do echo "10.0.2.$((15 + $(slot_index $c))) guest-$c"; done
  } > "$RUN/hosts"
  mount --bind "$RUN/hosts" /etc/hosts
  ip link add br0 type bridge
  ip addr add 10.0.2.2/24 dev br0
  ip link set br0 up
  sysctl -q -w net.ipv4.conf.all.route_localnet=1 net.ipv4.conf.br0.route_localnet=1
  iptables -t nat -A PREROUTING -i br0 -d 10.0.2.2 -j DNAT --to-destination 127.0.0.1
  # The servers' own calls to a guest (NLM_GRANTED, rpcbind lookups) leave from
  # their loopback address: they go out as 10.0.2.2.
  iptables -t nat -A POSTROUTING -o br0 -s 127.0.0.0/8 -j SNAT --to-source 10.0.2.2
  rpcbind -f -w > "$RUN/rpcbind.log" 2>&1 &
  ns_pids="$ns_pids $!"
  local i
  for i in $(seq 50); do
    rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break
    [ "$i" -lt 50 ] || die "the namespace's rpcbind did not start: $(cat "$RUN/rpcbind.log")"
    sleep 0.1
  done
  mkdir -p "$RUN/statd/sm" "$RUN/statd/sm.bak"
  # -L: no sm-notify at its start (this host did not reboot); -d: log to stderr.
  rpc.statd -F -L -d -P "$RUN/statd" > "$RUN/statd.log" 2>&1 &
  ns_pids="$ns_pids $!"
  for i in $(seq 50); do
    rpcinfo -T tcp 127.0.0.1 100024 1 >/dev/null 2>&1 && break
    [ "$i" -lt 50 ] || die "the namespace's rpc.statd did not start: $(cat "$RUN/statd.log")"
    sleep 0.1
  done
  log "network namespace: br0 10.0.2.2 -> 127.0.0.1, rpcbind and rpc.statd (state in $RUN/statd)"
}
# netns_guest_net ROLE: creates the slot's tap device once and prints qemu's
# network arguments for it.
netns_guest_net() {
  local slot idx tap mac
  slot=$(guest_slot "$1"); idx=$(slot_index "$slot"); tap=tap-$slot
  mac=$(printf '52:54:00:12:34:%02x' $((0x56 + idx)))
  if ! ip link show "$tap" >/dev/null 2>&1; then
    ip tuntap add dev "$tap" mode tap
    ip link set "$tap" master br0
    ip link set "$tap" up
  fi
  echo "-netdev tap,id=n0,ifname=$tap,script=no,downscript=no -device virtio-net-pci,netdev=n0,romfile=,mac=$mac"
}
[ "$KERNEL_NETNS" = 1 ] && netns_setup

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
origin_nlm_port=0
if [ "$ORIGIN_NLM" = 1 ]; then
  [ "$KERNEL_NETNS" = 1 ] || die "ORIGIN_NLM=1 needs KERNEL_NETNS=1 (the origin's NLM takes rpcbind's 100021 entry)"
  origin_nlm_port=$ORIGIN_NLM_PORT_NS
  log "the origin serves NLM on $origin_nlm_port"
fi
ORIGIN_NLM_PORT=$origin_nlm_port "$repo/scripts/origin-ganesha.sh" start "$RUN/origin" "$EXPORT_DIR" \
  "$ORIGIN_NFS_PORT" "$ORIGIN_MOUNT_PORT" || die "origin did not start"
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
  nlm_line=
  if [ "$GW_NLM" = 1 ]; then
    [ "$KERNEL_NETNS" = 1 ] || die "GW_NLM=1 needs KERNEL_NETNS=1"
    # The guests' lockd finds nfsgw's NLM through rpcbind: nfsgw registers, in
    # place of the origin (which the guests never mount here).
    register=true
    # GW_NLM_GRACE: nfsgw's grace period after its start (default 0: this
    # scenario starts nfsgw afresh, there is nothing to reclaim).
    nlm_line="nlm_port = $GW_NLM_PORT
nlm_grace = \"${GW_NLM_GRACE:-0}\""
    for prog in "100003 3" "100005 3" "100005 1" "100021 1" "100021 3" "100021 4"; do
      rpcinfo -d $prog 2>/dev/null || true
    done
  fi
  # The origin's NLM port, explicit: rpcbind's 100021 entry is nfsgw's here.
  origin_nlm_line=
  [ "$GW_NLM" != 1 ] || [ "$ORIGIN_NLM" != 1 ] || origin_nlm_line="origin_nlm_port = $origin_nlm_port"
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
$nlm_line

[cache]
dir = "$RUN/gw/cache"

[[export]]
path = "/export"
origin = "nfs://127.0.0.1$EXPORT_DIR?nfsport=$ORIGIN_NFS_PORT&mountport=$ORIGIN_MOUNT_PORT"
squash = "none"
$GW_EXPORT_EXTRA
$origin_nlm_line
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
# write_guest_env ROLE: the guest's /run.env.
write_guest_env() {
  local role=$1 slot
  {
    echo "SCENARIO=$scenario"; echo "SERVER=10.0.2.2"
    echo "NFS_PORT=$NFS_PORT"; echo "MOUNT_PORT=$MOUNT_PORT"
    echo "EXPORT_PATH=$EXPORT_PATH"; echo "GUEST_ROLE=$role"
    if [ "$KERNEL_NETNS" = 1 ]; then
      slot=$(guest_slot "$role")
      echo "GUEST_IP=10.0.2.$((15 + $(slot_index "$slot")))"; echo "GUEST_HOSTNAME=guest-$slot"
    fi
    guest_env "$role"
  } > "$RUN/env-$role"
}
# boot_guest ROLE: boots one guest (its env file written first); a scenario's
# host_during may boot one too (locks: the killed guest booted again).
boot_guest() {
  local role=$1 net=
  [ "$KERNEL_NETNS" != 1 ] || net=$(netns_guest_net "$role")
  QEMU_PIDFILE=$RUN/qemu-$role.pid QEMU_NET=$net QEMU_EXTRA=$(guest_qemu "$role") \
    "$here/run-qemu.sh" "$BASE_CPIO" "$KERNEL" "$RUN/env-$role" "$RUN/console-$role" "$RUN/data-$role" \
    "$GUEST_TIMEOUT" "$GUEST_MEM" | sed -u "s/^/[$role] /"
  return "${PIPESTATUS[0]}"
}
pids=()
roles=()
for role in $GUEST_ROLES; do
  write_guest_env "$role"
  log "booting guest $role"
  boot_guest "$role" &
  pids+=($!)
  roles+=("$role")
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
# A guest the scenario killed on purpose (locks) has RUN/killed-ROLE: no marker
# is expected from it.
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || [ -f "$RUN/killed-${roles[$i]}" ] || guest_fail=1
done
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

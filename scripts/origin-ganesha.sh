#!/usr/bin/env bash
# Starts or stops a loopback NFS origin: nfs-ganesha with its VFS FSAL, exporting one
# folder. Used by the demo, the integration tests and the kernel-client tests.
#
#   scripts/origin-ganesha.sh start STATE_DIR EXPORT_DIR [NFS_PORT] [MOUNT_PORT] [PSEUDO]
#   scripts/origin-ganesha.sh stop  STATE_DIR
#
# Listens on 127.0.0.1 only. Starts rpcbind first when it is not running (ganesha
# will not listen without it). Waits until the NFS port answers, at most 60 s.
#
# The origin's lock manager (NLM v4) is off unless ORIGIN_NLM_PORT=N is set: then
# ganesha serves NLM on port N (Enable_NLM = true) and rpc.statd is started first
# when it is not running (ganesha's NLM monitors its lock clients through the
# host's statd, SM_MON on localhost, and answers no lock without it). With NLM on:
#   - ganesha registers 100021 (NLM) with the host's rpcbind, and so does every
#     other ganesha started with NLM: the last one wins. Tests that may run beside
#     other origins must use the explicit NLM port, never rpcbind, to reach theirs;
#     and statd's SM_NOTIFY callback (a client or nfsgw restarted) goes to whichever
#     ganesha holds the rpcbind entry.
#   - NSM_Use_Caller_Name = true (ORIGIN_NSM_USE_CALLER_NAME=false gives ganesha's
#     default): statd monitors each lock client under its NLM caller_name, not its
#     address, so two clients (two nfsgw) on one loopback address are two hosts,
#     and an SM_NOTIFY naming one drops only that one's locks. rpc.statd refuses
#     to monitor (SM_MON) a name it cannot resolve, and ganesha then answers the
#     LOCK NLM4_DENIED_NOLOCKS: a caller name must resolve on this host, or be an
#     address (tests use 127.x.y.z names). ganesha monitors a caller name at its
#     first lock and unmonitors it at its last unlock (statd writes and syncs a
#     file each time; seen taking over 2 s under load).
#   - No grace period at start (NFSV4 Graceless = true, as without NLM): a LOCK is
#     granted at once, never NLM4_DENIED_GRACE_PERIOD. ORIGIN_GRACE_PERIOD=S gives
#     a grace period of S seconds instead (Graceless = false, Grace_Period = S,
#     Lease_Lifetime = S capped to 1..180): only reclaims are granted for S seconds
#     after the start, for tests of reclaim after an origin restart (the config
#     is written as described; the refusal of non-reclaims in it is not yet
#     checked by a test).
set -euo pipefail

cmd=${1:?start|stop}
state=${2:?state dir}

services="$(dirname "$0")/host-services.sh"  # starts daemons without fd 9, the start lock

case "$cmd" in
start)
  export_dir=${3:?export dir}
  nfs_port=${4:-20490}
  mount_port=${5:-20048}
  pseudo=${6:-/export}
  mkdir -p "$state" "$export_dir"
  state=$(cd "$state" && pwd); export_dir=$(cd "$export_dir" && pwd)
  if [ -f "$state/ganesha.pid" ] && kill -0 "$(cat "$state/ganesha.pid")" 2>/dev/null; then
    echo "origin already running (pid $(cat "$state/ganesha.pid"))"; exit 0
  fi
  # One ganesha starts at a time on this machine: each registers its programs with
  # rpcbind as it starts, and two starting at once (integration tests two at a time,
  # CI's lanes side by side) left one registering for ever ("Cannot register NFS V3
  # on UDP" and no listener after 90 s). The lock is held until this one listens;
  # the daemon itself does not inherit it (9>&- below).
  exec 9>/tmp/nfsgw-origin-start.lock
  flock -w 300 9 || { echo "another origin held the start lock for 300 s" >&2; exit 1; }
  bash "$services" rpcbind
  mkdir -p "$state/recovery"
  nlm_port=${ORIGIN_NLM_PORT:-0}
  enable_nlm=false
  nlm_extra=""
  if [ "$nlm_port" != 0 ]; then
    enable_nlm=true
    nlm_extra="NSM_Use_Caller_Name = ${ORIGIN_NSM_USE_CALLER_NAME:-true};"
    bash "$services" statd || { echo "cannot start rpc.statd (needed by ganesha's NLM)" >&2; exit 1; }
  fi
  grace="Graceless = true;"
  if [ -n "${ORIGIN_GRACE_PERIOD:-}" ]; then
    lease=$ORIGIN_GRACE_PERIOD
    [ "$lease" -ge 1 ] || lease=1
    [ "$lease" -le 180 ] || lease=180
    grace="Graceless = false; Grace_Period = $ORIGIN_GRACE_PERIOD; Lease_Lifetime = $lease;"
  fi
  cat > "$state/ganesha.conf" <<CONF
NFS_CORE_PARAM {
  Protocols = 3;
  NFS_Port = $nfs_port;
  MNT_Port = $mount_port;
  NLM_Port = $nlm_port;
  Rquota_Port = 0;
  Enable_NLM = $enable_nlm;
  $nlm_extra
  Enable_RQUOTA = false;
  Bind_addr = 127.0.0.1;
}
NFS_KRB5 { Active_krb5 = false; }
NFSV4 {
  RecoveryRoot = "$state/recovery";
  $grace
}
EXPORT_DEFAULTS {
  Squash = No_Root_Squash;
}
EXPORT {
  Export_Id = 1;
  Path = "$export_dir";
  Pseudo = "$pseudo";
  Access_Type = RW;
  Squash = No_Root_Squash;
  Protocols = 3;
  Transports = TCP;
  SecType = sys;
  FSAL { Name = VFS; }
}
LOG {
  Default_Log_Level = WARN;
}
CONF
  ganesha.nfsd -f "$state/ganesha.conf" -L "$state/ganesha.log" -p "$state/ganesha.pid" -N NIV_WARN 9>&-
  # Ready when our own ganesha is alive and accepts TCP on both its ports (rpcinfo
  # can be answered through rpcbind by another registered server, so it is no proof).
  for _ in $(seq 600); do
    pid=$(cat "$state/ganesha.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
       (exec 3<>"/dev/tcp/127.0.0.1/$nfs_port") 2>/dev/null &&
       (exec 3<>"/dev/tcp/127.0.0.1/$mount_port") 2>/dev/null &&
       { [ "$nlm_port" = 0 ] || (exec 3<>"/dev/tcp/127.0.0.1/$nlm_port") 2>/dev/null; }; then
      echo "origin ready: nfs://127.0.0.1$export_dir?nfsport=$nfs_port&mountport=$mount_port"
      [ "$nlm_port" = 0 ] || echo "origin NLM on 127.0.0.1:$nlm_port"
      exit 0
    fi
    sleep 0.1
  done
  echo "origin did not start; log:" >&2; tail -50 "$state/ganesha.log" >&2; exit 1
  ;;
stop)
  if [ -f "$state/ganesha.pid" ]; then
    pid=$(cat "$state/ganesha.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$state/ganesha.pid"
  fi
  ;;
*) echo "usage: $0 start|stop STATE_DIR ..." >&2; exit 2 ;;
esac

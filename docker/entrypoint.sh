#!/bin/bash
# The image's entry point (/usr/local/bin/nfsgw-entrypoint): runs nfsgw, and
# first, when its config serves locks ([server] nlm_port set), the two host
# services NLM needs in nfsgw's network namespace: rpcbind (nfsgw registers its
# NLM and statd's callback there) and rpc.statd (SM_MON of client hosts; it
# calls nfsgw back over UDP on 127.0.0.1). docker/README.md, "Locks".
#
# - Each is started only when it does not already answer on 127.0.0.1 (rpcbind
#   on 111, statd registered as 100024): with --network host, or beside a pod's
#   other container, the ones already there are used and none is started.
# - Starting them needs root: rpcbind refuses to start as any other user, and
#   statd must change its own user and capabilities. Run the container as
#   `--user 0` with the capabilities they use (SETUID SETGID SETPCAP CHOWN
#   DAC_OVERRIDE NET_BIND_SERVICE); both drop to their own users at once (_rpc,
#   statd) and keep none but statd's NET_BIND_SERVICE.
#   nfsgw itself is then started as uid 10001 with no capability (empty
#   bounding set) and no_new_privs, exactly as without locks.
# - statd's state (its NSM state number, the hosts it monitors) is
#   /var/lib/nfs: put it on a volume, so that a new container's statd moves the
#   state on (3, 5, 7, ...) instead of starting again at 3.
# - Without locks, or when the arguments are a subcommand (`stats`, ...),
#   nothing is started: nfsgw runs at once (as uid 10001 when started as root).
set -euo pipefail

NFSGW=/usr/local/bin/nfsgw
NFSGW_UID=10001

say() { echo "nfsgw-entrypoint: $*" >&2; }

# nfsgw, as uid 10001 with no capability when this runs as root.
run_nfsgw() {
  if [ "$(id -u)" = 0 ]; then
    exec setpriv --reuid="$NFSGW_UID" --regid="$NFSGW_UID" --clear-groups \
      --inh-caps=-all --bounding-set=-all --no-new-privs -- "$NFSGW" "$@"
  fi
  exec "$NFSGW" "$@"
}

# The config nfsgw will read: the value of --config/-c, else the image's default.
config=/etc/nfsgw/nfsgw.toml
serving=0
case "${1:-}" in --config|-c|--config=*|"") serving=1 ;; esac
[ "$serving" = 1 ] || run_nfsgw "$@"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --config|-c) config=${args[i + 1]:-$config} ;;
    --config=*) config=${args[i]#--config=} ;;
  esac
done

# [server] nlm_port of the config (0 when absent): nfsgw itself checks the file;
# this only decides whether the lock services are needed.
nlm_port=$(awk '
  /^[ \t]*\[/ { sub(/#.*/, ""); gsub(/[ \t]/, ""); section = $0; next }
  section == "[server]" && /^[ \t]*nlm_port[ \t]*=/ {
    sub(/#.*/, ""); sub(/^[^=]*=[ \t]*/, ""); gsub(/[ \t]/, ""); print; exit }' "$config" 2>/dev/null || true)
case "${nlm_port:-0}" in ''|0) run_nfsgw "$@" ;; esac

registered() { rpcinfo -T tcp 127.0.0.1 "$1" "$2" >/dev/null 2>&1; }
wait_for() {  # program version what
  for _ in $(seq 50); do registered "$1" "$2" && return 0; sleep 0.1; done
  say "$3 is not registered with rpcbind on 127.0.0.1 after 5 s"
  exit 1
}
need_root() {
  [ "$(id -u)" = 0 ] && return 0
  say "[server] nlm_port = $nlm_port needs $1 in nfsgw's network namespace, and none answers on 127.0.0.1."
  say "Run the container with --user 0 --cap-add SETUID,SETGID,SETPCAP,CHOWN,DAC_OVERRIDE,NET_BIND_SERVICE (this entry point"
  say "starts rpcbind and rpc.statd, then nfsgw as uid $NFSGW_UID without capabilities), or with --network host"
  say "on a host that runs its own rpcbind and rpc.statd (Debian: rpcbind, nfs-common). docker/README.md, \"Locks\"."
  exit 1
}

if registered 100000 2; then
  say "rpcbind answers on 127.0.0.1: using it"
else
  need_root rpcbind
  rpcbind -w || { say "rpcbind did not start"; exit 1; }
  wait_for 100000 2 rpcbind
  say "rpcbind started"
fi
if registered 100024 1; then
  say "rpc.statd answers on 127.0.0.1: using it"
else
  need_root rpc.statd
  # Without -L statd runs sm-notify first, as a host's boot does: it moves the
  # NSM state on (statd alone never does) and tells the hosts a killed container
  # left in its list. nfsgw also tells its own clients and origins that it
  # restarted, under the names they know it by (docs/design.md, "Byte-range
  # locks"): a client told twice reclaims twice, which nfsgw grants alike.
  rpc.statd || { say "rpc.statd did not start: is /var/lib/nfs a writable volume?"; exit 1; }
  wait_for 100024 1 rpc.statd
  say "rpc.statd started (state $(od -An -tu4 /var/lib/nfs/state 2>/dev/null | tr -d ' ' || echo '?'), in /var/lib/nfs)"
fi
run_nfsgw "$@"

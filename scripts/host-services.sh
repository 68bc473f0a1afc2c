#!/usr/bin/env bash
# Starts the host's RPC services that nfsgw, its tests and the demo origin lean on,
# each only when it does not already answer on 127.0.0.1:
#
#   scripts/host-services.sh rpcbind   rpcbind (ganesha will not listen without it)
#   scripts/host-services.sh statd     rpcbind, then rpc.statd (nfs-common): the NSM
#                                      monitor of ganesha's NLM and of nfsgw's lock
#                                      service ([server] nlm_port)
#
# "Answers" means registered with rpcbind, not "a process of that name runs": a
# statd whose registration a restarted rpcbind lost gets a new one beside it. Each waits at
# most 5 s for the registration and exits 1, with a line saying why, without it.
# Daemons are started with fd 9 closed (callers hold a start lock on it).
set -euo pipefail

registered() { rpcinfo -T tcp 127.0.0.1 "$1" "$2" >/dev/null 2>&1; }

wait_for() {  # program version what
  for _ in $(seq 50); do registered "$1" "$2" && return 0; sleep 0.1; done
  echo "host-services: $3 is not registered with rpcbind at 127.0.0.1 after 5 s" >&2
  return 1
}

ensure_rpcbind() {
  rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && return 0
  mkdir -p /run/rpcbind
  rpcbind -w 9>&- || rpcbind 9>&- || true
  wait_for 100000 2 rpcbind
}

ensure_statd() {
  ensure_rpcbind
  registered 100024 1 && return 0
  # Started even when a process named rpc.statd runs: it may be one of another
  # network namespace's (tests/kernel's locks scenario), or one whose registration a
  # restarted rpcbind lost. None is killed here.
  rpc.statd 9>&- || { echo "host-services: rpc.statd did not start" >&2; return 1; }
  wait_for 100024 1 rpc.statd
}

case "${1:?rpcbind|statd}" in
rpcbind) ensure_rpcbind ;;
statd) ensure_statd ;;
*) echo "usage: $0 rpcbind|statd" >&2; exit 2 ;;
esac

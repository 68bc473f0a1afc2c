#!/usr/bin/env bash
# Runs nfsgw in front of a loopback demo origin on a fresh Debian 12 machine, as root:
# installs the packages, builds, starts rpcbind and rpc.statd, nfs-ganesha exporting
# a sample folder with its lock manager (NLM) on, and nfsgw in front of it with its
# lock service on (nlm_port); lists the export through nfsgw, and takes a lock
# through nfsgw's NLM to show it held at the origin. nfsgw then keeps serving in the
# foreground until Ctrl-C; clients may mount :/export (NFSv3, TCP, port 2049, MOUNT
# on the same port) and lock files (no `nolock`).
#
# Environment: NFSGW_PORT (2049), NFSGW_NLM_PORT (4045), NFSGW_DEMO_LISTEN
# (127.0.0.1; 0.0.0.0 lets other machines mount it), NFSGW_DEMO_CLIENTS (the
# export's `clients`, 127.0.0.0/8), NFSGW_DEMO_DIR (/tmp/nfsgw-demo),
# NFSGW_BUILD_DIR (build), NFSGW_DEMO_ONESHOT=1 (stop after the checks).
#
# rpcbind: kernel clients find NLM only through rpcbind at the address they mount
# (Linux has no mount option for its port), so nfsgw registers NFS, MOUNT and NLM
# over TCP in place of the origin's entries, which are deleted (the origin stays
# reachable on its explicit ports). The origin keeps NLM over UDP, where this
# host's statd calls its lock manager back.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if [ "$(id -u)" -ne 0 ]; then echo "scripts/demo.sh must run as root" >&2; exit 1; fi

PORT=${NFSGW_PORT:-2049}
NLM_PORT=${NFSGW_NLM_PORT:-4045}
ORIGIN_NLM=20021
LISTEN=${NFSGW_DEMO_LISTEN:-127.0.0.1}
CLIENTS=${NFSGW_DEMO_CLIENTS:-127.0.0.0/8}
work=${NFSGW_DEMO_DIR:-/tmp/nfsgw-demo}
build=${NFSGW_BUILD_DIR:-build}

bash scripts/install-deps.sh
BUILD_DIR=$build TARGETS=nfsgw bash scripts/build.sh
bash scripts/host-services.sh statd   # rpcbind, then rpc.statd: NLM's status monitor

mkdir -p "$work/origin/docs" "$work/origin/src/lib" "$work/cache"
echo "Hello through nfsgw" > "$work/origin/README.txt"
for i in 1 2 3; do echo "page $i" > "$work/origin/docs/page$i.txt"; done
printf '<?php echo "hi";\n' > "$work/origin/src/index.php"
printf '<?php // lib\n' > "$work/origin/src/lib/util.php"

chmod 0666 "$work/origin/README.txt"   # the file the lock check locks

url=$(ORIGIN_NLM_PORT=$ORIGIN_NLM scripts/origin-ganesha.sh start "$work/ganesha" "$work/origin" 20490 20048 |
      sed -n 's/^origin ready: //p')
# rpcbind's TCP entries of NFS, MOUNT and NLM become nfsgw's (see the header).
for prog in "100003 3" "100005 3" "100005 1" "100021 1" "100021 3" "100021 4"; do
  rpcinfo -T tcp -d $prog 2>/dev/null || true
done
cat > "$work/nfsgw.toml" <<CONF
[server]
listen = "$LISTEN"
nfs_port = $PORT
register_rpcbind = true
# Locks (docs/configuration.md, "Locks"): held at the origin's NLM; the host's
# rpc.statd monitors the clients. A short grace period: after a restart of nfsgw
# only reclaims are granted for this long (new locks wait).
nlm_port = $NLM_PORT
nlm_grace = "10s"

[cache]
dir = "$work/cache"

[[export]]
path = "/export"
origin = "$url"
origin_nlm_port = $ORIGIN_NLM
squash = "root"
clients = ["$CLIENTS"]
CONF

cleanup() {
  if [ -n "${gw:-}" ]; then kill "$gw" 2>/dev/null || true; wait "$gw" 2>/dev/null || true; fi
  scripts/origin-ganesha.sh stop "$work/ganesha" || true
}
trap cleanup EXIT INT TERM

"$build/nfsgw" --config "$work/nfsgw.toml" &
gw=$!
# Wait until nfsgw itself accepts connections on its NFS and NLM ports (rpcinfo -n
# can be answered through rpcbind by another server, so it proves nothing here).
for _ in $(seq 100); do
  kill -0 "$gw" 2>/dev/null || { echo "nfsgw exited; see its log above" >&2; exit 1; }
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$NLM_PORT") 2>/dev/null && break
  sleep 0.1
done

client="nfs://127.0.0.1/export?nfsport=$PORT&mountport=$PORT"
echo
echo "== origin: $url"
echo "== nfsgw:  $client   (config: $work/nfsgw.toml)"
echo "== listing through nfsgw (nfs-ls -R):"
nfs-ls -R "$client"
echo "== README.txt through nfsgw (nfs-cat):"
nfs-cat "nfs://127.0.0.1/export/README.txt?nfsport=$PORT&mountport=$PORT"

# A lock through nfsgw's NLM, as a client's lock manager takes it: held at the
# origin (ganesha holds it on its file, where this host sees it), then released.
probe=(python3 scripts/nlm-probe.py --nlm-port "$NLM_PORT" --nfs-port "$PORT" --export /export)
echo "== a lock on README.txt through nfsgw's NLM (port $NLM_PORT; new locks wait out nlm_grace):"
"${probe[@]}" lock README.txt
python3 scripts/nlm-probe.py held "$work/origin/README.txt" >/dev/null ||
  { echo "the lock granted through nfsgw is not held at the origin" >&2; exit 1; }
echo "   held at the origin: $work/origin/README.txt is locked there"
"${probe[@]}" unlock README.txt >/dev/null
! python3 scripts/nlm-probe.py held "$work/origin/README.txt" >/dev/null ||
  { echo "the lock released through nfsgw is still held at the origin" >&2; exit 1; }
echo "   released: the origin holds no lock on it any more"
[ -n "${NFSGW_DEMO_ONESHOT:-}" ] && exit 0

addr=$LISTEN
[ "$addr" != 0.0.0.0 ] || addr=$(hostname -I 2>/dev/null | awk '{ print $1 }')
echo
echo "nfsgw is serving, with locks. Mount it on a client (kernel NFSv3; no 'nolock'):"
echo "  mount -t nfs -o vers=3,proto=tcp,port=$PORT,mountport=$PORT ${addr:-THIS_HOST}:/export /mnt"
echo "  flock /mnt/README.txt -c 'echo locked; sleep 10'"
if [ "$LISTEN" = 127.0.0.1 ]; then
  echo "(127.0.0.1: this machine only. A mount on this machine reads and writes, but its locks"
  echo " need 'nolock': its own kernel lock manager takes this rpcbind's NLM entry. To lock, mount"
  echo " from another machine or a VM: NFSGW_DEMO_LISTEN=0.0.0.0 NFSGW_DEMO_CLIENTS=NETWORK/BITS.)"
fi
echo "Press Ctrl-C to stop nfsgw and the origin."
wait "$gw"

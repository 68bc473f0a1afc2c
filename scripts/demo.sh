#!/usr/bin/env bash
# Runs nfsgw in front of a loopback demo origin on a fresh Debian 12 machine, as root:
# installs the packages, builds, starts nfs-ganesha exporting a sample folder, starts
# nfsgw in front of it and lists the export through nfsgw. nfsgw then keeps serving
# in the foreground until Ctrl-C; clients may mount 127.0.0.1:/export (NFSv3, TCP,
# port 2049, MOUNT on the same port).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if [ "$(id -u)" -ne 0 ]; then echo "scripts/demo.sh must run as root" >&2; exit 1; fi

PORT=${NFSGW_PORT:-2049}
work=${NFSGW_DEMO_DIR:-/tmp/nfsgw-demo}

bash scripts/install-deps.sh
BUILD_DIR=build TARGETS=nfsgw bash scripts/build.sh

mkdir -p "$work/origin/docs" "$work/origin/src/lib" "$work/cache"
echo "Hello through nfsgw" > "$work/origin/README.txt"
for i in 1 2 3; do echo "page $i" > "$work/origin/docs/page$i.txt"; done
printf '<?php echo "hi";\n' > "$work/origin/src/index.php"
printf '<?php // lib\n' > "$work/origin/src/lib/util.php"

url=$(scripts/origin-ganesha.sh start "$work/ganesha" "$work/origin" 20490 20048 | sed -n 's/^origin ready: //p')
cat > "$work/nfsgw.toml" <<CONF
[server]
listen = "127.0.0.1"
nfs_port = $PORT
register_rpcbind = false

[cache]
dir = "$work/cache"

[[export]]
path = "/export"
origin = "$url"
squash = "root"
clients = ["127.0.0.0/8"]
CONF

cleanup() {
  if [ -n "${gw:-}" ]; then kill "$gw" 2>/dev/null || true; wait "$gw" 2>/dev/null || true; fi
  scripts/origin-ganesha.sh stop "$work/ganesha" || true
}
trap cleanup EXIT INT TERM

build/nfsgw --config "$work/nfsgw.toml" &
gw=$!
# Wait until nfsgw itself accepts connections (rpcinfo -n can be answered through
# rpcbind by another server, so it proves nothing here).
for _ in $(seq 100); do
  kill -0 "$gw" 2>/dev/null || { echo "nfsgw exited; see its log above" >&2; exit 1; }
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
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
[ -n "${NFSGW_DEMO_ONESHOT:-}" ] && exit 0
echo
echo "nfsgw is serving; press Ctrl-C to stop it and the origin."
wait "$gw"

#!/usr/bin/env bash
# The compose sidecar demo (docker/compose/) brought up with podman-compose as
# docker/README.md says, in a copy whose only changes are the published host port
# (29020 instead of 2049: this machine's test ports), the project name, and the
# nfsgw image (the one under test instead of building it from source again).
# The demo origin (nfs-ganesha in its own container, docker/compose/demo-origin)
# is built by podman-compose from the locally made debian:12 base.
#
#   run-compose-test.sh [NFSGW_BIN]
#
# Checks: the render export lists and reads the demo origin's README through the
# published port, a file written with nfs-cp reads back, `nfsgw stats` answers
# through `podman-compose exec`, nfsgw runs as 10001 with no capabilities, and
# `podman-compose stop` stops nfsgw with exit code 0. Environment: lib.sh.
NFSGW_BIN_DEFAULT=${1:-}
. "$(dirname "$0")/lib.sh"
command -v podman-compose >/dev/null || skip "podman-compose is missing (Debian package podman-compose)"
[ -x /usr/libexec/podman/catatonit ] || skip "catatonit is missing (compose.yaml's init: true needs it under podman)"
for t in nfs-ls nfs-cat nfs-cp; do command -v "$t" >/dev/null || skip "$t is missing (libnfs-utils)"; done
PORT=29020
PROJECT=nfsgw-demo-ctest

RUN=$(mktemp -d /var/tmp/nfsgw-compose-test.XXXXXX)
status=1
compose() { podman-compose -p "$PROJECT" -f "$RUN/compose/compose.yaml" "$@"; }
cleanup() {
  if [ "$status" != 0 ] || [ "${KEEP:-0}" != 1 ]; then
    compose down -v >"$RUN/down.log" 2>&1 || cat "$RUN/down.log"
    podman network rm -f "${PROJECT}_gateway" >/dev/null 2>&1 || true
  fi
  if [ "$status" = 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$RUN"; else echo "run dir kept: $RUN"; fi
}
trap cleanup EXIT

ensure_image
cp -r "$repo/docker/compose" "$RUN/compose"
f=$RUN/compose/compose.yaml
grep -q '"127.0.0.1:2049:2049"' "$f" && grep -q '^      context: \.\./\.\.$' "$f" && grep -q '^    image: nfsgw$' "$f" ||
  die "docker/compose/compose.yaml changed: this test rewrites its published port, build context and image lines"
sed -i -e "s#\"127.0.0.1:2049:2049\"#\"127.0.0.1:$PORT:2049\"#" \
       -e "s#^      context: \.\./\.\.\$#      context: $repo#" \
       -e "s#^    image: nfsgw\$#    image: $IMAGE#" "$f"
# A project left by a killed run would hold the port and the subnet.
compose down -v >/dev/null 2>&1 || true
podman network rm -f "${PROJECT}_gateway" >/dev/null 2>&1 || true
# podman-compose 1.0 (Debian 12) ignores a network's ipam settings: made here with
# compose.yaml's subnet (nfsgw.toml's `clients`), it is used as it is.
subnet=$(python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["networks"]["gateway"]["ipam"]["config"][0]["subnet"])' "$f")
podman network create --subnet "$subnet" "${PROJECT}_gateway" >/dev/null || die "podman network create --subnet $subnet failed"

log "podman-compose up -d (builds the demo origin image the first time)"
t0=$(date +%s.%N)
compose up -d >"$RUN/up.log" 2>&1 || { tail -30 "$RUN/up.log"; die "podman-compose up failed"; }
# nfsgw may start before the origin listens (podman-compose 1.0 does not wait for
# depends_on's service_healthy); it must still answer once the origin is up.
waited=$(python3 "$here/helper.py" wait-nfs "$PORT" 240) ||
  { tail -30 "$RUN/up.log"; podman logs "${PROJECT}_nfsgw_1" 2>&1 | tail -20; die "nothing answers NFS on $PORT"; }
log "nfsgw answers on 127.0.0.1:$PORT, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after up"

# The demo's clients mount 127.0.0.1:/render with port=mountport=2049 (here $PORT).
Q="nfsport=$PORT&mountport=$PORT"
ok=0
for i in $(seq 20); do  # the origin may still be starting: nfsgw answers JUKEBOX/errors meanwhile
  if timeout 15 nfs-cat "nfs://127.0.0.1/render/README?$Q" >"$RUN/readme" 2>"$RUN/cat.err" &&
     grep -q "served by the nfsgw compose demo origin" "$RUN/readme"; then ok=1; break; fi
  sleep 2
done
[ "$ok" = 1 ] || { cat "$RUN/cat.err"; podman logs "${PROJECT}_nfsgw_1" 2>&1 | tail -20;
                   podman logs "${PROJECT}_origin_1" 2>&1 | tail -20; die "the demo origin's README does not read through nfsgw"; }
timeout 60 nfs-ls "nfs://127.0.0.1/render/?$Q" >"$RUN/ls" || die "nfs-ls /render failed"
grep -q ' README$' "$RUN/ls" || die "the listing lacks README: $(cat "$RUN/ls")"
head -c 300000 /dev/urandom >"$RUN/up.bin"
timeout 60 nfs-cp "$RUN/up.bin" "nfs://127.0.0.1/render/from-host.bin?$Q" >/dev/null || die "nfs-cp to /render failed"
timeout 60 nfs-cat "nfs://127.0.0.1/render/from-host.bin?$Q" >"$RUN/back.bin" || die "reading the written file failed"
cmp -s "$RUN/up.bin" "$RUN/back.bin" || die "the written file reads back different"
# On the origin's volume, through the origin container.
sum=$(podman exec "${PROJECT}_origin_1" sha256sum /srv/export/from-host.bin | cut -d' ' -f1)
[ "$sum" = "$(sha256sum <"$RUN/up.bin" | cut -d' ' -f1)" ] || die "the file on the demo origin's volume differs"
log "listed, read and wrote /render through 127.0.0.1:$PORT"

compose exec nfsgw nfsgw stats --config /etc/nfsgw/nfsgw.toml >"$RUN/stats" 2>&1 ||
  { cat "$RUN/stats"; die "nfsgw stats through podman-compose exec failed"; }
grep -q '/render' "$RUN/stats" || die "nfsgw stats does not name /render: $(head -5 "$RUN/stats")"
read -r uid eff prm bnd nnp < <(podman exec "${PROJECT}_nfsgw_1" cat /proc/1/status | python3 "$here/helper.py" cap-eff)
[ "$uid" = 10001 ] && [ "$eff" = 0 ] && [ "$prm" = 0 ] && [ "$bnd" = 0 ] && [ "$nnp" = 1 ] ||
  die "compose's nfsgw: uid $uid CapEff $eff CapPrm $prm CapBnd $bnd NoNewPrivs $nnp"

compose stop >"$RUN/stop.log" 2>&1 || { cat "$RUN/stop.log"; die "podman-compose stop failed"; }
code=$(podman inspect --format '{{.State.ExitCode}}' "${PROJECT}_nfsgw_1")
podman logs "${PROJECT}_nfsgw_1" >"$RUN/nfsgw.log" 2>&1
[ "$code" = 0 ] && grep -q 'nfsgw stopped' "$RUN/nfsgw.log" ||
  { tail -10 "$RUN/nfsgw.log"; die "nfsgw did not stop cleanly under podman-compose stop (exit $code)"; }
status=0
log "PASS: compose demo"

#!/usr/bin/env bash
# The nfsgw image run as a user runs it (issue 22): the container in front of
# the loopback nfs-ganesha origin, its config and cache on volumes, the NFS port
# published; libnfs clients (nfs-ls, nfs-cat, nfs-cp) through that port.
#
#   run-image-test.sh [NFSGW_BIN]
#
# Checks, in order:
#  1. a cold walk lists and reads the whole export, byte for byte, and makes
#     origin calls (the positive control of step 4);
#  2. a file written with nfs-cp reaches the origin's disk and reads back;
#  3. warm walks in the same container settle to no origin call;
#  4. `podman stop` stops it cleanly (exit code 0, nfsgw's "stopped" line, within
#     the stop timeout); a new container on the same cache volume answers the
#     same walk with no origin call at all (nfsgw stats --json, podman exec);
#  5. it runs as uid 10001 with no capabilities (effective, permitted, bounding)
#     and no_new_privs (/proc/1/status; control: the same probe run as root in
#     the image sees capabilities), its HEALTHCHECK passes, and the cache volume
#     belongs to 10001;
#  6. locks (issue 21): a container with [server] nlm_port, run as docker/README.md
#     says (--user 0 and the daemons' capabilities, statd's state on a volume):
#     its entry point starts rpcbind and rpc.statd, nfsgw is still uid 10001 with
#     no capabilities; the published rpcbind maps NLM v4 to nfsgw's port; a lock
#     taken through the published NLM port (scripts/nlm-probe.py, MOUNT + LOOKUP
#     + NLM4 LOCK) is held at the origin (ganesha with NLM: this host sees the
#     lock on the file, and the origin's own NLM refuses another owner), and
#     after the UNLOCK neither; killed (-9) while a client host is monitored, the
#     next container's statd moves its NSM state on (the volume kept it).
# Ports: origin 29000/29001 (NLM 29002), published 29010 (NLM 29011, rpcbind
# 29012). Environment: tests/container/lib.sh.
NFSGW_BIN_DEFAULT=${1:-}
. "$(dirname "$0")/lib.sh"
ORIGIN_NFS=29000; ORIGIN_MNT=29001; ORIGIN_NLM=29002; PORT=29010; NLM_PORT=29011; RPCBIND_PORT=29012
for t in nfs-ls nfs-cat nfs-cp cmp; do command -v "$t" >/dev/null || skip "$t is missing (libnfs-utils)"; done

RUN=$(mktemp -d /var/tmp/nfsgw-container-test.XXXXXX)
NAME=nfsgw-ctest-$$
VOLUME=nfsgw-ctest-cache-$$
STATD_VOLUME=nfsgw-ctest-statd-$$
ORIGIN_STARTED=0
status=1
cleanup() {
  if [ "$status" != 0 ] || [ "${KEEP:-0}" != 1 ]; then
    for n in "$NAME" "$NAME-2" "$NAME-probe" "$NAME-locks" "$NAME-locks-2"; do
      podman rm -f -t 2 "$n" >/dev/null 2>&1 || true
    done
    podman volume rm -f "$VOLUME" "$VOLUME-locks" "$STATD_VOLUME" >/dev/null 2>&1 || true
  fi
  [ "$ORIGIN_STARTED" = 0 ] || "$repo/scripts/origin-ganesha.sh" stop "$RUN/origin" || true
  if [ "$status" = 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$RUN"; else echo "run dir kept: $RUN"; fi
}
trap cleanup EXIT

ensure_image
# A container left by a killed run would hold the published port.
podman ps -a --format '{{.Names}}' | grep '^nfsgw-ctest-' | xargs -r podman rm -f -t 2 >/dev/null 2>&1 || true

# The export: folders, small files and a 3 MiB one (several data-cache blocks),
# readable by the clients' uid 1000, and a folder they may write.
mkdir -p "$RUN/export/docs/deep/er" "$RUN/export/media" "$RUN/export/incoming"
for i in $(seq 20); do echo "file $i of the container test" >"$RUN/export/docs/f$i.txt"; done
echo "at the bottom" >"$RUN/export/docs/deep/er/bottom.txt"
head -c 3145728 /dev/urandom >"$RUN/export/media/big.bin"
echo "locked through nfsgw" >"$RUN/export/locked.txt"
chmod -R a+rX "$RUN/export"; chmod 0777 "$RUN/export/incoming"; chmod 0666 "$RUN/export/locked.txt"
# The origin's lock manager is on (step 6), on its own port.
ORIGIN_NLM_PORT=$ORIGIN_NLM start_origin "$ORIGIN_NFS" "$ORIGIN_MNT"
write_config "$ORIGIN_NFS" "$ORIGIN_MNT"
podman volume create "$VOLUME" >/dev/null
run_container "$NAME" "$PORT" "$VOLUME"
start1=$START_S

# The clients act as uid 1000 (root's ACCESS is always asked of the origin: it may be squashed).
Q="nfsport=$PORT&mountport=$PORT&uid=1000&gid=1000"
URL="nfs://127.0.0.1/export"
# walk OUT: lists the export recursively and reads every file, comparing each with the origin's copy.
walk() {
  local out=$1 f
  timeout 60 nfs-ls -R "$URL/?$Q" >"$out" || die "nfs-ls -R failed"
  grep -q ' docs/deep/er/bottom.txt$' "$out" || die "the listing lacks docs/deep/er/bottom.txt: $(head -5 "$out")"
  [ "$(grep -c '^-' "$out")" -ge 22 ] || die "the listing has $(grep -c '^-' "$out") files, not 22 or more"
  while read -r f; do
    timeout 60 nfs-cat "$URL/$f?$Q" >"$RUN/read" || die "nfs-cat $f failed"
    cmp -s "$RUN/read" "$RUN/export/$f" || die "$f read through the container differs from the origin's"
  done < <(awk '/^-/ { print $NF }' "$out")
}

log "1. cold walk"
walk "$RUN/walk1"
read -r calls1 blocks1 < <(stats "$NAME")
log "   origin calls $calls1, data blocks fetched $blocks1"
[ "$calls1" -gt 0 ] && [ "$blocks1" -gt 0 ] ||
  die "the cold walk made no origin call or fetched no block ($calls1, $blocks1): the counters cannot show a warm walk either"

log "2. write through the published port"
head -c 1048577 /dev/urandom >"$RUN/upload.bin"
timeout 60 nfs-cp "$RUN/upload.bin" "$URL/incoming/upload.bin?$Q" || die "nfs-cp to the export failed"
cmp "$RUN/upload.bin" "$RUN/export/incoming/upload.bin" || die "the written file on the origin's disk differs"
timeout 60 nfs-cat "$URL/incoming/upload.bin?$Q" >"$RUN/readback" || die "reading the written file back failed"
cmp -s "$RUN/upload.bin" "$RUN/readback" || die "the written file reads back different"
[ "$(stat -c %u "$RUN/export/incoming/upload.bin")" = 1000 ] ||
  die "the written file belongs to uid $(stat -c %u "$RUN/export/incoming/upload.bin") on the origin, not the client's 1000"

log "3. warm walks until one makes no origin call (ACCESS answers are learnt in the background)"
settled=0
for i in 1 2 3 4; do
  read -r before bb < <(stats "$NAME")
  walk "$RUN/walk-warm"
  read -r after ba < <(stats "$NAME")
  log "   warm walk $i: $((after - before)) origin calls, $((ba - bb)) blocks fetched"
  if [ "$after" = "$before" ] && [ "$ba" = "$bb" ]; then settled=1; break; fi
  sleep 1
done
[ "$settled" = 1 ] || die "four warm walks in one container still made origin calls"

log "4. podman stop, then a new container on the same cache volume"
t0=$(date +%s.%N)
podman stop -t 20 "$NAME" >/dev/null || die "podman stop failed"
stop_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
code=$(podman inspect --format '{{.State.ExitCode}}' "$NAME")
podman logs "$NAME" >"$RUN/nfsgw-1.log" 2>&1
log "   stopped in $stop_s s, exit code $code; last line: $(tail -1 "$RUN/nfsgw-1.log")"
[ "$code" = 0 ] || { tail -20 "$RUN/nfsgw-1.log"; die "nfsgw exited $code on podman stop (137: killed after the time-out)"; }
grep -q 'signal 15: stopping' "$RUN/nfsgw-1.log" || die "nfsgw did not log the SIGTERM"
grep -q 'nfsgw stopped' "$RUN/nfsgw-1.log" || die "nfsgw did not log that it stopped"
podman rm "$NAME" >/dev/null
run_container "$NAME-2" "$PORT" "$VOLUME"
start2=$START_S
walk "$RUN/walk3"
read -r calls3 blocks3 < <(stats "$NAME-2")
log "   after the restart: origin calls $calls3, data blocks fetched $blocks3"
[ "$calls3" = 0 ] && [ "$blocks3" = 0 ] ||
  die "the walk after the restart made $calls3 origin calls and fetched $blocks3 blocks: the cache did not survive"
diff <(awk '{ print $1, $NF }' "$RUN/walk-warm") <(awk '{ print $1, $NF }' "$RUN/walk3") >/dev/null ||
  die "the listing after the restart differs from the one before"

log "5. user and capabilities"
user=$(podman inspect --format '{{.Config.User}}' "$NAME-2")
[ "$user" = "10001:10001" ] || die "the container runs as '$user', not the image's 10001:10001"
read -r uid eff prm bnd nnp < <(podman exec "$NAME-2" cat /proc/1/status | python3 "$here/helper.py" cap-eff)
log "   pid 1: uid $uid, CapEff $eff, CapPrm $prm, CapBnd $bnd, NoNewPrivs $nnp"
[ "$uid" = 10001 ] || die "nfsgw (pid 1) runs as uid $uid"
[ "$eff" = 0 ] && [ "$prm" = 0 ] && [ "$bnd" = 0 ] || die "nfsgw has capabilities (eff $eff, prm $prm, bnd $bnd)"
[ "$nnp" = 1 ] || die "no_new_privs is not set ($nnp)"
read -r _ ceff _ _ _ < <(podman run --rm --name "$NAME-probe" --user 0 --entrypoint cat "$IMAGE" /proc/self/status |
                          python3 "$here/helper.py" cap-eff)
[ "$ceff" != 0 ] || die "control: root in the image shows no capabilities either, so the probe proves nothing"
# The image's HEALTHCHECK (nfsgw stats through the admin socket), run once by hand:
# podman runs it from systemd timers, which this host has not.
podman healthcheck run "$NAME-2" >"$RUN/health" 2>&1 || { cat "$RUN/health"; die "the image's HEALTHCHECK fails on a serving nfsgw"; }
owner=$(podman exec "$NAME-2" stat -c '%u:%g %a' /var/lib/nfsgw)
[ "$owner" = "10001:10001 700" ] || die "the cache volume is $owner, not 10001:10001 700"

log "6. locks: nlm_port set, the container run as docker/README.md's \"Locks\" says"
podman rm -f -t 5 "$NAME-2" >/dev/null
REGISTER_RPCBIND=true SERVER_EXTRA='nlm_port = 4045
nlm_grace = "2s"' EXPORT_EXTRA="origin_nlm_port = $ORIGIN_NLM" write_config "$ORIGIN_NFS" "$ORIGIN_MNT"
podman volume create "$VOLUME-locks" >/dev/null
podman volume create "$STATD_VOLUME" >/dev/null
# --hostname: nfsgw's caller name at the origin, which the origin's statd must
# resolve (an address here: the test host has no name to spare).
locks_args=(--hostname 127.0.0.242 --user 0
  --cap-add SETUID,SETGID,SETPCAP,CHOWN,DAC_OVERRIDE,NET_BIND_SERVICE
  -p "127.0.0.1:$NLM_PORT:4045" -p "127.0.0.1:$RPCBIND_PORT:111" -v "$STATD_VOLUME:/var/lib/nfs")
run_container "$NAME-locks" "$PORT" "$VOLUME-locks" "${locks_args[@]}"
podman logs "$NAME-locks" >"$RUN/nfsgw-locks.log" 2>&1
grep -q 'nfsgw-entrypoint: rpcbind started' "$RUN/nfsgw-locks.log" || die "the entry point did not start rpcbind"
grep -q 'nfsgw-entrypoint: rpc.statd started' "$RUN/nfsgw-locks.log" || die "the entry point did not start rpc.statd"
read -r uid eff prm bnd nnp < <(podman exec "$NAME-locks" cat /proc/1/status | python3 "$here/helper.py" cap-eff)
log "   pid 1 (nfsgw) of the lock container: uid $uid, CapEff $eff, CapPrm $prm, CapBnd $bnd, NoNewPrivs $nnp"
[ "$uid" = 10001 ] && [ "$eff" = 0 ] && [ "$prm" = 0 ] && [ "$bnd" = 0 ] && [ "$nnp" = 1 ] ||
  die "with locks, nfsgw is not uid 10001 without capabilities"
probe() { python3 "$repo/scripts/nlm-probe.py" "$@"; }
nlm_port=$(probe getport "$RPCBIND_PORT" 100021 4) || die "the container's rpcbind does not answer on $RPCBIND_PORT"
[ "$nlm_port" = 4045 ] || die "the container's rpcbind maps NLM v4 to '$nlm_port', not nfsgw's 4045"
via_gw=(--nlm-port "$NLM_PORT" --nfs-port "$PORT" --export /export)
at_origin=(--nlm-port "$ORIGIN_NLM" --nfs-port "$ORIGIN_NFS" --mount-port "$ORIGIN_MNT" --export "$RUN/export"
  --caller 127.0.0.8 --owner origin-client)
t0=$(date +%s.%N)
out=$(probe lock locked.txt "${via_gw[@]}") || die "LOCK through the container's NLM port: $out"
lock_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
probe held "$RUN/export/locked.txt" >/dev/null || die "the lock granted through the container is not held on the origin's file"
out=$(probe test locked.txt "${at_origin[@]}") && die "the origin's NLM grants another owner the file locked through the container ($out)"
[ "$out" = denied ] || die "TEST at the origin's NLM answered '$out', not denied"
log "   lock through 127.0.0.1:$NLM_PORT granted in $lock_s s (grace included); held at the origin; its NLM denies another owner"
out=$(probe unlock locked.txt "${via_gw[@]}") || die "UNLOCK through the container: $out"
! probe held "$RUN/export/locked.txt" >/dev/null || die "the lock released through the container is still held at the origin"
out=$(probe test locked.txt "${at_origin[@]}") || die "after the UNLOCK the origin's NLM still refuses another owner ($out)"
log "   unlocked: the origin holds no lock, its NLM grants another owner"
# statd's state on its volume: a client host monitored (a lock held), the
# container killed, a new one on the same volumes: its statd tells that host and
# moves the NSM state on (statd alone keeps it; sm-notify moves it only when it
# has someone to tell).
state() { podman exec "$1" od -An -tu4 /var/lib/nfs/state | tr -d ' '; }
out=$(probe lock locked.txt "${via_gw[@]}") || die "the second LOCK through the container: $out"
state1=$(state "$NAME-locks")
podman kill "$NAME-locks" >/dev/null
podman rm "$NAME-locks" >/dev/null
run_container "$NAME-locks-2" "$PORT" "$VOLUME-locks" "${locks_args[@]}"
state2=$(state "$NAME-locks-2")
log "   statd's NSM state: $state1 before the kill, $state2 in the new container"
[ -n "$state1" ] && [ -n "$state2" ] && [ "$state2" -gt "$state1" ] ||
  die "the new container's statd did not move its NSM state on ($state1 -> $state2): is /var/lib/nfs on the volume?"
# nfsgw's restart notice to the origin's statd makes ganesha drop the lock the
# killed nfsgw held; logged, not checked: statd calls back whichever ganesha
# holds rpcbind's NLM entry on this host, another test's origin maybe.
for _ in $(seq 20); do probe held "$RUN/export/locked.txt" >/dev/null || break; sleep 0.5; done
if probe held "$RUN/export/locked.txt" >/dev/null; then
  log "   the origin still holds the killed nfsgw's lock after 10 s (its statd's callback went elsewhere?)"
else
  log "   the origin dropped the killed nfsgw's lock (nfsgw's restart notice)"
fi
podman stop -t 20 "$NAME-locks-2" >/dev/null || die "podman stop of the lock container failed"
code=$(podman inspect --format '{{.State.ExitCode}}' "$NAME-locks-2")
[ "$code" = 0 ] || die "the lock container's nfsgw exited $code on podman stop"

size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
log "image $IMAGE: $((size / 1000000)) MB; first NFS answer $start1 s after podman run (restart: $start2 s); stop $stop_s s"
status=0
log "PASS: container image test"

# Scenario "locks": NLM byte-range locks from two kernel clients at once (issue 21).
# Mounts without nolock: each guest runs rpcbind and rpc.statd (statd's state on
# a small disk of its own), and the kernel's lockd talks NLM v4 to the server
# under test, found through the server's rpcbind. The origin is nfs-ganesha with
# NLM on (ORIGIN_NLM); against nfsgw (GW_NLM) the guests lock through nfsgw's NLM
# service, which holds the locks at the origin's.
#
# The scenario runs in a network and mount namespace of its own (KERNEL_NETNS,
# see run-scenario.sh): its own rpcbind (the guests' lockd asks it for 100021,
# which every ganesha with NLM and every nfsgw on a shared rpcbind would take)
# and rpc.statd, and the guests on a bridge with addresses of their own
# (10.0.2.15 guest-a, 10.0.2.16 guest-b), so that the server tells them apart and
# its NLM_GRANTED calls reach them.
#
# Phases:
#  1. Counters: both guests at once, each with two processes: one increments
#     locks/counter-fcntl under fcntl(F_SETLKW) locks, the other
#     locks/counter-flock under flock(LOCK_EX) (NFS carries both as NLM locks),
#     LOCK_COUNT (1,000) times each. Each file must end at exactly 2 x LOCK_COUNT.
#  2. Blocking waiter, fcntl then flock: a holds the lock; b's non-blocking try
#     must fail, then b waits (and says so through the export); a releases
#     LOCK_HOLD s after it sees that, and b's wait must cover that time.
#     Release-to-grant (a's NFSGW-LOCK-RELEASING to b's NFSGW-LOCK-GRANTED, both
#     seen by the host on the consoles, 20 ms polling) is measured and printed.
#  3. Holder killed: a holds locks/kill; b's try fails, b waits; the host kills
#     a's qemu (SIGKILL), checks for KILL_HOLD s that b stays blocked (the lock
#     outlives its holder's connections), then boots a again (role a2, same
#     address, name and disk): its sm-notify tells the server's statd that
#     guest-a rebooted, the server drops a's lock, and b must get it (within
#     KILL_WAIT s). The notify-to-grant time is printed. a2 then finds the lock
#     free after b released it.
#  4. nfsgw killed (gateway only, RESTART=1, the default there): b holds
#     locks/restart; the host kills nfsgw (-9) and starts it again (grace
#     GW_NLM_GRACE, 20 s by default, also at the first start); nfsgw tells the
#     origin (which drops the old lock) and guest-b's statd (SM_NOTIFY, its new
#     state): b's lockd reclaims the lock in the grace period, nfsgw takes it at
#     the origin again. The host checks that the new nfsgw monitors guest-b (its
#     reclaim arrived) and that the origin holds the lock again, prints
#     restart-to-reclaim, and after b's release that the origin holds nothing.
# LOCK_NEGATIVE=1 (the negative control, against the origin): the guests mount
# with nolock and run phase 1 only; the locks are then local to each guest, and
# the host expects at least one counter short of 2 x LOCK_COUNT (lost updates).
KERNEL_NETNS=1
ORIGIN_NLM=1
RESTART=0
if [ "$target" = gateway ]; then
  GW_NLM=1
  RESTART=${RESTART_NFSGW:-1}
  # Phase 4 kills nfsgw and starts another: the run must not take that for a failure.
  if [ "$RESTART" = 1 ]; then GW_STOPPED_BY_SCENARIO=1; GW_NLM_GRACE=${GW_NLM_GRACE:-20s}; fi
fi
RESTART_HOLD=${RESTART_HOLD:-30}
GUEST_ROLES="a b"
GUEST_MEM=512
GUEST_TIMEOUT=${LOCKS_TIMEOUT:-1500}
LOCK_COUNT=${LOCK_COUNT:-1000}
LOCK_HOLD=${LOCK_HOLD:-3}
KILL_HOLD=${KILL_HOLD:-15}
KILL_WAIT=${KILL_WAIT:-240}
LOCK_NEGATIVE=${LOCK_NEGATIVE:-0}

guest_slot() { case "$1" in a2) echo a ;; *) echo "$1" ;; esac; }
guest_qemu() { echo "-drive file=$RUN/disk-$(guest_slot "$1").img,format=raw,if=virtio"; }
guest_env() {
  echo "LOCK_COUNT=$LOCK_COUNT"; echo "COUNT_DEADLINE=$((GUEST_TIMEOUT - 60))"
  echo "KILL_WAIT=$KILL_WAIT"; echo "LOCK_NEGATIVE=$LOCK_NEGATIVE"; echo "LOCK_HOLD=$LOCK_HOLD"
  echo "RESTART=$RESTART"; echo "RESTART_HOLD=$RESTART_HOLD"
}

host_prepare() {
  local slot
  mkdir -p "$EXPORT_DIR/locks"
  for f in counter-fcntl counter-flock; do printf '0\n' > "$EXPORT_DIR/locks/$f"; done
  for f in wait-fcntl wait-flock kill restart; do : > "$EXPORT_DIR/locks/$f"; done
  # Squash is off: the guests' root writes as root.
  for slot in a b; do
    truncate -s 16M "$RUN/disk-$slot.img"
    mkfs.ext4 -q -F "$RUN/disk-$slot.img" || return 1
  done
  log "locks: $LOCK_COUNT increments per guest and lock kind, negative control $LOCK_NEGATIVE"
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# seen FILE PATTERN: how many lines of the console FILE match PATTERN.
seen() { tr -d '\r' 2>/dev/null < "$1" | grep -c -- "$2" || true; }
# wait_seen FILE PATTERN COUNT SECONDS [STEP_MS]: polls every STEP_MS (20) ms
# until PATTERN has been seen COUNT times in FILE; fails after SECONDS.
wait_seen() {
  local i step=${5:-20}
  local limit=$(( $4 * 1000 / step ))
  for i in $(seq "$limit"); do
    [ "$(seen "$1" "$2")" -ge "$3" ] && return 0
    # Every 2 s: give up when no guest runs any more (one failed).
    if [ $((i % (2000 / step))) = 0 ] && ! guests_alive; then
      log "no guest runs any more; '$2' (x$3) not seen in $(basename "$1")"
      return 1
    fi
    sleep "$(printf '0.%03d' "$step")"
  done
  log "gave up after $4 s waiting for '$2' (x$3) in $(basename "$1")"
  return 1
}
qemu_alive() { kill -0 "$(cat "$RUN/qemu-$1.pid" 2>/dev/null)" 2>/dev/null; }
guests_alive() {
  local f
  for f in "$RUN"/qemu-*.pid; do
    [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && return 0
  done
  return 1
}

# host_during: the phases' host side; when it fails the guests are stopped (they
# would wait for a kill or a release that does not come).
host_during() {
  [ "$LOCK_NEGATIVE" = 1 ] && return 0
  locks_during && return 0
  local f
  for f in "$RUN"/qemu-*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
  return 1
}
locks_during() {
  local ca=$RUN/console-a cb=$RUN/console-b mode granted t_rel t_grant t_kill t_notify
  for mode in fcntl flock; do
    wait_seen "$cb" "NFSGW-LOCK-WAITING-$mode" 1 "$GUEST_TIMEOUT" 500 || return 1
    granted=$(seen "$cb" NFSGW-LOCK-GRANTED)
    local released i g; released=$(seen "$ca" NFSGW-LOCK-RELEASING)
    # Until a's RELEASING shows, b must show no new GRANTED (b's count is read
    # before a's in each round; b's own check is that its wait covered a's hold).
    for i in $(seq 6000); do
      g=$(seen "$cb" NFSGW-LOCK-GRANTED)
      [ "$(seen "$ca" NFSGW-LOCK-RELEASING)" -gt "$released" ] && break
      [ "$g" = "$granted" ] || { log "b got the $mode lock before a released it"; return 1; }
      [ "$i" -lt 6000 ] || { log "a never released the $mode lock"; return 1; }
      sleep 0.02
    done
    t_rel=$(now_ms)
    wait_seen "$cb" NFSGW-LOCK-GRANTED $((granted + 1)) 120 || return 1
    t_grant=$(now_ms)
    echo "$mode $((t_grant - t_rel))" >> "$RUN/release-to-grant"
    log "release-to-grant ($mode): $((t_grant - t_rel)) ms (host clock, consoles polled every 20 ms)"
  done

  wait_seen "$ca" NFSGW-KILL-GUEST 1 120 200 || return 1
  wait_seen "$cb" NFSGW-LOCK-WAITING-KILL 1 120 200 || return 1
  granted=$(seen "$cb" NFSGW-LOCK-GRANTED)
  sleep 2
  touch "$RUN/killed-a"
  kill -KILL "$(cat "$RUN/qemu-a.pid")"
  t_kill=$(now_ms)
  log "killed guest a (qemu, SIGKILL) while it held locks/kill; b waits for it"
  sleep "$KILL_HOLD"
  [ "$(seen "$cb" NFSGW-LOCK-GRANTED)" = "$granted" ] || { log "b got the lock before a rebooted"; return 1; }
  qemu_alive b || { log "guest b ended while it waited"; return 1; }
  log "after ${KILL_HOLD}s b still waits; booting a again (a2)"
  write_guest_env a2
  boot_guest a2 > "$RUN/boot-a2.log" 2>&1 &
  local a2=$!
  wait_seen "$RUN/console-a2" NFSGW-LOCK-NOTIFIED 1 120 100 || { cat "$RUN/boot-a2.log"; return 1; }
  t_notify=$(now_ms)
  wait_seen "$cb" NFSGW-LOCK-GRANTED $((granted + 1)) "$KILL_WAIT" || { cat "$RUN/boot-a2.log"; return 1; }
  t_grant=$(now_ms)
  echo "kill $((t_grant - t_notify)) $((t_grant - t_kill))" >> "$RUN/release-to-grant"
  log "b got the lock $((t_grant - t_notify)) ms after a2's sm-notify ended ($((t_grant - t_kill)) ms after the kill)"
  wait "$a2" || { cat "$RUN/boot-a2.log"; log "guest a2 failed"; return 1; }
  cat "$RUN/boot-a2.log"
  [ "$RESTART" = 1 ] || return 0
  restart_during
}

# locked_at_origin FILE: whether a process here sees a write lock on FILE (ganesha's
# VFS FSAL holds NLM locks as OFD locks on the file).
locked_at_origin() {
  python3 - "$1" <<'PY'
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
# struct flock: l_type, l_whence (short), l_start, l_len (off_t), l_pid (int)
fl = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0)
fl = fcntl.fcntl(fd, 36, fl)  # F_OFD_GETLK
sys.exit(0 if struct.unpack("hhqqi4x", fl)[0] != fcntl.F_UNLCK else 1)
PY
}

# pmap_set_udp PROG VERS PORT: PMAP SET of (PROG, VERS, udp, PORT) at the
# namespace's rpcbind. The origin's statd calls its lock manager back at rpcbind's
# (100021, 4, udp) entry when a host it monitors rebooted (here: nfsgw restarted);
# run-scenario.sh deleted the origin's 100021 entries so that nfsgw could register
# its own NLM (TCP), which would leave that notice undelivered ("Can't callback vm
# (100021,4), giving up" in statd's log) and nfsgw's old locks held at the origin.
pmap_set_udp() {
  python3 - "$@" <<'PY'
import socket, struct, sys
prog, vers, port = (int(a) for a in sys.argv[1:4])
xid = 0x6e670abc
call = struct.pack(">IIIIII", xid, 0, 2, 100000, 2, 1) + struct.pack(">IIII", 0, 0, 0, 0)
call += struct.pack(">IIII", prog, vers, 17, port)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.sendto(call, ("127.0.0.1", 111))
r = s.recv(512)
sys.exit(0 if len(r) >= 28 and struct.unpack(">I", r[24:28])[0] == 1 else 1)
PY
}

restart_during() {
  local cb=$RUN/console-b t_kill t_back t_reclaim i
  pmap_set_udp 100021 4 "$origin_nlm_port" || { log "rpcbind refused the origin's NLM (UDP) entry"; return 1; }
  wait_seen "$cb" NFSGW-RESTART-HOLDING 1 120 100 || return 1
  locked_at_origin "$EXPORT_DIR/locks/restart" || { log "b's restart lock is not held at the origin"; return 1; }
  kill -KILL "$gw_pid"
  for i in $(seq 100); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.1; done
  t_kill=$(now_ms)
  locked_at_origin "$EXPORT_DIR/locks/restart" || { log "control: the lock went with nfsgw's kill"; return 1; }
  log "killed nfsgw (SIGKILL) while b held locks/restart; starting it again"
  "$NFSGW_BIN" --config "$RUN/gw/nfsgw.toml" > "$RUN/gw/nfsgw-2.log" 2>&1 &
  echo $! > "$RUN/gw2.pid"
  # b's reclaim reaches the new nfsgw: it monitors guest-b again, before taking the lock.
  for i in $(seq 600); do
    grep -q "client host guest-b monitored" "$RUN/gw/nfsgw-2.log" && break
    [ "$i" -lt 600 ] || { log "no reclaim of guest-b reached the new nfsgw in 60 s"; tail -30 "$RUN/gw/nfsgw-2.log"; return 1; }
    sleep 0.1
  done
  t_reclaim=$(now_ms)
  for i in $(seq 300); do
    grep -q "client hosts told of the restart" "$RUN/gw/nfsgw-2.log" && break
    [ "$i" -lt 300 ] || { log "nfsgw did not tell its clients"; return 1; }
    sleep 0.1
  done
  # nfsgw asks the origin again for a refused reclaim for up to 5 s (while the
  # origin drops nfsgw's old lock): past that, b's lockd has its answer. Its lock
  # conflicts with the old one, so held and not refused means: reclaimed, and
  # the old lock gone.
  sleep 7
  if grep -q "lockd: failed to reclaim" "$cb"; then
    log "b's lockd could not reclaim its lock"; grep -E "NLM|statd" "$RUN/gw/nfsgw-2.log" | tail -8; return 1
  fi
  locked_at_origin "$EXPORT_DIR/locks/restart" || { log "the reclaimed lock is not held at the origin"; return 1; }
  echo "restart $((t_reclaim - t_kill))" >> "$RUN/release-to-grant"
  log "b's reclaim reached the new nfsgw $((t_reclaim - t_kill)) ms after the kill (the start and SM_NOTIFY included)"
  wait_seen "$cb" NFSGW-RESTART-RELEASED 1 $((RESTART_HOLD + 120)) 200 || return 1
  for i in $(seq 100); do
    locked_at_origin "$EXPORT_DIR/locks/restart" || break
    [ "$i" -lt 100 ] || { log "the origin still holds locks/restart after b's release"; return 1; }
    sleep 0.1
  done
  grep -E "NLM|statd" "$RUN/gw/nfsgw-2.log" | grep -v "test hook" | tail -8
}

host_cleanup() {
  [ -f "$RUN/gw2.pid" ] || return 0
  local p; p=$(cat "$RUN/gw2.pid")
  kill "$p" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$p" 2>/dev/null || true
}

host_verify() {
  local f v expect=$((2 * LOCK_COUNT)) short=0
  cat "$RUN/data-a" "$RUN/data-b" "$RUN/data-a2" 2>/dev/null
  for f in counter-fcntl counter-flock; do
    v=$((10#$(tr -d ' \n' < "$EXPORT_DIR/locks/$f")))
    echo "$f: $v (expected $expect)"
    [ "$v" = "$expect" ] || short=1
  done
  if [ "$LOCK_NEGATIVE" = 1 ]; then
    grep -q '^a done' "$RUN/data-a" && grep -q '^b done' "$RUN/data-b" || { echo "a guest did not finish"; return 1; }
    [ "$short" = 1 ] || { echo "negative control: with nolock both counters still reached $expect: the test did not see the lost exclusion"; return 1; }
    echo "negative control: with nolock the lost updates show (as expected)"
    return 0
  fi
  [ "$short" = 0 ] || { echo "a counter is not $expect: the locks did not exclude"; return 1; }
  grep -q '^b done' "$RUN/data-b" && grep -q '^a2 done' "$RUN/data-a2" || { echo "b or a2 did not finish"; return 1; }
  echo "release-to-grant (ms): $(tr '\n' ';' < "$RUN/release-to-grant")"
  if [ "$target" = gateway ]; then
    echo "nfsgw's log, lock lines:"; grep -i -E 'nlm|lock|statd|notify' "$RUN/gw/nfsgw.log" | tail -20 || true
  fi
  echo "statd (host) saw: $(grep -c -i notify "$RUN/statd.log" || true) notify lines"
}

# Guest half of "locks"; GUEST_ROLE is a or b, or a2 (guest a booted again after
# the host killed it). Each guest has its own address and host name (guest-a,
# guest-b; a2 is guest-a again) and a small disk (/dev/vda) for statd's state,
# so that a2 finds the server it must notify. See locks.host.sh for the phases.
. /bin/lib.sh
LOCKS=/mnt/locks
KILL_WAIT=${KILL_WAIT:-240}
export PATH=/bin:/usr/sbin
# A failure shows the guest statd's log (it logs to /tmp/statd.log).
fail() {
  echo "guest FAIL: $*"
  [ ! -s /tmp/statd.log ] || { echo "--- guest rpc.statd log (last 30 lines)"; tail -30 /tmp/statd.log; }
  exit 1
}

# wait_file PATH SECONDS: polls every 0.2 s, bounded.
wait_file() {
  local i=0 limit=$(( $2 * 5 ))
  until [ -e "$1" ]; do
    i=$((i + 1))
    [ "$i" -lt "$limit" ] || fail "$GUEST_ROLE: gave up waiting for $1 after $2 s"
    sleep 0.2
  done
}

# The lock manager's user-space side, as a distribution starts it at boot:
# statd's state on the disk, rpcbind, sm-notify (tells the servers in statd's
# list that this host rebooted; nothing to tell on a first boot), rpc.statd.
mkdir -p /var/lib/nfs /run/rpcbind
mount -t ext4 /dev/vda /var/lib/nfs || fail "cannot mount the state disk"
mkdir -p /var/lib/nfs/sm /var/lib/nfs/sm.bak
chown 100 /run/rpcbind
printf '127.0.0.1 localhost\n%s %s\n10.0.2.2 nfs-server\n' "$GUEST_IP" "$(hostname)" > /etc/hosts
echo "$GUEST_ROLE: $(hostname) at $GUEST_IP; statd's list: $(ls /var/lib/nfs/sm | tr '\n' ' ')"
rpcbind -w || fail "rpcbind did not start"
t0=$(now_ms)
timeout 150 sm-notify -d || fail "sm-notify failed"
[ "$GUEST_ROLE" != a2 ] || echo "NFSGW-LOCK-NOTIFIED after $(( $(now_ms) - t0 )) ms"
rpc.statd -L -F -d > /tmp/statd.log 2>&1 &
i=0
until rpcinfo -T tcp 127.0.0.1 100024 1 > /dev/null 2>&1; do
  i=$((i + 1))
  [ "$i" -lt 100 ] || { rpcinfo -p 127.0.0.1 || true; fail "rpc.statd did not register"; }
  sleep 0.1
done

# Without nolock: the kernel's lockd registers with the local rpcbind and finds
# the server's NLM through the server's. LOCK_NEGATIVE=1: nolock (locks local to
# each guest; the negative control).
opts="vers=3,proto=tcp,port=$NFS_PORT,mountport=$MOUNT_PORT,mountproto=tcp,addr=$SERVER,mountaddr=$SERVER,hard,timeo=20,actimeo=1"
[ "${LOCK_NEGATIVE:-0}" != 1 ] || opts="$opts,nolock"
mkdir -p /mnt
mount_nfs "$SERVER:$EXPORT_PATH" /mnt "$opts" || fail "mount"
[ -d "$LOCKS" ] || fail "no $LOCKS on the export"
grep " /mnt nfs " /proc/mounts

if [ "$GUEST_ROLE" = a2 ]; then
  # After b took the lock a held when it was killed: the lock is free for a2.
  wait_file "$LOCKS/b-done-kill" "$KILL_WAIT"
  lockcount try fcntl "$LOCKS/kill" || fail "a2: the kill lock is not free after b released it (status $?)"
  emit "a2 done"
  mount_nfs -u /mnt
  exit 0
fi

if [ "$GUEST_ROLE" = a ]; then other=b; else other=a; fi

# Phase 1: the counters. Both guests at once (a barrier through the export),
# each with one fcntl and one flock process, LOCK_COUNT increments each.
touch "$LOCKS/ready-$GUEST_ROLE"
wait_file "$LOCKS/ready-$other" 120
t0=$(now_ms)
counters=
for mode in fcntl flock; do
  ( if lockcount count "$mode" "$LOCKS/counter-$mode" "$LOCK_COUNT" "$COUNT_DEADLINE" > "/tmp/count-$mode" 2>&1
    then echo 0 > "/tmp/rc-$mode"; else echo $? > "/tmp/rc-$mode"; fi ) &
  counters="$counters $!"
done
# (not a bare wait: statd runs in the background too)
wait $counters
for mode in fcntl flock; do
  echo "$GUEST_ROLE $mode: $(cat "/tmp/count-$mode")"
  [ "$(cat "/tmp/rc-$mode")" = 0 ] || fail "$mode counter failed"
  emit "count $mode $GUEST_ROLE $(cat "/tmp/count-$mode")"
done
echo "$GUEST_ROLE: counters done after $(( $(now_ms) - t0 )) ms"
touch "$LOCKS/counted-$GUEST_ROLE"
if [ "${LOCK_NEGATIVE:-0}" = 1 ]; then
  wait_file "$LOCKS/counted-$other" 600
  emit "$GUEST_ROLE done"
  mount_nfs -u /mnt
  exit 0
fi

# Phase 2: a blocking waiter, for each kind of lock. a takes the lock; b checks
# that it is held (a non-blocking attempt fails), says so through the export
# (b-waiting-MODE) and waits for it (F_SETLKW / flock); a sees that, holds on
# LOCK_HOLD s more (b's request is at the server, blocked) and releases. The
# host times a's NFSGW-LOCK-RELEASING to b's NFSGW-LOCK-GRANTED on the consoles.
# (Files the host makes behind the origin's back show late in the guests:
# nfs-ganesha caches the folder's attributes; only the guests signal here.)
for mode in fcntl flock; do
  if [ "$GUEST_ROLE" = a ]; then
    lockcount with "$mode" "$LOCKS/wait-$mode" sh -c \
      "touch $LOCKS/a-holds-$mode; echo NFSGW-LOCK-HOLDING-$mode
       i=0; until [ -e $LOCKS/b-waiting-$mode ]; do i=\$((i + 1)); [ \$i -lt 600 ] || exit 1; sleep 0.2; done
       sleep $LOCK_HOLD" \
      || fail "a: holding the $mode lock"
  else
    wait_file "$LOCKS/a-holds-$mode" 120
    st=0; lockcount try "$mode" "$LOCKS/wait-$mode" || st=$?
    [ "$st" = 1 ] || fail "b: a non-blocking $mode lock while a holds it: status $st (0 = granted)"
    touch "$LOCKS/b-waiting-$mode"
    echo "NFSGW-LOCK-WAITING-$mode"
    timeout 200 lockcount with "$mode" "$LOCKS/wait-$mode" true > /tmp/wait-$mode || fail "b: waiting for the $mode lock"
    cat /tmp/wait-$mode
    # b asked before a let go: its wait covers a's LOCK_HOLD.
    waited=$(sed -n 's/^NFSGW-LOCK-GRANTED after \([0-9]*\) ms/\1/p' /tmp/wait-$mode)
    [ "${waited:-0}" -ge $((LOCK_HOLD * 1000 - 500)) ] || fail "b: got the $mode lock after $waited ms, while a held it for ${LOCK_HOLD} s"
  fi
done

# Phase 3: the holder is killed. a takes the lock and stays; b checks it is held,
# waits for it; the host kills a (qemu, SIGKILL), checks that b stays blocked,
# then boots a again (a2), whose sm-notify tells the server's statd that
# guest-a rebooted: the server drops a's lock and b gets it.
if [ "$GUEST_ROLE" = a ]; then
  lockcount with fcntl "$LOCKS/kill" sh -c \
    "touch $LOCKS/a-holds-kill; sleep 1; echo NFSGW-KILL-GUEST; sleep $KILL_WAIT" || true
  fail "a: still running after NFSGW-KILL-GUEST (the host did not kill it)"
fi
wait_file "$LOCKS/a-holds-kill" 120
st=0; lockcount try fcntl "$LOCKS/kill" || st=$?
[ "$st" = 1 ] || fail "b: a non-blocking lock while a holds it: status $st (0 = granted)"
echo "NFSGW-LOCK-WAITING-KILL"
timeout "$KILL_WAIT" lockcount with fcntl "$LOCKS/kill" true || fail "b: never got the lock a held when it was killed"
touch "$LOCKS/b-done-kill"

# Phase 4 (RESTART=1: against nfsgw): b holds locks/restart while the host kills
# nfsgw and starts it again; b's lockd reclaims it when nfsgw's SM_NOTIFY comes.
if [ "${RESTART:-0}" = 1 ]; then
  lockcount with fcntl "$LOCKS/restart" sh -c \
    "echo NFSGW-RESTART-HOLDING; sleep $RESTART_HOLD" || fail "b: holding locks/restart across nfsgw's restart"
  echo "NFSGW-RESTART-RELEASED"
fi
emit "b done"
mount_nfs -u /mnt

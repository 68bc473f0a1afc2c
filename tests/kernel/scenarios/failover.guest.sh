# Guest half of "failover": through HAProxy, node A serving, walk the tree and read
# the first part of big.bin; ask the host to stop node A; after STOP_WAIT seconds
# read the rest of big.bin and walk the tree again, now through node B, with the
# handles node A gave (actimeo=0: every stat asks the server). Hard mount: calls
# during the switch are retried until node B answers.
. /bin/lib.sh
mount_export /mnt "hard,actimeo=0,timeo=20,retrans=3"
t0=$(now_ms)
ls -lRn /mnt/tree > /tmp/before
echo "walk through node A: $(grep -c . /tmp/before) lines in $(( $(now_ms) - t0 )) ms"
big=$({
  dd if=/mnt/big.bin bs=1M count="$FIRST_MIB" 2>/dev/null
  echo "read $FIRST_MIB MiB through node A; NFSGW-STOP-NODE-A" >&2
  # The host stops node A within a second of seeing the marker on the console.
  # Waiting for a sign through the mount instead (a file the host creates on the
  # origin) would measure nfsgw's own coherency windows on node B, not the
  # failover. The host checks afterwards that the rest came through node B.
  sleep "$STOP_WAIT"
  t1=$(now_ms)
  dd if=/mnt/big.bin bs=1M skip="$FIRST_MIB" 2>/dev/null
  echo "read the rest in $(( $(now_ms) - t1 )) ms" >&2
} | ddsum sum)
echo "big.bin: $big"
t0=$(now_ms)
ls -lRn /mnt/tree > /tmp/after
echo "walk through node B: $(grep -c . /tmp/after) lines in $(( $(now_ms) - t0 )) ms"
[ "$(stat -c %s /mnt/big.bin)" = $((FAILOVER_MIB * 1024 * 1024)) ] || fail "big.bin size"
{
  echo "big $big"
  sed 's/^/before /' /tmp/before
  sed 's/^/after /' /tmp/after
} > "$DATA"
mount_nfs -u /mnt

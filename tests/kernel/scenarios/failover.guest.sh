# Guest half of "failover": through HAProxy, node A serving, walk the tree and read
# the first part of big.bin; ask the host to stop node A; wait until it has; walk
# the tree again and read the rest of big.bin, now through node B, with the handles
# node A gave (actimeo=0: every stat asks the server). Hard mount: calls during
# the switch are retried until node B answers.
. /bin/lib.sh
mount_export /mnt "hard,actimeo=0,timeo=20,retrans=3"
t0=$(now_ms)
ls -lRn /mnt/tree > /tmp/before
echo "walk through node A: $(grep -c . /tmp/before) lines in $(( $(now_ms) - t0 )) ms"
big=$({
  dd if=/mnt/big.bin bs=1M count="$FIRST_MIB" 2>/dev/null
  echo "read $FIRST_MIB MiB through node A; NFSGW-STOP-NODE-A" >&2
  t1=$(now_ms)
  i=0
  while [ ! -e /mnt/failover/a-stopped ]; do
    i=$((i + 1)); [ "$i" -le 600 ] || { echo "guest FAIL: node A was not stopped" >&2; exit 1; }
    sleep 0.2
  done
  echo "node A stopped after $(( $(now_ms) - t1 )) ms; reading the rest through node B" >&2
  dd if=/mnt/big.bin bs=1M skip="$FIRST_MIB" 2>/dev/null
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

# Guest half of "writeback"; GUEST_ROLE is a or b. Guest a runs fsx with the
# first seed (printing NFSGW-KILL-GATEWAY at op FSX_KILL_AT, when the host
# kills nfsgw) while it runs the basic and special suite (fstests); guest b runs
# fsx with the other two seeds at once. Each fsx checks every read against its
# model; at the end the guest sends each model's checksum (ddsum) to the host,
# which compares it with the origin's file after `nfsgw flush`.
. /bin/lib.sh
# hard: while nfsgw is down every call waits and is retried (timeo 2 s), the
# programs see no error.
mount_export /mnt "hard,timeo=20,retrans=3"
dir=/mnt/wb
[ -d "$dir" ] || fail "no $dir on the export"

# fsx_bg SEED [FSX OPTIONS]: runs fsx on $dir/fsx-SEED in the background; its
# exit status lands in /tmp/rc-SEED.
fsx_bg() {
  local seed=$1
  shift
  ( if fsx -C -S "$seed" -N "$FSX_OPS" -l "$FSX_MAXLEN" -o "$FSX_MAXOP" -m "/tmp/model-$seed" "$@" "$dir/fsx-$seed"
    then echo 0 > "/tmp/rc-$seed"; else echo $? > "/tmp/rc-$seed"; fi ) &
}
# fsx_result SEED (after wait): checks one run's status, sends its model's checksum.
fsx_result() {
  local seed=$1 rc
  rc=$(cat "/tmp/rc-$seed" 2>/dev/null || echo missing)
  [ "$rc" = 0 ] || fail "fsx seed $seed failed (status $rc)"
  emit "fsx $seed fsx-$seed $(ddsum sum < "/tmp/model-$seed")"
}

t0=$(now_ms)
if [ "$GUEST_ROLE" = a ]; then
  set -- $FSX_SEEDS
  fsx_bg "$1" -K "$FSX_KILL_AT"
  mkdir "$dir/suite-a"
  suite=0
  fstests -C all "$dir/suite-a" || suite=$?
  echo "a: basic and special ended (status $suite) after $(( $(now_ms) - t0 )) ms"
  # fsx goes on; its result is reported whatever the suite's.
  wait
  echo "a: fsx done after $(( $(now_ms) - t0 )) ms"
  fsx_result "$1"
  [ "$suite" = 0 ] || fail "fstests basic/special failed"
  rmdir "$dir/suite-a" || fail "suite-a not empty"
else
  set -- $FSX_SEEDS
  fsx_bg "$2"
  fsx_bg "$3"
  wait
  echo "b: fsx done after $(( $(now_ms) - t0 )) ms"
  fsx_result "$2"
  fsx_result "$3"
fi
emit "$GUEST_ROLE done"
mount_nfs -u /mnt

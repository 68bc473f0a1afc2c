# Guest half of "dd": read in.bin, write out.bin, remount, read out.bin back.
. /bin/lib.sh
mount_export /mnt
t0=$(now_ms)
in_sum=$(dd if=/mnt/dd/in.bin bs=1M 2>/dev/null | ddsum sum)
echo "read ${DD_MIB} MiB in $(( $(now_ms) - t0 )) ms"

t0=$(now_ms)
ddsum gen "$(now_ms)" "$DD_MIB" 2>/tmp/out.sum | dd of=/mnt/dd/out.bin bs=1M conv=fsync 2>/dev/null
out_sum=$(cat /tmp/out.sum)
echo "wrote ${DD_MIB} MiB in $(( $(now_ms) - t0 )) ms"
[ "$(stat -c %s /mnt/dd/out.bin)" = $((DD_MIB * 1024 * 1024)) ] || fail "out.bin size"

# A fresh mount drops the client's cached pages, so this read comes from the server.
mount_nfs -u /mnt
mount_export /mnt
t0=$(now_ms)
back_sum=$(dd if=/mnt/dd/out.bin bs=1M 2>/dev/null | ddsum sum)
echo "read back ${DD_MIB} MiB in $(( $(now_ms) - t0 )) ms"
[ "$back_sum" = "$out_sum" ] || fail "read-back checksum '$back_sum' differs from written '$out_sum'"
{ echo "in $in_sum"; echo "out $out_sum"; echo "back $back_sum"; } > "$DATA"
mount_nfs -u /mnt

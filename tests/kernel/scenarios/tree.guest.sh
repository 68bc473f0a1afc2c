# Guest half of "tree": ls -lRn of the whole tree, streamed to the host.
. /bin/lib.sh
mount_export /mnt
t0=$(now_ms)
ls -lRn /mnt/tree > /tmp/listing
echo "ls -lRn: $(grep -c . /tmp/listing) lines in $(( $(now_ms) - t0 )) ms"
cat /tmp/listing > "$DATA"
mount_nfs -u /mnt

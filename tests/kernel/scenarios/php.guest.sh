# Guest half of "php": phploop over the host's files, summary to the host.
. /bin/lib.sh
mount_export /mnt
t0=$(now_ms)
phploop /mnt/php "$PHP_FILES" "$PHP_ITERS" "$PHP_PROCS" > /tmp/php.out || { cat /tmp/php.out; fail "phploop"; }
cat /tmp/php.out
echo "phploop took $(( $(now_ms) - t0 )) ms"
cat /tmp/php.out > "$DATA"
mount_nfs -u /mnt

# Smoke: mount with explicit ports, list, umount.
. /bin/lib.sh
mount_export /mnt
ls -la /mnt > "$DATA"
mount_nfs -u /mnt

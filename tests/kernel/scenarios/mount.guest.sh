# Guest half of "mount": rpcbind-resolved mount, explicit-port mount, umount.
. /bin/lib.sh

check_mounted() {
  grep -q " /mnt nfs " /proc/mounts || fail "/mnt not an nfs mount"
  [ "$(cat /mnt/hello.txt)" = "hello from the origin" ] || fail "hello.txt content"
}
check_unmounted() {
  if grep -q " /mnt nfs " /proc/mounts; then fail "/mnt still mounted"; fi
  [ ! -e /mnt/hello.txt ] || fail "hello.txt visible after umount"
}

mkdir -p /mnt
echo "mount through rpcbind at $SERVER:111"
# Other servers on the shared host briefly take rpcbind's entries when they
# start or stop (the host re-claims them within 0.1 s), so allow a few tries.
tries=0
until mount_nfs "$SERVER:$EXPORT_PATH" /mnt "vers=3,proto=tcp,mountproto=tcp,addr=$SERVER,mountaddr=$SERVER,nolock"; do
  tries=$((tries + 1))
  [ "$tries" -lt 5 ] || fail "rpcbind mount"
  echo "rpcbind mount failed, retry $tries"
  sleep 1
done
grep " /mnt nfs " /proc/mounts
# No port in the options means the kernel resolved both ports through rpcbind;
# hello.txt's content (checked next) proves it reached the server under test.
if grep " /mnt nfs " /proc/mounts | grep -qE ",(mount)?port="; then fail "ports were not resolved via rpcbind"; fi
check_mounted
echo "written via rpcbind mount" > /mnt/via-rpcbind.txt
mount_nfs -u /mnt || fail "umount after rpcbind mount"
check_unmounted

echo "mount with explicit ports $NFS_PORT/$MOUNT_PORT"
mount_export /mnt || fail "explicit-port mount"
check_mounted
echo "written via explicit ports" > /mnt/via-ports.txt
[ "$(cat /mnt/via-rpcbind.txt)" = "written via rpcbind mount" ] || fail "rpcbind-mount file not visible"
mount_nfs -u /mnt || fail "umount after explicit mount"
check_unmounted
echo "mount scenario ok"

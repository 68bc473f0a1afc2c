# Helpers shared by the guest halves of the scenarios (sourced, busybox sh).

now_ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }

# Standard NFSv3 mount options with explicit ports; extra options appended.
nfs_opts() {
  echo "vers=3,proto=tcp,port=$NFS_PORT,mountport=$MOUNT_PORT,mountproto=tcp,addr=$SERVER,mountaddr=$SERVER,nolock${1:+,$1}"
}

# mount_export DIR [EXTRA_OPTS]: mounts the export with explicit ports.
mount_export() {
  mkdir -p "$1"
  mount_nfs "$SERVER:$EXPORT_PATH" "$1" "$(nfs_opts "$2")"
}

# Writes a line to the host-side data file.
emit() { echo "$*" > "$DATA"; }

fail() { echo "guest FAIL: $*"; exit 1; }

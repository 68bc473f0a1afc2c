# Scenario "mount": the guest mounts once through rpcbind (no ports given, the
# kernel asks rpcbind at 10.0.2.2:111) and once with explicit ports, reads a
# known file each time and unmounts. Runs alone (RESOURCE_LOCK rpcbind).
NEEDS_RPCBIND=1
GUEST_TIMEOUT=90
host_prepare() {
  echo "hello from the origin" > "$EXPORT_DIR/hello.txt"
}
host_verify() {
  # The guest wrote one marker file per mount; both must have reached the origin.
  [ "$(cat "$EXPORT_DIR/via-rpcbind.txt")" = "written via rpcbind mount" ] || return 1
  [ "$(cat "$EXPORT_DIR/via-ports.txt")" = "written via explicit ports" ] || return 1
}

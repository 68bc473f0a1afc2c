# Scenario "dd": 256 MiB each way. The host puts in.bin (pseudo-random) in the
# export; the guest dd-reads it and reports its checksum. The guest then dd-writes
# 256 MiB of generated data to out.bin (its generator reports the checksum of
# what it produced), unmounts, mounts again and reads out.bin back. The host
# checks: the guest's in.bin checksum equals the host's, and the origin's
# out.bin has the checksum the guest generated. Checksums: ddsum.c (sha256sum
# runs at a few MB/s under TCG). DD_MIB in the environment shrinks it for
# hand runs.
GUEST_TIMEOUT=${DD_TIMEOUT:-360}
GUEST_MEM=768
DD_MIB=${DD_MIB:-256}
guest_env() { echo "DD_MIB=$DD_MIB"; }
host_prepare() {
  gcc -O2 -o "$RUN/ddsum" "$here/guest/ddsum.c"
  mkdir -p "$EXPORT_DIR/dd"
  "$RUN/ddsum" gen "$RANDOM$RANDOM" "$DD_MIB" > "$EXPORT_DIR/dd/in.bin" 2>/dev/null
  "$RUN/ddsum" sum < "$EXPORT_DIR/dd/in.bin" > "$RUN/in.sum"
}
host_verify() {
  local d=$RUN/data-single host_out
  cat "$d"
  [ "$(awk '$1 == "in" { print $2, $3 }' "$d")" = "$(cat "$RUN/in.sum")" ] || { echo "in.bin checksum differs: host $(cat "$RUN/in.sum")"; return 1; }
  host_out=$("$RUN/ddsum" sum < "$EXPORT_DIR/dd/out.bin")
  [ "$(awk '$1 == "out" { print $2, $3 }' "$d")" = "$host_out" ] || { echo "out.bin on the origin ($host_out) is not what the guest wrote"; return 1; }
  [ "$host_out" != "$(cat "$RUN/in.sum")" ] || { echo "out.bin equals in.bin"; return 1; }
}

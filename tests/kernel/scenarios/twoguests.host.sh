# Scenario "twoguests": two guests mount the same export at once with actimeo=1
# and talk through it. Each change is made by one guest and must show up in the
# other once its attribute cache expires, found by bounded polling (no timing
# assertions): a new file appearing in a folder, a file's content, and a size
# change seen through stat alone (no open, so no close-to-open revalidation).
# The host then checks the final files on the origin.
GUEST_ROLES="a b"
GUEST_TIMEOUT=150
host_prepare() {
  mkdir -p "$EXPORT_DIR/shared"
  printf 'v0\n' > "$EXPORT_DIR/shared/counter"
}
host_verify() {
  local s=$EXPORT_DIR/shared
  cat "$RUN/data-a" "$RUN/data-b"
  [ "$(cat "$s/counter")" = "$(printf 'v0\nv1-from-a\nv2-from-b')" ] || { echo "counter: $(cat "$s/counter")"; return 1; }
  [ "$(cat "$s/from-a")" = hello-from-a ] && [ "$(cat "$s/from-b")" = hello-from-b ] || { echo "from-a/from-b content"; return 1; }
  grep -q '^a done' "$RUN/data-a" && grep -q '^b done' "$RUN/data-b"
}

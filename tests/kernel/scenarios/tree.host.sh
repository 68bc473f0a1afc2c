# Scenario "tree": the host builds a nested tree of 5,000 files in 110 folders
# (sizes 0..4095 bytes); the guest runs ls -lRn over it and sends the listing
# back; the host compares every name, type and file size with its own view.
GUEST_TIMEOUT=150
host_prepare() {
  local t=$EXPORT_DIR/tree d1 d2 f n=0
  for d1 in $(seq -w 0 9); do
    for d2 in $(seq -w 0 9); do
      mkdir -p "$t/top$d1/sub$d2"
      for f in $(seq -w 0 49); do
        # Builtin printf only: no process per file, so 5,000 files take ~1 s.
        printf "%*s" $(( (n * 37) % 4096 )) "" > "$t/top$d1/sub$d2/f$f.dat"
        n=$((n + 1))
      done
    done
  done
  ln -s top0/sub0/f00.dat "$t/link-to-first"
}
# listing_from_ls: turns busybox "ls -lRn ROOT" output into "TYPE PATH [SIZE]"
# lines relative to ROOT (files carry sizes, folders and symlinks do not).
listing_from_ls() {
  awk -v root="$1" '
    /^\// && /:$/ { dir = substr($0, 1, length($0) - 1); sub("^" root "/?", "", dir); next }
    /^total / || NF == 0 { next }
    {
      t = substr($1, 1, 1); name = $9
      path = (dir == "" ? name : dir "/" name)
      if (t == "-") print "f " path " " $5
      else if (t == "d") print "d " path
      else if (t == "l") print "l " path
      else print "? " path
    }' | LC_ALL=C sort
}
host_verify() {
  (cd "$EXPORT_DIR/tree" && find . -mindepth 1 -printf '%y %P %s\n') |
    awk '$1 == "f" { print; next } { print $1, $2 }' | LC_ALL=C sort > "$RUN/host-listing"
  listing_from_ls /mnt/tree < "$RUN/data-single" > "$RUN/guest-listing"
  local n; n=$(wc -l < "$RUN/host-listing")
  echo "host entries: $n, guest entries: $(wc -l < "$RUN/guest-listing")"
  [ "$n" -ge 5000 ] || { echo "host tree too small"; return 1; }
  diff -u "$RUN/host-listing" "$RUN/guest-listing" | head -40
  cmp -s "$RUN/host-listing" "$RUN/guest-listing"
}

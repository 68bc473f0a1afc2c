# Scenario "ops": the guest creates, writes, appends, truncates, renames (also
# over a file and across folders), links, symlinks, chmods, chowns, touches,
# makes and removes folders and files; afterwards the host checks the result
# on the origin's own filesystem: names, sizes, modes, owners, link counts,
# symlink targets, mtimes and content checksums, and that the guest's final view
# agrees with it.
GUEST_TIMEOUT=120
host_verify() {
  local o=$EXPORT_DIR/ops bad=0
  # TYPE|PATH|SIZE|MODE|UID|GID|NLINK, as the host sees it
  (cd "$o" && find . -mindepth 1 | LC_ALL=C sort | while read -r p; do
     stat -c "%F|%n|%s|%a|%u|%g|%h" "$p"; done) | sed 's#|\./#|#' > "$RUN/host-view"
  cat > "$RUN/expected-view" <<'VIEW'
directory|a|SIZE|755|0|0|3
directory|a/b|SIZE|755|0|0|2
regular file|a/b/notes-link|23|640|1234|5678|2
regular file|a/notes.txt|23|640|1234|5678|2
directory|c|SIZE|751|0|0|2
symbolic link|c/dangling|15|777|0|0|1
regular file|c/final.txt|6|644|0|0|1
symbolic link|c/rel-link|14|777|2345|6789|1
regular file|c/victim.txt|7|644|0|0|1
regular file|c/zeds|300000|644|0|0|1
directory|keep|SIZE|4755|0|0|2
VIEW
  # Folder sizes are the origin filesystem's business; compare the rest.
  sed -E 's/^(directory\|[^|]*)\|[0-9]+\|/\1|SIZE|/' "$RUN/host-view" > "$RUN/host-view.cmp"
  if ! diff -u "$RUN/expected-view" "$RUN/host-view.cmp"; then echo "origin tree differs from expected"; bad=1; fi
  # The guest's last view must match the origin's (folder sizes aside).
  sed -E 's/^(directory\|[^|]*)\|[0-9]+\|/\1|SIZE|/' "$RUN/data-single" | LC_ALL=C sort -t'|' -k2,2 > "$RUN/guest-view.cmp"
  LC_ALL=C sort -t'|' -k2,2 "$RUN/host-view.cmp" > "$RUN/host-view.sorted"
  if ! diff -u "$RUN/host-view.sorted" "$RUN/guest-view.cmp"; then echo "guest view differs from origin"; bad=1; fi
  # Symlink targets, mtimes and contents.
  [ "$(readlink "$o/c/rel-link")" = ../a/notes.txt ] || { echo "rel-link target"; bad=1; }
  [ "$(readlink "$o/c/dangling")" = /nowhere/at/all ] || { echo "dangling target"; bad=1; }
  [ "$(stat -c %Y "$o/c/final.txt")" = 1614834367 ] || { echo "final.txt mtime $(stat -c %Y "$o/c/final.txt")"; bad=1; }
  [ "$(stat -c %Y "$o/a/b")" = 946684798 ] || { echo "a/b mtime $(stat -c %Y "$o/a/b")"; bad=1; }
  [ "$(stat -c %i "$o/a/notes.txt")" = "$(stat -c %i "$o/a/b/notes-link")" ] || { echo "hard link is a copy"; bad=1; }
  local want
  want=$( { printf 'first line\nsecond line\n' | sha256sum; printf 'draft\n' | sha256sum; printf 'winner\n' | sha256sum;
            { head -c 1000 /dev/zero | tr '\0' z; head -c 299000 /dev/zero; } | sha256sum; } | cut -d' ' -f1)
  local got
  got=$(cat "$o/a/notes.txt" | sha256sum; cat "$o/c/final.txt" | sha256sum; cat "$o/c/victim.txt" | sha256sum;
        cat "$o/c/zeds" | sha256sum)
  got=$(echo "$got" | cut -d' ' -f1)
  [ "$want" = "$got" ] || { echo "content checksums differ"; echo "want: $want"; echo "got: $got"; bad=1; }
  return $bad
}

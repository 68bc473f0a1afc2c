# Scenario "php": the access pattern of a PHP site on NFS. The host writes 200
# small files; in the guest 4 processes each make 5 passes of stat, open, read,
# close over all of them, plus a stat and an open of a missing file per file,
# checking every size, byte and ENOENT (phploop.c). The host then checks that
# each worker reported the full count.
GUEST_TIMEOUT=120
PHP_FILES=200 PHP_ITERS=5 PHP_PROCS=4
guest_env() { echo "PHP_FILES=$PHP_FILES"; echo "PHP_ITERS=$PHP_ITERS"; echo "PHP_PROCS=$PHP_PROCS"; }
host_prepare() {
  local d=$EXPORT_DIR/php i r line
  mkdir -p "$d"
  for ((i = 0; i < PHP_FILES; i++)); do
    printf -v line "<?php echo 'file %03d'; ?>\n" "$i"
    : > "$d/$(printf 'f%03d.php' "$i")"
    for ((r = 0; r < i % 13 + 1; r++)); do printf '%s' "$line" >> "$d/$(printf 'f%03d.php' "$i")"; done
  done
}
host_verify() {
  local want="$((PHP_FILES * PHP_ITERS)) stats $((PHP_FILES * PHP_ITERS)) reads $((PHP_FILES * PHP_ITERS)) misses 0 errors"
  local ok; ok=$(grep -c ": $want\$" "$RUN/data-single" || true)
  cat "$RUN/data-single"
  [ "$ok" = "$PHP_PROCS" ] || { echo "expected $PHP_PROCS workers with '$want'"; return 1; }
  # The guest must not have created the probed names.
  ! ls "$EXPORT_DIR/php" | grep -q missing
}

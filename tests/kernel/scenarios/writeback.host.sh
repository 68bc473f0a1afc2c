# Scenario "writeback": the kernel client on a write-back export (gateway), with
# nfsgw killed (kill -9) and restarted on the same cache dir in the middle.
# Two guests at once (hard mounts): guest a runs fsx with the first seed and, at
# the same time, the basic and special suite (guest/fstests.c); guest b runs fsx
# with the other two seeds at once. When guest a's fsx passes op FSX_KILL_AT it
# prints NFSGW-KILL-GATEWAY; host_during then kills nfsgw with SIGKILL, waits
# KILL_DOWN seconds (the guests' calls hang and are retried) and starts it again
# with the same config and cache dir. At the end the host runs `nfsgw flush` and
# checks that each fsx file on the origin's disk has the checksum of the model
# its guest sent (ddsum), that the suite left nothing behind, and that nothing
# is left dirty.
#
# Knobs (environment): WRITEBACK_DELAY (write_back_delay, default 1s; the ctest
# variants use 1s and 1h: with 1h the data stays dirty across the kill, which
# the host checks in nfsgw's stats before the kill, in the restarted nfsgw's log
# and on the origin before the flush), FSX_OPS (operations per seed, default
# 10000), FSX_SEEDS (three seeds, default "101 202 303"), FSX_KILL_AT (default
# FSX_OPS/2), FSX_MAXLEN / FSX_MAXOP (file size and op length caps, 256 KiB /
# 64 KiB), KILL_DOWN (seconds nfsgw stays dead, default 3), WRITEBACK_TIMEOUT
# (per guest, default 480 s).
# Against the origin target (the control) the same guests run with no kill and
# no flush, and the origin's files must equal the models all the same.
GUEST_ROLES="a b"
GUEST_MEM=512
GUEST_TIMEOUT=${WRITEBACK_TIMEOUT:-480}
GW_STOPPED_BY_SCENARIO=1
WRITEBACK_DELAY=${WRITEBACK_DELAY:-1s}
FSX_OPS=${FSX_OPS:-10000}
FSX_SEEDS=${FSX_SEEDS:-101 202 303}
FSX_KILL_AT=${FSX_KILL_AT:-$((FSX_OPS / 2))}
FSX_MAXLEN=${FSX_MAXLEN:-262144}
FSX_MAXOP=${FSX_MAXOP:-65536}
KILL_DOWN=${KILL_DOWN:-3}
GW_EXPORT_EXTRA="writes = \"back\"
write_back_delay = \"$WRITEBACK_DELAY\""
# A delay of a minute or more: nothing may reach the origin before the flush.
case "$WRITEBACK_DELAY" in
  *h|*m|*min) wb_long=1 ;;
  *) wb_long=0 ;;
esac
[ "$(echo $FSX_SEEDS | wc -w)" = 3 ] || die "FSX_SEEDS needs three seeds"

guest_env() {
  echo "FSX_OPS=$FSX_OPS"; echo "FSX_SEEDS='$FSX_SEEDS'"; echo "FSX_KILL_AT=$FSX_KILL_AT"
  echo "FSX_MAXLEN=$FSX_MAXLEN"; echo "FSX_MAXOP=$FSX_MAXOP"
}

host_prepare() {
  gcc -O2 -o "$RUN/ddsum" "$here/guest/ddsum.c"
  mkdir -p "$EXPORT_DIR/wb"
  log "writeback: $FSX_OPS ops per seed (seeds $FSX_SEEDS), kill at op $FSX_KILL_AT of seed ${FSX_SEEDS%% *}," \
      "write_back_delay $WRITEBACK_DELAY"
}

gw_config=$RUN/gw/nfsgw.toml
restarted_pid() { cat "$RUN/gw/restarted.pid" 2>/dev/null; }

# wb_stats FIELD: one number from `nfsgw stats --json`'s write_back section
# (its field names are unique in the document; no jq on CI).
wb_stats() {
  local json
  json=$(timeout 20 "$NFSGW_BIN" stats --config "$gw_config" --json 2>/dev/null) || return 1
  echo "$json" | grep -o "\"write_back\":{[^}]*}" | grep -o "\"$1\":[0-9]*" | cut -d: -f2 | grep .
}

wb_stats_line() {
  timeout 20 "$NFSGW_BIN" stats --config "$gw_config" --json 2>/dev/null | grep -o '"write_back":{[^}]*}'
}

# In the background while the guests run (gateway only): kill nfsgw when guest a
# asks, start it again, and stop the guests if the new nfsgw dies.
host_during() {
  [ "$target" = gateway ] || return 0
  local console=$RUN/console-a i dirty new
  for i in $(seq $((GUEST_TIMEOUT * 5))); do
    grep -q NFSGW-KILL-GATEWAY "$console" 2>/dev/null && break
    kill -0 "$(cat "$RUN/qemu-a.pid" 2>/dev/null)" 2>/dev/null || [ "$i" -lt 50 ] || break
    sleep 0.2
  done
  grep -q NFSGW-KILL-GATEWAY "$console" 2>/dev/null || { log "guest a never printed NFSGW-KILL-GATEWAY"; return 1; }
  dirty=$(wb_stats dirty_bytes) || { log "nfsgw stats failed before the kill"; return 1; }
  echo "$dirty" > "$RUN/dirty-before-kill"
  log "dirty bytes before the kill: $dirty; kill -9 nfsgw (pid $gw_pid)"
  kill -KILL "$gw_pid"
  for i in $(seq 100); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$gw_pid" 2>/dev/null && { log "nfsgw survived SIGKILL"; return 1; }
  sleep "$KILL_DOWN"
  echo "--- restarted after kill -9 ---" >> "$RUN/gw/nfsgw.log"
  "$NFSGW_BIN" --config "$gw_config" >> "$RUN/gw/nfsgw.log" 2>&1 &
  new=$!
  echo "$new" > "$RUN/gw/restarted.pid"
  for i in $(seq 300); do
    kill -0 "$new" 2>/dev/null || { tail -30 "$RUN/gw/nfsgw.log"; log "the restarted nfsgw exited"; return 1; }
    "$RUN/rpc_ping" "$GW_PORT" 100003 3 && "$RUN/rpc_ping" "$GW_PORT" 100005 3 && break
    [ "$i" -lt 300 ] || { log "the restarted nfsgw does not answer"; return 1; }
    sleep 0.1
  done
  log "nfsgw restarted (pid $new) after ${KILL_DOWN}s down: $(grep 'dirty log in' "$RUN/gw/nfsgw.log" | tail -1 | sed 's/.*dirty log in [^:]*: //')"
  touch "$RUN/gw-killed"
  # Until both guests end.
  while :; do
    local alive=0 f
    for f in "$RUN"/qemu-*.pid; do [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break
    if ! kill -0 "$new" 2>/dev/null; then
      log "the restarted nfsgw exited while the guests ran; stopping them"
      for f in "$RUN"/qemu-*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
      return 1
    fi
    sleep 1
  done
}

# origin_sums: "SEED HEX BYTES" of each fsx file on the origin's disk.
origin_sums() {
  local seed
  for seed in $FSX_SEEDS; do
    echo "$seed $("$RUN/ddsum" sum < "$EXPORT_DIR/wb/fsx-$seed")"
  done
}

host_verify() {
  cat "$RUN/data-a" "$RUN/data-b"
  grep -q '^a done' "$RUN/data-a" && grep -q '^b done' "$RUN/data-b" || { echo "a guest did not finish"; return 1; }
  awk '$1 == "fsx" { print $2, $4, $5 }' "$RUN/data-a" "$RUN/data-b" | sort > "$RUN/models"
  [ "$(wc -l < "$RUN/models")" = 3 ] || { echo "expected 3 fsx models"; return 1; }
  if [ "$target" = gateway ]; then
    local pid; pid=$(restarted_pid)
    [ -f "$RUN/gw-killed" ] && [ -n "$pid" ] || { echo "nfsgw was not killed and restarted"; return 1; }
    kill -0 "$pid" 2>/dev/null || { tail -30 "$RUN/gw/nfsgw.log"; echo "the restarted nfsgw died"; return 1; }
    # (A SETATTR of a dirty file's size or times flushes the file first, so
    # flushed_bytes is not 0 with 1h either: fsx truncates.)
    echo "before the flush, the restarted nfsgw's write-back stats: $(wb_stats_line)"
    # The kill was in the middle: the guests wrote on through the restarted nfsgw.
    local absorbed; absorbed=$(wb_stats writes_absorbed) || { echo "nfsgw stats failed"; return 1; }
    [ "$absorbed" -gt 0 ] || { echo "the restarted nfsgw took no WRITE: the kill was not mid-run"; return 1; }
    origin_sums | sort > "$RUN/origin-before-flush"
    local differ; differ=$(comm -23 "$RUN/models" "$RUN/origin-before-flush" | wc -l)
    echo "before the flush $differ of 3 fsx files at the origin differ from their models"
    if [ "$wb_long" = 1 ]; then
      # Positive controls: the data was dirty when nfsgw was killed, the
      # restarted nfsgw found it in its log, and it had not reached the origin.
      local before replayed
      before=$(cat "$RUN/dirty-before-kill")
      replayed=$(grep 'dirty log in' "$RUN/gw/nfsgw.log" | tail -1 | sed -n 's/.*: \([0-9]*\) dirty bytes of.*/\1/p')
      echo "dirty bytes: $before before the kill, $replayed replayed by the restarted nfsgw"
      [ "${before:-0}" -gt 0 ] || { echo "nothing was dirty when nfsgw was killed"; return 1; }
      [ "${replayed:-0}" -gt 0 ] || { echo "the restarted nfsgw replayed no dirty data"; return 1; }
      [ "$differ" -ge 1 ] || { echo "with write_back_delay $WRITEBACK_DELAY the origin had every file before the flush"; return 1; }
    fi
    local t0=$SECONDS
    timeout 180 "$NFSGW_BIN" flush --config "$gw_config" || { tail -30 "$RUN/gw/nfsgw.log"; echo "nfsgw flush failed"; return 1; }
    echo "nfsgw flush took $((SECONDS - t0)) s"
    local left; left=$(wb_stats dirty_bytes) || { echo "nfsgw stats failed"; return 1; }
    echo "after the flush: $(wb_stats_line)"
    [ "$left" = 0 ] || { echo "$left bytes still dirty after the flush"; return 1; }
  fi
  origin_sums | sort > "$RUN/origin-final"
  if ! diff -u "$RUN/models" "$RUN/origin-final"; then echo "the origin's fsx files differ from the guests' models"; return 1; fi
  # The suite removed its folders; silly-renamed files are gone.
  local extra; extra=$(cd "$EXPORT_DIR/wb" && ls -A | grep -v '^fsx-[0-9]*$' || true)
  [ -z "$extra" ] || { echo "left behind at the origin: $extra"; return 1; }
  echo "origin's fsx files equal the models: $(tr '\n' ';' < "$RUN/origin-final")"
}

host_cleanup() {
  local pid; pid=$(restarted_pid)
  [ -n "$pid" ] || return 0
  # run-scenario.sh's cleanup would signal the killed nfsgw's pid, long reaped
  # and free for reuse: the restarted one is stopped here instead.
  gw_pid=
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

# Scenario "failover" (target gateway only): two nfsgw nodes behind HAProxy in TCP
# mode, sharing the secret file and the export, each with its own cache. Node A is
# run-scenario.sh's nfsgw (port 24049); host_prepare starts node B (24050) and
# HAProxy (24051, A as the server, B as its backup), and the guest mounts HAProxy
# (hard, actimeo=0: every stat goes to the server with the handles the client
# holds). The guest walks the tree and reads the first part of big.bin through A,
# then prints NFSGW-STOP-NODE-A; host_during stops A (SIGTERM, or FAILOVER_SIGNAL)
# at once; the guest, STOP_WAIT seconds later, reads the rest of big.bin and walks
# the tree again: through B. The host checks: both listings equal the origin's,
# big.bin's checksum equals the origin's, A was stopped while the guest ran, and by
# HAProxy's log node A carried at most the first part and node B the rest.
GUEST_TIMEOUT=${FAILOVER_TIMEOUT:-240}
GUEST_MEM=512
GW_STOPPED_BY_SCENARIO=1
FAILOVER_MIB=${FAILOVER_MIB:-64}
FIRST_MIB=$((FAILOVER_MIB * 3 / 8))
STOP_WAIT=${STOP_WAIT:-5}
NODE_B_PORT=24050
BALANCER_PORT=24051
node_b_pid=
haproxy_pid=

guest_env() {
  echo "NFS_PORT=$BALANCER_PORT"; echo "MOUNT_PORT=$BALANCER_PORT"
  echo "FAILOVER_MIB=$FAILOVER_MIB"; echo "FIRST_MIB=$FIRST_MIB"; echo "STOP_WAIT=$STOP_WAIT"
}

host_prepare() {
  [ "$target" = gateway ] || die "the failover scenario runs against the gateway only"
  for port in "$NODE_B_PORT" "$BALANCER_PORT"; do
    ! "$RUN/rpc_ping" "$port" 100003 3 || die "port $port already answers NFS"
  done
  gcc -O2 -o "$RUN/ddsum" "$here/guest/ddsum.c"
  local t=$EXPORT_DIR/tree d f
  for d in $(seq -w 0 19); do
    mkdir -p "$t/dir$d"
    for f in $(seq -w 0 24); do printf "%*s" $(( (10#$d * 25 + 10#$f) * 13 % 2000 )) "" > "$t/dir$d/f$f"; done
  done
  "$RUN/ddsum" gen "$RANDOM$RANDOM" "$FAILOVER_MIB" > "$EXPORT_DIR/big.bin" 2>/dev/null
  "$RUN/ddsum" sum < "$EXPORT_DIR/big.bin" > "$RUN/big.sum"

  # The shared secret, in node A's cache dir before A starts (A keeps it).
  mkdir -p "$RUN/gw/cache" "$RUN/gwb/cache"
  head -c 32 /dev/urandom > "$RUN/gw/cache/secret"
  chmod 600 "$RUN/gw/cache/secret"
  cat > "$RUN/gwb/nfsgw.toml" <<TOML
[server]
listen = "127.0.0.1"
nfs_port = $NODE_B_PORT
mount_port = 0
register_rpcbind = false
threads = 2

[cache]
dir = "$RUN/gwb/cache"
secret_file = "$RUN/gw/cache/secret"

[[export]]
path = "/export"
origin = "nfs://127.0.0.1$EXPORT_DIR?nfsport=$ORIGIN_NFS_PORT&mountport=$ORIGIN_MOUNT_PORT"
squash = "none"
TOML
  log "starting nfsgw node B on $NODE_B_PORT"
  "$NFSGW_BIN" --config "$RUN/gwb/nfsgw.toml" > "$RUN/gwb/nfsgw.log" 2>&1 &
  node_b_pid=$!
  for i in $(seq 300); do
    kill -0 "$node_b_pid" 2>/dev/null || { tail -30 "$RUN/gwb/nfsgw.log"; die "node B exited"; }
    "$RUN/rpc_ping" "$NODE_B_PORT" 100003 3 && break
    [ "$i" -lt 300 ] || die "node B did not answer on $NODE_B_PORT"
    sleep 0.1
  done

  # The guest reaches the host's loopback as 10.0.2.2: slirp connects from
  # 127.0.0.1, so HAProxy listens there.
  cat > "$RUN/haproxy.cfg" <<CFG
global
  maxconn 256
  log stdout format raw local0
defaults
  mode tcp
  log global
  option tcplog
  timeout connect 1s
  timeout client 10m
  timeout server 10m
  retries 3
  option redispatch
frontend nfs
  bind 127.0.0.1:$BALANCER_PORT
  default_backend nfsgw
backend nfsgw
  server a 127.0.0.1:$GW_PORT check inter 200ms fall 1 rise 2 on-marked-down shutdown-sessions
  server b 127.0.0.1:$NODE_B_PORT check inter 200ms fall 1 rise 2 backup
CFG
  haproxy -c -f "$RUN/haproxy.cfg" >/dev/null || die "haproxy refused $RUN/haproxy.cfg"
  haproxy -db -f "$RUN/haproxy.cfg" > "$RUN/haproxy.log" 2>&1 &
  haproxy_pid=$!
  log "HAProxy on $BALANCER_PORT: a=$GW_PORT, b=$NODE_B_PORT (backup)"
}

# In the background while the guest runs: stop node A when the guest asks.
host_during() {
  local console=$RUN/console-single sig=${FAILOVER_SIGNAL:-TERM}
  for _ in $(seq $((GUEST_TIMEOUT * 5))); do
    grep -q NFSGW-STOP-NODE-A "$console" 2>/dev/null && break
    sleep 0.2
  done
  grep -q NFSGW-STOP-NODE-A "$console" 2>/dev/null || { log "the guest never asked to stop node A"; return 1; }
  log "stopping node A (pid $gw_pid) with SIG$sig"
  kill "-$sig" "$gw_pid"
  for _ in $(seq 150); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$gw_pid" 2>/dev/null && { log "node A did not exit"; return 1; }
  touch "$RUN/a-stopped"
  log "node A stopped; the guest goes on through node B"
}

host_verify() {
  local d=$RUN/data-single
  [ -f "$RUN/a-stopped" ] || { echo "node A was never stopped"; return 1; }
  kill -0 "$node_b_pid" 2>/dev/null || { tail -30 "$RUN/gwb/nfsgw.log"; echo "node B died"; return 1; }
  (cd "$EXPORT_DIR/tree" && find . -mindepth 1 -printf '%y %P %s\n') |
    awk '$1 == "f" { print; next } { print $1, $2 }' | LC_ALL=C sort > "$RUN/host-listing"
  [ "$(wc -l < "$RUN/host-listing")" -eq 520 ] || { echo "host tree has $(wc -l < "$RUN/host-listing") entries"; return 1; }
  local part
  for part in before after; do
    awk -v p="$part" '$1 == p { $1 = ""; sub(/^ /, ""); print }' "$d" | listing_from_ls /mnt/tree > "$RUN/guest-$part"
    echo "$part: $(wc -l < "$RUN/guest-$part") entries"
    diff -u "$RUN/host-listing" "$RUN/guest-$part" | head -20
    cmp -s "$RUN/host-listing" "$RUN/guest-$part" || { echo "the $part listing differs from the origin's"; return 1; }
  done
  local got; got=$(awk '$1 == "big" { print $2, $3 }' "$d")
  [ "$got" = "$(cat "$RUN/big.sum")" ] || { echo "big.bin: guest '$got', origin '$(cat "$RUN/big.sum")'"; return 1; }
  # HAProxy's session log (tcplog: ... nfsgw/SERVER Tw/Tc/Tt BYTES ...): node A
  # carried the first walk and part, with read-ahead; node B the rest of big.bin.
  local mib=1048576 on_a on_b
  on_a=$(awk '$4 == "nfsgw/a" { n += $6 } END { print n + 0 }' "$RUN/haproxy.log")
  on_b=$(awk '$4 == "nfsgw/b" { n += $6 } END { print n + 0 }' "$RUN/haproxy.log")
  echo "bytes to the guest: node A $on_a, node B $on_b"
  [ "$on_a" -gt $((FIRST_MIB * mib)) ] && [ "$on_a" -lt $(((FIRST_MIB + 8) * mib)) ] ||
    { cat "$RUN/haproxy.log"; echo "node A did not serve just the first part"; return 1; }
  [ "$on_b" -gt $(((FAILOVER_MIB - FIRST_MIB - 8) * mib)) ] ||
    { cat "$RUN/haproxy.log"; echo "node B did not serve the rest"; return 1; }
  grep -E "STALE|BADHANDLE|forged" "$RUN/gwb/nfsgw.log" && { echo "node B refused handles"; return 1; }
  return 0
}

host_cleanup() {
  [ -z "$haproxy_pid" ] || kill "$haproxy_pid" 2>/dev/null || true
  if [ -n "$node_b_pid" ]; then
    kill "$node_b_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$node_b_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$node_b_pid" 2>/dev/null || true
  fi
}

# listing_from_ls, as in tree.host.sh.
listing_from_ls() {
  awk -v root="$1" '
    /^\// && /:$/ { dir = substr($0, 1, length($0) - 1); sub("^" root "/?", "", dir); next }
    /^total / || NF == 0 { next }
    {
      t = substr($1, 1, 1); name = $9
      path = (dir == "" ? name : dir "/" name)
      if (t == "-") print "f " path " " $5
      else if (t == "d") print "d " path
      else print "? " path
    }' | LC_ALL=C sort
}

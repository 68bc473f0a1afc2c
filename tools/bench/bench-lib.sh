# Shared helpers of the benchmark scripts (wan-metadata.sh, metadata-loopback.sh,
# large-tree.sh, data-wan.sh). Sourced, not run. Every wait is bounded;
# every process started here is remembered and stopped by bench_cleanup (the
# scripts call it from their EXIT trap), by its own pid only.
#
# The caller sets: repo, build, work (a scratch folder it owns), bench, nfsgw.

bench_pids=()          # background processes to stop on exit (nfsgw, wan-emu, readers)
bench_origin_states=() # ganesha state folders to stop on exit

bench_log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# bench_stop_pid PID [SIGNAL]: TERM (or SIGNAL), up to 5 s, then KILL; waits for it.
bench_stop_pid() {
  local pid=$1 sig=${2:-TERM}
  [ -n "$pid" ] || return 0
  kill -s "$sig" "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

bench_cleanup() {
  local p s
  for p in "${bench_pids[@]}"; do bench_stop_pid "$p"; done
  for s in "${bench_origin_states[@]}"; do
    if [ -f "$s/ganesha.pid" ]; then
      p=$(cat "$s/ganesha.pid")
      kill "$p" 2>/dev/null || true
      for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$p" 2>/dev/null || true
    fi
  done
}

# bench_start_origin STATE EXPORT_DIR NFS_PORT MOUNT_PORT: the loopback
# nfs-ganesha VFS origin of scripts/origin-ganesha.sh (NFSv3).
bench_start_origin() {
  bench_origin_states+=("$1")
  timeout 120 "$repo/scripts/origin-ganesha.sh" start "$1" "$2" "$3" "$4" >&2
}

# bench_start_wan LISTEN_NFS TARGET_NFS LISTEN_MOUNT TARGET_MOUNT CONTROL DELAY_MS LOG
#   [LISTEN=TARGET ...] (ports on 127.0.0.1; the extra pairs share the link: one
# delay, one cap); sets wan_pid, waits for "wan-emu ready" (30 s).
bench_start_wan() {
  local extra=() p
  for p in "${@:8}"; do extra+=(--pair "127.0.0.1:${p%=*}=127.0.0.1:${p#*=}"); done
  "$build/tools/wan-emu/wan-emu" --pair "127.0.0.1:$1=127.0.0.1:$2" --pair "127.0.0.1:$3=127.0.0.1:$4" \
    "${extra[@]}" --delay-ms "$6" --control "127.0.0.1:$5" >"$7" 2>&1 &
  wan_pid=$!
  bench_pids+=("$wan_pid")
  wan_ctl_port=$5
  for _ in $(seq 300); do
    grep -q "wan-emu ready" "$7" 2>/dev/null && return 0
    kill -0 "$wan_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "wan-emu did not start:" >&2; cat "$7" >&2; return 1
}

# bench_have_proxy_v4: whether nfs-ganesha's PROXY_V4 FSAL (Debian package
# nfs-ganesha-proxy-v4) is installed.
bench_have_proxy_v4() {
  [ -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalproxy_v4.so ] || ls /usr/lib*/ganesha/libfsalproxy_v4.so >/dev/null 2>&1
}

# bench_start_proxy_v4 WORK EXPORT_DIR O4_NFS O4_MNT PROXY_NFS PROXY_MNT TTL_S PROBE_DIR [PROXY_TO]
# nfs-ganesha PROXY_V4 re-exporting EXPORT_DIR over NFSv3 on PROXY_NFS/PROXY_MNT,
# Attr_Expiration_Time = TTL_S. PROXY_V4 speaks NFSv4 to its origin, and the origin
# of scripts/origin-ganesha.sh serves NFSv3 only, so its origin is a second
# nfs-ganesha VFS process serving NFSv4 from the same folder on O4_NFS (O4_MNT is
# unused by NFSv4 but must be a free port). The proxy connects to PROXY_TO
# (default O4_NFS): a wan-emu pair LISTEN=O4_NFS puts its origin traffic on the
# link. State and logs in WORK/origin4, WORK/proxy (origin4.log, proxy.log,
# origin4.conf, proxy.conf). Sets proxy_url; returns 1 when a GETATTR of
# PROBE_DIR/f000000 through it does not answer within about a minute.
bench_start_proxy_v4() {
  local work=$1 export_dir=$2 o4_nfs=$3 o4_mnt=$4 proxy_nfs=$5 proxy_mnt=$6 ttl_s=$7 probe=$8 to=${9:-$3}
  local role s proto nport mport path pseudo fsal
  for role in origin4 proxy; do
    s=$work/$role; mkdir -p "$s/recovery"
    bench_origin_states+=("$s")
    if [ "$role" = origin4 ]; then
      proto=4; nport=$o4_nfs; mport=$o4_mnt; path=$export_dir; pseudo=/origin4
      fsal="FSAL { Name = VFS; }"
    else
      proto=3; nport=$proxy_nfs; mport=$proxy_mnt; path=/origin4; pseudo=/proxy
      fsal="FSAL { Name = PROXY_V4; Srv_Addr = 127.0.0.1; NFS_Port = $to; Use_Privileged_Client_Port = false; }"
    fi
    cat >"$s/ganesha.conf" <<CONF
NFS_CORE_PARAM {
  Protocols = $proto;
  NFS_Port = $nport;
  MNT_Port = $mport;
  NLM_Port = 0;
  Rquota_Port = 0;
  Enable_NLM = false;
  Enable_RQUOTA = false;
  Bind_addr = 127.0.0.1;
}
NFS_KRB5 { Active_krb5 = false; }
NFSV4 { RecoveryRoot = "$s/recovery"; Graceless = true; }
EXPORT {
  Export_Id = 1;
  Path = "$path";
  Pseudo = "$pseudo";
  Access_Type = RW;
  Squash = No_Root_Squash;
  Protocols = $proto;
  Transports = TCP;
  SecType = sys;
  Attr_Expiration_Time = $ttl_s;
  $fsal
}
LOG { Default_Log_Level = WARN; }
CONF
    cp "$s/ganesha.conf" "$work/$role.conf"
    ganesha.nfsd -f "$s/ganesha.conf" -L "$work/$role.log" -p "$s/ganesha.pid" -N NIV_WARN || true
    for _ in $(seq 300); do
      (exec 3<>"/dev/tcp/127.0.0.1/$nport") 2>/dev/null && break
      sleep 0.2
    done
  done
  proxy_url="nfs://127.0.0.1/origin4?nfsport=$proxy_nfs&mountport=$proxy_mnt"
  for _ in $(seq 20); do
    if timeout 20 "$bench" --url "$proxy_url" --dir "$probe" --mode getattr --files 1 --duration 0.2 \
         --timeout 10 >>"$work/bench.log" 2>&1; then
      return 0
    fi
    sleep 2
  done
  tail -20 "$work/proxy.log" >&2 || true
  return 1
}

bench_wan() { timeout 15 "$build/tools/wan-emu/wan-emu" --ctl "127.0.0.1:$wan_ctl_port" "$@"; }

# bench_write_nfsgw_config FILE PORT CACHE_DIR ORIGIN_URL METADATA_CACHE(true|false) TTL MEMORY_MB [ANSWER_MEMO(true|false)]
#   [WRITES(through|back)]: back makes the export write-back with a write_back_delay of 1 h
bench_write_nfsgw_config() {
  cat >"$1" <<TOML
[server]
listen = "127.0.0.1"
nfs_port = $2
mount_port = 0
register_rpcbind = false

[cache]
dir = "$3"
memory_mb = $7
$([ "${8:-true}" = false ] && echo "answer_memo = false")

[[export]]
path = "/export"
origin = "$4"
squash = "none"
metadata_cache = $5
attr_ttl = "$6"
dir_ttl = "$6"
negative_ttl = "$6"
access_ttl = "$6"
$([ "${9:-through}" = back ] && printf 'writes = "back"\nwrite_back_delay = "1h"')
TOML
}

# bench_start_nfsgw CONFIG PORT LOG [PROBE_DIR]: starts nfsgw, waits (60 s)
# until a NULL call through it answers; sets nfsgw_pid. nfsgw-bench looks up its
# working folder before any call, so PROBE_DIR (default nfsgw-bench) must exist
# under the export: a folder of its own keeps the probe off the measured tree.
bench_start_nfsgw() {
  "$nfsgw" --config "$1" >>"$3" 2>&1 &
  nfsgw_pid=$!
  bench_pids+=("$nfsgw_pid")
  local url="nfs://127.0.0.1/export?nfsport=$2&mountport=$2"
  for _ in $(seq 60); do
    kill -0 "$nfsgw_pid" 2>/dev/null || break
    if timeout 10 "$bench" --url "$url" --dir "${4:-nfsgw-bench}" --mode null --count 1 --connections 1 \
         --timeout 5 >/dev/null 2>&1; then
      return 0
    fi
    sleep 1
  done
  echo "nfsgw did not answer within 60 s:" >&2; tail -30 "$3" >&2; return 1
}

# bench_kill9_nfsgw: the crash of the "after restart" figures.
bench_kill9_nfsgw() {
  kill -9 "$nfsgw_pid" 2>/dev/null || true
  wait "$nfsgw_pid" 2>/dev/null || true
}

bench_stop_nfsgw() { bench_stop_pid "$nfsgw_pid"; }

# bench_json_field JSON NAME -> raw value of a top-level scalar field
bench_json_field() { { grep -o "\"$2\":[^,}]*" <<<"$1" || true; } | head -1 | cut -d: -f2; }

# bench_median: numbers on stdin -> median ("-" when none)
bench_median() {
  sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2]+v[NR/2+1])/2}'
}

# bench_wan_calls STATS_JSON -> "total=N meta=N GETATTR=N LOOKUP=N ..." of the
# calls that reached the origin (NFS and MOUNT), from wan-emu's per-procedure
# counters; meta is total without READ and WRITE.
bench_wan_calls() {
  python3 - "$1" <<'PY'
import json, sys
names = {0: "NULL", 1: "GETATTR", 2: "SETATTR", 3: "LOOKUP", 4: "ACCESS", 5: "READLINK", 6: "READ",
         7: "WRITE", 16: "READDIR", 17: "READDIRPLUS", 18: "FSSTAT", 19: "FSINFO", 20: "PATHCONF"}
procs = json.loads(sys.argv[1]).get("procs", {})
out, total = {}, 0
for key, v in procs.items():
    prog, _, proc = key.split(":")
    name = names.get(int(proc), "proc" + proc) if prog == "100003" else "MOUNT" + proc
    out[name] = out.get(name, 0) + v["calls"]
    total += v["calls"]
meta = total - out.get("READ", 0) - out.get("WRITE", 0)
print(" ".join(["total=%d" % total, "meta=%d" % meta] + ["%s=%d" % kv for kv in sorted(out.items())]))
PY
}

# bench_cpu_s PID -> CPU seconds (user + system) the process has used so far
bench_cpu_s() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}

bench_machine() {
  echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

bench_commit() {
  local c dirty
  c=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
  dirty=$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
  if [ "$dirty" -gt 0 ]; then echo "$c + $dirty uncommitted file(s) in the work tree"; else echo "$c"; fi
}

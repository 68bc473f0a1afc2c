#!/usr/bin/env bash
# NLM lock and unlock through nfsgw against the origin straight (issue 21): one
# origin (nfs-ganesha with NLM on, the host's rpc.statd), one nfsgw serving NLM
# ([server] nlm_port) with the origin's lock manager behind it, and nfsgw-bench
# --mode locks (per request a LOCK of one byte as an owner of its own, then its
# UNLOCK). With --delay-ms D, wan-emu sits between nfsgw and the origin (NFS, MOUNT
# and NLM: D ms each way), and the origin straight is measured over the same link.
# Two loads, each through nfsgw and straight, alternating, --reps times:
#   serial  1 connection, 1 request at a time: the cost of one lock+unlock pair
#   load    4 connections x 8 requests in flight: pairs per second
# Prints medians: pairs/s (calls/s / 2), the p50 and p99 of a call, and ratios.
#
#   tools/bench/locks-loopback.sh [--build DIR] [--reps 3] [--duration 10] [--delay-ms 0] [--out DIR]
#
# Ports (127.0.0.1): origin 29190 (NFS) 29148 (MOUNT) 29145 (NLM); nfsgw 29191, its
# NLM 29192; wan-emu 29193-29196. Every run is bounded by --duration and timeout.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
reps=3
duration=10
delay_ms=0
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --delay-ms) delay_ms=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$reps" =~ ^[1-9]$ ]] || { echo "--reps must be 1..9" >&2; exit 2; }
[[ "$duration" =~ ^[0-9]+$ && "$duration" -ge 1 && "$duration" -le 120 ]] || { echo "--duration: 1..120 s" >&2; exit 2; }
[[ "$delay_ms" =~ ^[0-9]+$ && "$delay_ms" -le 200 ]] || { echo "--delay-ms: 0..200" >&2; exit 2; }

bench=$build/tools/nfsgw-bench/nfsgw-bench
nfsgw=$build/nfsgw
for b in "$bench" "$nfsgw" "$build/tools/wan-emu/wan-emu"; do [ -x "$b" ] || { echo "missing $b" >&2; exit 1; }; done
origin_nfs=29190; origin_mnt=29148; origin_nlm=29145; port=29191; nlm_port=29192
wan_nfs=29193; wan_mnt=29194; wan_nlm=29195; wan_ctl=29196

work=$(mktemp -d /tmp/bench-locks.XXXXXX)
# shellcheck source=tools/bench/bench-lib.sh
source "$repo/tools/bench/bench-lib.sh"
finish() {
  bench_cleanup
  [ -n "$out" ] && { mkdir -p "$out"; cp -f "$work"/*.log "$work"/*.jsonl "$out"/ 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT

bench_log "machine: $(bench_machine)"
export_dir=$work/export
mkdir -p "$export_dir"
"$bench" --prepare-local "$export_dir" --files 64 --size 4096
chmod -R a+rw "$export_dir"
ORIGIN_NLM_PORT=$origin_nlm bench_start_origin "$work/origin" "$export_dir" "$origin_nfs" "$origin_mnt"
# What nfsgw and the straight runs reach the origin through: the origin itself, or
# wan-emu in front of it.
reach_nfs=$origin_nfs; reach_mnt=$origin_mnt; reach_nlm=$origin_nlm
if [ "$delay_ms" -gt 0 ]; then
  bench_start_wan "$wan_nfs" "$origin_nfs" "$wan_mnt" "$origin_mnt" "$wan_ctl" "$delay_ms" "$work/wan.log" \
    "$wan_nlm=$origin_nlm"
  reach_nfs=$wan_nfs; reach_mnt=$wan_mnt; reach_nlm=$wan_nlm
fi
origin_url="nfs://127.0.0.1$export_dir?nfsport=$reach_nfs&mountport=$reach_mnt"
mkdir -p "$work/cache"
bench_write_nfsgw_config "$work/nfsgw.toml" "$port" "$work/cache" "$origin_url" true 10m 256
sed -i "s/^register_rpcbind = false$/register_rpcbind = false\nnlm_port = $nlm_port\nnlm_grace = \"0\"/" "$work/nfsgw.toml"
echo "origin_nlm_port = $reach_nlm" >>"$work/nfsgw.toml"
bench_start_nfsgw "$work/nfsgw.toml" "$port" "$work/nfsgw.log"
via_url="nfs://127.0.0.1/export?nfsport=$port&mountport=$port"
results=$work/results.jsonl
: >"$results"

# run NAME URL NLM_PORT CONNECTIONS INFLIGHT
run() {
  local j
  j=$(timeout $((duration + 60)) "$bench" --url "$2" --dir nfsgw-bench --files 64 --mode locks --nlm-port "$3" \
        --duration "$duration" --connections "$4" --inflight "$5" --json 2>>"$work/bench.log" | grep '^{' | tail -1) ||
    j=""
  echo "$1 $j" >>"$results"
  bench_log "$1: $(bench_json_field "$j" calls_per_s) calls/s, p50 $(bench_json_field "$j" p50_us) us, p99 $(bench_json_field "$j" p99_us) us, errors $(grep -o '"errors":{[^}]*}' <<<"$j")"
}
for rep in $(seq "$reps"); do
  bench_log "rep $rep: load $(cut -d' ' -f1-3 /proc/loadavg)"
  run "serial-origin" "$origin_url" "$reach_nlm" 1 1
  run "serial-nfsgw" "$via_url" "$nlm_port" 1 1
  run "load-origin" "$origin_url" "$reach_nlm" 4 8
  run "load-nfsgw" "$via_url" "$nlm_port" 4 8
done
timeout 10 "$nfsgw" stats --config "$work/nfsgw.toml" >"$work/stats.log" 2>&1 || true

med() { grep "^$1 " "$results" | while read -r _ j; do bench_json_field "$j" "$2"; done | bench_median; }
pairs() { awk -v c="$(med "$1" calls_per_s)" 'BEGIN { if (c == "-") print "-"; else printf "%.0f", c / 2 }'; }
echo "| load | through nfsgw: pairs/s | p50 / p99 of a call (us) | origin straight: pairs/s | p50 / p99 (us) | nfsgw / origin |"
echo "|---|---:|---:|---:|---:|---:|"
for l in serial load; do
  echo "| $l | $(pairs "$l-nfsgw") | $(med "$l-nfsgw" p50_us) / $(med "$l-nfsgw" p99_us) | $(pairs "$l-origin") | $(med "$l-origin" p50_us) / $(med "$l-origin" p99_us) | $(awk -v a="$(med "$l-nfsgw" calls_per_s)" -v b="$(med "$l-origin" calls_per_s)" 'BEGIN { if (b > 0) printf "%.2fx", a / b }') |"
done
echo "delay each way: $delay_ms ms; medians of $reps; every call counted, errors in $results"

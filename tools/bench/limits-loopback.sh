#!/usr/bin/env bash
# Bounded resources on loopback (issue 8): what hostile clients can make nfsgw hold,
# and whether they slow the others. One origin (nfs-ganesha), one nfsgw with its
# default [server] limits, nfsgw-bench and nfsgw-hostile (tools/hostile-clients):
#   idle     nfsgw-bench php (LOOKUP, GETATTR, ACCESS, READ), warm, alone
#   hostile  the same run while a slow reader (64 READs of 1 MiB outstanding, read
#            at 64 KiB/s) and a flood of garbage records (8 connections) run
#   hold     --hold-conns connections each send 4 READs of 1 MiB and read nothing for
#            10 s, then read everything; nfsgw's peak RSS sampled every 0.2 s
# idle and hostile alternate, --reps times; p99 ratios are of the medians.
#
#   tools/bench/limits-loopback.sh [--build DIR] [--reps 3] [--duration 10]
#        [--hold-conns 1000] [--out DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
reps=3
duration=10
hold_conns=1000
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --hold-conns) hold_conns=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$reps" =~ ^[1-9]$ ]] || { echo "--reps must be 1..9" >&2; exit 2; }
[[ "$duration" =~ ^[0-9]+$ && "$duration" -ge 1 && "$duration" -le 120 ]] || { echo "--duration: 1..120 s" >&2; exit 2; }
[[ "$hold_conns" =~ ^[0-9]+$ && "$hold_conns" -le 5000 ]] || { echo "--hold-conns: at most 5000" >&2; exit 2; }

bench=$build/tools/nfsgw-bench/nfsgw-bench
hostile=$build/tools/hostile-clients/nfsgw-hostile
nfsgw=$build/nfsgw
for b in "$bench" "$hostile" "$nfsgw"; do [ -x "$b" ] || { echo "missing $b" >&2; exit 1; }; done
origin_nfs=24690; origin_mnt=24648; port=24691

work=$(mktemp -d /tmp/bench-limits.XXXXXX)
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
"$bench" --prepare-local "$export_dir" --files 2000 --size 4096
head -c $((64 << 20)) /dev/urandom >"$export_dir/big.bin"
bench_start_origin "$work/origin" "$export_dir" "$origin_nfs" "$origin_mnt"
origin_url="nfs://127.0.0.1$export_dir?nfsport=$origin_nfs&mountport=$origin_mnt"
mkdir -p "$work/cache"
bench_write_nfsgw_config "$work/nfsgw.toml" "$port" "$work/cache" "$origin_url" true 10m 256
# Room for the held connections' descriptors (max_connections is 1,024 by default).
ulimit -n "$(ulimit -Hn)"
bench_start_nfsgw "$work/nfsgw.toml" "$port" "$work/nfsgw.log"
url="nfs://127.0.0.1/export?nfsport=$port&mountport=$port"
results=$work/results.jsonl
: >"$results"

run_php() {
  timeout $((duration + 60)) "$bench" --url "$url" --mode php --duration "$duration" --files 2000 --size 4096 \
    --connections 4 --inflight 8 --json 2>>"$work/bench.log" | grep '^{' | tail -1
}
# Warm the working set once (big.bin is read by the hostile clients themselves).
run_php >/dev/null || true

for rep in $(seq "$reps"); do
  j=$(run_php) || j=""
  echo "idle $rep $j" >>"$results"
  bench_log "idle #$rep: p50 $(bench_json_field "$j" p50_us) us p99 $(bench_json_field "$j" p99_us) us, $(bench_json_field "$j" calls_per_s) calls/s"
  "$hostile" slow --port "$port" --file big.bin --reads 64 --rate 65536 --duration $((duration + 4)) \
    >>"$work/hostile.log" 2>&1 &
  slow_pid=$!; bench_pids+=("$slow_pid")
  "$hostile" garbage --port "$port" --connections 8 --duration $((duration + 4)) >>"$work/hostile.log" 2>&1 &
  garbage_pid=$!; bench_pids+=("$garbage_pid")
  sleep 2
  j=$(run_php) || j=""
  echo "hostile $rep $j" >>"$results"
  bench_log "hostile #$rep: p50 $(bench_json_field "$j" p50_us) us p99 $(bench_json_field "$j" p99_us) us, $(bench_json_field "$j" calls_per_s) calls/s"
  wait "$slow_pid" "$garbage_pid" 2>/dev/null || true
done

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$nfsgw_pid/status" 2>/dev/null || echo 0; }
before=$(rss_kib)
"$hostile" hold --port "$port" --file big.bin --connections "$hold_conns" --reads 4 --hold 10 \
  >"$work/hold.jsonl" 2>>"$work/hostile.log" &
hold_pid=$!; bench_pids+=("$hold_pid")
peak=$before
while kill -0 "$hold_pid" 2>/dev/null; do
  r=$(rss_kib); [ "$r" -gt "$peak" ] && peak=$r
  sleep 0.2
done
wait "$hold_pid" || bench_log "hold: not every reply came back (see hold.jsonl)"
after=$(rss_kib)
bench_log "hold: $(cat "$work/hold.jsonl")"
bench_log "hold: nfsgw RSS before $((before / 1024)) MiB, peak $((peak / 1024)) MiB, after $((after / 1024)) MiB"
timeout 10 "$nfsgw" stats --config "$work/nfsgw.toml" >"$work/stats.log" 2>&1 || true

med() { grep "^$1 " "$results" | while read -r _ _ j; do bench_json_field "$j" "$2"; done | bench_median; }
i99=$(med idle p99_us); h99=$(med hostile p99_us)
echo "| run | p50 us | p99 us | calls/s |"
echo "|---|---:|---:|---:|"
echo "| idle (median of $reps) | $(med idle p50_us) | $i99 | $(med idle calls_per_s) |"
echo "| slow reader + garbage flood | $(med hostile p50_us) | $h99 | $(med hostile calls_per_s) |"
awk -v a="$h99" -v b="$i99" 'BEGIN { if (b > 0) printf "p99 ratio hostile/idle: %.2f\n", a / b }'
echo "hold $hold_conns connections x 4 READs of 1 MiB not read: $(cat "$work/hold.jsonl"); nfsgw RSS $((before / 1024)) -> peak $((peak / 1024)) MiB"

#!/usr/bin/env bash
# Warm sequential READ on loopback, no delay: one reader (nfsgw-bench read, 1 MiB
# READs, 4 in flight, like data-wan.sh's warm row) of a --size-mib file through nfsgw
# with its data cache warm, and straight from the origin, alternating, --reps times.
# Prints MiB/s (median) and nfsgw's CPU seconds per GiB served (less sensitive to a
# busy machine than MiB/s). With --perf SECONDS, also records `perf record -g` of
# nfsgw during one more warm pass into --out (perf.data, perf-report.txt).
#
#   tools/bench/warm-read-loopback.sh [--build DIR] [--size-mib 1024] [--reps 3]
#        [--perf 0] [--nfsgw PATH] [--out DIR]
# --nfsgw runs another nfsgw binary (a before/after comparison: alternate the two).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
size_mib=1024
reps=3
perf_s=0
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --size-mib) size_mib=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --perf) perf_s=$2; shift 2 ;;
    --nfsgw) nfsgw_bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$reps" =~ ^[1-9]$ ]] || { echo "--reps must be 1..9" >&2; exit 2; }
[[ "$size_mib" =~ ^[0-9]+$ && "$size_mib" -ge 16 && "$size_mib" -le 4096 ]] || { echo "--size-mib: 16..4096" >&2; exit 2; }
[[ "$perf_s" =~ ^[0-9]+$ && "$perf_s" -le 60 ]] || { echo "--perf: 0..60 s" >&2; exit 2; }
bench=$build/tools/nfsgw-bench/nfsgw-bench
nfsgw=${nfsgw_bin:-$build/nfsgw}
for b in "$bench" "$nfsgw"; do [ -x "$b" ] || { echo "missing $b" >&2; exit 1; }; done
origin_nfs=24790; origin_mnt=24748; port=24791

work=$(mktemp -d /tmp/bench-warmread.XXXXXX)
# shellcheck source=tools/bench/bench-lib.sh
source "$repo/tools/bench/bench-lib.sh"
finish() {
  bench_cleanup
  [ -n "$out" ] && { mkdir -p "$out"; cp -f "$work"/*.log "$work"/*.txt "$work"/perf.data "$out"/ 2>/dev/null || true; }
  rm -rf "$work"
}
trap finish EXIT

bench_log "machine: $(bench_machine)"
export_dir=$work/export
mkdir -p "$export_dir/big" "$export_dir/probe"
head -c $((size_mib << 20)) /dev/urandom >"$export_dir/big/f000000"
bench_start_origin "$work/origin" "$export_dir" "$origin_nfs" "$origin_mnt"
origin_url="nfs://127.0.0.1$export_dir?nfsport=$origin_nfs&mountport=$origin_mnt"
mkdir -p "$work/cache"
bench_write_nfsgw_config "$work/nfsgw.toml" "$port" "$work/cache" "$origin_url" true 1h 256
bench_start_nfsgw "$work/nfsgw.toml" "$port" "$work/nfsgw.log" probe
gw_url="nfs://127.0.0.1/export?nfsport=$port&mountport=$port"

# seq_read URL -> "seconds MiB/s"
seq_read() {
  local j s
  j=$(timeout 700 "$bench" --url "$1" --dir big --files 1 --mode read --order sequential --size 1048576 \
      --count "$size_mib" --connections 1 --inflight 4 --duration 600 --timeout 60 --json 2>>"$work/bench.log" | tail -1)
  s=$(bench_json_field "$j" seconds)
  awk -v s="$s" -v n="$size_mib" 'BEGIN { printf "%.2f %.1f\n", s, n / s }'
}

r=$(seq_read "$gw_url"); bench_log "cold through nfsgw: $r"
results=$work/results.txt
: >"$results"
for rep in $(seq "$reps"); do
  c0=$(bench_cpu_s "$nfsgw_pid")
  r=$(seq_read "$gw_url")
  c1=$(bench_cpu_s "$nfsgw_pid")
  cpu=$(awk -v a="$c0" -v b="$c1" -v n="$size_mib" 'BEGIN { printf "%.2f", (b - a) * 1024 / n }')
  echo "gw $r $cpu" >>"$results"; bench_log "warm through nfsgw #$rep: $r (nfsgw $cpu CPU s/GiB)"
  r=$(seq_read "$origin_url"); echo "origin $r -" >>"$results"; bench_log "straight to the origin #$rep: $r"
done
if [ "$perf_s" -gt 0 ] && command -v perf >/dev/null; then
  # perf attaches to nfsgw, then warm passes run for about --perf seconds.
  perf record -e cpu-clock -g -o "$work/perf.data" -p "$nfsgw_pid" >"$work/perf.log" 2>&1 &
  perf_pid=$!
  sleep 1
  end=$(( $(date +%s) + perf_s ))
  while [ "$(date +%s)" -lt "$end" ]; do seq_read "$gw_url" >/dev/null; done
  kill -INT "$perf_pid" 2>/dev/null || true
  wait "$perf_pid" || true
  perf report -i "$work/perf.data" --no-children --stdio --percent-limit 0.7 -g none 2>/dev/null | grep -v '^$' | head -80 \
    >"$work/perf-report.txt" || true
fi
med() { grep "^$1 " "$results" | awk -v f="$2" '{ print $f }' | bench_median; }
echo "warm through nfsgw: $(med gw 3) MiB/s (median of $reps), nfsgw $(med gw 4) CPU s/GiB"
echo "straight to the origin: $(med origin 3) MiB/s"
awk -v a="$(med gw 3)" -v b="$(med origin 3)" 'BEGIN { if (b > 0) printf "ratio nfsgw/origin: %.2f\n", a / b }'

#!/usr/bin/env bash
# Warm metadata cache on loopback, no delay: nfsgw-bench against up to four
# targets side by side in one run, interleaved mode by mode and repetition by
# repetition, medians of --reps:
#   origin      nfs-ganesha VFS (scripts/origin-ganesha.sh), straight
#   gw-nocache  nfsgw with metadata_cache = false (pass-through)
#   gw-cache    nfsgw with the metadata cache on, windows of --ttl
#   gw-cache-nomemo  the same with [cache] answer_memo = false: every hit walks the layers
#               (gateway/rpc/answer_memo.h); not in the default targets
#   proxy       nfs-ganesha PROXY_V4 re-exporting the same folder, Attr_Expiration_Time =
#               --ttl (needs the Debian package nfs-ganesha-proxy-v4; skipped with a note
#               when it is missing or does not answer). PROXY_V4 speaks NFSv4 to its origin
#               and the origin of scripts/origin-ganesha.sh serves NFSv3 only, so the proxy's
#               origin is a second nfs-ganesha VFS process serving NFSv4 from the same folder.
# Before the measured runs of each mode every target gets one sequential pass over all
# --files (so every name and handle is in the caches) and a 1 s random warm-up.
#
#   tools/bench/metadata-loopback.sh [--build DIR] [--modes "..."] [--reps 3] [--duration 5]
#        [--files 2000] [--size 100] [--connections 4] [--inflight 16] [--ttl 10m]
#        [--targets "origin gw-nocache gw-cache proxy"] [--order modes|reps] [--out DIR]
#
# --order reps measures every mode once per repetition (rep 1: all modes, rep 2: all
# modes, ...) instead of all repetitions of one mode before the next: ratios between
# modes (a hit against NULL) then compare runs made minutes apart at most, which
# matters on a shared machine. Each nfsgw's CPU time per call (user + system, from
# /proc) is reported too: unlike calls/s it does not depend on what else runs.
#
# Ports (127.0.0.1): origin 24590/24548, nfsgw without cache 24591, with cache 24592
# (24597 without the answer memo),
# the proxy's NFSv4 origin 24593 (MOUNT 24594), the proxy 24595 (MOUNT 24596).
# Bounded: each bench run by `timeout`, every start by 60-120 s.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
modes="null getattr lookup lookup-missing access read php walk"
targets="origin gw-nocache gw-cache proxy"
reps=3
duration=5
files=2000
size=100
connections=4
inflight=16
ttl=10m
order=modes
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --inflight) inflight=$2; shift 2 ;;
    --ttl) ttl=$2; shift 2 ;;
    --order) order=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$reps" =~ ^[1-9]$ ]] || { echo "--reps must be 1..9" >&2; exit 2; }
[[ "$order" == modes || "$order" == reps ]] || { echo "--order: modes or reps" >&2; exit 2; }
[[ "$ttl" =~ ^[0-9]+[smh]$ ]] || { echo "--ttl: N followed by s, m or h" >&2; exit 2; }
case ${ttl: -1} in
  s) ttl_s=${ttl%?} ;;
  m) ttl_s=$(( ${ttl%?} * 60 )) ;;
  *) ttl_s=$(( ${ttl%?} * 3600 )) ;;
esac

bench=$build/tools/nfsgw-bench/nfsgw-bench
nfsgw=$build/nfsgw
[ -x "$bench" ] || { echo "missing $bench" >&2; exit 1; }
[ -x "$nfsgw" ] || { echo "missing $nfsgw" >&2; exit 1; }
origin_nfs=24590; origin_mnt=24548
nocache_port=24591; cache_port=24592; nomemo_port=24597
o4_nfs=24593; o4_mnt=24594
proxy_nfs=24595; proxy_mnt=24596

work=$(mktemp -d /tmp/bench-loop.XXXXXX)
# shellcheck source=tools/bench/bench-lib.sh
source "$repo/tools/bench/bench-lib.sh"
finish() {
  bench_cleanup
  if [ -n "$out" ]; then
    mkdir -p "$out"
    cp -f "$work"/*.log "$work"/*.txt "$work"/results.jsonl "$work"/table.md "$work"/*.conf "$out"/ 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap finish EXIT

export_dir=$work/export
results=$work/results.jsonl
: >"$results"
notes=()
bench_log "machine: $(bench_machine)"
mkdir -p "$export_dir"
"$bench" --prepare-local "$export_dir" --files "$files" --size "$size"
bench_start_origin "$work/origin" "$export_dir" "$origin_nfs" "$origin_mnt"
origin_url="nfs://127.0.0.1$export_dir?nfsport=$origin_nfs&mountport=$origin_mnt"

declare -A url pid
url[origin]=$origin_url
active="origin"
for t in $targets; do
  case "$t" in
    origin) ;;
    gw-nocache|gw-cache|gw-cache-nomemo)
      port=$nocache_port; mc=false; memo=true
      [ "$t" = gw-cache ] && { port=$cache_port; mc=true; }
      [ "$t" = gw-cache-nomemo ] && { port=$nomemo_port; mc=true; memo=false; }
      mkdir -p "$work/cache-$t"
      bench_write_nfsgw_config "$work/$t.toml" "$port" "$work/cache-$t" "$origin_url" "$mc" "$ttl" 256 "$memo"
      if bench_start_nfsgw "$work/$t.toml" "$port" "$work/nfsgw-$t.log"; then
        url[$t]="nfs://127.0.0.1/export?nfsport=$port&mountport=$port"
        pid[$t]=$nfsgw_pid
        active="$active $t"
      else
        notes+=("$t did not start (see nfsgw-$t.log); left out")
      fi
      ;;
    proxy)
      if ! bench_have_proxy_v4; then
        notes+=("nfs-ganesha PROXY_V4 is not installed (apt-get install -y nfs-ganesha-proxy-v4); left out")
        continue
      fi
      if bench_start_proxy_v4 "$work" "$export_dir" "$o4_nfs" "$o4_mnt" "$proxy_nfs" "$proxy_mnt" "$ttl_s" nfsgw-bench; then
        url[proxy]=$proxy_url; active="$active proxy"
      else
        notes+=("PROXY_V4 did not answer within about a minute (see proxy.log, origin4.log); left out")
      fi
      ;;
    *) echo "unknown target $t" >&2; exit 2 ;;
  esac
done
for n in "${notes[@]}"; do bench_log "NOTE: $n"; done
bench_log "targets: $active"

run_one() {  # run_one TARGET MODE DURATION [extra args] -> JSON line (empty on failure)
  local t=$1 m=$2 d=$3 j; shift 3
  j=$(timeout $(( ${d%.*} + 120 )) "$bench" --url "${url[$t]}" --mode "$m" --duration "$d" \
      --files "$files" --size "$size" --connections "$connections" --inflight "$inflight" --json "$@" \
      2>>"$work/bench.log" | tail -1) || true
  [[ "$j" == \{* ]] && echo "$j"
}

warm_up() {  # every name and handle in the caches, then a 1 s random pass
  local t=$1 mode=$2
  if [ "$mode" != null ] && [ "$mode" != walk ]; then
    run_one "$t" "$mode" 120 --order sequential --count "$files" >/dev/null || true
  fi
  run_one "$t" "$mode" 1 >/dev/null || true
}
measure() {  # measure MODE REP: one run of each target, with nfsgw's CPU per call
  local mode=$1 rep=$2 t j c0 c1 cpu calls
  for t in $active; do
    c0=""; [ -n "${pid[$t]:-}" ] && c0=$(bench_cpu_s "${pid[$t]}")
    j=$(run_one "$t" "$mode" "$duration" || true)
    [ -n "$j" ] || { bench_log "run failed: $t $mode #$rep (see bench.log)"; continue; }
    cpu="-"
    if [ -n "$c0" ]; then
      c1=$(bench_cpu_s "${pid[$t]}")
      calls=$(bench_json_field "$j" calls)
      cpu=$(awk -v a="$c0" -v b="$c1" -v n="$calls" 'BEGIN { if (n > 0) printf "%.2f", (b - a) * 1e6 / n; else print "-" }')
    fi
    echo "$t $mode $j $cpu" >>"$results"
    bench_log "  $t $mode #$rep: $(bench_json_field "$j" calls_per_s) calls/s p50 $(bench_json_field "$j" p50_us) us, nfsgw $cpu us CPU/call"
  done
}
if [ "$order" = modes ]; then
  for mode in $modes; do
    for t in $active; do warm_up "$t" "$mode"; done
    for rep in $(seq "$reps"); do measure "$mode" "$rep"; done
  done
else
  for mode in $modes; do
    for t in $active; do warm_up "$t" "$mode"; done
  done
  for rep in $(seq "$reps"); do
    for mode in $modes; do measure "$mode" "$rep"; done
  done
fi
for t in gw-cache; do
  [ -n "${url[$t]:-}" ] && timeout 10 "$nfsgw" stats --config "$work/$t.toml" >"$work/stats-$t.txt" 2>&1 || true
done

stat_of() {
  { grep "^$1 $2 " "$results" || true; } | while read -r _ _ j _; do bench_json_field "$j" "$3"; done | bench_median
}
cpu_of() {  # median nfsgw CPU microseconds per call
  { grep "^$1 $2 " "$results" || true; } | awk '$NF != "-" { print $NF }' | bench_median
}
bad_of() {
  { grep "^$1 $2 " "$results" || true; } | while read -r _ _ j _; do grep -o '"errors":{[^}]*}' <<<"$j" | sed 's/^"errors"://'; done |
    { if [ "$2" = lookup-missing ]; then sed 's/"NFS3ERR_NOENT":[0-9]*,\{0,1\}//'; else cat; fi; } | grep -v '^{}$' | head -1 || true
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
k() { awk -v a="$1" 'BEGIN { if (a == "-") print "-"; else printf "%.1fk", a / 1000 }'; }
{
  echo "### Loopback, warm, side by side ($(date -u +%Y-%m-%d))"
  echo
  echo "Machine: $(bench_machine) (at the end of the run). Tree: commit $(bench_commit)."
  echo "Load: $connections connections x $inflight in flight, $files files of $size B, ${duration} s per run, median of $reps runs; windows $ttl."
  for n in "${notes[@]}"; do echo "Note: $n."; done
  echo
  printf '| mode |'; for t in $active; do printf ' %s calls/s (p99 us) |' "$t"; done
  printf ' gw-cache / origin | gw-cache / gw-nocache |\n|---|'
  for t in $active; do printf -- '---:|'; done; printf -- '---:|---:|\n'
  for mode in $modes; do
    printf '| %s |' "$mode"
    for t in $active; do
      flag=$(bad_of "$t" "$mode"); [ -n "$flag" ] && flag=" (! $flag)"
      printf ' %s (%s)%s |' "$(k "$(stat_of "$t" "$mode" calls_per_s)")" "$(stat_of "$t" "$mode" p99_us)" "$flag"
    done
    printf ' %s | %s |\n' "$(ratio "$(stat_of gw-cache "$mode" calls_per_s)" "$(stat_of origin "$mode" calls_per_s)")" \
      "$(ratio "$(stat_of gw-cache "$mode" calls_per_s)" "$(stat_of gw-nocache "$mode" calls_per_s)")"
  done
  echo
  for g in gw-cache gw-cache-nomemo; do
    gnull=$(stat_of $g null calls_per_s)
    cnull=$(cpu_of $g null)
    for m in getattr lookup lookup-missing access; do
      grep -q "^$g $m " "$results" || continue
      echo "- $g $m / $g null: $(ratio "$(stat_of $g $m calls_per_s)" "$gnull") in calls/s;" \
        "nfsgw CPU per call $(cpu_of $g $m) us against $cnull us for NULL"
    done
  done
  if grep -q " walk " "$results"; then
    echo "- walk ($(stat_of origin walk calls) calls) seconds:$(for t in $active; do printf ' %s %s' "$t" "$(stat_of "$t" walk seconds)"; done)"
  fi
  if grep -q " php " "$results"; then
    echo "- php requests/s:$(for t in $active; do printf ' %s %s' "$t" "$(stat_of "$t" php requests_per_s)"; done)"
  fi
} | tee "$work/table.md"

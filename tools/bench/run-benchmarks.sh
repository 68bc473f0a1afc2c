#!/usr/bin/env bash
# Runs nfsgw-bench against a loopback nfs-ganesha origin directly and through
# nfsgw in front of it, side by side in one run, and prints a markdown table of
# medians with the nfsgw/origin ratio and the machine it ran on.
#
#   tools/bench/run-benchmarks.sh [options]
#     --build DIR        build folder holding nfsgw and tools/nfsgw-bench/nfsgw-bench (default: build)
#     --modes "M ..."    modes to run (default: all nine)
#     --reps N           repetitions per mode and target (default 3; the table shows medians)
#     --duration S       seconds per run (default 5)
#     --files N --size B working set (default 2000 files of 100 B)
#     --connections N --inflight N   (default 4 x 16)
#     --out DIR          keep the raw JSON lines, logs and the table there
#
# Everything is bounded: each bench run by `timeout`, nfsgw's start by 30 s,
# the origin's by 90 s. The nfsgw column is skipped, with a note, when the
# nfsgw binary does not exist yet. Ports (override with env): origin NFS
# BENCH_ORIGIN_NFS_PORT=23490, MOUNT BENCH_ORIGIN_MOUNT_PORT=23048, nfsgw
# BENCH_NFSGW_PORT=23491.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
modes="null getattr lookup lookup-missing access read php walk write"
reps=3
duration=5
files=2000
size=100
connections=4
inflight=16
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --inflight) inflight=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$reps" =~ ^[1-9][0-9]?$ ]] || { echo "--reps must be 1..99" >&2; exit 2; }

bench=$build/tools/nfsgw-bench/nfsgw-bench
nfsgw=$build/nfsgw
origin_script=$repo/scripts/origin-ganesha.sh
origin_nfs_port=${BENCH_ORIGIN_NFS_PORT:-23490}
origin_mount_port=${BENCH_ORIGIN_MOUNT_PORT:-23048}
gw_port=${BENCH_NFSGW_PORT:-23491}
[ -x "$bench" ] || { echo "missing $bench: build the nfsgw-bench target first" >&2; exit 1; }

work=$(mktemp -d /tmp/bench-run.XXXXXX)
export_dir=$work/export
state=$work/origin-state
results=$work/results.jsonl
gw_pid=""
cleanup() {
  if [ -n "$gw_pid" ]; then
    kill "$gw_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$gw_pid" 2>/dev/null || true
  fi
  "$origin_script" stop "$state" >/dev/null 2>&1 || true
  if [ -n "$out" ]; then
    mkdir -p "$out"
    cp -f "$results" "$work"/*.log "$work"/table.md "$out"/ 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

field() { { grep -o "\"$2\":[^,}]*" <<<"$1" || true; } | head -1 | cut -d: -f2; }
errors_of() { { grep -o '"errors":{[^}]*}' <<<"$1" || true; } | sed 's/^"errors"://'; }

echo "== working set: $files files of $size B (+ walk tree)" >&2
mkdir -p "$export_dir"
"$bench" --prepare-local "$export_dir" --files "$files" --size "$size"
timeout 120 "$origin_script" start "$state" "$export_dir" "$origin_nfs_port" "$origin_mount_port" >&2
origin_url="nfs://127.0.0.1$export_dir?nfsport=$origin_nfs_port&mountport=$origin_mount_port"

targets="origin"
gw_note=""
if [ -x "$nfsgw" ]; then
  mkdir -p "$work/cache"
  cat > "$work/nfsgw.toml" <<TOML
[server]
listen = "127.0.0.1"
nfs_port = $gw_port
mount_port = 0
register_rpcbind = false

[cache]
dir = "$work/cache"

[[export]]
path = "/export"
origin = "$origin_url"
squash = "none"
TOML
  "$nfsgw" --config "$work/nfsgw.toml" >"$work/nfsgw.log" 2>&1 &
  gw_pid=$!
  gw_url="nfs://127.0.0.1/export?nfsport=$gw_port&mountport=$gw_port"
  ready=""
  for _ in $(seq 30); do
    kill -0 "$gw_pid" 2>/dev/null || break
    if timeout 5 "$bench" --url "$gw_url" --mode null --count 1 --connections 1 --timeout 2 >/dev/null 2>&1; then
      ready=1; break
    fi
    sleep 1
  done
  if [ -n "$ready" ]; then
    targets="origin nfsgw"
  else
    gw_note="nfsgw exited or did not answer within 30 s (see nfsgw.log); nfsgw column skipped"
    tail -20 "$work/nfsgw.log" >&2 || true
  fi
else
  gw_note="$nfsgw not found; nfsgw column skipped"
fi
[ -n "$gw_note" ] && echo "NOTE: $gw_note" >&2

url_of() { if [ "$1" = origin ]; then echo "$origin_url"; else echo "$gw_url"; fi; }

run_one() {  # run_one TARGET MODE DURATION -> JSON line (empty on failure)
  local j
  j=$(timeout $(( ${3%.*} + 40 )) "$bench" --url "$(url_of "$1")" --mode "$2" --duration "$3" \
      --files "$files" --size "$size" --connections "$connections" --inflight "$inflight" --json \
      2>>"$work/bench.log" | tail -1) || true
  [[ "$j" == \{* ]] && echo "$j"
}

: >"$results"
for mode in $modes; do
  for t in $targets; do run_one "$t" "$mode" 1 >/dev/null || true; done  # warm-up, not counted
  for rep in $(seq "$reps"); do
    for t in $targets; do
      j=$(run_one "$t" "$mode" "$duration" || true)
      if [ -z "$j" ]; then
        echo "run failed: $t $mode rep $rep (see bench.log)" >&2
        continue
      fi
      echo "$t $mode $j" >>"$results"
      echo "  $t $mode #$rep: $(field "$j" calls_per_s) calls/s p50 $(field "$j" p50_us) us" >&2
    done
  done
done

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print v[(NR+1)/2]; else printf "%.1f\n", (v[NR/2]+v[NR/2+1])/2}'; }
stat_of() {  # stat_of TARGET MODE FIELD -> median
  { grep "^$1 $2 " "$results" || true; } | while read -r _ _ j; do field "$j" "$3"; done | median
}
bad_of() {  # statuses that should not be there (NOENT is the point of lookup-missing)
  { grep "^$1 $2 " "$results" || true; } | while read -r _ _ j; do errors_of "$j"; done |
    { if [ "$2" = lookup-missing ]; then sed 's/"NFS3ERR_NOENT":[0-9]*,\{0,1\}//'; else cat; fi; } |
    grep -v '^{}$' | head -1 || true
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }

{
  echo "### nfsgw-bench: origin vs nfsgw ($(date -u +%Y-%m-%d))"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), kernel $(uname -r)."
  echo "Load: $connections connections x $inflight in flight, $files files of $size B, ${duration} s per run, median of $reps runs (after a 1 s warm-up)."
  echo "Origin: nfs-ganesha $(ganesha.nfsd -v 2>/dev/null | grep -o 'Release = V[0-9.]*' | head -1 | sed 's/Release = //') (VFS FSAL) on loopback."
  [ -n "$gw_note" ] && echo "Note: $gw_note."
  echo
  echo "| mode | origin calls/s | nfsgw calls/s | nfsgw/origin | origin p50 / p99 / p99.9 us | nfsgw p50 / p99 / p99.9 us |"
  echo "|---|---:|---:|---:|---|---|"
  for mode in $modes; do
    o=$(stat_of origin "$mode" calls_per_s); g=$(stat_of nfsgw "$mode" calls_per_s)
    ol="$(stat_of origin "$mode" p50_us) / $(stat_of origin "$mode" p99_us) / $(stat_of origin "$mode" p999_us)"
    gl="$(stat_of nfsgw "$mode" p50_us) / $(stat_of nfsgw "$mode" p99_us) / $(stat_of nfsgw "$mode" p999_us)"
    [ "$g" = "-" ] && gl="-"
    flag=""
    [ -n "$(bad_of origin "$mode")" ] && flag="$flag origin errors: $(bad_of origin "$mode")"
    [ -n "$(bad_of nfsgw "$mode")" ] && flag="$flag nfsgw errors: $(bad_of nfsgw "$mode")"
    echo "| $mode${flag:+ (!$flag)} | $o | $g | $(ratio "$g" "$o") | $ol | $gl |"
  done
  if grep -q " php " "$results"; then
    echo
    echo "php requests/s (LOOKUP+GETATTR+ACCESS+READ each): origin $(stat_of origin php requests_per_s), nfsgw $(stat_of nfsgw php requests_per_s); request p50 origin $(stat_of origin php req_p50_us) us, nfsgw $(stat_of nfsgw php req_p50_us) us."
  fi
  if grep -q " walk " "$results"; then
    echo "walk (READDIRPLUS of the tree + GETATTR of every entry, $(stat_of origin walk calls) calls): origin $(stat_of origin walk seconds) s, nfsgw $(stat_of nfsgw walk seconds) s."
  fi
} | tee "$work/table.md"

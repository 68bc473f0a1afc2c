#!/usr/bin/env bash
# The metadata cache over a WAN: origin nfs-ganesha <- wan-emu (--delay-ms each
# way) <- nfsgw <- nfsgw-bench, one call in flight, like a single shell on a
# client. For each workload it measures
#   cold     fresh [cache] dir, first pass
#   warm     second and later passes (median of --reps)
#   restart  kill -9 of nfsgw, restart on the same [cache] dir, first pass (median of --reps,
#            one kill -9 before each)
#   reading  warm passes while another client reads --read-mib MiB of file data through
#            nfsgw (started alongside; median of --reps)
#   straight the same workload straight to the origin through wan-emu, no nfsgw (one pass;
#            --no-straight skips it)
# and, for every pass, the calls that reached the origin (wan-emu's counters, reset
# before each pass: they include the bench's own MNT and LOOKUP of its folder).
# While the reader runs, the CPU seconds used by nfsgw and wan-emu are recorded, since on
# a small machine the reader's cost, not the cache, is what can slow the warm passes.
#
# Workloads (--workloads): lookup       --files sequential LOOKUPs of distinct names in flat/
#                          walk-flat    READDIRPLUS of flat/ then GETATTR of every entry
#                          walk-nested  the same, recursive, over nested/ (--dirs x --per-dir)
#
#   tools/bench/wan-metadata.sh [--build DIR] [--delay-ms 10] [--reps 3] [--files 2000]
#        [--dirs 500] [--per-dir 10] [--read-mib 2048] [--ttl 10m] [--no-straight]
#        [--workloads "lookup walk-flat walk-nested"] [--out DIR]
#
# Ports (all 127.0.0.1, override with env): origin WAN_ORIGIN_NFS_PORT=24490,
# WAN_ORIGIN_MOUNT_PORT=24048; wan-emu 24491 (NFS), 24492 (MOUNT), control 24400;
# nfsgw WAN_NFSGW_PORT=24500. Bounded: every bench run by `timeout`, starts by
# 60-120 s, the reader by 900 s. Everything started is stopped on exit.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
delay=10
reps=5
straight=1
files=2000
dirs=500
per_dir=10
read_mib=2048
ttl=10m
workloads="lookup walk-flat walk-nested"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --delay-ms) delay=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --dirs) dirs=$2; shift 2 ;;
    --per-dir) per_dir=$2; shift 2 ;;
    --read-mib) read_mib=$2; shift 2 ;;
    --ttl) ttl=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    --no-straight) straight=""; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$reps" =~ ^[1-9]$ ]] || { echo "--reps must be 1..9" >&2; exit 2; }
[[ "$files" =~ ^[0-9]+$ && "$files" -ge 1 && "$files" -le 100000 ]] || { echo "--files: 1..100000" >&2; exit 2; }
[[ "$dirs" =~ ^[0-9]+$ && "$dirs" -ge 1 && "$dirs" -le 10000 ]] || { echo "--dirs: 1..10000" >&2; exit 2; }
[[ "$per_dir" =~ ^[0-9]+$ && "$per_dir" -ge 1 && "$per_dir" -le 1000 ]] || { echo "--per-dir: 1..1000" >&2; exit 2; }
[[ "$read_mib" =~ ^[0-9]+$ && "$read_mib" -ge 8 && "$read_mib" -le 16384 ]] || { echo "--read-mib: 8..16384" >&2; exit 2; }

bench=$build/tools/nfsgw-bench/nfsgw-bench
nfsgw=$build/nfsgw
for b in "$bench" "$nfsgw" "$build/tools/wan-emu/wan-emu"; do
  [ -x "$b" ] || { echo "missing $b: build nfsgw nfsgw-bench wan-emu first" >&2; exit 1; }
done
origin_nfs=${WAN_ORIGIN_NFS_PORT:-24490}
origin_mnt=${WAN_ORIGIN_MOUNT_PORT:-24048}
wan_nfs=${WAN_EMU_NFS_PORT:-24491}
wan_mnt=${WAN_EMU_MOUNT_PORT:-24492}
wan_ctl=${WAN_EMU_CONTROL_PORT:-24400}
gw_port=${WAN_NFSGW_PORT:-24500}

work=$(mktemp -d /tmp/bench-wan.XXXXXX)
# shellcheck source=tools/bench/bench-lib.sh
source "$repo/tools/bench/bench-lib.sh"
finish() {
  bench_cleanup
  if [ -n "$out" ]; then
    mkdir -p "$out"
    cp -f "$work"/*.log "$work"/*.txt "$work"/results.tsv "$work"/table.md "$out"/ 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap finish EXIT

export_dir=$work/export
results=$work/results.tsv
: >"$results"

bench_log "machine: $(bench_machine)"
bench_log "tree: $files files in flat/, $dirs x $per_dir in nested/, 8 files of $((read_mib / 8)) MiB in big/"
mkdir -p "$export_dir/flat" "$export_dir/big" "$export_dir/probe"
content=$(head -c 100 /dev/zero | tr '\0' 'x')
for ((i = 0; i < files; i++)); do printf '%s' "$content" >"$export_dir/flat/$(printf 'f%06d' "$i")"; done
for ((d = 0; d < dirs; d++)); do
  nd=$export_dir/nested/$(printf 'd%04d' "$d")
  mkdir -p "$nd"
  for ((f = 0; f < per_dir; f++)); do printf '%s' "$content" >"$nd/f$f"; done
done
for ((i = 0; i < 8; i++)); do
  timeout 300 dd if=/dev/urandom of="$export_dir/big/$(printf 'f%06d' "$i")" bs=1M count=$((read_mib / 8)) status=none
done

bench_start_origin "$work/origin" "$export_dir" "$origin_nfs" "$origin_mnt"
bench_start_wan "$wan_nfs" "$origin_nfs" "$wan_mnt" "$origin_mnt" "$wan_ctl" "$delay" "$work/wan-emu.log"
origin_url="nfs://127.0.0.1$export_dir?nfsport=$wan_nfs&mountport=$wan_mnt"
gw_url="nfs://127.0.0.1/export?nfsport=$gw_port&mountport=$gw_port"
straight_url=$origin_url
config=$work/nfsgw.toml

fresh_nfsgw() {  # stop nfsgw if running, start it on a new, empty [cache] dir
  if [ -n "${nfsgw_pid:-}" ]; then bench_stop_nfsgw; fi
  rm -rf "$work/cache"; mkdir -p "$work/cache"
  bench_write_nfsgw_config "$config" "$gw_port" "$work/cache" "$origin_url" true "$ttl" 256
  bench_start_nfsgw "$config" "$gw_port" "$work/nfsgw.log" probe
}

args_of() {  # the bench arguments of a workload
  case "$1" in
    lookup) echo "--dir flat --files $files --mode lookup --order sequential --count $files" ;;
    walk-flat) echo "--dir flat --files 1 --mode walk" ;;
    walk-nested) echo "--dir nested --files 1 --mode walk" ;;
    *) echo "unknown workload $1" >&2; return 1 ;;
  esac
}

# pass WORKLOAD PHASE REP [NOTE]: one pass, one call in flight, through nfsgw (phase
# straight: to the origin through wan-emu); appends to results.tsv:
# workload phase rep seconds calls origin-calls note
pass() {
  local j s calls origin u=$gw_url
  [ "$2" = straight ] && u=$straight_url
  bench_wan reset >/dev/null
  # shellcheck disable=SC2046
  j=$(timeout 700 "$bench" --url "$u" $(args_of "$1") --connections 1 --inflight 1 \
        --duration 600 --timeout 60 --json 2>>"$work/bench.log" | tail -1) || true
  origin=$(bench_wan_calls "$(bench_wan stats)")
  [[ "$j" == \{* ]] || { echo "pass $1 $2 #$3 failed (see bench.log)" >&2; echo "$j" >>"$work/bench.log"; return 1; }
  echo "$1 $2 $3 $j" >>"$work/bench.log"
  s=$(bench_json_field "$j" seconds); calls=$(bench_json_field "$j" calls)
  [ "$(grep -o '"errors":{[^}]*}' <<<"$j")" = '"errors":{}' ] || bench_log "  NOTE: non-OK statuses: $j"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$s" "$calls" "$origin" "${4:-}" >>"$results"
  bench_log "  $1 $2 #$3: ${s} s, $calls calls; origin: $origin ${4:-}"
}

start_reader() {  # a second client streaming read_mib MiB through nfsgw, 1 MiB reads, 4 in flight
  ( date +%s.%N >"$work/reader.start"
    timeout 900 "$bench" --url "$gw_url" --dir big --files 8 --mode read --order sequential --size 1048576 \
      --count "$read_mib" --connections 1 --inflight 4 --duration 600 --timeout 60 --json >"$work/reader.out" 2>&1
    echo $? >"$work/reader.rc"; date +%s.%N >"$work/reader.end" ) &
  reader_pid=$!
  bench_pids+=("$reader_pid")
}

for w in $workloads; do
  args_of "$w" >/dev/null
  bench_log "== $w"
  if [ -n "$straight" ]; then pass "$w" straight 1; fi
  fresh_nfsgw
  pass "$w" cold 1
  sleep 3  # let the background ACCESS learning of the first pass finish
  for r in $(seq "$reps"); do pass "$w" warm "$r"; done
  timeout 10 "$nfsgw" stats --config "$config" >"$work/stats-$w-warm.txt" 2>&1 || true
  for r in $(seq "$reps"); do
    bench_kill9_nfsgw
    bench_start_nfsgw "$config" "$gw_port" "$work/nfsgw.log" probe
    pass "$w" restart "$r"
  done
  rm -f "$work"/reader.*
  cpu0_gw=$(bench_cpu_s "$nfsgw_pid"); cpu0_wan=$(bench_cpu_s "$wan_pid")
  start_reader
  sleep 3  # the reader mounts, resolves its 8 files and is streaming by then
  for r in $(seq "$reps"); do
    note=""
    if [ -f "$work/reader.end" ]; then note="(the reader had finished before this pass)"; fi
    pass "$w" reading "$r" "$note"
    if [ -z "$note" ] && [ -f "$work/reader.end" ]; then echo "$w reading #$r: the reader finished during this pass" >>"$work/readers.txt"; fi
  done
  timeout 10 "$nfsgw" stats --config "$config" >"$work/stats-$w-reading.txt" 2>&1 || true
  wait "$reader_pid" 2>/dev/null || true
  rj=$(tail -1 "$work/reader.out")
  rs=$(awk -v a="$(cat "$work/reader.start")" -v b="$(cat "$work/reader.end")" 'BEGIN{printf "%.1f", b-a}')
  cpu_gw=$(awk -v a="$cpu0_gw" -v b="$(bench_cpu_s "$nfsgw_pid")" 'BEGIN{printf "%.1f", b-a}')
  cpu_wan=$(awk -v a="$cpu0_wan" -v b="$(bench_cpu_s "$wan_pid")" 'BEGIN{printf "%.1f", b-a}')
  echo "$w reader: rc $(cat "$work/reader.rc"), $read_mib MiB in ${rs} s wall (mount included); CPU used meanwhile (reader and the warm passes): nfsgw ${cpu_gw} s, wan-emu ${cpu_wan} s; $rj" >>"$work/readers.txt"
  bench_log "  reader: rc $(cat "$work/reader.rc"), $read_mib MiB in ${rs} s (wall, with mount): $(bench_json_field "$rj" calls) reads, errors $(grep -o '"errors":{[^}]*}' <<<"$rj")"
done

med() { awk -F'\t' -v w="$1" -v p="$2" -v c="$3" '$1==w && $2==p {print $c}' "$results" | bench_median; }
calls_med() {  # median of the origin calls' total (or of one procedure) over the passes
  awk -F'\t' -v w="$1" -v p="$2" '$1==w && $2==p {print $6}' "$results" |
    { grep -o "${3:-total}=[0-9]*" || true; } | cut -d= -f2 | bench_median
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.1f", a / b }'; }
{
  echo "### WAN, ${delay} ms each way ($(date -u +%Y-%m-%d))"
  echo
  echo "Machine: $(bench_machine) (at the end of the run). Tree: commit $(bench_commit)."
  echo "One call in flight; medians of $reps passes (cold: one pass); origin calls = calls wan-emu relayed during the pass, MNT and the bench's LOOKUP of its folder included."
  echo
  echo "| workload | straight to the origin s (calls) | cold s (origin calls) | warm s (calls) | after kill -9 + restart s (calls) | warm while reading $read_mib MiB s (calls but READ) | cold/warm | straight/warm | restart/warm | reading/warm |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for w in $workloads; do
    st=$(med "$w" straight 4); c=$(med "$w" cold 4); wm=$(med "$w" warm 4); rs=$(med "$w" restart 4); rd=$(med "$w" reading 4)
    echo "| $w | $st ($(calls_med "$w" straight)) | $c ($(calls_med "$w" cold)) | $wm ($(calls_med "$w" warm)) | $rs ($(calls_med "$w" restart)) | $rd ($(calls_med "$w" reading meta)) | $(ratio "$c" "$wm") | $(ratio "$st" "$wm") | $(ratio "$rs" "$wm") | $(ratio "$rd" "$wm") |"
  done
  echo
  echo "Per pass (seconds, calls, origin calls by procedure):"
  echo
  echo '```'
  cat "$results"
  echo '```'
  echo
  echo "Readers:"
  echo
  sed 's/; {.*//; s/^/- /' "$work/readers.txt" 2>/dev/null || true
} | tee "$work/table.md"

#!/usr/bin/env bash
# Two nfsgw binaries side by side on loopback (issue 18: "base", the commit
# before the coherency fixes, against "new", with them): the speed of warm hits,
# the cost of mutating calls, and the first walk after kill -9.
#
# Every repetition starts a fresh nfs-ganesha origin (scripts/origin-ganesha.sh)
# on a fresh copy of the tree, and both nfsgw binaries in front of it at once,
# each on its own port and its own fresh [cache] dir, windows of --ttl (1 h).
# Both are warmed, then every measurement runs once through each, back to back
# (base then new in odd repetitions, new then base in even ones), so a ratio
# compares runs made seconds apart on the same origin:
#   null getattr lookup lookup-missing access read php   --connections x --inflight
#        over the --files files of nfsgw-bench/ (all cached: one sequential pass and
#        a 1 s random pass before); read: READs of 4 KiB at offset 0 of those
#        100-byte files; php: nfsgw-bench's PHP mix (LOOKUP, GETATTR, ACCESS, READ)
#   walk-warm     recursive walk of walk/ (--walk-files files + 209 entries of
#                 the bench's tree, 18 folders), one connection, one call in flight
#   write         --connections x --inflight WRITEs of --write-size bytes at offset 0
#                 of files picked at random among --files in wr-<target>/
#   write-1       the same, one connection and one call in flight
#   write-1-hot   one call in flight, always the same file (a burst of writes)
#   churn         --connections x --inflight requests of CREATE of a fresh name in
#                 churn-<target>/ then REMOVE of it (nfsgw-bench --mode churn)
#   churn-1       the same, one connection and one call in flight
#   restart       --restarts times: kill -9 of nfsgw, restart on the same cache dir,
#                 the first walk of walk/ (one call in flight), then a warm walk
#                 beside it (walk-after-restart-warm)
# and, for each, calls/s, p50/p99 latency, nfsgw's CPU per call (/proc) and the
# origin calls nfsgw made meanwhile (`nfsgw stats --json`, summed over procedures).
#
#   tools/bench/coherency-compare.sh --base BIN --new BIN [--reps 5] [--duration 5]
#        [--bench NFSGW_BENCH] [--modes "..."] [--files 2000] [--walk-files 800]
#        [--write-size 4096] [--connections 4] [--inflight 16] [--restarts 3]
#        [--walks 3] [--ttl 1h] [--base-writes through|back] [--new-writes through|back] [--out DIR]
# --base-writes/--new-writes back: that side's export is write-back (write_back_delay
# 1 h), so the same binary can be compared with itself, write-through against
# write-back, for what a write-back export costs the hit path.
#
# Ports (127.0.0.1): origin 25390 (MOUNT 25348), base 25391, new 25392; override with
# COHERENCY_ORIGIN_NFS_PORT, COHERENCY_ORIGIN_MOUNT_PORT, COHERENCY_BASE_PORT,
# COHERENCY_NEW_PORT. It refuses to start when one of them is taken.
# Bounded: each bench run by `timeout`, every start by 60-120 s; everything
# started is stopped on exit, by pid.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
bench=$build/tools/nfsgw-bench/nfsgw-bench
base_bin=""
new_bin=""
reps=5
duration=5
modes="null getattr lookup lookup-missing access read php walk-warm write write-1 write-1-hot churn churn-1 restart"
files=2000
walk_files=800
write_size=4096
connections=4
inflight=16
restarts=3
walks=3
ttl=1h
declare -A writes=([base]=through [new]=through)
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base_bin=$(realpath "$2"); shift 2 ;;
    --new) new_bin=$(realpath "$2"); shift 2 ;;
    --bench) bench=$(realpath "$2"); shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --walk-files) walk_files=$2; shift 2 ;;
    --write-size) write_size=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --inflight) inflight=$2; shift 2 ;;
    --restarts) restarts=$2; shift 2 ;;
    --walks) walks=$2; shift 2 ;;
    --ttl) ttl=$2; shift 2 ;;
    --base-writes) writes[base]=$2; shift 2 ;;
    --new-writes) writes[new]=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,43p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$base_bin" ] && [ -n "$new_bin" ] || { echo "--base BIN and --new BIN are required" >&2; exit 2; }
for b in "$base_bin" "$new_bin" "$bench"; do [ -x "$b" ] || { echo "missing $b" >&2; exit 1; }; done
[[ "$reps" =~ ^[1-9][0-9]?$ ]] || { echo "--reps must be 1..99" >&2; exit 2; }
[[ "$restarts" =~ ^[1-9]$ && "$walks" =~ ^[1-9]$ ]] || { echo "--restarts, --walks: 1..9" >&2; exit 2; }
[[ "$duration" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "--duration: seconds" >&2; exit 2; }
[[ "$ttl" =~ ^[0-9]+[smh]$ ]] || { echo "--ttl: N followed by s, m or h" >&2; exit 2; }
for t in base new; do
  [[ "${writes[$t]}" =~ ^(through|back)$ ]] || { echo "--$t-writes: through or back" >&2; exit 2; }
done

origin_nfs=${COHERENCY_ORIGIN_NFS_PORT:-25390}; origin_mnt=${COHERENCY_ORIGIN_MOUNT_PORT:-25348}
declare -A port=([base]=${COHERENCY_BASE_PORT:-25391} [new]=${COHERENCY_NEW_PORT:-25392}) bin=([base]=$base_bin [new]=$new_bin)
targets="base new"
# A port already taken (another run of this script) would send our calls to someone
# else's nfsgw or origin: refuse to start instead.
for p in "$origin_nfs" "$origin_mnt" "${port[base]}" "${port[new]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "port $p on 127.0.0.1 is already in use (another run?); set COHERENCY_*_PORT" >&2; exit 1
  fi
done

work=$(mktemp -d /tmp/bench-coherency.XXXXXX)
nfsgw=$new_bin  # bench-lib.sh's default; every start below names its binary
# shellcheck source=tools/bench/bench-lib.sh
source "$repo/tools/bench/bench-lib.sh"
finish() {
  bench_cleanup
  if [ -n "$out" ]; then
    mkdir -p "$out"
    cp -f "$work"/*.log "$work"/*.txt "$work"/results.tsv "$work"/table.md "$work"/*.toml "$out"/ 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap finish EXIT
results=$work/results.tsv  # rep target mode calls_per_s p50_us p99_us cpu_us_per_call origin_calls seconds calls note
: >"$results"

declare -A pid url config cache
origin_state=""

stop_origin() {
  [ -n "$origin_state" ] && [ -f "$origin_state/ganesha.pid" ] || return 0
  local p; p=$(cat "$origin_state/ganesha.pid")
  kill "$p" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$p" 2>/dev/null || true
  origin_state=""
}

# start_gw TARGET: starts that binary on its config; waits (60 s, polled every
# 0.1 s) until a NULL call through it answers; sets started_s to the seconds it
# took (not to be called in $(...): pid[] must be set in this shell).
start_gw() {
  local t=$1 t0 i
  t0=$(date +%s.%N)
  "${bin[$t]}" --config "${config[$t]}" >>"$work/nfsgw-$t.log" 2>&1 &
  pid[$t]=$!
  bench_pids+=("${pid[$t]}")
  for i in $(seq 600); do
    kill -0 "${pid[$t]}" 2>/dev/null || break
    if timeout 10 "$bench" --url "${url[$t]}" --dir nfsgw-bench --mode null --count 1 --connections 1 \
         --timeout 5 >/dev/null 2>&1 && kill -0 "${pid[$t]}" 2>/dev/null; then
      started_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
      return 0
    fi
    sleep 0.1
  done
  echo "nfsgw $t did not answer within 60 s:" >&2; tail -30 "$work/nfsgw-$t.log" >&2; return 1
}

kill9_gw() { kill -9 "${pid[$1]}" 2>/dev/null || true; wait "${pid[$1]}" 2>/dev/null || true; }

# origin_total TARGET -> the origin calls nfsgw has made since it started (all
# procedures), "-" when its stats cannot be read
origin_total() {
  local j
  j=$(timeout 10 "${bin[$1]}" stats --config "${config[$1]}" --json 2>/dev/null) || { echo -; return; }
  python3 -c '
import json, sys
try:
    r = json.loads(sys.argv[1])
    print(sum(p.get("origin_calls", 0) for e in r["exports"] for p in e["procedures"].values()))
except Exception:
    print("-")' "$j"
}
minus() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else print a - b }'; }

# args_of MODE TARGET -> nfsgw-bench arguments (empty for modes measured otherwise)
args_of() {
  local cx="--connections $connections --inflight $inflight" one="--connections 1 --inflight 1"
  case "$1" in
    null|getattr|lookup|lookup-missing|access|php) echo "--mode $1 --dir nfsgw-bench --files $files $cx" ;;
    read) echo "--mode read --dir nfsgw-bench --files $files --size 4096 $cx" ;;
    write) echo "--mode write --dir wr-$2 --files $files --size $write_size $cx" ;;
    write-1) echo "--mode write --dir wr-$2 --files $files --size $write_size $one" ;;
    write-1-hot) echo "--mode write --dir wr-$2 --files 1 --size $write_size $one" ;;
    churn) echo "--mode churn --dir churn-$2 --files 1 $cx" ;;
    churn-1) echo "--mode churn --dir churn-$2 --files 1 $one" ;;
    walk*) echo "--mode walk --dir walk --files 1 $one" ;;
    *) return 1 ;;
  esac
}

# run REP TARGET MODE [NAME]: one run; appends a line to results.tsv under NAME
# (default MODE)
run() {
  local rep=$1 t=$2 m=$3 name=${4:-$3} j c0 c1 o0 o1 calls cpu d=$duration
  case "$m" in walk*) d=120 ;; esac
  o0=$(origin_total "$t"); c0=$(bench_cpu_s "${pid[$t]}")
  # shellcheck disable=SC2046
  j=$(timeout $(( ${d%.*} + 120 )) "$bench" --url "${url[$t]}" $(args_of "$m" "$t") --duration "$d" \
      --timeout 30 --json 2>>"$work/bench.log" | tail -1) || true
  c1=$(bench_cpu_s "${pid[$t]}"); o1=$(origin_total "$t")
  [[ "$j" == \{* ]] || { bench_log "run failed: $t $name #$rep (see bench.log)"; return 0; }
  echo "$rep $t $name $j" >>"$work/runs.log"
  calls=$(bench_json_field "$j" calls)
  cpu=$(awk -v a="$c0" -v b="$c1" -v n="$calls" 'BEGIN { if (n > 0) printf "%.2f", (b - a) * 1e6 / n; else print "-" }')
  local errs note=""
  errs=$(grep -o '"errors":{[^}]*}' <<<"$j" | sed 's/^"errors"://')
  [ "$m" = lookup-missing ] && errs=$(sed 's/"NFS3ERR_NOENT":[0-9]*,\{0,1\}//' <<<"$errs")
  [ "$errs" = "{}" ] || note="errors:$errs"
  [[ "$m" == walk* ]] && [ "$(bench_json_field "$j" complete)" != true ] && note="$note incomplete"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$t" "$name" \
    "$(bench_json_field "$j" calls_per_s)" "$(bench_json_field "$j" p50_us)" "$(bench_json_field "$j" p99_us)" \
    "$cpu" "$(minus "$o1" "$o0")" "$(bench_json_field "$j" seconds)" "$calls" "${note:--}" >>"$results"
  bench_log "  #$rep $t $name: $(bench_json_field "$j" calls_per_s) calls/s p50 $(bench_json_field "$j" p50_us) us," \
    "$(bench_json_field "$j" seconds) s, CPU $cpu us/call, origin $(minus "$o1" "$o0") ${note}"
}

warm() {  # warm TARGET: every name, handle and ACCESS answer of the hit modes cached, and
  # the names of wr-TARGET/ (each write run looks its files up before it starts)
  local t=$1 m
  timeout 120 "$bench" --url "${url[$t]}" --mode getattr --dir "wr-$t" --files "$files" --count 1 \
    --duration 60 >/dev/null 2>>"$work/bench.log" || true
  for m in getattr lookup lookup-missing access read php; do
    # shellcheck disable=SC2046
    timeout 120 "$bench" --url "${url[$t]}" $(args_of "$m" "$t") --order sequential --count "$files" \
      --duration 60 >/dev/null 2>>"$work/bench.log" || true
    # shellcheck disable=SC2046
    timeout 120 "$bench" --url "${url[$t]}" $(args_of "$m" "$t") --duration 1 >/dev/null 2>>"$work/bench.log" || true
  done
}

has_mode() { [[ " $modes " == *" $1 "* ]]; }

bench_log "machine: $(bench_machine)"
bench_log "base: $base_bin ($(stat -c %y "$base_bin" | cut -d. -f1)); new: $new_bin ($(stat -c %y "$new_bin" | cut -d. -f1))"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)" >"$work/load.txt"
for rep in $(seq "$reps"); do
  order="base new"; [ $((rep % 2)) -eq 0 ] && order="new base"
  bench_log "== repetition $rep of $reps (order: $order; load average $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "repetition $rep: load average $(cut -d' ' -f1-3 /proc/loadavg) at its start" >>"$work/load.txt"
  export_dir=$work/export-$rep
  rm -rf "$work/export-$((rep - 1))"
  mkdir -p "$export_dir"
  "$bench" --prepare-local "$export_dir" --files "$files" --size 100 2>/dev/null
  "$bench" --prepare-local "$export_dir" --dir walk --files "$walk_files" --size 100 2>/dev/null
  for t in $targets; do
    "$bench" --prepare-local "$export_dir" --dir "wr-$t" --files "$files" --size "$write_size" 2>/dev/null
    "$bench" --prepare-local "$export_dir" --dir "churn-$t" --files 1 --size 100 2>/dev/null
  done
  origin_state=$work/origin-$rep
  bench_start_origin "$origin_state" "$export_dir" "$origin_nfs" "$origin_mnt" >/dev/null
  origin_url="nfs://127.0.0.1$export_dir?nfsport=$origin_nfs&mountport=$origin_mnt"
  for t in $order; do
    cache[$t]=$work/cache-$t-$rep
    rm -rf "$work/cache-$t-$((rep - 1))"
    mkdir -p "${cache[$t]}"
    config[$t]=$work/$t.toml
    bench_write_nfsgw_config "${config[$t]}" "${port[$t]}" "${cache[$t]}" "$origin_url" true "$ttl" 256 true "${writes[$t]}"
    url[$t]="nfs://127.0.0.1/export?nfsport=${port[$t]}&mountport=${port[$t]}"
    start_gw "$t"
    bench_log "  $t started in $started_s s"
  done
  for t in $order; do warm "$t"; done
  for t in $order; do run "$rep" "$t" walk walk-cold; done
  for t in $order; do run "$rep" "$t" walk walk-warm-0; done  # the first warm pass: not counted
  for m in null getattr lookup lookup-missing access read php; do
    has_mode "$m" || continue
    for t in $order; do run "$rep" "$t" "$m"; done
  done
  if has_mode walk-warm; then
    for i in $(seq "$walks"); do for t in $order; do run "$rep" "$t" walk walk-warm; done; done
  fi
  for m in write write-1 write-1-hot churn churn-1; do
    has_mode "$m" || continue
    for t in $order; do run "$rep" "$t" "$m"; done
  done
  for t in $order; do  # what each did before the kill -9s (a restart starts its counters at 0)
    timeout 10 "${bin[$t]}" stats --config "${config[$t]}" >"$work/stats-$t-$rep-before-restarts.txt" 2>&1 || true
  done
  if has_mode restart; then
    for i in $(seq "$restarts"); do
      for t in $order; do
        kill9_gw "$t"
        start_gw "$t"
        printf '%s\t%s\t%s\t%s\n' "$rep" "$t" "$i" "$started_s" >>"$work/restarts.txt"
        run "$rep" "$t" walk walk-after-restart
        run "$rep" "$t" walk walk-after-restart-warm
      done
    done
  fi
  for t in $order; do
    timeout 10 "${bin[$t]}" stats --config "${config[$t]}" >"$work/stats-$t-$rep.txt" 2>&1 || true
    bench_stop_pid "${pid[$t]}"
  done
  stop_origin
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$work/load.txt"

# --- the table ------------------------------------------------------------------
col() {  # col TARGET NAME FIELD -> values, one a line (FIELD: 4 calls/s ... 11 calls)
  awk -F'\t' -v t="$1" -v n="$2" -v f="$3" '$2 == t && $3 == n && $f != "-" { print $f }' "$results"
}
med() { col "$1" "$2" "$3" | bench_median; }
rep_ratios() {  # new/base of FIELD per repetition (runs of one repetition, seconds apart)
  awk -F'\t' -v n="$1" -v f="$2" '$3 == n && $f != "-" && $f + 0 > 0 { s[$1 " " $2] += $f; c[$1 " " $2]++ }
    END { for (k in s) { split(k, a, " "); if (a[2] == "new" && (a[1] " base") in s)
            print (s[k] / c[k]) / (s[a[1] " base"] / c[a[1] " base"]) } }' "$results"
}
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.2f-%.2f", lo, hi; else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
k() { awk -v a="$1" 'BEGIN { if (a == "-") print "-"; else if (a >= 1000) printf "%.1fk", a / 1000; else printf "%.0f", a }'; }
r1() { awk -v a="$1" 'BEGIN { if (a == "-") print "-"; else printf "%.1f", a }'; }
f0() { awk -v a="$1" 'BEGIN { if (a == "-" || a == "") print "-"; else printf "%.0f", a }'; }
f2() { awk -v a="$1" 'BEGIN { if (a == "-" || a == "") print "-"; else printf "%.2f", a }'; }
has_run() { awk -F'\t' -v n="$1" '$3 == n { found = 1 } END { exit !found }' "$results"; }
ms() { awk -v a="$1" 'BEGIN { if (a == "-") print "-"; else printf "%.1f", a * 1000 }'; }
{
  echo "### Side by side: base against new ($(date -u +%Y-%m-%d))"
  echo
  echo "Machine: $(bench_machine) (at the end of the run)."
  echo "base: ${base_bin} (writes ${writes[base]}); new: ${new_bin} (writes ${writes[new]}) (work tree $(bench_commit))."
  echo "$reps repetitions, each with a fresh origin and fresh cache dirs; base and new back to back for every run (base first in odd repetitions). ${duration} s per run; load $connections connections x $inflight in flight unless the mode says -1; windows $ttl; $files files; writes of $write_size B."
  echo
  echo "| mode | base calls/s | new calls/s | new/base (median of per-rep ratios, range) | base p50 us | new p50 us | new/base p50 | base CPU us/call | new CPU us/call | new/base CPU (median of per-rep ratios) | base origin calls | new origin calls |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for m in null getattr lookup lookup-missing access read php write write-1 write-1-hot churn churn-1; do
    has_run "$m" || continue
    rr=$(rep_ratios "$m" 4)
    echo "| $m | $(k "$(med base "$m" 4)") | $(k "$(med new "$m" 4)") | $(ratio "$(med new "$m" 4)" "$(med base "$m" 4)") ($(f2 "$(bench_median <<<"$rr")"), $(range <<<"$rr")) | $(r1 "$(med base "$m" 5)") | $(r1 "$(med new "$m" 5)") | $(ratio "$(med new "$m" 5)" "$(med base "$m" 5)") | $(f2 "$(med base "$m" 7)") | $(f2 "$(med new "$m" 7)") | $(f2 "$(rep_ratios "$m" 7 | bench_median)") | $(f0 "$(med base "$m" 8)") | $(f0 "$(med new "$m" 8)") |"
  done
  echo
  echo "Origin calls: what nfsgw's metadata cache counts as sent to the origin during the run (\`nfsgw stats --json\`, all procedures); WRITE, CREATE and REMOVE forwarded to the origin are not counted there."
  echo
  echo "Walks of walk/ ($(f0 "$(med base walk-warm 10)") calls, one in flight), median ms (origin calls, median):"
  echo
  echo "| walk | base ms | new ms | new/base (median of per-rep ratios, range) | base origin calls | new origin calls |"
  echo "|---|---:|---:|---:|---:|---:|"
  for w in walk-cold walk-warm walk-after-restart walk-after-restart-warm; do
    has_run "$w" || continue
    rr=$(rep_ratios "$w" 9)
    echo "| $w | $(ms "$(med base "$w" 9)") | $(ms "$(med new "$w" 9)") | $(ratio "$(med new "$w" 9)" "$(med base "$w" 9)") ($(f2 "$(bench_median <<<"$rr")"), $(range <<<"$rr")) | $(f0 "$(med base "$w" 8)") | $(f0 "$(med new "$w" 8)") |"
  done
  for t in $targets; do
    a=$(med "$t" walk-after-restart 9); b=$(med "$t" walk-warm 9)
    echo "- $t: first walk after kill -9 / warm walk = $(ratio "$a" "$b"); restart to the first answer $(f2 "$(awk -F'\t' -v t="$t" '$2 == t { print $4 }' "$work/restarts.txt" 2>/dev/null | bench_median)") s (median)"
  done
  if awk -F'\t' '$11 != "-" { found = 1 } END { exit !found }' "$results"; then
    echo "- runs with a note: $(awk -F'\t' '$11 != "-" { printf "%s %s #%s (%s); ", $2, $3, $1, $11 }' "$results")"
  fi
  echo
  echo "Load: $(tr '\n' ';' <"$work/load.txt")"
} | tee "$work/table.md"

#!/usr/bin/env bash
# Write-back over a WAN (issue 20): wan-emu between nfsgw and the origin with
# --delay-ms each way (default 10: 20 ms RTT) and a --cap-mibps bandwidth cap
# (default 100 MiB/s), nfsgw-bench as the client. One nfsgw serves the same origin
# folder twice: /back (writes = "back", write_back_delay = "1h", so nothing is
# flushed before the measured `nfsgw flush`) and /through (writes = "through").
# Each workload runs side by side in one run through /back, through /through and
# straight to the origin over the same link:
#   1. seqwrite: one client writes one --size-mib file (CREATE, 1 MiB UNSTABLE
#      WRITEs, --inflight in flight, COMMIT), timed until the COMMIT answers; then
#      `nfsgw flush --config F /back`, timed, and its rate against the cap;
#   2. frames: --frames clients at once, each a --frame-mib file the same way,
#      timed until the last COMMIT answered; then the flush;
#   3. unpack: one client, --files files of --file-kib KiB, one at a time, each
#      CREATE, WRITE, COMMIT, SETATTR (mode, atime and mtime, as tar -x); through
#      /back also with a SETATTR of the mode only (--setattr mode: the times of a
#      dirty file are kept and sent after its data, so the two should cost the
#      same); then the flush.
# After each flush the files are checked at the origin (size and content; unpack:
# also mode and mtime). Every figure comes with the MiB wan-emu carried towards
# the origin. --reps N repeats everything in fresh folders; medians are printed.
#
#   tools/bench/write-back-wan.sh [--build DIR] [--size-mib 1024] [--frames 16] [--frame-mib 64]
#        [--files 1000] [--file-kib 16] [--inflight 16] [--delay-ms 10] [--cap-mibps 100]
#        [--reps 1] [--skip "seq frames unpack"] [--out DIR]
#
# Ports (127.0.0.1; override with env): origin WB_ORIGIN_NFS_PORT=28090 and
# WB_ORIGIN_MOUNT_PORT=28048, wan-emu WB_WAN_NFS_PORT=28091, WB_WAN_MOUNT_PORT=28092,
# its control WB_WAN_CONTROL_PORT=28093, nfsgw WB_NFSGW_PORT=28094.
# Bounded: every nfsgw-bench run by its --duration cap (600 s) and `timeout`, every
# flush by `timeout 900`; everything started here is stopped by its pid on exit.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
size_mib=1024
frames=16
frame_mib=64
files=1000
file_kib=16
inflight=16
delay=10
cap=100
reps=1
skip=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --size-mib) size_mib=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --frame-mib) frame_mib=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --file-kib) file_kib=$2; shift 2 ;;
    --inflight) inflight=$2; shift 2 ;;
    --delay-ms) delay=$2; shift 2 ;;
    --cap-mibps) cap=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
num() { [[ "$2" =~ ^[0-9]+$ && "$2" -ge "$3" && "$2" -le "$4" ]] || { echo "$1: $3..$4" >&2; exit 2; }; }
num --size-mib "$size_mib" 1 4096
num --frames "$frames" 1 64
num --frame-mib "$frame_mib" 1 1024
num --files "$files" 1 100000
num --file-kib "$file_kib" 1 1024
num --inflight "$inflight" 1 64
num --delay-ms "$delay" 0 1000
num --cap-mibps "$cap" 1 10000
num --reps "$reps" 1 9
want() { [[ " $skip " != *" $1 "* ]]; }

bench=$build/tools/nfsgw-bench/nfsgw-bench
nfsgw=$build/nfsgw
for b in "$bench" "$nfsgw" "$build/tools/wan-emu/wan-emu"; do
  [ -x "$b" ] || { echo "missing $b: build nfsgw nfsgw-bench wan-emu first" >&2; exit 1; }
done
origin_nfs=${WB_ORIGIN_NFS_PORT:-28090}
origin_mnt=${WB_ORIGIN_MOUNT_PORT:-28048}
wan_nfs=${WB_WAN_NFS_PORT:-28091}
wan_mnt=${WB_WAN_MOUNT_PORT:-28092}
wan_ctl=${WB_WAN_CONTROL_PORT:-28093}
gw_port=${WB_NFSGW_PORT:-28094}

work=$(mktemp -d /tmp/bench-wb.XXXXXX)
# shellcheck source=tools/bench/bench-lib.sh
source "$repo/tools/bench/bench-lib.sh"
finish() {
  bench_cleanup
  if [ -n "$out" ]; then
    mkdir -p "$out"
    cp -f "$work"/*.log "$work"/*.txt "$work"/*.toml "$work"/results.tsv "$work"/table.md "$out"/ 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap finish EXIT

export_dir=$work/export
results=$work/results.tsv
: >"$results"
mkdir -p "$export_dir/probe" "$work/cache"
bench_log "machine: $(bench_machine)"
bench_start_origin "$work/origin" "$export_dir" "$origin_nfs" "$origin_mnt"
bench_start_wan "$wan_nfs" "$origin_nfs" "$wan_mnt" "$origin_mnt" "$wan_ctl" "$delay" "$work/wan-emu.log"
bench_wan bandwidth $(( cap * 1048576 * 8 / 1000 )) >/dev/null
wan_url="nfs://127.0.0.1$export_dir?nfsport=$wan_nfs&mountport=$wan_mnt"
back_url="nfs://127.0.0.1/back?nfsport=$gw_port&mountport=$gw_port"
through_url="nfs://127.0.0.1/through?nfsport=$gw_port&mountport=$gw_port"

config=$work/nfsgw.toml
{
  cat <<TOML
[server]
listen = "127.0.0.1"
nfs_port = $gw_port
mount_port = 0
register_rpcbind = false

[cache]
dir = "$work/cache"
TOML
  for e in back through; do
    cat <<TOML

[[export]]
path = "/$e"
origin = "$wan_url"
squash = "none"
writes = "$e"
TOML
    [ "$e" = back ] && echo 'write_back_delay = "1h"'
  done
} >"$config"
"$nfsgw" --config "$config" >>"$work/nfsgw.log" 2>&1 &
nfsgw_pid=$!
bench_pids+=("$nfsgw_pid")
for i in $(seq 61); do
  [ "$i" -le 60 ] || { echo "nfsgw did not answer within 60 s:" >&2; tail -30 "$work/nfsgw.log" >&2; exit 1; }
  kill -0 "$nfsgw_pid" 2>/dev/null || { echo "nfsgw exited:" >&2; tail -30 "$work/nfsgw.log" >&2; exit 1; }
  timeout 10 "$bench" --url "$back_url" --dir probe --mode null --count 1 --connections 1 --timeout 5 \
    >/dev/null 2>&1 && break
  sleep 1
done

up_mib() { bench_wan stats | grep -o '"up":{"bytes":[0-9]*' | grep -o '[0-9]*$' | awk '{ printf "%.1f", $1 / 1048576 }'; }
load_now() { cut -d' ' -f1 /proc/loadavg; }

# run_bench NAME ARGS... -> "seconds calls link-MiB-up load-before load-after" of one
# nfsgw-bench run (its JSON line in bench.log); fails the script on an incomplete run
run_bench() {
  local name=$1 j l0
  shift
  bench_wan reset >/dev/null
  l0=$(load_now)
  if ! j=$(timeout 700 "$bench" "$@" --duration 600 --timeout 60 --json 2>>"$work/bench.log" | tail -1) ||
     [ "$(bench_json_field "$j" complete)" != true ]; then
    bench_log "$name failed: $j (see bench.log)"; tail -5 "$work/bench.log" >&2; exit 1
  fi
  echo "$name $j" >>"$work/bench.log"
  echo "$(bench_json_field "$j" seconds) $(bench_json_field "$j" calls) $(up_mib) $l0 $(load_now)"
}

# flush MIB -> "seconds link-MiB-up MiB/s-of-data percent-of-cap": `nfsgw flush` of /back,
# MIB being the data it has to send
flush() {
  local a b l
  bench_wan reset >/dev/null
  a=$(date +%s.%N)
  if ! timeout 900 "$nfsgw" flush --config "$config" /back >>"$work/flush.log" 2>&1 </dev/null; then
    bench_log "nfsgw flush failed:"; tail -5 "$work/flush.log" >&2; exit 1
  fi
  b=$(date +%s.%N)
  l=$(up_mib)
  awk -v a="$a" -v b="$b" -v l="$l" -v m="$1" -v c="$cap" \
    'BEGIN { s = b - a; printf "%.2f %s %.1f %.0f\n", s, l, m / s, 100 * m / s / c }'
}

# check DIR COUNT BYTES PATTERN-SIZE [MTIME]: the files of DIR at the origin have
# BYTES bytes each, byte x being byte x % PATTERN-SIZE of nfsgw-bench's pattern
check() {
  python3 - "$export_dir/$1" "$2" "$3" "$4" "${5:-0}" <<'PY' || { bench_log "content check of $1 failed"; exit 1; }
import os, sys
d, count, size, psize, mtime = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
chunk = bytes(10 if i % 64 == 63 else 97 + i % 26 for i in range(psize))
names = sorted(os.listdir(d))
assert len(names) == count, (d, len(names))
for n in names:
    p = os.path.join(d, n)
    st = os.stat(p)
    assert st.st_size == size, (p, st.st_size)
    if mtime:
        assert int(st.st_mtime) == mtime and st.st_mode & 0o777 == 0o644, (p, st.st_mtime, oct(st.st_mode))
    with open(p, "rb") as f:
        at = 0
        while at < size:
            got = f.read(psize)
            assert got == chunk[:len(got)], (p, at)
            at += len(got)
PY
}

record() { echo "$1 $2 $3" >>"$results"; bench_log "$1 #$2: $3"; }
seq_bytes=$(( size_mib * 1048576 ))
frame_bytes=$(( frame_mib * 1048576 ))
file_bytes=$(( file_kib * 1024 ))

for rep in $(seq "$reps"); do
  bench_log "rep $rep: load $(cut -d' ' -f1-3 /proc/loadavg)"
  if want seq; then
    for t in back through origin; do
      case $t in back) u=$back_url ;; through) u=$through_url ;; origin) u=$wan_url ;; esac
      r=$(run_bench "seq-$t" --url "$u" --dir "seq-$t-$rep" --mode seqwrite --connections 1 \
          --inflight "$inflight" --size 1048576 --file-size "$seq_bytes")
      record "seq-$t" "$rep" "$r"
      if [ $t = back ]; then
        r=$(flush "$size_mib"); record seq-flush "$rep" "$r"
        check "seq-back-$rep" 1 "$seq_bytes" 1048576
      fi
    done
    rm -rf "$export_dir"/seq-*-"$rep"  # checked; the disk is shared
  fi
  if want frames; then
    for t in back through origin; do
      case $t in back) u=$back_url ;; through) u=$through_url ;; origin) u=$wan_url ;; esac
      r=$(run_bench "frames-$t" --url "$u" --dir "frames-$t-$rep" --mode seqwrite --connections "$frames" \
          --inflight "$inflight" --size 1048576 --file-size "$frame_bytes")
      record "frames-$t" "$rep" "$r"
      if [ $t = back ]; then
        r=$(flush $(( frames * frame_mib ))); record frames-flush "$rep" "$r"
        check "frames-back-$rep" "$frames" "$frame_bytes" 1048576
      fi
    done
    rm -rf "$export_dir"/frames-*-"$rep"
  fi
  if want unpack; then
    for t in back back-mode through origin; do
      case $t in back*) u=$back_url ;; through) u=$through_url ;; origin) u=$wan_url ;; esac
      sa=times; [ $t = back-mode ] && sa=mode
      r=$(run_bench "unpack-$t" --url "$u" --dir "unpack-$t-$rep" --mode unpack --files "$files" \
          --size "$file_bytes" --connections 1 --inflight 1 --setattr "$sa")
      record "unpack-$t" "$rep" "$r"
      if [[ $t = back* ]]; then
        r=$(flush "$(awk -v n="$files" -v k="$file_kib" 'BEGIN { print n * k / 1024 }')")
        record "unpack-$t-flush" "$rep" "$r"
        check "unpack-$t-$rep" "$files" "$file_bytes" "$file_bytes" "$([ $sa = times ] && echo 1767225600 || echo 0)"
      fi
    done
  fi
done
timeout 10 "$nfsgw" stats --config "$config" >"$work/stats.txt" 2>&1 || true
bench_log "nfsgw CPU: $(bench_cpu_s "$nfsgw_pid") s"

med() { grep "^$1 " "$results" | awk -v c="$2" '{ print $c }' | bench_median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1f", b / a; else print "-" }'; }
s1() { awk -v v="$1" 'BEGIN { if (v == "-") print "-"; else printf "%.1f", v }'; }
mibs() { awk -v s="$1" -v m="$2" 'BEGIN { if (s + 0 > 0) printf "%.1f", m / s; else print "-" }'; }
loads() { awk 'NF == 7 { print $6; print $7 }' "$results" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%s to %s", lo, hi; else print "-" }'; }
{
  echo "Write-back over a WAN: $((delay * 2)) ms RTT, ${cap} MiB/s cap ($(date -u +%Y-%m-%d)), medians of $reps."
  echo "Machine: $(bench_machine) (at the end). Tree: commit $(bench_commit)."
  echo
  echo "| workload | through /back (write-back) | through /through (write-through) | straight to the origin | write-through / write-back | flush of /back: s, MiB/s, % of cap |"
  echo "|---|---:|---:|---:|---:|---:|"
  if want seq; then
    echo "| one client writes ${size_mib} MiB, until COMMIT answered (s) | $(s1 "$(med seq-back 3)") | $(s1 "$(med seq-through 3)") | $(s1 "$(med seq-origin 3)") | $(ratio "$(med seq-back 3)" "$(med seq-through 3)")x | $(s1 "$(med seq-flush 3)") s, $(med seq-flush 5) MiB/s, $(med seq-flush 6)% |"
    echo "| the same, MiB/s | $(mibs "$(med seq-back 3)" "$size_mib") | $(mibs "$(med seq-through 3)" "$size_mib") | $(mibs "$(med seq-origin 3)" "$size_mib") | | |"
  fi
  if want frames; then
    echo "| $frames clients each write ${frame_mib} MiB, until the last COMMIT (s) | $(s1 "$(med frames-back 3)") | $(s1 "$(med frames-through 3)") | $(s1 "$(med frames-origin 3)") | $(ratio "$(med frames-back 3)" "$(med frames-through 3)")x | $(s1 "$(med frames-flush 3)") s, $(med frames-flush 5) MiB/s, $(med frames-flush 6)% |"
    echo "| the same, MiB/s | $(mibs "$(med frames-back 3)" $((frames * frame_mib))) | $(mibs "$(med frames-through 3)" $((frames * frame_mib))) | $(mibs "$(med frames-origin 3)" $((frames * frame_mib))) | | |"
  fi
  if want unpack; then
    echo "| unpack $files files of $file_kib KiB (CREATE WRITE COMMIT SETATTR of mode+times), s | $(s1 "$(med unpack-back 3)") | $(s1 "$(med unpack-through 3)") | $(s1 "$(med unpack-origin 3)") | $(ratio "$(med unpack-back 3)" "$(med unpack-through 3)")x | $(s1 "$(med unpack-back-flush 3)") s |"
    echo "| the same, SETATTR of the mode only (s) | $(s1 "$(med unpack-back-mode 3)") | - | - | $(ratio "$(med unpack-back-mode 3)" "$(med unpack-through 3)")x | $(s1 "$(med unpack-back-mode-flush 3)") s |"
  fi
  echo
  echo "MiB carried towards the origin (medians): seq back/through/origin/flush $(med seq-back 5)/$(med seq-through 5)/$(med seq-origin 5)/$(med seq-flush 4);" \
       "frames $(med frames-back 5)/$(med frames-through 5)/$(med frames-origin 5)/$(med frames-flush 4);" \
       "unpack $(med unpack-back 5)/$(med unpack-through 5)/$(med unpack-origin 5)/$(med unpack-back-flush 4)."
  echo "Host load (1-minute average at the start and the end of every client run): $(loads)."
} | tee "$work/table.md"

#!/usr/bin/env bash
# The data cache over a WAN: wan-emu between nfsgw and the origin with --delay-ms
# each way (default 10: 20 ms RTT) and a --cap-mibps bandwidth cap (default 100
# MiB/s), nfsgw-bench as the client, side by side in one run:
#   1. one sequential reader of a cold --size-mib file (1 MiB READs, 4 in flight,
#      like a kernel client's read-ahead): through nfsgw, straight to the origin
#      through the same link, and through nfs-ganesha PROXY_V4 for reference (its
#      NFSv4 origin, a second nfs-ganesha on the same folder, behind the same link;
#      left out with a note when nfs-ganesha-proxy-v4 is not installed);
#   2. the same read warm through nfsgw, against the origin straight over loopback
#      with no delay;
#   3. --readers readers of one cold file at once through nfsgw: bytes over the link
#      and the time until the last one finished;
#   4. small files: 16 clients, each LOOKUP + GETATTR + ACCESS + READ of a 128 KiB
#      file (nfsgw-bench's php mode), warm, through nfsgw and straight over the link.
# Every figure comes with the bytes wan-emu carried from the origin. --reps N repeats
# 1 and 3 after `nfsgw invalidate` (which drops file data too); medians are printed.
#
#   tools/bench/data-wan.sh [--build DIR] [--size-mib 1024] [--delay-ms 10] [--cap-mibps 100]
#        [--readers 32] [--small-files 2000] [--reps 1] [--out DIR]
#
# Ports (127.0.0.1): origin 24890/24848, wan-emu 24891/24892 (control 24893), nfsgw 24894;
# PROXY_V4's NFSv4 origin 24895 (24896 unused), its wan-emu pair 24897, PROXY_V4 24898/24899.
# Bounded: every nfsgw-bench run by its --duration cap (600 s) and `timeout`.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
size_mib=1024
delay=10
cap=100
readers=32
small_files=2000
reps=1
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --size-mib) size_mib=$2; shift 2 ;;
    --delay-ms) delay=$2; shift 2 ;;
    --cap-mibps) cap=$2; shift 2 ;;
    --readers) readers=$2; shift 2 ;;
    --small-files) small_files=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$size_mib" =~ ^[0-9]+$ && "$size_mib" -ge 8 && "$size_mib" -le 16384 ]] || { echo "--size-mib: 8..16384" >&2; exit 2; }
[[ "$readers" =~ ^[0-9]+$ && "$readers" -ge 1 && "$readers" -le 128 ]] || { echo "--readers: 1..128" >&2; exit 2; }
[[ "$reps" =~ ^[1-9]$ ]] || { echo "--reps: 1..9" >&2; exit 2; }

bench=$build/tools/nfsgw-bench/nfsgw-bench
nfsgw=$build/nfsgw
for b in "$bench" "$nfsgw" "$build/tools/wan-emu/wan-emu"; do
  [ -x "$b" ] || { echo "missing $b: build nfsgw nfsgw-bench wan-emu first" >&2; exit 1; }
done
origin_nfs=24890; origin_mnt=24848; wan_nfs=24891; wan_mnt=24892; wan_ctl=24893; gw_port=24894
o4_nfs=24895; o4_mnt=24896; wan_o4=24897; proxy_nfs=24898; proxy_mnt=24899

work=$(mktemp -d /tmp/bench-data.XXXXXX)
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
mkdir -p "$export_dir/big" "$export_dir/many" "$export_dir/probe"
timeout 600 dd if=/dev/urandom of="$export_dir/big/f000000" bs=1M count="$size_mib" status=none
timeout 600 dd if=/dev/urandom of="$export_dir/many/f000000" bs=1M count="$size_mib" status=none
"$bench" --prepare-local "$export_dir" --dir small --files "$small_files" --size 131072 >/dev/null

bench_start_origin "$work/origin" "$export_dir" "$origin_nfs" "$origin_mnt"
bench_start_wan "$wan_nfs" "$origin_nfs" "$wan_mnt" "$origin_mnt" "$wan_ctl" "$delay" "$work/wan-emu.log" \
  "$wan_o4=$o4_nfs"
kbps=$(( cap * 1048576 * 8 / 1000 ))
bench_wan bandwidth "$kbps" >/dev/null
wan_url="nfs://127.0.0.1$export_dir?nfsport=$wan_nfs&mountport=$wan_mnt"
lo_url="nfs://127.0.0.1$export_dir?nfsport=$origin_nfs&mountport=$origin_mnt"
gw_url="nfs://127.0.0.1/export?nfsport=$gw_port&mountport=$gw_port"
config=$work/nfsgw.toml
mkdir -p "$work/cache"
bench_write_nfsgw_config "$config" "$gw_port" "$work/cache" "$wan_url" true 1h 256
bench_start_nfsgw "$config" "$gw_port" "$work/nfsgw.log" probe
proxy_note=""
if ! bench_have_proxy_v4; then
  proxy_note="nfs-ganesha PROXY_V4 is not installed (apt-get install -y nfs-ganesha-proxy-v4)"
elif ! bench_start_proxy_v4 "$work" "$export_dir" "$o4_nfs" "$o4_mnt" "$proxy_nfs" "$proxy_mnt" 3600 big "$wan_o4"; then
  proxy_note="PROXY_V4 did not answer within about a minute (see proxy.log, origin4.log)"
fi
[ -z "$proxy_note" ] || bench_log "NOTE: $proxy_note; its row is left out"
blocks=$(( size_mib ))

down_bytes() { bench_wan stats | grep -o '"down":{"bytes":[0-9]*' | grep -o '[0-9]*$'; }

# seq_read URL DIR -> "seconds MiB/s link-MiB" of one sequential reader of DIR/f000000
seq_read() {
  local j s
  bench_wan reset >/dev/null
  j=$(timeout 700 "$bench" --url "$1" --dir "$2" --files 1 --mode read --order sequential --size 1048576 \
      --count "$blocks" --connections 1 --inflight 4 --duration 600 --timeout 60 --json 2>>"$work/bench.log" | tail -1)
  s=$(bench_json_field "$j" seconds)
  awk -v s="$s" -v n="$size_mib" -v b="$(down_bytes)" 'BEGIN { printf "%.2f %.1f %.1f\n", s, n / s, b / 1048576 }'
}

# many_read -> "seconds-until-last link-MiB" of --readers sequential readers at once
many_read() {
  local start end pids=() i
  bench_wan reset >/dev/null
  start=$(date +%s.%N)
  for ((i = 0; i < readers; i++)); do
    timeout 700 "$bench" --url "$gw_url" --dir many --files 1 --mode read --order sequential --size 1048576 \
      --count "$blocks" --connections 1 --inflight 4 --duration 600 --timeout 60 >>"$work/bench.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || bench_log "a reader failed (see bench.log)"; done
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" -v m="$(down_bytes)" 'BEGIN { printf "%.2f %.1f\n", b - a, m / 1048576 }'
}

# small URL -> "requests/s p99-us link-MiB" of the small-file mix, 16 clients, 10 s
# (php mode: 4 calls per request, so a warm-up of 4 x files calls touches every file)
small() {
  local j
  timeout 200 "$bench" --url "$1" --dir small --files "$small_files" --mode php --size 131072 \
    --order sequential --count $(( small_files * 4 )) --connections 1 --inflight 1 --duration 120 >/dev/null 2>&1 || true
  bench_wan reset >/dev/null
  j=$(timeout 200 "$bench" --url "$1" --dir small --files "$small_files" --mode php --size 131072 \
      --connections 16 --inflight 1 --duration 10 --json 2>>"$work/bench.log" | tail -1)
  echo "$(bench_json_field "$j" requests_per_s) $(bench_json_field "$j" p99_us) $(awk -v b="$(down_bytes)" 'BEGIN { printf "%.1f", b / 1048576 }')"
}

for rep in $(seq "$reps"); do
  if [ "$rep" -gt 1 ]; then
    timeout 30 "$nfsgw" invalidate --config "$config" /export --recursive >>"$work/bench.log" 2>&1
  fi
  r=$(seq_read "$gw_url" big); echo "cold-gw $rep $r" >>"$results"; bench_log "cold through nfsgw #$rep: $r (s MiB/s link-MiB)"
  r=$(seq_read "$gw_url" big); echo "warm-gw $rep $r" >>"$results"; bench_log "warm through nfsgw #$rep: $r"
  r=$(seq_read "$wan_url" big); echo "wan-origin $rep $r" >>"$results"; bench_log "straight over the link #$rep: $r"
  if [ -z "$proxy_note" ]; then
    r=$(seq_read "$proxy_url" big); echo "proxy $rep $r" >>"$results"; bench_log "through PROXY_V4 over the link #$rep: $r"
  fi
  r=$(seq_read "$lo_url" big); echo "lo-origin $rep $r" >>"$results"; bench_log "straight on loopback #$rep: $r"
  r=$(many_read); echo "many-gw $rep $r" >>"$results"; bench_log "$readers readers through nfsgw #$rep: $r (s link-MiB)"
done
r=$(small "$gw_url"); echo "small-gw 1 $r" >>"$results"; bench_log "small files through nfsgw: $r (req/s p99-us link-MiB)"
r=$(small "$wan_url"); echo "small-wan 1 $r" >>"$results"; bench_log "small files straight over the link: $r"
timeout 10 "$nfsgw" stats --config "$config" >"$work/stats.txt" 2>&1 || true

med() { grep "^$1 " "$results" | awk -v c="$2" '{ print $c }' | bench_median; }
{
  echo "### Data cache over a WAN: $((delay * 2)) ms RTT, ${cap} MiB/s cap ($(date -u +%Y-%m-%d))"
  echo
  echo "Machine: $(bench_machine) (at the end). Tree: commit $(bench_commit). Medians of $reps."
  echo
  echo "| read of one ${size_mib} MiB file (1 MiB READs, 4 in flight) | seconds | MiB/s | MiB over the link |"
  echo "|---|---:|---:|---:|"
  echo "| cold, through nfsgw | $(med cold-gw 3) | $(med cold-gw 4) | $(med cold-gw 5) |"
  echo "| straight to the origin over the link | $(med wan-origin 3) | $(med wan-origin 4) | $(med wan-origin 5) |"
  if [ -z "$proxy_note" ]; then
    echo "| cold, through nfs-ganesha PROXY_V4 (its NFSv4 origin over the link) | $(med proxy 3) | $(med proxy 4) | $(med proxy 5) |"
  else
    echo "| cold, through nfs-ganesha PROXY_V4 | - | - | - ($proxy_note) |"
  fi
  echo "| warm, through nfsgw | $(med warm-gw 3) | $(med warm-gw 4) | $(med warm-gw 5) |"
  echo "| straight to the origin on loopback, no delay | $(med lo-origin 3) | $(med lo-origin 4) | - |"
  echo
  echo "- $readers readers of one cold ${size_mib} MiB file at once through nfsgw: last done after $(med many-gw 3) s;" \
       "$(med many-gw 4) MiB over the link ($(awk -v m="$(med many-gw 4)" -v n="$size_mib" 'BEGIN { printf "%.3f", m / n }')x the file)."
  echo "- small files (16 clients, php mode on 128 KiB files, warm): nfsgw $(med small-gw 3) requests/s (p99 $(med small-gw 4) us," \
       "$(med small-gw 5) MiB over the link); straight over the link $(med small-wan 3) requests/s (p99 $(med small-wan 4) us)."
} | tee "$work/table.md"

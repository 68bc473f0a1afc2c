#!/usr/bin/env bash
# The metadata cache larger than its memory: a tree of --dirs x --per-dir empty
# files (default 1,000 x 1,000 = 1,000,000 entries) made directly on the origin's
# disk, nfsgw with [cache] memory_mb = --memory-mb (default 64):
#   1. walk the tree cold through nfsgw (READDIRPLUS of every folder, GETATTR of every entry)
#   2. push --read-mib MiB of file data through nfsgw (sequential 1 MiB reads of 8 files)
#   3. walk it again, warm
# and report both walks' times, the calls that reached the origin during each
# (counted by wan-emu relaying nfsgw -> origin with no delay), nfsgw's peak RSS
# (VmHWM) and the [cache] dir's size on disk, plus `nfsgw stats` after each step.
# Loopback, no delay; windows of --ttl (1h: the whole run must fit inside them).
#
#   tools/bench/large-tree.sh [--build DIR] [--dirs 1000] [--per-dir 1000] [--memory-mb 64]
#        [--read-mib 2048] [--ttl 1h] [--connections 4] [--inflight 16]
#        [--tree-dir DIR] [--out DIR]
#
# --tree-dir keeps the tree (and the 8 big files) in DIR for later runs instead of a
# scratch folder removed at exit; an existing tree of the same shape there is reused.
# Ports (127.0.0.1): origin 24690/24648, wan-emu 24691/24692 (control 24693), nfsgw 24694.
# Bounded: tree creation 1,200 s, each walk 600 s (nfsgw-bench's cap), the reads 600 s.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
dirs=1000
per_dir=1000
memory_mb=64
read_mib=2048
ttl=1h
connections=4
inflight=16
tree_dir=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --dirs) dirs=$2; shift 2 ;;
    --per-dir) per_dir=$2; shift 2 ;;
    --memory-mb) memory_mb=$2; shift 2 ;;
    --read-mib) read_mib=$2; shift 2 ;;
    --ttl) ttl=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --inflight) inflight=$2; shift 2 ;;
    --tree-dir) tree_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$dirs" =~ ^[0-9]+$ && "$dirs" -ge 1 && "$dirs" -le 10000 ]] || { echo "--dirs: 1..10000" >&2; exit 2; }
[[ "$per_dir" =~ ^[0-9]+$ && "$per_dir" -ge 1 && "$per_dir" -le 10000 ]] || { echo "--per-dir: 1..10000" >&2; exit 2; }
[[ "$read_mib" =~ ^[0-9]+$ && "$read_mib" -ge 8 && "$read_mib" -le 16384 ]] || { echo "--read-mib: 8..16384" >&2; exit 2; }

bench=$build/tools/nfsgw-bench/nfsgw-bench
nfsgw=$build/nfsgw
for b in "$bench" "$nfsgw" "$build/tools/wan-emu/wan-emu"; do
  [ -x "$b" ] || { echo "missing $b: build nfsgw nfsgw-bench wan-emu first" >&2; exit 1; }
done
origin_nfs=24690; origin_mnt=24648; wan_nfs=24691; wan_mnt=24692; wan_ctl=24693; gw_port=24694

work=$(mktemp -d /tmp/bench-large.XXXXXX)
# shellcheck source=tools/bench/bench-lib.sh
source "$repo/tools/bench/bench-lib.sh"
finish() {
  bench_cleanup
  if [ -n "$out" ]; then
    mkdir -p "$out"
    cp -f "$work"/*.log "$work"/*.txt "$work"/table.md "$out"/ 2>/dev/null || true
  fi
  timeout 600 rm -rf "$work" || true
}
trap finish EXIT

export_dir=${tree_dir:-$work/export}
mkdir -p "$export_dir"
export_dir=$(cd "$export_dir" && pwd)
shape="$dirs x $per_dir"
bench_log "machine: $(bench_machine)"
df -h "$export_dir" >&2; df -i "$export_dir" >&2
need_inodes=$(( dirs * (per_dir + 1) + 100 ))
free_inodes=$(df --output=iavail "$export_dir" | tail -1 | tr -d ' ')
free_kb=$(df --output=avail "$export_dir" | tail -1 | tr -d ' ')
[ "$free_inodes" -gt "$need_inodes" ] || { echo "not enough inodes: $free_inodes free, $need_inodes needed" >&2; exit 1; }
[ "$free_kb" -gt $(( (read_mib + 4096) * 1024 )) ] || { echo "not enough disk: ${free_kb} KiB free" >&2; exit 1; }

if [ "$(cat "$export_dir/.shape" 2>/dev/null)" != "$shape $read_mib" ]; then
  bench_log "creating $shape empty files under $export_dir/tree (bounded to 1,200 s)"
  t0=$(date +%s.%N)
  rm -rf "$export_dir/tree" "$export_dir/big" "$export_dir/.shape"
  # One touch per folder, with all its names; the loop is bounded by the count and by timeout.
  timeout 1200 bash -c '
    per=$2; names=()
    for ((f = 0; f < per; f++)); do names+=("$(printf "f%04d" "$f")"); done
    for ((d = 0; d < $1; d++)); do
      dd=$0/tree/$(printf "d%04d" "$d"); mkdir -p "$dd"; (cd "$dd" && touch "${names[@]}")
    done' "$export_dir" "$dirs" "$per_dir"
  mkdir -p "$export_dir/big"
  for ((i = 0; i < 8; i++)); do
    timeout 300 dd if=/dev/urandom of="$export_dir/big/$(printf 'f%06d' "$i")" bs=1M count=$((read_mib / 8)) status=none
  done
  echo "$shape $read_mib" >"$export_dir/.shape"
  bench_log "tree made in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.0f", b-a}') s"
fi

bench_start_origin "$work/origin" "$export_dir" "$origin_nfs" "$origin_mnt"
bench_start_wan "$wan_nfs" "$origin_nfs" "$wan_mnt" "$origin_mnt" "$wan_ctl" 0 "$work/wan-emu.log"
origin_url="nfs://127.0.0.1$export_dir?nfsport=$wan_nfs&mountport=$wan_mnt"
gw_url="nfs://127.0.0.1/export?nfsport=$gw_port&mountport=$gw_port"
config=$work/nfsgw.toml
mkdir -p "$work/cache"
bench_write_nfsgw_config "$config" "$gw_port" "$work/cache" "$origin_url" true "$ttl" "$memory_mb"
mkdir -p "$export_dir/probe"
bench_start_nfsgw "$config" "$gw_port" "$work/nfsgw.log" probe

hwm() { grep VmHWM "/proc/$nfsgw_pid/status" | awk '{printf "%.0f MiB", $2 / 1024}'; }
rss() { grep VmRSS "/proc/$nfsgw_pid/status" | awk '{printf "%.0f MiB", $2 / 1024}'; }
du_cache() { du -sh "$work/cache" | cut -f1; }
summary=()

walk() {  # walk NAME
  local j
  bench_wan reset >/dev/null
  j=$(timeout 700 "$bench" --url "$gw_url" --dir tree --files 1 --mode walk --connections "$connections" \
        --inflight "$inflight" --duration 600 --timeout 60 --json 2>>"$work/bench.log" | tail -1) || true
  local calls; calls=$(bench_wan_calls "$(bench_wan stats)")
  echo "$1 $j" >>"$work/bench.log"
  timeout 30 "$nfsgw" stats --config "$config" >"$work/stats-after-$1.txt" 2>&1 || true
  summary+=("$1 walk: $(bench_json_field "$j" seconds) s, $(bench_json_field "$j" calls) calls ($(bench_json_field "$j" calls_per_s)/s), entries $(bench_json_field "$j" entries), dirs $(bench_json_field "$j" dirs), complete $(bench_json_field "$j" complete), errors $(grep -o '"errors":{[^}]*}' <<<"$j" | cut -d: -f2-); origin calls: $calls; nfsgw RSS $(rss), peak $(hwm); cache dir $(du_cache)")
  bench_log "${summary[-1]}"
}

walk cold
bench_wan reset >/dev/null
j=$(timeout 700 "$bench" --url "$gw_url" --dir big --files 8 --mode read --order sequential --size 1048576 \
      --count "$read_mib" --connections 4 --inflight 4 --duration 600 --timeout 60 --json 2>>"$work/bench.log" | tail -1) || true
summary+=("read: $(bench_json_field "$j" calls) reads of 1 MiB in $(bench_json_field "$j" seconds) s, errors $(grep -o '"errors":{[^}]*}' <<<"$j" | cut -d: -f2-); origin calls: $(bench_wan_calls "$(bench_wan stats)"); nfsgw RSS $(rss), peak $(hwm); cache dir $(du_cache)")
bench_log "${summary[-1]}"
timeout 30 "$nfsgw" stats --config "$config" >"$work/stats-after-read.txt" 2>&1 || true
walk warm

{
  echo "### Larger than memory: $shape entries, memory_mb = $memory_mb ($(date -u +%Y-%m-%d))"
  echo
  echo "Machine: $(bench_machine) (at the end of the run). Tree: commit $(bench_commit)."
  echo "Walk: $connections connections x $inflight in flight; windows $ttl; loopback, origin calls counted by wan-emu at 0 ms."
  echo
  for s in "${summary[@]}"; do echo "- $s"; done
  echo
  echo "nfsgw stats after the warm walk:"
  echo
  echo '```'
  cat "$work/stats-after-warm.txt"
  echo '```'
} | tee "$work/table.md"

#!/usr/bin/env bash
# Reproduces the measurements in tools/wan-emu/README.md: throughput of small RPCs
# (NFSv3 NULL) at zero delay through wan-emu vs direct, and delay accuracy with
# 1,000 calls in flight. Uses a loopback ganesha origin on wanemu's ports.
#
#   tools/wan-emu/measure.sh BUILD_DIR [CALLS] [RUNS]
#
# BUILD_DIR holds tools/wan-emu/{wan-emu,wan-emu-probe}; build it Release for numbers.
set -euo pipefail
build=${1:?build dir}
calls=${2:-50000}
runs=${3:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=$build/tools/wan-emu
work=$(mktemp -d /tmp/wanemu-measure.XXXXXX)
nfs=22090 mnt=22091 ctl=22060 relay_nfs=22061 relay_mnt=22062

cleanup() {
  [ -n "${emu_pid:-}" ] && kill "$emu_pid" 2>/dev/null || true
  "$here/scripts/origin-ganesha.sh" stop "$work/state" || true
  rm -rf "$work"
}
trap cleanup EXIT

"$here/scripts/origin-ganesha.sh" start "$work/state" "$work/export" $nfs $mnt >/dev/null
"$bin/wan-emu" --pair 127.0.0.1:$relay_nfs=127.0.0.1:$nfs --pair 127.0.0.1:$relay_mnt=127.0.0.1:$mnt \
  --control 127.0.0.1:$ctl >"$work/emu.log" 2>&1 &
emu_pid=$!
for _ in $(seq 50); do grep -q "wan-emu ready" "$work/emu.log" && break; sleep 0.1; done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$emu_pid/stat"; }
field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(eval('d'+sys.argv[2]))" "$1" "$2"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== zero delay, $calls NULL calls, 64 in flight, $runs runs"
direct=() relayed=() ratios=() cpu=()
for i in $(seq "$runs"); do
  d=$("$bin/wan-emu-probe" --port $nfs --calls "$calls" --in-flight 64)
  t0=$(cpu_ticks)
  r=$("$bin/wan-emu-probe" --port $relay_nfs --calls "$calls" --in-flight 64)
  t1=$(cpu_ticks)
  dc=$(field "$d" "['calls_per_s']"); rc=$(field "$r" "['calls_per_s']")
  us_per_call=$(python3 -c "print(round(($t1-$t0)*1e6/$(getconf CLK_TCK)/$calls, 2))")
  direct+=("$dc"); relayed+=("$rc"); cpu+=("$us_per_call")
  ratios+=("$(python3 -c "print(round($rc/$dc, 3))")")
  echo "run $i: direct $dc/s  via wan-emu $rc/s  wan-emu CPU ${us_per_call} us/call"
done
echo "median: direct $(median "${direct[@]}")/s via $(median "${relayed[@]}")/s ratio $(median "${ratios[@]}") wan-emu CPU $(median "${cpu[@]}") us/call"

echo "== 100 ms one-way delay, 10000 NULL calls, 1000 in flight, $runs runs"
base=$("$bin/wan-emu-probe" --port $nfs --calls 10000 --in-flight 1000)
echo "direct (no relay) baseline: p50 $(field "$base" "['rtt_ms']['p50']") ms p99 $(field "$base" "['rtt_ms']['p99']") ms"
"$bin/wan-emu" --ctl 127.0.0.1:$ctl delay 100 >/dev/null
p50s=() p99s=()
for i in $(seq "$runs"); do
  "$bin/wan-emu" --ctl 127.0.0.1:$ctl reset >/dev/null
  r=$("$bin/wan-emu-probe" --port $relay_nfs --calls 10000 --in-flight 1000)
  s=$("$bin/wan-emu" --ctl 127.0.0.1:$ctl stats)
  p50=$(python3 -c "print(round($(field "$r" "['rtt_ms']['p50']") - 200, 3))")
  p99=$(python3 -c "print(round($(field "$r" "['rtt_ms']['p99']") - 200, 3))")
  p50s+=("$p50"); p99s+=("$p99")
  echo "run $i: RTT-200ms p50 $p50 ms p99 $p99 ms; relay lateness up mean/max $(field "$s" "['up']['late_us_mean']")/$(field "$s" "['up']['late_us_max']") us, down $(field "$s" "['down']['late_us_mean']")/$(field "$s" "['down']['late_us_max']") us"
done
echo "median: RTT-200ms p50 $(median "${p50s[@]}") ms p99 $(median "${p99s[@]}") ms"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

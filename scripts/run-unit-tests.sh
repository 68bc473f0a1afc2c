#!/usr/bin/env bash
# Runs the unit-test binaries of a build dir, each ONCE (GoogleTest runs all of a
# binary's tests in one process), two binaries at a time, and wan-emu's tests
# alone after them (its end-to-end tests start nfs-ganesha on fixed ports and
# time delays):
#   scripts/run-unit-tests.sh BUILD_DIR BINARY...
# BINARY: target names (nfsgw_cache_tests, ...), looked up under BUILD_DIR.
#
# Why not `ctest -L unit`: gtest_discover_tests makes a ctest test, and so a
# process, of each of the ~1,200 tests; under ASan a process start is most of
# a small test's time (0.2-0.3 s each, about 60% of the unit stage's 343 s of
# test time in CI). Developers keep ctest's per-test entries; CI runs this.
#
# Prints each binary's output (its failures in full), then one line per binary and
# a last line in ctest's summary format, counted from GoogleTest's own totals, so
# scripts/ctest-summary.sh adds these tests to the others:
#   "100% tests passed, 0 tests failed out of 1210"
# A binary that crashes or times out (900 s) counts as one failed test beyond what
# it reported. Exit status 0 when every binary passed.
set -uo pipefail
build=$(cd "${1:?build dir}" && pwd) || exit 2; shift
[ $# -gt 0 ] || { echo "usage: run-unit-tests.sh BUILD_DIR BINARY..." >&2; exit 2; }
results=$(mktemp -d /tmp/nfsgw-unit.XXXXXX)

run_one() {  # target name; writes $results/<name>.{log,result}
  local name=$1 bin
  bin=$(find "$build" -type f -name "$name" -perm -u+x | head -1)
  if [ -z "$bin" ]; then
    echo "missing 0 0 1" >"$results/$name.result"; echo "$name: no such binary under $build" >"$results/$name.log"
    return
  fi
  local start rc
  start=$(date +%s)
  (cd "$(dirname "$bin")" && timeout 900 "$bin" --gtest_color=no) >"$results/$name.log" 2>&1
  rc=$?
  # GoogleTest's totals: "[  PASSED  ] N tests." and "[  FAILED  ] N tests, listed below:"
  local passed failed
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\.$/\1/p' "$results/$name.log" | tail -1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below:$/\1/p' "$results/$name.log" | tail -1)
  passed=${passed:-0}; failed=${failed:-0}
  # A crash, a sanitizer abort or the time-out: the binary's report is missing or
  # partial; count one more failure so it cannot pass.
  local broken=0
  if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then broken=1; fi
  echo "$rc $passed $((failed + broken)) $(( $(date +%s) - start ))" >"$results/$name.result"
}
export -f run_one
export build results

wanemu=()
others=()
for n in "$@"; do
  case "$n" in *wanemu*) wanemu+=("$n") ;; *) others+=("$n") ;; esac
done
# The slowest first, so that the two lanes end about together: cache's property
# tests alone take about as long as all the others.
slow_first() {
  local n
  for n in nfsgw_cache_tests nfsgw_gateway_unit_tests nfsgw_metacache_tests nfsgw_config_tests; do
    printf '%s\n' "${others[@]}" | grep -qx "$n" && echo "$n"
  done
  printf '%s\n' "${others[@]}" | grep -vxE 'nfsgw_(cache|gateway_unit|metacache|config)_tests'
}
slow_first | xargs -P2 -I{} bash -c 'run_one "$1"' _ {}
for n in "${wanemu[@]}"; do run_one "$n"; done

total_passed=0; total_failed=0; status=0
for n in "$@"; do
  read -r rc passed failed seconds <"$results/$n.result"
  if [ "$failed" -ne 0 ] || [ "$rc" != 0 ]; then
    status=1
    echo "== $n FAILED (exit $rc): its output"
    cat "$results/$n.log"
  fi
done
for n in "$@"; do
  read -r rc passed failed seconds <"$results/$n.result"
  printf -- '-- %-30s %5d passed, %d failed, %s s (exit %s)\n' "$n" "$passed" "$failed" "${seconds:-?}" "$rc"
  total_passed=$((total_passed + passed)); total_failed=$((total_failed + failed))
done
total=$((total_passed + total_failed))
pct=100; [ "$total" -eq 0 ] || pct=$((100 * total_passed / total))
echo "${pct}% tests passed, ${total_failed} tests failed out of ${total}"
rm -rf "$results"
exit "$status"

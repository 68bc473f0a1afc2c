#!/usr/bin/env bash
# Runs every nfsgw test on a fresh Debian 12 machine, as root:
#   1. installs the Debian packages (scripts/install-deps.sh),
#   2. builds everything into build/ and runs the whole ctest suite (unit, integration
#      against a real nfs-ganesha origin, wan-emu, nfsgw-bench, Linux kernel client
#      under qemu),
#   3. builds nfsgw and the unit tests with ASan and UBSan into build-asan/, runs
#      the unit tests, and runs the integration suite against that nfsgw,
#   4. builds the libFuzzer targets with clang into build-fuzz/ and runs each for
#      10 s on a copy of its seed corpus (tests/fuzz, docs/fuzzing.md).
# The builds of 3 and 4 run in the background at the lowest CPU priority while
# stage 1's tests run: most of those wait on sockets or timers, so the builds take
# the CPU they leave idle instead of adding their own minutes at the end (the
# sanitized nfsgw first: the sanitizer stage's integration suite starts as soon as
# it is built, while the sanitized unit tests and the fuzz targets go on building).
# For the same reason the kernel client scenarios (a qemu guest on one core each)
# run beside the sanitizer stage, all but the two that move rpcbind's entries,
# which run after it.
# Every test starts what it needs (rpcbind, ganesha, nfsgw) on loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ "$(id -u)" -ne 0 ]; then
  echo "scripts/test.sh must run as root (it starts rpcbind, nfs-ganesha and qemu)" >&2
  exit 1
fi

bash scripts/install-deps.sh
mkdir -p /run/rpcbind
rpcinfo -p 127.0.0.1 >/dev/null 2>&1 || rpcbind -w || rpcbind

start=$(date +%s)
echo "== stage 1: build and run all tests"
# Line tables only (-g1) instead of full debug info (-g): backtraces, ASan reports
# and gdb still show functions, files and lines, and a build costs about a quarter
# less CPU (no variable locations to track). scripts/build.sh alone keeps -g.
ci_debug_info=-g1
BUILD_DIR=build bash scripts/build.sh \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 $ci_debug_info -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 $ci_debug_info -DNDEBUG"

# The sanitizer and fuzz builds (stages 2 and 3), in the background at nice 19.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
asan_targets_of() {
  cmake --build build-asan --target help |
    awk '/^\.\.\. nfsgw_(protocol|config|cache|metacache|datacache|gateway_unit|admin_unit|reload_unit|warm_unit|metrics_unit|wanemu)_tests$/ {print $2}'
}
# nfsgw itself, built with the sanitizers, for the whole integration suite (real
# origin, real clients, hostile input): the suite's own binaries (clients, relays)
# are stage 1's, only nfsgw needs the sanitizers. Built first, so that the suite
# can start while the unit-test binaries are still being built.
build_sanitized_nfsgw() {
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNFSGW_SANITIZE=ON \
    -DCMAKE_CXX_FLAGS_DEBUG="$ci_debug_info" -DCMAKE_C_FLAGS_DEBUG="$ci_debug_info" >/dev/null &&
    cmake --build build-asan -j"$(nproc)" --target nfsgw
}
build_sanitized_units() {
  # shellcheck disable=SC2046
  cmake --build build-asan -j"$(nproc)" --target $(asan_targets_of)
}
# Only the fuzz targets and the libraries they fuzz (protocol, config, the handle
# codec), built with clang into build-fuzz/.
build_fuzz() {
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNFSGW_FUZZ=ON \
    -DNFSGW_TESTS=OFF -DNFSGW_PCH=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 $ci_debug_info" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 $ci_debug_info" >/dev/null &&
    cmake --build build-fuzz -j"$(nproc)" --target nfsgw_fuzz
}
bg_logs=$(mktemp -d /tmp/nfsgw-ci-builds.XXXXXX)
(
  renice -n 19 -p "$BASHPID" >/dev/null
  set +e
  build_sanitized_nfsgw >"$bg_logs/asan.log" 2>&1; echo $? >"$bg_logs/asan-nfsgw.status"
  build_sanitized_units >>"$bg_logs/asan.log" 2>&1; echo $? >"$bg_logs/asan.status"
  build_fuzz >"$bg_logs/fuzz.log" 2>&1; echo $? >"$bg_logs/fuzz.status"
) &
bg_builds=$!
echo "-- stages 2 and 3 build in the background (nice 19; logs in $bg_logs)"

set +e
# Two at a time except the kernel tests (each boots qemu guests on fixed ports);
# tests that need the machine to themselves (integration, upstream, nfsgw-bench)
# are RUN_SERIAL, so ctest runs them alone.
(cd build && ctest --output-on-failure --timeout 900 -j2 -LE kernel) 2>&1 | tee build/ctest.log
status=${PIPESTATUS[0]}
set -e
echo "-- stage 1 (all but the kernel client) done at $(( $(date +%s) - start )) s"

# The Linux kernel client scenarios run beside stage 2: each is a qemu guest on one
# core with ports of its own (tests/kernel), while stage 2 waits for its build and
# then runs tests that mostly wait on sockets and timers. Left for after stage 2,
# alone: the two "mount" scenarios, which move rpcbind's NFS/MOUNT entries (an
# origin that the sanitizer stage starts meanwhile registers its own), and the
# dd control against nfs-ganesha alone (256 MiB each way, about 3 minutes; it tests
# the scenario, not nfsgw: `ctest -R nfsgw_kernel_origin_dd` runs it, see
# tests/kernel/README.md).
kernel_alone='_mount$'
(
  set +e
  cd build
  ctest --output-on-failure --timeout 900 -j1 -L kernel -E "nfsgw_kernel_origin_dd|$kernel_alone" \
    >ctest-kernel.log 2>&1
  echo $? >"$bg_logs/kernel.status"
) &
kernel_tests=$!
echo "-- kernel client scenarios started beside stage 2 (log: build/ctest-kernel.log)"

echo "== stage 2: sanitizers (ASan + UBSan)"
# The integration suite needs only the sanitized nfsgw: it starts as soon as that
# is built, and the unit-test binaries go on building (still at nice 19) while its
# tests wait on their sockets and timers.
while [ ! -f "$bg_logs/asan-nfsgw.status" ] && kill -0 "$bg_builds" 2>/dev/null; do sleep 2; done
echo "-- sanitized nfsgw built at $(( $(date +%s) - start )) s"
# The data cache test reads its big files many times; 64 MiB keeps the slower
# sanitizer build within bounds (stage 1 runs it at 256 MiB).
export NFSGW_DATA_TEST_MIB=64
# crash_test: 5 kill -9 rounds instead of 20 (every restart path still runs under
# ASan), and the full and read-only cache disk tests read 60 files per pass instead
# of 300 (the 6,000-entry listing that brings RocksDB to fail stays);
# origin_faults_test: a 15 s origin cut instead of 60 s (stage 1 runs the issue's
# 60 s). Each test says what CI runs.
export NFSGW_CRASH_ROUNDS=5
export NFSGW_CRASH_DISK_FILES=60
export NFSGW_ORIGIN_CUT_SECONDS=15
set +e
if [ "$(cat "$bg_logs/asan-nfsgw.status" 2>/dev/null)" != 0 ]; then
  # Built again in the foreground: the error shows in this log (and a build that
  # failed only for lack of memory beside stage 1 gets a second chance).
  echo "-- the background build of the sanitized nfsgw failed; building again:"
  tail -20 "$bg_logs/asan.log"
  build_sanitized_nfsgw
fi
asan_pass=0; asan_fail=0
# Stage 1's integration tests against the ASan build of nfsgw (NFSGW_BIN; memory
# bounds allow for ASan's quarantine and shadow when NFSGW_BIN_SANITIZED=1).
# integration.rpcbind takes rpcbind's entries as the kernel mount scenarios do: it
# runs after them, below.
asan_integration() {
  (cd build && NFSGW_BIN="$root/build-asan/nfsgw" NFSGW_BIN_SANITIZED=1 \
     ctest --output-on-failure --timeout 900 -j1 -L integration "$@") 2>&1 | tee -a build-asan/ctest.log
  if [ "${PIPESTATUS[0]}" -eq 0 ]; then asan_pass=$((asan_pass + 1)); else asan_fail=$((asan_fail + 1)); fi
}
: >build-asan/ctest.log
asan_integration -E '^integration[.]rpcbind$'
echo "-- sanitized integration suite done at $(( $(date +%s) - start )) s"

wait "$bg_builds"
echo "-- background builds done at $(( $(date +%s) - start )) s"
if [ "$(cat "$bg_logs/asan.status" 2>/dev/null)" != 0 ]; then
  echo "-- the background build of the sanitized unit tests failed; building again:"
  tail -20 "$bg_logs/asan.log"
  build_sanitized_units
fi
for t in $(asan_targets_of); do
  bin=$(find build-asan -type f -name "$t" -perm -u+x | head -1)
  [ -n "$bin" ] || { echo "missing $t"; asan_fail=$((asan_fail + 1)); continue; }
  echo "-- $bin"
  if (cd build-asan && "$root/$bin" --gtest_brief=1); then asan_pass=$((asan_pass + 1)); else asan_fail=$((asan_fail + 1)); fi
done

echo "== the kernel client scenarios (run beside stage 2)"
wait "$kernel_tests"
cat build/ctest-kernel.log
cat build/ctest-kernel.log >>build/ctest.log
[ "$(cat "$bg_logs/kernel.status" 2>/dev/null)" = 0 ] || status=1
echo "-- kernel scenarios done at $(( $(date +%s) - start )) s; now the ones that move rpcbind's entries, alone"
(cd build && ctest --output-on-failure --timeout 900 -j1 -L kernel -R "$kernel_alone") 2>&1 | tee -a build/ctest.log
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
asan_integration -R '^integration[.]rpcbind$'
set -e
asan_status=$([ "$asan_fail" -eq 0 ] && [ "$asan_pass" -gt 0 ] && echo 0 || echo 1)

echo "== stage 3: fuzz (libFuzzer with ASan + UBSan, 10 s per target)"
# Only the fuzz targets and the libraries they fuzz (protocol, config, the handle
# codec), built with clang into build-fuzz/; each runs on a copy of its seed
# corpus (tests/fuzz/corpus/<target>, left untouched) and the stage fails on a
# crash, a sanitizer report or a broken property. docs/fuzzing.md has the long runs.
fuzz_pass=0; fuzz_fail=0
fuzz_start=$(date +%s)
if [ "$(cat "$bg_logs/fuzz.status" 2>/dev/null)" = 0 ] || build_fuzz; then
  for dir in tests/fuzz/corpus/*/; do
    t=$(basename "$dir")
    work=$(mktemp -d "/tmp/nfsgw-fuzz-$t.XXXXXX")
    cp -r "$dir" "$work/corpus"
    dict=()  # a target's dictionary (tests/fuzz/<target>.dict), when it has one
    [ ! -f "tests/fuzz/$t.dict" ] || dict=(-dict="tests/fuzz/$t.dict")
    if ASAN_OPTIONS=abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
         "build-fuzz/tests/fuzz/fuzz_$t" -max_total_time=10 -print_final_stats=1 -artifact_prefix="$work/" \
         "${dict[@]}" "$work/corpus" >"build-fuzz/fuzz_$t.log" 2>&1; then
      fuzz_pass=$((fuzz_pass + 1))
      echo "-- fuzz_$t: $(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/fuzz_$t.log") executions, no crash"
      rm -rf "$work"
    else
      fuzz_fail=$((fuzz_fail + 1))
      echo "-- fuzz_$t FAILED; the input is kept in $work:"
      tail -40 "build-fuzz/fuzz_$t.log"
    fi
  done
else
  echo "-- the fuzz targets did not build"
  fuzz_fail=1
fi
echo "-- fuzz stage: $(( $(date +%s) - fuzz_start )) s"

# Both ctest runs' summaries, added up; skipped tests are reported as skipped,
# and a skipped test that CI must run (a kernel scenario) fails CI.
summary=$(bash scripts/ctest-summary.sh build/ctest.log build) || status=1
printf '%s\n' "$summary" | sed '$d'
read -r passed failed skipped <<< "$(printf '%s\n' "$summary" | tail -1)"
echo "== done in $(( $(date +%s) - start )) s"
echo "ctest (all tests): ${passed:-0} passed, ${failed:-1} failed, ${skipped:-0} skipped"
echo "sanitizer stage (unit binaries and the integration suite): $asan_pass passed, $asan_fail failed"
echo "fuzz stage (one target each): $fuzz_pass passed, $fuzz_fail failed"
echo "totals: $(( ${passed:-0} + asan_pass + fuzz_pass )) passed, $(( ${failed:-1} + asan_fail + fuzz_fail )) failed"
[ "$status" -eq 0 ] && [ "$asan_status" -eq 0 ] && [ "$fuzz_fail" -eq 0 ]

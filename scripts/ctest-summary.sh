#!/usr/bin/env bash
# Adds up the ctest runs logged in LOG (scripts/test.sh's build/ctest.log):
#   ctest-summary.sh LOG BUILD_DIR
# Prints which tests were skipped, then one last line "PASSED FAILED SKIPPED".
# Exits 1 when a test that CI must run was skipped.
#
# ctest's "N tests failed out of M" counts a test that did not run (a kernel
# scenario that exits 77, its SKIP_RETURN_CODE) among the M without failing it;
# ctest lists it under "The following tests did not run:" as "(Skipped)". Those
# are counted here as skipped, never as passed.
#
# CI must run every container test when podman is installed, for the same reason.
# CI must run every kernel scenario when qemu is installed (scripts/test.sh runs
# as root, and scripts/install-deps.sh installs qemu): a skip there means the
# kernel client was not tested, so it fails CI, as does qemu installed with no
# kernel scenario registered at all.
set -uo pipefail
log=${1:?ctest log}; build=${2:?build dir}

skipped_names=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (\(Skipped\|Disabled\|Not Run\))$/\1/p' "$log")
skipped=$(printf '%s\n' "$skipped_names" | grep -c . || true)
counted=$(sed -n 's/.* tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2 \1/p' "$log" |
  awk '{p += $1 - $2; f += $2; n++} END {if (n) print p, f}')
[ -n "$counted" ] || counted="0 1"  # no summary at all: ctest never finished
read -r not_failed failed <<< "$counted"
passed=$((not_failed - skipped))

status=0
if command -v qemu-system-x86_64 >/dev/null; then
  kernel_registered=$(cd "$build" && ctest -N -L kernel | sed -n 's/^Total Tests: \([0-9]*\)$/\1/p')
  if [ "${kernel_registered:-0}" -eq 0 ]; then
    echo "FAIL: qemu is installed but no kernel scenario is registered (tests/kernel/CMakeLists.txt)"
    status=1
  fi
fi
while IFS= read -r name; do
  [ -n "$name" ] || continue
  case "$name" in
    nfsgw_kernel_*)
      if command -v qemu-system-x86_64 >/dev/null; then
        echo "FAIL: skipped $name; with qemu installed every kernel scenario must run"
        status=1
      else
        echo "skipped $name (no qemu)"
      fi ;;
    container.*)
      # CI installs podman (scripts/install-deps.sh): a skip means the image was not tested.
      if command -v podman >/dev/null; then
        echo "FAIL: skipped $name; with podman installed every container test must run"
        status=1
      else
        echo "skipped $name (no podman)"
      fi ;;
    *) echo "skipped $name" ;;
  esac
done <<< "$skipped_names"
echo "$passed $failed $skipped"
exit "$status"

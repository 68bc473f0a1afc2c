#!/usr/bin/env bash
# Configures and builds nfsgw into build/ (or $BUILD_DIR), tests included.
#   TARGETS="nfsgw" scripts/build.sh   builds only those targets
# Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" -DNFSGW_TESTS=ON "$@" >/dev/null
if [ -n "${TARGETS:-}" ]; then
  # shellcheck disable=SC2086
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target $TARGETS
else
  cmake --build "$BUILD_DIR" -j"$(nproc)"
fi

#!/usr/bin/env bash
# Installs every Debian 12 package nfsgw needs to build, run its demo and run its tests.
# Idempotent: safe to run again. Needs root (or sudo).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
PKGS=(
  # build
  build-essential cmake pkg-config
  # libraries
  libboost-dev libboost-system-dev libnfs-dev libtirpc-dev librocksdb-dev
  libspdlog-dev libfmt-dev libtoml11-dev libssl-dev libgtest-dev libgmock-dev
  prometheus-cpp-dev  # the metrics endpoint (pulls libprometheus-cpp-pull)
  # the loopback origin and real clients used by the demo and the tests
  rpcbind nfs-ganesha nfs-ganesha-vfs libnfs-utils
  nfs-common  # rpc.statd: the origin's NLM (ORIGIN_NLM_PORT) and nfsgw's NLM monitor through it
  # the Linux kernel NFS client under qemu (tests/kernel)
  qemu-system-x86 linux-image-cloud-amd64 busybox-static cpio kmod xz-utils zstd
  # the fuzz targets (tests/fuzz): clang 14 and its libFuzzer and sanitizer runtimes
  clang-14 libclang-rt-14-dev
  # scripts/test.sh's builds (scripts/build.sh and the image keep make)
  ninja-build
  # misc tools used by scripts and tests
  procps psmisc coreutils curl  # curl: the metrics test scrapes the endpoint
  python3-yaml systemd strace  # tests/packaging: parse manifests, check the systemd unit
  haproxy  # two nfsgw nodes behind a TCP balancer (tests/integration/two_nodes_test.cpp)
  # the container image, built and run with podman (scripts/build-image.sh, tests/container)
  podman buildah runc debootstrap slirp4netns podman-compose catatonit uidmap
  containernetworking-plugins golang-github-containernetworking-plugin-dnsname iptables
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

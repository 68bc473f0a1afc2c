#!/usr/bin/env bash
# Builds the nfsgw container image with podman, from docker/Dockerfile, on a
# Debian 12 machine with no container registry: the Debian 12 base image the
# Dockerfile starts FROM is made locally by debootstrap from the Debian mirror
# apt already uses, and imported under the name a registry would give it.
#
#   scripts/build-image.sh                      # nfsgw built from source in the image
#   scripts/build-image.sh --prebuilt BINARY    # the runtime image around a built nfsgw
#
# Options / environment:
#   --prebuilt BINARY   copy this nfsgw (built on Debian 12, e.g. build/nfsgw) into
#                       the Dockerfile's `runtime-prebuilt` stage instead of
#                       compiling it again (what CI does; tests/container/)
#   --tag IMAGE         default localhost/nfsgw:latest (NFSGW_IMAGE)
#   --rebuild-base      make the base image again even when it exists
#   --base-only         make the base image (when missing) and stop: CI runs this
#                       in the background while it compiles (it mostly waits on
#                       the mirror)
#   NFSGW_DEBIAN_MIRROR the mirror for debootstrap (default: apt's, from /etc/apt)
#
# Needs root and the Debian packages podman, buildah, runc and debootstrap
# (scripts/install-deps.sh does not install them: docker/README.md). The podman
# settings this machine needs (runc, ulimits) are docker/podman/containers.conf,
# passed in CONTAINERS_CONF. Prints the image name and the times it took.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
image=${NFSGW_IMAGE:-localhost/nfsgw:latest}
prebuilt=
rebuild_base=0
base_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prebuilt) prebuilt=${2:?--prebuilt BINARY}; shift 2 ;;
    --tag) image=${2:?--tag IMAGE}; shift 2 ;;
    --rebuild-base) rebuild_base=1; shift ;;
    --base-only) base_only=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

export CONTAINERS_CONF=${CONTAINERS_CONF:-$repo/docker/podman/containers.conf}
# The name docker/Dockerfile starts FROM (debian:12), fully qualified as podman
# resolves it: with --pull=never it is looked up in local storage only.
base=docker.io/library/debian:12
for tool in podman; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (apt-get install podman buildah runc debootstrap)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "scripts/build-image.sh needs root (debootstrap, podman's storage)" >&2; exit 1; }

# debian_mirror SUITE_PATTERN: the first URI apt uses for a suite matching the pattern.
debian_mirror() {
  local pattern=$1 f
  {
    # one-line format: deb [options] URI SUITE COMPONENTS...
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
      [ -f "$f" ] || continue
      sed -E 's/\[[^]]*\]//' "$f" | awk -v p="$pattern" '$1 == "deb" && $3 ~ p { print $2 }'
    done
    # deb822 format: a stanza's URIs and Suites
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      awk -v p="$pattern" '
        /^[ \t]*$/ { if (uri != "" && hit) print uri; uri = ""; hit = 0; next }
        /^URIs:/   { uri = $2 }
        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i ~ p) hit = 1 }
        END        { if (uri != "" && hit) print uri }' "$f"
    done
  } | head -1
}

make_base() {
  command -v debootstrap >/dev/null || { echo "debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
  local mirror security dir
  mirror=${NFSGW_DEBIAN_MIRROR:-$(debian_mirror '^bookworm$')}
  mirror=${mirror:-http://deb.debian.org/debian}
  security=$(debian_mirror '^bookworm-security$')
  security=${security:-http://deb.debian.org/debian-security}
  dir=$(mktemp -d /var/tmp/nfsgw-base.XXXXXX)
  echo "-- debootstrap --variant=minbase bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.log" 2>&1 ||
    { tail -30 "$dir.log" >&2; rm -f "$dir.log"; exit 1; }
  rm -f "$dir.log"
  # apt inside the image: the release, its updates and the security archive, as
  # in the registry's debian:12; no package lists or downloaded .debs kept.
  rm -f "$dir/etc/apt/sources.list"
  cat >"$dir/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  cat >"$dir/etc/apt/apt.conf.d/docker-clean" <<'APT'
// An image keeps no downloaded packages and no package caches.
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
  rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/var/cache/apt/archives/*.deb
  # Per-container files podman provides at run time; not the build host's.
  : >"$dir/etc/resolv.conf"; : >"$dir/etc/hostname"
  tar --numeric-owner -C "$dir" -c . |
    podman import --change 'CMD ["bash"]' - "$base" >/dev/null
  podman tag "$base" docker.io/library/debian:bookworm
  rm -rf "$dir"
}

t0=$(date +%s.%N)
# One base at a time (two CI lanes, or two users, may run this at once).
exec 9>/var/tmp/nfsgw-image-base.lock
flock -w 840 9 || { echo "another build-image.sh held the base image lock for 840 s" >&2; exit 1; }
if [ "$rebuild_base" = 1 ] || ! podman image exists "$base"; then
  make_base
  base_made=1
else
  base_made=0
fi
exec 9>&-
t1=$(date +%s.%N)
if [ "$base_only" = 1 ]; then
  awk -v a="$t0" -v b="$t1" -v made="$base_made" -v img="$base" 'BEGIN {
    printf "-- base image %s %s in %.0f s\n", img, made ? "made" : "reused", b - a }'
  exit 0
fi

# Docker's image format: the OCI one has no HEALTHCHECK (buildah drops it with a
# warning, and `podman healthcheck run` then says the container has none).
build=(podman build --pull=never --layers --format docker -f "$repo/docker/Dockerfile")
ctx=
cleanup() { [ -z "$ctx" ] || rm -rf "$ctx"; }
trap cleanup EXIT
if [ -n "$prebuilt" ]; then
  [ -x "$prebuilt" ] || { echo "--prebuilt $prebuilt: no such executable" >&2; exit 1; }
  # The context is the binary and the entry point, at the paths the Dockerfile
  # copies them from: nothing else is sent or copied.
  ctx=$(mktemp -d /var/tmp/nfsgw-ctx.XXXXXX)
  cp "$prebuilt" "$ctx/nfsgw"
  mkdir "$ctx/docker"
  cp "$repo/docker/entrypoint.sh" "$ctx/docker/entrypoint.sh"
  "${build[@]}" --target runtime-prebuilt -t "$image" "$ctx"
else
  "${build[@]}" -t "$image" "$repo"
fi
t2=$(date +%s.%N)
size=$(podman image inspect --format '{{.Size}}' "$image")
awk -v a="$t0" -v b="$t1" -v c="$t2" -v made="$base_made" -v img="$image" -v size="$size" 'BEGIN {
  printf "-- built %s (%.0f MB): base image %s in %.0f s, image in %.0f s\n",
         img, size / 1e6, made ? "made" : "reused", b - a, c - b }'

#!/usr/bin/env bash
# Builds the guest's base initramfs (uncompressed newc cpio) into OUT_DIR:
#   busybox-static, the static helpers (mount_nfs, phploop), the kernel modules the
#   NFSv3 client and virtio-net need (dependency order from modules.dep), /init
#   and the guest halves of the scenarios.
# It is rebuilt only when an input changes: a hash of every input is kept next
# to the archive. Prints the archive path and the kernel path on two lines.
#
#   build-initramfs.sh OUT_DIR
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:?out dir}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The newest Debian cloud kernel installed on the host.
kernel=$(ls /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -1)
[ -n "$kernel" ] || { echo "no /boot/vmlinuz-*-cloud-amd64 (apt-get install linux-image-cloud-amd64)" >&2; exit 1; }
kver=${kernel#/boot/vmlinuz-}
moddir=/lib/modules/$kver
busybox=$(command -v busybox)
file "$busybox" 2>/dev/null | grep -q 'statically linked' || busybox=/bin/busybox

# Modules requested explicitly; their dependencies are added from modules.dep.
wanted="virtio_pci virtio_net nfsv3"

inputs_hash=$( {
  echo "$kver"; sha256sum "$kernel" "$busybox" "$moddir/modules.dep"
  for f in "$here"/build-initramfs.sh "$here"/guest/* "$here"/scenarios/*.guest.sh; do
    echo "$f"; sha256sum < "$f"
  done
  echo "$wanted"; gcc --version | head -1
} | sha256sum | cut -d' ' -f1 )

archive=$out/initramfs-base.cpio
if [ -f "$archive" ] && [ "$(cat "$out/inputs.sha256" 2>/dev/null)" = "$inputs_hash" ]; then
  echo "$archive"; echo "$kernel"; exit 0
fi

root=$out/root
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,mnt,lib/modules,scenarios}
cp "$busybox" "$root/bin/busybox"
for c in "$here"/guest/*.c; do
  gcc -static -O2 -Wall -Werror -o "$root/bin/$(basename "$c" .c)" "$c"
done
cp "$here/guest/init" "$root/init"
chmod 755 "$root/init"
cp "$here"/guest/*.sh "$root/bin/" 2>/dev/null || true
for s in "$here"/scenarios/*.guest.sh; do
  cp "$s" "$root/scenarios/$(basename "$s" .guest.sh).sh"
done
chmod 755 "$root"/scenarios/*.sh "$root"/bin/*

# Dependency-first order: each modules.dep line lists all of a module's
# dependencies, so a depth-first walk visiting dependencies first is enough.
declare -A seen=()
order=()
dep_of() { grep -E "(^|/)$1\.ko(\.xz|\.zst)?:" "$moddir/modules.dep" | head -1; }
visit() {
  local name=$1 line path deps d
  [ -n "${seen[$name]:-}" ] && return 0
  seen[$name]=1
  line=$(dep_of "$name")
  [ -n "$line" ] || { echo "module $name not in $moddir/modules.dep" >&2; exit 1; }
  path=${line%%:*}; deps=${line#*:}
  for d in $deps; do
    d=$(basename "$d"); d=${d%%.ko*}
    visit "$d"
  done
  case "$path" in
    *.ko.xz) xz -dc "$moddir/$path" > "$root/lib/modules/$name.ko" ;;
    *.ko.zst) zstd -dc "$moddir/$path" > "$root/lib/modules/$name.ko" ;;
    *) cp "$moddir/$path" "$root/lib/modules/$name.ko" ;;
  esac
  order+=("$name")
}
for m in $wanted; do visit "$m"; done
printf '%s\n' "${order[@]}" > "$root/lib/modules/load-order"

(cd "$root" && find . -print0 | sort -z | cpio --null -o -H newc --owner=0:0 --quiet) > "$archive.tmp"
mv "$archive.tmp" "$archive"
echo "$inputs_hash" > "$out/inputs.sha256"
echo "$archive"; echo "$kernel"

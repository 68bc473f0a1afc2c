#!/usr/bin/env bash
# Builds the guest's base initramfs (uncompressed newc cpio) into OUT_DIR:
#   busybox-static, the static helpers (mount_nfs, phploop, ...), the kernel
#   modules the NFSv3 client, virtio-net and virtio-blk need (dependency order
#   from modules.dep), rpcbind, rpc.statd and sm-notify with their libraries (for
#   mounts with locks), /init and the guest halves of the scenarios.
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
# (virtio_blk: the locks scenario keeps statd's state on a small disk, so that a
# guest booted again finds the servers it must notify.)
wanted="virtio_pci virtio_net nfsv3 virtio_blk"

# The kernel's NLM client (mounts without nolock) needs a local rpcbind (its
# lockd registers there; the server's GRANTED callbacks find it there) and
# rpc.statd (SM_MON before the first lock; sm-notify at boot). Debian's
# dynamic binaries go in with the shared libraries ldd names.
nlm_bins="/usr/sbin/rpcbind /usr/sbin/rpc.statd /usr/sbin/sm-notify /usr/sbin/rpcinfo"
for b in $nlm_bins; do
  [ -x "$b" ] || { echo "$b missing (apt-get install rpcbind nfs-common)" >&2; exit 1; }
done

inputs_hash=$( {
  echo "$kver"; sha256sum "$kernel" "$busybox" "$moddir/modules.dep" $nlm_bins /etc/netconfig /etc/services /etc/protocols
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

# rpcbind, rpc.statd, sm-notify with their libraries, and the files they read.
mkdir -p "$root"/usr/sbin "$root"/etc "$root"/run "$root"/var/lib/nfs
ln -s ../run "$root/var/run"
for b in $nlm_bins; do
  cp "$b" "$root/usr/sbin/"
  for lib in $(ldd "$b" | grep -o '/[^ ]*'); do
    mkdir -p "$root$(dirname "$lib")"
    [ -e "$root$lib" ] || cp -L "$lib" "$root$lib"
  done
done
cp /etc/netconfig /etc/services /etc/protocols "$root/etc/"
cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/:/bin/sh
_rpc:x:100:65534::/run/rpcbind:/bin/false
statd:x:101:65534::/var/lib/nfs:/bin/false
nobody:x:65534:65534:nobody:/:/bin/false
PASSWD
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files\n' > "$root/etc/nsswitch.conf"

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

#!/usr/bin/env bash
# Boots one guest under qemu (TCG) with the base initramfs plus a per-run env file,
# streams its console to stdout (the test log) and the console file, and writes
# what the guest sends on its second serial port to DATA_FILE.
#
#   run-qemu.sh BASE_CPIO KERNEL ENV_FILE CONSOLE_FILE DATA_FILE [TIMEOUT_S] [MEM_MB]
#
# QEMU_INTERACTIVE=1: console input from this terminal (for SCENARIO=shell).
# QEMU_PIDFILE in the environment: where qemu writes its pid (so a caller can
# stop a guest early). QEMU_NET: the network arguments in place of the user-mode
# network (split on spaces; the locks scenario's tap device on a bridge),
# QEMU_EXTRA: more arguments (split on spaces; e.g. a disk).
# Exit status: 0 when the guest printed the PASS marker, 1 on its FAIL marker,
# 2 when it printed neither (crash, panic or time-out).
set -euo pipefail

base=${1:?base cpio}; kernel=${2:?kernel}; envfile=${3:?env file}
console=${4:?console file}; data=${5:?data file}
timeout_s=${6:-120}; mem=${7:-768}

work=$(mktemp -d /tmp/kernel-qemu.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/extra"
cp "$envfile" "$work/extra/run.env"
# The kernel unpacks concatenated newc archives in order, so the small per-run
# archive just follows the cached base one.
(cd "$work/extra" && echo run.env | cpio -o -H newc --owner=0:0 --quiet) > "$work/extra.cpio"
cat "$base" "$work/extra.cpio" > "$work/initramfs.cpio"
: > "$data"

# QEMU_INTERACTIVE=1 keeps the terminal on the guest's console (SCENARIO=shell).
stdin_src=/dev/null; fg=()
if [ "${QEMU_INTERACTIVE:-0}" = 1 ]; then stdin_src=/dev/stdin; fg=(--foreground); fi
set +e
# no_timer_check: on a loaded host the kernel's early IO-APIC timer check can
# find TCG's timer too slow and panic ("IO-APIC + timer doesn't work!"; seen at
# load ~20 here).
timeout "${fg[@]}" --kill-after=5 "$timeout_s" qemu-system-x86_64 \
  -accel tcg -machine q35 -cpu max -smp 1 -m "$mem" \
  -nographic -no-reboot -nodefaults ${QEMU_PIDFILE:+-pidfile "$QEMU_PIDFILE"} \
  -kernel "$kernel" -initrd "$work/initramfs.cpio" \
  -append "console=ttyS0 panic=-1 quiet loglevel=4 mitigations=off no_timer_check rdinit=/init" \
  -serial stdio -serial "file:$data" \
  ${QEMU_NET:--netdev user,id=n0,net=10.0.2.0/24,host=10.0.2.2 -device virtio-net-pci,netdev=n0,romfile=} \
  ${QEMU_EXTRA:-} \
  < "${stdin_src}" 2>&1 | tee "$console"
rc=${PIPESTATUS[0]}
set -e
tr -d '\r' < "$data" > "$work/data" && cat "$work/data" > "$data"
if grep -q '^NFSGW-KERNEL-RESULT: PASS' <(tr -d '\r' < "$console"); then exit 0; fi
if grep -q '^NFSGW-KERNEL-RESULT: FAIL' <(tr -d '\r' < "$console"); then exit 1; fi
[ "$rc" = 124 ] && echo "run-qemu: guest timed out after ${timeout_s}s" >&2
echo "run-qemu: guest ended without a result marker (qemu status $rc)" >&2
exit 2

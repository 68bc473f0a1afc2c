#!/usr/bin/env bash
# nfsgw-bench against a real nfs-ganesha origin (loopback, ports NFS 23490 and
# MOUNT 23048, the bench's own; env BENCH_TEST_NFS_PORT, BENCH_TEST_MOUNT_PORT):
# every mode runs ~1 s and its JSON is checked.
#   bench_integration_test.sh NFSGW_BENCH ORIGIN_SCRIPT
# Checks: calls > 0; no non-OK status for modes that must succeed; lookup-missing
# sees NFS3ERR_NOENT for every call and nothing else; churn makes CREATE+REMOVE
# pairs and leaves no name behind; seqwrite and unpack make their folder and
# leave files of the right size, content, mode and mtime; walk visits exactly the
# entries the working set has; --count is exact; AUTH_SYS uid/gid reach the
# server; --order sequential works; locks makes LOCK+UNLOCK pairs, all GRANTED,
# at the origin's NLM (port 23045, BENCH_TEST_NLM_PORT) and leaves no lock behind;
# an unreachable server fails fast with a clear message.
set -euo pipefail
bench=${1:?nfsgw-bench binary}
origin=${2:?origin-ganesha.sh}
nfs_port=${BENCH_TEST_NFS_PORT:-23490}
mount_port=${BENCH_TEST_MOUNT_PORT:-23048}
nlm_port=${BENCH_TEST_NLM_PORT:-23045}
work=$(mktemp -d /tmp/bench-ctest.XXXXXX)
state=$work/state
export_dir=$work/export

cleanup() {
  "$origin" stop "$state" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# json_field JSON NAME -> the raw value of a top-level scalar field
json_field() { grep -o "\"$2\":[^,}]*" <<<"$1" | head -1 | cut -d: -f2; }
json_errors() { grep -o '"errors":{[^}]*}' <<<"$1" | sed 's/^"errors"://'; }

mkdir -p "$export_dir"
ORIGIN_NLM_PORT=$nlm_port timeout 90 "$origin" start "$state" "$export_dir" "$nfs_port" "$mount_port" >/dev/null
url="nfs://127.0.0.1$export_dir?nfsport=$nfs_port&mountport=$mount_port"
files=200

run() {  # run ARGS... -> prints the JSON line; fails on non-zero exit
  local out
  out=$(timeout 60 "$bench" --url "$url" --files "$files" --size 100 --connections 2 --inflight 8 --json "$@") ||
    fail "nfsgw-bench $* exited with $?"
  tail -1 <<<"$out"
}

# Working set through NFS itself.
run --mode null --setup --duration 0.2 >/dev/null
[ "$(ls "$export_dir/nfsgw-bench" | grep -c '^f')" -eq "$files" ] || fail "setup did not create $files files"
[ "$(stat -c %s "$export_dir/nfsgw-bench/f000007")" -eq 100 ] || fail "setup file has the wrong size"

for mode in null getattr lookup access read write php; do
  j=$(run --mode "$mode" --duration 1)
  calls=$(json_field "$j" calls)
  [ "$calls" -gt 0 ] || fail "$mode: no calls: $j"
  [ "$(json_errors "$j")" = "{}" ] || fail "$mode: non-OK statuses: $j"
  echo "ok $mode: $calls calls"
done
j=$(run --mode php --duration 1)
[ "$(json_field "$j" requests)" -gt 0 ] || fail "php: no requests: $j"

j=$(run --mode lookup-missing --duration 1)
calls=$(json_field "$j" calls)
[ "$calls" -gt 0 ] || fail "lookup-missing: no calls: $j"
[ "$(json_errors "$j")" = "{\"NFS3ERR_NOENT\":$calls}" ] || fail "lookup-missing: expected only NOENT x $calls: $j"
echo "ok lookup-missing: $calls NOENT"

# Walk: the dir, tree, 8 dK, 8 sub folders; files + tree + 8 dK + 8*16 tK + 8 sub + 8*8 sK entries.
j=$(run --mode walk --duration 30)
[ "$(json_field "$j" complete)" = true ] || fail "walk incomplete: $j"
[ "$(json_field "$j" dirs)" -eq 18 ] || fail "walk: wrong folder count: $j"
[ "$(json_field "$j" entries)" -eq $((files + 1 + 8 + 128 + 8 + 64)) ] || fail "walk: wrong entry count: $j"
[ "$(json_errors "$j")" = "{}" ] || fail "walk: non-OK statuses: $j"
[ "$(json_field "$j" calls)" -eq $((18 + files + 209)) ] || fail "walk: expected one READDIRPLUS per folder and one GETATTR per entry: $j"
echo "ok walk"

# churn: CREATE then REMOVE of fresh names, two calls per request, all OK, and
# nothing left behind in the working folder.
j=$(run --mode churn --duration 1)
calls=$(json_field "$j" calls)
[ "$calls" -gt 0 ] && [ $((calls % 2)) -eq 0 ] || fail "churn: expected an even number of calls: $j"
[ "$(json_field "$j" requests)" -eq $((calls / 2)) ] || fail "churn: expected one request per two calls: $j"
[ "$(json_errors "$j")" = "{}" ] || fail "churn: non-OK statuses: $j"
[ "$(ls "$export_dir/nfsgw-bench" | grep -c '^cr' || true)" -eq 0 ] || fail "churn left names behind"
echo "ok churn: $calls calls"

# seqwrite: 3 connections, each one file of 3 MiB + 123 bytes in 64 KiB WRITEs
# (the last one short), 4 in flight, then COMMIT; the folder is made by the bench.
fsize=$((3 * 1048576 + 123))
j=$(run --mode seqwrite --dir sw --connections 3 --inflight 4 --size 65536 --file-size "$fsize" --duration 60)
[ "$(json_field "$j" complete)" = true ] || fail "seqwrite incomplete: $j"
[ "$(json_field "$j" files)" -eq 3 ] || fail "seqwrite: expected 3 files: $j"
[ "$(json_field "$j" bytes)" -eq $((3 * fsize)) ] || fail "seqwrite: wrong byte count: $j"
[ "$(json_field "$j" calls)" -eq $((3 * (49 + 2))) ] || fail "seqwrite: expected CREATE, 49 WRITEs, COMMIT per file: $j"
[ "$(json_errors "$j")" = "{}" ] || fail "seqwrite: non-OK statuses: $j"
# Byte x of every file is byte x % 65536 of the bench's pattern (working_set.cpp).
python3 - "$export_dir/sw" "$fsize" <<'PY' || fail "seqwrite: content at the origin is not what was written"
import os, sys
d, size = sys.argv[1], int(sys.argv[2])
chunk = bytes(10 if i % 64 == 63 else 97 + i % 26 for i in range(65536))
want = (chunk * (size // 65536 + 1))[:size]
names = sorted(os.listdir(d))
assert names == ["w000000", "w000001", "w000002"], names
for n in names:
    assert open(os.path.join(d, n), "rb").read() == want, n
PY
echo "ok seqwrite"

# unpack: 40 files of 1000 B, CREATE WRITE COMMIT SETATTR each, two at a time.
j=$(run --mode unpack --dir up --files 40 --size 1000 --connections 1 --inflight 2 --duration 60)
[ "$(json_field "$j" complete)" = true ] || fail "unpack incomplete: $j"
[ "$(json_field "$j" files)" -eq 40 ] && [ "$(json_field "$j" bytes)" -eq 40000 ] || fail "unpack counts: $j"
[ "$(json_field "$j" calls)" -eq 160 ] && [ "$(json_field "$j" requests)" -eq 40 ] || fail "unpack calls: $j"
[ "$(json_errors "$j")" = "{}" ] || fail "unpack: non-OK statuses: $j"
[ "$(ls "$export_dir/up" | wc -l)" -eq 40 ] || fail "unpack: expected 40 files"
[ "$(stat -c %s:%a:%Y "$export_dir/up/u000039")" = "1000:644:1767225600" ] ||
  fail "unpack: size, mode or mtime of u000039: $(stat -c %s:%a:%Y "$export_dir/up/u000039")"
# --setattr mode leaves the time the WRITE gave.
j=$(run --mode unpack --dir up2 --files 5 --size 10 --connections 1 --inflight 1 --setattr mode --duration 60)
[ "$(json_field "$j" files)" -eq 5 ] || fail "unpack --setattr mode: $j"
[ "$(stat -c %Y "$export_dir/up2/u000004")" -gt 1767225600 ] || fail "unpack --setattr mode set the mtime"
echo "ok unpack"

# --prepare-local writes the same layout; walk it through the origin.
"$bench" --prepare-local "$export_dir" --dir local --files 50 --size 10 2>/dev/null
j=$(run --mode walk --dir local --duration 30)
[ "$(json_field "$j" entries)" -eq $((50 + 209)) ] || fail "walk of prepare-local tree: $j"
echo "ok prepare-local"

# --count stops after exactly that many calls.
j=$(run --mode getattr --count 500 --duration 30)
[ "$(json_field "$j" calls)" -eq 500 ] || fail "--count 500 gave: $j"
echo "ok count"

# --order sequential: one call at a time over distinct names; a read past the
# first round asks for the next --size bytes (EOF here, still NFS3_OK).
j=$(run --mode lookup --order sequential --count "$files" --connections 1 --inflight 1 --duration 30)
[ "$(json_field "$j" calls)" -eq "$files" ] || fail "sequential lookups: $j"
[ "$(json_errors "$j")" = "{}" ] || fail "sequential lookups: non-OK statuses: $j"
j=$(run --mode read --order sequential --count $((2 * files)) --duration 30)
[ "$(json_field "$j" calls)" -eq $((2 * files)) ] || fail "sequential reads: $j"
[ "$(json_errors "$j")" = "{}" ] || fail "sequential reads: non-OK statuses: $j"
echo "ok order sequential"

# Credentials: uid 4321 may not create in the root-owned export root, but may
# in a world-writable folder, and what it makes belongs to 4321:4322.
if out=$(timeout 30 "$bench" --url "$url" --mode null --setup --dir denied --uid 4321 --gid 4322 --files 1 --duration 0.1 2>&1); then
  fail "uid 4321 could create in a root-owned folder"
fi
grep -q NFS3ERR_ACCES <<<"$out" || fail "expected NFS3ERR_ACCES for uid 4321: $out"
mkdir -m 1777 "$export_dir/owned"
run --mode null --setup --dir owned --uid 4321 --gid 4322 --duration 0.1 >/dev/null
[ "$(stat -c %u:%g "$export_dir/owned/f000000")" = "4321:4322" ] || fail "AUTH_SYS uid/gid not used"
echo "ok credentials"

# Missing working folder: clear message, non-zero exit.
if out=$(timeout 30 "$bench" --url "$url" --mode getattr --dir absent --duration 1 2>&1); then
  fail "absent working folder did not fail"
fi
grep -q "not found" <<<"$out" || fail "unclear message for absent folder: $out"

# Unreachable server: fails quickly (well inside the 10 s timeout) with a message.
start=$(date +%s)
if out=$(timeout 30 "$bench" --url "nfs://127.0.0.1/x?nfsport=$((nfs_port + 1))&mountport=$((mount_port + 1))" --mode null --duration 1 --timeout 5 2>&1); then
  fail "unreachable server did not fail"
fi
[ $(( $(date +%s) - start )) -le 10 ] || fail "unreachable server took too long"
grep -q "cannot connect\|no answer" <<<"$out" || fail "unclear message: $out"
echo "ok unreachable"
# locks: LOCK+UNLOCK pairs at the origin's NLM, every one GRANTED, nothing left
# locked (ganesha holds NLM locks as real locks on its files: F_OFD_GETLK sees them).
j=$(run --mode locks --nlm-port "$nlm_port" --duration 1)
calls=$(json_field "$j" calls)
[ "$calls" -gt 10 ] || fail "locks: too few calls: $j"
[ "$(json_errors "$j")" = "{}" ] || fail "locks: not every LOCK/UNLOCK GRANTED: $j"
# locked_files DIR: how many files of DIR hold a write lock another open file
# description of this host would meet (F_OFD_GETLK).
locked_files() {
  python3 - "$1" <<'PY'
import fcntl, os, struct, sys
F_OFD_GETLK, F_WRLCK, F_UNLCK = 36, 1, 2
n = 0
for name in os.listdir(sys.argv[1]):
    path = os.path.join(sys.argv[1], name)
    if not os.path.isfile(path):
        continue
    fd = os.open(path, os.O_RDWR)
    got = fcntl.fcntl(fd, F_OFD_GETLK, struct.pack("hh4xqqi4x", F_WRLCK, 0, 0, 0, 0))
    os.close(fd)
    n += struct.unpack("hh4xqqi4x", got)[0] != F_UNLCK
print(n)
PY
}
# Its positive control: a file a process of this host holds locked counts.
mkdir -p "$work/lock-control" && : >"$work/lock-control/held"
python3 -c '
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, 37, struct.pack("hh4xqqi4x", 1, 0, 0, 0, 0))  # F_OFD_SETLK, F_WRLCK
print("held", flush=True)
time.sleep(30)' "$work/lock-control/held" >"$work/lock-control/out" &
holder=$!
for _ in $(seq 50); do grep -q held "$work/lock-control/out" && break; sleep 0.1; done
control=$(locked_files "$work/lock-control")
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null || true
[ "$control" = 1 ] || fail "locks: the lock check does not see a lock held on this host ($control)"
locked=$(locked_files "$export_dir/nfsgw-bench")
[ "$locked" = 0 ] || fail "locks: $locked files still locked at the origin after the run"
echo "ok locks: $calls calls, none left locked"
echo PASS

# Guest half of "twoguests"; GUEST_ROLE is a or b.
. /bin/lib.sh

# wait_for DESCRIPTION SECONDS COMMAND...: polls every 0.2 s, bounded.
wait_for() {
  local what=$1 limit=$(( $2 * 5 )) i=0 t0
  shift 2
  t0=$(now_ms)
  until "$@"; do
    i=$((i + 1))
    [ "$i" -lt "$limit" ] || fail "$GUEST_ROLE: gave up waiting for $what"
    sleep 0.2
  done
  echo "$GUEST_ROLE: saw $what after $(( $(now_ms) - t0 )) ms"
  emit "$GUEST_ROLE saw $what after $(( $(now_ms) - t0 )) ms"
}
exists() { [ -e "$1" ]; }
content_is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }
size_is() { [ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ]; }

mount_export /mnt actimeo=1
grep " /mnt nfs " /proc/mounts | grep -q "acregmax=1" || fail "actimeo=1 not in effect"
cd /mnt/shared
content_is counter v0 || fail "initial counter"
# Both sides have now cached counter's attributes (size 3).
echo ready > "ready-$GUEST_ROLE"

if [ "$GUEST_ROLE" = a ]; then
  wait_for "b ready" 90 exists ready-b
  echo hello-from-a > from-a
  wait_for "from-b" 30 content_is from-b hello-from-b
  echo v1-from-a >> counter
  wait_for "counter size 23 via stat" 30 size_is counter 23
  content_is counter "$(printf 'v0\nv1-from-a\nv2-from-b')" || fail "counter after b's append: $(cat counter)"
else
  wait_for "a ready" 90 exists ready-a
  wait_for "from-a appear" 30 exists from-a
  content_is from-a hello-from-a || fail "from-a content: $(cat from-a)"
  echo hello-from-b > from-b
  wait_for "counter size 13 via stat" 30 size_is counter 13
  content_is counter "$(printf 'v0\nv1-from-a')" || fail "counter after a's append: $(cat counter)"
  echo v2-from-b >> counter
  # Stay mounted until a has seen the final state: a's last check reads it.
  wait_for "a done" 60 exists done-a
fi
[ "$GUEST_ROLE" = a ] && echo done > done-a
cd /
emit "$GUEST_ROLE done"
mount_nfs -u /mnt

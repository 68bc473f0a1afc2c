# Guest half of "ops": every namespace and data operation the brief lists, each
# checked in the guest right away; the host checks the final tree afterwards.
. /bin/lib.sh
mount_export /mnt
mkdir /mnt/ops
cd /mnt/ops

expect() {  # expect WHAT ACTUAL EXPECTED
  [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# mkdir (nested), create + write + read back, append
mkdir -p a/b c keep
echo "first line" > a/notes.txt
expect "read back" "$(cat a/notes.txt)" "first line"
echo "second line" >> a/notes.txt
expect "append" "$(cat a/notes.txt)" "$(printf 'first line\nsecond line')"
expect "size after append" "$(stat -c %s a/notes.txt)" 23

# truncate: shrink, then grow with a hole
dd if=/dev/zero bs=1024 count=64 2>/dev/null | tr '\0' 'z' > c/zeds
expect "64k write" "$(stat -c %s c/zeds)" 65536
truncate -s 1000 c/zeds
expect "shrink" "$(stat -c %s c/zeds)" 1000
truncate -s 300000 c/zeds
expect "grow" "$(stat -c %s c/zeds)" 300000
expect "hole reads zeros" "$(dd if=c/zeds bs=1 skip=1000 count=8 2>/dev/null | od -An -tx1 | tr -d ' ')" 0000000000000000
expect "kept prefix" "$(dd if=c/zeds bs=1 count=4 2>/dev/null)" zzzz

# rename within a folder, across folders, and over an existing file
echo "draft" > a/draft.txt
mv a/draft.txt a/final.txt
[ ! -e a/draft.txt ] || fail "old name still there"
mv a/final.txt c/final.txt
expect "moved across" "$(cat c/final.txt)" draft
echo "old victim" > c/victim.txt
echo "winner" > a/winner.txt
mv a/winner.txt c/victim.txt
expect "rename over existing" "$(cat c/victim.txt)" winner
[ ! -e a/winner.txt ] || fail "source of rename-over still there"

# hard links: two extra names, one removed again (unlink)
ln a/notes.txt a/b/notes-link
ln a/notes.txt keep/notes-link2
expect "nlink 3" "$(stat -c %h a/notes.txt)" 3
rm keep/notes-link2
expect "nlink 2" "$(stat -c %h a/notes.txt)" 2
expect "link content" "$(cat a/b/notes-link)" "$(cat a/notes.txt)"

# symlinks: relative and absolute targets, readlink, following
ln -s ../a/notes.txt c/rel-link
ln -s /nowhere/at/all c/dangling
expect "readlink rel" "$(readlink c/rel-link)" ../a/notes.txt
expect "readlink dangling" "$(readlink c/dangling)" /nowhere/at/all
expect "follow link" "$(head -1 c/rel-link)" "first line"

# chmod, chown (also of a symlink itself), touch -d on a file and a folder
chmod 0640 a/notes.txt
chmod 0751 c
chmod 4755 keep
expect "chmod file" "$(stat -c %a a/notes.txt)" 640
chown 1234:5678 a/notes.txt
chown -h 2345:6789 c/rel-link
expect "chown" "$(stat -c %u:%g a/notes.txt)" 1234:5678
expect "lchown" "$(stat -c %u:%g c/rel-link)" 2345:6789
touch -d "2021-03-04 05:06:07" c/final.txt
touch -d "1999-12-31 23:59:58" a/b
expect "touch -d" "$(stat -c %Y c/final.txt)" 1614834367
expect "touch -d dir" "$(stat -c %Y a/b)" 946684798

# rmdir and unlink
mkdir -p gone/inner
rmdir gone/inner gone
[ ! -e gone ] || fail "rmdir"
echo scratch > scratch.txt
rm scratch.txt
[ ! -e scratch.txt ] || fail "unlink"
if rmdir a 2>/dev/null; then fail "rmdir of a non-empty folder succeeded"; fi

# the guest's view, for the host to compare with its own
cd /
sync
find /mnt/ops -mindepth 1 | sort | while read -r p; do
  stat -c "%F|%n|%s|%a|%u|%g|%h" "$p"
done | sed 's#|/mnt/ops/#|#' > "$DATA"
mount_nfs -u /mnt

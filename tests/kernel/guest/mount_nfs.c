/*
 * mount_nfs: a tiny static helper for the guest initramfs.
 *
 * busybox's mount does not reliably pass NFS text options to the kernel (it
 * tries its own binary NFS mount data), so the guest calls mount(2) directly
 * with fstype "nfs" and the options string, which the kernel parses itself.
 *
 *   mount_nfs SOURCE TARGET OPTIONS     e.g. 10.0.2.2:/export /mnt vers=3,...
 *   mount_nfs -u TARGET                 umount(2) TARGET
 *
 * Prints the errno text and exits 1 on failure, so guest scripts can report it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "-u") == 0) {
        if (umount(argv[2]) != 0) {
            fprintf(stderr, "umount %s: %s\n", argv[2], strerror(errno));
            return 1;
        }
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: mount_nfs SOURCE TARGET OPTIONS | mount_nfs -u TARGET\n");
        return 2;
    }
    if (mount(argv[1], argv[2], "nfs", 0, argv[3]) != 0) {
        fprintf(stderr, "mount %s on %s (%s): %s\n", argv[1], argv[2], argv[3], strerror(errno));
        return 1;
    }
    return 0;
}

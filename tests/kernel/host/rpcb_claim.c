/*
 * rpcb_claim: points the host rpcbind's NFSv3 and MOUNT entries (TCP and UDP) at
 * the given ports, replacing whatever another server registered.
 *
 * Only one server can own rpcbind's NFS/MOUNT entries on a machine, and other
 * nfs-ganesha instances started on this host re-register theirs whenever they
 * start. The rpcbind scenario against the origin needs the entries to name the
 * origin under test, so it claims them just before booting the guest.
 *
 *   rpcb_claim NFS_PORT MOUNT_PORT
 */
#include <rpc/rpc.h>
#include <rpc/pmap_clnt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

static int claim(unsigned long prog, unsigned long vers, int port)
{
    pmap_unset(prog, vers);
    if (!pmap_set(prog, vers, IPPROTO_TCP, port) || !pmap_set(prog, vers, IPPROTO_UDP, port)) {
        fprintf(stderr, "rpcb_claim: pmap_set %lu/%lu -> %d failed\n", prog, vers, port);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: rpcb_claim NFS_PORT MOUNT_PORT\n");
        return 2;
    }
    int nfs = atoi(argv[1]), mnt = atoi(argv[2]);
    if (nfs <= 0 || nfs > 65535 || mnt <= 0 || mnt > 65535) {
        fprintf(stderr, "rpcb_claim: bad port\n");
        return 2;
    }
    int rc = claim(100003, 3, nfs);
    rc |= claim(100005, 3, mnt);
    rc |= claim(100005, 1, mnt);
    return rc;
}

/*
 * rpcb_claim: points the host rpcbind's NFSv3 and MOUNT (v3 and v1) entries, TCP
 * and UDP, at the given ports, replacing whatever another server registered.
 *
 * Only one server can own rpcbind's NFS/MOUNT entries on a machine, and other
 * nfs-ganesha instances on this shared host register theirs when they start and
 * delete them when they stop. The rpcbind scenario needs the entries to name
 * the server under test while its guest mounts, so it claims them once and
 * keeps them (--keep) for the guest's lifetime. Entries that are already right
 * are left alone, so a client never sees a gap.
 *
 *   rpcb_claim NFS_PORT MOUNT_PORT               claim once
 *   rpcb_claim NFS_PORT MOUNT_PORT --keep SECS   re-check every 100 ms, SECS at most
 */
#include <rpc/rpc.h>
#include <rpc/pmap_clnt.h>
#include <rpc/pmap_prot.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The TCP port rpcbind maps exactly PROG/VERS to, or 0. Reads the whole map:
 * GETPORT may answer with another version of the program. */
static int current_port(unsigned long prog, unsigned long vers)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(111);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int port = 0;
    struct pmaplist *list = pmap_getmaps(&addr);
    for (struct pmaplist *p = list; p; p = p->pml_next)
        if (p->pml_map.pm_prog == prog && p->pml_map.pm_vers == vers && p->pml_map.pm_prot == IPPROTO_TCP)
            port = (int)p->pml_map.pm_port;
    if (list)
        xdr_free((xdrproc_t)xdr_pmaplist_ptr, (char *)&list);
    return port;
}

static int claim(unsigned long prog, unsigned long vers, int port)
{
    if (current_port(prog, vers) == port)
        return 0;
    pmap_unset(prog, vers);
    if (!pmap_set(prog, vers, IPPROTO_TCP, port) || !pmap_set(prog, vers, IPPROTO_UDP, port)) {
        fprintf(stderr, "rpcb_claim: pmap_set %lu/%lu -> %d failed\n", prog, vers, port);
        return 1;
    }
    return 0;
}

static int claim_all(int nfs, int mnt)
{
    int rc = claim(100003, 3, nfs);
    rc |= claim(100005, 3, mnt);
    rc |= claim(100005, 1, mnt);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 5 && strcmp(argv[3], "--keep") == 0)) {
        fprintf(stderr, "usage: rpcb_claim NFS_PORT MOUNT_PORT [--keep SECONDS]\n");
        return 2;
    }
    int nfs = atoi(argv[1]), mnt = atoi(argv[2]);
    int keep = argc == 5 ? atoi(argv[4]) : 0;
    if (nfs <= 0 || nfs > 65535 || mnt <= 0 || mnt > 65535 || keep < 0 || keep > 3600) {
        fprintf(stderr, "rpcb_claim: bad argument\n");
        return 2;
    }
    int rc = claim_all(nfs, mnt);
    for (time_t end = time(NULL) + keep; keep > 0 && time(NULL) < end;) {
        usleep(100 * 1000);
        claim_all(nfs, mnt);
    }
    return rc;
}

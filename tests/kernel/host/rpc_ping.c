/*
 * rpc_ping: calls procedure 0 (NULL) of PROG/VERS over TCP at 127.0.0.1:PORT.
 *
 * `rpcinfo -t HOST -n PORT PROG VERS` from this libtirpc does not reliably stay
 * on PORT: with another server registered for PROG/VERS at rpcbind it answered
 * while nothing listened on PORT. The kernel tests need to know whether *this*
 * port answers (is the server under test up, is a stale one still there), so
 * they ask it directly: with a non-zero port, clnttcp_create does no rpcbind
 * lookup.
 *
 *   rpc_ping PORT PROG VERS      exit 0 when the call succeeds within 2 s
 */
#include <rpc/rpc.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: rpc_ping PORT PROG VERS\n");
        return 2;
    }
    int port = atoi(argv[1]);
    unsigned long prog = strtoul(argv[2], NULL, 10), vers = strtoul(argv[3], NULL, 10);
    if (port <= 0 || port > 65535) {
        fprintf(stderr, "rpc_ping: bad port\n");
        return 2;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int sock = RPC_ANYSOCK;
    CLIENT *clnt = clnttcp_create(&addr, prog, vers, &sock, 0, 0);
    if (!clnt)
        return 1;
    struct timeval timeout = {2, 0};
    enum clnt_stat st = clnt_call(clnt, NULLPROC, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, timeout);
    clnt_destroy(clnt);
    return st == RPC_SUCCESS ? 0 : 1;
}

#!/usr/bin/env python3
"""Takes and releases a byte-range lock through an NLM v4 server, as a client's
lock manager would, and tells whether a file on this host's disk is locked. Used
by scripts/demo.sh and tests/container/run-image-test.sh to show that a lock taken
through nfsgw's lock service ([server] nlm_port) is held at the origin.

  nlm-probe.py lock   SERVER_OPTIONS FILE   LOCK (non-blocking, exclusive), retried
                                            while the server is in its grace period
  nlm-probe.py test   SERVER_OPTIONS FILE   TEST: prints granted or denied
  nlm-probe.py unlock SERVER_OPTIONS FILE   UNLOCK
  nlm-probe.py held PATH                    exit 0 when a process of this host sees a
                                            write lock on PATH (the origin's copy of
                                            FILE: ganesha holds NLM locks as OFD locks)
  nlm-probe.py getport RPCBIND_PORT PROG VERS   the TCP port an rpcbind maps PROG
                                            VERS to (PMAPPROC_GETPORT), 0 for none

SERVER_OPTIONS: --nlm-port N --nfs-port N [--mount-port N] --export PATH
[--host 127.0.0.1] [--caller NAME] [--owner OH] [--svid N] [--grace-wait S]. FILE
is a name in the export's root; its handle comes from the server's MOUNT and
LOOKUP. The caller name is the client host's name, which the server's rpc.statd
must resolve (default 127.0.0.9, an address). Prints the NLM status; exit 0 when
it is granted, 1 otherwise, 2 when the server does not answer.
"""
import argparse
import fcntl
import os
import socket
import struct
import sys
import time

NLM_PROG, NLM_VERS = 100021, 4
NFS_PROG, MOUNT_PROG, PMAP_PROG = 100003, 100005, 100000
NLM_TEST, NLM_LOCK, NLM_UNLOCK = 1, 2, 4
STATS = {0: "granted", 1: "denied", 2: "denied_nolocks", 3: "blocked", 4: "denied_grace_period",
         5: "deadlck", 6: "rofs", 7: "stale_fh", 8: "fbig", 9: "failed"}
F_OFD_GETLK = 36  # <fcntl.h> on Linux


class Xdr:
    def __init__(self):
        self.b = b""

    def u32(self, v):
        self.b += struct.pack(">I", v)
        return self

    def u64(self, v):
        self.b += struct.pack(">Q", v)
        return self

    def opaque(self, data):
        self.u32(len(data))
        self.b += data + b"\0" * (-len(data) % 4)
        return self

    def string(self, s):
        return self.opaque(s.encode())


class Reader:
    def __init__(self, b):
        self.b, self.at = b, 0

    def u32(self):
        if self.at + 4 > len(self.b):
            raise ValueError("reply cut short")
        v = struct.unpack(">I", self.b[self.at:self.at + 4])[0]
        self.at += 4
        return v

    def opaque(self):
        n = self.u32()
        if n > 1024 or self.at + n > len(self.b):
            raise ValueError("bad opaque in reply")
        v = self.b[self.at:self.at + n]
        self.at += n + (-n % 4)
        return v


def call(host, port, prog, vers, proc, args, timeout=30.0):
    """One RPC over TCP (AUTH_SYS, uid 0); the reader after an accepted SUCCESS reply."""
    xid = int.from_bytes(os.urandom(4), "big")
    cred = Xdr().u32(0).string("nlm-probe").u32(0).u32(0).u32(0).b
    body = Xdr().u32(xid).u32(0).u32(2).u32(prog).u32(vers).u32(proc).u32(1).opaque(cred).u32(0).u32(0).b + args
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
        reply = b""
        last = False
        while not last:
            head = recv_exact(s, 4)
            n = struct.unpack(">I", head)[0]
            last = bool(n & 0x80000000)
            reply += recv_exact(s, n & 0x7FFFFFFF)
    r = Reader(reply)
    if r.u32() != xid or r.u32() != 1 or r.u32() != 0:
        raise ValueError("not an accepted reply to this call")
    r.u32()
    r.opaque()  # verifier
    accept = r.u32()
    if accept != 0:
        raise ValueError(f"RPC accept status {accept} from program {prog} version {vers}")
    return r


def recv_exact(s, n):
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise ConnectionError("connection closed")
        out += chunk
    return out


def file_handle(o):
    """MOUNT v3 MNT of the export, then NFSv3 LOOKUP of the file in its root."""
    r = call(o.host, o.mount_port or o.nfs_port, MOUNT_PROG, 3, 1, Xdr().string(o.export).b)
    status = r.u32()
    if status != 0:
        raise ValueError(f"MOUNT {o.export}: status {status}")
    root = r.opaque()
    r = call(o.host, o.nfs_port, NFS_PROG, 3, 3, Xdr().opaque(root).string(o.file).b)
    status = r.u32()
    if status != 0:
        raise ValueError(f"LOOKUP {o.file}: NFS status {status}")
    return r.opaque()


def lock_args(o, fh):
    return Xdr().string(o.caller).opaque(fh).opaque(o.owner.encode()).u32(o.svid).u64(0).u64(0).b


def nlm(o, proc, fh):
    cookie = Xdr().opaque(b"probe").b
    if proc == NLM_LOCK:  # block = false, exclusive, the lock, reclaim = false, state
        args = cookie + Xdr().u32(0).u32(1).b + lock_args(o, fh) + Xdr().u32(0).u32(1).b
    elif proc == NLM_TEST:
        args = cookie + Xdr().u32(1).b + lock_args(o, fh)
    else:
        args = cookie + lock_args(o, fh)
    r = call(o.host, o.nlm_port, NLM_PROG, NLM_VERS, proc, args)
    r.opaque()  # cookie
    return r.u32()


def held(path):
    fd = os.open(path, os.O_RDWR)
    try:
        # struct flock: l_type, l_whence, l_start, l_len, l_pid (native layout)
        fl = struct.pack("@hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        out = fcntl.fcntl(fd, F_OFD_GETLK, fl)
        return struct.unpack("@hhqqi4x", out)[0] != fcntl.F_UNLCK
    finally:
        os.close(fd)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "held":
        locked = held(sys.argv[2])
        print("locked" if locked else "not locked")
        return 0 if locked else 1
    if len(sys.argv) >= 2 and sys.argv[1] == "getport":
        port, prog, vers = (int(v) for v in sys.argv[2:5])
        r = call("127.0.0.1", port, PMAP_PROG, 2, 3, Xdr().u32(prog).u32(vers).u32(6).u32(0).b, timeout=5)
        print(r.u32())
        return 0
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("op", choices=["lock", "test", "unlock"])
    p.add_argument("file")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--nlm-port", type=int, required=True)
    p.add_argument("--nfs-port", type=int, required=True)
    p.add_argument("--mount-port", type=int, default=0)
    p.add_argument("--export", required=True)
    p.add_argument("--caller", default="127.0.0.9")
    p.add_argument("--owner", default="nlm-probe")
    p.add_argument("--svid", type=int, default=1)
    p.add_argument("--grace-wait", type=float, default=120, help="seconds to retry DENIED_GRACE_PERIOD")
    o = p.parse_args()
    try:
        fh = file_handle(o)
        proc = {"lock": NLM_LOCK, "test": NLM_TEST, "unlock": NLM_UNLOCK}[o.op]
        deadline = time.monotonic() + o.grace_wait
        while True:
            stat = nlm(o, proc, fh)
            if stat != 4 or time.monotonic() > deadline:
                break
            time.sleep(1)  # nfsgw's grace period after its start: new locks wait
    except (OSError, ValueError) as e:
        print(f"nlm-probe: {o.op} {o.file}: {e}", file=sys.stderr)
        return 2
    print(STATS.get(stat, f"status {stat}"))
    return 0 if stat == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

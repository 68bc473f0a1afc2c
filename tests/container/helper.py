#!/usr/bin/env python3
"""Small probes for tests/container/run-image-test.sh.

  helper.py wait-nfs PORT TIMEOUT_S   waits until an NFSv3 NULL call on 127.0.0.1:PORT
                                      is answered; prints the seconds it took; exit 1
                                      when it is not answered in time
  helper.py origin-calls              reads `nfsgw stats --json` on stdin and prints
                                      "ORIGIN_CALLS BLOCKS_FETCHED" summed over exports
  helper.py cap-eff                   reads /proc/PID/status on stdin and prints
                                      "UID CAPEFF CAPPRM CAPBND NONEWPRIVS"
"""
import json
import os
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True


def nfs_null(port, timeout):
    """One NFSv3 NULL call (program 100003, version 3, procedure 0) over TCP."""
    xid = int.from_bytes(os.urandom(4), "big")
    # xid, CALL, RPC version 2, program, version, procedure, AUTH_NONE cred and verf
    body = struct.pack(">IIIIIIIIII", xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(struct.pack(">I", 0x80000000 | len(body)) + body)
        head = b""
        while len(head) < 4:
            chunk = s.recv(4 - len(head))
            if not chunk:
                return False
            head += chunk
        n = struct.unpack(">I", head)[0] & 0x7FFFFFFF
        reply = b""
        while len(reply) < n:
            chunk = s.recv(n - len(reply))
            if not chunk:
                return False
            reply += chunk
    # xid, REPLY, MSG_ACCEPTED, verf flavour, verf length, SUCCESS
    if len(reply) < 24:
        return False
    rxid, mtype, stat, _, vlen = struct.unpack(">IIIII", reply[:20])
    accept = struct.unpack(">I", reply[20 + vlen:24 + vlen])[0]
    return rxid == xid and mtype == 1 and stat == 0 and accept == 0


def wait_nfs(port, limit):
    start = time.monotonic()
    while time.monotonic() - start < limit:
        try:
            if nfs_null(port, 2.0):
                print(f"{time.monotonic() - start:.2f}")
                return 0
        except OSError:
            pass
        time.sleep(0.05)
    print(f"no NFS NULL answer on 127.0.0.1:{port} in {limit} s", file=sys.stderr)
    return 1


def origin_calls():
    d = json.load(sys.stdin)
    calls = blocks = 0
    for e in d["exports"]:
        calls += sum(p["origin_calls"] for p in e["procedures"].values())
        blocks += e.get("data", {}).get("blocks_fetched", 0)
    print(calls, blocks)
    return 0


def cap_eff():
    fields = dict(line.split(":", 1) for line in sys.stdin if ":" in line)
    uid = fields["Uid"].split()[1]  # effective uid
    print(uid, int(fields["CapEff"], 16), int(fields["CapPrm"], 16), int(fields["CapBnd"], 16),
          fields.get("NoNewPrivs", "?").strip())
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "wait-nfs":
        sys.exit(wait_nfs(int(sys.argv[2]), float(sys.argv[3])))
    if cmd == "origin-calls":
        sys.exit(origin_calls())
    if cmd == "cap-eff":
        sys.exit(cap_eff())
    print(__doc__, file=sys.stderr)
    sys.exit(2)

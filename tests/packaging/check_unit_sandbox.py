#!/usr/bin/env python3
"""nfsgw under systemd/nfsgw.service's credentials and syscall filter, without
systemd (this machine has none as PID 1): the unit's AmbientCapabilities=,
CapabilityBoundingSet= and NoNewPrivileges= are applied with setpriv, as a
non-root user, and every system call nfsgw makes (strace -f) must be inside the
unit's SystemCallFilter= (expanded by `systemd-analyze syscall-filter`).

1. Origin down, register_rpcbind = true: nfsgw starts, registers NFS and MOUNT
   with rpcbind as a non-root user, answers `nfsgw stats` as that user, and
   after SIGTERM exits 0 with its registrations removed.
2. In front of nfs-ganesha (scripts/origin-ganesha.sh): nfsgw's connections to
   the origin come from reserved source ports (what CAP_NET_BIND_SERVICE is
   for: knfsd's `secure`), a file read twice through it (cold, then from the
   data cache) and a file written through it are byte-exact, `stats` and
   `invalidate` work, SIGTERM ends it with 0, and no system call fell outside
   the filter.
Fixed loopback ports: an integration-style test (RUN_SERIAL, the shared lock).
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import packaging_lib as lib  # noqa: E402
from check_systemd import parse_unit  # noqa: E402

NFS_PORT = 20749
METRICS_PORT = 20799  # phase 2: the Prometheus endpoint's threads run under the filter too
ORIGIN_NFS, ORIGIN_MNT = 20790, 20748
USER = 65534  # nobody: the unit's user need not exist here


def syscall_groups():
    r = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, timeout=60)
    groups, cur = {}, None
    for line in r.stdout.splitlines():
        if re.match(r"^@\S+", line):
            cur = line.strip()
            groups[cur] = []
        elif cur and line.strip() and not line.strip().startswith("#"):
            groups[cur].append(line.strip())
    return groups


def expand(groups, names):
    out = set()
    for n in names:
        if n.startswith("@"):
            out |= expand(groups, groups.get(n, []))
        else:
            out.add(n)
    return out


def allowed_syscalls(svc):
    """The set the unit's SystemCallFilter= lines allow (allow lists, then ~deny lists)."""
    groups = syscall_groups()
    allowed = None
    for line in svc.get("SystemCallFilter", []):
        deny = line.startswith("~")
        names = expand(groups, line.lstrip("~").split())
        if deny:
            allowed = (allowed if allowed is not None else set()) - names
        else:
            allowed = names if allowed is None else allowed | names
    return allowed


def setpriv_prefix(svc):
    def caps(key):
        v = (svc.get(key) or [""])[-1].split()
        return ",".join("+" + c.lower().replace("cap_", "") for c in v)
    ambient, bounding = caps("AmbientCapabilities"), caps("CapabilityBoundingSet")
    cmd = ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups",
           f"--inh-caps=-all{',' + ambient if ambient else ''}",
           f"--ambient-caps=-all{',' + ambient if ambient else ''}",
           f"--bounding-set=-all{',' + bounding if bounding else ''}"]
    if (svc.get("NoNewPrivileges") or ["no"])[-1] == "yes":
        cmd.append("--no-new-privs")
    return cmd


def wait_for(pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return False


def registrations():
    r = subprocess.run(["rpcinfo", "-p", "127.0.0.1"], capture_output=True, text=True, timeout=10)
    return [l.split() for l in r.stdout.splitlines() if l.split()[:1] in (["100003"], ["100005"])
            and l.split()[3] == str(NFS_PORT)]


def origin_source_ports():
    r = subprocess.run(["ss", "-Htn", "state", "established", "dst", f"127.0.0.1:{ORIGIN_NFS}"],
                       capture_output=True, text=True, timeout=10)
    return [int(l.split()[-2].rsplit(":", 1)[1]) for l in r.stdout.splitlines() if l.strip()]


def main():
    args = lib.parse_args(__doc__)
    for tool in ("setpriv", "strace", "systemd-analyze", "rpcinfo", "ss", "ganesha.nfsd", "nfs-cat", "nfs-cp"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} is missing (scripts/install-deps.sh installs it)")
            return lib.SKIP
    if os.geteuid() != 0:
        print("SKIP: needs root (setpriv to another user, nfs-ganesha)")
        return lib.SKIP
    c = lib.Checker("packaging.unit_sandbox")
    unit = parse_unit(os.path.join(args.source, "systemd", "nfsgw.service"))
    svc = unit.get("Service", {})
    prefix = setpriv_prefix(svc)
    allowed = allowed_syscalls(svc)
    c.expect(allowed is not None and len(allowed) > 50, "systemd/nfsgw.service", "no usable SystemCallFilter=")
    nfsgw = os.path.abspath(args.nfsgw)
    origin_sh = os.path.join(args.source, "scripts", "origin-ganesha.sh")

    with tempfile.TemporaryDirectory(prefix="nfsgw-unit-") as w:
        os.chmod(w, 0o755)
        cache = os.path.join(w, "cache")
        export = os.path.join(w, "export")
        os.makedirs(cache)
        os.makedirs(export)
        os.chown(cache, USER, USER)
        os.chmod(cache, 0o700)
        os.chmod(export, 0o1777)
        big = os.urandom(3 << 20)
        with open(os.path.join(export, "big"), "wb") as f:
            f.write(big)
        cfg = os.path.join(w, "nfsgw.toml")

        def write_config(register, metrics=False):
            with open(cfg, "w") as f:
                f.write(f'[server]\nlisten = "127.0.0.1"\nnfs_port = {NFS_PORT}\n'
                        f'register_rpcbind = {"true" if register else "false"}\n'
                        + (f'metrics_listen = "127.0.0.1:{METRICS_PORT}"\n' if metrics else '') +
                        f'[cache]\ndir = "{cache}"\nmemory_mb = 64\n'
                        f'[[export]]\npath = "/export"\n'
                        f'origin = "nfs://127.0.0.1{export}?nfsport={ORIGIN_NFS}&mountport={ORIGIN_MNT}"\n'
                        f'squash = "none"\n')

        def as_user(cmd, **kw):
            return subprocess.run(prefix + cmd, capture_output=True, text=True, timeout=60, **kw)

        # 1. Registration with rpcbind as a non-root user, origin down.
        write_config(True)
        if subprocess.run(["rpcinfo", "-p", "127.0.0.1"], capture_output=True).returncode != 0:
            print("note: rpcbind is not running: registration not checked")
        else:
            log = open(os.path.join(w, "register.log"), "w+")
            p = subprocess.Popen(prefix + [nfsgw, "--config", cfg], stdout=log, stderr=subprocess.STDOUT)
            try:
                up = wait_for(lambda: "serving" in open(log.name).read(), 30)
                if c.expect(up, "phase 1", f"nfsgw did not start:\n{open(log.name).read()}"):
                    c.expect(len(registrations()) == 3, "phase 1",
                             f"expected NFS v3 and MOUNT v1, v3 registered on {NFS_PORT} by the non-root nfsgw; "
                             f"rpcinfo has {registrations()}; log:\n{open(log.name).read()}")
                    r = as_user([nfsgw, "stats", "--config", cfg])
                    c.expect(r.returncode == 0, "phase 1", f"`nfsgw stats` as the unit's user: rc {r.returncode}: {r.stderr}")
            finally:
                p.send_signal(signal.SIGTERM)
                rc = p.wait(timeout=30)
            c.expect(rc == 0, "phase 1", f"nfsgw exited {rc} after SIGTERM")
            c.expect(registrations() == [], "phase 1", f"registrations left after SIGTERM: {registrations()}")

        # 2. In front of ganesha, under strace.
        write_config(False, metrics=True)
        state = os.path.join(w, "origin")
        r = subprocess.run(["bash", origin_sh, "start", state, export, str(ORIGIN_NFS), str(ORIGIN_MNT)],
                           capture_output=True, text=True, timeout=120)
        if not c.expect(r.returncode == 0, "phase 2", f"the origin did not start: {r.stdout}{r.stderr}"):
            return c.finish()
        trace = os.path.join(w, "strace.out")
        os.chmod(w, 0o777)  # strace, running as the unit's user, writes its log here
        log = open(os.path.join(w, "run.log"), "w+")
        p = subprocess.Popen(prefix + ["strace", "-f", "-qq", "-o", trace, nfsgw, "--config", cfg],
                             stdout=log, stderr=subprocess.STDOUT)
        try:
            up = wait_for(lambda: "serving" in open(log.name).read(), 60)
            if c.expect(up, "phase 2", f"nfsgw did not start:\n{open(log.name).read()}"):
                url = f"nfs://127.0.0.1/export/big?nfsport={NFS_PORT}&mountport={NFS_PORT}"
                for attempt in ("cold", "cached"):
                    r = subprocess.run(["nfs-cat", url], capture_output=True, timeout=120)
                    c.expect(r.returncode == 0 and r.stdout == big, "phase 2",
                             f"{attempt} read through nfsgw: rc {r.returncode}, {len(r.stdout)} bytes, "
                             f"{'equal' if r.stdout == big else 'different'}")
                src = os.path.join(w, "up.txt")
                with open(src, "wb") as f:
                    f.write(b"written through nfsgw\n")
                r = subprocess.run(["nfs-cp", src, f"nfs://127.0.0.1/export/up.txt?nfsport={NFS_PORT}&mountport={NFS_PORT}"],
                                   capture_output=True, text=True, timeout=60)
                landed = open(os.path.join(export, "up.txt"), "rb").read() if os.path.exists(os.path.join(export, "up.txt")) else b""
                c.expect(r.returncode == 0 and landed == b"written through nfsgw\n", "phase 2",
                         f"write through nfsgw: rc {r.returncode} {r.stderr}, origin has {landed!r}")
                ports = origin_source_ports()
                print(f"nfsgw's connections to the origin come from ports {ports}")
                c.expect(bool(ports) and all(512 <= q < 1024 for q in ports), "phase 2",
                         f"nfsgw's connections to the origin come from ports {ports}, not reserved ones "
                         "(AmbientCapabilities=CAP_NET_BIND_SERVICE is what allows them)")
                r = as_user([nfsgw, "stats", "--config", cfg])
                c.expect(r.returncode == 0 and "GETATTR" in r.stdout, "phase 2", f"stats: rc {r.returncode} {r.stderr}")
                r = as_user([nfsgw, "invalidate", "--config", cfg, "/export", "--recursive"])
                c.expect(r.returncode == 0, "phase 2", f"invalidate: rc {r.returncode} {r.stderr}")
                r = subprocess.run(["curl", "-sS", "--fail", "--max-time", "10",
                                    f"http://127.0.0.1:{METRICS_PORT}/metrics"], capture_output=True, text=True, timeout=30)
                c.expect(r.returncode == 0 and "nfsgw_cache_hits_total" in r.stdout, "phase 2",
                         f"a scrape of the metrics endpoint: rc {r.returncode} {r.stderr} {r.stdout[:200]}")
        finally:
            # SIGTERM to nfsgw itself (strace's child), as systemd would send it.
            kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
            for k in kids:
                os.kill(int(k), signal.SIGTERM)
            if not kids:
                p.send_signal(signal.SIGTERM)
            try:
                rc = p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
            subprocess.run(["bash", origin_sh, "stop", state], capture_output=True, timeout=60)
        c.expect(rc == 0, "phase 2", f"nfsgw (under strace) exited {rc} after SIGTERM:\n{open(log.name).read()[-2000:]}")
        used = set()
        with open(trace) as f:
            for line in f:
                m = re.match(r"^\d+ +([a-z_0-9]+)\(", line)
                if m:
                    used.add(m.group(1))
        c.expect(len(used) > 30, "phase 2", f"strace saw only {sorted(used)}")
        outside = sorted(used - (allowed or set()))
        c.expect(not outside, "systemd/nfsgw.service",
                 f"nfsgw made system calls its SystemCallFilter= refuses (EPERM): {', '.join(outside)}")
        print(f"nfsgw made {len(used)} distinct system calls: {' '.join(sorted(used))}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

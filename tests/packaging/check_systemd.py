#!/usr/bin/env python3
"""systemd/nfsgw.service against nfsgw and systemd/nfsgw.toml.

- `systemd-analyze verify` accepts the unit without a single warning (with
  ExecStart pointed at the built nfsgw, as it must exist), and
  `systemd-analyze security --offline` rates its exposure at most 2.0;
- ExecStart runs nfsgw with --config at the path the unit's install notes put
  systemd/nfsgw.toml, which nfsgw accepts;
- StateDirectory is the config's [cache] dir, and the secret file is inside;
- CAP_NET_BIND_SERVICE is granted (ambient and bounding set) for libnfs's
  reserved source ports towards the origin, and nothing else;
- User is a non-root user that systemd/nfsgw.sysusers creates, with the cache
  as its home;
- the hardening the issue asks for is present (ProtectSystem=strict,
  ProtectHome, NoNewPrivileges, PrivateTmp, Restart=on-failure);
- KillSignal is one nfsgw handles (gateway/app/gateway_app.cpp's signal_set), and
  an ExecReload sends one it handles;
- the locks drop-in (systemd/nfsgw-locks.conf, for [server] nlm_port) wants and
  orders nfsgw after rpc-statd.service and rpcbind, and `systemd-analyze verify`
  reads it beside the unit without a warning.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import packaging_lib as lib  # noqa: E402

MAX_EXPOSURE = 2.0


def parse_unit(path):
    """{section: {key: [values]}} (repeated keys keep every value)."""
    out, section = {}, None
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith(("#", ";")):
                continue
            if s.startswith("[") and s.endswith("]"):
                section = s[1:-1]
                out.setdefault(section, {})
                continue
            key, _, value = s.partition("=")
            out.setdefault(section, {}).setdefault(key.strip(), []).append(value.strip())
    return out


def handled_signals(source):
    """Signal names in nfsgw's asio::signal_set constructions."""
    names = set()
    for d, _, files in os.walk(os.path.join(source, "gateway")):
        for f in files:
            if f.endswith(".cpp"):
                with open(os.path.join(d, f)) as fh:
                    for m in re.finditer(r"signals?\.emplace\(\s*io_?\s*,([^)]*)\)|signal_set\s+\w+\(\s*\w+\s*,([^)]*)\)",
                                         fh.read()):
                        names.update(re.findall(r"SIG[A-Z0-9]+", m.group(1) or m.group(2) or ""))
    return names


def main():
    args = lib.parse_args(__doc__)
    c = lib.Checker("packaging.systemd")
    sd = os.path.join(args.source, "systemd")
    unit_path = os.path.join(sd, "nfsgw.service")
    w = lib.rel(args, unit_path)
    unit = parse_unit(unit_path)
    svc = unit.get("Service", {})

    def one(key):
        v = svc.get(key)
        return v[-1] if v else None

    exec_start = (one("ExecStart") or "").split()
    if not c.expect(bool(exec_start), w, "no ExecStart"):
        return c.finish()
    config_path = lib.config_arg(exec_start)
    with open(unit_path) as f:
        notes = f.read()
    c.expect(re.search(rf"systemd/nfsgw\.toml\s+{re.escape(config_path or '-')}\b", notes) is not None, w,
             f"ExecStart reads {config_path}, but the install notes do not put systemd/nfsgw.toml there")
    cfg = lib.load_config_file(c, args, os.path.join(sd, "nfsgw.toml"))
    locks_path = os.path.join(sd, "nfsgw-locks.conf")
    wl = lib.rel(args, locks_path)
    locks = parse_unit(locks_path).get("Unit", {})
    for key in ("Wants", "After"):
        names = " ".join(locks.get(key, [])).split()
        c.expect("rpc-statd.service" in names and any(n.startswith("rpcbind") for n in names), wl,
                 f"{key}= does not name rpc-statd.service and rpcbind: {names}")
    with open(locks_path) as f:
        c.expect("/etc/systemd/system/nfsgw.service.d/" in f.read(), wl,
                 "the install notes do not put the drop-in in nfsgw.service.d/")

    # The unit as systemd reads it.
    if shutil.which("systemd-analyze") is None:
        print("SKIP: systemd-analyze is missing (Debian package systemd; scripts/install-deps.sh installs it)")
        return lib.SKIP
    with tempfile.TemporaryDirectory() as tmp:
        with open(unit_path) as f:
            text = f.read()
        # verify wants ExecStart's binary to exist: the built one stands in.
        text = text.replace(exec_start[0], os.path.abspath(args.nfsgw))
        copy = os.path.join(tmp, "nfsgw.service")
        with open(copy, "w") as f:
            f.write(text)
        # The locks drop-in where its install notes put it: verify reads it too.
        os.makedirs(os.path.join(tmp, "nfsgw.service.d"))
        shutil.copy(locks_path, os.path.join(tmp, "nfsgw.service.d", "locks.conf"))
        r = subprocess.run(["systemd-analyze", "verify", "--man=no", copy], capture_output=True, text=True,
                           timeout=60, cwd=tmp)
        out = (r.stdout + r.stderr).strip()
        c.expect(r.returncode == 0 and not out, w, f"systemd-analyze verify: rc {r.returncode}: {out}")
        r = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager", copy],
                           capture_output=True, text=True, timeout=60, cwd=tmp)
        m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout + r.stderr)
        if c.expect(m is not None, w, f"systemd-analyze security gave no exposure level: {r.stderr.strip()}"):
            c.expect(float(m.group(1)) <= MAX_EXPOSURE, w,
                     f"exposure level {m.group(1)} is above {MAX_EXPOSURE} (systemd-analyze security --offline=yes)")

    # Hardening and restarts.
    for key, want in (("ProtectSystem", "strict"), ("ProtectHome", "yes"), ("NoNewPrivileges", "yes"),
                      ("PrivateTmp", "yes"), ("Restart", "on-failure")):
        c.expect(one(key) == want, w, f"{key}={one(key)}; want {key}={want}")

    # The state directory is the cache.
    state = (one("StateDirectory") or "").split()
    if cfg.values:
        cache_dir = cfg.cache["dir"]
        c.expect(any(os.path.join("/var/lib", s) == cache_dir for s in state), w,
                 f"StateDirectory={' '.join(state)} is not [cache] dir {cache_dir} ({cfg.where}); "
                 "ProtectSystem=strict leaves only the state directory writable")
        c.expect(cfg.cache["secret_file"].startswith(cache_dir.rstrip("/") + "/"), cfg.where,
                 f"secret_file {cfg.cache['secret_file']} is outside the state directory {cache_dir}")
        # Capabilities.
        ambient = set((one("AmbientCapabilities") or "").split())
        bounding = set((one("CapabilityBoundingSet") or "").split())
        c.expect("CAP_NET_BIND_SERVICE" in ambient and "CAP_NET_BIND_SERVICE" in bounding, w,
                 f"AmbientCapabilities= and CapabilityBoundingSet= need CAP_NET_BIND_SERVICE: nfsgw runs as "
                 f"{one('User')} and libnfs binds reserved source ports from {lib.LIBNFS_RESERVED_LOW} towards "
                 f"the origin (nfsgw listens on {sorted(cfg.listen_ports())})")
        c.expect(bool(bounding) and bounding <= {"CAP_NET_BIND_SERVICE"}, w,
                 f"CapabilityBoundingSet={' '.join(sorted(bounding))}: nfsgw needs at most CAP_NET_BIND_SERVICE")
        c.expect(ambient <= bounding, w, "AmbientCapabilities outside CapabilityBoundingSet")

    # The user.
    user = one("User")
    c.expect(user not in (None, "root", "0") or one("DynamicUser") == "yes", w, f"User={user}: must not be root")
    if user and one("DynamicUser") != "yes":
        with open(os.path.join(sd, "nfsgw.sysusers")) as f:
            entries = [l.split() for l in f if l.strip() and not l.startswith("#")]
        home = None
        for e in entries:
            if e[0] == "u" and e[1] == user:
                m = re.search(r'"[^"]*"\s+(\S+)', " ".join(e))
                home = m.group(1) if m else None
        c.expect(home is not None, "systemd/nfsgw.sysusers", f"does not create User={user}")
        if cfg.values and home:
            c.expect(home == cfg.cache["dir"], "systemd/nfsgw.sysusers", f"home {home} is not the cache {cfg.cache['dir']}")

    # Signals.
    handled = handled_signals(args.source)
    c.expect(bool(handled), "gateway/", "found no signal_set in nfsgw's sources")
    kill = one("KillSignal") or "SIGTERM"
    c.expect(kill in handled, w, f"KillSignal={kill}, which nfsgw does not handle (it handles {sorted(handled)})")
    reload = one("ExecReload")
    if reload:
        m = re.search(r"-(HUP|USR1|USR2|SIG[A-Z0-9]+)\b", reload)
        sig = ("SIG" + m.group(1)).replace("SIGSIG", "SIG") if m else None
        c.expect(sig in handled, w, f"ExecReload sends {sig}, which nfsgw does not handle: it would end nfsgw")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

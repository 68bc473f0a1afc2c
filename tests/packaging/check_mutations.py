#!/usr/bin/env python3
"""The packaging checks can fail: each mutation below changes one value in a
copy of the shipped files, and the check that covers it must then fail and
name the problem. The unchanged copy must pass every check first (positive
control), so a failure below is the mutation's doing.
"""
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import packaging_lib as lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# What the checks read: copied into a scratch source tree.
COPIED = ["docker", "systemd", "scripts/install-deps.sh", "gateway/app/gateway_app.cpp", "gateway/app/main.cpp"]

# (check, file, old text, new text, words the failure must contain)
MUTATIONS = [
    # compose: ports, paths, networks, origin.
    ("compose", "docker/compose/nfsgw.toml", "nfs_port = 2049", "nfs_port = 2050", "listens on [2050]"),
    ("compose", "docker/compose/compose.yaml", '"127.0.0.1:2049:2049"', '"127.0.0.1:2049:2048"', "publishes container ports [2048]"),
    ("compose", "docker/compose/compose.yaml", "target: /var/lib/nfsgw", "target: /var/lib/nfsgw-cache", "[cache] dir /var/lib/nfsgw"),
    ("compose", "docker/compose/compose.yaml", "target: /etc/nfsgw/nfsgw.toml", "target: /etc/nfsgw.toml", "no volume puts a config file"),
    ("compose", "docker/compose/compose.yaml", "subnet: 172.30.49.0/24", "subnet: 172.30.50.0/24", "clients do not admit"),
    ("compose", "docker/compose/compose.yaml", "mem_limit: 768m", "mem_limit: 512m", "below 2 x memory_mb"),
    ("compose", "docker/compose/compose.yaml", "net.ipv4.ip_unprivileged_port_start=0", "net.ipv4.ping_group_range=0", "reserved source ports"),
    ("compose", "docker/compose/demo-origin/ganesha.conf", "MNT_Port = 20048;", "MNT_Port = 20049;", "mountport=20048"),
    ("compose", "docker/compose/demo-origin/ganesha.conf", "Bind_addr = 0.0.0.0;", "Bind_addr = 127.0.0.1;", "cannot reach it"),
    ("compose", "docker/compose/nfsgw.toml", 'squash = "root"', 'squash = "rot"', "--check-config` refuses"),
    # kubernetes: ports, config path, cache, secret, memory, services.
    ("kubernetes", "docker/kubernetes/node-configmap.yaml", "nfs_port = 2049", "nfs_port = 2050", "nfs_port = 2050"),
    ("kubernetes", "docker/kubernetes/shared-service.yaml", "targetPort: nfs", "targetPort: 2050", "targets 2050"),
    ("kubernetes", "docker/kubernetes/shared-deployment.yaml", "mountPath: /etc/nfsgw\n", "mountPath: /etc/nfsgw-config\n", "no ConfigMap is mounted at /etc/nfsgw"),
    ("kubernetes", "docker/kubernetes/shared-deployment.yaml", "claimName: nfsgw-shared-cache", "claimName: nfsgw-other", "claim nfsgw-other"),
    ("kubernetes", "docker/kubernetes/node-daemonset.yaml", '"/run/nfsgw/handle-secret/secret"]', '"/run/nfsgw/handle-secret/key"]', "no init container copies the Secret"),
    ("kubernetes", "docker/kubernetes/shared-configmap.yaml", 'secret_file = "/run/nfsgw/handle-secret/secret"', 'secret_file = "/var/lib/nfsgw/secret"', "not a Secret or an emptyDir"),
    ("kubernetes", "docker/kubernetes/kustomization.yaml", "secret=handle-secret", "key=handle-secret", "does not generate"),
    ("kubernetes", "docker/kubernetes/shared-deployment.yaml", "memory: 2560Mi\n            limits:\n              memory: 2560Mi",
     "memory: 1536Mi\n            limits:\n              memory: 1536Mi", "below 2 x memory_mb"),
    ("kubernetes", "docker/kubernetes/shared-pvc.yaml", "storage: 128Gi", "storage: 100Gi", "1.1 x (metadata_max_gb"),
    ("kubernetes", "docker/kubernetes/shared-deployment.yaml", "value: \"0\"", "value: \"1024\"", "reserved source ports"),
    ("kubernetes", "docker/kubernetes/node-service.yaml", "  internalTrafficPolicy: Local", "  internalTrafficPolicy: Cluster", "internalTrafficPolicy"),
    ("kubernetes", "docker/kubernetes/node-daemonset.yaml", '"/etc/nfsgw/nfsgw.toml"]\n            periodSeconds: 30',
     '"/etc/nfsgw.toml"]\n            periodSeconds: 30', "livenessProbe runs"),
    # Dockerfile: config path, runtime libraries, downloads, user, volume.
    ("dockerfile", "docker/Dockerfile", 'CMD ["/usr/local/bin/nfsgw", "stats", "--config", "/etc/nfsgw/nfsgw.toml"]',
     'CMD ["/usr/local/bin/nfsgw", "stats", "--config", "/etc/nfsgw.toml"]', "HEALTHCHECK reads /etc/nfsgw.toml"),
    ("dockerfile", "docker/Dockerfile", "libnfs13 ", "", "does not install libnfs13"),
    ("dockerfile", "docker/Dockerfile", "WORKDIR /src", "RUN curl -fsSL https://example.com/x.tar.gz | tar xz\nWORKDIR /src", "RUN uses curl"),
    ("dockerfile", "docker/Dockerfile", "USER 10001:10001", "USER 0:0", "non-root uid"),
    ("dockerfile", "docker/Dockerfile", 'VOLUME ["/var/lib/nfsgw"]', 'VOLUME ["/var/cache/nfsgw"]', "default [cache] dir"),
    ("dockerfile", "docker/Dockerfile", "libtoml11-dev ", "", "does not install libtoml11-dev"),
    ("dockerfile", "docker/Dockerfile", "libnfs13 libtirpc3", "libnfs13 librocksdb7.8 libtirpc3", "installs librocksdb7.8, which holds no library"),
    ("dockerfile", "docker/Dockerfile", "COPY nfsgw /usr/local/bin/nfsgw", "COPY nfsgw /usr/bin/nfsgw", "runtime-prebuilt copies to"),
    ("dockerfile", "docker/Dockerfile", "FROM runtime-base AS runtime-prebuilt", "FROM debian:12 AS runtime-prebuilt",
     "not the runtime's base"),
    # systemd: cache dir, capabilities, hardening, verify, config.
    ("systemd", "systemd/nfsgw.service", "StateDirectory=nfsgw\n", "StateDirectory=nfsgw-cache\n", "is not [cache] dir"),
    ("systemd", "systemd/nfsgw.service", "AmbientCapabilities=CAP_NET_BIND_SERVICE\n", "", "need CAP_NET_BIND_SERVICE"),
    ("systemd", "systemd/nfsgw.service", "ProtectSystem=strict", "ProtectSystm=strict", "Unknown key"),
    ("systemd", "systemd/nfsgw.service", "KillSignal=SIGTERM", "KillSignal=SIGUSR1", "does not handle"),
    ("systemd", "systemd/nfsgw.service", "--config /etc/nfsgw/nfsgw.toml\n", "--config /etc/nfsgw.toml\n", "install notes"),
    ("systemd", "systemd/nfsgw.service", "CapabilityBoundingSet=CAP_NET_BIND_SERVICE\n", "", "exposure level"),
    ("systemd", "systemd/nfsgw.service", "ProtectHome=yes", "ProtectHome=no", "want ProtectHome=yes"),
    ("systemd", "systemd/nfsgw.toml", "nfs_port = 2049", "nfs_port = 70000", "--check-config` refuses"),
]


def run_check(check, source, args):
    cmd = [sys.executable, os.path.join(HERE, f"check_{check}.py"), "--source", source,
           "--nfsgw", args.nfsgw, "--config-dump", args.config_dump]
    env = dict(os.environ, NFSGW_PACKAGING_NO_KUBECTL="1")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    return r.returncode, r.stdout + r.stderr


def copy_tree(source, dest):
    for item in COPIED:
        src, dst = os.path.join(source, item), os.path.join(dest, item)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.isdir(src):
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("handle-secret", "__pycache__"))
        else:
            shutil.copy2(src, dst)


def main():
    args = lib.parse_args(__doc__)
    lib.require_yaml()
    c = lib.Checker("packaging.mutations")
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base")
        copy_tree(args.source, base)
        skipped = set()
        for check in sorted({m[0] for m in MUTATIONS}):
            rc, out = run_check(check, base, args)
            if rc == lib.SKIP:
                skipped.add(check)
                print(f"note: check_{check}.py skipped (a tool is missing); its mutations are not run")
                continue
            c.expect(rc == 0, f"check_{check}.py", f"fails on the unchanged files, so mutations prove nothing:\n{out}")
        # Each mutation in a tree of its own; three at a time (the checks are
        # short and mostly wait for nfsgw and systemd-analyze).
        jobs = []
        for i, (check, path, old, new, words) in enumerate(MUTATIONS):
            if check in skipped:
                continue
            tree = os.path.join(tmp, f"m{i}")
            copy_tree(args.source, tree)
            target = os.path.join(tree, path)
            with open(target) as f:
                text = f.read()
            if not c.expect(text.count(old) == 1, path, f"mutation {i}: {old!r} occurs {text.count(old)} times, not once"):
                continue
            with open(target, "w") as f:
                f.write(text.replace(old, new))
            jobs.append((i, check, path, old, new, words, tree))
        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
            results = list(pool.map(lambda j: run_check(j[1], j[6], args), jobs))
        for (i, check, path, old, new, words, _), (rc, out) in zip(jobs, results):
            what = f"mutation {i} ({path}: {old.strip()!r} -> {new.strip()!r})"
            if c.expect(rc == 1, f"check_{check}.py", f"{what}: exit {rc}, not 1: the check did not notice\n{out}"):
                c.expect(words in out, f"check_{check}.py", f"{what}: failed without saying {words!r}:\n{out}")
                first = next((l.strip() for l in out.splitlines() if l.strip().startswith("- ")), "")
                print(f"{what}\n    -> {first[:200]}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

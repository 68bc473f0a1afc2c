"""Shared helpers of the packaging checks (tests/packaging/check_*.py).

Each check collects every problem it finds (Checker.fail) and exits 1 listing
them, 0 when there is none, 77 when a tool it needs is missing (ctest reports
that as skipped). Config files are read the way nfsgw reads them: validated by
`nfsgw --check-config` and their settings, defaults included, printed by
nfsgw_config_dump (tests/packaging/config_dump.cpp, nfsgw's own loader).
"""
import argparse
import ipaddress
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

SKIP = 77

# libnfs binds its origin connections to a reserved source port (512..1023) when
# the process may (observed with Debian 12's libnfs 4.0: strace shows bind() to
# 662, 702, 752, 798), else to an ordinary one, which origins with knfsd's
# default `secure` option or ONTAP's mount-rootonly refuse. So every deployment
# lets nfsgw bind ports from here up: a netns sysctl or CAP_NET_BIND_SERVICE.
LIBNFS_RESERVED_LOW = 512


class Checker:
    def __init__(self, name):
        self.name = name
        self.problems = []
        self.checked = 0

    def fail(self, where, message):
        self.problems.append(f"{where}: {message}")

    def expect(self, condition, where, message):
        self.checked += 1
        if not condition:
            self.fail(where, message)
        return condition

    def finish(self):
        if self.problems:
            print(f"{self.name}: {len(self.problems)} problem(s):")
            for p in self.problems:
                print(f"  - {p}")
            return 1
        print(f"{self.name}: OK ({self.checked} checks)")
        return 0


def parse_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--source", required=True, help="the repository root")
    ap.add_argument("--nfsgw", required=True, help="the built nfsgw binary")
    ap.add_argument("--config-dump", required=True, help="the built nfsgw_config_dump binary")
    return ap.parse_args()


def require_yaml():
    try:
        import yaml  # noqa: F401
    except ImportError:
        print("SKIP: PyYAML is missing (Debian package python3-yaml; scripts/install-deps.sh installs it)")
        sys.exit(SKIP)
    return yaml


def rel(args, path):
    return os.path.relpath(path, args.source)


class NfsgwConfig:
    """A config file as nfsgw reads it; `values` is None when nfsgw refuses it."""

    def __init__(self, checker, args, where, text):
        self.where = where
        self.values = None
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write(text)
            path = f.name
        try:
            r = subprocess.run([args.nfsgw, "--check-config", path], capture_output=True, text=True, timeout=30)
            ok = checker.expect(r.returncode == 0, where,
                                f"`nfsgw --check-config` refuses it: {(r.stderr or r.stdout).strip()}")
            if not ok:
                return
            r = subprocess.run([args.config_dump, path], capture_output=True, text=True, timeout=30)
            if checker.expect(r.returncode == 0, where, f"nfsgw_config_dump failed: {r.stderr.strip()}"):
                self.values = json.loads(r.stdout)
        finally:
            os.unlink(path)

    @property
    def server(self):
        return self.values["server"]

    @property
    def cache(self):
        return self.values["cache"]

    @property
    def exports(self):
        return self.values["exports"]

    def listen_ports(self):
        """The TCP ports nfsgw listens on: NFS, and MOUNT (on the NFS port when 0)."""
        s = self.server
        ports = {s["nfs_port"]}
        if s["mount_port"] != 0:
            ports.add(s["mount_port"])
        return ports

    def admits(self, network):
        """True when every export's `clients` covers the whole of `network`."""
        net = ipaddress.ip_network(network, strict=False)
        for e in self.exports:
            if not any(net.version == c.version and net.subnet_of(c)
                       for c in (ipaddress.ip_network(t, strict=False) for t in e["clients"])):
                return False
        return True


def load_config_file(checker, args, path):
    with open(path) as f:
        return NfsgwConfig(checker, args, rel(args, path), f.read())


def config_arg(argv):
    """The value of --config in an nfsgw command line (list), or None."""
    for i, a in enumerate(argv):
        if a == "--config" and i + 1 < len(argv):
            return argv[i + 1]
    return None


def nfsgw_subcommands(args):
    """The first words of nfsgw's usage lines ("stats", "invalidate", ...)."""
    r = subprocess.run([args.nfsgw, "--help"], capture_output=True, text=True, timeout=30)
    text = r.stdout + r.stderr
    return set(re.findall(r"nfsgw ([a-z][a-z-]+) --config", text))


def memory_bytes(quantity):
    """A Kubernetes memory quantity ("2560Mi", "2Gi", "3G") in bytes."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
             "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "": 1, "m": 1e-3}
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(quantity).strip())
    if not m or m.group(2) not in units:
        raise ValueError(f"not a Kubernetes quantity: {quantity!r}")
    return int(float(m.group(1)) * units[m.group(2)])


def docker_memory_bytes(quantity):
    q = str(quantity).strip().lower()
    m = re.fullmatch(r"([0-9.]+)([bkmg]?)", q)
    if not m:
        raise ValueError(f"not a Docker memory size: {quantity!r}")
    return int(float(m.group(1)) * {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30}[m.group(2)])


def min_memory_bytes(memory_mb):
    """The least memory a container limit may give nfsgw with [cache] memory_mb:
    peak RSS was measured at 2x memory_mb (256) to 3.2x (64) (docs/benchmarks.md),
    plus 256 MiB for buffers of calls in flight and threads."""
    return (2 * memory_mb + 256) * 2**20


# ---- Dockerfile ------------------------------------------------------------

def dockerfile_instructions(path):
    """[(line number, INSTRUCTION, argument text)] with continuations joined."""
    out = []
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        start = i + 1
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        text = line
        while text.rstrip().endswith("\\") and i < len(lines):
            text = text.rstrip()[:-1] + " "
            nxt = lines[i]
            i += 1
            if nxt.lstrip().startswith("#"):
                continue
            text += nxt
        word, _, rest = text.strip().partition(" ")
        out.append((start, word.upper(), rest.strip()))
    return out


def dockerfile_stages(path):
    """[{"from": image, "name": alias or None, "instructions": [...]}]"""
    stages = []
    for ln, ins, arg in dockerfile_instructions(path):
        if ins == "FROM":
            parts = arg.split()
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else None
            stages.append({"from": parts[0], "name": name, "line": ln, "instructions": []})
        elif stages:
            stages[-1]["instructions"].append((ln, ins, arg))
    return stages


def exec_form(arg):
    """A JSON-array instruction argument as a list, or its shell words."""
    arg = arg.strip()
    if arg.startswith("["):
        return json.loads(arg)
    return shlex.split(arg)


def apt_packages(run_text):
    """Package names given to `apt-get install` in a RUN instruction."""
    pkgs = []
    for part in re.split(r"&&|;|\|\|", run_text):
        words = part.split()
        if len(words) >= 2 and words[0] == "apt-get" and "install" in words:
            after = words[words.index("install") + 1:]
            pkgs += [w for w in after if not w.startswith("-")]
    return pkgs


def stage_chain(stages, stage):
    """`stage` and the stages it is built FROM (FROM <stage name>), bases first."""
    by_name = {s["name"]: s for s in stages if s["name"]}
    chain = [stage]
    while chain[0]["from"] in by_name and len(chain) <= len(stages):
        chain.insert(0, by_name[chain[0]["from"]])
    return chain


def effective_stage(stages, stage):
    """`stage` with the instructions of the stages it is built FROM before its own:
    what the image it makes was given (USER, ENTRYPOINT, packages...)."""
    chain = stage_chain(stages, stage)
    return {"from": chain[0]["from"], "name": stage["name"], "line": stage["line"],
            "chain": [s["name"] for s in chain],
            "instructions": [i for s in chain for i in s["instructions"]]}


def runtime_stage(path):
    """The final stage (the image `docker build` makes), with what it inherits."""
    stages = dockerfile_stages(path)
    return effective_stage(stages, stages[-1])


def image_user(path):
    """(uid, gid) of the final stage's USER, as strings."""
    user = None
    for _, ins, arg in runtime_stage(path)["instructions"]:
        if ins == "USER":
            user = arg.strip()
    if user is None:
        return None, None
    uid, _, gid = user.partition(":")
    return uid, gid or None


def image_command(path):
    """ENTRYPOINT + CMD of the final stage, as one list."""
    entry, cmd = [], []
    for _, ins, arg in runtime_stage(path)["instructions"]:
        if ins == "ENTRYPOINT":
            entry = exec_form(arg)
        elif ins == "CMD":
            cmd = exec_form(arg)
    return entry, cmd

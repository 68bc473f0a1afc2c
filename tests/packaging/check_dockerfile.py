#!/usr/bin/env python3
"""docker/Dockerfile against nfsgw and the project's package list.

- every stage is Debian 12, and nothing but Debian packages is downloaded (no
  curl/wget/git/pip in RUN, no remote ADD, no FetchContent in the CMake project);
- the build stage installs the "build" and "libraries" packages of
  scripts/install-deps.sh (GoogleTest excepted: tests are not built);
- the binary copied from the build stage is the one the build produced, and the
  ENTRYPOINT runs it: directly, or through docker/entrypoint.sh copied to the
  ENTRYPOINT's path, which execs that binary;
- the runtime stage installs the Debian package of every shared library the
  built nfsgw needs (its DT_NEEDED entries, resolved by ldd and dpkg -S), and
  no other package but the lock service's daemons (LOCK_DAEMONS);
- it runs as a numeric non-root USER created with that uid;
- the `runtime-prebuilt` stage (an nfsgw built outside, CI's) is the same
  runtime image: built FROM the final stage's base, it copies a binary of the
  build context to the path the ENTRYPOINT runs, and is not the default target;
- CMD and HEALTHCHECK read the same config path, and the HEALTHCHECK's
  subcommand exists in nfsgw;
- VOLUME is nfsgw's default [cache] dir, EXPOSE its default nfs_port.
"""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import packaging_lib as lib  # noqa: E402

DEBIAN_12 = re.compile(r"^debian:(12|bookworm)([-.][a-z0-9.-]+)?$")
DOWNLOADERS = re.compile(r"\b(curl|wget|git\s+clone|pip3?\s+install|npm|gem\s+install|go\s+(get|install)|cargo)\b")
TEST_ONLY = {"libgtest-dev", "libgmock-dev"}
# rpcbind, rpc.statd and /etc/services: what the entry point starts for locks
# ([server] nlm_port), not libraries of nfsgw.
LOCK_DAEMONS = {"rpcbind", "nfs-common", "netbase"}
ENTRY_SCRIPT = "docker/entrypoint.sh"
DEFAULTS_TOML = '[[export]]\npath = "/x"\norigin = "nfs://origin.invalid/x"\n'


def install_deps_groups(path):
    """{group comment: [packages]} of the PKGS=( ... ) array in install-deps.sh."""
    groups, current, inside = {}, None, False
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s.startswith("PKGS=("):
                inside = True
                continue
            if not inside:
                continue
            if s == ")":
                break
            if s.startswith("#"):
                current = s.lstrip("# ").strip()
                groups.setdefault(current, [])
                continue
            groups.setdefault(current, []).extend(s.split("#")[0].split())
    return groups


def cmake_files(root):
    """The project's CMake files, outside build trees and hidden folders."""
    for d, subdirs, files in os.walk(root):
        if d == root:
            subdirs[:] = [s for s in subdirs if not s.startswith((".", "build"))]
        for f in files:
            if f == "CMakeLists.txt" or f.endswith(".cmake"):
                yield os.path.join(d, f)


def needed_packages(binary):
    """{soname: Debian package or None} for the DT_NEEDED entries of `binary`."""
    r = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)
    r = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True)
    where = dict(re.findall(r"^\s*(\S+) => (\S+)", r.stdout, re.M))
    candidates = {}  # soname -> the spellings dpkg may know its file by (merged /usr)
    for soname in needed:
        path = where.get(soname)
        if not path:
            continue
        spellings = {path, os.path.realpath(path)}
        for p in list(spellings):
            spellings.add(p[4:] if p.startswith("/usr/") else "/usr" + p)
        candidates[soname] = spellings
    owner = {}
    every = sorted(set().union(*candidates.values())) if candidates else []
    if every:
        # One call for all: dpkg prints "package: path" for the paths it knows.
        d = subprocess.run(["dpkg", "-S"] + every, capture_output=True, text=True)
        for line in d.stdout.splitlines():
            pkg, _, path = line.partition(": ")
            owner[path.strip()] = pkg.split(":")[0].split(",")[0].strip()
    out = {}
    for soname in needed:
        out[soname] = next((owner[p] for p in sorted(candidates.get(soname, ())) if p in owner), None)
    return out


def main():
    args = lib.parse_args(__doc__)
    c = lib.Checker("packaging.dockerfile")
    dockerfile = os.path.join(args.source, "docker", "Dockerfile")
    where = lib.rel(args, dockerfile)
    stages = lib.dockerfile_stages(dockerfile)
    if not c.expect(len(stages) >= 2, where, "expected a build stage and a runtime stage"):
        return c.finish()
    names = {s["name"] for s in stages if s["name"]}
    for s in stages:
        c.expect(bool(DEBIAN_12.match(s["from"])) or s["from"] in names, f"{where}:{s['line']}",
                 f"FROM {s['from']}: every stage must be Debian 12 (debian:12 or debian:bookworm)")

    # Nothing but Debian packages is downloaded.
    for s in stages:
        for ln, ins, arg in s["instructions"]:
            if ins == "ADD":
                c.expect(not re.search(r"(https?|git)://|\.git\b", arg), f"{where}:{ln}",
                         f"ADD {arg}: downloads something; only Debian packages may be fetched")
            if ins == "RUN":
                m = DOWNLOADERS.search(arg)
                c.expect(m is None, f"{where}:{ln}",
                         f"RUN uses {m.group(0) if m else ''}: only Debian packages (apt-get) may be fetched")
    for cm in cmake_files(args.source):
        with open(cm) as f:
            text = f.read()
        m = re.search(r"FetchContent|ExternalProject_Add|file\s*\(\s*DOWNLOAD", text)
        c.expect(m is None, lib.rel(args, cm),
                 f"{m.group(0) if m else ''}: the image build must download nothing but Debian packages")

    # The build stage has the project's build and library packages.
    build = stages[0]
    build_pkgs = set()
    for _, ins, arg in build["instructions"]:
        if ins == "RUN":
            build_pkgs.update(lib.apt_packages(arg))
    deps = install_deps_groups(os.path.join(args.source, "scripts", "install-deps.sh"))
    wanted = set()
    for group, pkgs in deps.items():
        if group and (group.startswith("build") or group.startswith("libraries")):
            wanted.update(pkgs)
    c.expect(bool(wanted), "scripts/install-deps.sh", "no \"# build\" or \"# libraries\" group found in PKGS")
    missing = sorted(wanted - TEST_ONLY - build_pkgs)
    c.expect(not missing, where, f"the build stage does not install {', '.join(missing)} "
                                 "(scripts/install-deps.sh needs them to build nfsgw)")

    # The binary built is the binary copied and run.
    build_dir = None
    for _, ins, arg in build["instructions"]:
        if ins == "RUN" and "cmake" in arg:
            m = re.search(r"-B\s+(\S+)", arg)
            if m:
                build_dir = m.group(1)
            c.expect(re.search(r"--target\s+nfsgw\b", arg) is not None or "--build" not in arg, where,
                     "the build stage must build the nfsgw target")
    run = lib.effective_stage(stages, stages[-1])
    copied = None
    for ln, ins, arg in run["instructions"]:
        if ins == "COPY" and "--from=" in arg:
            parts = arg.split()
            src, dst = parts[-2], parts[-1]
            copied = dst
            c.expect(build_dir is not None and os.path.normpath(src) == os.path.normpath(f"{build_dir}/nfsgw"),
                     f"{where}:{ln}", f"COPY {src}: the build stage puts nfsgw in {build_dir}/nfsgw")
    entry, cmd = lib.image_command(dockerfile)
    runs = entry[0] if entry else None
    for ln, ins, arg in run["instructions"]:
        parts = arg.split()
        if runs and ins == "COPY" and "--from=" not in arg and parts[-1] == runs and parts[0] == ENTRY_SCRIPT:
            with open(os.path.join(args.source, ENTRY_SCRIPT)) as f:
                script = f.read()
            execs = re.search(rf"^NFSGW={re.escape(copied or '')}$", script, re.M) and 'exec "$NFSGW" "$@"' in script
            c.expect(bool(execs), f"{where}:{ln}", f"{ENTRY_SCRIPT} does not exec {copied} with its arguments")
            runs = copied if execs else runs
    c.expect(runs is not None and runs == copied, where,
             f"ENTRYPOINT {entry} does not run the copied binary {copied}")

    # The prebuilt target: the final image's base with a binary from the context.
    prebuilt = next((s for s in stages if s["name"] == "runtime-prebuilt"), None)
    if c.expect(prebuilt is not None, where, "no `runtime-prebuilt` stage (CI builds the image around its nfsgw)"):
        pw = f"{where}:{prebuilt['line']}"
        c.expect(prebuilt is not stages[-1], pw, "runtime-prebuilt must not be the last stage: "
                                                 "`docker build` with no --target must build nfsgw from source")
        chain = lib.effective_stage(stages, prebuilt)["chain"]
        c.expect(len(chain) >= 2 and len(run["chain"]) >= 2 and chain[-2] == run["chain"][-2], pw,
                 f"runtime-prebuilt is built FROM {prebuilt['from']}, not the runtime's base "
                 f"{run['chain'][-2] if len(run['chain']) >= 2 else None}: the two images would differ")
        dests = [arg.split()[-1] for _, ins, arg in prebuilt["instructions"] if ins == "COPY" and "--from=" not in arg]
        c.expect(copied is not None and dests == [copied], pw,
                 f"runtime-prebuilt copies to {dests}, not to {copied} (where the runtime stage puts nfsgw)")

    # Runtime libraries: every DT_NEEDED library's package is installed.
    runtime_pkgs = set()
    for _, ins, arg in run["instructions"]:
        if ins == "RUN":
            runtime_pkgs.update(lib.apt_packages(arg))
    if shutil.which("dpkg") and shutil.which("readelf") and shutil.which("ldd"):
        used = set()
        for soname, pkg in sorted(needed_packages(args.nfsgw).items()):
            if c.expect(pkg is not None, where, f"cannot tell which Debian package holds {soname}"):
                base = pkg.split(":")[0]
                used.add(base)
                c.expect(base in runtime_pkgs or base == "libc6", where,
                         f"the runtime stage does not install {base}, which holds {soname} (needed by nfsgw)")
        for extra in sorted(runtime_pkgs - used - LOCK_DAEMONS):
            c.expect(False, where, f"the runtime stage installs {extra}, which holds no library nfsgw needs")
    else:
        print("note: dpkg, readelf or ldd missing: runtime libraries not compared")

    # A non-root user with a fixed id, created in the image.
    uid, gid = lib.image_user(dockerfile)
    c.expect(uid is not None and uid.isdigit() and uid != "0", where,
             f"USER {uid}: must be a numeric non-root uid (Kubernetes' runAsNonRoot checks numbers)")
    run_text = " ".join(arg for _, ins, arg in run["instructions"] if ins == "RUN")
    c.expect(re.search(rf"useradd\b[^&;]*--uid\s+{uid}\b", run_text or "") is not None, where,
             f"no `useradd --uid {uid}` creates the USER")
    if gid:
        c.expect(re.search(rf"groupadd\b[^&;]*--gid\s+{gid}\b", run_text) is not None, where,
                 f"no `groupadd --gid {gid}` creates the USER's group")

    # Config path: CMD and HEALTHCHECK agree; the HEALTHCHECK's subcommand exists.
    config_path = lib.config_arg(cmd)
    c.expect(config_path is not None, where, f"CMD {cmd} gives no --config")
    health = None
    for ln, ins, arg in run["instructions"]:
        if ins == "HEALTHCHECK":
            m = re.search(r"\bCMD\s+(.*)$", arg)
            health = lib.exec_form(m.group(1)) if m else None
    if c.expect(health is not None, where, "no HEALTHCHECK"):
        c.expect(health[0] == copied, where, f"HEALTHCHECK runs {health[0]}, not {copied}")
        c.expect(lib.config_arg(health) == config_path, where,
                 f"HEALTHCHECK reads {lib.config_arg(health)} but nfsgw is started with {config_path}")
        sub = health[1] if len(health) > 1 else ""
        c.expect(sub in lib.nfsgw_subcommands(args), where, f"HEALTHCHECK uses `nfsgw {sub}`, which nfsgw does not have")

    # The volume is nfsgw's default cache dir, owned by the user; EXPOSE its default port.
    defaults = lib.NfsgwConfig(c, args, "nfsgw defaults", DEFAULTS_TOML)
    if defaults.values:
        cache_dir = defaults.cache["dir"]
        volumes = []
        ports = []
        for _, ins, arg in run["instructions"]:
            if ins == "VOLUME":
                volumes += lib.exec_form(arg)
            if ins == "EXPOSE":
                ports += [int(p.split("/")[0]) for p in arg.split()]
        c.expect(cache_dir in volumes, where, f"VOLUME {volumes} does not hold nfsgw's default [cache] dir {cache_dir}")
        c.expect(re.search(rf"install -d -o \S+ -g \S+ -m 0700 {re.escape(cache_dir)}\b", run_text) is not None,
                 where, f"{cache_dir} must be created owned by the user, mode 0700 (a named volume copies it)")
        c.expect(defaults.server["nfs_port"] in ports, where,
                 f"EXPOSE {ports} does not include nfsgw's default nfs_port {defaults.server['nfs_port']}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

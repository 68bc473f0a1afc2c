#!/usr/bin/env python3
"""docker/compose/compose.yaml against the nfsgw config it mounts, the image and
the demo origin's ganesha.conf.

nfsgw service:
- it is built from docker/Dockerfile and started with the image's --config path;
- a read-only bind mount puts a config file at that path; nfsgw accepts it;
- a named volume is mounted at the config's [cache] dir, and the secret file
  lies inside it;
- every port nfsgw listens on is published, and nothing else; the sysctl
  net.ipv4.ip_unprivileged_port_start lets it bind reserved source ports
  towards the origin (libnfs) and any listening port below 1024;
- it drops every capability, runs as the image's user, and its memory limit
  is at least 2 x memory_mb + 256 MiB;
- the config's clients admit the compose network it is on (its subnet);
- register_rpcbind is off (the image has no rpcbind).
origin service:
- each export's origin URL names a compose service on the same network, with
  ganesha.conf's NFS_Port, MNT_Port and Path; ganesha listens beyond loopback;
- the exported Path is a volume (the VFS FSAL needs file handles, which the
  overlay root file system does not give); the healthcheck probes those ports;
- the origin image installs ganesha.conf where its entrypoint reads it.
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import packaging_lib as lib  # noqa: E402


def ganesha_settings(path):
    with open(path) as f:
        text = re.sub(r"#.*", "", f.read())
    out = {}
    for key in ("NFS_Port", "MNT_Port", "Path", "Bind_addr"):
        m = re.search(rf"\b{key}\s*=\s*\"?([^\";]+)\"?\s*;", text)
        out[key] = m.group(1).strip() if m else None
    return out


def volume_entries(service):
    """[(type, source, target, read_only)] from short or long volume syntax."""
    out = []
    for v in service.get("volumes", []) or []:
        if isinstance(v, str):
            parts = v.split(":")
            src, tgt = parts[0], parts[1] if len(parts) > 1 else parts[0]
            ro = len(parts) > 2 and "ro" in parts[2].split(",")
            kind = "bind" if src.startswith((".", "/", "~")) else "volume"
            out.append((kind, src, tgt, ro))
        else:
            out.append((v.get("type"), v.get("source"), v.get("target"), bool(v.get("read_only"))))
    return out


def container_ports(service):
    out = []
    for p in service.get("ports", []) or []:
        if isinstance(p, dict):
            out.append(int(p["target"]))
        else:
            spec = str(p).split("/")[0]
            out.append(int(spec.split(":")[-1]))
    return out


def under(path, directory):
    return os.path.normpath(path) == os.path.normpath(directory) or \
        os.path.normpath(path).startswith(os.path.normpath(directory) + "/")


def main():
    args = lib.parse_args(__doc__)
    yaml = lib.require_yaml()
    c = lib.Checker("packaging.compose")
    compose_dir = os.path.join(args.source, "docker", "compose")
    compose_path = os.path.join(compose_dir, "compose.yaml")
    where = lib.rel(args, compose_path)
    with open(compose_path) as f:
        doc = yaml.safe_load(f)
    services = doc.get("services", {})
    named_volumes = set((doc.get("volumes") or {}).keys())
    networks = doc.get("networks") or {}
    dockerfile = os.path.join(args.source, "docker", "Dockerfile")
    image_uid, image_gid = lib.image_user(dockerfile)
    _, image_cmd = lib.image_command(dockerfile)

    gw = services.get("nfsgw")
    if not c.expect(gw is not None, where, "no service `nfsgw`"):
        return c.finish()
    w = f"{where}: services.nfsgw"
    b = gw.get("build") or {}
    built = os.path.normpath(os.path.join(compose_dir, b.get("context", "."), b.get("dockerfile", "Dockerfile")))
    c.expect(built == os.path.normpath(dockerfile), w, f"built from {lib.rel(args, built)}, not docker/Dockerfile")
    command = gw.get("command") or image_cmd
    config_path = lib.config_arg(command)
    c.expect(config_path == lib.config_arg(image_cmd), w,
             f"started with --config {config_path}; the image's CMD and HEALTHCHECK use {lib.config_arg(image_cmd)}")
    vols = volume_entries(gw)
    cfg = None
    binds = [v for v in vols if v[2] == config_path]
    if c.expect(len(binds) == 1, w, f"no volume puts a config file at {config_path} (where nfsgw reads it)"):
        kind, src, _, ro = binds[0]
        c.expect(kind == "bind" and ro, w, f"{config_path} must be a read-only bind mount of a file")
        cfg_file = os.path.normpath(os.path.join(compose_dir, src))
        if c.expect(os.path.isfile(cfg_file), w, f"the config {src} does not exist"):
            cfg = lib.load_config_file(c, args, cfg_file)
    c.expect(gw.get("cap_drop") == ["ALL"], w, "must drop every capability (cap_drop: [ALL])")
    user = str(gw.get("user", f"{image_uid}:{image_gid}"))
    c.expect(user.split(":")[0] == image_uid, w, f"runs as {user}, not the image's user {image_uid}")
    c.expect(gw.get("read_only") is True, w, "the root file system should be read-only (read_only: true)")

    if cfg is not None and cfg.values:
        cw = cfg.where
        # The cache: a named volume at [cache] dir, the secret inside a mount.
        cache_dir = cfg.cache["dir"]
        at_cache = [v for v in vols if v[2] == cache_dir]
        if c.expect(len(at_cache) == 1, w, f"no volume is mounted at the config's [cache] dir {cache_dir}"):
            kind, src, _, ro = at_cache[0]
            c.expect(kind == "volume" and src in named_volumes, w,
                     f"the cache at {cache_dir} must be a named volume declared under `volumes:` (is {kind} {src})")
            c.expect(not ro, w, f"the cache volume at {cache_dir} must be writable")
        secret = cfg.cache["secret_file"]
        c.expect(any(under(secret, v[2]) for v in vols), w,
                 f"[cache] secret_file {secret} is on no volume: a new container would make a new secret")
        # Ports: published exactly as nfsgw listens.
        listen = cfg.listen_ports()
        published = set(container_ports(gw))
        c.expect(published == listen, w,
                 f"publishes container ports {sorted(published)} but {cw} listens on {sorted(listen)}")
        c.expect(cfg.server["listen"] in ("0.0.0.0", "::"), cw,
                 f"listen = {cfg.server['listen']}: published ports reach only a wildcard address in a container")
        low = min(min(listen), lib.LIBNFS_RESERVED_LOW)
        sysctls = gw.get("sysctls") or {}
        if isinstance(sysctls, list):  # the list form, ["key=value"]: podman-compose 1.0 reads only this one
            sysctls = dict(item.partition("=")[::2] for item in sysctls)
        sysctl = sysctls.get("net.ipv4.ip_unprivileged_port_start")
        c.expect(sysctl is not None and int(sysctl) <= low, w,
                 f"sysctl net.ipv4.ip_unprivileged_port_start is {sysctl}, must be <= {low}: nfsgw (non-root, "
                 f"no capabilities) binds reserved source ports from {lib.LIBNFS_RESERVED_LOW} towards the "
                 f"origin and listens on {sorted(listen)} (Docker gives no ambient capabilities)")
        c.expect(cfg.server["register_rpcbind"] is False, cw,
                 "register_rpcbind must be false: the image has no rpcbind")
        # Memory.
        limit = gw.get("mem_limit")
        need = lib.min_memory_bytes(cfg.cache["memory_mb"])
        if c.expect(limit is not None, w, "no mem_limit"):
            c.expect(lib.docker_memory_bytes(limit) >= need, w,
                     f"mem_limit {limit} is below 2 x memory_mb + 256 MiB = {need >> 20} MiB "
                     f"(memory_mb = {cfg.cache['memory_mb']})")
        # Clients: the compose network's subnet.
        gw_nets = gw.get("networks") or ["default"]
        gw_nets = list(gw_nets.keys()) if isinstance(gw_nets, dict) else gw_nets
        for n in gw_nets:
            subnets = [s.get("subnet") for s in ((networks.get(n) or {}).get("ipam") or {}).get("config", [])]
            if c.expect(bool(subnets), w, f"network {n} has no fixed subnet, so `clients` cannot be checked"):
                for s in subnets:
                    c.expect(cfg.admits(s), cw, f"clients do not admit network {n} ({s}), where the host's clients come from")

        # The origin(s).
        for i, e in enumerate(cfg.exports):
            o = e["origin"]
            ew = f"{cw}: export[{i}].origin"
            svc = services.get(o["host"])
            if not c.expect(svc is not None, ew, f"host {o['host']} is not a service of {where}"):
                continue
            sw = f"{where}: services.{o['host']}"
            svc_nets = svc.get("networks") or ["default"]
            svc_nets = list(svc_nets.keys()) if isinstance(svc_nets, dict) else svc_nets
            c.expect(bool(set(svc_nets) & set(gw_nets)), sw, "shares no network with nfsgw")
            deps = gw.get("depends_on") or {}
            c.expect(o["host"] in deps, w, f"does not depend on {o['host']}")
            bld = svc.get("build", ".")
            ctx = os.path.join(compose_dir, bld.get("context", ".") if isinstance(bld, dict) else bld)
            conf = os.path.join(ctx, "ganesha.conf")
            if not c.expect(os.path.isfile(conf), sw, f"no ganesha.conf in its build context {lib.rel(args, ctx)}"):
                continue
            g = ganesha_settings(conf)
            gwhere = lib.rel(args, conf)
            c.expect(o["nfs_port"] == int(g["NFS_Port"] or 0), ew,
                     f"nfsport={o['nfs_port']} but {gwhere} has NFS_Port = {g['NFS_Port']}")
            c.expect(o["mount_port"] == int(g["MNT_Port"] or 0), ew,
                     f"mountport={o['mount_port']} but {gwhere} has MNT_Port = {g['MNT_Port']}")
            c.expect(o["path"] == g["Path"], ew, f"path {o['path']} but {gwhere} exports Path = {g['Path']}")
            c.expect(g["Bind_addr"] not in ("127.0.0.1", "::1"), gwhere,
                     f"Bind_addr = {g['Bind_addr']}: nfsgw in another container cannot reach it")
            c.expect(any(v[2] == g["Path"] and v[0] == "volume" for v in volume_entries(svc)), sw,
                     f"the exported {g['Path']} must be a volume (the VFS FSAL needs file handles)")
            c.expect("DAC_READ_SEARCH" in (svc.get("cap_add") or []), sw,
                     "needs cap_add DAC_READ_SEARCH (the VFS FSAL's open_by_handle_at)")
            hc = " ".join((svc.get("healthcheck") or {}).get("test", []))
            for key in ("NFS_Port", "MNT_Port"):
                c.expect(f"/{g[key]}" in hc, sw, f"the healthcheck does not probe {key} {g[key]}")
            with open(os.path.join(ctx, "Dockerfile")) as f:
                odf = f.read()
            with open(os.path.join(ctx, "entrypoint.sh")) as f:
                entry = f.read()
            m = re.search(r"COPY\s+ganesha\.conf\s+(\S+)", odf)
            installed = m.group(1) if m else None
            c.expect(installed is not None and re.search(rf"-f\s+{re.escape(installed)}\b", entry) is not None,
                     lib.rel(args, os.path.join(ctx, "entrypoint.sh")),
                     f"ganesha is not started with the installed config {installed}")
    return c.finish()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""docker/kubernetes/ against the nfsgw configs its ConfigMaps hold.

- kustomization.yaml lists files that exist and parse; every object is in its
  namespace; every container uses the image it sets;
- for each workload (DaemonSet, Deployment), container `nfsgw`:
  * its --config path is a key of a ConfigMap mounted at that directory, and
    nfsgw accepts that config; exec probes read the same path and use a
    subcommand nfsgw has;
  * containerPort `nfs` is the config's nfs_port, every listening port is
    declared, and tcpSocket probes hit one of them;
  * a persistent volume (PersistentVolumeClaim or hostPath, never emptyDir) is
    mounted at [cache] dir; a claim is at least 1.1 x (metadata_max_gb +
    data_max_gb) and a Deployment on one has one replica and Recreate;
  * [cache] secret_file is the kustomize Secret's key, copied with mode 0600 by
    an init container into a memory emptyDir mounted at its directory (or the
    Secret mounted there directly, with no group or other bits and no fsGroup,
    which would add them);
  * memory request = limit >= 2 x memory_mb + 256 MiB;
  * non-root as the image's uid, no privilege escalation, all capabilities
    dropped (none added); the pod's own network namespace has the
    ip_unprivileged_port_start sysctl, so libnfs binds reserved source ports
    towards the origin (and a listening port below 1024 would work);
- each Service selects exactly one workload's pods and targets a port nfsgw
  listens on; the DaemonSet's Service keeps traffic on the node (Local);
- when kubectl is installed (optional: no Debian 12 package), `kubectl
  kustomize` renders every object, the Secret with its key, and the image.
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

WORKLOADS = ("DaemonSet", "Deployment", "StatefulSet")


def resolve_port(port, container):
    if isinstance(port, int):
        return port
    for p in container.get("ports", []) or []:
        if p.get("name") == port:
            return p.get("containerPort")
    return None


def check_probe(c, w, name, probe, container, cfg, config_path, subcommands):
    if not c.expect(probe is not None, w, f"no {name}"):
        return
    if "tcpSocket" in probe:
        port = resolve_port(probe["tcpSocket"].get("port"), container)
        c.expect(port in cfg.listen_ports(), w,
                 f"{name} probes port {probe['tcpSocket'].get('port')} ({port}); nfsgw listens on {sorted(cfg.listen_ports())}")
    elif "exec" in probe:
        cmd = probe["exec"].get("command", [])
        c.expect(lib.config_arg(cmd) == config_path, w,
                 f"{name} runs {cmd} with --config {lib.config_arg(cmd)}; nfsgw runs with {config_path}")
        c.expect(len(cmd) > 1 and cmd[1] in subcommands, w, f"{name}: `nfsgw {cmd[1] if len(cmd) > 1 else ''}` does not exist")
    else:
        c.fail(w, f"{name} is neither tcpSocket nor exec")


def main():
    args = lib.parse_args(__doc__)
    yaml = lib.require_yaml()
    c = lib.Checker("packaging.kubernetes")
    kdir = os.path.join(args.source, "docker", "kubernetes")
    kpath = os.path.join(kdir, "kustomization.yaml")
    with open(kpath) as f:
        kust = yaml.safe_load(f)
    kw = lib.rel(args, kpath)
    namespace = kust.get("namespace")
    objects = []
    for res in kust.get("resources", []):
        path = os.path.join(kdir, res)
        if not c.expect(os.path.isfile(path), kw, f"resource {res} does not exist"):
            continue
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if doc:
                    objects.append((lib.rel(args, path), doc))
    listed = {os.path.basename(p) for p, _ in objects}
    for y in os.listdir(kdir):
        if y.endswith(".yaml") and y != "kustomization.yaml":
            c.expect(y in listed, kw, f"{y} is not listed under resources")
    by_kind = {}
    for where, o in objects:
        by_kind.setdefault(o.get("kind"), []).append((where, o))
        if o.get("kind") != "Namespace":
            c.expect(o.get("metadata", {}).get("namespace") == namespace, where,
                     f"{o.get('kind')} {o['metadata'].get('name')} is not in namespace {namespace}")

    # The Secret comes from kustomize's secretGenerator.
    secrets = {}
    for g in kust.get("secretGenerator", []):
        keys = set()
        for spec in g.get("files", []):
            key, _, _ = spec.partition("=")
            keys.add(key if "=" in spec else os.path.basename(spec))
        secrets[g["name"]] = keys
    c.expect((kust.get("generatorOptions") or {}).get("disableNameSuffixHash") is True, kw,
             "the Secret's name must be stable (disableNameSuffixHash) for `kubectl create secret` to match")
    image_names = {i["name"] for i in kust.get("images", [])}
    configmaps = {o["metadata"]["name"]: (w, o) for w, o in by_kind.get("ConfigMap", [])}
    claims = {o["metadata"]["name"]: (w, o) for w, o in by_kind.get("PersistentVolumeClaim", [])}
    dockerfile = os.path.join(args.source, "docker", "Dockerfile")
    image_uid, image_gid = lib.image_user(dockerfile)
    subcommands = lib.nfsgw_subcommands(args)

    workloads = [(w, o) for k in WORKLOADS for w, o in by_kind.get(k, [])]
    c.expect(any(o["kind"] == "DaemonSet" for _, o in workloads), kw, "no DaemonSet (the per-node cache)")
    c.expect(any(o["kind"] == "Deployment" for _, o in workloads), kw, "no Deployment (the shared gateway)")
    pod_ports = {}  # workload name -> (pod labels, {port name: number}, listening ports)
    for where, wl in workloads:
        name = wl["metadata"]["name"]
        w = f"{where}: {wl['kind']} {name}"
        spec = wl["spec"]
        pod = spec["template"]["spec"]
        labels = spec["template"]["metadata"].get("labels", {})
        c.expect(spec.get("selector", {}).get("matchLabels", {}).items() <= labels.items(), w,
                 "selector does not match the pod template's labels")
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        psc = pod.get("securityContext", {})
        c.expect(psc.get("runAsNonRoot") is True, w, "pod securityContext.runAsNonRoot must be true")
        c.expect(str(psc.get("runAsUser")) == image_uid, w,
                 f"runAsUser {psc.get('runAsUser')} is not the image's user {image_uid}")
        c.expect(pod.get("automountServiceAccountToken") is False, w, "nfsgw needs no API token")
        for ct in pod.get("initContainers", []) + pod.get("containers", []):
            cw = f"{w}: container {ct['name']}"
            c.expect(ct.get("image") in image_names, cw, f"image {ct.get('image')} is not set under kustomization images")
            sc = ct.get("securityContext", {})
            c.expect(sc.get("allowPrivilegeEscalation") is False, cw, "allowPrivilegeEscalation must be false")
            c.expect(sc.get("capabilities", {}).get("drop") == ["ALL"], cw, "must drop ALL capabilities")
            c.expect(sc.get("readOnlyRootFilesystem") is True, cw, "readOnlyRootFilesystem must be true")
        main_ct = [ct for ct in pod.get("containers", []) if ct["name"] == "nfsgw"]
        if not c.expect(len(main_ct) == 1, w, "no container named nfsgw"):
            continue
        ct = main_ct[0]
        cw = f"{w}: container nfsgw"
        c.expect(not ct.get("securityContext", {}).get("capabilities", {}).get("add"), cw,
                 "nfsgw needs no capability (ports below 1024 come from the sysctl)")
        mounts = {m["mountPath"]: m for m in ct.get("volumeMounts", [])}

        # The config.
        config_path = lib.config_arg(ct.get("args", []) or ct.get("command", []))
        if not c.expect(config_path is not None, cw, "no --config in args"):
            continue
        cdir, key = os.path.dirname(config_path), os.path.basename(config_path)
        m = mounts.get(cdir)
        cm_name = volumes.get(m["name"], {}).get("configMap", {}).get("name") if m else None
        if not c.expect(cm_name is not None, cw, f"no ConfigMap is mounted at {cdir}, where --config {config_path} is"):
            continue
        if not c.expect(cm_name in configmaps, cw, f"ConfigMap {cm_name} is not in the resources"):
            continue
        cm_where, cm = configmaps[cm_name]
        if not c.expect(key in cm.get("data", {}), cm_where, f"ConfigMap {cm_name} has no key {key} (--config {config_path})"):
            continue
        cfg = lib.NfsgwConfig(c, args, f"{cm_where}: data.{key}", cm["data"][key])
        if not cfg.values:
            continue
        listen = cfg.listen_ports()

        # Ports and probes.
        declared = {p.get("name"): p.get("containerPort") for p in ct.get("ports", [])}
        c.expect(declared.get("nfs") == cfg.server["nfs_port"], cw,
                 f"containerPort nfs is {declared.get('nfs')}; {cfg.where} has nfs_port = {cfg.server['nfs_port']}")
        c.expect(set(declared.values()) == listen, cw,
                 f"declares ports {sorted(declared.values())}; nfsgw listens on {sorted(listen)}")
        c.expect(cfg.server["listen"] in ("0.0.0.0", "::"), cfg.where,
                 f"listen = {cfg.server['listen']}: probes and the Service reach the pod's address")
        c.expect(cfg.server["register_rpcbind"] is False, cfg.where, "register_rpcbind must be false: the pod has no rpcbind")
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            check_probe(c, cw, probe, ct.get(probe), ct, cfg, config_path, subcommands)
        low = min(min(listen), lib.LIBNFS_RESERVED_LOW)
        sysctls = {s["name"]: s["value"] for s in psc.get("sysctls", [])}
        v = sysctls.get("net.ipv4.ip_unprivileged_port_start")
        c.expect(v is not None and int(v) <= low and not pod.get("hostNetwork"), w,
                 f"pod sysctl net.ipv4.ip_unprivileged_port_start is {v}, must be <= {low} (and no hostNetwork): "
                 f"nfsgw (uid {image_uid}, no capabilities) binds reserved source ports from "
                 f"{lib.LIBNFS_RESERVED_LOW} towards the origin and listens on {sorted(listen)}")

        # The cache volume.
        cache_dir = cfg.cache["dir"]
        m = mounts.get(cache_dir)
        if c.expect(m is not None, cw, f"nothing is mounted at [cache] dir {cache_dir} ({cfg.where})"):
            c.expect(not m.get("readOnly"), cw, f"the cache at {cache_dir} must be writable")
            vol = volumes.get(m["name"], {})
            if "persistentVolumeClaim" in vol:
                claim = vol["persistentVolumeClaim"]["claimName"]
                if c.expect(claim in claims, cw, f"claim {claim} is not in the resources"):
                    pw, pvc = claims[claim]
                    size = lib.memory_bytes(pvc["spec"]["resources"]["requests"]["storage"])
                    need = 1.1 * (cfg.cache["metadata_max_gb"] + cfg.cache["data_max_gb"]) * 2**30
                    c.expect(size >= need, pw,
                             f"{size / 2**30:.0f} GiB is less than 1.1 x (metadata_max_gb + data_max_gb) = "
                             f"{need / 2**30:.1f} GiB ({cfg.where})")
                    if "ReadWriteOnce" in pvc["spec"].get("accessModes", []) and wl["kind"] == "Deployment":
                        c.expect(spec.get("replicas", 1) == 1 and spec.get("strategy", {}).get("type") == "Recreate", w,
                                 "one ReadWriteOnce cache: replicas 1 and strategy Recreate (two nfsgw cannot share a cache)")
            elif "hostPath" in vol:
                c.expect(wl["kind"] == "DaemonSet", w, "a hostPath cache only makes sense per node (DaemonSet)")
            else:
                c.fail(cw, f"the cache at {cache_dir} is on {list(vol)}: it must persist (claim or hostPath)")
            if "hostPath" in vol:
                owner = [ic for ic in pod.get("initContainers", [])
                         if any(vm["name"] == m["name"] for vm in ic.get("volumeMounts", []))
                         and re.search(rf"chown {image_uid}:{image_gid} {re.escape(cache_dir)}", " ".join(ic.get("command", [])))]
                c.expect(bool(owner), w, f"nothing gives the hostPath cache to uid {image_uid} (fsGroup does not apply to hostPath)")
            else:
                c.expect(str(psc.get("fsGroup")) == image_gid, w, f"fsGroup must be {image_gid} so nfsgw can write the claim")

        # The handle secret.
        secret = cfg.cache["secret_file"]
        sdir, sname = os.path.dirname(secret), os.path.basename(secret)
        m = mounts.get(sdir)
        if c.expect(m is not None, cw, f"nothing is mounted at {sdir}, where [cache] secret_file {secret} is"):
            vol = volumes.get(m["name"], {})
            if "secret" in vol:
                mode = vol["secret"].get("defaultMode", 0o644)
                c.expect(mode & 0o077 == 0 and psc.get("fsGroup") is None, cw,
                         f"the Secret mounted at {sdir} must have mode 0400/0600 and no fsGroup "
                         "(nfsgw refuses a secret its group or others may read)")
                c.expect(vol["secret"].get("secretName") in secrets, cw, "the Secret is not generated by kustomization")
            elif "emptyDir" in vol:
                c.expect(vol["emptyDir"].get("medium") == "Memory", cw, "the secret's emptyDir should be in memory")
                copies = []
                for ic in pod.get("initContainers", []):
                    cmd = ic.get("command", [])
                    if cmd[:3] == ["install", "-m", "0600"] and len(cmd) == 5 and cmd[4] == secret:
                        copies.append((ic, cmd[3]))
                if c.expect(len(copies) == 1, w, f"no init container copies the Secret to {secret} with mode 0600"):
                    ic, src = copies[0]
                    iw = f"{w}: initContainer {ic['name']}"
                    imounts = {x["mountPath"]: x for x in ic.get("volumeMounts", [])}
                    c.expect(sdir in imounts and imounts[sdir]["name"] == m["name"], iw,
                             f"does not write into the volume nfsgw sees at {sdir}")
                    sm = imounts.get(os.path.dirname(src))
                    svol = volumes.get(sm["name"], {}).get("secret") if sm else None
                    if c.expect(svol is not None, iw, f"copies {src}, which is on no Secret volume"):
                        item = {i["path"]: i["key"] for i in svol.get("items", [])}.get(os.path.basename(src),
                                                                                         os.path.basename(src))
                        c.expect(item in secrets.get(svol.get("secretName"), set()), iw,
                                 f"{src} is key {item} of Secret {svol.get('secretName')}, which kustomization "
                                 f"does not generate (it has {secrets})")
                        mode = svol.get("defaultMode", 0o644)
                        c.expect(mode & 0o040 and not mode & 0o007, iw,
                                 f"the Secret's mode {oct(mode)} must be readable by the group (fsGroup) and not others")
            else:
                c.fail(cw, f"{sdir} is on {list(vol)}, not a Secret or an emptyDir filled from it")

        # Memory.
        res = ct.get("resources", {})
        req = res.get("requests", {}).get("memory")
        lim = res.get("limits", {}).get("memory")
        need = lib.min_memory_bytes(cfg.cache["memory_mb"])
        if c.expect(req is not None and lim is not None, cw, "memory request and limit are required"):
            c.expect(lib.memory_bytes(lim) >= need, cw,
                     f"memory limit {lim} is below 2 x memory_mb + 256 MiB = {need >> 20} MiB "
                     f"(memory_mb = {cfg.cache['memory_mb']} in {cfg.where})")
            c.expect(lib.memory_bytes(req) == lib.memory_bytes(lim), cw,
                     f"memory request {req} and limit {lim} should be equal (a cache should not be evicted first)")
        pod_ports[name] = (wl["kind"], labels, ct, listen)

    # Services.
    for where, svc in by_kind.get("Service", []):
        w = f"{where}: Service {svc['metadata']['name']}"
        sel = svc["spec"].get("selector", {})
        targets = [(n, v) for n, v in pod_ports.items() if sel.items() <= v[1].items()]
        if not c.expect(len(targets) == 1, w, f"selects {len(targets)} workloads' pods, not one"):
            continue
        wname, (kind, _, ct, listen) = targets[0]
        for p in svc["spec"].get("ports", []):
            port = resolve_port(p.get("targetPort", p.get("port")), ct)
            c.expect(port in listen, w, f"port {p.get('name')} targets {p.get('targetPort')} ({port}); "
                                        f"{wname}'s nfsgw listens on {sorted(listen)}")
        if kind == "DaemonSet":
            c.expect(svc["spec"].get("internalTrafficPolicy") == "Local", w,
                     "the per-node Service must keep each node's traffic on its own nfsgw (internalTrafficPolicy: Local)")
    render_with_kustomize(c, args, kdir, kw, yaml, kust, secrets, {(o["kind"], o["metadata"]["name"]) for _, o in objects})
    return c.finish()


def render_with_kustomize(c, args, kdir, kw, yaml, kust, secrets, expected):
    """When kubectl is installed (it is no Debian 12 package: optional), render the
    kustomization as `kubectl apply -k` would, with a stand-in secret file."""
    kubectl = shutil.which("kubectl")
    if os.environ.get("NFSGW_PACKAGING_NO_KUBECTL"):  # check_mutations.py: not what it mutates
        return
    if kubectl is None:
        print("note: kubectl is not installed: the kustomization was not rendered")
        return
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "k")
        shutil.copytree(kdir, copy, ignore=shutil.ignore_patterns("handle-secret"))
        for g in kust.get("secretGenerator", []):
            for spec in g.get("files", []):
                with open(os.path.join(copy, spec.partition("=")[2] or spec), "wb") as f:
                    f.write(os.urandom(32))
        r = subprocess.run([kubectl, "kustomize", copy], capture_output=True, text=True, timeout=60)
        if not c.expect(r.returncode == 0, kw, f"`kubectl kustomize` fails: {r.stderr.strip()}"):
            return
        rendered = [d for d in yaml.safe_load_all(r.stdout) if d]
    got = {(d["kind"], d["metadata"]["name"]) for d in rendered}
    c.expect(expected <= got, kw, f"kustomize renders {sorted(got)}; missing {sorted(expected - got)}")
    for name, keys in secrets.items():
        s = [d for d in rendered if d["kind"] == "Secret" and d["metadata"]["name"] == name]
        c.expect(len(s) == 1 and keys <= set((s[0].get("data") or {}).keys()), kw,
                 f"kustomize does not render Secret {name} with keys {sorted(keys)}")
    images = {f"{i.get('newName', i['name'])}:{i.get('newTag', 'latest')}" for i in kust.get("images", [])}
    for d in rendered:
        pod = d.get("spec", {}).get("template", {}).get("spec", {})
        for ct in pod.get("initContainers", []) + pod.get("containers", []):
            c.expect(ct.get("image") in images, kw,
                     f"rendered {d['kind']} {d['metadata']['name']} runs image {ct.get('image')}, not {sorted(images)}")
    print(f"kubectl kustomize rendered {len(rendered)} objects")


if __name__ == "__main__":
    sys.exit(main())

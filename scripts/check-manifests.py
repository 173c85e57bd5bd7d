#!/usr/bin/env python3
"""Checks the wiring of deploy/kubernetes against the Dockerfile: ports, probe paths, mount paths, the
non-root user, private key file modes, selectors, the kustomization's resources, and the NetworkPolicy (public
port open to all, admin port only to the monitoring namespace). When deploy/kubernetes/fleet exists, also checks
the fleet variant (lines starting `fleet:`): its pods against deployment.yaml's, no volume per domain, the store
URI from a Secret, the store key file's mode, the snapshot folder, memory against the documented per-domain
figure, the PodDisruptionBudget, Service, NetworkPolicy and the store-push Job. When deploy/kubernetes/sharded
exists, also checks the sharded variant (lines starting `sharded:`): each shard's Deployment (two or more
replicas, its index in its name, label and AASA_SERVER_SHARD, its store pod against the fleet's, its memory and
PodDisruptionBudget), the per-shard Services, the router's shards.conf against them, the router's ports, the
kustomization, and the NetworkPolicies (the shards' https only from the router); the shard count must agree
everywhere. `check-manifests.py [ROOT]` checks another checkout (the tests use it on altered copies). Prints one
line per check and a final `N passed, M failed` line."""
import pathlib
import re
import sys

import yaml

root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
docs = {}
for path in sorted((root / "deploy" / "kubernetes").glob("*.yaml")):
    for doc in yaml.safe_load_all(path.read_text()):
        if doc and "kind" in doc:
            docs.setdefault(doc["kind"], []).append(doc)

dockerfile = (root / "Dockerfile").read_text()
exposed = {int(p) for p in re.search(r"^EXPOSE (.+)$", dockerfile, re.M).group(1).split()}
env = dict(re.findall(r"(AASA_SERVER_\w+)=(\S+)", dockerfile))
user = int(re.search(r"^USER (\d+)", dockerfile, re.M).group(1))

passed = failed = 0


def check(what, ok):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + what)
    passed += ok
    failed += not ok


def admitted(policy, port_name, port_number):
    """The ingress rules of a NetworkPolicy spec admitting a container port, by name or number (a rule without
    ports admits all)."""
    return [r for r in policy.get("ingress", []) if not r.get("ports")
            or any(p.get("port") in (port_name, port_number) for p in r["ports"])]


MONITORING = {"kubernetes.io/metadata.name": "monitoring"}


def check_admin_only_from_monitoring(prefix, admin_rules):
    """The admin port is reached from the monitoring namespace, and from nothing else."""
    check(f"{prefix}NetworkPolicy admits the admin port from the monitoring namespace",
          any(peer.get("namespaceSelector", {}).get("matchLabels") == MONITORING
              for r in admin_rules for peer in r.get("from", [])))
    check(f"{prefix}NetworkPolicy admits the admin port from nowhere else",
          bool(admin_rules) and all(r.get("from") and all(
              set(peer) == {"namespaceSelector"} and peer["namespaceSelector"].get("matchLabels") == MONITORING
              for peer in r["from"]) for r in admin_rules))


deployment = docs["Deployment"][0]
spec = deployment["spec"]["template"]["spec"]
container = spec["containers"][0]
ports = {p["name"]: p["containerPort"] for p in container["ports"]}
check("container ports match the Dockerfile's EXPOSE", set(ports.values()) == exposed)
check("https port matches AASA_SERVER_HTTPS_PORT", ports.get("https") == int(env["AASA_SERVER_HTTPS_PORT"]))
check("admin port matches AASA_SERVER_ADMIN_PORT", ports.get("admin") == int(env["AASA_SERVER_ADMIN_PORT"]))
container_env = {e["name"]: e["value"] for e in container.get("env", [])}
check("admin listener reachable by the kubelet (AASA_SERVER_ADMIN_ADDRESS=0.0.0.0)",
      container_env.get("AASA_SERVER_ADMIN_ADDRESS") == "0.0.0.0")
probes = {name: container[name]["httpGet"] for name in ("startupProbe", "livenessProbe", "readinessProbe")}
check("liveness probe asks /healthz on the admin port", probes["livenessProbe"] == {"path": "/healthz", "port": "admin"})
check("readiness probe asks /readyz on the admin port", probes["readinessProbe"] == {"path": "/readyz", "port": "admin"})
check("startup probe asks /healthz on the admin port", probes["startupProbe"] == {"path": "/healthz", "port": "admin"})
volumes = {v["name"]: v for v in spec["volumes"]}
for mount in container["volumeMounts"]:
    volume = volumes.get(mount["name"])
    if mount["mountPath"] == "/tmp":
        # The credential vault's folder (serve --credential-vault, default TMPDIR or /tmp): checked below.
        continue
    if mount["mountPath"].startswith(env["AASA_SERVER_CONFIG"] + "/"):
        check(f"{mount['mountPath']} is a ConfigMap under AASA_SERVER_CONFIG", volume is not None and "configMap" in volume)
    elif mount["mountPath"].startswith(env["AASA_SERVER_CERTS"] + "/"):
        items = {i["key"]: i["path"] for i in (volume or {}).get("secret", {}).get("items", [])}
        check(f"{mount['mountPath']} maps tls.crt/tls.key to fullchain.pem/privkey.pem",
              items == {"tls.crt": "fullchain.pem", "tls.key": "privkey.pem"})
        # Secret files belong to root; with fsGroup the kubelet gives them to that group and adds group read
        # (mode | 0440). aasa-server warns about a key others can read, or a group it does not run with can.
        secret = (volume or {}).get("secret", {})
        key_item = next((i for i in secret.get("items", []) if i["path"] == "privkey.pem"), {})
        mode = key_item.get("mode", secret.get("defaultMode", 0o644))
        fs_group = spec["securityContext"].get("fsGroup")
        effective = mode | 0o440 if fs_group is not None else mode
        check(f"{mount['mountPath']}/privkey.pem (mode {effective:04o}) gives others nothing", effective & 0o007 == 0)
        check(f"{mount['mountPath']}/privkey.pem is readable by the non-root user through fsGroup, and only read",
              fs_group is not None and effective & 0o040 != 0 and effective & 0o022 == 0
              and fs_group == spec["securityContext"].get("runAsGroup", fs_group))
    else:
        check(f"{mount['mountPath']} is under the config or certs folder", False)
    check(f"{mount['mountPath']} is read-only", mount.get("readOnly") is True)
check("the credential vault (/tmp) is a writable emptyDir (the root filesystem is read-only)",
      any(m["mountPath"] == "/tmp" and m.get("readOnly") is not True and "emptyDir" in volumes.get(m["name"], {})
          for m in container["volumeMounts"]))
check("pods run as the image's non-root user", spec["securityContext"].get("runAsUser") == user
      and spec["securityContext"].get("runAsNonRoot") is True)
check("several replicas", deployment["spec"]["replicas"] >= 2)
labels = deployment["spec"]["selector"]["matchLabels"]
service = docs["Service"][0]
check("Service selects the Deployment's pods", service["spec"]["selector"] == labels)
check("Service exposes https only, to the https container port",
      [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [(443, "https")])
check("PodDisruptionBudget selects the Deployment's pods", docs["PodDisruptionBudget"][0]["spec"]["selector"]["matchLabels"] == labels)
target = docs["HorizontalPodAutoscaler"][0]["spec"]["scaleTargetRef"]
check("HorizontalPodAutoscaler scales the Deployment", target["kind"] == "Deployment"
      and target["name"] == deployment["metadata"]["name"])
kustomization = yaml.safe_load((root / "deploy" / "kubernetes" / "kustomization.yaml").read_text())
manifests = {p.name for p in (root / "deploy" / "kubernetes").glob("*.yaml")} - {"kustomization.yaml",
                                                                                  "configmaps.example.yaml"}
check("kustomization lists every manifest", set(kustomization["resources"]) == manifests)

policies = docs.get("NetworkPolicy", [])
check("a NetworkPolicy exists", len(policies) == 1)
if policies:
    policy = policies[0]["spec"]
    check("NetworkPolicy selects the Deployment's pods", policy["podSelector"].get("matchLabels") == labels)
    check("NetworkPolicy governs ingress", "Ingress" in policy.get("policyTypes", []))
    https_rules = admitted(policy, "https", ports.get("https"))
    check("NetworkPolicy admits the https port from anywhere", any(not r.get("from") for r in https_rules))
    check_admin_only_from_monitoring("", admitted(policy, "admin", ports.get("admin")))

def nginx_parse(text):
    """An nginx configuration as a list of (name, arguments, block), block None for a simple directive."""
    tokens = [t for t in re.findall(r"""#[^\n]*|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[{};]|[^\s{};"']+""", text)
              if not t.startswith("#")]
    stack, words = [[]], []
    for token in tokens:
        if token in ("{", ";"):
            if not words:
                raise ValueError(f"'{token}' without a directive")
            directive = (words[0], words[1:], [] if token == "{" else None)
            stack[-1].append(directive)
            if token == "{":
                stack.append(directive[2])
            words = []
        elif token == "}":
            if words or len(stack) == 1:
                raise ValueError("unexpected '}'")
            stack.pop()
        else:
            words.append(token[1:-1] if token[0] in "\"'" else token)
    if words or len(stack) != 1:
        raise ValueError("unterminated directive or block")
    return stack[0]


def directives(block, name):
    return [d for d in block or [] if d[0] == name]


def container_port(container, port):
    """A port given by name or number, as a number (None when the container has no such port)."""
    numbers = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
    return numbers.get(port) if isinstance(port, str) else port if port in numbers.values() else None


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())




def load(folder, names=None):
    """The documents of a folder's YAML files (or of the files named), by kind."""
    found = {}
    for path in sorted(folder.glob("*.yaml")):
        if names is None or path.name in names:
            for doc in yaml.safe_load_all(path.read_text()):
                if doc and "kind" in doc:
                    found.setdefault(doc["kind"], []).append(doc)
    return found


def mebibytes(quantity):
    """A Kubernetes memory quantity (`1Gi`, `1536Mi`, `512M`, bytes) in MiB; None when it is not one."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?", str(quantity or ""))
    if not match:
        return None
    factor = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
              "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}[match.group(2)]
    return float(match.group(1)) * factor / 2**20


# The documented memory per domain (docs/operations.md#running-a-fleet): a request of at least 10 MiB per 1,000
# domains (927 MiB RSS measured at 100,000 domains, rounded up) and at least 128 MiB (the process takes about 25 MiB
# before its first domain, which the per-domain figure covers only from about 25,000 domains on), and a limit of at
# least 1.5 × the request.
MEBIBYTES_PER_THOUSAND_DOMAINS = 10
MINIMUM_REQUEST_MEBIBYTES = 128
LIMIT_OVER_REQUEST = 1.5


def check_memory(prefix, workload, container):
    """The memory request and limit follow the workload's aasa-server/sized-for-domains annotation."""
    resources = container.get("resources", {})
    request = mebibytes(resources.get("requests", {}).get("memory"))
    limit = mebibytes(resources.get("limits", {}).get("memory"))
    domains = str(workload.get("metadata", {}).get("annotations", {}).get("aasa-server/sized-for-domains", ""))
    check(f"{prefix}memory limit ≥ request", request is not None and limit is not None and limit >= request)
    check(f"{prefix}memory request ≥ {MEBIBYTES_PER_THOUSAND_DOMAINS} MiB per 1,000 domains of "
          f"aasa-server/sized-for-domains, and ≥ {MINIMUM_REQUEST_MEBIBYTES} MiB",
          domains.isdigit() and request is not None
          and request >= max(MINIMUM_REQUEST_MEBIBYTES, int(domains) * MEBIBYTES_PER_THOUSAND_DOMAINS / 1000))
    check(f"{prefix}memory limit ≥ {LIMIT_OVER_REQUEST} × request",
          request is not None and limit is not None and limit >= LIMIT_OVER_REQUEST * request)


def env_of(container, name):
    return next((e for e in container.get("env", []) if e.get("name") == name), None)


def mount_holding(pod_spec, container, path):
    """The mount of `container` whose folder holds `path`, with its volume: (mount, volume), or ({}, {})."""
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    mounts = [m for m in container.get("volumeMounts", [])
              if path.startswith(m.get("mountPath", "").rstrip("/") + "/")]
    mount = max(mounts, key=lambda m: len(m["mountPath"]), default={})
    return mount, volumes.get(mount.get("name"), {})


def check_credential_vault(prefix, pod_spec, container):
    """The credential vault (serve --credential-vault, default TMPDIR or /tmp) on a writable emptyDir: with the root
    filesystem read-only, the server would keep every certificate's leaf and key in its heap instead."""
    env_value = (env_of(container, "AASA_SERVER_CREDENTIAL_VAULT") or {}).get("value") or "/tmp"
    mount, volume = mount_holding(pod_spec, container, env_value.rstrip("/") + "/x")
    check(f"{prefix}the credential vault ({env_value}) is a writable emptyDir (the root filesystem is read-only)",
          "emptyDir" in volume and mount.get("readOnly") is not True)


STORE_VARIABLES = {"AASA_SERVER_STORE", "AASA_SERVER_STORE_KEY_FILE", "AASA_SERVER_STORE_CACHE",
                   "AASA_SERVER_REPLICA"}


def check_store_pod(prefix, pod_spec, container, serving=True):
    """A pod reading the store: nothing mounted per domain, the URI from a Secret, the key file from a Secret volume
    that gives others nothing, and (for a serving replica) the snapshot on a writable emptyDir and the replica's
    name from the pod's."""
    folders = (env["AASA_SERVER_CONFIG"], env["AASA_SERVER_CERTS"])
    check(f"{prefix}nothing is mounted under {' or '.join(folders)} (no volume per domain: the store replaces the "
          "folders)",
          not any(m.get("mountPath", "").rstrip("/") == f or m.get("mountPath", "").startswith(f + "/")
                  for m in container.get("volumeMounts", []) for f in folders))
    store = env_of(container, "AASA_SERVER_STORE") or {}
    reference = store.get("valueFrom", {}).get("secretKeyRef", {})
    check(f"{prefix}AASA_SERVER_STORE comes from a Secret (secretKeyRef), not a value in the manifest",
          "value" not in store and bool(reference.get("name")) and bool(reference.get("key")))

    key_file = (env_of(container, "AASA_SERVER_STORE_KEY_FILE") or {}).get("value", "")
    mount, volume = mount_holding(pod_spec, container, key_file)
    secret = volume.get("secret", {})
    relative = key_file[len(mount.get("mountPath", "").rstrip("/")) + 1:]
    items = secret.get("items")
    item = next((i for i in items or [] if i.get("path") == relative), None)
    check(f"{prefix}AASA_SERVER_STORE_KEY_FILE is a file of a Secret volume mounted read-only",
          bool(key_file) and bool(secret.get("secretName")) and mount.get("readOnly") is True
          and "subPath" not in mount and (item is not None if items is not None else "/" not in relative))
    # Secret files belong to root; with fsGroup the kubelet gives them to that group and adds group read
    # (mode | 0440). aasa-server refuses a store key file others can read, or a group it does not run with can.
    mode = (item or {}).get("mode", secret.get("defaultMode", 0o644))
    fs_group = pod_spec.get("securityContext", {}).get("fsGroup")
    effective = mode | 0o440 if fs_group is not None else mode
    check(f"{prefix}the store key file (mode {effective:04o}) gives others nothing", effective & 0o007 == 0)
    check(f"{prefix}the store key file is readable by the non-root user through fsGroup, and only read",
          fs_group is not None and effective & 0o040 != 0 and effective & 0o022 == 0
          and fs_group == pod_spec.get("securityContext", {}).get("runAsGroup", fs_group))
    if serving:
        check_credential_vault(prefix, pod_spec, container)
        cache = (env_of(container, "AASA_SERVER_STORE_CACHE") or {}).get("value", "")
        cache_mount, cache_volume = mount_holding(pod_spec, container, cache + "/")
        check(f"{prefix}AASA_SERVER_STORE_CACHE is on a writable emptyDir (the root filesystem is read-only)",
              bool(cache) and "emptyDir" in cache_volume and cache_mount.get("readOnly") is not True)
        check(f"{prefix}AASA_SERVER_STORE_CACHE is a folder below its mount, which the server makes 0700 (an emptyDir "
              "itself is writable by all, which the server refuses)",
              cache.rstrip("/") != cache_mount.get("mountPath", "").rstrip("/"))
        replica = env_of(container, "AASA_SERVER_REPLICA") or {}
        check(f"{prefix}AASA_SERVER_REPLICA is the pod's name",
              replica.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name")


def pod_of(workload):
    """(template labels, pod spec, first container) of a Deployment or Job."""
    template = workload.get("spec", {}).get("template", {})
    pod_spec = template.get("spec", {})
    return template.get("metadata", {}).get("labels", {}), pod_spec, (pod_spec.get("containers") or [{}])[0]


def budget_keeps_and_allows(budget, replicas):
    """A PodDisruptionBudget (integers only) that lets a drain take one replica while one or more stay."""
    spec = budget.get("spec", {})
    if isinstance(spec.get("minAvailable"), int):
        return 1 <= spec["minAvailable"] < replicas
    if isinstance(spec.get("maxUnavailable"), int):
        return 1 <= spec["maxUnavailable"] < replicas
    return False


probe_names = ("startupProbe", "livenessProbe", "readinessProbe")


def same_pod_aspects(prefix, reference, pods, ignored_env):
    """Every pod of `pods` (pod spec, container) has `reference`'s image, args, env (apart from `ignored_env`),
    ports, probes and security contexts."""
    aspects = [
        ("image", lambda s, c: c.get("image")),
        ("args", lambda s, c: c.get("args")),
        ("env apart from " + ", ".join(sorted(ignored_env)),
         lambda s, c: [e for e in c.get("env", []) if e.get("name") not in ignored_env]),
        ("ports", lambda s, c: c.get("ports")),
        ("probes", lambda s, c: [c.get(n) for n in probe_names]),
        ("container securityContext", lambda s, c: c.get("securityContext")),
        ("pod securityContext", lambda s, c: s.get("securityContext")),
    ]
    for aspect, value in aspects:
        check(f"{prefix}{aspect}", bool(pods) and all(value(s, c) == value(*reference) for s, c in pods))


# The fleet variant (deploy/kubernetes/fleet): replicas of `serve` on the PostgreSQL store, no volume per domain, and
# a store-push Job created once per publish (not part of the kustomization: it has a generated name).
fleet = root / "deploy" / "kubernetes" / "fleet"
fleet_pod = None
if fleet.is_dir():
    fdocs = load(fleet, {p.name for p in fleet.glob("*.yaml")} - {"store-push-job.yaml"})
    fdeployments = fdocs.get("Deployment", [])
    check("fleet: one Deployment", len(fdeployments) == 1)
    fdeployment = fdeployments[0] if len(fdeployments) == 1 else {}
    flabels, fspec, fcontainer = pod_of(fdeployment)
    fleet_pod = (fspec, fcontainer)
    fselector = fdeployment.get("spec", {}).get("selector", {}).get("matchLabels", {})
    freplicas = fdeployment.get("spec", {}).get("replicas", 1)
    check("fleet: the Deployment's selector selects its pods", selects(fselector, flabels))
    check("fleet: deployment.yaml's and the fleet's selectors select none of each other's pods",
          not selects(labels, flabels) and not selects(fselector, deployment["spec"]["template"]["metadata"]["labels"]))
    check("fleet: several replicas", freplicas >= 2)
    same_pod_aspects("fleet: pods match deployment.yaml's ", (spec, container), [fleet_pod], STORE_VARIABLES)
    check("fleet: pods run as the image's non-root user", fspec.get("securityContext", {}).get("runAsUser") == user
          and fspec.get("securityContext", {}).get("runAsNonRoot") is True)
    check_store_pod("fleet: ", fspec, fcontainer)
    check_memory("fleet: ", fdeployment, fcontainer)

    fbudgets = [b for b in fdocs.get("PodDisruptionBudget", [])
                if selects(b["spec"].get("selector", {}).get("matchLabels"), flabels)]
    check("fleet: a PodDisruptionBudget selects the fleet's pods", len(fbudgets) == 1)
    check("fleet: the PodDisruptionBudget lets a drain take a replica and keeps the others",
          len(fbudgets) == 1 and budget_keeps_and_allows(fbudgets[0], freplicas))
    fservices = fdocs.get("Service", [])
    check("fleet: one Service, selecting the fleet's pods",
          len(fservices) == 1 and fservices[0]["spec"].get("selector") == fselector)
    check("fleet: Service exposes https only, to the https container port",
          len(fservices) == 1 and [(p.get("port"), p.get("targetPort")) for p in fservices[0]["spec"]["ports"]]
          == [(443, "https")])
    fpolicies = [p["spec"] for p in fdocs.get("NetworkPolicy", [])
                 if p["spec"].get("podSelector", {}).get("matchLabels") == fselector]
    check("fleet: a NetworkPolicy selects the fleet's pods and governs ingress",
          len(fpolicies) == 1 and "Ingress" in fpolicies[0].get("policyTypes", []))
    fpolicy = fpolicies[0] if len(fpolicies) == 1 else {}
    fports = {p["name"]: p["containerPort"] for p in fcontainer.get("ports", [])}
    check("fleet: NetworkPolicy admits the https port from anywhere",
          any(not r.get("from") for r in admitted(fpolicy, "https", fports.get("https"))))
    check_admin_only_from_monitoring("fleet: ", admitted(fpolicy, "admin", fports.get("admin")))
    fkustomization = yaml.safe_load((fleet / "kustomization.yaml").read_text()) or {}
    check("fleet: kustomization lists every manifest in fleet/ but the store-push Job",
          set(fkustomization.get("resources", [])) == {p.name for p in fleet.glob("*.yaml")}
          - {"kustomization.yaml", "store-push-job.yaml"})

    # The store-push Job: `store push --prune` of the folders its init container fills, with the replicas' Secrets.
    job_path = fleet / "store-push-job.yaml"
    jobs = load(fleet, {"store-push-job.yaml"}).get("Job", []) if job_path.is_file() else []
    check("fleet: store-push-job.yaml holds one Job, named by generateName (one Job per publish)",
          len(jobs) == 1 and "generateName" in jobs[0].get("metadata", {})
          and "name" not in jobs[0].get("metadata", {}))
    job = jobs[0] if len(jobs) == 1 else {}
    _, jspec, jcontainer = pod_of(job)
    jargs = jcontainer.get("args", [])

    def argument(flag):
        return jargs[jargs.index(flag) + 1] if flag in jargs[:-1] else None

    check("fleet: the Job runs `store push --prune` with --config and --certs",
          jargs[:2] == ["store", "push"] and "--prune" in jargs
          and argument("--config") is not None and argument("--certs") is not None)
    filled = {m.get("name") for c in jspec.get("initContainers", []) for m in c.get("volumeMounts", [])
              if m.get("readOnly") is not True}
    check("fleet: the Job's --config and --certs are on a volume its init container writes",
          all(mount_holding(jspec, jcontainer, (argument(f) or "") + "/")[0].get("name") in filled
              for f in ("--config", "--certs")))
    check("fleet: the Job runs the Deployment's image", jcontainer.get("image") == fcontainer.get("image"))
    check("fleet: the Job reads the store URI from the Deployment's Secret",
          (env_of(jcontainer, "AASA_SERVER_STORE") or {}).get("valueFrom")
          == (env_of(fcontainer, "AASA_SERVER_STORE") or {}).get("valueFrom"))
    jkey, fkey = (mount_holding(s, c, (env_of(c, "AASA_SERVER_STORE_KEY_FILE") or {}).get("value", ""))[1]
                  .get("secret", {}).get("secretName") for s, c in ((jspec, jcontainer), (fspec, fcontainer)))
    check("fleet: the Job seals keys with the Deployment's store key Secret", jkey is not None and jkey == fkey)
    check_store_pod("fleet: the Job: ", jspec, jcontainer, serving=False)
    check("fleet: the Job runs as the image's non-root user, and is not restarted in place",
          jspec.get("securityContext", {}).get("runAsUser") == user
          and jspec.get("securityContext", {}).get("runAsNonRoot") is True and jspec.get("restartPolicy") == "Never")
    jmemory = jcontainer.get("resources", {})
    check("fleet: the Job's memory limit ≥ request",
          None not in (mebibytes(jmemory.get("requests", {}).get("memory")),
                       mebibytes(jmemory.get("limits", {}).get("memory")))
          and mebibytes(jmemory["limits"]["memory"]) >= mebibytes(jmemory["requests"]["memory"]))

# The sharded variant (deploy/kubernetes/sharded): one Deployment of two or more replicas per shard,
# aasa-server-shard-<i>, reading the store as the fleet does; one Service per shard selecting its replicas; and an
# nginx router whose shards.conf sends each SNI name to its shard's Service.
sharded = root / "deploy" / "kubernetes" / "sharded"
SHARD_LABEL = "aasa-server/shard"

if sharded.is_dir():
    sdocs = load(sharded)
    services = {s["metadata"]["name"]: s for s in sdocs.get("Service", [])}
    shard_deployments = {}
    routers = []
    for workload in sdocs.get("Deployment", []):
        match = re.fullmatch(r"aasa-server-shard-(\d+)", workload["metadata"]["name"])
        if match:
            shard_deployments[int(match.group(1))] = workload
        else:
            routers.append(workload)
    count = len(shard_deployments)
    router = routers[0] if len(routers) == 1 else {}
    router_labels = router.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
    router_selector = router.get("spec", {}).get("selector", {}).get("matchLabels", {})
    router_spec = router.get("spec", {}).get("template", {}).get("spec", {})
    router_container = (router_spec.get("containers") or [{}])[0]
    check("sharded: shard Deployments aasa-server-shard-0 to aasa-server-shard-<N-1>, N ≥ 2, and one router "
          "Deployment", count >= 2 and sorted(shard_deployments) == list(range(count)) and len(routers) == 1)
    shards = {i: (w,) + pod_of(w) for i, w in sorted(shard_deployments.items())}
    all_shard_labels = [labels_ for _, labels_, _, _ in shards.values()]
    check("sharded: deployment.yaml's selector selects neither the shard nor the router pods",
          not any(selects(labels, l) for l in all_shard_labels) and not selects(labels, router_labels))

    # Each shard: ≥ 2 replicas, its index everywhere (name, label, selector, AASA_SERVER_SHARD=i/N), a store pod.
    for i, (workload, pod_labels, pod_spec, pod_container) in shards.items():
        prefix = f"sharded: shard {i}: "
        selector = workload.get("spec", {}).get("selector", {}).get("matchLabels", {})
        check(f"{prefix}two or more replicas (its domains stay served while one is away)",
              workload.get("spec", {}).get("replicas", 1) >= 2)
        check(f"{prefix}its selector and pod labels carry {SHARD_LABEL}: \"{i}\", and select no other shard's pods",
              selector.get(SHARD_LABEL) == str(i) and pod_labels.get(SHARD_LABEL) == str(i)
              and selects(selector, pod_labels)
              and not any(selects(selector, l) for j, (_, l, _, _) in shards.items() if j != i))
        shard_env = env_of(pod_container, "AASA_SERVER_SHARD") or {}
        check(f"{prefix}AASA_SERVER_SHARD is {i}/{count} (its index of the shard Deployments' count)",
              "valueFrom" not in shard_env and str(shard_env.get("value")) == f"{i}/{count}")
        check_store_pod(prefix, pod_spec, pod_container)
        check_memory(prefix, workload, pod_container)
        budgets = [b for b in sdocs.get("PodDisruptionBudget", [])
                   if any(selects(b["spec"].get("selector", {}).get("matchLabels"), l) for l in all_shard_labels)
                   and selects(b["spec"].get("selector", {}).get("matchLabels"), pod_labels)]
        check(f"{prefix}one PodDisruptionBudget selects exactly its replicas, keeps one and lets a drain take one",
              len(budgets) == 1
              and not any(selects(budgets[0]["spec"]["selector"]["matchLabels"], l)
                          for j, (_, l, _, _) in shards.items() if j != i)
              and budget_keeps_and_allows(budgets[0], workload.get("spec", {}).get("replicas", 1)))
    same_pod_aspects("sharded: shard pods match fleet/deployment.yaml's ", fleet_pod or ({}, {}),
                     [(s, c) for _, _, s, c in shards.values()], STORE_VARIABLES | {"AASA_SERVER_SHARD"})
    check("sharded: shard pods have fleet/deployment.yaml's volumes and mounts",
          fleet_pod is not None and bool(shards) and all(
              s.get("volumes") == fleet_pod[0].get("volumes")
              and c.get("volumeMounts") == fleet_pod[1].get("volumeMounts") for _, _, s, c in shards.values()))

    # The per-shard Services: aasa-server-shard-<i> selects the replicas of shard i and no other pod, and has a
    # cluster IP, which stays the same whether or not a replica is ready (nginx resolves once).
    shard_services = {name: s.get("spec", {}) for name, s in services.items()
                      if re.fullmatch(r"aasa-server-shard-\d+", name)}
    check("sharded: one Service per shard Deployment, of the same name",
          sorted(shard_services) == sorted(w["metadata"]["name"] for w in shard_deployments.values()))
    first_container = next(iter(shards.values()))[3] if shards else {}
    shard_https = container_port(first_container, "https")
    check("sharded: each shard's Service selects all of its replicas and nothing else (no other shard, no router)",
          bool(shard_services) and all(
              int(name.rsplit("-", 1)[1]) in shards
              and selects(s.get("selector"), shards[int(name.rsplit("-", 1)[1])][1])
              and not any(selects(s.get("selector"), l) for j, (_, l, _, _) in shards.items()
                          if j != int(name.rsplit("-", 1)[1]))
              and not selects(s.get("selector"), router_labels)
              for name, s in shard_services.items()))
    check("sharded: each shard's Service has a cluster IP (type ClusterIP, not headless)",
          bool(shard_services) and all(s.get("type", "ClusterIP") == "ClusterIP" and s.get("clusterIP") != "None"
                                       for s in shard_services.values()))
    check("sharded: each shard's Service has one port, to the shards' https port",
          bool(shard_services) and all(
              [container_port(first_container, p.get("targetPort", p.get("port"))) for p in s.get("ports", [])]
              == [shard_https] for s in shard_services.values()))

    # The kustomization: every manifest, and the router's ConfigMap from nginx.conf and shards.conf.
    skustomization = yaml.safe_load((sharded / "kustomization.yaml").read_text()) or {}
    smanifests = {p.name for p in sharded.glob("*.yaml")} - {"kustomization.yaml"}
    check("sharded: kustomization lists every manifest in sharded/",
          set(skustomization.get("resources", [])) == smanifests)
    router_volumes = {v["name"]: v for v in router_spec.get("volumes", [])}
    config_mount = next((m for m in router_container.get("volumeMounts", [])
                         if m.get("mountPath", "").rstrip("/") == "/etc/nginx"), {})
    config_map = router_volumes.get(config_mount.get("name"), {}).get("configMap", {}).get("name")
    generated = [g for g in skustomization.get("configMapGenerator", []) if g.get("name") == config_map]
    check("sharded: kustomization generates the router's /etc/nginx ConfigMap from nginx.conf and shards.conf",
          config_map is not None and len(generated) == 1
          and sorted(generated[0].get("files", [])) == ["nginx.conf", "shards.conf"]
          and all((sharded / f).is_file() for f in ("nginx.conf", "shards.conf")))

    try:
        nginx_conf = nginx_parse((sharded / "nginx.conf").read_text())
        shards_conf = nginx_parse((sharded / "shards.conf").read_text())
        parsed = True
    except (OSError, ValueError):
        nginx_conf, shards_conf, parsed = [], [], False
    check("sharded: nginx.conf and shards.conf parse", parsed)
    check("sharded: nginx.conf includes shards.conf at the top level",
          any(d[1] in (["/etc/nginx/shards.conf"], ["shards.conf"]) for d in directives(nginx_conf, "include")))
    writable = [m["mountPath"].rstrip("/") for m in router_container.get("volumeMounts", [])
                if "emptyDir" in router_volumes.get(m.get("name"), {})]
    pid = next((d[1][0] for d in directives(nginx_conf, "pid") if d[1]), "")
    check("sharded: router has a read-only root filesystem and its pid file on an emptyDir",
          router_container.get("securityContext", {}).get("readOnlyRootFilesystem") is True
          and any(pid.startswith(w + "/") for w in writable))
    check("sharded: router runs as non-root", router_spec.get("securityContext", {}).get("runAsNonRoot") is True)

    # shards.conf: upstream aasa_shard_<i> is shard i's Service, the map and split_clients send names only to them.
    streams = directives(shards_conf, "stream")
    check("sharded: shards.conf has one stream block", len(streams) == 1 and streams[0][2] is not None)
    stream = streams[0][2] if streams else []
    upstreams = {d[1][0]: d[2] for d in directives(stream, "upstream") if d[1]}
    expected = [f"aasa_shard_{i}" for i in range(count)]
    check("sharded: shards.conf has one upstream per shard Deployment, aasa_shard_0 to aasa_shard_<N-1>",
          count > 0 and sorted(upstreams) == sorted(expected) and len(directives(stream, "upstream")) == len(expected))

    def shard_service_address(name):
        """Upstream aasa_shard_<i>'s address: shard i's Service aasa-server-shard-<i>:<its port>."""
        service = f"aasa-server-shard-{name.rsplit('_', 1)[1]}"
        ports = shard_services.get(service, {}).get("ports", [])
        return f"{service}:{ports[0].get('port')}" if len(ports) == 1 else None

    check("sharded: each upstream aasa_shard_<i> is shard i's Service aasa-server-shard-<i>:<its port>",
          bool(upstreams) and all(
              re.fullmatch(r"aasa_shard_\d+", name) and shard_service_address(name) is not None
              and [d[1][:1] for d in directives(block, "server")] == [[shard_service_address(name)]]
              for name, block in upstreams.items()))
    splits = directives(stream, "split_clients")
    split_entries = [d for d in (splits[0][2] or []) if d[1]] if len(splits) == 1 else []
    check("sharded: split_clients has one entry per shard, one for each upstream",
          bool(split_entries) and len(split_entries) == count
          and sorted(d[1][0] for d in split_entries) == sorted(expected) and split_entries[-1][0] == "*")
    maps = [d for d in directives(stream, "map") if d[1][:1] == ["$ssl_preread_server_name"]]
    map_entries = {d[0]: d[1] for d in (maps[0][2] or [])} if len(maps) == 1 else {}
    split_variable = splits[0][1][1] if len(splits) == 1 and len(splits[0][1]) == 2 else None
    check("sharded: the SNI map sends its names to upstreams and any other name to split_clients",
          len(maps) == 1 and len(maps[0][1]) == 2 and map_entries.get("default") == [split_variable]
          and all(v == [] if k == "hostnames" else k == "default" or (len(v) == 1 and v[0] in upstreams)
                  for k, v in map_entries.items()))
    servers = [d[2] for d in directives(stream, "server")]
    server = servers[0] if len(servers) == 1 else []
    check("sharded: the stream server reads the SNI name and proxies to the map's upstream",
          len(servers) == 1 and [d[1] for d in directives(server, "ssl_preread")] == [["on"]]
          and len(maps) == 1 and [d[1] for d in directives(server, "proxy_pass")] == [[maps[0][1][1]]])
    listens = [d[1][0].rsplit(":", 1)[-1] for d in directives(server, "listen") if d[1]]
    listen_port = int(listens[0]) if len(listens) == 1 and listens[0].isdigit() else None
    check("sharded: shards.conf listens on the router container's port",
          listen_port is not None and listen_port in [p["containerPort"] for p in router_container.get("ports", [])])
    public = [s for s in services.values() if s["spec"].get("selector") == router_selector]
    check("sharded: public Service selects the router pods and sends 443 to shards.conf's listen port",
          len(public) == 1 and selects(router_selector, router_labels)
          and [(p.get("port"), container_port(router_container, p.get("targetPort", p.get("port"))))
               for p in public[0]["spec"].get("ports", [])] == [(443, listen_port)])
    check("sharded: router probes connect to shards.conf's listen port",
          all(container_port(router_container, router_container.get(n, {}).get("tcpSocket", {}).get("port"))
              == listen_port for n in ("livenessProbe", "readinessProbe")))
    check("sharded: several routers", router.get("spec", {}).get("replicas", 1) >= 2)
    router_budgets = [b for b in sdocs.get("PodDisruptionBudget", [])
                      if b["spec"].get("selector", {}).get("matchLabels") == router_selector]
    check("sharded: a PodDisruptionBudget selects the router pods", len(router_budgets) == 1)

    # NetworkPolicies: the shards' https only from the router, their admin port only from monitoring; the
    # router's port from anywhere.
    def spolicy(applies):
        found = [p["spec"] for p in sdocs.get("NetworkPolicy", [])
                 if applies(p["spec"].get("podSelector", {}).get("matchLabels"))]
        return found[0] if len(found) == 1 else None

    shard_policy = spolicy(lambda s: bool(shards) and all(selects(s, l) for l in all_shard_labels)
                           and not selects(s, router_labels))
    check("sharded: a NetworkPolicy selects every shard's pods and governs ingress",
          shard_policy is not None and "Ingress" in shard_policy.get("policyTypes", []))
    shard_policy = shard_policy or {}
    from_router = {"podSelector": {"matchLabels": router_selector}}
    https_rules = admitted(shard_policy, "https", shard_https)
    check("sharded: shard NetworkPolicy admits the https port from the router pods",
          any(from_router in r.get("from", []) for r in https_rules))
    check("sharded: shard NetworkPolicy admits the https port only from the router pods",
          bool(https_rules) and all(r.get("from") and all(peer == from_router for peer in r["from"])
                                    for r in https_rules))
    check_admin_only_from_monitoring(
        "sharded: shard ", admitted(shard_policy, "admin", container_port(first_container, "admin")))
    router_policy = spolicy(lambda s: s == router_selector)
    check("sharded: a NetworkPolicy selects the router pods and governs ingress",
          router_policy is not None and "Ingress" in router_policy.get("policyTypes", []))
    check("sharded: router NetworkPolicy admits its port from anywhere",
          any(not r.get("from") for r in admitted(router_policy or {}, "https", listen_port)))
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

#!/usr/bin/env python3
"""Checks the wiring of deploy/kubernetes against the Dockerfile: ports, probe paths, mount paths, the
non-root user, private key file modes, selectors, the kustomization's resources, and the NetworkPolicy (public
port open to all, admin port only to the monitoring namespace). When deploy/kubernetes/sharded exists, also
checks the sharded variant (lines starting `sharded:`): its pods against deployment.yaml's, the shard variables
and the per-pod Services against the StatefulSet, the router's shards.conf against the per-pod Services, the
router's ports, the kustomization, and the NetworkPolicies (the shards' https only from the router).
`check-manifests.py [ROOT]` checks another checkout (the tests use it on altered copies). Prints one line per
check and a final `N passed, M failed` line."""
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
# domains (927 MiB RSS measured at 100,000 domains, rounded up) and a limit of at least 1.5 × the request.
MEBIBYTES_PER_THOUSAND_DOMAINS = 10
LIMIT_OVER_REQUEST = 1.5


def check_memory(prefix, workload, container):
    """The memory request and limit follow the workload's aasa-server/sized-for-domains annotation."""
    resources = container.get("resources", {})
    request = mebibytes(resources.get("requests", {}).get("memory"))
    limit = mebibytes(resources.get("limits", {}).get("memory"))
    domains = str(workload.get("metadata", {}).get("annotations", {}).get("aasa-server/sized-for-domains", ""))
    check(f"{prefix}memory limit ≥ request", request is not None and limit is not None and limit >= request)
    check(f"{prefix}memory request ≥ {MEBIBYTES_PER_THOUSAND_DOMAINS} MiB per 1,000 domains of "
          "aasa-server/sized-for-domains",
          domains.isdigit() and request is not None
          and request >= int(domains) * MEBIBYTES_PER_THOUSAND_DOMAINS / 1000)
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
        cache = (env_of(container, "AASA_SERVER_STORE_CACHE") or {}).get("value", "")
        cache_mount, cache_volume = mount_holding(pod_spec, container, cache + "/")
        check(f"{prefix}AASA_SERVER_STORE_CACHE is on a writable emptyDir (the root filesystem is read-only)",
              bool(cache) and "emptyDir" in cache_volume and cache_mount.get("readOnly") is not True)
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

sharded = root / "deploy" / "kubernetes" / "sharded"

if sharded.is_dir():
    sdocs = {}
    for path in sorted(sharded.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and "kind" in doc:
                sdocs.setdefault(doc["kind"], []).append(doc)
    statefulset = (sdocs.get("StatefulSet") or [{}])[0]
    shard_replicas = statefulset.get("spec", {}).get("replicas", 1)
    shard_labels = statefulset.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
    shard_selector = statefulset.get("spec", {}).get("selector", {}).get("matchLabels", {})
    shard_spec = statefulset.get("spec", {}).get("template", {}).get("spec", {})
    shard_container = (shard_spec.get("containers") or [{}])[0]
    services = {s["metadata"]["name"]: s for s in sdocs.get("Service", [])}
    routers = sdocs.get("Deployment", [])
    router = routers[0] if len(routers) == 1 else {}
    router_labels = router.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
    router_selector = router.get("spec", {}).get("selector", {}).get("matchLabels", {})
    router_spec = router.get("spec", {}).get("template", {}).get("spec", {})
    router_container = (router_spec.get("containers") or [{}])[0]
    check("sharded: one StatefulSet and one router Deployment", len(sdocs.get("StatefulSet", [])) == 1
          and len(routers) == 1)
    check("sharded: deployment.yaml's selector selects neither the shard nor the router pods",
          not selects(labels, shard_labels) and not selects(labels, router_labels))

    # The shard pods are deployment.yaml's, so the two variants cannot drift apart.
    shard_variables = {"AASA_SHARD_INDEX", "AASA_SHARD_COUNT", "AASA_SERVER_SHARD"}
    probe_names = ("startupProbe", "livenessProbe", "readinessProbe")
    aspects = [
        ("image", lambda s, c: c.get("image")),
        ("args", lambda s, c: c.get("args")),
        ("env apart from the shard variables",
         lambda s, c: [e for e in c.get("env", []) if e.get("name") not in shard_variables]),
        ("ports", lambda s, c: c.get("ports")),
        ("probes", lambda s, c: [c.get(n) for n in probe_names]),
        ("volume mounts", lambda s, c: c.get("volumeMounts")),
        ("volumes", lambda s, c: s.get("volumes")),
        ("container securityContext", lambda s, c: c.get("securityContext")),
        ("pod securityContext", lambda s, c: s.get("securityContext")),
    ]
    for aspect, value in aspects:
        check(f"sharded: shard pods match deployment.yaml's {aspect}",
              value(shard_spec, shard_container) == value(spec, container))

    # The shard: AASA_SERVER_SHARD=$(index)/$(count), the index from the pod's ordinal, the count = replicas.
    shard_env = shard_container.get("env", [])
    names = [e.get("name") for e in shard_env]
    shard_value = next((e.get("value", "") for e in shard_env if e.get("name") == "AASA_SERVER_SHARD"), "")
    reference = re.fullmatch(r"\$\((\w+)\)/\$\((\w+)\)", shard_value)
    check("sharded: AASA_SERVER_SHARD is $(INDEX)/$(COUNT) of variables defined before it",
          reference is not None and all(v in names[:names.index("AASA_SERVER_SHARD")] for v in reference.groups()))
    index_variable, count_variable = reference.groups() if reference else (None, None)
    index_env = next((e for e in shard_env if e.get("name") == index_variable), {})
    count_env = next((e for e in shard_env if e.get("name") == count_variable), {})
    check("sharded: the shard index comes from the pod-index label",
          index_env.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
          == "metadata.labels['apps.kubernetes.io/pod-index']")
    check("sharded: the shard count equals the StatefulSet's replicas",
          str(count_env.get("value")) == str(shard_replicas))
    check("sharded: StatefulSet starts its shards in parallel",
          statefulset.get("spec", {}).get("podManagementPolicy") == "Parallel")

    # The headless Service, which the StatefulSet requires as its serviceName (the router does not use it).
    headless_name = statefulset.get("spec", {}).get("serviceName")
    headless = services.get(headless_name, {}).get("spec", {})
    check("sharded: StatefulSet serviceName names a Service in sharded/", headless_name in services)
    check("sharded: headless Service has clusterIP None", headless.get("clusterIP") == "None")
    check("sharded: headless Service selects the StatefulSet's pods",
          headless.get("selector") == shard_selector and selects(shard_selector, shard_labels))
    check("sharded: headless Service publishes ready pods only", headless.get("publishNotReadyAddresses") is False)
    shard_https = container_port(shard_container, "https")
    check("sharded: headless Service exposes the shards' https port",
          [(p.get("port"), container_port(shard_container, p.get("targetPort", p.get("port"))))
           for p in headless.get("ports", [])] == [(shard_https, shard_https)])
    shard_budgets = [b for b in sdocs.get("PodDisruptionBudget", [])
                     if b["spec"].get("selector", {}).get("matchLabels") == shard_selector]
    check("sharded: a PodDisruptionBudget selects the shard pods", len(shard_budgets) == 1)

    # The per-pod Services: <statefulset>-<i> selects pod i alone by the label the StatefulSet controller sets,
    # and has a cluster IP, which stays the same and exists while the pod is not ready (nginx resolves once).
    statefulset_name = statefulset.get("metadata", {}).get("name")
    pod_name_label = "statefulset.kubernetes.io/pod-name"
    pod_services = {name: s.get("spec", {}) for name, s in services.items()
                    if pod_name_label in (s.get("spec", {}).get("selector") or {})}
    pod_names = [f"{statefulset_name}-{i}" for i in range(shard_replicas)]
    check("sharded: one per-pod Service per StatefulSet replica, <statefulset>-0 to <statefulset>-<replicas-1>",
          sorted(pod_services) == sorted(pod_names))
    check("sharded: each per-pod Service selects only the shard pod of its name, by the pod-name label and the "
          "StatefulSet's selector",
          bool(pod_services) and all(
              s["selector"][pod_name_label] == name and shard_selector.items() <= s["selector"].items()
              and selects(s["selector"], {**shard_labels, pod_name_label: name})
              for name, s in pod_services.items()))
    check("sharded: each per-pod Service has a cluster IP (type ClusterIP, not headless)",
          bool(pod_services) and all(s.get("type", "ClusterIP") == "ClusterIP" and s.get("clusterIP") != "None"
                                     for s in pod_services.values()))
    check("sharded: each per-pod Service has one port, to the shards' https port",
          bool(pod_services) and all(
              [container_port(shard_container, p.get("targetPort", p.get("port"))) for p in s.get("ports", [])]
              == [shard_https] for s in pod_services.values()))

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

    # shards.conf: upstream aasa_shard_<i> is pod i, the map and split_clients send names only to them.
    streams = directives(shards_conf, "stream")
    check("sharded: shards.conf has one stream block", len(streams) == 1 and streams[0][2] is not None)
    stream = streams[0][2] if streams else []
    upstreams = {d[1][0]: d[2] for d in directives(stream, "upstream") if d[1]}
    expected = [f"aasa_shard_{i}" for i in range(shard_replicas)]
    check("sharded: shards.conf has one upstream per StatefulSet replica, aasa_shard_0 to aasa_shard_<replicas-1>",
          sorted(upstreams) == sorted(expected) and len(directives(stream, "upstream")) == len(expected))
    def pod_service_address(name):
        """Upstream aasa_shard_<i>'s address: per-pod Service <statefulset>-<i>:<its port>."""
        service = f"{statefulset_name}-{name.rsplit('_', 1)[1]}"
        ports = pod_services.get(service, {}).get("ports", [])
        return f"{service}:{ports[0].get('port')}" if len(ports) == 1 else None

    check("sharded: each upstream aasa_shard_<i> is per-pod Service <statefulset>-<i>:<its port>",
          bool(upstreams) and all(
              re.fullmatch(r"aasa_shard_\d+", name) and pod_service_address(name) is not None
              and [d[1] for d in directives(block, "server")] == [[pod_service_address(name)]]
              for name, block in upstreams.items()))
    splits = directives(stream, "split_clients")
    split_entries = [d for d in (splits[0][2] or []) if d[1]] if len(splits) == 1 else []
    check("sharded: split_clients has one entry per shard, one for each upstream",
          bool(split_entries) and len(split_entries) == shard_replicas
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
    def spolicy(selector):
        found = [p["spec"] for p in sdocs.get("NetworkPolicy", [])
                 if p["spec"].get("podSelector", {}).get("matchLabels") == selector]
        return found[0] if len(found) == 1 else None

    shard_policy = spolicy(shard_selector)
    check("sharded: a NetworkPolicy selects the shard pods and governs ingress",
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
        "sharded: shard ", admitted(shard_policy, "admin", container_port(shard_container, "admin")))
    router_policy = spolicy(router_selector)
    check("sharded: a NetworkPolicy selects the router pods and governs ingress",
          router_policy is not None and "Ingress" in router_policy.get("policyTypes", []))
    check("sharded: router NetworkPolicy admits its port from anywhere",
          any(not r.get("from") for r in admitted(router_policy or {}, "https", listen_port)))
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

#!/usr/bin/env python3
"""Checks the wiring of deploy/kubernetes against the Dockerfile: ports, probe paths, mount paths, the
non-root user, private key file modes, selectors, the kustomization's resources, and the NetworkPolicy (public
port open to all, admin port only to the monitoring namespace). `check-manifests.py [ROOT]` checks another
checkout (the tests use it on altered copies). Prints one line per check and a final `N passed, M failed`
line."""
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
    rules = policy.get("ingress", [])

    def admits(port_name, port_number):
        """The rules admitting the container port, by name or number (a rule without ports admits all)."""
        return [r for r in rules if not r.get("ports")
                or any(p.get("port") in (port_name, port_number) for p in r["ports"])]

    https_rules = admits("https", ports.get("https"))
    check("NetworkPolicy admits the https port from anywhere", any(not r.get("from") for r in https_rules))
    admin_rules = admits("admin", ports.get("admin"))
    monitoring = {"kubernetes.io/metadata.name": "monitoring"}
    check("NetworkPolicy admits the admin port from the monitoring namespace",
          any(peer.get("namespaceSelector", {}).get("matchLabels") == monitoring
              for r in admin_rules for peer in r.get("from", [])))
    check("NetworkPolicy admits the admin port from nowhere else",
          bool(admin_rules) and all(r.get("from") and all(
              set(peer) == {"namespaceSelector"} and peer["namespaceSelector"].get("matchLabels") == monitoring
              for peer in r["from"]) for r in admin_rules))
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

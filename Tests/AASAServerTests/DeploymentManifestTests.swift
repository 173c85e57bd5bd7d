import AASATestSupport
import Foundation
import Testing

/// The Kubernetes manifests are wired to the image: ports, probe paths, mount paths, user, selectors, and the
/// NetworkPolicy (scripts/check-manifests.py parses every manifest with PyYAML and compares it with the
/// Dockerfile).
@Suite struct DeploymentManifestTests {
    @Test func manifestsMatchTheDockerfile() throws {
        let output = try Command.run("python3", [RepositoryPaths.root + "/scripts/check-manifests.py"])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.contains(" passed, 0 failed"))
        #expect(output.stdout.contains("ok   NetworkPolicy admits the admin port from nowhere else"))
        #expect(output.stdout.contains("ok   fleet: nothing is mounted under /srv/site-config or /srv/certs"))
        #expect(output.stdout.contains("ok   sharded: shard 1: two or more replicas"))
        #expect(output.stdout.contains("ok   sharded: shards.conf has one upstream per shard Deployment"))
    }

    /// Policies that open the admin port too far, or close the public one, each fail the check.
    @Test(arguments: [
        (
            "    - from:\n        - namespaceSelector:\n            matchLabels: {kubernetes.io/metadata.name: monitoring}\n      ports:\n        - {port: admin, protocol: TCP}\n",
            "    - ports:\n        - {port: admin, protocol: TCP}\n", "admits the admin port from nowhere else"
        ),
        ("    - ports:\n        - {port: https, protocol: TCP}\n", "", "admits the https port from anywhere"),
        (
            "    - ports:\n        - {port: https, protocol: TCP}\n", "    - {}\n",
            "admits the admin port from nowhere else"
        ),
        (
            "matchLabels: {kubernetes.io/metadata.name: monitoring}", "matchLabels: {team: web}",
            "admits the admin port from the monitoring namespace"
        ),
    ])
    func aPolicyThatExposesTheAdminPortFails(original: String, replacement: String, failedCheck: String) throws {
        let copy = TemporaryDirectory("aasa-manifests")
        try copy.copy(RepositoryPaths.root + "/deploy", to: "deploy")
        try copy.copy(RepositoryPaths.root + "/Dockerfile", to: "Dockerfile")
        let path = copy.path + "/deploy/kubernetes/networkpolicy.yaml"
        let policy = try String(contentsOfFile: path, encoding: .utf8)
        #expect(policy.contains(original))
        try policy.replacingOccurrences(of: original, with: replacement).write(
            toFile: path, atomically: true, encoding: .utf8)
        let output = try Command.run("python3", [RepositoryPaths.root + "/scripts/check-manifests.py", copy.path])
        #expect(output.status == 1)
        #expect(output.stdout.contains("FAIL NetworkPolicy \(failedCheck)"), "\(output.stdout)")
    }

    /// A fleet variant (deploy/kubernetes/fleet) that loses what makes it a fleet fails the check: a volume per
    /// domain, a store key file others can read (in the Deployment and in the store-push Job), the store URI written
    /// in the manifest instead of taken from a Secret, a PodDisruptionBudget that selects other pods or blocks every
    /// drain, and memory below the documented per-domain figure or its limit below its request.
    @Test(arguments: [
        (
            "fleet/deployment.yaml", "            - {name: store-cache, mountPath: /var/cache/aasa-server}\n",
            "            - {name: store-cache, mountPath: /var/cache/aasa-server}\n            - {name: shop-example-config, mountPath: /srv/site-config/shop.example, readOnly: true}\n",
            "fleet: nothing is mounted under /srv/site-config or /srv/certs"
        ),
        (
            "fleet/deployment.yaml", "            defaultMode: 0440\n", "            defaultMode: 0444\n",
            "fleet: the store key file (mode 0444) gives others nothing"
        ),
        (
            "fleet/store-push-job.yaml", "            defaultMode: 0440\n", "            defaultMode: 0404\n",
            "fleet: the Job: the store key file (mode 0444) gives others nothing"
        ),
        (
            "fleet/deployment.yaml",
            "            - name: AASA_SERVER_STORE\n              valueFrom:\n                secretKeyRef: {name: aasa-server-store, key: uri}\n",
            "            - {name: AASA_SERVER_STORE, value: \"postgresql://aasa:secret@db:5432/aasa\"}\n",
            "fleet: AASA_SERVER_STORE comes from a Secret"
        ),
        (
            "fleet/poddisruptionbudget.yaml", "    matchLabels: {app.kubernetes.io/name: aasa-server-fleet}\n",
            "    matchLabels: {app.kubernetes.io/name: aasa-server}\n",
            "fleet: a PodDisruptionBudget selects the fleet's pods"
        ),
        (
            "fleet/poddisruptionbudget.yaml", "  maxUnavailable: 1\n", "  minAvailable: 3\n",
            "fleet: the PodDisruptionBudget lets a drain take a replica and keeps the others"
        ),
        (
            "fleet/deployment.yaml", "limits: {memory: 1536Mi}", "limits: {memory: 512Mi}",
            "fleet: memory limit ≥ request"
        ),
        (
            "fleet/deployment.yaml", "aasa-server/sized-for-domains: \"100000\"",
            "aasa-server/sized-for-domains: \"200000\"", "fleet: memory request ≥ 10 MiB per 1,000 domains"
        ),
    ])
    func aFleetThatLosesItsGuaranteesFails(file: String, original: String, replacement: String, failedCheck: String)
        throws
    {
        let output = try Self.checkAlteredCopy(file: file, original: original, replacement: replacement)
        #expect(output.status == 1)
        #expect(output.stdout.contains("FAIL \(failedCheck)"), "\(output.stdout)")
    }

    /// A sharded variant (deploy/kubernetes/sharded) whose parts disagree fails the check: a shard with one replica,
    /// a shard whose AASA_SERVER_SHARD is another's, a shard Service selecting every shard, fewer upstreams in the
    /// router's shards.conf than shards, shard pods that drift from the fleet's, shards whose https port is open to
    /// all instead of only to the router.
    @Test(arguments: [
        (
            "sharded/shards.yaml",
            "  # Two or more replicas of shard 1: its domains stay served while one is away.\n  replicas: 2\n",
            "  # Two or more replicas of shard 1: its domains stay served while one is away.\n  replicas: 1\n",
            "sharded: shard 1: two or more replicas"
        ),
        ("sharded/shards.yaml", "value: \"1/2\"", "value: \"0/2\"", "sharded: shard 1: AASA_SERVER_SHARD is 1/2"),
        (
            "sharded/service-shards.yaml",
            "  selector: {app.kubernetes.io/name: aasa-server-shard, aasa-server/shard: \"1\"}\n",
            "  selector: {app.kubernetes.io/name: aasa-server-shard}\n",
            "sharded: each shard's Service selects all of its replicas and nothing else"
        ),
        (
            "sharded/shards.conf", "    upstream aasa_shard_1 {\n        server aasa-server-shard-1:8443;\n    }\n", "",
            "sharded: shards.conf has one upstream per shard Deployment"
        ),
        (
            "fleet/deployment.yaml", "image: ghcr.io/example/aasa-server:latest",
            "image: ghcr.io/example/aasa-server:1.0", "sharded: shard pods match fleet/deployment.yaml's image"
        ),
        (
            "sharded/networkpolicy.yaml",
            "    - from:\n        - podSelector:\n            matchLabels: {app.kubernetes.io/name: aasa-server-router}\n      ports:\n        - {port: https, protocol: TCP}\n",
            "    - ports:\n        - {port: https, protocol: TCP}\n",
            "sharded: shard NetworkPolicy admits the https port only from the router pods"
        ),
    ])
    func shardedPartsThatDisagreeFail(file: String, original: String, replacement: String, failedCheck: String) throws {
        let output = try Self.checkAlteredCopy(file: file, original: original, replacement: replacement)
        #expect(output.status == 1)
        #expect(output.stdout.contains("FAIL \(failedCheck)"), "\(output.stdout)")
    }

    /// Runs scripts/check-manifests.py on a copy of deploy/ and the Dockerfile in which `original`, found exactly once
    /// in deploy/kubernetes/`file`, is replaced.
    static func checkAlteredCopy(file: String, original: String, replacement: String) throws -> Command.Output {
        let copy = TemporaryDirectory("aasa-manifests")
        try copy.copy(RepositoryPaths.root + "/deploy", to: "deploy")
        try copy.copy(RepositoryPaths.root + "/Dockerfile", to: "Dockerfile")
        let path = copy.path + "/deploy/kubernetes/" + file
        let manifest = try String(contentsOfFile: path, encoding: .utf8)
        #expect(manifest.components(separatedBy: original).count == 2, "\(file) holds the text to replace once")
        try manifest.replacingOccurrences(of: original, with: replacement).write(
            toFile: path, atomically: true, encoding: .utf8)
        return try Command.run("python3", [RepositoryPaths.root + "/scripts/check-manifests.py", copy.path])
    }
}

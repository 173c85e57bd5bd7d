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
        #expect(output.stdout.contains("ok   sharded: shards.conf has one upstream per StatefulSet replica"))
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

    /// A sharded variant (deploy/kubernetes/sharded) whose parts disagree fails the check: more shards than the
    /// router's shards.conf has upstreams, a headless Service with a cluster IP, shard pods that drift from
    /// deployment.yaml, shards whose https port is open to all instead of only to the router.
    @Test(arguments: [
        (
            "statefulset.yaml", "  replicas: 2\n", "  replicas: 3\n",
            "shards.conf has one upstream per StatefulSet replica"
        ),
        ("service-shards.yaml", "  clusterIP: None\n", "", "headless Service has clusterIP None"),
        (
            "statefulset.yaml", "image: ghcr.io/example/aasa-server:latest", "image: ghcr.io/example/aasa-server:1.0",
            "shard pods match deployment.yaml's image"
        ),
        (
            "networkpolicy.yaml",
            "    - from:\n        - podSelector:\n            matchLabels: {app.kubernetes.io/name: aasa-server-router}\n      ports:\n        - {port: https, protocol: TCP}\n",
            "    - ports:\n        - {port: https, protocol: TCP}\n",
            "shard NetworkPolicy admits the https port only from the router pods"
        ),
    ])
    func shardedPartsThatDisagreeFail(file: String, original: String, replacement: String, failedCheck: String) throws {
        let copy = TemporaryDirectory("aasa-manifests")
        try copy.copy(RepositoryPaths.root + "/deploy", to: "deploy")
        try copy.copy(RepositoryPaths.root + "/Dockerfile", to: "Dockerfile")
        let path = copy.path + "/deploy/kubernetes/sharded/" + file
        let manifest = try String(contentsOfFile: path, encoding: .utf8)
        #expect(manifest.components(separatedBy: original).count == 2, "\(file) holds the text to replace once")
        try manifest.replacingOccurrences(of: original, with: replacement).write(
            toFile: path, atomically: true, encoding: .utf8)
        let output = try Command.run("python3", [RepositoryPaths.root + "/scripts/check-manifests.py", copy.path])
        #expect(output.status == 1)
        #expect(output.stdout.contains("FAIL sharded: \(failedCheck)"), "\(output.stdout)")
    }
}

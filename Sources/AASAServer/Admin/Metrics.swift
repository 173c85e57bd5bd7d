import AASACore
import AASAMicroHTTPD
import Foundation

/// The admin listener's `/metrics`, in the Prometheus text format (version 0.0.4).
struct Metrics {
    /// Gauges taken from the running server when the page is asked for.
    struct Gauges {
        var reloads: [String: Int] = [:]
        var domainStates: [ServerStatus.DomainState.State: Int] = [:]
        var lastGoodLoad: [String: Date] = [:]
        var certificateExpiry: [(folder: String, notAfter: Date)] = []
        var listeners: [String: AdminRoutes.ListenerFigures] = [:]
        /// ACME orders finished, by result; `nil` without `--acme`.
        var acmeOrders: [String: Int]?
        /// ACME's queue of new orders; `nil` without `--acme`.
        var acmeQueue: ACMEQueueStatus?
        /// What dns-01 did; `nil` without it.
        var acmeDNS: ACMEFigures.DNSFigures?
        /// The CDN check's latest observations by domain; `nil` without the check.
        var cdn: [String: (apple: CDNObservation?, google: CDNObservation?)]?
        /// The shard the process is (`serve --shard`); `nil` when it serves every domain.
        var shard: Shard?
        /// What the replica knows of its store; `nil` without `--store`.
        var store: StoreStatus?
        /// The HTTPS listener's certificate cache; `nil` without HTTPS.
        var certificateCache: CertificateCacheFigures?
        /// The public listeners' response cache; `nil` without a public listener.
        var responseCache: ResponseCache.Figures?
        /// The credential vault; `nil` when certificates are kept in memory (or without HTTPS).
        var credentialVault: CredentialVault.Figures?
    }

    static let version = "0.1.0"

    static func render(recorder: TrafficRecorder, gauges: Gauges, now: Date = Date()) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
            let rendered = labels.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",")
            out += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(rendered)} \(value)\n"
        }
        family(
            "aasa_requests_total", "counter",
            "Requests answered on the public listeners, by domain, path, status and client class.")
        let counts = recorder.counts().sorted { a, b in
            (a.0.domain, a.0.resource.rawValue, a.0.status, a.0.client.rawValue)
                < (b.0.domain, b.0.resource.rawValue, b.0.status, b.0.client.rawValue)
        }
        for (key, value) in counts {
            sample(
                "aasa_requests_total",
                [
                    ("domain", key.domain), ("path", key.resource.rawValue), ("status", "\(key.status)"),
                    ("client", key.client.rawValue),
                ],
                "\(value)")
        }
        if let shard = gauges.shard {
            family("aasa_shard_info", "gauge", "The shard this process serves (serve --shard INDEX/COUNT); always 1.")
            sample("aasa_shard_info", [("index", "\(shard.index)"), ("count", "\(shard.count)")], "1")
        }
        if let store = gauges.store {
            family("aasa_store_up", "gauge", "Whether the replica is connected to its store (serve --store): 1 or 0.")
            sample("aasa_store_up", [], store.state == .connected ? "1" : "0")
            family(
                "aasa_store_changes_applied_total", "counter",
                "Changes of the store this replica applied since it started.")
            sample("aasa_store_changes_applied_total", [], "\(store.changesApplied)")
            family(
                "aasa_store_file_bytes_fetched_total", "counter",
                "Bytes of domain files (pages, templates) this replica fetched from its store since it started; a file "
                    + "is fetched again only when its digest moved.")
            sample("aasa_store_file_bytes_fetched_total", [], "\(store.fileBytesFetched)")
            family("aasa_store_last_change", "gauge", "The id of the last change of the store this replica applied.")
            sample("aasa_store_last_change", [], "\(store.lastChange)")
            family(
                "aasa_store_serving_snapshot", "gauge",
                "1 while the replica serves its snapshot (--store-cache) because the store was unreachable at start.")
            sample("aasa_store_serving_snapshot", [], store.servingSnapshot ? "1" : "0")
        }
        family("aasa_reloads_total", "counter", "Configuration loads by result (ok, errors, failed).")
        for result in ["ok", "errors", "failed"] {
            sample("aasa_reloads_total", [("result", result)], "\(gauges.reloads[result] ?? 0)")
        }
        family(
            "aasa_domains", "gauge",
            "Domain folders by state: published, stale (last good version served), failed (nothing served), removing.")
        for state in ServerStatus.DomainState.State.allCases {
            sample("aasa_domains", [("state", state.rawValue)], "\(gauges.domainStates[state] ?? 0)")
        }
        family("aasa_domain_last_good_load_timestamp_seconds", "gauge", "When each domain's served version was loaded.")
        for (domain, date) in gauges.lastGoodLoad.sorted(by: { $0.key < $1.key }) {
            sample(
                "aasa_domain_last_good_load_timestamp_seconds", [("domain", domain)], format(date.timeIntervalSince1970)
            )
        }
        family(
            "aasa_certificate_expiry_seconds", "gauge",
            "Seconds until each served certificate expires (negative once expired).")
        for (folder, notAfter) in gauges.certificateExpiry.sorted(by: { $0.folder < $1.folder }) {
            sample(
                "aasa_certificate_expiry_seconds", [("certificate", folder)], format(notAfter.timeIntervalSince(now)))
        }
        if let cache = gauges.certificateCache {
            family(
                "aasa_tls_certificates_cached", "gauge",
                "Certificates imported for TLS handshakes and kept (serve --certificate-cache bounds them).")
            sample("aasa_tls_certificates_cached", [], "\(cache.count)")
            family(
                "aasa_tls_certificate_lookups_total", "counter",
                "Handshakes by how their certificate was found: hit (kept imported), imported (imported for it), "
                    + "failed (GnuTLS refused it: the handshake failed, /status names the certificate).")
            for (result, value) in [("hit", cache.hits), ("imported", cache.imports), ("failed", cache.failures)] {
                sample("aasa_tls_certificate_lookups_total", [("result", result)], "\(value)")
            }
            family(
                "aasa_tls_certificate_evictions_total", "counter",
                "Imported certificates let go to keep the cache within its bound.")
            sample("aasa_tls_certificate_evictions_total", [], "\(cache.evictions)")
        }
        if let vault = gauges.credentialVault {
            family(
                "aasa_sealed_credentials", "gauge",
                "Certificates whose leaf and key wait sealed in the credential vault for a handshake "
                    + "(serve --credential-vault).")
            sample("aasa_sealed_credentials", [], "\(vault.entries)")
            family(
                "aasa_sealed_credential_bytes", "gauge",
                "Bytes in the credential vault's files: live (sealed credentials in service) and file (on disk, with "
                    + "what was let go in files still open).")
            sample("aasa_sealed_credential_bytes", [("kind", "live")], "\(vault.bytes)")
            sample("aasa_sealed_credential_bytes", [("kind", "file")], "\(vault.fileBytes)")
            family(
                "aasa_sealed_credential_failures_total", "counter",
                "Certificates the credential vault could not take (a file not made or written), kept in memory.")
            sample("aasa_sealed_credential_failures_total", [], "\(vault.failures)")
        }
        if let cache = gauges.responseCache {
            family(
                "aasa_responses_cached", "gauge",
                "Responses built for libmicrohttpd and kept for the next requests (serve --response-cache bounds them)."
            )
            sample("aasa_responses_cached", [], "\(cache.count)")
            family(
                "aasa_response_builds_total", "counter",
                "Responses built for a request because none was kept (a domain's first request, or one let go).")
            sample("aasa_response_builds_total", [], "\(cache.builds)")
            family(
                "aasa_response_evictions_total", "counter", "Responses let go to keep the cache within its bound.")
            sample("aasa_response_evictions_total", [], "\(cache.evictions)")
        }
        if let orders = gauges.acmeOrders {
            family(
                "aasa_acme_orders_total", "counter",
                "ACME orders finished, by result: valid (a certificate was issued and written) or failed.")
            for result in ACMEOrderResult.allCases.map(\.rawValue) {
                sample("aasa_acme_orders_total", [("result", result)], "\(orders[result] ?? 0)")
            }
        }
        if let queue = gauges.acmeQueue {
            family(
                "aasa_acme_queue_pending", "gauge",
                "ACME orders due and waiting for their turn under the CA's limits or for a pause to end.")
            sample("aasa_acme_queue_pending", [], "\(queue.pending)")
            family(
                "aasa_acme_paused", "gauge",
                "1 while every new ACME order waits because the CA answered a rate limit or was unavailable, else 0.")
            sample("aasa_acme_paused", [], queue.pausedUntil == nil ? "0" : "1")
            family(
                "aasa_acme_paused_until_seconds", "gauge",
                "When the pause of new ACME orders ends, as a Unix time; 0 when not paused.")
            sample(
                "aasa_acme_paused_until_seconds", [], format(queue.pausedUntil?.timeIntervalSince1970.rounded() ?? 0))
        }
        if let dns = gauges.acmeDNS {
            family(
                "aasa_acme_dns_orders_total", "counter",
                "ACME orders validated with dns-01 finished, by result: valid or failed (also in aasa_acme_orders_total)."
            )
            for result in ACMEOrderResult.allCases.map(\.rawValue) {
                sample("aasa_acme_dns_orders_total", [("result", result)], "\(dns.orders[result] ?? 0)")
            }
            family(
                "aasa_acme_dns_propagation_waits_total", "counter",
                "dns-01 records seen everywhere they had to be before the CA was asked to look.")
            sample("aasa_acme_dns_propagation_waits_total", [], "\(dns.challenges.propagationWaits)")
            family(
                "aasa_acme_dns_propagation_seconds_total", "counter",
                "Seconds spent waiting for dns-01 records to be seen, in all (divide by the waits for the mean).")
            sample("aasa_acme_dns_propagation_seconds_total", [], format(dns.challenges.propagationSeconds))
            family(
                "aasa_acme_dns_propagation_failures_total", "counter",
                "dns-01 records not seen within --acme-dns-propagation-timeout (the order failed).")
            sample("aasa_acme_dns_propagation_failures_total", [], "\(dns.challenges.propagationFailures)")
            family("aasa_acme_dns_records", "gauge", "dns-01 TXT records written by this process and not yet removed.")
            sample("aasa_acme_dns_records", [], "\(dns.challenges.records)")
            family(
                "aasa_acme_dns_cleanup_failures_total", "counter",
                "dns-01 records that could not be removed (tried again at the next start).")
            sample("aasa_acme_dns_cleanup_failures_total", [], "\(dns.challenges.cleanupFailures)")
            family(
                "aasa_acme_dns_delegations", "gauge",
                "dns-01 domains by the state of _acme-challenge's delegation as last looked up: in-place, direct, "
                    + "missing, unknown.")
            for state in [DNSDelegation.State.inPlace, .direct, .missing, .unknown] {
                sample("aasa_acme_dns_delegations", [("state", state.rawValue)], "\(dns.delegations[state] ?? 0)")
            }
        }
        if let cdn = gauges.cdn {
            let domains = cdn.sorted { $0.key < $1.key }
            for (source, label) in [(CDNObservation.Source.apple, "apple_cdn"), (.google, "google_dal")] {
                let observed = domains.compactMap { domain, pair in
                    (source == .apple ? pair.apple : pair.google).map { (domain, $0) }
                }
                let what = source == .apple ? "Apple's CDN copy" : "Google's set of Digital Asset Links statements"
                family(
                    "aasa_\(label)_state", "gauge",
                    "State of \(what) against what is served, one-hot: in-sync, stale, failed, absent, unreachable.")
                for (domain, observation) in observed {
                    for state in CDNObservation.State.allCases {
                        sample(
                            "aasa_\(label)_state", [("domain", domain), ("state", state.rawValue)],
                            observation.state == state ? "1" : "0")
                    }
                }
                family("aasa_\(label)_last_check_timestamp_seconds", "gauge", "When \(what) was last checked.")
                for (domain, observation) in observed {
                    sample(
                        "aasa_\(label)_last_check_timestamp_seconds", [("domain", domain)],
                        format(observation.checked.timeIntervalSince1970))
                }
            }
        }
        let listeners = gauges.listeners.sorted { $0.key < $1.key }
        family("aasa_open_connections", "gauge", "Open connections per listener.")
        for (listener, figures) in listeners {
            sample("aasa_open_connections", [("listener", listener)], "\(figures.openConnections)")
        }
        family(
            "aasa_header_timeouts_total", "counter",
            "Connections closed because their request head (TLS handshake included) was not complete in time.")
        for (listener, figures) in listeners {
            sample("aasa_header_timeouts_total", [("listener", listener)], "\(figures.headerTimeouts)")
        }
        family("aasa_build_info", "gauge", "Build information.")
        sample("aasa_build_info", [("version", version)], "1")
        return out
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func format(_ value: Double) -> String {
        // Prometheus' text format spells the values that are not finite `+Inf`, `-Inf` and `NaN`.
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return Int64(exactly: value).map(String.init) ?? String(format: "%.3f", value)
    }
}

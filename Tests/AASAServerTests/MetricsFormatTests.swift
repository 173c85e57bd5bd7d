import Testing

@testable import AASAServer

/// A gauge's value as `/metrics` writes it (``Metrics/format(_:)``): whole numbers without a fraction, others with
/// three digits, and the values that are not finite as Prometheus' text format spells them, never a trap.
@Suite struct MetricsFormatTests {
    @Test(arguments: [
        (0.0, "0"), (-3.0, "-3"), (1.25, "1.250"), (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"),
        (Double.nan, "NaN"), (9_223_372_036_854_775_808, "9223372036854775808.000"),
    ])
    func everyValueIsWrittenAsPrometheusReadsIt(_ value: Double, _ text: String) {
        #expect(Metrics.format(value) == text)
    }
}

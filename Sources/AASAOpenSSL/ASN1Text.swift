internal import COpenSSL

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Conversions from OpenSSL ASN.1 values to Swift values.
enum ASN1Text {
    /// The string's content as UTF-8 (IA5 and UTF8String contents are both valid UTF-8 for our purposes).
    static func string(_ value: UnsafeMutablePointer<ASN1_STRING>?) -> String? {
        guard let value, let data = ASN1_STRING_get0_data(value) else { return nil }
        let count = Int(ASN1_STRING_length(value))
        return String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    }

    /// The time as a `Date`; the Unix epoch when OpenSSL cannot read it.
    static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else {
            OpenSSLError.drainErrorQueue()
            return Date(timeIntervalSince1970: 0)
        }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}

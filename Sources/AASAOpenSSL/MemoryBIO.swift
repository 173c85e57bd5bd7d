internal import COpenSSL
internal import CShims.OpenSSL

/// Temporary in-memory BIOs, created and freed within one call (temporaries are freed with `defer`).
enum MemoryBIO {
    /// Calls `body` with a read-only BIO over `bytes`; the BIO does not outlive the call.
    static func reading<R>(_ bytes: [UInt8], _ body: (OpaquePointer) throws -> R) throws -> R {
        try bytes.withUnsafeBytes { raw in
            // BIO_new_mem_buf does not copy: the buffer only has to live as long as the BIO, i.e. this closure.
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else {
                throw OpenSSLError(.encoding, "could not allocate a memory BIO")
            }
            defer { BIO_free(bio) }
            return try body(bio)
        }
    }

    /// Calls `write` with an empty writable BIO and returns everything written to it.
    ///
    /// `write` returns OpenSSL's success flag (1 on success); anything else throws `failure`.
    static func collecting(_ failure: @autoclosure () -> OpenSSLError, _ write: (OpaquePointer) -> Int32) throws
        -> [UInt8]
    {
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw OpenSSLError(.encoding, "could not allocate a memory BIO")
        }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw failure() }
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = cshims_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}

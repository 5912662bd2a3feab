/*
 WARC-Payload-Digest values (WARC 1.1 §5.9: `labelled-digest = algorithm ":" digest-value`) and checking them with
 libcrypto's EVP digests, in one call over the payload.

 Writers disagree on the text of the value, so it is recognised by its length and alphabet:

     sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ              Base32 (RFC 4648 §6), the usual form
     sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709      hex (warcio's test files)
     sha1:2jmj7l5rSw0yVb/vlWAYkK/YBwk=                  base64
     sha1:2jmj7l5rSw0yVb_vlWAYkK_YBwk=                  base64url

 A digest of n bytes is 2n hex digits, ⌈8n/5⌉ Base32 characters (padded to a multiple of 8) and ⌈4n/3⌉ base64
 characters (padded to a multiple of 4): for the four algorithms known here those lengths never coincide without
 telling `=` or the alphabet apart, so a value decodes one way only.

 The framer only parses the value: the hashing, the costly part of reading a .warc.gz, is left to the workers
 (`PendingPayloadDigest`, checked by `ResponseRecord.checkPayloadDigest()` before the line is written), since the one
 reading thread is what cannot be shared.
 */
internal import CCrypto

enum PayloadDigest {
    enum Algorithm: String, Sendable {
        case sha1, sha256, sha512, md5

        /// Digest length in bytes.
        var length: Int {
            switch self {
            case .sha1: 20
            case .sha256: 32
            case .sha512: 64
            case .md5: 16
            }
        }

        /// `sha1`, `SHA-1`, `sha-256`, `MD5`, …: case-insensitive, with or without the hyphen.
        init?(name: Substring) {
            // The usual spelling first, without building a folded copy (a string this short is not allocated).
            if let known = Algorithm(rawValue: String(name)) {
                self = known
                return
            }
            let folded = String(decoding: name.utf8.filter { $0 != UInt8(ascii: "-") }.map(asciiLower), as: UTF8.self)
            self.init(rawValue: folded)
        }
    }

    /// A parsed `WARC-Payload-Digest` value.
    struct Expected: Sendable, Hashable {
        var algorithm: Algorithm
        var value: [UInt8]
    }

    /// What a `WARC-Payload-Digest` value allows.
    enum Parsed: Sendable, Hashable {
        /// A digest to compare the payload with.
        case expected(Expected)
        /// The value has the length of a digest of its algorithm but a character outside the alphabet of that
        /// form (`1112H3S6…` as Base32): no payload can have it. The string says what is wrong.
        case neverMatches(String)
        /// The digest cannot be checked (unknown algorithm, no `:`, a value of no digest length). The string says why.
        case unusable(String)
    }

    /// Parses `algorithm:value`.
    static func parse(_ field: String) -> Parsed {
        let text = field.trimmingOWS()
        guard let colon = text.firstIndex(of: ":") else {
            return .unusable("WARC-Payload-Digest '\(field)' is not 'algorithm:value': not checked")
        }
        let name = text[..<colon].trimmingOWS()
        let encoded = String(text[text.index(after: colon)...].trimmingOWS())
        guard let algorithm = Algorithm(name: name) else {
            return .unusable("WARC-Payload-Digest algorithm '\(name)' is not known here: not checked")
        }
        if let value = decode(encoded, length: algorithm.length) {
            return .expected(Expected(algorithm: algorithm, value: value))
        }
        if encodedLengths(algorithm.length).contains(encoded.utf8.count),
            encoded.utf8.allSatisfy({ base64Alphabet.contains($0) })
        {
            return .neverMatches(
                "WARC-Payload-Digest value '\(encoded)' has the length of a \(algorithm.rawValue) digest but does not decode as Base32, hex or base64"
            )
        }
        return .unusable(
            "WARC-Payload-Digest value '\(encoded)' is not a \(algorithm.rawValue) digest in Base32, hex or base64: not checked"
        )
    }

    /// The lengths a digest of `length` bytes is written in: hex, Base32 (bare or padded), base64 (bare or padded).
    static func encodedLengths(_ length: Int) -> [Int] {
        [2 * length, (8 * length + 4) / 5, (length + 4) / 5 * 8, (4 * length + 2) / 3, (length + 2) / 3 * 4]
    }

    private static let base64Alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=".utf8)

    /// The bytes of a digest value of `length` bytes written in hex, Base32, base64 or base64url.
    static func decode(_ text: String, length: Int) -> [UInt8]? {
        let count = text.utf8.count
        let lengths = (
            hex: 2 * length, base32: (8 * length + 4) / 5, base32Padded: (length + 4) / 5 * 8,
            base64: (4 * length + 2) / 3, base64Padded: (length + 2) / 3 * 4
        )
        if count == lengths.hex, let bytes = BaseDecoding.hex(text) { return bytes }
        if count == lengths.base32 || count == lengths.base32Padded, let bytes = BaseDecoding.base32(text),
            bytes.count == length
        {
            return bytes
        }
        if count == lengths.base64 || count == lengths.base64Padded,
            let bytes = BaseDecoding.base64(text, urlSafe: true),
            bytes.count == length
        {
            return bytes
        }
        return nil
    }

    /// An algorithm's implementation, fetched from libcrypto's default provider once. `EVP_sha1()` and its kind
    /// name a digest that OpenSSL 3 looks up again (under a lock) on every `EVP_Digest`; measured here, that look-up
    /// cost a .warc.gz run's reading thread as much as the hashing.
    private struct Fetched: @unchecked Sendable {
        // An EVP_MD is immutable once fetched and may be used from any thread (OpenSSL's threading rules).
        let md: OpaquePointer?

        init(_ name: String) { md = EVP_MD_fetch(nil, name, nil) }
    }

    private static let sha1 = Fetched("SHA1")
    private static let sha256 = Fetched("SHA256")
    private static let sha512 = Fetched("SHA512")
    private static let md5 = Fetched("MD5")

    /// Runs `body` on the digest of the bytes `feed` passes to its argument, in order, or gives `nil` if libcrypto
    /// could not compute it. (`EVP_Digest`, the one-call form, makes and frees the same context inside.)
    private static func withDigest<T>(
        _ algorithm: Algorithm, feeding feed: (_ update: (UnsafeBufferPointer<UInt8>) -> Void) -> Void,
        _ body: (UnsafeBufferPointer<UInt8>) -> T
    ) -> T? {
        let fetched =
            switch algorithm {
            case .sha1: sha1
            case .sha256: sha256
            case .sha512: sha512
            case .md5: md5
            }
        guard let md = fetched.md, let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, md, nil) == 1 else { return nil }
        var failed = false
        feed { data in
            guard !failed, let base = data.baseAddress, !data.isEmpty else { return }
            if EVP_DigestUpdate(context, base, data.count) != 1 { failed = true }
        }
        guard !failed else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { out -> T? in
            var size: UInt32 = 0
            guard EVP_DigestFinal_ex(context, out.baseAddress, &size) == 1, Int(size) == algorithm.length else {
                return nil
            }
            return body(UnsafeBufferPointer(rebasing: out[..<Int(size)]))
        }
    }

    /// The digest of `data`, or `nil` if libcrypto could not compute it.
    static func digest(_ algorithm: Algorithm, of data: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        withDigest(algorithm, feeding: { $0(data) }, { Array($0) })
    }

    /// Whether `data` has the expected digest (`nil`: libcrypto failed).
    static func matches(_ expected: Expected, _ data: UnsafeBufferPointer<UInt8>) -> Bool? {
        matches(expected) { $0(data) }
    }

    /// Whether the bytes `feed` passes to its argument, in order, have the expected digest (`nil`: libcrypto failed).
    static func matches(
        _ expected: Expected, feeding feed: (_ update: (UnsafeBufferPointer<UInt8>) -> Void) -> Void
    ) -> Bool? {
        withDigest(expected.algorithm, feeding: feed) { $0.elementsEqual(expected.value) }
    }
}

extension ChunkFraming {
    /// The runs of `stored` outside `data` (each chunk's data, in order), with the body offsets they stood before.
    init(stored: UnsafeBufferPointer<UInt8>, data: [Range<Int>]) {
        var bytes: [UInt8] = []
        var bodyOffsets: [Int] = []
        var lengths: [Int] = []
        var storedAt = 0
        var bodyAt = 0
        // The last, empty range takes the run after the last chunk's data (the last chunk, trailers, anything after).
        for range in data + [stored.count..<stored.count] {
            if range.lowerBound > storedAt {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: stored[storedAt..<range.lowerBound]))
                bodyOffsets.append(bodyAt)
                lengths.append(range.lowerBound - storedAt)
            }
            bodyAt += range.count
            storedAt = range.upperBound
        }
        self.init(bytes: bytes, bodyOffsets: bodyOffsets, lengths: lengths)
    }

    /// Passes the body as stored to `update`, in order: each removed run before the body bytes it preceded.
    /// - Parameters:
    ///   - body: the de-chunked body these runs were removed from.
    ///   - update: takes each piece in turn.
    func feedStored(_ body: UnsafeBufferPointer<UInt8>, to update: (UnsafeBufferPointer<UInt8>) -> Void) {
        bytes.withUnsafeBufferPointer { removed in
            var bodyAt = 0
            var removedAt = 0
            for (offset, length) in zip(bodyOffsets, lengths) {
                update(UnsafeBufferPointer(rebasing: body[bodyAt..<offset]))
                update(UnsafeBufferPointer(rebasing: removed[removedAt..<removedAt + length]))
                bodyAt = offset
                removedAt += length
            }
            update(UnsafeBufferPointer(rebasing: body[bodyAt...]))
        }
    }
}

/// A `WARC-Payload-Digest` the WARC framer found and left for a worker to check: the expected value, and which bytes
/// the payload is.
extension PendingPayloadDigest {
    init(expected: PayloadDigest.Expected, payloadStart: Int, chunkFraming: ChunkFraming?) {
        self.init(
            algorithm: expected.algorithm.rawValue, value: expected.value, payloadStart: payloadStart,
            chunkFraming: chunkFraming)
    }

    /// The digest to compare with; nil for an algorithm this file does not know (none: the framer made it).
    var expected: PayloadDigest.Expected? {
        PayloadDigest.Algorithm(rawValue: algorithm).map { PayloadDigest.Expected(algorithm: $0, value: value) }
    }
}

extension ResponseRecord {
    /// Checks the payload digest the framer left pending, if any: sets `warc.digest` to `ok` or `mismatch` (or adds
    /// a warning when libcrypto cannot compute it). The workers call it before writing each line (``JobPool``).
    public mutating func checkPayloadDigest() {
        guard let pending = warc?.pendingDigest else { return }
        warc?.pendingDigest = nil
        guard let expected = pending.expected else { return }
        var ok = body.withUnsafeBufferPointer { body in
            PayloadDigest.matches(expected, UnsafeBufferPointer(rebasing: body[pending.payloadStart...]))
        }
        if ok == false, let framing = pending.chunkFraming {
            ok = body.withUnsafeBufferPointer { body in
                PayloadDigest.matches(expected) { framing.feedStored(body, to: $0) }
            }
        }
        switch ok {
        case .some(true): warc?.digest = .ok
        case .some(false): warc?.digest = .mismatch
        case .none:
            warnings.append("libcrypto could not compute the \(pending.algorithm) digest: not checked")
        }
    }
}

extension FramedItem {
    /// The item with its pending payload digest checked (``ResponseRecord/checkPayloadDigest()``).
    public func checkingPayloadDigest() -> FramedItem {
        guard case .record(var record) = self, record.warc?.pendingDigest != nil else { return self }
        record.checkPayloadDigest()
        return .record(record)
    }
}

extension ResponseRecord {
    /// `sha1:` and the Base32 SHA-1 of the payload as stored (the body, with the chunk framing it lost put back when
    /// it was de-chunked): the digest a CDXJ index gives a record that has no `WARC-Payload-Digest`
    /// (docs/output.md#cdxj-index); nil if libcrypto cannot compute it.
    func storedPayloadSHA1() -> String? {
        let digest = body.withUnsafeBufferPointer { body -> [UInt8]? in
            guard let framing = warc?.storedChunkFraming ?? arc?.storedChunkFraming else {
                return PayloadDigest.digest(.sha1, of: body)
            }
            return PayloadDigest.digest(.sha1) { framing.feedStored(body, to: $0) }
        }
        return digest.map { "sha1:" + PayloadDigest.base32($0) }
    }
}

extension PayloadDigest {
    /// The digest of the bytes `feed` passes to its argument, in order, or `nil` if libcrypto could not compute it.
    static func digest(
        _ algorithm: Algorithm, feeding feed: (_ update: (UnsafeBufferPointer<UInt8>) -> Void) -> Void
    ) -> [UInt8]? {
        withDigest(algorithm, feeding: feed) { Array($0) }
    }

    /// Base32 (RFC 4648 §6, upper case, padded with `=` to a multiple of 8 characters).
    static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int(buffer >> UInt32(bits - 5) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int(buffer << UInt32(5 - bits) & 31)]) }
        while out.count % 8 != 0 { out.append(UInt8(ascii: "=")) }
        return String(decoding: out, as: UTF8.self)
    }
}

extension PayloadDigest {
    /// A digest computed as the bytes pass, for a payload that is never held whole: a block over the limits, skipped
    /// by the framer (OverLimitBlock.swift, docs/reliability.md#limits). One libcrypto context, freed with the object.
    final class Stream {
        private let context: OpaquePointer
        private var failed = false
        let algorithm: Algorithm

        /// `nil` if libcrypto cannot make the context.
        init?(_ algorithm: Algorithm) {
            let fetched =
                switch algorithm {
                case .sha1: PayloadDigest.sha1
                case .sha256: PayloadDigest.sha256
                case .sha512: PayloadDigest.sha512
                case .md5: PayloadDigest.md5
                }
            guard let md = fetched.md, let context = EVP_MD_CTX_new() else { return nil }
            guard EVP_DigestInit_ex(context, md, nil) == 1 else {
                EVP_MD_CTX_free(context)
                return nil
            }
            self.context = context
            self.algorithm = algorithm
        }

        deinit { EVP_MD_CTX_free(context) }

        func update(_ data: UnsafeBufferPointer<UInt8>) {
            guard !failed, let base = data.baseAddress, !data.isEmpty else { return }
            if EVP_DigestUpdate(context, base, data.count) != 1 { failed = true }
        }

        /// The digest of every byte passed so far, or `nil` if libcrypto failed. Once only.
        func finish() -> [UInt8]? {
            guard !failed else { return nil }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { out -> [UInt8]? in
                var size: UInt32 = 0
                guard EVP_DigestFinal_ex(context, out.baseAddress, &size) == 1, Int(size) == algorithm.length else {
                    return nil
                }
                return Array(out[..<Int(size)])
            }
        }
    }
}

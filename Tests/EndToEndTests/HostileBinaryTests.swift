import Foundation
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// Hostile MessagePack and CBOR bodies (docs/reliability.md#msgpack-and-cbor) through the real binary, each within
    /// 1 s of CPU time and 256 MB resident (``HostileDocumentTests/runLimited(input:name:arguments:)``), one line, nothing
    /// on stderr: length prefixes claiming 4 GB and more, nesting a million deep, 64 MB of one-byte items, huge bignums.
    @Suite("Hostile msgpack and CBOR")
    struct HostileBinaryTests {
        static let msgpack = "application/msgpack"
        static let cbor = "application/cbor"
        static let megabyte = 1 << 20

        /// A body the size of the default --max-body-bytes (64 MiB) at most, `prefix` then `filler` repeated.
        static func body(_ prefix: [UInt8], filler: [UInt8], bytes: Int, suffix: [UInt8] = []) -> Data {
            var data = Data(prefix)
            let count = (bytes - prefix.count - suffix.count) / filler.count
            data.reserveCapacity(bytes)
            if filler.count == 1 {
                data.append(Data(repeating: filler[0], count: count))
            } else {
                for _ in 0..<count { data.append(contentsOf: filler) }
            }
            data.append(contentsOf: suffix)
            return data
        }

        /// The code of the line's error, or "ok".
        static func outcome(_ line: [String: Any]) -> String {
            if line["ok"] as? Bool == true { return "ok" }
            return ((line["error"] as? [String: Any])?["code"] as? String) ?? "?"
        }

        static func check(_ name: String, _ body: Data, type: String, expect expected: String) throws {
            let line = try HostileDocumentTests.runLimited(
                body, type: type, name: name, arguments: ["--chain", "msgpack,cbor"])
            #expect(outcome(line) == expected, "\(name): \(line["error"] ?? "ok")")
        }

        @Test("msgpack length prefixes claiming 4 GB")
        func messagePackClaims() throws {
            let tail = [UInt8](repeating: 0, count: 1000)
            try Self.check(
                "msgpack str32 of 4 GB", Data([0xDB, 0xFF, 0xFF, 0xFF, 0xFF] + tail), type: Self.msgpack,
                expect: "invalidMessagePack")
            try Self.check(
                "msgpack bin32 of 4 GB", Data([0xC6, 0xFF, 0xFF, 0xFF, 0xFF] + tail), type: Self.msgpack,
                expect: "invalidMessagePack")
            try Self.check(
                "msgpack ext32 of 4 GB", Data([0xC9, 0xFF, 0xFF, 0xFF, 0xFF, 0x01] + tail), type: Self.msgpack,
                expect: "invalidMessagePack")
            // 2^32 − 1 elements claimed, a million there: read, then the body ends.
            try Self.check(
                "msgpack array32 of 4 G elements",
                Self.body([0xDD, 0xFF, 0xFF, 0xFF, 0xFF], filler: [0x00], bytes: Self.megabyte), type: Self.msgpack,
                expect: "invalidMessagePack")
            try Self.check(
                "msgpack map32 of 4 G pairs",
                Self.body([0xDF, 0xFF, 0xFF, 0xFF, 0xFF], filler: [0x00], bytes: Self.megabyte), type: Self.msgpack,
                expect: "invalidMessagePack")
        }

        @Test("msgpack nesting, 64 MB of one-byte items")
        func messagePackVolume() throws {
            try Self.check(
                "msgpack arrays a million deep", Self.body([], filler: [0x91], bytes: 1_000_000, suffix: [0xC0]),
                type: Self.msgpack, expect: "limitExceeded")
            try Self.check(
                "msgpack maps a million deep (keys)", Self.body([], filler: [0x81], bytes: 1_000_000, suffix: [0xC0]),
                type: Self.msgpack, expect: "limitExceeded")
            // 64 MiB − 5 zeros in one array: 128 MB of JSON, past --max-value-bytes.
            let count = 64 * Self.megabyte - 5
            try Self.check(
                "msgpack 64 MB of one-byte items",
                Self.body(
                    [0xDD] + withUnsafeBytes(of: UInt32(count).bigEndian, Array.init), filler: [0x00],
                    bytes: 64 * Self.megabyte), type: Self.msgpack, expect: "limitExceeded")
            // Half of that: decoded in full.
            let half = 32 * Self.megabyte - 5
            try Self.check(
                "msgpack 32 MB of one-byte items",
                Self.body(
                    [0xDD] + withUnsafeBytes(of: UInt32(half).bigEndian, Array.init), filler: [0x00],
                    bytes: 32 * Self.megabyte), type: Self.msgpack, expect: "ok")
        }

        @Test("CBOR length prefixes claiming 4 GB and 2^64")
        func cborClaims() throws {
            let tail = [UInt8](repeating: 0, count: 1000)
            let cases: [(String, [UInt8])] = [
                ("CBOR bytes of 4 GB", [0x5A, 0xFF, 0xFF, 0xFF, 0xFF]),
                ("CBOR text of 4 GB", [0x7A, 0xFF, 0xFF, 0xFF, 0xFF]),
                ("CBOR array of 4 G items", [0x9A, 0xFF, 0xFF, 0xFF, 0xFF]),
                ("CBOR map of 4 G pairs", [0xBA, 0xFF, 0xFF, 0xFF, 0xFF]),
                ("CBOR bytes of 2^64", [0x5B] + [UInt8](repeating: 0xFF, count: 8)),
                ("CBOR text of 2^64", [0x7B] + [UInt8](repeating: 0xFF, count: 8)),
                ("CBOR array of 2^64 items", [0x9B] + [UInt8](repeating: 0xFF, count: 8)),
                ("CBOR map of 2^63 pairs", [0xBB, 0x7F] + [UInt8](repeating: 0xFF, count: 7)),
                // An indefinite byte string of chunks claiming 4 GB each.
                ("CBOR chunk of 4 GB", [0x5F, 0x5A, 0xFF, 0xFF, 0xFF, 0xFF]),
            ]
            for (name, prefix) in cases {
                try Self.check(name, Data(prefix + tail), type: Self.cbor, expect: "invalidCBOR")
            }
        }

        @Test("CBOR nesting a million deep")
        func cborNesting() throws {
            let million = 1_000_000
            try Self.check(
                "CBOR indefinite arrays a million deep", Self.body([], filler: [0x9F], bytes: million),
                type: Self.cbor, expect: "limitExceeded")
            try Self.check(
                "CBOR indefinite maps a million deep (keys)", Self.body([], filler: [0xBF], bytes: million),
                type: Self.cbor, expect: "limitExceeded")
            try Self.check(
                "CBOR definite arrays a million deep", Self.body([], filler: [0x81], bytes: million, suffix: [0x00]),
                type: Self.cbor, expect: "limitExceeded")
            try Self.check(
                "CBOR tags a million deep", Self.body([], filler: [0xD8, 0x63], bytes: 2 * million, suffix: [0x00]),
                type: Self.cbor, expect: "limitExceeded")
            // Tags that write nothing of their own: no nesting, read through.
            try Self.check(
                "CBOR self-describe tags a million times",
                Self.body([], filler: [0xD9, 0xD9, 0xF7], bytes: 3 * million, suffix: [0x00]), type: Self.cbor,
                expect: "ok")
            try Self.check(
                "CBOR expected-encoding tags a million times",
                Self.body([], filler: [0xD5], bytes: million, suffix: [0x41, 0x00]), type: Self.cbor, expect: "ok")
            // Each key a map whose key is a map…: every level quotes the one inside, doubling its backslashes.
            try Self.check(
                "CBOR keys nested in keys",
                Self.body([], filler: [0xA1], bytes: 1001, suffix: [UInt8](repeating: 0x00, count: 501)),
                type: Self.cbor, expect: "limitExceeded")
            // Embedded CBOR (tag 24) 100,000 levels deep, built from the inside out.
            var embedded: [UInt8] = [0x00]
            for _ in 0..<100_000 {
                let n = embedded.count
                let header: [UInt8] =
                    n < 24
                    ? [0x40 | UInt8(n)]
                    : n < 256
                        ? [0x58, UInt8(n)]
                        : n < 65_536
                            ? [0x59, UInt8(n >> 8), UInt8(n & 0xFF)]
                            : [0x5A, UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
                embedded = [0xD8, 0x18] + header + embedded
            }
            try Self.check("CBOR embedded 100,000 deep", Data(embedded), type: Self.cbor, expect: "ok")
        }

        @Test("CBOR 64 MB of one-byte items, huge bignums")
        func cborVolume() throws {
            try Self.check(
                "CBOR 64 MB of one-byte items",
                Self.body([0x9F], filler: [0x00], bytes: 64 * Self.megabyte, suffix: [0xFF]),
                type: Self.cbor, expect: "limitExceeded")
            try Self.check(
                "CBOR 32 MB of one-byte items",
                Self.body([0x9F], filler: [0x00], bytes: 32 * Self.megabyte, suffix: [0xFF]),
                type: Self.cbor, expect: "ok")
            // One bignum of 60 MB: kept as its tag, its base64 past --max-value-bytes.
            let size = 60 * Self.megabyte
            try Self.check(
                "CBOR bignum of 60 MB",
                Self.body(
                    [0xC2, 0x5A] + withUnsafeBytes(of: UInt32(size).bigEndian, Array.init), filler: [0xFF],
                    bytes: size + 6), type: Self.cbor, expect: "limitExceeded")
            // 64-byte bignums (155 digits each, the longest written in decimal) filling 60 MB.
            let bignum: [UInt8] = [0xC2, 0x58, 0x40] + [UInt8](repeating: 0xFF, count: 64)
            try Self.check(
                "CBOR 60 MB of 64-byte bignums",
                Self.body([0x9F], filler: bignum, bytes: 60 * Self.megabyte, suffix: [0xFF]), type: Self.cbor,
                expect: "limitExceeded")
            // 10 MB of them: decoded in full.
            try Self.check(
                "CBOR 10 MB of 64-byte bignums",
                Self.body([0x9F], filler: bignum, bytes: 10 * Self.megabyte, suffix: [0xFF]), type: Self.cbor,
                expect: "ok")
        }
    }
}

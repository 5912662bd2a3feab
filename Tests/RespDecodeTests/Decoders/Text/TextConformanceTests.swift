import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The charset resolution and conversion against the shared corpora (docs/decoding.md#text): the WHATWG label table
/// and single-byte indexes, html5lib's `<meta>` prescan tests, and the uchardet and chardet texts with their
/// expected UTF-8.
@Suite("Text conformance", .enabled(if: Corpora.available, Corpora.skipComment))
struct TextConformanceTests {
    private static let whatwg = "charset/whatwg-encoding"

    /// The text `body` decodes to, and what it was decoded as.
    static func decode(
        _ body: [UInt8], charset: String?, kind: TextDecoding.Kind = .plain
    ) throws -> (text: [UInt8], info: TextInfo) {
        try body.withUnsafeBufferPointer { buffer in
            try TextDecoding.withUTF8(buffer, declaredCharset: charset, kind: kind) { text, info in (Array(text), info)
            }
        }
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        let digest = bytes.withUnsafeBufferPointer { PayloadDigest.digest(.sha256, of: $0) } ?? []
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    // MARK: Labels

    @Test("every label of encodings.json resolves to its encoding, and the table has no other label")
    func labelTable() throws {
        let json = try JSONSerialization.jsonObject(with: Data(Corpora.bytes("\(Self.whatwg)/encodings.json")))
        let groups = try #require(json as? [[String: Any]])
        var mismatches: [String] = []
        var count = 0
        for group in groups {
            for encoding in try #require(group["encodings"] as? [[String: Any]]) {
                let name = try #require(encoding["name"] as? String)
                for label in try #require(encoding["labels"] as? [String]) {
                    count += 1
                    // Labels are matched ASCII case-insensitively, with ASCII whitespace trimmed.
                    for variant in [label, label.uppercased(), " \t\(label)\n\u{0C}"] {
                        let resolved = WebEncoding(label: variant)?.name
                        if resolved?.lowercased() != name.lowercased() {
                            mismatches.append("\(variant.debugDescription) → \(resolved ?? "nil"), expected \(name)")
                        }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(WebEncoding.labels.flatMap(\.labels).count == count)
        #expect(count == 228)
        print("WHATWG labels: \(count) of \(count) resolve as encodings.json says")
        #expect(WebEncoding(label: "iso-8859-1 x") == nil)
        #expect(WebEncoding(label: "") == nil)
    }

    // MARK: Single-byte encodings

    @Test("every single-byte encoding decodes each byte as the WHATWG index says")
    func singleByteIndexes() throws {
        var mismatches: [String] = []
        var checked = 0
        for encoding in WebEncoding.allCases where encoding.isSingleByte {
            // ISO-8859-8-I shares ISO-8859-8's index.
            let indexName = encoding == .iso88598i ? "iso-8859-8" : encoding.name.lowercased()
            let text = String(
                decoding: try Corpora.bytes("\(Self.whatwg)/indexes/index-\(indexName).txt"), as: UTF8.self)
            var index: [Int: UInt32] = [:]
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let fields = line.split(separator: "\t")
                guard fields.count >= 2, let pointer = Int(fields[0].trimmingCharacters(in: .whitespaces)),
                    let code = UInt32(fields[1].dropFirst(2), radix: 16)
                else { continue }
                index[pointer] = code
            }
            for byte in 0...0xFF {
                let (decoded, info) = try Self.decode([UInt8(byte)], charset: encoding.name)
                let expected: UInt32 = byte < 0x80 ? UInt32(byte) : index[byte - 0x80] ?? 0xFFFD
                let scalars = String(decoding: decoded, as: UTF8.self).unicodeScalars.map(\.value)
                let replaced = byte >= 0x80 && index[byte - 0x80] == nil ? 1 : 0
                if scalars != [expected] || info.replacements != replaced || info.charset != encoding.name {
                    mismatches.append(
                        "\(encoding.name) 0x\(String(byte, radix: 16)): \(scalars.map { String($0, radix: 16) }), "
                            + "expected \(String(expected, radix: 16))")
                }
                checked += 1
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        print("single-byte encodings: \(checked - mismatches.count) of \(checked) bytes as the WHATWG indexes say")
    }

    // MARK: html5lib encoding tests

    /// The `#data` → `#encoding` pairs of one html5lib `encoding/*.dat` file.
    static func encodingTests(_ path: String) throws -> [(data: [UInt8], encoding: String)] {
        let lines = try Corpora.bytes(path).split(separator: 0x0A, omittingEmptySubsequences: false)
        var tests: [(data: [UInt8], encoding: String)] = []
        var i = 0
        while i < lines.count {
            guard lines[i].elementsEqual("#data".utf8) else {
                i += 1
                continue
            }
            var data: [[UInt8]] = []
            i += 1
            while i < lines.count && !lines[i].elementsEqual("#encoding".utf8) {
                data.append(Array(lines[i]))
                i += 1
            }
            guard i + 1 < lines.count else { break }
            tests.append((Array(data.joined(separator: [0x0A])), String(decoding: lines[i + 1], as: UTF8.self)))
            i += 2
        }
        return tests
    }

    @Test("html5lib's encoding tests: the <meta> prescan finds #encoding (windows-1252 when it finds nothing)")
    func html5libEncoding() throws {
        var total = 0
        var failures: [String] = []
        for file in ["tests1.dat", "tests2.dat", "test-yahoo-jp.dat"] {
            for test in try Self.encodingTests("html/html5lib-tests/encoding/\(file)") {
                total += 1
                // The whole resolution, with no Content-Type charset: a BOM, else the prescan, else (when it finds
                // nothing) the tests' fallback, windows-1252.
                let resolution = test.data.withUnsafeBufferPointer {
                    TextDecoding.resolve($0, declaredCharset: nil, kind: .html)
                }
                let found = [.bom, .meta].contains(resolution.source) ? resolution.encoding : .windows1252
                if found.name.lowercased() != test.encoding.lowercased() {
                    failures.append(
                        "\(file): \(String(decoding: test.data.prefix(120), as: UTF8.self).debugDescription) → "
                            + "\(found.name), expected \(test.encoding)")
                }
            }
        }
        print("html5lib encoding tests: \(total - failures.count) of \(total) pass")
        #expect(total == 82)
        #expect(failures.isEmpty, "\(failures)")
    }

    // MARK: uchardet and chardet texts

    struct ManifestRow {
        var file: String
        var sha256: String
        var whatwgName: String?
        var bom: String?
    }

    static func manifest(_ folder: String) throws -> [ManifestRow] {
        let text = String(decoding: try Corpora.bytes("\(folder)/MANIFEST.jsonl"), as: UTF8.self)
        return try text.split(separator: "\n").compactMap { line in
            let row = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard let sha = row["utf8_sha256"] as? String, let file = row["file"] as? String else { return nil }
            return ManifestRow(
                file: "\(folder)/\(file)", sha256: sha, whatwgName: row["whatwg_name"] as? String,
                bom: row["bom"] as? String)
        }
    }

    /// Whether a WHATWG decoder can give the file's text: its encoding is a WHATWG encoding, or it is UTF-8 with a
    /// BOM (`utf-8-sig`). UTF-32, IBM852, EUC-TW, … are not, and neither is ISO-2022-KR, whose labels WHATWG maps to
    /// the `replacement` encoding (one U+FFFD: tested in TextDecodingTests).
    static func isWHATWG(_ row: ManifestRow) -> Bool {
        (row.whatwgName != nil || row.bom == "utf-8") && row.whatwgName != "replacement"
    }

    /// Where the manifest's text (CPython's codec) differs from what the WHATWG decoder gives, by design: the code point
    /// CPython gives and the one WHATWG gives instead. CPython's `shift_jis` is JIS X 0208's mapping, which decodes
    /// 0x817C to U+2212 MINUS SIGN; WHATWG's Shift_JIS is Windows' code page 932, which decodes it to U+FF0D FULLWIDTH
    /// HYPHEN-MINUS (the Encoding Standard's Shift_JIS encoder maps U+2212 to U+FF0D for that reason).
    static let pythonDeviations: [String: (python: Unicode.Scalar, whatwg: Unicode.Scalar)] = [
        "charset/chardet/SHIFT_JIS/_chromium_Shift-JIS_with_no_encoding_specified.html": ("\u{2212}", "\u{FF0D}")
    ]

    /// The text as the manifest's codec gives it: ``pythonDeviations`` undone.
    static func asManifest(_ text: [UInt8], file: String) -> [UInt8] {
        guard let deviation = pythonDeviations[file] else { return text }
        let scalars = String(decoding: text, as: UTF8.self).unicodeScalars.map {
            $0 == deviation.whatwg ? deviation.python : $0
        }
        return Array(String(String.UnicodeScalarView(scalars)).utf8)
    }

    @Test("the uchardet and chardet texts, with their charset given, decode to the expected text")
    func corporaDeclared() throws {
        var failures: [String] = []
        var total = 0
        for folder in ["charset/uchardet", "charset/chardet"] {
            for row in try Self.manifest(folder) where Self.isWHATWG(row) {
                total += 1
                let (text, info) = try Self.decode(try Corpora.bytes(row.file), charset: row.whatwgName ?? "utf-8")
                if Self.sha256(Self.asManifest(text, file: row.file)) != row.sha256 {
                    failures.append("\(row.file) as \(info.charset) (\(info.replacements) replaced)")
                }
            }
        }
        print("charset corpora, charset given: \(total - failures.count) of \(total) decode to the expected text")
        #expect(total >= 220)
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("the uchardet and chardet texts, with no charset given, decode to the expected text on 95 % of files")
    func corporaDetected() throws {
        var failures: [String] = []
        var total = 0
        var allTotal = 0
        var allPassed = 0
        for folder in ["charset/uchardet", "charset/chardet"] {
            for row in try Self.manifest(folder) {
                let (text, info) = try Self.decode(try Corpora.bytes(row.file), charset: nil)
                let passed = Self.sha256(Self.asManifest(text, file: row.file)) == row.sha256
                allTotal += 1
                if passed { allPassed += 1 }
                guard Self.isWHATWG(row) else { continue }
                total += 1
                if !passed { failures.append("\(row.file) as \(info.charset) (\(info.source))") }
            }
        }
        let rate = Double(total - failures.count) / Double(max(total, 1))
        print(
            "charset corpora, no charset given: \(total - failures.count) of \(total) files in WHATWG encodings "
                + "(\(String(format: "%.1f", rate * 100)) %), \(allPassed) of \(allTotal) of all files with a text; "
                + "failing: \(failures)")
        #expect(total >= 220)
        #expect(rate >= 0.95, "\(failures)")
    }
}

import CBrotliEncoder
import CLZ4
import CZlib
import Foundation
import RespDecodeTestSupport
import Testing

/// The rows of docs/reliability.md#hostile-inputs that the other hostile suites do not cover, through the
/// real binary within the same budgets (HostileDocumentTests.runLimited: 1 s of CPU time, 256 MB resident, nothing
/// on stderr, exit 0): HTTP framing (docs/reliability.md#raw-http-framing), WARC and HAR
/// (docs/reliability.md#warc-and-har), the rest of Content-Encoding (docs/reliability.md#content-encoding), JSON
/// (docs/reliability.md#json)
/// and the process-level rules (docs/reliability.md#the-process). docs/reliability.md#hostile-inputs maps every row to
/// its test.
extension HostileDocumentTests {
    @Suite("Hostile catalogue")
    struct HostileCatalogueTests {
        /// One input and what each of its lines must be: "ok", "ok+warning" (ok with a warning containing the
        /// text after the plus), or an error code.
        struct Row: CustomTestStringConvertible, Sendable {
            var name: String
            var input: Data
            var expected: [String]
            var arguments: [String] = []
            var testDescription: String { name }
        }

        static func check(_ row: Row) throws {
            let lines = try HostileDocumentTests.runLimited(input: row.input, name: row.name, arguments: row.arguments)
            #expect(lines.count == row.expected.count, "\(row.name): \(lines)")
            for (line, expected) in zip(lines, row.expected) {
                let error = line["error"] as? [String: Any]
                let warnings = (line["warnings"] as? [String]) ?? []
                if expected == "ok" {
                    #expect(line["ok"] as? Bool == true, "\(row.name): \(line)")
                } else if expected.hasPrefix("ok+") {
                    let text = String(expected.dropFirst(3))
                    #expect(line["ok"] as? Bool == true, "\(row.name): \(line)")
                    #expect(warnings.contains { $0.contains(text) }, "\(row.name): \(warnings)")
                } else {
                    #expect(error?["code"] as? String == expected, "\(row.name): \(line)")
                }
            }
        }

        static let json = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"

        static func http(_ text: String) -> Data { Data(text.utf8) }

        static func jsonResponse(_ body: Data) -> Data {
            Data("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
                + body
        }

        // MARK: docs/reliability.md#raw-http-framing raw HTTP/1.1 streams

        static let httpRows: [Row] = {
            var rows = [
                Row(
                    name: "TE chunked and Content-Length",
                    input: http(json + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
                    expected: ["ok+chunked overrides Content-Length"]),
                Row(
                    name: "differing duplicate Content-Length",
                    input: http(json + "Content-Length: 2\r\nContent-Length: 0\r\n\r\n{}"),
                    expected: ["malformedRecord"]),
                Row(
                    name: "Content-Length list 1, 2", input: http(json + "Content-Length: 1, 2\r\n\r\n{}"),
                    expected: ["malformedRecord"]),
                Row(
                    name: "identical duplicate Content-Length",
                    input: http(json + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}"), expected: ["ok"]),
            ]
            for value in ["-1", "+5", "0x10", "1 3", "", "1000000000000000000000"] {
                rows.append(
                    Row(
                        name: "Content-Length '\(value)'", input: http(json + "Content-Length: \(value)\r\n\r\n{}"),
                        expected: ["malformedRecord"]))
            }
            for size in ["ffffffffffffffffff", "", "-1", "+4", "0x4", " 2"] {
                rows.append(
                    Row(
                        name: "chunk size '\(size)'",
                        input: http(json + "Transfer-Encoding: chunked\r\n\r\n\(size)\r\n{}\r\n0\r\n\r\n"),
                        expected: ["malformedRecord"]))
            }
            rows += [
                Row(
                    name: "chunk data not followed by CRLF",
                    input: http(json + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n"),
                    expected: ["malformedRecord"]),
                Row(
                    name: "missing last chunk", input: http(json + "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n"),
                    expected: ["truncatedRecord"]),
                // Chunked not last: the body runs to the end of the input, chunk framing and all (RFC 9112 §6.3).
                Row(
                    name: "Transfer-Encoding chunked, gzip",
                    input: http(json + "Transfer-Encoding: chunked, gzip\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
                    expected: ["invalidJSON"]),
                Row(
                    name: "Transfer-Encoding chunkedchunked",
                    input: http(json + "Transfer-Encoding: chunkedchunked\r\n\r\n{}"),
                    expected: ["ok+'chunkedchunked' is not undone"]),
                Row(
                    name: "Transfer-Encoding identity with Content-Length",
                    input: http(json + "Transfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}"),
                    expected: ["malformedRecord"]),
                Row(
                    name: "obs-fold", input: http(json + "X-A: a\r\n  b\r\nContent-Length: 2\r\n\r\n{}"),
                    expected: ["ok+obsolete line folding"]),
                Row(
                    name: "obs-fold in Transfer-Encoding",
                    input: http(json + "Transfer-Encoding: chunked\r\n  x\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
                    expected: ["malformedRecord"]),
                Row(
                    name: "1 MB header line",
                    input: http(
                        json + "X-Big: " + String(repeating: "a", count: 1_000_000) + "\r\nContent-Length: 2\r\n\r\n{}"),
                    expected: ["limitExceeded"]),
                Row(
                    name: "100,000 header fields",
                    input: http(json + (0..<100_000).map { "X-\($0): a\r\n" }.joined() + "Content-Length: 2\r\n\r\n{}"),
                    expected: ["limitExceeded"]),
                Row(
                    name: "NUL in a field name", input: http(json + "X\u{0}A: 1\r\nContent-Length: 2\r\n\r\n{}"),
                    expected: ["malformedRecord"]),
                Row(
                    name: "bare CR in a field name", input: http(json + "X\rA: 1\r\nContent-Length: 2\r\n\r\n{}"),
                    expected: ["malformedRecord"]),
                Row(
                    name: "white space before the colon", input: http(json + "X-A : 1\r\nContent-Length: 2\r\n\r\n{}"),
                    expected: ["malformedRecord"]),
                // No body for 204 and 304 whatever Content-Length says: the next response is read where it starts.
                Row(
                    name: "204 with Content-Length",
                    input: http(
                        "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n" + json + "Content-Length: 2\r\n\r\n{}"),
                    expected: ["ok", "ok"]),
                Row(
                    name: "304 with Content-Length",
                    input: http(
                        "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n" + json + "Content-Length: 2\r\n\r\n{}"),
                    expected: ["unacceptableStatusCode", "ok"]),
                Row(
                    name: "1xx before the response",
                    input: http("HTTP/1.1 100 Continue\r\n\r\n" + json + "Content-Length: 2\r\n\r\n{}"),
                    expected: ["ok+interim response 100"]),
                Row(
                    name: "neither Content-Length nor Transfer-Encoding", input: http(json + "\r\n{\"a\":1}"),
                    expected: ["ok"]),
            ]
            return rows
        }()

        @Test(arguments: httpRows)
        func httpFraming(_ row: Row) throws { try Self.check(row) }

        // MARK: docs/reliability.md#warc-and-har WARC and HAR

        static func warc(_ block: String, lengthField: String? = nil, extra: String = "") -> Data {
            Data(
                ("WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:1>\r\n"
                    + "Content-Type: application/http; msgtype=response\r\n\(extra)"
                    + "Content-Length: \(lengthField ?? String(block.utf8.count))\r\n\r\n\(block)\r\n\r\n").utf8)
        }

        static let okHTTP = json + "Content-Length: 2\r\n\r\n{}"

        /// A WARC response record written wrong the way `variant` says (docs/framings.md#warc, the repairs).
        static func lenientWARC(_ variant: LenientVariant, _ n: Int) -> Data {
            let body = "{\"n\":\(n)}"
            let block = json + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
            let lines = [
                "WARC/1.1", "WARC-Type: response", "WARC-Record-ID: <urn:uuid:\(n)>",
                "WARC-Target-URI: http://example.com/\(n)", "Content-Type: application/http; msgtype=response",
                "Content-Length: \(block.utf8.count + variant.lengthDelta)",
            ]
            return Data(
                (lines.joined(separator: variant.eol) + variant.eol + variant.eol + block + variant.separator).utf8)
        }

        struct LenientVariant: Sendable {
            var name: String
            var eol = "\r\n"
            var separator: String
            var lengthDelta = 0
            /// What the warning of every record says.
            var warning: String
        }

        static let lenientVariants = [
            LenientVariant(
                name: "one CRLF", separator: "\r\n", warning: "record end repaired: the block is followed by CRLF"),
            LenientVariant(
                name: "LF LF", separator: "\n\n", warning: "record end repaired: the block is followed by LF LF"),
            LenientVariant(
                name: "nothing", separator: "", warning: "record end repaired: the block is followed by nothing"),
            LenientVariant(
                name: "CR CR LF line ends", eol: "\r\r\n", separator: "\r\r\n\r\r\n",
                warning: "WARC header lines end CR CR LF: read as CRLF"),
            LenientVariant(
                name: "Content-Length counts CRLF CRLF", separator: "\r\n\r\n", lengthDelta: 4,
                warning: "its Content-Length may count line ends that end the block"),
        ]

        /// A plain ARC v1 file: its filedesc record, then one record per (URL, block, Archive-length written or nil).
        static func arc(_ records: [(String, String, String?)]) -> Data {
            let version = "1 1 test\nURL IP-address Archive-date Content-type Archive-length\n"
            var text = "filedesc://t.arc 0.0.0.0 20240102030405 text/plain \(version.utf8.count)\n\(version)\n"
            for (url, block, length) in records {
                text += "\(url) 192.0.2.1 20240102030405 text/html \(length ?? String(block.utf8.count))\n\(block)\n"
            }
            return Data(text.utf8)
        }

        static func har(_ contents: [String]) -> Data {
            let entries = contents.map {
                #"{"response":{"status":200,"headers":[{"name":"Content-Type","value":"application/json"}],"content":\#($0)}}"#
            }
            return Data(#"{"log":{"version":"1.2","entries":[\#(entries.joined(separator: ","))]}}"#.utf8)
        }

        static let containerRows: [Row] = [
            Row(
                name: "WARC Content-Length past the end of the file", input: warc(okHTTP, lengthField: "100000"),
                expected: ["truncatedRecord"]),
            Row(
                name: "WARC Content-Length negative", input: warc(okHTTP, lengthField: "-5") + warc(okHTTP),
                expected: ["malformedRecord", "ok"]),
            Row(
                name: "WARC Content-Length 2^64",
                input: warc(okHTTP, lengthField: "18446744073709551616") + warc(okHTTP),
                expected: ["malformedRecord", "ok"]),
            Row(
                name: "WARC-Truncated", input: warc(okHTTP, extra: "WARC-Truncated: length\r\n"),
                expected: ["ok"]),
            // The ARC header says 30 bytes, the record has 72: the failure runs to the next header line, and the
            // record there is read. A length past the end: the records inside it are still found.
            Row(
                name: "ARC header whose length lies",
                input: arc([("http://a.test/x", okHTTP, "30"), ("http://a.test/y", okHTTP, nil)]),
                expected: ["malformedRecord", "ok"]),
            Row(
                name: "ARC header whose length is past the end",
                input: arc([("http://a.test/x", okHTTP, "100000"), ("http://a.test/y", okHTTP, nil)]),
                expected: ["truncatedRecord", "ok"]),
            Row(
                name: "WARC one CRLF after each block",
                input: lenientWARC(lenientVariants[0], 0) + lenientWARC(lenientVariants[0], 1),
                expected: [
                    "ok+followed by CRLF then the next record, not CRLF CRLF",
                    "ok+followed by CRLF then the end of the input, not CRLF CRLF",
                ]),
            Row(
                name: "WARC LF LF after each block", input: lenientWARC(lenientVariants[1], 0),
                expected: ["ok+followed by LF LF, not CRLF CRLF"]),
            Row(
                name: "WARC nothing after a block", input: lenientWARC(lenientVariants[2], 0) + warc(okHTTP),
                expected: ["ok+followed by nothing then the next record, not CRLF CRLF", "ok"]),
            Row(
                name: "WARC CR CR LF line ends", input: lenientWARC(lenientVariants[3], 0),
                expected: ["ok+followed by CR CRLF CR CRLF then the end of the input, not CRLF CRLF"]),
            Row(
                name: "WARC Content-Length counting the CRLF CRLF",
                input: lenientWARC(lenientVariants[4], 0) + warc(okHTTP),
                expected: ["ok+its Content-Length may count line ends that end the block", "ok"]),
            Row(
                name: "WARC Content-Length 2 short, then CRLF CRLF",
                input: warc(okHTTP, lengthField: String(okHTTP.utf8.count - 2)) + warc(okHTTP),
                expected: ["malformedRecord", "ok"]),
            Row(
                name: "HAR invalid base64",
                input: har([
                    #"{"mimeType":"application/json","text":"!!!","encoding":"base64"}"#,
                    #"{"mimeType":"application/json","text":"{}"}"#,
                ]), expected: ["malformedRecord", "ok"]),
            // content.size and compression are the writer's claims; the bytes are what is decoded.
            Row(
                name: "HAR content.size and compression that lie",
                input: har([#"{"mimeType":"application/json","text":"{}","size":999,"compression":-50}"#]),
                expected: ["ok"]),
            Row(
                name: "HAR entry over the limits",
                input: har([
                    #"{"mimeType":"application/json","text":"\#(String(repeating: "x", count: 3 << 20))"}"#,
                    #"{"mimeType":"application/json","text":"{}"}"#,
                ]),
                expected: ["limitExceeded", "ok"], arguments: ["--max-body-bytes", "1MiB"]),
        ]

        @Test(arguments: containerRows)
        func containers(_ row: Row) throws { try Self.check(row) }

        /// A whole file of 30 records written wrong, plain and gzip per record: all 30 decoded, each with the warning
        /// that names the repair, and `length` as warcio gives it (plain: header and block; gzip: the member).
        @Test(arguments: lenientVariants.map(\.name))
        func warcLenientFileOfThirty(_ name: String) throws {
            let variant = try #require(Self.lenientVariants.first { $0.name == name })
            let records = (0..<30).map { Self.lenientWARC(variant, $0) }
            let members = records.map { HostileEncodingTests.gzip(data: Array($0), level: 6) }
            for (form, input) in [("plain", records.reduce(Data(), +)), ("gzip", Data(members.joined()))] {
                let lines = try HostileDocumentTests.runLimited(input: input, name: "\(name) \(form)")
                #expect(lines.count == 30, "\(name) \(form)")
                var offset = 0
                for (k, line) in lines.enumerated() {
                    let warnings = (line["warnings"] as? [String]) ?? []
                    #expect(line["ok"] as? Bool == true, "\(name) \(form) \(k): \(line)")
                    #expect(line["url"] as? String == "http://example.com/\(k)", "\(name) \(form) \(k)")
                    #expect((line["value"] as? [String: Any])?["n"] as? Int == k, "\(name) \(form) \(k): \(line)")
                    #expect(warnings.contains { $0.contains(variant.warning) }, "\(name) \(form) \(k): \(warnings)")
                    #expect(line["offset"] as? Int == offset, "\(name) \(form) \(k)")
                    let extent =
                        form == "gzip"
                        ? members[k].count : records[k].count - variant.separator.utf8.count + variant.lengthDelta
                    #expect(line["length"] as? Int == extent, "\(name) \(form) \(k): \(line)")
                    offset += form == "gzip" ? members[k].count : records[k].count
                }
            }
        }

        /// A corrupt middle member of a per-record .warc.gz costs that record only.
        @Test func warcGzipCorruptMiddleMember() throws {
            let member = HostileEncodingTests.gzip(data: Array(Self.warc(Self.okHTTP)), level: 6)
            var bad = member
            bad[14] ^= 0xFF
            try Self.check(
                Row(
                    name: "corrupt middle member", input: Data(member + bad + member),
                    expected: ["ok", "malformedRecord", "ok"]))
        }

        /// `bytes` as a zstd frame that declares a window of 2^`windowLog` bytes and no content size: raw blocks,
        /// written here, since an encoder shrinks the window to fit what it compresses.
        static func zstdRawFrame(_ bytes: [UInt8], windowLog: Int) -> [UInt8] {
            var frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, UInt8((windowLog - 10) << 3)]
            var start = 0
            repeat {
                let end = min(bytes.count, start + 100_000)
                let header = (end - start) << 3 | (end == bytes.count ? 1 : 0)
                frame += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16)] + bytes[start..<end]
                start = end
            } while start < bytes.count
            return frame
        }

        /// `bytes` as an LZ4 frame whose header states `contentSize`: the header as liblz4 begins a frame of that size
        /// (its checksum right), then the blocks of a frame of the true size (liblz4 will not end a frame that lies).
        static func lz4Frame(_ bytes: [UInt8], contentSize: UInt64) -> [UInt8] {
            var preferences = LZ4F_preferences_t()
            preferences.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled
            preferences.frameInfo.contentSize = UInt64(bytes.count)
            var frame = [UInt8](repeating: 0, count: LZ4F_compressFrameBound(bytes.count, &preferences))
            let size = LZ4F_compressFrame(&frame, frame.count, bytes, bytes.count, &preferences)
            precondition(LZ4F_isError(size) == 0)
            preferences.frameInfo.contentSize = contentSize
            let context = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: 1)
            defer { context.deallocate() }
            precondition(LZ4F_createCompressionContext(context, UInt32(LZ4F_VERSION)) == 0)
            defer { LZ4F_freeCompressionContext(context.pointee) }
            var header = [UInt8](repeating: 0, count: 64)
            let headerSize = LZ4F_compressBegin(context.pointee, &header, header.count, &preferences)
            precondition(headerSize == 15)
            return Array(header.prefix(15)) + frame[15..<size]
        }

        /// docs/reliability.md#warc-and-har: a `.warc.zst` frame that declares a window past the limit is refused
        /// before anything is allocated for it (one line), and the next record is read; a window at the limit is
        /// read. An LZ4 frame whose stated content size lies (larger or smaller) is one error line.
        @Test func warcFramesThatLie() throws {
            let record = Array(Self.warc(Self.okHTTP))
            try Self.check(
                Row(
                    name: "a zstd frame declaring a huge window",
                    input: Data(
                        Self.zstdRawFrame(record, windowLog: 41) + Self.zstdRawFrame(record, windowLog: 31)
                            + Self.zstdRawFrame(record, windowLog: 27)),
                    expected: ["malformedRecord", "malformedRecord", "ok"]))
            try Self.check(
                Row(
                    name: "an lz4 frame with a lying content size",
                    input: Data(
                        Self.lz4Frame(record, contentSize: 1 << 62) + Self.lz4Frame(record, contentSize: 5)
                            + Self.lz4Frame(record, contentSize: UInt64(record.count))),
                    expected: ["malformedRecord", "malformedRecord", "ok"]))
        }

        /// A wrong WARC-Payload-Digest is reported on the line (`digest`), not a failure (--strict-digests makes
        /// it one).
        @Test func warcDigestMismatch() throws {
            let input = Self.warc(Self.okHTTP, extra: "WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n")
            let lines = try HostileDocumentTests.runLimited(input: input, name: "digest mismatch")
            #expect(lines.count == 1 && lines.first?["ok"] as? Bool == true)
            #expect(lines.first?["digest"] as? String == "mismatch", "\(lines)")
        }

        // MARK: docs/reliability.md#wacz WACZ

        static func wacz(_ entries: [ZipFiles.Entry]) -> Data { Data(ZipFiles.make(entries)) }

        static let waczRows: [Row] = {
            let record = Array(warc(okHTTP))
            // 10 MB of zeros after a record, deflated at level 9: about 1000:1.
            let bomb = record + [UInt8](repeating: 0, count: 10_000_000)
            let bombs = wacz(
                [ZipFiles.Entry("archive/a.warc", record)]
                    + (1...3).map { ZipFiles.Entry("archive/bomb-\($0).warc", bomb, deflated: true) })
            precondition(bombs.count * 1000 < 3 * bomb.count + 1000 * 1000, "the bombs inflate about 1000:1")
            let lying = ZipFiles.declaring(
                size: 1000, for: "archive/bomb.warc",
                in: ZipFiles.make([ZipFiles.Entry("archive/bomb.warc", bomb, deflated: true)]))
            var crc = ZipFiles.make([ZipFiles.Entry("archive/a.warc", record)])
            let id = crc.firstRange(of: Array("urn:uuid:1".utf8))!
            crc[id.lowerBound] = UInt8(ascii: "U")
            return [
                Row(
                    name: "a WACZ whose entries inflate 1000:1", input: bombs,
                    expected: ["ok", "limitExceeded", "limitExceeded", "limitExceeded"]),
                Row(
                    name: "a WACZ whose entry inflates 1000:1 and declares 1000 bytes", input: Data(lying),
                    expected: ["ok", "malformedRecord"]),
                Row(
                    name: "a WACZ whose entries overlap", input: Data(ZipFiles.overlapping(record, count: 1000)),
                    expected: ["malformedRecord"]),
                Row(
                    name: "a WACZ whose entries share one local header",
                    input: Data(ZipFiles.sharingOneEntry(record, count: 10_000)), expected: ["malformedRecord"]),
                Row(name: "a WACZ entry with a CRC error", input: Data(crc), expected: ["ok", "malformedRecord"]),
                Row(
                    name: "a ZIP that is not a WACZ", input: wacz([ZipFiles.Entry("data/a.warc", record)]),
                    expected: ["malformedRecord"]),
            ]
        }()

        @Test(arguments: waczRows)
        func waczArchives(_ row: Row) throws { try Self.check(row) }

        // MARK: docs/reliability.md#content-encoding the rest of Content-Encoding

        static func encoded(_ body: [UInt8], _ coding: String) -> Data {
            Data(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: \(coding)\r\nContent-Length: \(body.count)\r\n\r\n"
                    .utf8)
                + Data(body)
        }

        @Test func encodingFaults() throws {
            let gzip = HostileEncodingTests.gzip(data: Array(#"{"a":1}"#.utf8), level: 6)
            var crc = gzip
            crc[crc.count - 6] ^= 1
            var length = gzip
            length[length.count - 2] ^= 1
            let wide = HostileEncodingTests.brotli(
                repeating: 0x20, count: 1 << 20, quality: 5, lgwin: 26, largeWindow: true)
            for row in [
                Row(
                    name: "gzip cut short", input: Self.encoded(Array(gzip.dropLast(6)), "gzip"),
                    expected: ["contentDecodingFailed"]),
                Row(name: "gzip bad CRC", input: Self.encoded(crc, "gzip"), expected: ["contentDecodingFailed"]),
                Row(name: "gzip bad ISIZE", input: Self.encoded(length, "gzip"), expected: ["contentDecodingFailed"]),
                Row(
                    name: "bytes after the gzip member", input: Self.encoded(gzip + Array("garbage".utf8), "gzip"),
                    expected: ["ok+after the end of the gzip data"]),
                Row(name: "brotli large window", input: Self.encoded(wide, "br"), expected: ["contentDecodingFailed"]),
            ] {
                try Self.check(row)
            }
        }

        // MARK: docs/reliability.md#json JSON

        static let jsonRows: [Row] = {
            func row(_ name: String, _ body: String, _ expected: String) -> Row {
                Row(name: "JSON \(name)", input: jsonResponse(Data(body.utf8)), expected: [expected])
            }
            return [
                row("nesting 512", String(repeating: "[", count: 512) + String(repeating: "]", count: 512), "ok"),
                row(
                    "nesting 513", String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
                    "limitExceeded"),
                row("nesting 10^6", String(repeating: "[", count: 1_000_000), "limitExceeded"),
                row(
                    "10^5 nested objects",
                    String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000),
                    "limitExceeded"),
                // Numbers are copied as written: no value is lost to a double or an integer type.
                row("1e400", "1e400", "ok"), row("-1e400", "-1e400", "ok"), row("1e-400", "1e-400", "ok"),
                row("2.5e-324", "2.5e-324", "ok"), row("a 30-digit integer", "123456789012345678901234567890", "ok"),
                row("-2^63-1", "-9223372036854775809", "ok"), row("2^64-1", "18446744073709551615", "ok"),
                row("01", "01", "invalidJSON"), row("+1", "+1", "invalidJSON"), row("NaN", "NaN", "invalidJSON"),
                row("Infinity", "Infinity", "invalidJSON"), row(".5", ".5", "invalidJSON"),
                row("1.", "1.", "invalidJSON"),
                row("0x10", "0x10", "invalidJSON"), row("a comment", "[1]//c", "invalidJSON"),
                row("single quotes", "['a']", "invalidJSON"), row("[1,]", "[1,]", "invalidJSON"),
                row("{\"a\":1,}", "{\"a\":1,}", "invalidJSON"),
                // Duplicate keys: kept as written (the last one wins for any reader of the line).
                row("duplicate keys", "{\"a\":1,\"a\":2}", "ok"),
                row("lone surrogate", "\"\\ud800\"", "invalidJSON"),
                row("a raw control character", "\"\u{1}\"", "invalidJSON"),
                row("\\u0000", "\"\\u0000\"", "ok"),
            ] + [
                Row(
                    name: "JSON with a BOM", input: jsonResponse(Data([0xEF, 0xBB, 0xBF]) + Data("{}".utf8)),
                    expected: ["ok"]),
                Row(
                    name: "JSON in UTF-16LE", input: jsonResponse(Data([0xFF, 0xFE, 0x7B, 0, 0x7D, 0])),
                    expected: ["ok"]),
                Row(
                    name: "JSON overlong UTF-8", input: jsonResponse(Data([0x22, 0xC0, 0xAF, 0x22])),
                    expected: ["invalidJSON"]),
                // Bodies are bounded before any parsing: a 70 MB body is refused by its Content-Length, unread.
                Row(
                    name: "JSON of 70 MB",
                    input: jsonResponse(Data("[".utf8) + Data(repeating: 0x31, count: 70_000_000) + Data("]".utf8)),
                    expected: ["limitExceeded"]),
            ]
        }()

        @Test(arguments: jsonRows)
        func jsonDocuments(_ row: Row) throws { try Self.check(row) }

        // MARK: docs/reliability.md#the-process the process

        /// Foundation's plist readers crash or leak on hostile input (docs/reliability.md#property-lists): no source
        /// file
        /// calls them; the plist decoder is respdecode's own.
        @Test func noFoundationPlistReaderIsCalled() throws {
            let sources = EndToEndTests.packageRoot.appendingPathComponent("Sources")
            let walker = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
            var checked = 0
            for case let file as URL in walker where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                checked += 1
                // Code lines only: the comments say why these are not used.
                var uncommented = ""
                var rest = Substring(text)
                while let open = rest.range(of: "/*") {
                    uncommented += rest[..<open.lowerBound]
                    rest = rest[open.upperBound...]
                    guard let close = rest.range(of: "*/") else {
                        rest = ""
                        break
                    }
                    rest = rest[close.upperBound...]
                }
                uncommented += rest
                let code = uncommented.split(separator: "\n").filter { !$0.drop { $0 == " " }.hasPrefix("//") }
                for name in ["PropertyListSerialization", "PropertyListDecoder", "JSONSerialization"] {
                    #expect(!code.contains { $0.contains(name) }, "\(file.lastPathComponent) uses \(name)")
                }
            }
            #expect(checked > 50)
        }
    }
}

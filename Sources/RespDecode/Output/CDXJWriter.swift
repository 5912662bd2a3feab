/// Writes a CDXJ index line for each indexed WARC or ARC record (`--output cdxj`, `--index-file`), the line
/// webrecorder's cdxj-indexer (1.5.0, default fields) writes for it (docs/output.md#cdxj-index):
///
///     com,example)/ 20170306040206 {"url": "http://example.com/", "mime": "text/html", "status": "200", "digest": "sha1:G7HR…", "length": "1228", "offset": "784", "filename": "example.warc.gz"}
///
/// The SURT key of the target URI (``SURT``; `-` without one), the 14-digit timestamp of `WARC-Date` (its first six
/// runs of digits), and a JSON object written as Python writes it (`", "` and `": "` between members, every value a
/// string, non-ASCII characters as `\uXXXX`) with, each when known:
///
///     url ....... WARC-Target-URI
///     mime ...... warc/revisit for a revisit; the HTTP Content-Type of a response read as HTTP; the WARC
///                 Content-Type of other records; up to its first `;` or white space
///     status .... the HTTP status of a response or revisit read as HTTP
///     digest .... WARC-Payload-Digest as written; without one (not for revisit or warcinfo), `sha1:` and the
///                 Base32 SHA-1 of the payload as stored (after the HTTP head, chunked as it was)
///     length, offset ... the record's extent in its input (docs/output.md#record-extents)
///     filename .. the input's file name without its directories (`-` for standard input)
///
/// Indexed: the records the framer yields (`--warc-types`; when an index is written, the default is cdxj-indexer's
/// response, revisit, resource and metadata, of which a resource or metadata record of Content-Type
/// `application/warc-fields` is left out), with a `WARC-Date` of at least year, month and day.
///
/// An ARC record is indexed as warcio reads it, a `response` record (so when `response` is among the types): its URL,
/// the timestamp warcio makes of its Archive-date (``arcTimestamp(_:)``), the HTTP Content-Type and status when its
/// block was read as HTTP (no `mime` otherwise: warcio gives every ARC record the WARC Content-Type
/// `application/http;msgtype=response`), the SHA-1 of its payload as stored. Its `filedesc://` record, which warcio
/// reads as a `warcinfo`, is not yielded by the framer. Framing failures and records from neither give no line.
public struct CDXJWriter: LineWriter {
    /// The record types cdxj-indexer indexes by default.
    public static let recordTypes: Set<String> = ["response", "revisit", "resource", "metadata"]

    /// Leave out resource and metadata records of `application/warc-fields` (cdxj-indexer does with its default types).
    let skipWARCFields: Bool
    /// Index ARC records: warcio reads them as `response` records, so only when `response` is among the types.
    let indexARC: Bool

    /// - Parameter types: the WARC record types framed (nil: all); with ``recordTypes``, records of
    ///   `application/warc-fields` are left out, as cdxj-indexer does.
    public init(types: Set<String>?) {
        let types = types.map { Set($0.map { $0.lowercased() }) }
        skipWARCFields = types == Self.recordTypes
        indexARC = types?.contains("response") ?? true
    }

    public func writeLine(for item: FramedItem, source: ResultLine.Source, into out: OutputBuffer) -> LineOutcome {
        var outcome = LineOutcome()
        guard case .record(let record) = item else {
            if case .failure(let failure) = item { outcome.errorCode = failure.error.code }
            return outcome
        }
        outcome.ok = true
        outcome.bodyBytes = record.body.count
        guard let entry = entry(record) else { return outcome }

        if let url = record.url {
            out.append(Array((SURT.key(url) ?? url).utf8))
        } else {
            out.append(UInt8(ascii: "-"))
        }
        out.append(UInt8(ascii: " "))
        out.append(Array(entry.timestamp.utf8))
        out.append(ascii: " {")
        var first = true
        func member(_ name: String, _ value: String) {
            if !first { out.append(ascii: ", ") }
            first = false
            Self.appendPythonJSON(name, to: out)
            out.append(ascii: ": ")
            Self.appendPythonJSON(value, to: out)
        }
        if let url = record.url { member("url", url) }
        if let mime = entry.mime { member("mime", Self.mediaType(mime)) }
        if entry.hasStatus { member("status", String(record.status)) }
        if let digest = entry.digest() { member("digest", digest) }
        if let length = source.length { member("length", String(length)) }
        member("offset", String(source.offset))
        member("filename", Self.fileName(source.input))
        out.append(ascii: "}\n")
        return outcome
    }

    /// What a record's line says besides its URL and extent; nil for a record that is not indexed.
    struct Entry {
        var timestamp: String
        /// The media type, before it is cut at its first `;` or white space.
        var mime: String?
        var hasStatus: Bool
        /// The `digest`, computed (over the payload) only when the line is written.
        var digest: () -> String?
    }

    /// The entry of a WARC record, or of an ARC record: warcio reads an ARC record as a WARC `response` (its
    /// `filedesc://` record as a `warcinfo`, which the framer does not yield), with the Archive-date as its date,
    /// and no Content-Type but the HTTP one.
    func entry(_ record: ResponseRecord) -> Entry? {
        if let warc = record.warc {
            guard let date = warc.date, let timestamp = Self.timestamp(date) else { return nil }
            let type = warc.type.lowercased()
            let isHTTP = warc.httpBlock
            if skipWARCFields, type == "resource" || type == "metadata",
                !isHTTP, record.headers.first("Content-Type") == "application/warc-fields"
            {
                return nil
            }
            let mime: String? =
                if type == "revisit" {
                    "warc/revisit"
                } else if type == "response" || type == "request" {
                    isHTTP ? record.headers.first("Content-Type") : nil
                } else {
                    record.headers.first("Content-Type")
                }
            return Entry(
                timestamp: timestamp, mime: mime, hasStatus: isHTTP && (type == "response" || type == "revisit"),
                digest: {
                    warc.payloadDigest
                        ?? (type == "revisit" || type == "warcinfo" ? nil : record.storedPayloadSHA1())
                })
        }
        guard let arc = record.arc, indexARC else { return nil }
        return Entry(
            timestamp: Self.arcTimestamp(arc.date ?? ""),
            mime: arc.httpBlock ? record.headers.first("Content-Type") : nil,
            hasStatus: arc.httpBlock,
            digest: { record.storedPayloadSHA1() })
    }

    /// `20170306040206` from `2017-03-06T04:02:06Z`: the first six runs of digits (year, month, day, and hour,
    /// minute, second or 0), each but the year in two digits; nil without year, month and day.
    static func timestamp(_ date: String) -> String? {
        let runs = date.utf8.split { !(0x30...0x39).contains($0) }.prefix(6).map {
            Int(String(decoding: $0, as: UTF8.self))
        }
        guard runs.count >= 3, runs.allSatisfy({ $0 != nil }) else { return nil }
        var numbers = runs.map { $0 ?? 0 }
        while numbers.count < 6 { numbers.append(0) }
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : String(n) }
        let year = String(numbers[0])
        return String(repeating: "0", count: max(0, 4 - year.count)) + year + numbers[1...].map(two).joined()
    }

    /// The 14-digit timestamp warcio makes of an ARC Archive-date (`timestamp_to_datetime`): the date padded to six
    /// characters from `299912`, then year (characters 0-3), month, day, hour, minute and second (2 characters each),
    /// each read as a number (a missing or unreadable field is its largest value) and clamped: year to 1900...2999,
    /// month to 1...12, day to the month's days, hour to 0...23, minute and second to 0...59.
    static func arcTimestamp(_ date: String) -> String {
        var characters = Array(date.unicodeScalars)
        let pad = Array("299912".unicodeScalars)
        if characters.count < pad.count { characters += pad[characters.count...] }
        func field(_ start: Int, _ end: Int, _ range: ClosedRange<Int>) -> Int {
            guard characters.count >= end, let value = pythonInt(characters[start..<end]) else {
                return range.upperBound
            }
            return min(max(value, range.lowerBound), range.upperBound)
        }
        let year = field(0, 4, 1900...2999)
        let month = field(4, 6, 1...12)
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        let numbers = [
            year, month, field(6, 8, 1...days), field(8, 10, 0...23), field(10, 12, 0...59), field(12, 14, 0...59),
        ]
        return numbers.map { $0 < 10 ? "0\($0)" : String($0) }.joined()
    }

    /// Python's `int()` of a string: white space (Unicode White_Space) around an optional sign and decimal digits (any script's), with
    /// single underscores between digits; nil otherwise.
    static func pythonInt(_ scalars: ArraySlice<Unicode.Scalar>) -> Int? {
        func isSpace(_ s: Unicode.Scalar) -> Bool { s.properties.isWhitespace }
        var text = scalars.drop(while: isSpace)
        while let last = text.last, isSpace(last) { text = text.dropLast() }
        var negative = false
        if let sign = text.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            text = text.dropFirst()
        }
        guard let first = text.first, first != "_", text.last != "_" else { return nil }
        var value = 0
        var underscore = false
        for scalar in text {
            if scalar == "_" {
                guard !underscore else { return nil }
                underscore = true
                continue
            }
            underscore = false
            guard scalar.properties.numericType == .decimal, let digit = scalar.properties.numericValue else {
                return nil
            }
            let (product, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = product + Int(digit)
        }
        return negative ? -value : value
    }

    /// A media type up to its first `;` or white space.
    static func mediaType(_ value: String) -> String {
        let bytes = value.utf8
        let end = bytes.firstIndex { $0 == UInt8(ascii: ";") || $0 == 0x20 || (0x09...0x0D).contains($0) }
        return String(decoding: bytes[..<(end ?? bytes.endIndex)], as: UTF8.self)
    }

    /// The input's name without its directories; `-` for standard input.
    static func fileName(_ input: String?) -> String {
        guard let input else { return "-" }
        return input.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? input
    }

    /// A JSON string as Python's `json.dumps` writes it (`ensure_ascii`): `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`,
    /// other control characters and every non-ASCII character as `\uXXXX` (lower-case hex; surrogate pairs past
    /// U+FFFF).
    static func appendPythonJSON(_ string: String, to out: OutputBuffer) {
        out.append(UInt8(ascii: "\""))
        let digits = Array("0123456789abcdef".utf8)
        func unit(_ value: UInt32) {
            out.append(ascii: "\\u")
            for shift in [12, 8, 4, 0] { out.append(digits[Int(value >> UInt32(shift) & 15)]) }
        }
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0x22: out.append(ascii: "\\\"")
            case 0x5C: out.append(ascii: "\\\\")
            case 0x0A: out.append(ascii: "\\n")
            case 0x0D: out.append(ascii: "\\r")
            case 0x09: out.append(ascii: "\\t")
            case 0x08: out.append(ascii: "\\b")
            case 0x0C: out.append(ascii: "\\f")
            case 0..<0x20: unit(scalar.value)
            case 0x20..<0x80: out.append(UInt8(scalar.value))
            case 0x80..<0x10000: unit(scalar.value)
            default:
                let v = scalar.value - 0x10000
                unit(0xD800 + (v >> 10))
                unit(0xDC00 + (v & 0x3FF))
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

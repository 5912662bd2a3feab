/// Writes a CDXJ index line for each indexed WARC record (`--output cdxj`, `--index-file`), the line webrecorder's
/// cdxj-indexer (1.5.0, default fields) writes for it (docs/output.md#cdxj-index):
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
/// `application/warc-fields` is left out), with a `WARC-Date` of at least year, month and day. Framing failures and
/// records that are not from WARC give no line.
public struct CDXJWriter: LineWriter {
    /// The record types cdxj-indexer indexes by default.
    public static let recordTypes: Set<String> = ["response", "revisit", "resource", "metadata"]

    /// Leave out resource and metadata records of `application/warc-fields` (cdxj-indexer does with its default types).
    let skipWARCFields: Bool

    /// - Parameter types: the WARC record types framed (nil: all); with ``recordTypes``, records of
    ///   `application/warc-fields` are left out, as cdxj-indexer does.
    public init(types: Set<String>?) {
        skipWARCFields = types == Self.recordTypes
    }

    public func writeLine(for item: FramedItem, source: ResultLine.Source, into out: OutputBuffer) -> LineOutcome {
        var outcome = LineOutcome()
        guard case .record(let record) = item else {
            if case .failure(let failure) = item { outcome.errorCode = failure.error.code }
            return outcome
        }
        outcome.ok = true
        outcome.bodyBytes = record.body.count
        guard let warc = record.warc, let date = warc.date, let timestamp = Self.timestamp(date) else { return outcome }
        let type = warc.type.lowercased()
        let isHTTP = warc.httpBlock
        if skipWARCFields, type == "resource" || type == "metadata",
            !isHTTP, record.headers.first("Content-Type") == "application/warc-fields"
        {
            return outcome
        }

        if let url = record.url {
            out.append(Array((SURT.key(url) ?? url).utf8))
        } else {
            out.append(UInt8(ascii: "-"))
        }
        out.append(UInt8(ascii: " "))
        out.append(Array(timestamp.utf8))
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
        let mime: String? =
            if type == "revisit" {
                "warc/revisit"
            } else if type == "response" || type == "request" {
                isHTTP ? record.headers.first("Content-Type") : nil
            } else {
                record.headers.first("Content-Type")
            }
        if let mime { member("mime", Self.mediaType(mime)) }
        if isHTTP && (type == "response" || type == "revisit") { member("status", String(record.status)) }
        if let digest = warc.payloadDigest
            ?? (type == "revisit" || type == "warcinfo" ? nil : record.storedPayloadSHA1())
        {
            member("digest", digest)
        }
        if let length = source.length { member("length", String(length)) }
        member("offset", String(source.offset))
        member("filename", Self.fileName(source.input))
        out.append(ascii: "}\n")
        return outcome
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

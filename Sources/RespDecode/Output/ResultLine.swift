/// Writes the pieces of a result line (docs/output.md#the-result-line). Keys appear in this order, each only when it
/// has a value:
///
///     seq offset length input id url method ip arcDate warcType warcRecordId warcDate warcTruncated refersTo
///     payloadDigest revisitOf status contentType sniffed contentEncoding bodyBytes decodedBytes digest decoder ok value
///     error body trailers warnings
///
/// `seq`, `offset`, `decoder` and `ok` are always present; `status` and `contentType` whenever a response head was
/// read (`contentType` is `null` when the response had none) — unless `--fields` leaves them out
/// (docs/output.md#choosing-the-keys).
public struct ResultLine {
    /// What the line says about where the record came from.
    public struct Source: Sendable {
        public var seq: Int
        public var offset: Int64
        /// The record's extent from `offset` (archives only).
        public var length: Int64?
        public var input: String?
        public init(seq: Int, offset: Int64, length: Int64? = nil, input: String?) {
            self.seq = seq
            self.offset = offset
            self.length = length
            self.input = input
        }
    }

    let out: OutputBuffer
    /// The top-level keys written (`--fields`); the others are left out. Nested objects (a multipart part's) are
    /// written whole.
    let fields: OutputFields
    /// Where the line starts in `out`.
    private let start: Int

    init(_ out: OutputBuffer, fields: OutputFields = .all) {
        self.out = out
        self.fields = fields
        start = out.count
    }

    /// Whether the line has the key `field` (`--fields`).
    @inline(__always) func wants(_ field: OutputFields) -> Bool { fields.contains(field) }

    /// Opens the line: `{"seq":…,"offset":…[,"length":…][,"input":…]`, each as `--fields` asks. Without `seq`, the
    /// first key's comma is made the `{` when the line ends (``end()``).
    func begin(_ source: Source) {
        if wants(.seq) {
            out.append(ascii: "{\"seq\":")
            out.append(decimal: source.seq)
        }
        if wants(.offset) {
            key("offset")
            out.append(decimal: source.offset)
        }
        if let length = source.length, wants(.length) {
            key("length")
            out.append(decimal: length)
        }
        if let input = source.input, wants(.input) { string("input", input) }
    }

    /// `id`, `url`, `method`, the ARC record's `ip` and `arcDate`, and the WARC record's `warcType`, `warcRecordId`
    /// and `warcDate`, where known.
    func provenance(id: String?, url: String?, method: String?, warc: WARCRecordInfo?, arc: ARCRecordInfo? = nil) {
        if let id, wants(.id) { string("id", id) }
        if let url, wants(.url) { string("url", url) }
        if let method, wants(.method) { string("method", method) }
        if let arc {
            if let ip = arc.ip, wants(.ip) { string("ip", ip) }
            if let date = arc.date, wants(.arcDate) { string("arcDate", date) }
        }
        if let warc {
            if wants(.warcType) { string("warcType", warc.type) }
            if let recordId = warc.recordId, wants(.warcRecordId) { string("warcRecordId", recordId) }
            if let date = warc.date, wants(.warcDate) { string("warcDate", date) }
            if let truncated = warc.truncated, wants(.warcTruncated) { string("warcTruncated", truncated) }
        }
    }

    // MARK: Revisits (docs/output.md#revisits): kept apart from `provenance`, which other framings extend.

    /// A revisit's `refersTo` (`{"recordId","targetURI","date"}`, each when written), `payloadDigest` and, once
    /// resolved, `revisitOf` (`{"seq","input","offset"}`); nothing for other records unless `allDigests`
    /// (`respdecode frame` carries every record's `payloadDigest`, for a later run to resolve revisits against).
    func revisit(_ warc: WARCRecordInfo?, allDigests: Bool = false) {
        guard let warc else { return }
        if let refersTo = warc.refersTo, wants(.refersTo) {
            key("refersTo")
            var first = true
            for (name, value) in [
                ("recordId", refersTo.recordId), ("targetURI", refersTo.targetURI), ("date", refersTo.date),
            ] {
                guard let value else { continue }
                out.append(UInt8(ascii: first ? "{" : ","))
                first = false
                out.appendJSONString(name)
                out.append(UInt8(ascii: ":"))
                out.appendJSONString(value)
            }
            out.append(UInt8(ascii: "}"))
        }
        if let digest = warc.payloadDigest, wants(.payloadDigest),
            allDigests || asciiCaseInsensitiveEquals(warc.type, "revisit")
        {
            string("payloadDigest", digest)
        }
        if let origin = warc.revisitOf, wants(.revisitOf) {
            key("revisitOf")
            out.append(ascii: "{\"seq\":")
            out.append(decimal: origin.seq)
            if let input = origin.input {
                out.append(ascii: ",\"input\":")
                out.appendJSONString(input)
            }
            out.append(ascii: ",\"offset\":")
            out.append(decimal: origin.offset)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `"contentType"`: the MIME type, or `null`.
    func contentType(_ mimeType: String?) {
        guard wants(.contentType) else { return }
        key("contentType")
        if let mimeType { out.appendJSONString(mimeType) } else { out.append(ascii: "null") }
    }

    /// Closes the line with `}` and a line feed; without `seq` (`--fields`), first turns the first key's comma into
    /// the line's `{`.
    func end() {
        if !wants(.seq) {
            if out.count > start { out.base[start] = UInt8(ascii: "{") } else { out.append(UInt8(ascii: "{")) }
        }
        out.append(ascii: "}\n")
    }

    /// `,"name":`
    @inline(__always) func key(_ name: StaticString) {
        out.append(ascii: ",\"")
        out.append(ascii: name)
        out.append(ascii: "\":")
    }

    func string(_ name: StaticString, _ value: String) {
        key(name)
        out.appendJSONString(value)
    }

    func integer(_ name: StaticString, _ value: Int) {
        key(name)
        out.append(decimal: value)
    }

    func bool(_ name: StaticString, _ value: Bool) {
        key(name)
        if value { out.append(ascii: "true") } else { out.append(ascii: "false") }
    }

    func stringArray(_ name: StaticString, _ values: [String]) {
        key(name)
        out.append(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.appendJSONString(value)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Fields as an object; repeated names (in any case) are combined with ", " (RFC 9110 §5.3) under the first
    /// spelling seen.
    func fields(_ name: StaticString, _ fields: HeaderFields) {
        var order: [(name: String, value: String)] = []
        var index: [String: Int] = [:]
        for field in fields {
            let folded = field.name.lowercased()
            if let i = index[folded] {
                order[i].value += ", " + field.value
            } else {
                index[folded] = order.count
                order.append((field.name, field.value))
            }
        }
        key(name)
        out.append(UInt8(ascii: "{"))
        for (i, field) in order.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.appendJSONString(field.name)
            out.append(UInt8(ascii: ":"))
            out.appendJSONString(field.value)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Fields as `[[name, value], …]`: order, case and repeats kept (the ndjson input form `frame` writes).
    func fieldPairs(_ name: StaticString, _ fields: HeaderFields) {
        key(name)
        out.append(UInt8(ascii: "["))
        for (i, field) in fields.enumerated() {
            out.append(ascii: i == 0 ? "[" : ",[")
            out.appendJSONString(field.name)
            out.append(UInt8(ascii: ","))
            out.appendJSONString(field.value)
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "]"))
    }

    /// `,"name":"…"`: `bytes` in base64.
    func base64(_ name: StaticString, _ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { base64(name, $0) }
    }

    func base64(_ name: StaticString, _ bytes: UnsafeBufferPointer<UInt8>) {
        key(name)
        out.append(UInt8(ascii: "\""))
        out.appendBase64(bytes)
        out.append(UInt8(ascii: "\""))
    }

    /// `,"error":{…}`.
    func error(_ error: RecordError) {
        key("error")
        errorObject(error)
    }

    private func errorObject(_ error: RecordError) {
        out.append(ascii: "{\"code\":")
        out.appendJSONString(error.code.description)
        if let urlErrorCode = error.urlErrorCode {
            out.append(ascii: ",\"urlErrorCode\":")
            out.append(decimal: urlErrorCode)
        }
        out.append(ascii: ",\"message\":")
        out.appendJSONString(error.message)
        if let location = error.location {
            out.append(ascii: ",\"offset\":")
            out.append(decimal: location.offset)
            if let line = location.line, let column = location.column {
                out.append(ascii: ",\"line\":")
                out.append(decimal: line)
                out.append(ascii: ",\"column\":")
                out.append(decimal: column)
            }
        }
        if let underlying = error.underlying {
            out.append(ascii: ",\"underlying\":")
            errorObject(underlying)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// `,"body":{"bytes":…,"base64":"…","truncated":…}`: the failing response data, capped; nothing when empty.
    /// - Parameters:
    ///   - kept: the bytes kept.
    ///   - total: how many bytes the data had in all (at least `kept.count`).
    func body(_ kept: UnsafeBufferPointer<UInt8>, total: Int64) {
        guard total > 0 else { return }
        key("body")
        out.append(ascii: "{\"bytes\":")
        out.append(decimal: total)
        out.append(ascii: ",\"base64\":\"")
        out.appendBase64(kept)
        out.append(ascii: "\",\"truncated\":")
        if Int64(kept.count) < total { out.append(ascii: "true}") } else { out.append(ascii: "false}") }
    }
}

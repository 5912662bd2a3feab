/*
 Frames ndjson input (docs/framings.md#ndjson): one JSON object per line, for line-oriented engines (Spark RDD.pipe,
 Hadoop
 Streaming, GNU parallel --pipe), which split their input at line ends.

     {"status":200,"headers":[["Content-Type","application/json"]],"body":"{\"a\":1}","id":"r1"}

 Fields (others are ignored; a field that is null counts as absent):

     status ......... integer 100–999, required
     headers ........ [[name, value], …], or [{"name": …, "value": …}, …], or {name: value, …} where a value may be
                      an array of strings for a repeated field; fields keep their order
     body ........... text, taken as its UTF-8 bytes
     bodyBase64 ..... base64 (RFC 4648 §4, white space allowed); not together with body
     url, method .... strings
     id ............. a string, or a number echoed as its text

 Fields that `respdecode frame` writes, so that a record framed from WARC, HAR or raw HTTP decodes to the line a direct
 run gives it (all optional; docs/framings.md#fields-that-respdecode-frame-writes):

     contentDecoded . true: the body is already content-decoded (HAR); Content-Encoding is not undone again
     trailers ....... the chunked body's trailer fields, in the shapes of headers
     warnings ....... framing warnings, an array of strings, reported on the line
     warcType, warcRecordId, warcDate ... the WARC record's fields (warcType first: it and the fields below need it)
     warcTruncated .. the WARC record's WARC-Truncated
     ip, arcDate .... the ARC record's IP-address and Archive-date fields, as written
     digest ......... "ok" or "mismatch": the WARC payload digest's check, made when the record was framed
     payloadDigest .. WARC-Payload-Digest as written (a later --resolve-revisits run matches revisits with it)
     refersTo ....... {"recordId", "targetURI", "date"}: a revisit's WARC-Refers-To fields (strings, each optional)
     revisitOf ...... {"seq", "input", "offset"}: the response a revisit was resolved to when it was framed
     error .......... {"code", "message", "offset", "line", "column"}: input that could not be framed; code is
                      malformedRecord, truncatedRecord or limitExceeded. The line is that failure (status and
                      headers optional), its body the failure's excerpt, and bodyBytes how many input bytes it
                      stood for
     overLimitBodyBytes  with error: the body size of a record over the body limit, read as it was skipped
                      (docs/output.md#records-over-the-body-limit)

 The body is as it was on the wire: a Content-Encoding field is undone by the decoder chain (contentDecoded false).
 A record's offset is its line's first byte (after a UTF-8 BOM at the start of the input, which is skipped).

 Lines end with LF; a CR before it is dropped. Blank lines (only spaces, tabs, CR) are filler. The last line counts
 without a final LF too. A line that is not a valid record (not JSON, not an object, a missing or non-integer status,
 a field of the wrong type, both bodies, bad base64, a body over maxBodyBytes) is one failure, with its id, url and
 method when they could be read, and framing goes on with the next line. A line cut off by the end of the input
 (no final LF, and its JSON ends too soon) is truncatedRecord. A line longer than 2 × maxBodyBytes + maxHeaderBytes
 (a base64 body is 4/3 of its bytes, plus escapes and the other fields) is limitExceeded; it is skipped to its LF
 without being kept.
 */
import Glibc

/// Frames ndjson records, one per line. See the file comment for the rules.
public struct NDJSONFramer: RecordFramer, LentInputFramer {
    private let limits: Limits
    /// The longest line kept for parsing, in bytes, not counting its line end.
    let lineCap: Int

    /// The input lent by `decode` for the call (swapped in and back, which costs nothing), so that the steps read it
    /// directly; empty between calls. Unparsed input: `input[position...]`; the first `scanned` bytes after
    /// `position` hold no LF.
    var input = FramerInput()
    private var scanned = 0
    /// The input has ended (`decodeLast`).
    var finished = false

    /// While skipping a line over the cap: where it began and its first bytes.
    private var overlong: (start: Int64, excerpt: [UInt8])?

    var outbox = FramedItemQueue()

    /// Creates a framer.
    /// - Parameter limits: `maxBodyBytes` and `maxHeaderBytes` (the line cap), `maxDepth` and `maxErrorBodyBytes`
    ///   apply.
    public init(limits: Limits = Limits()) {
        self.limits = limits
        self.lineCap = limits.maxRecordTextBytes
    }

    public mutating func decode(buffer: inout FramerInput) -> FramedItem? {
        next(lending: &buffer, ended: false)
    }

    public mutating func decodeLast(buffer: inout FramerInput, seenEOF: Bool) -> FramedItem? {
        next(lending: &buffer, ended: seenEOF)
    }

    // MARK: - Input

    /// Index of the first LF in `input[from...]`.
    private func findLineFeed(from: Int) -> Int? { input.firstIndex(of: 0x0A, from: from) }

    // MARK: - Lines

    /// Frames one line, or skips part of an over-long one. Returns `false` when more input is needed.
    mutating func step() -> Bool {
        if input.readerOffset == 0 && available > 0 && input[position] == 0xEF {
            // A UTF-8 BOM at the start of the input (Windows tools write one) is skipped, once all three bytes are in.
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            let n = min(available, 3)
            if input.bytes(in: position..<position + n).elementsEqual(bom[0..<n]) {
                if n == 3 {
                    position += 3
                } else if !finished {
                    return false
                }
            }
        }
        let lineFeed = findLineFeed(from: position + scanned)
        if var skipping = overlong {
            let end = lineFeed.map { $0 + 1 } ?? input.writerIndex
            let room = limits.maxErrorBodyBytes - skipping.excerpt.count
            if room > 0 { input.copyBytes(in: position..<position + min(room, end - position), to: &skipping.excerpt) }
            position = end
            scanned = 0
            guard lineFeed != nil || finished else {
                overlong = skipping
                return false
            }
            overlong = nil
            let bytes = input.readerOffset - skipping.start
            outbox.append(
                .failure(
                    FramingFailure(
                        offset: skipping.start,
                        error: RecordError(
                            .limitExceeded,
                            "line longer than \(lineCap) bytes (2 × maxBodyBytes + maxHeaderBytes)"),
                        excerpt: skipping.excerpt, bytes: bytes)))
            return true
        }
        guard let lineFeed else {
            if available > lineCap {
                overlong = (input.readerOffset, [])
                return true
            }
            guard finished && available > 0 else {
                scanned = available
                return false
            }
            frameLine(end: input.writerIndex, terminated: false)
            return true
        }
        if lineFeed - position > lineCap {
            overlong = (input.readerOffset, [])
            return true
        }
        frameLine(end: lineFeed, terminated: true)
        return true
    }

    /// Frames `input[position..<end]` (its LF, if any, at `end`) and consumes it.
    private mutating func frameLine(end: Int, terminated: Bool) {
        let start = position
        let offset = input.offset(of: start)
        let next = terminated ? end + 1 : end
        position = next
        scanned = 0
        var contentEnd = end
        if contentEnd > start && input[contentEnd - 1] == 0x0D { contentEnd -= 1 }
        var blank = true
        for index in start..<contentEnd {
            let c = input[index]
            if c != 0x20 && c != 0x09 && c != 0x0D {
                blank = false
                break
            }
        }
        if blank { return }
        let item = input.withUnsafeBufferPointer { all in
            NDJSONLine.item(
                UnsafeBufferPointer(rebasing: all[start..<contentEnd]),
                raw: UnsafeBufferPointer(rebasing: all[start..<next]),
                offset: offset, terminated: terminated, limits: limits)
        }
        outbox.append(item)
    }
}

// MARK: - Records

/// Turns one ndjson line into a record or a failure (see the file comment).
enum NDJSONLine {
    static func item(
        _ line: UnsafeBufferPointer<UInt8>, raw: UnsafeBufferPointer<UInt8>, offset: Int64, terminated: Bool,
        limits: Limits
    ) -> FramedItem {
        var id: String?
        var url: String?
        var method: String?
        var status: Int?
        var headers: HeaderFields?
        var warc: WARCRecordInfo?
        var arc: ARCRecordInfo?

        func failure(_ code: RecordError.Code, _ message: String, location: Int64? = nil) -> FramedItem {
            .failure(
                FramingFailure(
                    offset: offset, error: RecordError(code, message, location: location.map { .init(offset: $0) }),
                    status: status, headers: headers, excerpt: Array(raw.prefix(max(limits.maxErrorBodyBytes, 0))),
                    bytes: Int64(raw.count), url: url, method: method, id: id, warc: warc, arc: arc))
        }

        let value: JSONValue
        do {
            value = try JSONValue.parse(line, maxDepth: limits.maxDepth)
        } catch {
            let location = offset + Int64(error.offset)
            switch error.kind {
            case .tooDeep: return failure(.limitExceeded, "\(error.message) (maxDepth)", location: location)
            case .truncated where !terminated:
                return failure(.truncatedRecord, "input ended inside the line: \(error.message)", location: location)
            default: return failure(.malformedRecord, "line is not JSON: \(error.message)", location: location)
            }
        }
        guard case .object(let members) = value else {
            return failure(.malformedRecord, "line is \(value.typeName), expected an object")
        }

        // One pass over the members; a repeated one counts as its last.
        var statusValue: JSONValue?
        var headersValue: JSONValue?
        var bodyValue: JSONValue?
        var base64Value: JSONValue?
        var trailersValue: JSONValue?
        var errorValue: JSONValue?
        var bodyBytesValue: JSONValue?
        var overLimitValue: JSONValue?
        var contentDecoded = false
        var warnings: [String] = []
        var warcType: String?
        var warcRecordId: String?
        var warcDate: String?
        var ip: String?
        var arcDate: String?
        var digest: DigestCheck?
        var warcTruncated: String?
        var payloadDigest: String?
        var refersTo: WARCRefersTo?
        var revisitOf: RecordOrigin?
        var problem: String?
        /// A string member, or nil for null; anything else is the line's problem.
        func text(_ key: String, _ member: JSONValue) -> String? {
            switch member {
            case .string(let text): return text
            case .null: return nil
            default:
                problem = problem ?? "'\(key)' is \(member.typeName), expected a string"
                return nil
            }
        }
        for (key, member) in members {
            switch key {
            case "status": statusValue = member
            case "headers": headersValue = member
            case "body": bodyValue = member
            case "bodyBase64": base64Value = member
            case "trailers": trailersValue = member
            case "error": errorValue = member
            case "bodyBytes": bodyBytesValue = member
            case "overLimitBodyBytes": overLimitValue = member
            case "contentDecoded":
                switch member {
                case .bool(let flag): contentDecoded = flag
                case .null: contentDecoded = false
                default: problem = problem ?? "'contentDecoded' is \(member.typeName), expected a boolean"
                }
            case "warnings":
                switch member {
                case .null: warnings = []
                case .array(let items) where items.allSatisfy({ $0.stringValue != nil }):
                    warnings = items.compactMap(\.stringValue)
                default: problem = problem ?? "'warnings' is not an array of strings"
                }
            case "warcType": warcType = text(key, member)
            case "warcRecordId": warcRecordId = text(key, member)
            case "warcDate": warcDate = text(key, member)
            case "warcTruncated": warcTruncated = text(key, member)
            case "payloadDigest": payloadDigest = text(key, member)
            case "refersTo":
                switch WARCRevisitFields.refersTo(member) {
                case .success(let value): refersTo = value
                case .failure(let why): problem = problem ?? why.message
                }
            case "revisitOf":
                switch WARCRevisitFields.origin(member) {
                case .success(let value): revisitOf = value
                case .failure(let why): problem = problem ?? why.message
                }
            case "ip": ip = text(key, member)
            case "arcDate": arcDate = text(key, member)
            case "digest":
                switch member {
                case .null: digest = nil
                case .string(let verdict) where DigestCheck(rawValue: verdict) != nil:
                    digest = DigestCheck(rawValue: verdict)
                default: problem = problem ?? "'digest' is not \"ok\" or \"mismatch\""
                }
            case "id":
                switch member {
                case .string(let text): id = text
                case .number(let text): id = text
                case .null: id = nil
                default: problem = problem ?? "'id' is \(member.typeName), expected a string or a number"
                }
            case "url": url = text(key, member)
            case "method": method = text(key, member)
            default: break
            }
        }
        if ip != nil || arcDate != nil { arc = ARCRecordInfo(ip: ip, date: arcDate) }
        if let problem { return failure(.malformedRecord, problem) }
        if let warcType {
            warc = WARCRecordInfo(
                type: warcType, recordId: warcRecordId, date: warcDate, truncated: warcTruncated, digest: digest)
            warc?.payloadDigest = payloadDigest
            warc?.refersTo = refersTo
            warc?.revisitOf = revisitOf
        } else if warcRecordId != nil || warcDate != nil || digest != nil || warcTruncated != nil
            || payloadDigest != nil || refersTo != nil || revisitOf != nil
        {
            return failure(
                .malformedRecord,
                "'warcRecordId', 'warcDate', 'warcTruncated', 'digest', 'payloadDigest', 'refersTo' and 'revisitOf' "
                    + "need 'warcType'")
        }
        // A failure that `frame` carried: its error, not this line's.
        var carried: (error: RecordError, bytes: Int64?)?
        var overLimitBodyBytes: Int64?
        switch errorValue {
        case nil, .null?:
            if bodyBytesValue != nil && bodyBytesValue != .null {
                return failure(.malformedRecord, "'bodyBytes' without 'error'")
            }
            if overLimitValue != nil && overLimitValue != .null {
                return failure(.malformedRecord, "'overLimitBodyBytes' without 'error'")
            }
        case let value?:
            guard let error = framingError(value) else {
                return failure(
                    .malformedRecord,
                    "'error' is not an object with a framing error's 'code' (malformedRecord, "
                        + "truncatedRecord or limitExceeded) and a string 'message'")
            }
            var bytes: Int64?
            switch bodyBytesValue {
            case nil, .null?: break
            case let value?:
                guard let count = value.integerValue, count >= 0 else {
                    return failure(.malformedRecord, "'bodyBytes' is not a count of bytes")
                }
                bytes = Int64(count)
            }
            switch overLimitValue {
            case nil, .null?: break
            case let value?:
                guard let count = value.integerValue, count >= 0 else {
                    return failure(.malformedRecord, "'overLimitBodyBytes' is not a count of bytes")
                }
                overLimitBodyBytes = Int64(count)
            }
            carried = (error, bytes)
        }

        switch statusValue {
        case nil, .null?:
            // A carried failure may have been cut off before its status line was read.
            if carried == nil { return failure(.malformedRecord, "no 'status'") }
        case let value?:
            guard let code = value.integerValue else {
                let text = if case .number(let number) = value { number } else { value.typeName }
                return failure(.malformedRecord, "'status' is \(text), expected an integer")
            }
            guard (100...999).contains(code) else {
                return failure(.malformedRecord, "'status' \(code) is not an HTTP status code (100-999)")
            }
            status = code
        }

        var fields = HeaderFields()
        if let value = headersValue {
            do throws(FieldsProblem) { fields = try Self.fields(value, "headers") } catch {
                return failure(.malformedRecord, error.message)
            }
        }
        var trailers: HeaderFields?
        if let value = trailersValue, value != .null {
            do throws(FieldsProblem) { trailers = try Self.fields(value, "trailers") } catch {
                return failure(.malformedRecord, error.message)
            }
        }
        headers = fields

        var body: [UInt8] = []
        switch (bodyValue ?? .null, base64Value ?? .null) {
        case (.null, .null):
            break
        case (.string(let text), .null):
            guard text.utf8.count <= limits.maxBodyBytes else {
                return failure(
                    .limitExceeded, "body of \(text.utf8.count) bytes exceeds \(limits.maxBodyBytes) (maxBodyBytes)")
            }
            body = Array(text.utf8)
        case (.null, .string(let text)):
            // Refused before decoding: a body over the limit is not made only to be dropped.
            guard text.utf8.count / 4 * 3 <= limits.maxBodyBytes else {
                return failure(
                    .limitExceeded,
                    "base64 body of about \(text.utf8.count / 4 * 3) bytes exceeds \(limits.maxBodyBytes) (maxBodyBytes)"
                )
            }
            guard let decoded = BaseDecoding.base64(text, ignoringWhitespace: true) else {
                return failure(.malformedRecord, "'bodyBase64' is not valid base64")
            }
            body = decoded
        case (.null, let other):
            return failure(.malformedRecord, "'bodyBase64' is \(other.typeName), expected a string")
        case (let other, .null):
            return failure(.malformedRecord, "'body' is \(other.typeName), expected a string")
        default:
            return failure(.malformedRecord, "both 'body' and 'bodyBase64'")
        }
        if body.count > limits.maxBodyBytes {
            return failure(.limitExceeded, "body of \(body.count) bytes exceeds \(limits.maxBodyBytes) (maxBodyBytes)")
        }
        if let carried {
            var failure = FramingFailure(
                offset: offset, error: carried.error, status: status, headers: headersValue == nil ? nil : fields,
                excerpt: Array(body.prefix(max(limits.maxErrorBodyBytes, 0))),
                bytes: max(carried.bytes ?? 0, Int64(body.count)), url: url, method: method, id: id, warc: warc,
                arc: arc)
            // (A record over the body limit: its body's size and the warnings its line had,
            // docs/output.md#records-over-the-body-limit.)
            failure.bodyBytes = overLimitBodyBytes
            failure.warnings = warnings
            return .failure(failure)
        }
        var record = ResponseRecord(
            offset: offset, status: status ?? 0, headers: fields, body: body, trailers: trailers, url: url,
            method: method, id: id, warc: warc, contentDecoded: contentDecoded, warnings: warnings, arc: arc)
        record.framedFromNDJSON = true
        return .record(record)
    }

    /// The codes a framing failure may have.
    static let framingCodes: [RecordError.Code] = [.malformedRecord, .truncatedRecord, .limitExceeded]

    /// A framing failure's error as `frame` writes it (ResultLine's error object); nil when `value` is not one.
    static func framingError(_ value: JSONValue) -> RecordError? {
        guard case .object = value, let name = value["code"]?.stringValue, let message = value["message"]?.stringValue,
            let code = RecordError.Code(name: name), Self.framingCodes.contains(code)
        else { return nil }
        var location: RecordError.Location?
        if let offset = value["offset"]?.integerValue {
            location = RecordError.Location(
                offset: offset, line: value["line"]?.integerValue, column: value["column"]?.integerValue)
        }
        return RecordError(code, message, location: location)
    }

    struct FieldsProblem: Error { var message: String }

    /// Header fields in one of the three shapes of the file comment; `key` names the member in messages.
    static func fields(_ value: JSONValue, _ key: String) throws(FieldsProblem) -> HeaderFields {
        var fields = HeaderFields()
        switch value {
        case .null:
            break
        case .array(let items):
            for (index, item) in items.enumerated() {
                switch item {
                case .array(let pair):
                    guard pair.count == 2, let name = pair[0].stringValue, let value = pair[1].stringValue else {
                        throw FieldsProblem(message: "\(key)[\(index)] is not a [name, value] pair of strings")
                    }
                    fields.append(name: name, value: value)
                case .object:
                    guard let name = item["name"]?.stringValue, let value = item["value"]?.stringValue else {
                        throw FieldsProblem(message: "\(key)[\(index)] has no string 'name' and 'value'")
                    }
                    fields.append(name: name, value: value)
                default:
                    throw FieldsProblem(message: "\(key)[\(index)] is \(item.typeName), expected a [name, value] pair")
                }
            }
        case .object(let named):
            for (name, member) in named {
                switch member {
                case .string(let value):
                    fields.append(name: name, value: value)
                case .array(let values):
                    for value in values {
                        guard case .string(let text) = value else {
                            throw FieldsProblem(message: "\(key)['\(name)'] holds \(value.typeName), expected strings")
                        }
                        fields.append(name: name, value: text)
                    }
                default:
                    throw FieldsProblem(
                        message: "\(key)['\(name)'] is \(member.typeName), expected a string or an array of strings")
                }
            }
        case let other:
            throw FieldsProblem(message: "'\(key)' is \(other.typeName), expected an array or an object")
        }
        return fields
    }
}

/// The revisit fields of an ndjson line (docs/output.md#revisits), read back as `respdecode frame` writes them.
enum WARCRevisitFields {
    struct Problem: Error {
        var message: String
    }

    /// `refersTo`: an object of optional strings `recordId`, `targetURI`, `date`; null is none.
    static func refersTo(_ value: JSONValue) -> Result<WARCRefersTo?, Problem> {
        guard case .object(let members) = value else {
            if value == .null { return .success(nil) }
            return .failure(Problem(message: "'refersTo' is \(value.typeName), expected an object"))
        }
        var refers = WARCRefersTo()
        for (key, member) in members where ["recordId", "targetURI", "date"].contains(key) {
            let text: String?
            switch member {
            case .string(let string): text = string
            case .null: text = nil
            default: return .failure(Problem(message: "'refersTo.\(key)' is \(member.typeName), expected a string"))
            }
            switch key {
            case "recordId": refers.recordId = text
            case "targetURI": refers.targetURI = text
            case "date": refers.date = text
            default: break
            }
        }
        return .success(refers)
    }

    /// `revisitOf`: an object with integers `seq` (from 0) and `offset` (from 0) and an optional string `input`;
    /// null is none.
    static func origin(_ value: JSONValue) -> Result<RecordOrigin?, Problem> {
        guard case .object(let members) = value else {
            if value == .null { return .success(nil) }
            return .failure(Problem(message: "'revisitOf' is \(value.typeName), expected an object"))
        }
        var seq: Int?
        var offset: Int64?
        var input: String?
        for (key, member) in members {
            switch (key, member) {
            case ("seq", .number(let text)): seq = Int(text).flatMap { $0 >= 0 ? $0 : nil }
            case ("offset", .number(let text)): offset = Int64(text).flatMap { $0 >= 0 ? $0 : nil }
            case ("input", .string(let text)): input = text
            case ("input", .null): input = nil
            case ("seq", _), ("offset", _), ("input", _):
                return .failure(Problem(message: "'revisitOf.\(key)' is \(member.typeName), not as frame writes it"))
            default: break
            }
        }
        guard let seq, let offset else {
            return .failure(Problem(message: "'revisitOf' needs integers 'seq' and 'offset' from 0"))
        }
        return .success(RecordOrigin(seq: seq, input: input, offset: offset))
    }
}

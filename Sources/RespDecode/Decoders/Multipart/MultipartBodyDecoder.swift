/// The multipart decoder: `multipart/form-data` (RFC 7578), `multipart/mixed`, `related`, `alternative`,
/// `byteranges` and any other `multipart/*` (RFC 2046 §5.1), split into its parts, each part's body decoded by the
/// chain (docs/output.md#multipart, docs/decoding.md#multipart).
public struct MultipartBodyDecoder: BodyDecoder {
    public let name = "multipart"

    /// Every `multipart/*` type: the named ones and the rest (`x-mixed-replace` camera streams, `digest`, `report`,
    /// `signed`) read by the same rules.
    public let defaultAcceptableTypes: [MediaTypePattern] = [
        "multipart/form-data", "multipart/mixed", "multipart/related", "multipart/alternative",
        "multipart/byteranges", "multipart/*",
    ]
    .compactMap(MediaTypePattern.init)

    public init() {}

    /// RFC 2046's longest boundary.
    static let maxBoundaryLength = 70

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        if Self.isNoContent(body) { return false }
        let limits = context.options.limits
        // docs/decoding.md#multipart-limits: the record's body is depth 0.
        guard context.depth < limits.maxMultipartDepth else {
            throw RecordError(
                .limitExceeded,
                "multipart nested deeper than --max-multipart-depth (\(limits.maxMultipartDepth)); not decoded")
        }
        // docs/decoding.md#multipart-limits: transfer-decoded copies are bounded by the record's body size.
        if context.recordBodyBytes == nil { context.recordBodyBytes = body.count }
        let type = context.contentType.map(MIMEParameters.init)
        let subtype = (context.mimeType ?? type?.value ?? "").split(separator: "/").last.map(String.init) ?? ""
        var warnings: [String] = []
        var reader: MultipartReader
        do throws(RecordError) {
            let boundary = try Self.boundary(of: type, body: body, warnings: &warnings)
            reader = MultipartReader(body: body, boundary: Array(boundary.utf8), maxHeaderBytes: limits.maxHeaderBytes)
            try reader.start()
        } catch {
            context.warnings += warnings
            throw error
        }
        let boundary = String(decoding: reader.boundary, as: UTF8.self)

        let start = output.mark
        output.append(ascii: "{\"boundary\":")
        output.appendJSONString(boundary)
        if reader.preambleBytes > 0 {
            output.append(ascii: ",\"preambleBytes\":")
            output.append(decimal: reader.preambleBytes)
        }
        output.append(ascii: ",\"parts\":[")
        var listed = 0
        var truncated = false
        do throws(RecordError) {
            while true {
                if context.embeddedBodies >= limits.maxMultipartParts {
                    // Something more than a close delimiter follows: the rest is not read.
                    if reader.epilogueBytes == nil {
                        truncated = true
                        warnings.append(
                            "the record's multipart parts (at every depth) are more than --max-multipart-parts "
                                + "(\(limits.maxMultipartParts)); the rest is not read")
                    }
                    break
                }
                guard let part = try reader.nextPart() else { break }
                context.embeddedBodies += 1
                let budget = limits.maxValueBytes - (output.count - start)
                if listed > 0 { output.append(UInt8(ascii: ",")) }
                writePart(
                    part, index: listed + 1, subtype: subtype, body: body, budget: budget, context: &context,
                    warnings: &warnings, into: output)
                listed += 1
                if output.count - start > limits.maxValueBytes {
                    throw RecordError(
                        .limitExceeded, "the multipart value is larger than --max-value-bytes (\(limits.maxValueBytes))"
                    )
                }
            }
        } catch {
            output.rollback(to: start)
            context.warnings += warnings + reader.warnings
            throw error
        }
        output.append(UInt8(ascii: "]"))
        if let epilogue = reader.epilogueBytes, epilogue > 0 {
            output.append(ascii: ",\"epilogueBytes\":")
            output.append(decimal: epilogue)
        }
        if !truncated && reader.epilogueBytes == nil { output.append(ascii: ",\"closed\":false") }
        if truncated { output.append(ascii: ",\"truncated\":[\"parts\"]") }
        output.append(UInt8(ascii: "}"))
        context.warnings += reader.warnings + warnings
        return true
    }

    /// The `boundary` parameter; without one, the boundary of a first line `--BOUNDARY` (as Firefox's multipart
    /// converter does), with a warning.
    static func boundary(
        of type: MIMEParameters?, body: UnsafeBufferPointer<UInt8>, warnings: inout [String]
    ) throws(RecordError) -> String {
        if let boundary = type?["boundary"], !boundary.isEmpty {
            // A line end cannot be in a delimiter line (and the linear search relies on it).
            if boundary.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) {
                throw RecordError(.invalidMultipart, "the boundary parameter holds a line end")
            }
            if boundary.utf8.count > maxBoundaryLength {
                warnings.append(
                    "the multipart boundary has \(boundary.utf8.count) characters, more than RFC 2046's 70; read all the same"
                )
            }
            return boundary
        }
        if let guessed = guessedBoundary(body) {
            warnings.append("the Content-Type has no boundary parameter; the body's first line gives \"\(guessed)\"")
            return guessed
        }
        throw RecordError(.invalidMultipart, "the Content-Type has no boundary parameter")
    }

    /// The boundary of the body's first delimiter line, read as RFC 2046 §5.1.1 and `--sniff` read it
    /// (docs/decoding.md#multipart-boundaries): after white space and blank lines, `--`, 1 to 70 of RFC 2046's
    /// `bchars` (space allowed, not last), transport padding (spaces, tabs) and a line end. A boundary read this
    /// way that ends in `--` (`--B--`) is the close delimiter of `B`; nil when there is no such line.
    static func guessedBoundary(_ body: UnsafeBufferPointer<UInt8>) -> String? {
        var k = 0
        while k < body.count, MIMEParameters.isSpace(body[k]) || body[k] == 0x0A || body[k] == 0x0D { k += 1 }
        guard k + 2 < body.count, body[k] == UInt8(ascii: "-"), body[k + 1] == UInt8(ascii: "-") else { return nil }
        let first = k + 2
        var end = first
        // Up to 72: a close delimiter's `--` follows a boundary of 70.
        while end < body.count, end - first < maxBoundaryLength + 2, isBoundaryCharacter(body[end]) { end += 1 }
        var padding = end
        while padding < body.count, body[padding] == 0x20 || body[padding] == 0x09 { padding += 1 }
        if padding < body.count, body[padding] == 0x0D { padding += 1 }
        // A line end must follow (a close delimiter may also end the body).
        while end > first, body[end - 1] == 0x20 { end -= 1 }
        var token = body[first..<end]
        let isClose = token.count > 2 && token.suffix(2).elementsEqual("--".utf8)
        if isClose { token = token.dropLast(2) }
        while token.last == 0x20 { token = token.dropLast() }
        guard padding == body.count ? isClose : body[padding] == 0x0A else { return nil }
        guard !token.isEmpty, token.count <= maxBoundaryLength else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: token), as: UTF8.self)
    }

    /// RFC 2046's `bchars`: digits, letters, `'()+_,-./:=?` and space (also what --sniff takes for a boundary).
    static func isBoundaryCharacter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return "'()+_,-./:=? ".utf8.contains(c)
        }
    }

    /// One part's object (docs/output.md#multipart).
    private func writePart(
        _ part: MultipartReader.Part, index: Int, subtype: String, body: UnsafeBufferPointer<UInt8>, budget: Int,
        context: inout DecodingContext, warnings: inout [String], into output: OutputBuffer
    ) {
        let headers = part.headers
        let line = ResultLine(output)
        let label = "multipart part \(index)"
        let start = output.mark
        if let error = part.error {
            // Skipped (docs/decoding.md#multipart-limits): its size and why.
            output.append(ascii: "{\"bytes\":")
            output.append(decimal: part.body.count)
            line.error(error)
            output.append(UInt8(ascii: "}"))
            warnings.append("\(label) was skipped: \(error.message)")
            return
        }
        // A failing part's bytes, as a line's `body`: at most --max-error-body-bytes, and a quarter of the room the
        // value has left (a part too large for the value gets none).
        func excerptBytes(_ room: Int) -> Int {
            max(0, min(context.options.limits.maxErrorBodyBytes, room / 4 / 4 * 3 - 64))
        }
        output.append(UInt8(ascii: "{"))
        // The first keys: a comma before each but the first (`contentType` is always written: `line`'s keys, which
        // start with a comma, come after it).
        func string(_ name: StaticString, _ value: String) {
            if output.count - start > 1 { output.append(UInt8(ascii: ",")) }
            output.append(UInt8(ascii: "\""))
            output.append(ascii: name)
            output.append(ascii: "\":")
            output.appendJSONString(value)
        }
        if let dispositionField = headers.last("Content-Disposition") {
            let disposition = MIMEParameters(dispositionField)
            if !disposition.value.isEmpty { string("disposition", disposition.value) }
            if let name = disposition["name"] { string("name", name) }
            if let filename = disposition["filename"] { string("filename", filename) }
        }
        // RFC 7578 §4.4 and RFC 2046 §5.1.3: text/plain by default (its US-ASCII is not imposed: the text decoder's
        // detection reads UTF-8 right); RFC 2046 §5.1.5: message/rfc822 in a digest.
        let typeField = headers.last("Content-Type")
        let partType = typeField.map(MIMEParameters.init)
        let mimeType: String
        if let value = partType?.value, value.contains("/") {
            mimeType = value
        } else {
            mimeType = subtype == "digest" ? "message/rfc822" : "text/plain"
        }
        string("contentType", mimeType)
        let charset = partType?["charset"].flatMap { $0.isEmpty ? nil : $0 }
        if let charset { line.string("charset", charset) }
        let transferField = headers.last("Content-Transfer-Encoding")
        let transfer = TransferEncoding(transferField)
        if let transferField, !transfer.isIdentity {
            line.string("transferEncoding", String(transferField.trimmingOWS()).lowercased())
        }
        if let rangeField = headers.last("Content-Range") {
            if let range = ContentRange(rangeField) {
                line.key("range")
                var separator = UInt8(ascii: "{")
                for (name, value) in [("start", range.start), ("end", range.end), ("length", range.length)] {
                    guard let value else { continue }
                    output.append(separator)
                    output.appendJSONString(name)
                    output.append(UInt8(ascii: ":"))
                    output.append(decimal: value)
                    separator = UInt8(ascii: ",")
                }
                if separator == UInt8(ascii: "{") { output.append(separator) }
                output.append(UInt8(ascii: "}"))
            } else {
                warnings.append("\(label): unreadable Content-Range \"\(rangeField)\"")
            }
        }
        line.fields("headers", headers)
        line.integer("bytes", part.body.count)

        let raw = UnsafeBufferPointer(rebasing: body[part.body])
        // A failing part's error and first bytes (`content`), and the warning.
        func fail(_ error: RecordError, _ content: UnsafeBufferPointer<UInt8>) {
            line.error(error)
            line.body(
                UnsafeBufferPointer(rebasing: content.prefix(excerptBytes(budget - (output.count - start)))),
                total: Int64(content.count))
            warnings.append("\(label) did not decode: \(error.code)")
        }
        // docs/decoding.md#multipart-limits: the copies transfer decoding makes, at every depth together, counted at
        // their largest possible size, may not pass the record's body size (nesting would multiply them).
        let decodedSize: Int
        switch transfer {
        case .base64: decodedSize = raw.count / 4 * 3 + 3
        case .quotedPrintable: decodedSize = raw.count
        case .identity, .unknown: decodedSize = 0
        }
        let recordBytes = context.recordBodyBytes ?? body.count
        if decodedSize > 0 {
            guard context.transferDecodedBytes + decodedSize <= recordBytes else {
                fail(
                    RecordError(
                        .limitExceeded,
                        "the part's transfer-decoded copy (up to \(decodedSize) bytes) would take the record's "
                            + "transfer-decoded bytes past its body size (\(recordBytes))"), raw)
                output.append(UInt8(ascii: "}"))
                return
            }
            context.transferDecodedBytes += decodedSize
        }
        var decoded: [UInt8]?
        switch transfer {
        case .identity: break
        case .base64:
            decoded = TransferEncoding.base64(raw)
            if decoded == nil {
                fail(
                    RecordError(.invalidMultipart, "the part's base64 (Content-Transfer-Encoding) is not valid base64"),
                    raw)
                output.append(UInt8(ascii: "}"))
                return
            }
        case .quotedPrintable: decoded = TransferEncoding.quotedPrintable(raw)
        case .unknown(let token):
            warnings.append(
                "\(label): unknown Content-Transfer-Encoding \"\(token)\"; the bytes are decoded as they are")
        }
        if let decoded { line.integer("decodedBytes", decoded.count) }

        let outcome = decoded.withUnsafeBufferPointerOr(raw) { content -> EmbeddedOutcome in
            let decoder = context.embeddedDecoder(for: mimeType)
            line.string("decoder", decoder.name)
            let mark = output.mark
            line.key("value")
            // An absolute Content-Location (MHTML's resources) is the part's URL: its links resolve against it.
            let location = headers.last("Content-Location").flatMap { $0.contains("://") ? $0 : nil }
            let outcome = context.decodeEmbedded(
                content, with: decoder, mimeType: mimeType, contentType: typeField, charset: charset,
                url: location ?? context.url, maxValueBytes: budget - (output.count - start), into: output)
            if !outcome.wroteValue { output.rollback(to: mark) }
            if let error = outcome.error {
                line.error(error)
                // docs/decoding.md#multipart-limits: every failing part has its first bytes, but one whose value
                // passed the room the value had left (an excerpt would only take more of it).
                guard !outcome.valueTooLarge else { return outcome }
                line.body(
                    UnsafeBufferPointer(rebasing: content.prefix(excerptBytes(budget - (output.count - start)))),
                    total: Int64(content.count))
            }
            return outcome
        }
        for warning in outcome.warnings { warnings.append("\(label): \(warning)") }
        if let error = outcome.error { warnings.append("\(label) did not decode: \(error.code)") }
        output.append(UInt8(ascii: "}"))
    }
}

/// Validates a record and runs it through the chain, writing its one result line: AFNetworking's
/// `AFCompoundResponseSerializer`, changed where a pipeline needs more than an app does (SPEC §3):
///
/// - The first decoder whose acceptable types match the MIME type decodes the body; with none, the raw fallback
///   returns the body, validating the status only (or, with `strictTypes`, the type check fails: -1016).
/// - A body whose status is unacceptable but whose type matches is still decoded: the line has `value` and the
///   -1011 error (AFNetworking's JSON behaviour, for every decoder).
/// - A matching decoder's parse error is reported, with the status error as `underlying` — AFNetworking's compound
///   serializer would swallow it.
public struct CompoundDecoder: Sendable {
    public let configuration: Configuration
    private let raw = RawDecoder()

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Writes the result line for `item` (compact JSON and a line feed) to `out`.
    /// - Returns: whether the line says `"ok":true`.
    @discardableResult
    public func writeLine(for item: FramedItem, source: ResultLine.Source, into out: OutputBuffer) -> Bool {
        switch item {
        case .record(let record): return writeRecordLine(record, source: source, into: out)
        case .failure(let failure): return writeFailureLine(failure, source: source, into: out)
        }
    }

    private func writeFailureLine(_ failure: FramingFailure, source: ResultLine.Source, into out: OutputBuffer) -> Bool {
        let line = ResultLine(out)
        line.begin(source)
        if let status = failure.status { line.integer("status", status) }
        if let headers = failure.headers {
            var ignored: [String] = []
            writeContentType(of: headers, line: line, warnings: &ignored)
        }
        line.string("decoder", "none")
        line.bool("ok", false)
        line.error(failure.error)
        failure.excerpt.withUnsafeBufferPointer { line.body($0, total: max(failure.bytes, Int64($0.count))) }
        line.end()
        return false
    }

    private func writeRecordLine(_ record: ResponseRecord, source: ResultLine.Source, into out: OutputBuffer) -> Bool {
        let line = ResultLine(out)
        var warnings = record.warnings
        line.begin(source)
        if let id = record.id { line.string("id", id) }
        if let url = record.url { line.string("url", url) }
        if let method = record.method { line.string("method", method) }
        line.integer("status", record.status)

        let (mimeType, charset) = writeContentType(of: record.headers, line: line, warnings: &warnings)

        let codings = record.headers.listElements("Content-Encoding").map { $0.lowercased() }
        if !codings.isEmpty { line.stringArray("contentEncoding", codings) }
        line.integer("bodyBytes", record.body.count)

        let statusError =
            configuration.acceptableStatusCodes.contains(record.status) ? nil : Validation.statusError(record.status)
        // The chain, on the body with its content codings undone.
        func decodeBody(_ body: UnsafeBufferPointer<UInt8>) -> Bool {
            if let entry = configuration.chain.first(where: { $0.accepts(mimeType) }) {
                return decode(body, with: entry.decoder, mimeType: mimeType, charset: charset,
                    statusError: statusError, line: line, warnings: &warnings)
            }
            if configuration.strictTypes && !(mimeType == nil && body.isEmpty) {
                let typeError = Validation.contentTypeError(mimeType)
                return fail(line, decoder: raw.name, statusError?.chained(over: typeError) ?? typeError, body: body)
            }
            // The raw fallback gives a value only when the record is ok; otherwise the bytes go in `body`.
            if let statusError { return fail(line, decoder: raw.name, statusError, body: body) }
            return decode(body, with: raw, mimeType: mimeType, charset: charset, statusError: nil, line: line,
                warnings: &warnings)
        }
        let ok = record.body.withUnsafeBufferPointer { framed -> Bool in
            // Content-Encoding is undone first (SPEC §3.1); a HAR body is already decoded, an empty one has nothing
            // to undo. Everything after this sees the decoded body; a failure keeps the bytes as framed in `body`.
            var decoded: [UInt8]?
            if !framed.isEmpty && !record.contentDecoded && codings.contains(where: { $0 != "identity" }) {
                do throws(RecordError) {
                    let outcome = try ContentDecoding.decode(framed, codings: codings, limits: configuration.limits)
                    warnings += outcome.warnings
                    if outcome.codingsUndone > 0 {
                        line.integer("decodedBytes", outcome.body.count)
                        decoded = outcome.body
                    }
                } catch {
                    return fail(line, decoder: "none", error.chained(over: statusError), body: framed)
                }
            }
            return decoded?.withUnsafeBufferPointer(decodeBody) ?? decodeBody(framed)
        }
        if let trailers = record.trailers { line.fields("trailers", trailers) }
        if !warnings.isEmpty { line.stringArray("warnings", warnings) }
        line.end()
        return ok
    }

    /// Writes `"contentType"` (the MIME type of SPEC §3.2, or null) and returns it with the `charset` parameter.
    @discardableResult
    private func writeContentType(
        of headers: HeaderFields, line: ResultLine, warnings: inout [String]
    ) -> (mimeType: String?, charset: String?) {
        let contentTypes = headers.values("Content-Type")
        if contentTypes.count > 1 && contentTypes.contains(where: { $0 != contentTypes[0] }) {
            warnings.append("several differing Content-Type fields; the last one is used")
        }
        let mimeType = contentTypes.last.flatMap(MediaType.mimeType(ofContentType:))
        line.key("contentType")
        if let mimeType { line.out.appendJSONString(mimeType) } else { line.out.append(ascii: "null") }
        return (mimeType, contentTypes.last.flatMap(MediaType.charset(ofContentType:)))
    }

    private func decode(
        _ body: UnsafeBufferPointer<UInt8>, with decoder: any BodyDecoder, mimeType: String?, charset: String?,
        statusError: RecordError?, line: ResultLine, warnings: inout [String]
    ) -> Bool {
        let out = line.out
        line.string("decoder", decoder.name)
        let mark = out.mark
        line.bool("ok", statusError == nil)
        line.key("value")
        var context = DecodingContext(mimeType: mimeType, charset: charset, configuration: configuration)
        do {
            let wroteValue = try decoder.decode(body, context: &context, into: out)
            warnings += context.warnings
            if wroteValue {
                if let statusError { line.error(statusError) }
                return statusError == nil
            }
            out.rollback(to: mark)
            line.bool("ok", statusError == nil)
            guard let statusError else { return true }
            line.error(statusError)
            attachBody(body, line: line)
            return false
        } catch {
            warnings += context.warnings
            out.rollback(to: mark)
            line.bool("ok", false)
            line.error(error.chained(over: statusError))
            attachBody(body, line: line)
            return false
        }
    }

    private func fail(_ line: ResultLine, decoder: String, _ error: RecordError, body: UnsafeBufferPointer<UInt8>) -> Bool {
        line.string("decoder", decoder)
        line.bool("ok", false)
        line.error(error)
        attachBody(body, line: line)
        return false
    }

    /// The failing response data (AFNetworking's `…error.data` key), capped at `maxErrorBodyBytes`.
    private func attachBody(_ body: UnsafeBufferPointer<UInt8>, line: ResultLine) {
        let kept = UnsafeBufferPointer(rebasing: body.prefix(configuration.limits.maxErrorBodyBytes))
        line.body(kept, total: Int64(body.count))
    }
}

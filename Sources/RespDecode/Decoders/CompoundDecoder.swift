/// Validates a record and runs it through the chain, writing its one result line: AFNetworking's
/// `AFCompoundResponseSerializer`, changed where a pipeline needs more than an app does (docs/afnetworking.md#mapping):
///
/// - The first decoder whose acceptable types match the MIME type decodes the body; with none, the raw fallback
///   returns the body, validating the status only (or, with `strictTypes`, the type check fails: -1016).
/// - A body whose status is unacceptable but whose type matches is still decoded: the line has `value` and the
///   -1011 error (AFNetworking's JSON behaviour, for every decoder).
/// - A matching decoder's parse error is reported, with the status error as `underlying` — AFNetworking's compound
///   serializer would swallow it.
public struct CompoundDecoder: Sendable {
    public let settings: Settings
    private let raw = RawDecoder()
    /// `--fields` asks for a key that only decoding gives (docs/output.md#choosing-the-keys); when it does not, a
    /// record's line is written from the record as framed, and its body is neither content-decoded nor decoded.
    private let decodes: Bool

    public init(settings: Settings) {
        self.settings = settings
        var needDecoding: OutputFields = [.sniffed, .decodedBytes, .decoder, .ok, .value, .error, .body, .warnings]
        if settings.sniff { needDecoding.insert(.contentType) }
        decodes = !settings.fields.isDisjoint(with: needDecoding)
    }

    /// What the compound decoder is told of a run's settings: the chain, what validation accepts, and the options
    /// handed to each body decoder. Each default is the initial value of its property.
    public struct Settings: Sendable {
        /// The decoders tried in order, each with its acceptable MIME types. Default: ``DecoderRegistry/defaultChain``.
        public var chain: [ChainEntry] = DecoderRegistry.defaultChain.map { ChainEntry(decoder: $0) }
        /// Status codes that pass validation (AFNetworking's `acceptableStatusCodes`).
        public var acceptableStatusCodes: StatusCodeSet = .successful
        /// A MIME type that no decoder accepts is an `unacceptableContentType` error instead of a raw value.
        public var strictTypes = false
        /// A WARC payload digest mismatch is a `digestMismatch` error on the line (the value is still decoded), not
        /// only `"digest":"mismatch"`.
        public var strictDigests = false
        /// A missing or `application/octet-stream` MIME type is taken from the body's first bytes (``Sniffing``).
        public var sniff = false
        /// The body decoders' options and the limits (Content-Encoding's and the error body's too).
        public var options = DecoderOptions()
        /// The records decoded (`--select-…`, docs/output.md#selecting-records); the others are skipped before
        /// anything is decoded. Default: every record.
        public var selection = RecordSelection()
        /// The top-level keys written (`--fields`, docs/output.md#choosing-the-keys). Default: every key.
        public var fields = OutputFields.all

        public init() {}
    }

    /// Writes the result line for `item` (compact JSON and a line feed) to `out`.
    /// - Returns: what the line says, for the statistics (`ok`, the decoder, the error code).
    @discardableResult
    public func writeLine(for item: FramedItem, source: ResultLine.Source, into out: OutputBuffer) -> LineOutcome {
        var outcome = LineOutcome()
        // Selection comes first, before the payload digest, Content-Encoding and decoding: a skipped record costs a
        // few comparisons (docs/output.md#selecting-records). A framing failure is never skipped.
        if case .record(let record) = item, !settings.selection.selectsAll,
            let filter = settings.selection.rejection(of: record)
        {
            outcome.skippedBy = filter.rawValue
            if record.framedFromNDJSON { writeSkippedLine(record, filter: filter, source: source, into: out) }
            return outcome
        }
        if case .record(let record) = item, !decodes {
            // Nothing asked for needs the body decoded: the digest is checked only when `digest` is asked for.
            let checked = settings.fields.contains(.digest) ? item.checkingPayloadDigest() : item
            if case .record(let record) = checked { writeUndecodedLine(record, source: source, into: out) }
            outcome.decoded = false
            outcome.bodyBytes = record.body.count
            outcome.decodedBytes = record.body.count
            return outcome
        }
        // The record is lent to the writer as it is unless its digest is pending: a checked copy of it retains every
        // string and array of the record once more.
        switch item {
        case .record(let record) where record.warc?.pendingDigest == nil:
            outcome.ok = writeRecordLine(record, source: source, into: out, outcome: &outcome)
        case .record(var record):
            record.checkPayloadDigest()
            outcome.ok = writeRecordLine(record, source: source, into: out, outcome: &outcome)
        case .failure(let failure): outcome.ok = writeFailureLine(failure, source: source, into: out, outcome: &outcome)
        }
        return outcome
    }

    /// The stub of a skipped ndjson input record (one line per input line is the engine contract,
    /// docs/framings.md#ndjson): `{"seq","offset","input","id","skipped":true,"skippedBy":"select-…"}`, the first
    /// four as `--fields` asks.
    private func writeSkippedLine(
        _ record: ResponseRecord, filter: RecordSelection.Filter, source: ResultLine.Source, into out: OutputBuffer
    ) {
        let line = ResultLine(out, fields: settings.fields)
        line.begin(source)
        if let id = record.id, line.wants(.id) { line.string("id", id) }
        line.bool("skipped", true)
        line.key("skippedBy")
        out.appendJSONString(filter.rawValue)
        line.end()
    }

    /// A record's line when `--fields` asks for no key that decoding gives: what the framer read (the keys up to
    /// `bodyBytes`, `digest` and `trailers`), in the line's usual order.
    private func writeUndecodedLine(_ record: ResponseRecord, source: ResultLine.Source, into out: OutputBuffer) {
        let line = ResultLine(out, fields: settings.fields)
        line.begin(source)
        line.provenance(id: record.id, url: record.url, method: record.method, warc: record.warc, arc: record.arc)
        line.revisit(record.warc)
        if line.wants(.status) { line.integer("status", record.status) }
        if line.wants(.contentType) {
            var ignored: [String] = []
            line.contentType(Self.contentType(of: record.headers, warnings: &ignored).mimeType)
        }
        if line.wants(.contentEncoding) {
            let codings = record.headers.listElements("Content-Encoding").map { $0.lowercased() }
            if !codings.isEmpty { line.stringArray("contentEncoding", codings) }
        }
        if line.wants(.bodyBytes) { line.integer("bodyBytes", record.body.count) }
        if let digest = record.warc?.digest, line.wants(.digest) { line.string("digest", digest.rawValue) }
        if let trailers = record.trailers, line.wants(.trailers) { line.fields("trailers", trailers) }
        line.end()
    }

    private func writeFailureLine(
        _ failure: FramingFailure, source: ResultLine.Source, into out: OutputBuffer, outcome: inout LineOutcome
    ) -> Bool {
        let line = ResultLine(out, fields: settings.fields)
        line.begin(source)
        line.provenance(id: failure.id, url: failure.url, method: failure.method, warc: failure.warc, arc: failure.arc)
        line.revisit(failure.warc)
        if let status = failure.status, line.wants(.status) { line.integer("status", status) }
        if let headers = failure.headers, line.wants(.contentType) {
            var ignored: [String] = []
            line.contentType(Self.contentType(of: headers, warnings: &ignored).mimeType)
        }
        // A record over the body limit, read as it was skipped: its body's size and its digest's check
        // (docs/output.md#records-over-the-body-limit).
        if let bodyBytes = failure.bodyBytes, line.wants(.bodyBytes) {
            line.integer("bodyBytes", Int(clamping: bodyBytes))
        }
        if let digest = failure.warc?.digest, line.wants(.digest) { line.string("digest", digest.rawValue) }
        if line.wants(.decoder) { line.string("decoder", "none") }
        if line.wants(.ok) { line.bool("ok", false) }
        if line.wants(.error) { line.error(failure.error) }
        outcome.errorCode = failure.error.code
        outcome.bodyBytes = Int(clamping: failure.bytes)
        if line.wants(.body) {
            failure.excerpt.withUnsafeBufferPointer { line.body($0, total: max(failure.bytes, Int64($0.count))) }
        }
        if !failure.warnings.isEmpty && line.wants(.warnings) {
            line.stringArray("warnings", Self.capped(failure.warnings, at: settings.options.limits.maxWarnings))
        }
        line.end()
        return false
    }

    private func writeRecordLine(
        _ record: ResponseRecord, source: ResultLine.Source, into out: OutputBuffer, outcome: inout LineOutcome
    ) -> Bool {
        let line = ResultLine(out, fields: settings.fields)
        var warnings = record.warnings
        line.begin(source)
        line.provenance(id: record.id, url: record.url, method: record.method, warc: record.warc, arc: record.arc)
        line.revisit(record.warc)
        if line.wants(.status) { line.integer("status", record.status) }

        var (mimeType, charset, contentType) = Self.contentType(of: record.headers, warnings: &warnings)
        let codings = record.headers.listElements("Content-Encoding").map { $0.lowercased() }

        // A status error, and with --strict-digests a payload digest mismatch, still let the body decode: the line
        // then has the value and the error (docs/decoding.md#status-errors-still-decode).
        var recordError =
            settings.acceptableStatusCodes.contains(record.status) ? nil : Validation.statusError(record.status)
        if settings.strictDigests, record.warc?.digest == .mismatch {
            recordError = RecordError(.digestMismatch, "WARC-Payload-Digest does not match the payload")
                .chained(over: recordError)
        }

        return record.body.withUnsafeBufferPointer { framed -> Bool in
            // Content-Encoding is undone first (docs/content-encoding.md#undoing-the-codings); a HAR body is already
            // decoded, an empty one has nothing
            // to undo. Everything after this sees the decoded body; a failure keeps the bytes as framed in `body`.
            var decoded: [UInt8]?
            var decodingError: RecordError?
            if !framed.isEmpty && !record.contentDecoded && codings.contains(where: { $0 != "identity" }) {
                do throws(RecordError) {
                    let outcome = try ContentDecoding.decode(framed, codings: codings, limits: settings.options.limits)
                    warnings += outcome.warnings
                    if outcome.codingsUndone > 0 { decoded = outcome.body }
                } catch {
                    decodingError = error
                }
            }
            let ok = decoded.withUnsafeBufferPointerOr(framed) { body -> Bool in
                // --sniff: a missing or generic type is taken from the (decoded) body's first bytes.
                var sniffed = false
                if settings.sniff && decodingError == nil && Sniffing.isSniffable(mimeType),
                    let sniffedType = Sniffing.mimeType(of: body),
                    let type = Sniffing.type(sniffedType, accepted: { t in settings.chain.contains { $0.accepts(t) } })
                {
                    mimeType = type
                    charset = nil
                    contentType = nil
                    sniffed = true
                }
                line.contentType(mimeType)
                if sniffed && line.wants(.sniffed) { line.bool("sniffed", true) }
                if !codings.isEmpty && line.wants(.contentEncoding) { line.stringArray("contentEncoding", codings) }
                if line.wants(.bodyBytes) { line.integer("bodyBytes", framed.count) }
                if let decoded, line.wants(.decodedBytes) { line.integer("decodedBytes", decoded.count) }
                outcome.bodyBytes = framed.count
                outcome.decodedBytes = decoded?.count ?? framed.count
                if let digest = record.warc?.digest, line.wants(.digest) { line.string("digest", digest.rawValue) }
                if let decodingError {
                    return fail(
                        line, decoder: "none", decodingError.chained(over: recordError), body: framed,
                        outcome: &outcome)
                }
                return decodeBody(
                    body, mimeType: mimeType, charset: charset, contentType: contentType, url: record.url,
                    // Only language detection reads it: no header lookup on every record otherwise.
                    contentLanguage: settings.options.detectLanguage
                        ? record.headers.values("Content-Language").last : nil,
                    recordError: recordError, fields: (record.headers, record.trailers),
                    line: line, warnings: &warnings, outcome: &outcome)
            }
            if let trailers = record.trailers, line.wants(.trailers) { line.fields("trailers", trailers) }
            if !warnings.isEmpty && line.wants(.warnings) {
                line.stringArray("warnings", Self.capped(warnings, at: settings.options.limits.maxWarnings))
            }
            line.end()
            return ok
        }
    }

    /// The chain, on the body with its content codings undone.
    private func decodeBody(
        _ body: UnsafeBufferPointer<UInt8>, mimeType: String?, charset: String?, contentType: String?, url: String?,
        contentLanguage: String?, recordError: RecordError?, fields: (HeaderFields, HeaderFields?), line: ResultLine,
        warnings: inout [String], outcome: inout LineOutcome
    ) -> Bool {
        if let entry = settings.chain.first(where: { $0.accepts(mimeType) }) {
            return decode(
                body, with: entry.decoder, mimeType: mimeType, charset: charset, contentType: contentType, url: url,
                contentLanguage: contentLanguage, fields: fields, statusError: recordError, line: line,
                warnings: &warnings, outcome: &outcome)
        }
        if settings.strictTypes && !(mimeType == nil && body.isEmpty) {
            let typeError = Validation.contentTypeError(mimeType)
            return fail(
                line, decoder: raw.name, recordError?.chained(over: typeError) ?? typeError, body: body,
                outcome: &outcome)
        }
        // The raw fallback gives a value only when the record is ok; otherwise the bytes go in `body`.
        if let recordError { return fail(line, decoder: raw.name, recordError, body: body, outcome: &outcome) }
        return decode(
            body, with: raw, mimeType: mimeType, charset: charset, contentType: contentType, url: url,
            contentLanguage: contentLanguage, fields: fields, statusError: nil, line: line,
            warnings: &warnings, outcome: &outcome)
    }

    /// The MIME type (docs/decoding.md#mime-type), or nil, with the `charset` parameter and the field value; several
    /// differing Content-Type fields give a warning, and the last one counts.
    private static func contentType(
        of headers: HeaderFields, warnings: inout [String]
    ) -> (mimeType: String?, charset: String?, value: String?) {
        let contentTypes = headers.values("Content-Type")
        if contentTypes.count > 1 && contentTypes.contains(where: { $0 != contentTypes[0] }) {
            warnings.append("several differing Content-Type fields; the last one is used")
        }
        let mimeType = contentTypes.last.flatMap(MediaType.mimeType(ofContentType:))
        return (mimeType, contentTypes.last.flatMap(MediaType.charset(ofContentType:)), contentTypes.last)
    }

    private func decode(
        _ body: UnsafeBufferPointer<UInt8>, with decoder: any BodyDecoder, mimeType: String?, charset: String?,
        contentType: String?, url: String?, contentLanguage: String?, fields: (HeaderFields, HeaderFields?),
        statusError: RecordError?, line: ResultLine, warnings: inout [String], outcome: inout LineOutcome
    ) -> Bool {
        let out = line.out
        if line.wants(.decoder) { line.string("decoder", decoder.name) }
        outcome.decoder = decoder.name
        outcome.errorCode = statusError?.code
        let mark = out.mark
        if line.wants(.ok) { line.bool("ok", statusError == nil) }
        // Without `value` in --fields the decoder still runs (`ok`, `error` and the statistics say what it found),
        // and its value is dropped.
        let valueMark = out.mark
        line.key("value")
        var context = DecodingContext(
            mimeType: mimeType, charset: charset, url: url, options: settings.options)
        context.contentLanguage = contentLanguage
        context.contentType = contentType
        context.chain = settings.chain
        (context.headers, context.trailers) = fields
        do {
            let wroteValue = try decoder.decode(body, context: &context, into: out)
            warnings += context.warnings
            if wroteValue {
                if !line.wants(.value) { out.rollback(to: valueMark) }
                if let statusError, line.wants(.error) { line.error(statusError) }
                return statusError == nil
            }
            out.rollback(to: mark)
            if line.wants(.ok) { line.bool("ok", statusError == nil) }
            guard let statusError else { return true }
            if line.wants(.error) { line.error(statusError) }
            attachBody(body, line: line)
            return false
        } catch {
            warnings += context.warnings
            out.rollback(to: mark)
            if line.wants(.ok) { line.bool("ok", false) }
            if line.wants(.error) { line.error(error.chained(over: statusError)) }
            outcome.errorCode = error.code
            attachBody(body, line: line)
            return false
        }
    }

    private func fail(
        _ line: ResultLine, decoder: String, _ error: RecordError, body: UnsafeBufferPointer<UInt8>,
        outcome: inout LineOutcome
    ) -> Bool {
        if line.wants(.decoder) { line.string("decoder", decoder) }
        outcome.decoder = decoder
        outcome.errorCode = error.code
        if line.wants(.ok) { line.bool("ok", false) }
        if line.wants(.error) { line.error(error) }
        attachBody(body, line: line)
        return false
    }

    /// At most `limit` warnings (`maxWarnings`): past it, the first `limit - 1` and one that counts the rest.
    static func capped(_ warnings: [String], at limit: Int) -> [String] {
        guard warnings.count > limit else { return warnings }
        let kept = max(limit - 1, 0)
        return Array(warnings.prefix(kept)) + ["\(warnings.count - kept) more warnings (--max-warnings)"]
    }

    /// The failing response data (AFNetworking's `…error.data` key), capped at `maxErrorBodyBytes`.
    private func attachBody(_ body: UnsafeBufferPointer<UInt8>, line: ResultLine) {
        guard line.wants(.body) else { return }
        let kept = UnsafeBufferPointer(rebasing: body.prefix(settings.options.limits.maxErrorBodyBytes))
        line.body(kept, total: Int64(body.count))
    }
}

extension Optional where Wrapped == [UInt8] {
    /// Runs `body` on this array's bytes, or on `fallback` when there is no array (also for a multipart part's
    /// transfer-decoded copy).
    func withUnsafeBufferPointerOr<R>(
        _ fallback: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R
    ) -> R {
        switch self {
        case .some(let array): array.withUnsafeBufferPointer(body)
        case .none: body(fallback)
        }
    }
}

extension CompoundDecoder: LineWriter {
    /// The payload digest is checked in ``writeLine(for:source:into:)``, after selection: a skipped record is not
    /// hashed.
    public var checksPayloadDigests: Bool { true }
}

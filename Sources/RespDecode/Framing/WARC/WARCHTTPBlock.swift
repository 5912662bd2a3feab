/*
 What a WARC record says, once the framer has its header section and its whole block (docs/framings.md#warc):

     response, application/http; msgtype=response ... the block is an HTTP/1.x response: status line and fields
                                                        (interim 1xx heads skipped), then the body: the rest of the
                                                        block, de-chunked when the last transfer coding is chunked
     revisit whose block is HTTP ...................... the same (the body is usually empty: the payload is elsewhere)
     everything else (resource, request, metadata, …) . status 200, one Content-Type field with the WARC Content-Type,
                                                        the block as the body

 The WARC Content-Length decides where the block ends; an HTTP Content-Length that disagrees only earns a warning.
 A response declared chunked whose first chunk does not frame was stored already de-chunked (Common Crawl, and
 warcio's writer, do this): it is taken as is, with a warning. Content-Encoding is left for the decoder chain.

 WARC-Payload-Digest is checked over the payload: the HTTP entity body of a response (either as stored, chunked, or
 de-chunked: writers disagree, warcio issue 74), the body after the request head of an HTTP request record, the whole
 block otherwise. A revisit's digest is the digest of a payload stored in another record, so it is not checked; it is
 kept as written (`payloadDigest`), with the revisit's WARC-Refers-To fields (`refersTo`), for the line and for
 `--resolve-revisits` (docs/output.md#revisits).
 */
import Glibc

/// A WARC record's header section: version line and named fields.
struct WARCHeader {
    /// `1.0`, `1.1`, `0.17` or `0.18`.
    var version: String
    var fields: HeaderFields
    /// Things worth knowing about the fields (obsolete line folding).
    var warnings: [String]

    /// The versions read, as warcio reads them.
    static let versions: Set<String> = ["1.0", "1.1", "0.17", "0.18"]

    /// `WARC-Type` as written, `nil` when absent.
    var type: String? { fields.last("WARC-Type") }

    /// The block length, or why there is none.
    var contentLength: Result<Int, WARCBlock.Problem> {
        let values = fields.values("Content-Length")
        guard !values.isEmpty else {
            return .failure(WARCBlock.Problem(.malformedRecord, "the WARC header has no Content-Length"))
        }
        guard let length = HTTPStreamFramer.contentLength(values.map { Substring($0) }) else {
            let list = values.map { "'\($0)'" }.joined(separator: ", ")
            return .failure(
                WARCBlock.Problem(
                    .malformedRecord, "invalid or differing WARC Content-Length \(list): the record cannot be framed"))
        }
        return .success(length)
    }

    /// `WARC-Target-URI` repaired as warcio does: `<…>` (Wget 1.19 wrote them) removed, spaces written `%20`.
    func targetURI(warnings: inout [String]) -> String? {
        guard var uri = fields.last("WARC-Target-URI") else { return nil }
        if uri.utf8.count >= 2, uri.hasPrefix("<"), uri.hasSuffix(">") {
            uri = String(uri.dropFirst().dropLast())
        }
        if uri.utf8.contains(UInt8(ascii: " ")) {
            warnings.append("spaces in WARC-Target-URI replaced by %20")
            uri = Self.escapingSpaces(uri)
        }
        return uri
    }

    /// `url` with each space written `%20`, as warcio writes a URL that has them (WARC-Target-URI, an ARC URL).
    static func escapingSpaces(_ url: String) -> String {
        url.split(separator: " ", omittingEmptySubsequences: false).joined(separator: "%20")
    }

    /// Parses a header section: the version line, field lines and the empty line that ends them (CRLF or bare LF).
    /// Fields are parsed as HTTP fields (obsolete line folding joined with a warning, UTF-8 values kept).
    /// Lines ending CR CR LF (the empty line that ends the section too) are read as CRLF, with a warning.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<WARCHeader, HeadParser.Problem> {
        let n = bytes.count
        guard n >= 4, bytes[n - 4] == 0x0A, bytes[n - 3] == 0x0D, bytes[n - 2] == 0x0D, bytes[n - 1] == 0x0A else {
            return parseSection(bytes)
        }
        var repaired: [UInt8] = []
        repaired.reserveCapacity(n)
        var k = 0
        while k < n {
            if bytes[k] == 0x0D && k + 2 < n && bytes[k + 1] == 0x0D && bytes[k + 2] == 0x0A { k += 1 }
            repaired.append(bytes[k])
            k += 1
        }
        return repaired.withUnsafeBufferPointer { parseSection($0) }.map { header in
            var header = header
            header.warnings.insert("WARC header lines end CR CR LF: read as CRLF", at: 0)
            return header
        }
    }

    private static func parseSection(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<WARCHeader, HeadParser.Problem> {
        guard let newline = WARCBlock.find(0x0A, in: bytes, from: 0, to: bytes.count) else {
            return .failure(HeadParser.Problem(message: "version line has no line end", offset: bytes.count))
        }
        var end = newline
        while end > 0 && (bytes[end - 1] == 0x0D || bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09) { end -= 1 }
        let line = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
        guard line.hasPrefix("WARC/"), versions.contains(String(line.dropFirst(5))) else {
            return .failure(
                HeadParser.Problem(
                    message: "version line '\(line.prefix(40))' is not WARC/1.0, WARC/1.1, WARC/0.17 or WARC/0.18",
                    offset: 0))
        }
        switch HeadParser.parseFieldLines(bytes, firstLine: newline + 1) {
        case .failure(let problem):
            return .failure(problem)
        case .success(let (fields, warnings)):
            return .success(
                WARCHeader(
                    version: String(line.dropFirst(5)), fields: fields, warnings: warnings.map { "WARC header: " + $0 })
            )
        }
    }
}

/// Interpreting a record's block.
enum WARCBlock {
    /// Why a block gives no response; `status` and `headers` when an HTTP head was read.
    struct Problem: Error {
        var code: RecordError.Code
        var message: String
        var status: Int?
        var headers: HeaderFields?

        init(_ code: RecordError.Code, _ message: String, status: Int? = nil, headers: HeaderFields? = nil) {
            self.code = code
            self.message = message
            self.status = status
            self.headers = headers
        }
    }

    /// The response a selected record gives. `warnings` come first from the caller; `lend`, when given, gives the
    /// bytes of `block` in a range as a body that borrows them (``FramerInput/lend(_:)``), for a body that is stored
    /// bytes of the block as they are: it is not copied then.
    static func response(
        header: WARCHeader, block: UnsafeBufferPointer<UInt8>, offset: Int64, warnings initial: [String],
        limits: Limits, verifyDigests: Bool, lend: ((Range<Int>) -> Body)? = nil
    ) -> Result<ResponseRecord, Problem> {
        var warnings = initial + header.warnings
        let url = header.targetURI(warnings: &warnings)
        let type = header.type ?? ""
        var info = WARCRecordInfo(
            type: type, recordId: header.fields.last("WARC-Record-ID"), date: header.fields.last("WARC-Date"),
            truncated: header.fields.last("WARC-Truncated"))
        let contentType = header.fields.last("Content-Type")
        let isRevisit = asciiCaseInsensitiveEquals(type, "revisit")
        let payloadDigest = header.fields.first("WARC-Payload-Digest")
        info.payloadDigest = payloadDigest
        if isRevisit { info.refersTo = refersTo(header.fields) }

        var record: ResponseRecord
        // Where the payload starts in the block (after an HTTP head), and where a de-chunked body's data stood in it.
        var payloadStart = 0
        var chunkData: [Range<Int>]?
        let blockKind = kind(type: type, contentType: contentType, block: block)
        switch blockKind {
        case .httpResponse:
            let writerTruncated = header.fields.last("WARC-Truncated") != nil
            switch httpResponse(
                block, limits: limits, isRevisit: isRevisit, writerTruncated: writerTruncated, lend: lend)
            {
            case .failure(let problem):
                return .failure(problem)
            case .success(let parsed):
                record = ResponseRecord(
                    offset: offset, status: parsed.status, headers: parsed.headers, trailers: parsed.trailers, url: url)
                record.body = parsed.body
                warnings += parsed.warnings
                payloadStart = parsed.bodyStart
                chunkData = parsed.chunkData
                info.httpBlock = true
                // A CDXJ index computes the digest a record does not carry, over the payload as stored.
                if payloadDigest == nil, !isRevisit, let data = parsed.chunkData {
                    info.storedChunkFraming = ChunkFraming(
                        stored: UnsafeBufferPointer(rebasing: block[parsed.bodyStart...]), data: data)
                }
            }
        case .httpRequest, .other:
            guard block.count <= limits.maxBodyBytes else {
                return .failure(
                    Problem(
                        .limitExceeded,
                        "block of \(block.count) bytes exceeds \(limits.maxBodyBytes) bytes (maxBodyBytes)"))
            }
            var fields = HeaderFields()
            if let contentType { fields.append(name: "Content-Type", value: contentType) }
            record = ResponseRecord(offset: offset, status: 200, headers: fields, url: url)
            record.body = lend?(0..<block.count) ?? Body(Array(block))
            if blockKind == .httpRequest, let headEnd = endOfFieldSection(block, from: 0, to: block.count) {
                payloadStart = headEnd
            }
        }

        if verifyDigests, !isRevisit, let field = header.fields.last("WARC-Payload-Digest") {
            switch PayloadDigest.parse(field) {
            case .unusable(let problem):
                warnings.append(problem)
            case .neverMatches(let problem):
                warnings.append(problem)
                info.digest = .mismatch
            case .expected(let expected):
                // Checked by a worker (PayloadDigest.swift). A response: the body as framed; when it was
                // de-chunked, also the body as stored, which the worker rebuilds from the body and the few bytes
                // de-chunking removed (not a copy of the payload). Otherwise the block after any request head (the
                // body is the block).
                if blockKind == .httpResponse {
                    info.pendingDigest = PendingPayloadDigest(
                        expected: expected, payloadStart: 0,
                        chunkFraming: chunkData.map {
                            ChunkFraming(stored: UnsafeBufferPointer(rebasing: block[payloadStart...]), data: $0)
                        })
                } else {
                    info.pendingDigest = PendingPayloadDigest(
                        expected: expected, payloadStart: payloadStart, chunkFraming: nil)
                }
            }
        }
        record.warc = info
        record.warnings = warnings
        return .success(record)
    }

    /// A revisit's `WARC-Refers-To*` fields; nil when it has none.
    static func refersTo(_ fields: HeaderFields) -> WARCRefersTo? {
        let refers = WARCRefersTo(
            recordId: fields.last("WARC-Refers-To"), targetURI: fields.last("WARC-Refers-To-Target-URI"),
            date: fields.last("WARC-Refers-To-Date"))
        return refers == WARCRefersTo() ? nil : refers
    }

    enum Kind { case httpResponse, httpRequest, other }

    /// How a block is read, from the record type, the WARC Content-Type and the block's first bytes.
    static func kind(type: String, contentType: String?, block: UnsafeBufferPointer<UInt8>) -> Kind {
        // The two spellings nearly every writer uses, decided without parsing the parameters (a measured 7 % of a
        // mixed .warc.gz run went into the general path below).
        if contentType == "application/http; msgtype=response" || contentType == "application/http;msgtype=response",
            type == "response"
        {
            return .httpResponse
        }
        let isHTTP = contentType.flatMap(MediaType.mimeType(ofContentType:)) == "application/http"
        let msgtype = contentType.flatMap { MediaType.parameter("msgtype", ofContentType: $0) }.map { $0.lowercased() }
        let startsLikeResponse = block.starts(with: "HTTP/1.".utf8)
        if asciiCaseInsensitiveEquals(type, "response") {
            if isHTTP && msgtype != "request" { return .httpResponse }
            return contentType == nil && startsLikeResponse ? .httpResponse : .other
        }
        if asciiCaseInsensitiveEquals(type, "revisit") {
            return startsLikeResponse || (isHTTP && msgtype != "request" && !block.isEmpty) ? .httpResponse : .other
        }
        if asciiCaseInsensitiveEquals(type, "request") && isHTTP { return .httpRequest }
        return .other
    }

    struct HTTPResponse {
        var status: Int
        var headers: HeaderFields
        var body: Body
        var trailers: HeaderFields?
        var warnings: [String]
        /// Where the body starts in the block (after the last head).
        var bodyStart: Int
        /// The body was de-chunked (it differs from the stored bytes): where its bytes stood in the stored ones
        /// (relative to `bodyStart`), each chunk's data in order; nil when the body is the stored bytes.
        var chunkData: [Range<Int>]?
    }

    /// Parses a block that holds an HTTP/1.x response.
    static func httpResponse(
        _ block: UnsafeBufferPointer<UInt8>, limits: Limits, isRevisit: Bool, writerTruncated: Bool,
        lend: ((Range<Int>) -> Body)? = nil
    ) -> Result<HTTPResponse, Problem> {
        var start = 0
        var interim: [Int] = []
        var head: HeadParser.Head
        while true {
            let limit = start + min(block.count - start, limits.maxHeaderBytes)
            guard let end = endOfFieldSection(block, from: start, to: limit) else {
                if limit < block.count {
                    return .failure(
                        Problem(
                            .limitExceeded,
                            "HTTP header section longer than \(limits.maxHeaderBytes) bytes (maxHeaderBytes)"))
                }
                return .failure(Problem(.malformedRecord, "the block has no complete HTTP response head"))
            }
            switch HeadParser.parseResponseHead(UnsafeBufferPointer(rebasing: block[start..<end])) {
            case .failure(let problem):
                return .failure(
                    Problem(
                        .malformedRecord, "HTTP head in the block, byte \(start + problem.offset): \(problem.message)"))
            case .success(let parsed):
                head = parsed
            }
            start = end
            guard head.status >= 100 && head.status < 200 && head.status != 101 else { break }
            interim.append(head.status)
        }
        var warnings = head.warnings
        if !interim.isEmpty {
            warnings.append(
                "interim response \(interim.map(String.init).joined(separator: ", ")) folded into this record")
        }
        let rest = UnsafeBufferPointer(rebasing: block[start...])
        var body: Body
        var trailers: HeaderFields?
        var chunkData: [Range<Int>]?
        let codings = head.fields.listElements("Transfer-Encoding")
        let chunked =
            codings.last.map { asciiCaseInsensitiveEquals($0, "chunked") } == true
            && codings.filter { asciiCaseInsensitiveEquals($0, "chunked") }.count == 1
        if chunked {
            // Codings before chunked (`gzip, chunked`) are transfer codings, not content codings: not undone.
            if codings.count > 1 {
                let others = codings.dropLast().joined(separator: ", ")
                warnings.append("transfer coding '\(others)' before chunked is not undone")
            }
            var ranges: [Range<Int>] = []
            switch dechunk(rest, dataRanges: &ranges) {
            case .notChunked:
                body = Body(Array(rest))
                if !rest.isEmpty {
                    warnings.append(
                        "Transfer-Encoding: chunked, but the body is not chunked (stored de-chunked): taken as is")
                }
            case .complete(let data, let fields, let notes):
                body = Body(data)
                trailers = fields
                warnings += notes
                chunkData = ranges
            case .broken(let data, let message):
                guard writerTruncated else {
                    return .failure(
                        Problem(.malformedRecord, "chunked body: \(message)", status: head.status, headers: head.fields)
                    )
                }
                body = Body(data)
                chunkData = ranges
                warnings.append(
                    "chunked body cut short (\(message)); the record is WARC-Truncated: kept the \(data.count) bytes de-chunked"
                )
            }
        } else {
            if !codings.isEmpty {
                warnings.append("transfer coding '\(codings.joined(separator: ", "))' is not undone")
            }
            // Over the limit, the body is not kept (the failure below): nothing is copied or lent.
            body = rest.count > limits.maxBodyBytes ? Body() : lend?(start..<block.count) ?? Body(Array(rest))
            let lengths = head.fields.listElements("Content-Length")
            if !isRevisit, !lengths.isEmpty, head.status != 204, head.status != 304,
                let declared = HTTPStreamFramer.contentLength(lengths), declared != rest.count
            {
                warnings.append(
                    "HTTP Content-Length \(declared) differs from the \(rest.count) body bytes in the record (the WARC Content-Length decides)"
                )
            }
        }
        guard chunked ? body.count <= limits.maxBodyBytes : rest.count <= limits.maxBodyBytes else {
            return .failure(
                Problem(
                    .limitExceeded, "body longer than \(limits.maxBodyBytes) bytes (maxBodyBytes)", status: head.status,
                    headers: head.fields))
        }
        return .success(
            HTTPResponse(
                status: head.status, headers: head.fields, body: body, trailers: trailers, warnings: warnings,
                bodyStart: start, chunkData: chunkData))
    }

    enum Dechunked {
        /// The first chunk does not frame: the body was stored de-chunked.
        case notChunked
        case complete([UInt8], trailers: HeaderFields?, warnings: [String])
        /// Chunks framed, then one did not: what was de-chunked before it, and what is wrong.
        case broken([UInt8], String)
    }

    /// De-chunks a whole chunked body (RFC 9112 §7.1), chunk data copied with one append per chunk.
    /// - Parameters:
    ///   - b: the body as stored.
    ///   - dataRanges: where each chunk's data stands in `b`, in order, as they are copied.
    /// - Returns: the body de-chunked, or why it could not be.
    static func dechunk(_ b: UnsafeBufferPointer<UInt8>, dataRanges: inout [Range<Int>]) -> Dechunked {
        var body: [UInt8] = []
        body.reserveCapacity(b.count)
        var i = 0
        var first = true
        while true {
            guard let newline = find(0x0A, in: b, from: i, to: b.count) else {
                return first ? .notChunked : .broken(body, "the chunked body ends without its last chunk")
            }
            let parsed = HeadParser.parseChunkSizeLine(UnsafeBufferPointer(rebasing: b[i..<newline]))
            guard let size = parsed.size else {
                return first
                    ? .notChunked : .broken(body, (parsed.problem ?? "invalid chunk-size line") + " at byte \(i)")
            }
            i = newline + 1
            if size == 0 { break }
            guard size <= b.count - i else {
                return first
                    ? .notChunked
                    : .broken(body, "a chunk of \(size) bytes at byte \(i) runs past the end of the block")
            }
            body.append(contentsOf: UnsafeBufferPointer(rebasing: b[i..<i + size]))
            dataRanges.append(i..<i + size)
            i += size
            if i < b.count && b[i] == 0x0A {
                i += 1
            } else if i + 1 < b.count && b[i] == 0x0D && b[i + 1] == 0x0A {
                i += 2
            } else if i == b.count {
                return .broken(body, "the chunked body ends without its last chunk")
            } else {
                return first ? .notChunked : .broken(body, "chunk data not followed by CRLF at byte \(i)")
            }
            first = false
        }
        var warnings: [String] = []
        var trailers: HeaderFields?
        if i == b.count {
            warnings.append("the chunked body ends without the empty line after its last chunk")
        } else {
            guard let end = endOfFieldSection(b, from: i, to: b.count, firstLineMayBeEmpty: true) else {
                return .broken(body, "the trailer section has no end")
            }
            switch HeadParser.parseFieldLines(UnsafeBufferPointer(rebasing: b[i..<end]), firstLine: 0) {
            case .failure(let problem):
                return .broken(body, "trailer section: \(problem.message)")
            case .success(let (fields, notes)):
                if !fields.isEmpty { trailers = fields }
                warnings += notes
            }
            if end < b.count {
                warnings.append("\(b.count - end) bytes after the end of the chunked body are ignored")
            }
        }
        return .complete(body, trailers: trailers, warnings: warnings)
    }

    // MARK: - Searching

    /// Index of the first `byte` in `b[from..<to]`.
    @inline(__always)
    static func find(_ byte: UInt8, in b: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        guard from < to, let base = b.baseAddress, let hit = memchr(base + from, Int32(byte), to - from) else {
            return nil
        }
        return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
    }

    /// The index just past the empty line that ends a field section starting at `from` (lines end in CRLF or LF),
    /// looking no further than `to`.
    static func endOfFieldSection(
        _ b: UnsafeBufferPointer<UInt8>, from: Int, to: Int, firstLineMayBeEmpty: Bool = false
    ) -> Int? {
        if firstLineMayBeEmpty {
            if from < to && b[from] == 0x0A { return from + 1 }
            if from + 1 < to && b[from] == 0x0D && b[from + 1] == 0x0A { return from + 2 }
        }
        var i = from
        while let newline = find(0x0A, in: b, from: i, to: to) {
            let next = newline + 1
            if next < to && b[next] == 0x0A { return next + 1 }
            if next + 1 < to && b[next] == 0x0D && b[next + 1] == 0x0A { return next + 2 }
            i = next
        }
        return nil
    }
}

/*
 A WARC block over the limits (longer than maxBodyBytes + maxHeaderBytes), or an ARC record's, read as the framer
 skips it (docs/reliability.md#limits): nothing of it is held but its HTTP head (at most maxHeaderBytes) and the first
 bytes of its body (`sniffBytes`), so a 2 GB record costs what a small one does. The framer passes each run of the block as it
 goes by (`feed`) and, at the end of the record, takes what its line says of it (`finish`): the status and header
 fields, the payload digest's check, the body's size and a MIME type sniffed from the body's first bytes.

 The rules are those of a block held whole (WARCHTTPBlock.swift), applied as the bytes pass:

     kind ........... WARCBlock.kind: from the WARC-Type, the WARC Content-Type and the block's first 7 bytes
     HTTP response .. interim 1xx heads skipped; each head at most maxHeaderBytes (longer, or malformed: no status,
                      and the digest is not checked, the payload's start being unknown)
     payload ........ a response's body after its head; a request record's block after its head (looked for in the
                      first maxHeaderBytes); the whole block otherwise
     digest ......... WARC-Payload-Digest compared with the body as framed (de-chunked when the last transfer coding
                      is chunked) and, for a de-chunked body, with the body as stored: `ok` when either matches, as
                      the workers check a held record (PayloadDigest.swift; writers disagree, warcio issue 74). Two
                      digest contexts run side by side then, the de-chunking done on the fly (`ChunkStream`)
     nothing else ... no Content-Encoding undone, nothing decoded: the sniffed type is that of the body as framed

 One difference, where the bytes cannot be taken back: a chunked body cut inside a chunk (a WARC-Truncated record)
 counts the part of that chunk it has, where the held path leaves the chunk out.
 */

/// A WARC block being skipped for its size, read on the fly. See the file comment.
final class OverLimitBlock {
    /// What the line of the record says.
    struct Outcome {
        var status: Int?
        var headers: HeaderFields?
        var digest: DigestCheck?
        /// The body's size as framed (de-chunked), when the whole block was read.
        var bodyBytes: Int64?
        var warnings: [String]
    }

    /// How many of the body's first bytes are kept for sniffing (Sniffing.swift needs at most 1 KiB to tell a plist
    /// from other XML).
    static let sniffBytes = 1024

    private let limits: Limits
    private let type: String
    private let contentType: String?
    private var warnings: [String] = []

    private enum Phase {
        /// Not enough bytes yet to tell the block's kind.
        case undecided
        /// Reading an HTTP head (a response's, or a request record's).
        case head
        case body
        /// The payload's start is unknown (a head too long or malformed): the bytes are only counted.
        case lost
    }
    private var phase = Phase.undecided
    private var kind = WARCBlock.Kind.other
    /// An ARC record's kind, decided by its URL's scheme (ARCBlock.response), not by its first bytes.
    private var arcKind: WARCBlock.Kind?
    /// The block's first bytes while its kind is undecided, then the HTTP head being read (at most maxHeaderBytes).
    private var pending: [UInt8] = []
    /// How far `pending` was searched for the end of the head.
    private var searched = 0
    private var interim: [Int] = []
    private var status: Int?
    private var headers: HeaderFields?

    // The payload digest: the expected value, parsed from the header, and its contexts (as stored; de-chunked).
    private var expected: PayloadDigest.Expected?
    private var neverMatches = false
    private var stored: PayloadDigest.Stream?
    private var dechunked: PayloadDigest.Stream?
    // The body: as stored, and de-chunked when it is chunked.
    private var chunks: ChunkStream?
    private var storedCount: Int64 = 0
    private var storedPrefix: [UInt8] = []
    private var dechunkedCount: Int64 = 0
    private var dechunkedPrefix: [UInt8] = []

    /// - Parameters:
    ///   - header: the record's WARC header.
    ///   - warnings: the record's warnings so far (the framer's).
    ///   - limits: `maxHeaderBytes` bounds each HTTP head and chunk-size line held.
    ///   - verifyDigests: check WARC-Payload-Digest (`--no-digest-check` turns it off).
    init(header: WARCHeader, warnings: [String], limits: Limits, verifyDigests: Bool) {
        self.limits = limits
        self.warnings = warnings + header.warnings
        type = header.type ?? ""
        contentType = header.fields.last("Content-Type")
        let isRevisit = asciiCaseInsensitiveEquals(type, "revisit")
        guard verifyDigests, !isRevisit, let field = header.fields.last("WARC-Payload-Digest") else { return }
        switch PayloadDigest.parse(field) {
        case .unusable(let problem):
            self.warnings.append(problem)
        case .neverMatches(let problem):
            self.warnings.append(problem)
            neverMatches = true
        case .expected(let value):
            expected = value
            stored = PayloadDigest.Stream(value.algorithm)
            if stored == nil {
                self.warnings.append("libcrypto could not compute the \(value.algorithm.rawValue) digest: not checked")
                expected = nil
            }
        }
    }

    /// An ARC record's block (Framing/ARC): an HTTP response for an `http` or `https` URL, the block with the ARC
    /// Content-type otherwise, as ARCBlock.response reads it; ARC has no payload digest.
    init(arc header: ARCHeader, warnings: [String], limits: Limits) {
        self.limits = limits
        self.warnings = warnings
        type = "response"
        contentType = header.contentType.isEmpty || header.contentType == "-" ? nil : header.contentType
        let scheme = header.url.prefix(while: { $0 != ":" }).lowercased()
        arcKind = scheme == "http" || scheme == "https" ? .httpResponse : .other
    }

    /// The next bytes of the block, in order.
    func feed(_ data: UnsafeBufferPointer<UInt8>) {
        var data = data
        while !data.isEmpty {
            switch phase {
            case .undecided:
                let take = min(data.count, 7 - pending.count)
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: data[..<take]))
                data = UnsafeBufferPointer(rebasing: data[take...])
                if pending.count == 7 { decideKind() }
            case .head:
                let room = limits.maxHeaderBytes - pending.count
                let take = min(data.count, max(room, 0))
                pending.append(contentsOf: UnsafeBufferPointer(rebasing: data[..<take]))
                data = UnsafeBufferPointer(rebasing: data[take...])
                // What followed the head in `pending`, then the rest of `data`, is read in the next phase.
                readHead(atEnd: false)
            case .body:
                body(data)
                return
            case .lost:
                storedCount += Int64(data.count)
                return
            }
        }
    }

    /// What the line says. `complete`: the whole block was read (otherwise the record was cut short, and neither
    /// the digest nor the body's size is known).
    func finish(complete: Bool) -> Outcome {
        if complete {
            if phase == .undecided { decideKind() }
            if phase == .head { readHead(atEnd: true) }
        }
        var outcome = Outcome(status: status, headers: headers, warnings: warnings)
        let framed: [UInt8]
        var dechunkedIsBody = false
        if var stream = chunks {
            let end = stream.finish()
            chunks = stream
            switch end {
            case .complete:
                dechunkedIsBody = true
            case .broken(let message):
                dechunkedIsBody = true
                if complete { outcome.warnings.append("chunked body: \(message)") }
            case .notChunked:
                if complete && storedCount > 0 {
                    outcome.warnings.append(
                        "Transfer-Encoding: chunked, but the body is not chunked (stored de-chunked): taken as is")
                }
            case .undecided:
                break
            }
        }
        framed = dechunkedIsBody ? dechunkedPrefix : storedPrefix
        if complete && phase == .body {
            outcome.bodyBytes = dechunkedIsBody ? dechunkedCount : storedCount
            if neverMatches {
                outcome.digest = .mismatch
            } else if let expected, let stored {
                let asStored = stored.finish()
                let asFramed = dechunkedIsBody ? dechunked?.finish() : nil
                if asStored == nil || (dechunkedIsBody && asFramed == nil) {
                    outcome.warnings.append(
                        "libcrypto could not compute the \(expected.algorithm.rawValue) digest: not checked")
                } else {
                    let matches = asStored == expected.value || asFramed == expected.value
                    outcome.digest = matches ? .ok : .mismatch
                }
            }
        }
        if let sniffed = Self.sniffedWarning(framed) { outcome.warnings.append(sniffed) }
        return outcome
    }

    /// The warning that says what a body not decoded for its size looks like, from its first bytes (at most
    /// `sniffBytes`); `nil` when they show no type with confidence (Sniffing.swift).
    static func sniffedWarning(_ prefix: [UInt8]) -> String? {
        guard let type = prefix.withUnsafeBufferPointer({ Sniffing.mimeType(of: $0) }) else { return nil }
        return "the body was not decoded; its first bytes look like \(type) (sniffed)"
    }

    // MARK: - Steps

    private func decideKind() {
        kind =
            arcKind
            ?? pending.withUnsafeBufferPointer { WARCBlock.kind(type: type, contentType: contentType, block: $0) }
        switch kind {
        case .httpResponse, .httpRequest:
            phase = .head
            searched = 0
            readHead(atEnd: false)
        case .other:
            startBody(status: 200, headers: warcContentType(), chunked: false)
            let first = pending
            pending = []
            first.withUnsafeBufferPointer { body($0) }
        }
    }

    /// The WARC Content-Type as the record's only field: what a block that is not an HTTP response gets.
    private func warcContentType() -> HeaderFields {
        var fields = HeaderFields()
        if let contentType { fields.append(name: "Content-Type", value: contentType) }
        return fields
    }

    /// Looks for the end of the head in `pending`; with `atEnd`, the block has no more bytes.
    private func readHead(atEnd: Bool) {
        while phase == .head {
            let found = pending.withUnsafeBufferPointer {
                WARCBlock.endOfFieldSection($0, from: max(0, searched - 2), to: $0.count)
            }
            guard let end = found else {
                searched = pending.count
                if pending.count >= limits.maxHeaderBytes || atEnd { headNotFound(atEnd: atEnd) }
                return
            }
            let rest = Array(pending[end...])
            if kind == .httpRequest {
                // The payload is what follows the request head.
                pending = []
                startBody(status: 200, headers: warcContentType(), chunked: false)
                rest.withUnsafeBufferPointer { body($0) }
                return
            }
            let parsed = pending.withUnsafeBufferPointer {
                HeadParser.parseResponseHead(UnsafeBufferPointer(rebasing: $0[..<end]))
            }
            let head: HeadParser.Head
            switch parsed {
            case .failure(let problem):
                lose("HTTP head in the block, byte \(problem.offset): \(problem.message)")
                return
            case .success(let value):
                head = value
            }
            pending = rest
            searched = 0
            if head.status >= 100 && head.status < 200 && head.status != 101 {
                interim.append(head.status)
                continue
            }
            warnings += head.warnings
            if !interim.isEmpty {
                warnings.append(
                    "interim response \(interim.map(String.init).joined(separator: ", ")) folded into this record")
            }
            let codings = head.fields.listElements("Transfer-Encoding")
            let chunked =
                codings.last.map { asciiCaseInsensitiveEquals($0, "chunked") } == true
                && codings.filter { asciiCaseInsensitiveEquals($0, "chunked") }.count == 1
            if chunked && codings.count > 1 {
                let others = codings.dropLast().joined(separator: ", ")
                warnings.append("transfer coding '\(others)' before chunked is not undone")
            } else if !chunked && !codings.isEmpty {
                warnings.append("transfer coding '\(codings.joined(separator: ", "))' is not undone")
            }
            startBody(status: head.status, headers: head.fields, chunked: chunked)
            pending = []
            rest.withUnsafeBufferPointer { body($0) }
        }
    }

    /// No end of the head in its first maxHeaderBytes (or before the block ended).
    private func headNotFound(atEnd: Bool) {
        if kind == .httpRequest {
            // No request head: the whole block is the payload.
            let first = pending
            pending = []
            startBody(status: 200, headers: warcContentType(), chunked: false)
            first.withUnsafeBufferPointer { body($0) }
            return
        }
        lose(
            atEnd
                ? "the block has no complete HTTP response head"
                : "HTTP header section longer than \(limits.maxHeaderBytes) bytes (maxHeaderBytes)")
    }

    /// The payload's start is unknown: the rest is counted only.
    private func lose(_ problem: String) {
        warnings.append(problem + (expected != nil ? ": WARC-Payload-Digest not checked" : ""))
        expected = nil
        neverMatches = false
        storedCount += Int64(pending.count)
        pending = []
        phase = .lost
    }

    private func startBody(status: Int, headers: HeaderFields, chunked: Bool) {
        self.status = status
        self.headers = headers
        phase = .body
        if chunked {
            chunks = ChunkStream(maxLineBytes: limits.maxHeaderBytes)
            if let expected {
                dechunked = PayloadDigest.Stream(expected.algorithm)
                if dechunked == nil { stored = nil }
            }
        }
    }

    private func body(_ data: UnsafeBufferPointer<UInt8>) {
        guard !data.isEmpty else { return }
        storedCount += Int64(data.count)
        stored?.update(data)
        Self.keep(data, in: &storedPrefix)
        guard var stream = chunks else { return }
        chunks = nil
        stream.feed(data) { run in
            dechunkedCount += Int64(run.count)
            dechunked?.update(run)
            Self.keep(run, in: &dechunkedPrefix)
        }
        chunks = stream
    }

    private static func keep(_ data: UnsafeBufferPointer<UInt8>, in prefix: inout [UInt8]) {
        let room = sniffBytes - prefix.count
        if room > 0 { prefix.append(contentsOf: UnsafeBufferPointer(rebasing: data[..<min(room, data.count)])) }
    }
}

/// De-chunks a chunked body as it passes (RFC 9112 §7.1), by the rules of `WARCBlock.dechunk`, which de-chunks one
/// held whole: a first chunk that does not frame means the body was stored de-chunked (`notChunked`); a later one
/// that does not is `broken`; after the last chunk, the rest (trailers) is not body. Holds one chunk-size line at
/// most (`maxLineBytes`; longer is `broken`).
struct ChunkStream {
    enum End: Equatable {
        case complete
        case notChunked
        case broken(String)
        /// Still reading (only before `finish`).
        case undecided
    }

    private enum State: Equatable {
        case sizeLine
        case data(remaining: Int)
        /// After a chunk's data: its line end (`sawCR`: its CR was read).
        case dataEnd(sawCR: Bool)
        case done(End)
    }

    private let maxLineBytes: Int
    private var state = State.sizeLine
    private var line: [UInt8] = []
    /// No chunk has been read whole yet.
    private var first = true
    /// Bytes read so far, for messages.
    private var offset = 0

    init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Reads the next bytes of the body as stored; passes each run of chunk data to `data`, in order.
    mutating func feed(_ input: UnsafeBufferPointer<UInt8>, data: (UnsafeBufferPointer<UInt8>) -> Void) {
        var i = 0
        while i < input.count {
            switch state {
            case .done:
                offset += input.count - i
                return
            case .sizeLine:
                let end = WARCBlock.find(0x0A, in: input, from: i, to: input.count)
                let stop = end ?? input.count
                if line.count + (stop - i) > maxLineBytes {
                    state = .done(first ? .notChunked : .broken("chunk-size line longer than \(maxLineBytes) bytes"))
                    continue
                }
                line.append(contentsOf: UnsafeBufferPointer(rebasing: input[i..<stop]))
                offset += stop - i
                i = stop
                guard end != nil else { return }
                i += 1
                offset += 1
                let parsed = line.withUnsafeBufferPointer { HeadParser.parseChunkSizeLine($0) }
                line = []
                guard let size = parsed.size else {
                    let problem = (parsed.problem ?? "invalid chunk-size line") + " at byte \(offset)"
                    state = .done(first ? .notChunked : .broken(problem))
                    continue
                }
                state = size == 0 ? .done(.complete) : .data(remaining: size)
            case .data(let remaining):
                let n = min(remaining, input.count - i)
                data(UnsafeBufferPointer(rebasing: input[i..<i + n]))
                i += n
                offset += n
                state = n == remaining ? .dataEnd(sawCR: false) : .data(remaining: remaining - n)
            case .dataEnd(let sawCR):
                let byte = input[i]
                if byte == 0x0A {
                    i += 1
                    offset += 1
                    first = false
                    state = .sizeLine
                } else if byte == 0x0D && !sawCR {
                    i += 1
                    offset += 1
                    state = .dataEnd(sawCR: true)
                } else {
                    state = .done(first ? .notChunked : .broken("chunk data not followed by CRLF at byte \(offset)"))
                }
            }
        }
    }

    /// How the body ended, once no more bytes will come.
    mutating func finish() -> End {
        switch state {
        case .done(let end):
            return end
        case .dataEnd(sawCR: false):
            state = .done(.broken("the chunked body ends without its last chunk"))
        case .sizeLine, .data, .dataEnd(sawCR: true):
            state = .done(first ? .notChunked : .broken("the chunked body ends without its last chunk"))
        }
        if case .done(let end) = state { return end }
        return .undecided
    }
}

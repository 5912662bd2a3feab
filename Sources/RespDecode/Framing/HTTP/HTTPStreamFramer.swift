/*
 Frames a stream of raw HTTP/1.x responses as captured on the wire (docs/framings.md#raw-http).

 Hand-written, because SwiftNIO's HTTPResponseDecoder cannot parse a bare response stream: it throws
 `unsolicitedResponse` without a request to pair with, dies for good on the first bad byte (and loses the rest of the
 read), rejects bare LF, and stops at `Connection: close` — every capture that concatenates connections breaks it
 (docs/contributing.md#raw-http-framing). This framer resynchronises instead and reports byte offsets.

 Body length follows RFC 9112 §6.3:

     1xx (interim), 204, 304 ........ no body; interim 1xx responses are folded into the next response's record
     Transfer-Encoding, chunked last  chunked (extensions checked, trailers kept); a Content-Length beside it is
                                      ignored with a warning
     Transfer-Encoding, other ....... to end of input, also when chunked is not the final coding (an error if
                                      Content-Length is also present)
     Content-Length ................. that many bytes (differing duplicates are an error)
     otherwise ...................... to end of input

 Example, fed in any split:

     HTTP/1.1 200 OK␍␊Content-Length: 2␍␊␍␊hi        → record(offset 0, status 200, body "hi")
     garbage␊                                          → failure(offset 40, malformedRecord)
     HTTP/1.1 204 No Content␊␊                         → record(offset 48, status 204)

 A body over maxBodyBytes is skipped (Content-Length) or only counted (chunked, to the end of input), its first
 bytes kept for sniffing: the limitExceeded item has its status, fields, size and sniffed type
 (docs/output.md#records-over-the-body-limit).

 After a malformed message the framer skips to the next line that starts with `HTTP/1.`; the skipped bytes are
 one failure item. The request method is not in the stream, so a response to HEAD that declares a Content-Length is
 framed as if it had that body (docs/framings.md#raw-http).
 */
import Glibc

/// Frames raw HTTP/1.x response streams. See the file comment for the rules.
public struct HTTPStreamFramer: RecordFramer, LentInputFramer {
    private let limits: Limits

    /// The input lent by `decode` for the call (swapped in and back, which costs nothing), so that the steps read it
    /// directly; empty between calls. Unparsed input: `input[position...]`.
    var input = FramerInput()
    /// The input has ended (`decodeLast`).
    var finished = false

    private var state = State.start
    var outbox = FramedItemQueue()

    // The message being framed.
    private var messageStart: Int64 = 0
    private var interimStatuses: [Int] = []
    private var record: ResponseRecord?
    private var body: [UInt8] = []
    /// A Content-Length body that was in the input whole when its head was read: lent, not copied
    /// (``FramerInput/lend(_:)``).
    private var lentBody: Body?
    private var bodyOverLimit = false
    // A body over maxBodyBytes is only counted as it passes, and its first bytes kept for sniffing
    // (docs/reliability.md#limits): its size as framed (de-chunked), its first bytes, and where it began.
    private var bodyCount: Int64 = 0
    private var sniffPrefix: [UInt8] = []
    private var bodyStart: Int64 = 0
    private var scanned = 0 // bytes past `position` already searched for the end of a field section
    private var afterUpgrade = false
    // The message's raw input from `messageStart`, up to `maxErrorBodyBytes`, for a failure's `body`: heads are
    // copied as they are parsed, chunked framing as it is read; a Content-Length or close-delimited body is `body`
    // itself (`bodyIsRaw`), so it is not copied twice.
    private var excerpt: [UInt8] = []
    private var bodyIsRaw = true
    private var interimBytes = 0

    // While resynchronising: where the skipping began. A status line found anywhere ends the skipping, except one
    // there (the failure's own first byte, perhaps a status line whose message failed).
    private var resyncOrigin: Int64 = -1
    // While resynchronising: the failure that the skipped bytes belong to.
    private var failure: FramingFailure?

    private enum State {
        case start
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case bodyToEnd
        case discard(remaining: Int)
        /// Skipping to the next status line; `checkHere`: one may start right at `position` (after a head, or where
        /// a body went wrong), decided once enough bytes are there.
        case resync(checkHere: Bool)
    }

    /// Creates a framer.
    /// - Parameter limits: `maxHeaderBytes`, `maxBodyBytes` and `maxErrorBodyBytes` apply.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    public mutating func decode(buffer: inout FramerInput) -> FramedItem? {
        next(lending: &buffer, ended: false)
    }

    public mutating func decodeLast(buffer: inout FramerInput, seenEOF: Bool) -> FramedItem? {
        next(lending: &buffer, ended: seenEOF)
    }

    // MARK: - Input

    private var currentOffset: Int64 { input.readerOffset }

    private mutating func consume(_ n: Int) { position += n }

    /// Index of the first `byte` in `input[from..<to]`.
    private func find(_ byte: UInt8, from: Int, to: Int) -> Int? {
        input.firstIndex(of: byte, from: from, to: to)
    }

    // MARK: - Steps

    /// Advances the state machine once. Returns `false` when nothing can be done without more input.
    mutating func step() -> Bool {
        switch state {
        case .start: return stepStart()
        case .head: return stepHead()
        case .fixedBody(let remaining): return stepFixedBody(remaining)
        case .chunkSize: return stepChunkSize()
        case .chunkData(let remaining): return stepChunkData(remaining)
        case .chunkDataEnd: return stepChunkDataEnd()
        case .trailers: return stepTrailers()
        case .bodyToEnd: return stepBodyToEnd()
        case .discard(let remaining): return stepDiscard(remaining)
        case .resync(let checkHere): return stepResync(checkHere: checkHere)
        }
    }

    private mutating func stepStart() -> Bool {
        // Blank lines between messages are tolerated (RFC 9112 §2.2).
        while position < input.writerIndex, input[position] == 0x0D || input[position] == 0x0A { position += 1 }
        guard available > 0 else {
            if finished && !interimStatuses.isEmpty {
                let statuses = interimStatuses.map(String.init).joined(separator: ", ")
                interimStatuses.removeAll()
                emitFailure(
                    RecordError(
                        .truncatedRecord, "input ended after interim response \(statuses), before the final response"),
                    at: messageStart, status: nil, excerpt: excerpt, end: currentOffset)
                return true
            }
            return false
        }
        if input.starts(with: "HTTP/1.", at: position) {
            if interimStatuses.isEmpty {
                messageStart = currentOffset
                excerpt.removeAll(keepingCapacity: true)
                interimBytes = 0
            }
            afterUpgrade = false
            scanned = 0
            state = .head
            return true
        }
        if !finished && input.isPrefix(of: "HTTP/1.", at: position) { return false }
        if finished && input.isPrefix(of: "HTTP/1.", at: position) {
            return truncatedBeforeHead("input ended inside a status line")
        }
        let message: String
        if afterUpgrade {
            message = "data after a 101 Switching Protocols response belongs to another protocol"
        } else {
            message =
                "expected a status line starting with 'HTTP/1.', found \(quotedMismatch(input, at: position, expecting: "HTTP/1."))"
        }
        afterUpgrade = false
        beginResync(RecordError(.malformedRecord, message, location: .init(offset: currentOffset)))
        return true
    }

    private mutating func stepHead() -> Bool {
        let found = findEmptyLine(firstLineMayBeEmpty: false)
        if (found ?? position) - position > limits.maxHeaderBytes || (found == nil && available > limits.maxHeaderBytes)
        {
            let error = RecordError(
                .limitExceeded, "header section longer than \(limits.maxHeaderBytes) bytes (maxHeaderBytes)",
                location: .init(offset: currentOffset))
            beginResync(error)
            return true
        }
        guard let end = found else {
            return finished ? truncatedBeforeHead("input ended inside the header section") : false
        }
        let parsed = input.withUnsafeBufferPointer { all in
            HeadParser.parseResponseHead(UnsafeBufferPointer(rebasing: all[position..<end]))
        }
        switch parsed {
        case .failure(let problem):
            let error = RecordError(
                .malformedRecord, problem.message, location: .init(offset: currentOffset + Int64(problem.offset)))
            beginResync(error)
            return true
        case .success(let head):
            let length = end - position
            consumeRaw(length)
            return beginBody(head, headLength: length)
        }
    }

    private func startOfMessageOrHere() -> Int64 { interimStatuses.isEmpty ? currentOffset : messageStart }

    /// The input ended before this message's head was complete: the rest (and any interim responses) is the failure.
    private mutating func truncatedBeforeHead(_ message: String) -> Bool {
        let start = startOfMessageOrHere()
        let rest = (interimStatuses.isEmpty ? [] : excerpt) + input.bytes(in: position..<input.writerIndex)
        interimStatuses.removeAll()
        consume(available)
        state = .start
        emitFailure(RecordError(.truncatedRecord, message), at: start, status: nil, excerpt: rest, end: currentOffset)
        return true
    }

    /// Decides how the body is delimited (RFC 9112 §6.3) once a head is read.
    private mutating func beginBody(_ head: HeadParser.Head, headLength: Int) -> Bool {
        if head.status >= 100 && head.status < 200 && head.status != 101 {
            interimStatuses.append(head.status)
            interimBytes += headLength
            state = .start
            // A flood of interim responses is one message's head as far as memory is concerned.
            if interimBytes > limits.maxHeaderBytes {
                interimStatuses.removeAll()
                emitFailure(
                    RecordError(
                        .limitExceeded,
                        "interim responses longer than \(limits.maxHeaderBytes) bytes in all (maxHeaderBytes)"),
                    at: messageStart, status: nil, excerpt: excerpt, end: currentOffset)
            }
            return true
        }
        var warnings = head.warnings
        if !interimStatuses.isEmpty {
            let list = interimStatuses.map(String.init).joined(separator: ", ")
            warnings.append("interim response \(list) folded into this record")
            interimStatuses.removeAll()
        }
        record = ResponseRecord(offset: messageStart, status: head.status, headers: head.fields, warnings: warnings)
        body = []
        lentBody = nil
        bodyOverLimit = false
        bodyCount = 0
        sniffPrefix = []
        bodyStart = currentOffset
        bodyIsRaw = true

        if head.status == 101 {
            afterUpgrade = true
            completeRecord()
            return true
        }
        if head.status == 204 || head.status == 304 {
            completeRecord()
            return true
        }
        let transferCodings = head.fields.listElements("Transfer-Encoding")
        let lengths = head.fields.listElements("Content-Length")
        if lengths.isEmpty && !head.fields.values("Content-Length").isEmpty {
            return failHead("empty Content-Length value")
        }
        if !transferCodings.isEmpty {
            let chunkedCount = transferCodings.filter { asciiCaseInsensitiveEquals($0, "chunked") }.count
            let chunkedLast = transferCodings.last.map { asciiCaseInsensitiveEquals($0, "chunked") } ?? false
            if chunkedLast && chunkedCount == 1 {
                if !lengths.isEmpty {
                    record?.warnings.append("Transfer-Encoding: chunked overrides Content-Length (RFC 9112 §6.3)")
                }
                bodyIsRaw = false
                state = .chunkSize
                return true
            }
            if chunkedCount > 1 { return failHead("chunked transfer coding applied more than once") }
            if !lengths.isEmpty {
                return failHead(
                    "Transfer-Encoding '\(transferCodings.joined(separator: ", "))' together with Content-Length")
            }
            record?.warnings.append(
                "transfer coding '\(transferCodings.joined(separator: ", "))' is not undone; the body runs to end of input"
            )
            state = .bodyToEnd
            return true
        }
        if !lengths.isEmpty {
            guard let length = Self.contentLength(lengths) else {
                return failHead("invalid or differing Content-Length values: \(lengths.joined(separator: ", "))")
            }
            if length > limits.maxBodyBytes {
                // The failure covers the body as far as it is skipped: emitted when the skipping ends.
                failure = FramingFailure(
                    offset: messageStart,
                    error: RecordError(
                        .limitExceeded,
                        "Content-Length \(length) exceeds \(limits.maxBodyBytes) bytes (maxBodyBytes): skipped, the body not decoded"
                    ),
                    status: head.status, headers: head.fields, excerpt: excerpt)
                failure?.warnings = warnings
                record = nil
                state = .discard(remaining: length)
                return true
            }
            state = .fixedBody(remaining: length)
            return true
        }
        state = .bodyToEnd
        return true
    }

    /// A framing error found after the head was consumed: the message's failure, then resynchronisation.
    private mutating func failHead(_ message: String) -> Bool {
        let head = record
        record = nil
        failure = FramingFailure(
            offset: messageStart, error: RecordError(.malformedRecord, message, location: .init(offset: messageStart)),
            status: head?.status, headers: head?.headers, excerpt: excerpt)
        resyncOrigin = currentOffset
        state = .resync(checkHere: true)
        return true
    }

    /// Content-Length values that agree (RFC 9110 §8.6), or `nil` when any is not a decimal number or they differ.
    static func contentLength(_ values: [Substring]) -> Int? {
        var result: Int?
        for value in values {
            guard !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let number = Int(value)
            else { return nil }
            if let result, result != number { return nil }
            result = number
        }
        return result
    }

    private mutating func stepFixedBody(_ remaining: Int) -> Bool {
        if remaining == 0 {
            completeRecord()
            return true
        }
        guard available > 0 else {
            return waitOrTruncate("input ended \(remaining) bytes before the end of the Content-Length body")
        }
        if body.isEmpty && available >= remaining {
            // The whole body is in the input: lent from it, not copied.
            lentBody = input.lend(position..<position + remaining)
            consume(remaining)
            state = .fixedBody(remaining: 0)
            return true
        }
        // The length is known and within the limit: one allocation instead of doubling (and page faults), but not
        // more up front than a default body limit, whatever the configured one.
        if body.isEmpty { body.reserveCapacity(min(remaining, 64 << 20)) }
        let n = min(available, remaining)
        input.copyBytes(in: position..<position + n, to: &body)
        consume(n)
        state = .fixedBody(remaining: remaining - n)
        return true
    }

    private mutating func stepChunkSize() -> Bool {
        let limit = scanLimit(extra: 1)
        guard let newline = find(0x0A, from: position, to: limit) else {
            if limit - position > limits.maxHeaderBytes {
                return failBody(.limitExceeded, "chunk-size line longer than \(limits.maxHeaderBytes) bytes")
            }
            return waitOrTruncate("input ended inside a chunk-size line")
        }
        let parsed = input.withUnsafeBufferPointer { all in
            HeadParser.parseChunkSizeLine(UnsafeBufferPointer(rebasing: all[position..<newline]))
        }
        guard let size = parsed.size else {
            return failBody(.malformedRecord, parsed.problem ?? "invalid chunk-size line")
        }
        consumeRaw(newline + 1 - position)
        if size == 0 {
            scanned = 0
            state = .trailers
        } else {
            state = .chunkData(remaining: size)
        }
        return true
    }

    private mutating func stepChunkData(_ remaining: Int) -> Bool {
        guard available > 0 else {
            return waitOrTruncate("input ended inside chunk data")
        }
        let n = min(available, remaining)
        capture(n)
        appendBody(n)
        state = n == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - n)
        return true
    }

    private mutating func stepChunkDataEnd() -> Bool {
        guard available > 0 else {
            return waitOrTruncate("input ended after chunk data, before its line end")
        }
        if input[position] == 0x0A {
            consumeRaw(1)
        } else if input[position] == 0x0D {
            guard available > 1 else {
                return waitOrTruncate("input ended after chunk data, before its line end")
            }
            guard input[position + 1] == 0x0A else {
                return failBody(.malformedRecord, "chunk data not followed by CRLF")
            }
            consumeRaw(2)
        } else {
            return failBody(.malformedRecord, "chunk data not followed by CRLF")
        }
        state = .chunkSize
        return true
    }

    private mutating func stepTrailers() -> Bool {
        guard let end = findEmptyLine(firstLineMayBeEmpty: true) else {
            if available > limits.maxHeaderBytes {
                return failBody(.limitExceeded, "trailer section longer than \(limits.maxHeaderBytes) bytes")
            }
            return waitOrTruncate("input ended inside the trailer section")
        }
        let parsed = input.withUnsafeBufferPointer { all in
            HeadParser.parseFieldLines(UnsafeBufferPointer(rebasing: all[position..<end]), firstLine: 0)
        }
        switch parsed {
        case .failure(let problem):
            return failBody(.malformedRecord, "trailer section: \(problem.message)")
        case .success(let (fields, warnings)):
            consumeRaw(end - position)
            if !fields.isEmpty { record?.trailers = fields }
            record?.warnings.append(contentsOf: warnings)
            completeRecord()
            return true
        }
    }

    private mutating func stepBodyToEnd() -> Bool {
        if available > 0 {
            appendBody(available)
            return true
        }
        if finished {
            completeRecord()
            return true
        }
        return false
    }

    private mutating func stepDiscard(_ remaining: Int) -> Bool {
        guard remaining > 0 && available > 0 else {
            guard remaining == 0 || finished else { return false }
            // What the line says of the body it skipped: its size (when it passed whole) and its type, sniffed.
            let skipped = currentOffset - bodyStart
            if remaining == 0 { failure?.bodyBytes = skipped }
            if let sniffed = OverLimitBlock.sniffedWarning(sniffPrefix) { failure?.warnings.append(sniffed) }
            sniffPrefix = []
            finishFailure()
            state = .start
            return true
        }
        let n = min(available, remaining)
        keepForSniffing(n)
        consume(n)
        state = .discard(remaining: remaining - n)
        return true
    }

    /// Moves `n` available bytes into the body, or only counts them once the body is over its limit.
    private mutating func appendBody(_ n: Int) {
        if !bodyOverLimit && body.count + n > limits.maxBodyBytes {
            bodyOverLimit = true
            sniffPrefix = Array(body.prefix(OverLimitBlock.sniffBytes))
            body = Array(body.prefix(limits.maxErrorBodyBytes))
        }
        bodyCount += Int64(n)
        if bodyOverLimit {
            keepForSniffing(n)
            // A body that is its raw input keeps its first bytes for the failure's excerpt, however it arrives.
            let room = limits.maxErrorBodyBytes - body.count
            if bodyIsRaw && room > 0 { input.copyBytes(in: position..<position + min(room, n), to: &body) }
        } else {
            input.copyBytes(in: position..<position + n, to: &body)
        }
        consume(n)
    }

    /// Keeps the next `n` bytes at `position` among the first bytes of a body over the limit, for sniffing.
    private mutating func keepForSniffing(_ n: Int) {
        let room = OverLimitBlock.sniffBytes - sniffPrefix.count
        if room > 0 { input.copyBytes(in: position..<position + min(room, n), to: &sniffPrefix) }
    }

    private mutating func completeRecord() {
        state = .start
        guard var record else { return }
        self.record = nil
        if bodyOverLimit {
            emitFailure(
                RecordError(
                    .limitExceeded,
                    "body of \(bodyCount) bytes longer than \(limits.maxBodyBytes) bytes (maxBodyBytes): the body not decoded"
                ),
                at: record.offset, status: record.status, headers: record.headers, excerpt: messageExcerpt(),
                end: currentOffset, bodyBytes: bodyCount,
                // What the line says of the body it counted: its size as framed and its type, sniffed.
                warnings: record.warnings + (OverLimitBlock.sniffedWarning(sniffPrefix).map { [$0] } ?? []))
            sniffPrefix = []
            body = []
            return
        }
        record.body = lentBody ?? Body(body)
        body = []
        lentBody = nil
        outbox.append(.record(record))
    }

    /// Out of input inside a record: at the end of input the record is truncated, otherwise wait for more.
    private mutating func waitOrTruncate(_ message: String) -> Bool {
        guard finished else { return false }
        truncated(message)
        return true
    }

    private mutating func truncated(_ message: String) {
        let head = record
        record = nil
        if !bodyIsRaw { capture(available) }
        consume(available)
        state = .start
        emitFailure(
            RecordError(.truncatedRecord, message, location: .init(offset: currentOffset)), at: messageStart,
            status: head?.status, headers: head?.headers, excerpt: messageExcerpt(), end: currentOffset)
        body = []
    }

    /// A framing error inside a body: the record becomes a failure and the framer resynchronises, possibly right
    /// here (a response declared chunked that is followed by the next response, say).
    private mutating func failBody(_ code: RecordError.Code, _ message: String) -> Bool {
        let head = record
        record = nil
        let error = RecordError(code, message, location: .init(offset: currentOffset))
        failure = FramingFailure(
            offset: messageStart, error: error, status: head?.status, headers: head?.headers, excerpt: messageExcerpt())
        body = []
        resyncOrigin = currentOffset
        state = .resync(checkHere: true)
        return true
    }

    /// The message's raw input so far, capped.
    private func messageExcerpt() -> [UInt8] {
        guard bodyIsRaw, excerpt.count < limits.maxErrorBodyBytes else { return excerpt }
        return excerpt + body.prefix(limits.maxErrorBodyBytes - excerpt.count)
    }

    /// Keeps up to the excerpt cap of the next `n` bytes as part of the message's raw input.
    private mutating func capture(_ n: Int) {
        let room = limits.maxErrorBodyBytes - excerpt.count
        if room > 0 { input.copyBytes(in: position..<position + min(room, n), to: &excerpt) }
    }

    private mutating func consumeRaw(_ n: Int) {
        capture(n)
        consume(n)
    }

    // MARK: - Resynchronisation

    /// A failure found at `position` before any head of this message was consumed (garbage, a bad or oversized
    /// head): it starts at the message's first interim response, if any, and covers what is skipped from here.
    private mutating func beginResync(_ error: RecordError) {
        let folded = !interimStatuses.isEmpty
        failure = FramingFailure(
            offset: folded ? messageStart : currentOffset, error: error, excerpt: folded ? excerpt : [])
        interimStatuses.removeAll()
        resyncOrigin = currentOffset
        state = .resync(checkHere: false)
    }

    /// Skips to the next line that starts with `HTTP/1.` (or, with `checkHere`, to a status line right at
    /// `position`), adding the skipped bytes to the pending failure.
    private mutating func stepResync(checkHere: Bool) -> Bool {
        if checkHere {
            if input.starts(with: "HTTP/1.", at: position) {
                finishFailure()
                state = .start
                return true
            }
            if input.isPrefix(of: "HTTP/1.", at: position) && !finished { return false }
            state = .resync(checkHere: false)
        }
        let pattern: StaticString = "\nHTTP/1."
        var from = position
        while let next = Self.findLineEndOrH(input, from: from) {
            if input[next] == 0x0A {
                if input.starts(with: pattern, at: next) {
                    skipIntoFailure(next + 1 - position)
                    finishFailure()
                    state = .start
                    return true
                }
                if input.isPrefix(of: pattern, at: next) && !finished {
                    skipIntoFailure(next - position)
                    return false
                }
            } else if input.offset(of: next) != resyncOrigin {
                // A status line where no line ends before it: garbage between two responses ends anywhere, and
                // every response after it must still be read (issue 7: one line per intact record). Only a whole
                // "HTTP/1.x NNN" counts there, so that text merely mentioning HTTP/1. does not.
                switch Self.statusLineStart(input, at: next) {
                case true?:
                    skipIntoFailure(next - position)
                    finishFailure()
                    state = .start
                    return true
                case nil where !finished:
                    // Checked again, here, when more input comes.
                    skipIntoFailure(next - position)
                    return false
                default:
                    break
                }
            }
            from = next + 1
        }
        skipIntoFailure(available)
        if finished {
            finishFailure()
            state = .start
            return true
        }
        return false
    }

    /// The first line feed or `H` at or after `from`.
    private static func findLineEndOrH(_ buffer: FramerInput, from: Int) -> Int? {
        buffer.withUnsafeBufferPointer { all in
            var k = from
            while k < all.count {
                let byte = all[k]
                if byte == 0x0A || byte == UInt8(ascii: "H") { return k }
                k += 1
            }
            return nil
        }
    }

    /// What `statusLineStart` matches: 9 is any digit, the last space a space or a line end.
    private static let statusLineShape = Array("HTTP/1.9 999 ".utf8)

    /// Whether `HTTP/1.D DDD` and a space or line end start at `index`; `nil` when the buffer ends before that is
    /// known.
    private static func statusLineStart(_ buffer: FramerInput, at index: Int) -> Bool? {
        let shape = statusLineShape
        for k in 0..<shape.count {
            guard index + k < buffer.writerIndex else { return nil }
            let byte = buffer[index + k]
            switch shape[k] {
            case UInt8(ascii: "9"): guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return false }
            case UInt8(ascii: " ") where k == shape.count - 1:
                guard byte == 0x20 || byte == 0x0D || byte == 0x0A else { return false }
            default: guard byte == shape[k] else { return false }
            }
        }
        return true
    }

    private mutating func skipIntoFailure(_ n: Int) {
        guard n > 0 else { return }
        if var pending = failure {
            let room = limits.maxErrorBodyBytes - pending.excerpt.count
            if room > 0 { input.copyBytes(in: position..<position + min(room, n), to: &pending.excerpt) }
            failure = pending
        }
        consume(n)
    }

    private mutating func finishFailure() {
        guard let pending = failure else { return }
        failure = nil
        emitFailure(
            pending.error, at: pending.offset, status: pending.status, headers: pending.headers,
            excerpt: pending.excerpt, end: currentOffset, bodyBytes: pending.bodyBytes, warnings: pending.warnings)
    }

    private mutating func emitFailure(
        _ error: RecordError, at offset: Int64, status: Int?, headers: HeaderFields? = nil, excerpt: [UInt8],
        end: Int64,
        bodyBytes: Int64? = nil, warnings: [String] = []
    ) {
        let kept = excerpt.count > limits.maxErrorBodyBytes ? Array(excerpt.prefix(limits.maxErrorBodyBytes)) : excerpt
        var failure = FramingFailure(
            offset: offset, error: error, status: status, headers: headers, excerpt: kept, bytes: end - offset)
        failure.bodyBytes = bodyBytes
        failure.warnings = warnings
        outbox.append(.failure(failure))
    }

    // MARK: - Field sections

    /// The index just past the first empty line at or after `position`, searching incrementally across calls.
    private mutating func findEmptyLine(firstLineMayBeEmpty: Bool) -> Int? {
        if firstLineMayBeEmpty && scanned == 0 {
            if available >= 1 && input[position] == 0x0A { return position + 1 }
            if available >= 2 && input[position] == 0x0D && input[position + 1] == 0x0A { return position + 2 }
            if available < 2 && (available == 0 || input[position] == 0x0D) { return nil }
        }
        var from = position + scanned
        let limit = scanLimit(extra: 2)
        while let newline = find(0x0A, from: from, to: limit) {
            let next = newline + 1
            if next < input.writerIndex && input[next] == 0x0A { return next + 1 }
            if next + 1 < input.writerIndex && input[next] == 0x0D && input[next + 1] == 0x0A { return next + 2 }
            if next >= input.writerIndex || (input[next] == 0x0D && next + 1 >= input.writerIndex) {
                // Undecided until more input arrives: look at this line end again then.
                scanned = newline - position
                return nil
            }
            from = next
        }
        scanned = max(0, limit - position - 1)
        return nil
    }

    /// Where a search bounded by `maxHeaderBytes + extra` bytes from `position` must stop (no overflow, whatever
    /// the limit).
    private func scanLimit(extra: Int) -> Int {
        limits.maxHeaderBytes >= available
            ? input.writerIndex : position + min(available, limits.maxHeaderBytes + extra)
    }

}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}

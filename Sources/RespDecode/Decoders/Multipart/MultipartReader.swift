import Glibc

/// Splits a multipart body into its parts (RFC 2046 §5.1.1, RFC 7578), one at a time, in time linear in the body
/// (docs/decoding.md#multipart).
///
/// Each delimiter is found by searching `CRLF--BOUNDARY` (`LF--BOUNDARY` in a body of bare line feeds) in time
/// linear in the body whatever the boundary (``find(_:from:)``); a match that is not followed by `--`, or by
/// transport padding and a line end, is data (`--boundaryQ`), and the search goes on past its first byte. So no
/// byte of the body is looked at more than a few times, however many near-matches it holds.
struct MultipartReader {
    /// One part, as found.
    struct Part {
        /// The header fields, folded lines joined (docs/decoding.md#multipart-headers).
        var headers: HeaderFields
        /// Where its body is in the multipart body.
        var body: Range<Int>
        /// Whether its closing delimiter was missing (the part runs to the end of the body).
        var unterminated: Bool
        /// Why the part was skipped (a header section larger than `maxHeaderBytes`): `body` is then the whole part.
        var error: RecordError?
    }

    let body: UnsafeBufferPointer<UInt8>
    /// The boundary.
    let boundary: [UInt8]
    /// `--` and the boundary.
    private let dashBoundary: [UInt8]
    /// LF and `dashBoundary`: what the first delimiter line is found by.
    private let lineFeedDashBoundary: [UInt8]
    /// The line end and `dashBoundary`: what ends a part.
    private var delimiter: [UInt8] = []
    private let maxHeaderBytes: Int
    /// Where the next part's header section starts; nil before the first delimiter and after the last part.
    private var next: Int?
    /// Parts read so far.
    private(set) var partsRead = 0
    /// What was repaired, for the line's warnings.
    private(set) var warnings: [String] = []
    /// Bytes before the first delimiter line (without the line end before it).
    private(set) var preambleBytes = 0
    /// Bytes after the close delimiter's line; nil until it was read.
    private(set) var epilogueBytes: Int?
    /// Whether the body uses bare line feeds (LF-only), repaired.
    private(set) var lineFeedOnly = false

    init(body: UnsafeBufferPointer<UInt8>, boundary: [UInt8], maxHeaderBytes: Int) {
        self.body = body
        self.boundary = boundary
        self.dashBoundary = Array("--".utf8) + boundary
        self.lineFeedDashBoundary = [Self.lf] + dashBoundary
        self.maxHeaderBytes = max(maxHeaderBytes, 1)
    }

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
    private static let dash = UInt8(ascii: "-")

    /// Finds the first delimiter line: at the start of the body, or after a line feed.
    /// - Throws: `invalidMultipart` when the body has none, or has no part and text before its close delimiter.
    mutating func start() throws(RecordError) {
        var searchFrom = 0
        while true {
            let at: Int
            if searchFrom == 0 && body.starts(with: dashBoundary) {
                at = 0
            } else {
                guard let lineFeed = find(lineFeedDashBoundary, from: searchFrom) else {
                    throw RecordError(
                        .invalidMultipart,
                        "no delimiter line (--\(String(decoding: dashBoundary.dropFirst(2), as: UTF8.self))) in the body"
                    )
                }
                at = lineFeed + 1
            }
            guard let kind = delimiterKind(after: at + dashBoundary.count) else {
                searchFrom = at + 1
                continue
            }
            preambleBytes = at == 0 ? 0 : (at >= 2 && body[at - 2] == Self.cr ? at - 2 : at - 1)
            switch kind {
            case .close(let end):
                // No part: the close delimiter first. Chrome sends `--BOUNDARY--` for an empty form (Go and
                // python-multipart read it as zero parts); after text other than blank lines it is no multipart body
                // (python-multipart rejects `bad_initial_boundary`).
                if body[0..<preambleBytes].contains(where: { !MIMEParameters.isSpace($0) }) {
                    throw RecordError(
                        .invalidMultipart, "the body has no part: its first delimiter line is the close delimiter",
                        location: .init(offset: at))
                }
                epilogueBytes = body.count - end
                next = nil
            case .part(let end, let lineFeedOnly):
                self.lineFeedOnly = lineFeedOnly
                if lineFeedOnly {
                    warnings.append("the multipart body's lines end in a bare line feed, not CRLF; read as such")
                }
                delimiter = (lineFeedOnly ? [Self.lf] : [Self.cr, Self.lf]) + dashBoundary
                next = end
            case .end:
                warnings.append("the multipart body ends after its first delimiter line")
                next = nil
            }
            return
        }
    }

    /// What follows `--BOUNDARY` at `i`.
    private enum DelimiterKind {
        /// `--`, transport padding and a line end (or the end of the body): the epilogue starts at `end`.
        case close(end: Int)
        /// Transport padding and a line end: the part's header section starts at `end`.
        case part(end: Int, lineFeedOnly: Bool)
        /// The body ends right after the boundary (or its padding).
        case end
    }

    private func delimiterKind(after i: Int) -> DelimiterKind? {
        let n = body.count
        if i + 1 < n && body[i] == Self.dash && body[i + 1] == Self.dash {
            var j = i + 2
            while j < n && (body[j] == 0x20 || body[j] == 0x09) { j += 1 }
            if j < n && body[j] == Self.cr && j + 1 < n && body[j + 1] == Self.lf { return .close(end: j + 2) }
            if j < n && body[j] == Self.lf { return .close(end: j + 1) }
            // Text on the close delimiter's line is epilogue.
            return .close(end: j)
        }
        var j = i
        while j < n && (body[j] == 0x20 || body[j] == 0x09) { j += 1 }
        if j == n { return .end }
        if body[j] == Self.cr && j + 1 < n && body[j + 1] == Self.lf { return .part(end: j + 2, lineFeedOnly: false) }
        if body[j] == Self.lf { return .part(end: j + 1, lineFeedOnly: true) }
        return nil
    }

    /// The next part, or nil after the last one.
    /// - Throws: `invalidMultipart` for a malformed header section, `limitExceeded` for one larger than
    ///   `maxHeaderBytes`.
    mutating func nextPart() throws(RecordError) -> Part? {
        guard let start = next else { return nil }
        partsRead += 1
        let headers: HeaderFields
        let bodyStart: Int
        do throws(RecordError) {
            (headers, bodyStart) = try readHeaders(from: start)
        } catch  where error.code == .limitExceeded {
            // As busboy does, a part whose header section is too large is skipped, and the next part read: this one
            // is listed with the error, its extent the whole part.
            var part = readBody(headers: HeaderFields(), from: start, searchFrom: start)
            part.error = error
            return part
        }
        // The blank line's line end also starts a delimiter: `--b CRLF CRLF --b` is an empty part.
        var searchFrom = bodyStart
        if !lineFeedOnly && bodyStart >= 2 && body[bodyStart - 2] == Self.cr && body[bodyStart - 1] == Self.lf {
            searchFrom = bodyStart - 2
        } else if lineFeedOnly && bodyStart >= 1 && body[bodyStart - 1] == Self.lf {
            searchFrom = bodyStart - 1
        }
        return readBody(headers: headers, from: bodyStart, searchFrom: searchFrom)
    }

    /// The part whose body starts at `bodyStart`: up to the next delimiter, found from `searchFrom`.
    private mutating func readBody(headers: HeaderFields, from bodyStart: Int, searchFrom: Int) -> Part {
        var searchFrom = searchFrom
        while let at = find(delimiter, from: searchFrom) {
            guard let kind = delimiterKind(after: at + delimiter.count) else {
                searchFrom = at + 1
                continue
            }
            let part = Part(headers: headers, body: bodyStart..<max(at, bodyStart), unterminated: false)
            switch kind {
            case .close(let end):
                epilogueBytes = body.count - end
                next = nil
            case .part(let end, _):
                next = end
            case .end:
                warnings.append("the multipart body ends after a delimiter line, without the close delimiter")
                next = nil
            }
            return part
        }
        // No delimiter: the part runs to the end of the body (a truncated capture, or a camera stream of
        // multipart/x-mixed-replace cut off), less a delimiter cut short at the very end.
        var end = body.count
        for length in stride(from: min(delimiter.count - 1, body.count - bodyStart), to: 0, by: -1)
        where UnsafeBufferPointer(rebasing: body[(body.count - length)...]).elementsEqual(delimiter.prefix(length)) {
            end = body.count - length
            break
        }
        warnings.append(
            "multipart part \(partsRead) has no closing delimiter; it runs to the end of the body (the body is cut short)"
        )
        next = nil
        return Part(headers: headers, body: bodyStart..<max(end, bodyStart), unterminated: true)
    }

    /// Reads a header section from `start` up to and including its blank line: fields `NAME: VALUE`, lines ended
    /// by CRLF or a bare LF, folded lines (starting with a space or tab) joined to the field before with one space.
    private func readHeaders(from start: Int) throws(RecordError) -> (HeaderFields, Int) {
        var headers = HeaderFields()
        var i = start
        let limit = min(body.count, start &+ maxHeaderBytes)
        while true {
            // The line: up to its LF, within the limit.
            let lineStart = i
            var lineEnd = i
            while lineEnd < limit && body[lineEnd] != Self.lf { lineEnd += 1 }
            if lineEnd == limit {
                if limit < body.count {
                    throw RecordError(
                        .limitExceeded,
                        "multipart part \(partsRead)'s header section is larger than --max-header-bytes (\(maxHeaderBytes))",
                        location: .init(offset: start))
                }
                throw RecordError(
                    .invalidMultipart,
                    "multipart part \(partsRead)'s header section has no end (the body is cut short)",
                    location: .init(offset: start))
            }
            var contentEnd = lineEnd
            if contentEnd > lineStart && body[contentEnd - 1] == Self.cr { contentEnd -= 1 }
            i = lineEnd + 1
            if contentEnd == lineStart { return (headers, i) }
            let line = UnsafeBufferPointer(rebasing: body[lineStart..<contentEnd])
            if let cr = line.firstIndex(of: Self.cr) {
                throw malformed("a bare CR", at: lineStart + cr)
            }
            if line[0] == 0x20 || line[0] == 0x09 {
                guard !headers.isEmpty else { throw malformed("a folded line before any field", at: lineStart) }
                let more = String(decoding: line, as: UTF8.self).trimmingOWS()
                if !more.isEmpty { headers.extendLastValue(with: " " + more) }
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw malformed("a line without a colon", at: lineStart)
            }
            guard colon > 0 else { throw malformed("a field without a name", at: lineStart) }
            if let bad = line[..<colon].firstIndex(where: { !Self.isTokenByte($0) }) {
                throw malformed("a field name with the byte 0x\(String(line[bad], radix: 16))", at: lineStart + bad)
            }
            let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
            let value = String(decoding: UnsafeBufferPointer(rebasing: line[(colon + 1)...]), as: UTF8.self)
            headers.append(name: name, value: String(value.trimmingOWS()))
        }
    }

    private func malformed(_ what: String, at offset: Int) -> RecordError {
        RecordError(
            .invalidMultipart, "multipart part \(partsRead)'s header section has \(what)",
            location: .init(offset: offset))
    }

    /// RFC 9110's tchar: what a field name is made of.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// The first occurrence of `needle` (a line end and `--BOUNDARY`) at or after `from`.
    ///
    /// glibc's `memmem` is a GNU extension Swift's Glibc module does not show; this search finds each line feed with
    /// `memchr` (vectorised) and compares the needle there. It is linear: a boundary holds no line feed (``boundary``
    /// refuses one), so a comparison that matched k bytes of the needle has passed k bytes without a line feed, and
    /// the next line feed is past them; every byte is compared at most twice.
    private func find(_ needle: [UInt8], from: Int) -> Int? {
        guard let base = body.baseAddress else { return nil }
        let lineFeedAt = needle[0] == Self.lf ? 0 : 1
        var i = from + lineFeedAt
        let n = body.count
        while i < n {
            guard let found = memchr(base + i, Int32(Self.lf), n - i) else { return nil }
            let at = UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - base
            let candidate = at - lineFeedAt
            if candidate >= from && candidate + needle.count <= n
                && memcmp(base + candidate, needle, needle.count) == 0
            {
                return candidate
            }
            i = at + 1
        }
        return nil
    }
}

/*
 The ARC record grammar (Internet Archive ARC v1 and v2, docs/framings.md#arc). The archive framer (WARCFramer.swift)
 reads ARC as a second record grammar beside WARC, as warcio does: the stream (plain or gzip members), its offsets,
 limits, resynchronisation and held items are the framer's; the lines of the grammar are read here.

 A record is a header line, then exactly Archive-length bytes, then a line feed (the record separator):

     http://www.archive.org/robots.txt 207.241.229.39 20080430204825 text/plain 782␊         v1: 5 fields
     HTTP/1.1 200 OK␍␊Date: …␍␊␍␊#####…                                                      782 bytes
     ␊

     v2: URL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename Archive-length

 The first record of a file is its `filedesc://` record: its block starts with the version block, whose first line
 says the version (`1 1 InternetArchive`, `2 0 …`) and whose second line names the header fields; the rest is metadata.
 Its own header line has the field count of its version (counted, as its version is not known before it is read).

 Fields are split at single spaces from the right, as warcio splits them: the URL is whatever comes before the last
 4 (v1) or 9 (v2) fields, spaces included (they are written `%20` with a warning, as in a WARC-Target-URI). Reading a
 header line where a record is expected only needs a URL and a decimal Archive-length; telling whether an arbitrary
 line is a header line (to resynchronise after a length that lies) asks more (``ARCHeader/recognise(_:at:version:cap:ended:)``).

 What the block gives: a record whose URL is http or https holds an HTTP response (status line and fields, then the
 body), read as a WARC response block is; any other record (`dns:`, `filedesc:`, `ftp:`…) is status 200 with the
 ARC Content-type as its Content-Type and the block as its body.
 */

/// The version of an ARC file, from its `filedesc://` record.
enum ARCVersion: Sendable {
    case v1, v2

    /// Fields in a header line.
    var fieldCount: Int { self == .v1 ? 5 : 10 }
}

/// An ARC header line. See the file comment.
struct ARCHeader {
    /// The URL, as written (spaces and all).
    var url: String
    var ip: String
    var date: String
    var contentType: String
    /// Archive-length: the block's length.
    var length: Int

    /// The file's version record.
    var isFiledesc: Bool { url.hasPrefix("filedesc://") }

    /// The longest header line looked at when telling whether a line is one (resynchronising).
    static let recogniseCap = 8 * 1024

    /// Parses a header line (without its line feed): a URL and a decimal Archive-length in `version`'s field count;
    /// the other fields are taken as written. A `filedesc://` line is split by its own field count (5 or 10).
    static func parse(_ line: UnsafeBufferPointer<UInt8>, version: ARCVersion) -> Result<ARCHeader, WARCBlock.Problem> {
        var end = line.count
        while end > 0 && (line[end - 1] == 0x0D || line[end - 1] == 0x20 || line[end - 1] == 0x09) { end -= 1 }
        let text = UnsafeBufferPointer(rebasing: line[0..<end])
        var count = version.fieldCount
        if text.starts(with: "filedesc://".utf8) {
            count = text.reduce(1) { $0 + ($1 == 0x20 ? 1 : 0) } == 10 ? 10 : 5
        }
        guard let fields = split(text, into: count) else {
            return .failure(
                WARCBlock.Problem(
                    .malformedRecord,
                    "ARC header line '\(quoted(text))' does not have \(count) space-separated fields"))
        }
        let lengthField = fields[count - 1]
        guard let length = decimal(lengthField) else {
            return .failure(
                WARCBlock.Problem(
                    .malformedRecord,
                    "ARC header line: Archive-length '\(quoted(lengthField))' is not a decimal number of bytes"))
        }
        func string(_ field: UnsafeBufferPointer<UInt8>) -> String { String(decoding: field, as: UTF8.self) }
        return .success(
            ARCHeader(
                url: string(fields[0]), ip: string(fields[1]), date: string(fields[2]),
                contentType: string(fields[3]), length: length))
    }

    /// Whether a header line starts at `index` of `buffer`, strictly: a line starting with a URL scheme, the fields of
    /// `version`, an IP address (or `-`), an Archive-date of digits, a decimal Archive-length (and for v2 a
    /// Result-code and Offset of digits or `-`). `undecided` when the line is not complete yet.
    static func recognise(_ buffer: FramerInput, at index: Int, version: ARCVersion, cap: Int, ended: Bool)
        -> Recognition
    {
        let available = buffer.writerIndex - index
        guard available > 0 else { return ended ? .no : .undecided }
        // The scheme: a letter, then letters, digits, `+`, `-`, `.`, then `:` (at most 32 bytes).
        var i = index
        while true {
            guard i < buffer.writerIndex else { return ended ? .no : .undecided }
            let c = buffer[i]
            if c == UInt8(ascii: ":") && i > index { break }
            let letter = (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z")
            let other = (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == 0x2B || c == 0x2D || c == 0x2E
            guard letter || (i > index && other), i - index < 32 else { return .no }
            i += 1
        }
        let limit = min(buffer.writerIndex, index + cap)
        guard let newline = buffer.firstIndex(of: 0x0A, from: i, to: limit) else {
            return ended || limit < buffer.writerIndex || available >= cap ? .no : .undecided
        }
        return buffer.withUnsafeBufferPointer { all in
            plausible(UnsafeBufferPointer(rebasing: all[index..<newline]), version: version) ? .yes : .no
        }
    }

    enum Recognition { case yes, no, undecided }

    /// The strict checks of ``recognise(_:at:version:cap:ended:)`` on a whole line.
    private static func plausible(_ line: UnsafeBufferPointer<UInt8>, version: ARCVersion) -> Bool {
        var end = line.count
        if end > 0 && line[end - 1] == 0x0D { end -= 1 }
        let text = UnsafeBufferPointer(rebasing: line[0..<end])
        guard !text.contains(where: { $0 < 0x20 || $0 == 0x7F }),
            let fields = split(text, into: version.fieldCount)
        else { return false }
        func all(_ field: UnsafeBufferPointer<UInt8>, _ allowed: (UInt8) -> Bool) -> Bool {
            !field.isEmpty && field.allSatisfy(allowed)
        }
        let digit: (UInt8) -> Bool = { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        let dash: (UnsafeBufferPointer<UInt8>) -> Bool = { $0.count == 1 && $0[0] == UInt8(ascii: "-") }
        let ip = fields[1]
        guard
            dash(ip)
                || all(ip, { digit($0) || $0 == 0x2E || $0 == 0x3A || (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x66) }),
            all(fields[2], digit), fields[2].count >= 8, fields[2].count <= 20,
            !fields[3].isEmpty,
            decimal(fields[version.fieldCount - 1]) != nil
        else { return false }
        if version == .v2 {
            guard all(fields[4], digit) || dash(fields[4]), all(fields[7], digit) || dash(fields[7]) else {
                return false
            }
        }
        return true
    }

    /// `text` split at its last `count - 1` single spaces; `nil` when it has fewer, or the URL is empty.
    private static func split(_ text: UnsafeBufferPointer<UInt8>, into count: Int) -> [UnsafeBufferPointer<UInt8>]? {
        var fields: [UnsafeBufferPointer<UInt8>] = []
        var end = text.count
        var i = text.count - 1
        while i >= 0 && fields.count < count - 1 {
            if text[i] == 0x20 {
                fields.append(UnsafeBufferPointer(rebasing: text[(i + 1)..<end]))
                end = i
            }
            i -= 1
        }
        guard fields.count == count - 1, end > 0 else { return nil }
        fields.append(UnsafeBufferPointer(rebasing: text[0..<end]))
        return fields.reversed()
    }

    /// A decimal count of bytes (1 to 18 digits).
    private static func decimal(_ field: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !field.isEmpty, field.count <= 18 else { return nil }
        var value = 0
        for c in field {
            guard c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(c - UInt8(ascii: "0"))
        }
        return value
    }

    /// Up to 80 bytes of `bytes` as text, for messages.
    private static func quoted(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes.prefix(80), as: UTF8.self) + (bytes.count > 80 ? "…" : "")
    }

    /// The version a `filedesc://` record's block declares in its first line (`1 …` or `2 …`); `nil` when it says
    /// neither.
    static func version(ofVersionBlock block: UnsafeBufferPointer<UInt8>) -> ARCVersion? {
        guard block.count >= 2, block[1] == 0x20 || block[1] == 0x0A || block[1] == 0x0D else { return nil }
        switch block[0] {
        case UInt8(ascii: "1"): return .v1
        case UInt8(ascii: "2"): return .v2
        default: return nil
        }
    }
}

/// Interpreting an ARC record's block (see the file comment).
enum ARCBlock {
    /// The response an ARC record gives. `warnings` come first from the caller.
    static func response(
        header: ARCHeader, block: UnsafeBufferPointer<UInt8>, offset: Int64, warnings initial: [String],
        limits: Limits
    ) -> Result<ResponseRecord, WARCBlock.Problem> {
        var warnings = initial
        var url = header.url
        if url.utf8.contains(UInt8(ascii: " ")) {
            warnings.append("spaces in the ARC URL replaced by %20")
            url = WARCHeader.escapingSpaces(url)
        }
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        var record: ResponseRecord
        var arc = info(header)
        if (scheme == "http" || scheme == "https") && !block.isEmpty {
            switch WARCBlock.httpResponse(block, limits: limits, isRevisit: false, writerTruncated: false) {
            case .failure(let problem):
                return .failure(problem)
            case .success(let parsed):
                record = ResponseRecord(
                    offset: offset, status: parsed.status, headers: parsed.headers, trailers: parsed.trailers, url: url)
                record.body = parsed.body
                warnings += parsed.warnings
                arc.httpBlock = true
                // A CDXJ index's digest is over the payload as stored (docs/output.md#cdxj-index).
                if let data = parsed.chunkData {
                    arc.storedChunkFraming = ChunkFraming(
                        stored: UnsafeBufferPointer(rebasing: block[parsed.bodyStart...]), data: data)
                }
            }
        } else {
            guard block.count <= limits.maxBodyBytes else {
                return .failure(
                    WARCBlock.Problem(
                        .limitExceeded,
                        "block of \(block.count) bytes exceeds \(limits.maxBodyBytes) bytes (maxBodyBytes)"))
            }
            var fields = HeaderFields()
            if !header.contentType.isEmpty && header.contentType != "-" {
                fields.append(name: "Content-Type", value: header.contentType)
            }
            record = ResponseRecord(offset: offset, status: 200, headers: fields, body: Array(block), url: url)
        }
        record.arc = arc
        record.warnings = warnings
        return .success(record)
    }

    /// The line's ARC fields of `header`.
    static func info(_ header: ARCHeader) -> ARCRecordInfo {
        ARCRecordInfo(ip: header.ip, date: header.date)
    }
}

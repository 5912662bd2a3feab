/*
 Undoes a response's Content-Encoding (docs/content-encoding.md#undoing-the-codings) before anything else looks at the
 body.

 The list is undone last-applied first (`Content-Encoding: deflate, gzip, zstd` is undone as zstd, then gzip, then
 deflate). Each coding goes through its C library, streaming straight into the storage of the output array:

     gzip, x-gzip ... zlib (Zlib.swift), gzip or zlib-wrapped (as browsers and mitmproxy's decompressobj(47) take
                      it); members concatenated one after another are one body
     deflate ........ zlib (Zlib.swift), zlib-wrapped when the first two bytes are a zlib header, raw deflate otherwise
                      (servers send both)
     br ............. libbrotlidec (Brotli.swift), large windows off
     zstd ........... libzstd (Zstd.swift), windows of at most 8 MiB (RFC 9659: windowLogMax 23); frames one after
                      another are one body
     identity ....... nothing
     anything else .. contentDecodingFailed, naming the coding, before any work is done

 Bombs. Every coding's output counts against one budget, `maxDecodedBodyBytes` (default 64 MiB): the moment the
 layers together would pass it, decoding stops with `limitExceeded`. No size a stream declares (gzip ISIZE, a zstd
 frame's content size) is trusted for an allocation: the output array starts at min(cap, 4 × input) and doubles, and
 never holds more than cap + 1 bytes. Measured on the 1 GB bombs of docs/reliability.md#content-encoding at the default
 cap:
 peak resident memory is the process's ~19 MB plus 64 MiB (gzip, gzip∘gzip), plus the 8 MiB zstd window, plus the
 16 MiB brotli window, each stopped within 0.2 s (release build). More codings than `maxContentCodings` (default 4;
 `identity` does not count) is `limitExceeded` too.

 "Plainly not compressed". Servers declare a coding they did not apply (Firebase sends plain JSON with
 `Content-Encoding: gzip`; mitmproxy issue 8124). Such a body is used as it is, with a warning, only when both hold:

   1. the codec fails at its very first bytes:
        gzip ...... neither the gzip magic 1F 8B nor a valid zlib header
        zstd ...... neither a zstd frame magic nor a skippable-frame magic
        deflate ... zlib or raw inflate does not decode the whole input: it fails anywhere, or the stream ends
                    before the input does. Raw deflate has no header to fail at, and text can begin with a valid
                    zlib header ("x^"); plain text often inflates to a few bytes before failing, and about 2% of
                    short JSON texts read as a complete raw deflate stream with bytes left over
        br ........ likewise: the decoder fails anywhere, or its stream ends before the input does (brotli has no
                    magic; `Grüße, …` decodes to a few bytes before brotli runs out of input)
   2. the input begins like uncompressed content:
        - a PNG, JPEG, GIF or binary-plist magic, or
        - its first 512 bytes (all of it, if shorter) are printable UTF-8 text, or
        - for gzip and zstd only, whose failure is a missing magic: the first byte that is not white space is `{`,
          `[`, `<` or `"` (UTF-16 JSON starts so too). For deflate and br, which fail later and have no magic, a
          damaged stream may well start with such a byte, so the text or magic rule must hold: compressed data is
          not 512 bytes of printable UTF-8.

 Anything else that fails — a gzip magic followed by bad deflate data, a truncated stream, a bad CRC or length — is
 `contentDecodingFailed` with the library's message and the input offset where it stopped. Bytes after the end of
 the last gzip member, zlib or raw deflate stream, zstd frame or brotli stream that do not start another member or
 frame are left out with a warning that counts them (servers pad; the body before them is whole and checked).
 */

/// Undoes a response's Content-Encoding (docs/content-encoding.md#undoing-the-codings). See the file comment for the
/// rules.
public enum ContentDecoding {
    /// A decoded body and what is worth knowing about how it was decoded.
    public struct Outcome: Sendable {
        /// The body with every coding undone (or the input as it was, for codings found plainly absent).
        public var body: [UInt8]
        /// A plainly absent coding, bytes ignored after the end of a stream.
        public var warnings: [String]
        /// How many codings were actually undone: 0 when every one was `identity` or plainly absent.
        public var codingsUndone: Int
    }

    /// The codings this build undoes, as written in Content-Encoding (lower-cased).
    public static let supportedCodings: Set<String> = ["gzip", "x-gzip", "deflate", "br", "zstd", "identity"]

    /// Undoes `codings` on `body`.
    /// - Parameters:
    ///   - body: the body as framed.
    ///   - codings: the Content-Encoding list elements in header order, lower-cased (as
    ///     `record.headers.listElements("Content-Encoding").map { $0.lowercased() }` gives them), undone
    ///     last-applied first.
    ///   - limits: `maxDecodedBodyBytes` caps the output of all codings together, `maxContentCodings` their number.
    /// - Returns: an empty body, without looking at the codings, for an empty `body`.
    /// - Throws: `contentDecodingFailed` for an unknown coding or a body that is not in its coding;
    ///   `limitExceeded` for too many codings or too much output.
    public static func decode(
        _ body: UnsafeBufferPointer<UInt8>, codings: [String], limits: Limits
    ) throws(RecordError) -> Outcome {
        var outcome = Outcome(body: [], warnings: [], codingsUndone: 0)
        guard !body.isEmpty else { return outcome }
        if let unknown = codings.first(where: { !supportedCodings.contains($0) }) {
            throw RecordError(
                .contentDecodingFailed,
                "Content-Encoding '\(unknown)' is not supported (gzip, x-gzip, "
                    + "deflate, br, zstd and identity are)")
        }
        let layers = codings.enumerated().filter { $0.element != "identity" }
        if layers.count > limits.maxContentCodings {
            throw RecordError(
                .limitExceeded,
                "\(layers.count) content codings stacked, more than "
                    + "\(limits.maxContentCodings) (maxContentCodings)")
        }

        // The output of the layer undone last; nil while the input is still `body`.
        var current: [UInt8]?
        var produced = 0
        for (index, coding) in layers.reversed() {
            let place = Place(coding: coding, index: index, count: codings.count, isBody: current == nil)
            let budget = limits.maxDecodedBodyBytes - produced
            let layer = try withInput(current, or: body) { input throws(RecordError) -> Layer in
                guard !input.isEmpty else { return .decoded([], trailingBytes: 0) }
                return try undo(
                    input, place: place, budget: budget, cap: limits.maxDecodedBodyBytes,
                    counted: produced > 0)
            }
            switch layer {
            case .decoded(let bytes, let trailing):
                if trailing > 0 {
                    outcome.warnings.append("\(trailing) bytes after the end of the \(coding) data were ignored")
                }
                produced += bytes.count
                current = bytes
                outcome.codingsUndone += 1
            case .absent:
                let what = place.isBody ? "body" : "output of the coding listed after it"
                outcome.warnings.append(
                    "Content-Encoding '\(coding)' is declared but the \(what) is plainly not "
                        + "\(coding) data (it begins like uncompressed content): used as it is")
            }
        }
        outcome.body = current ?? Array(body)
        return outcome
    }

    /// Where a coding is in the list, for messages.
    struct Place {
        var coding: String
        /// 0-based position in the Content-Encoding list as written.
        var index: Int
        var count: Int
        /// The coding's input is the body itself (it is the first one undone), so offsets are body offsets.
        var isBody: Bool
    }

    /// What undoing one coding gave.
    enum Layer {
        case decoded([UInt8], trailingBytes: Int)
        /// The input is plainly not in this coding (the file comment's rule): it stays as it is.
        case absent
    }

    private static func withInput<R>(
        _ current: [UInt8]?, or body: UnsafeBufferPointer<UInt8>,
        _ work: (UnsafeBufferPointer<UInt8>) throws(RecordError) -> R
    ) throws(RecordError) -> R {
        guard let current else { return try work(body) }
        // withUnsafeBufferPointer rethrows untyped; carry the typed error across it.
        let result: Result<R, RecordError> = current.withUnsafeBufferPointer { input in
            do throws(RecordError) { return .success(try work(input)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Undoes one coding on a non-empty `input`, producing at most `budget` bytes.
    private static func undo(
        _ input: UnsafeBufferPointer<UInt8>, place: Place, budget: Int, cap: Int, counted: Bool
    ) throws(RecordError) -> Layer {
        var output = BoundedOutput(
            limit: budget, inputCount: input.count, expected: place.coding.hasSuffix("gzip") ? gzipSize(input) : nil)
        let result: CodecResult
        // When a failure may mean the coding was never applied (rule 1 of the file comment).
        let evidence: AbsenceEvidence
        switch place.coding {
        case "gzip", "x-gzip":
            if hasGzipMagic(input) || Zlib.hasZlibHeader(input) {
                result = Zlib.decompress(input, format: .gzipOrZlib, into: &output)
                // Two bytes of text can form a valid zlib header (1 plain JSON text in 3,000 did): only the gzip
                // magic makes a failure damage.
                evidence = hasGzipMagic(input) ? .none : .missingMagic
            } else {
                result = .failed("no gzip magic (1F 8B) or zlib header", offset: 0)
                evidence = .missingMagic
            }
        case "deflate":
            // Raw deflate has no header, and text can begin with a valid zlib header ("x^", "Hj") — so can raw
            // deflate data: when the zlib reading fails, the raw one is tried (docs/reliability.md#content-encoding).
            if Zlib.hasZlibHeader(input) {
                let wrapped = Zlib.decompress(input, format: .zlib, into: &output)
                if case .failed = wrapped {
                    var raw = BoundedOutput(limit: budget, inputCount: input.count)
                    let unwrapped = Zlib.decompress(input, format: .raw, into: &raw)
                    if case .finished(trailing: 0) = unwrapped {
                        output = raw
                        result = unwrapped
                    } else {
                        result = wrapped
                    }
                } else {
                    result = wrapped
                }
            } else {
                result = Zlib.decompress(input, format: .raw, into: &output)
            }
            evidence = .anyFailure
        case "zstd":
            if Zstd.hasFrameMagic(input) {
                result = Zstd.decompress(input, into: &output)
                evidence = .none
            } else {
                result = .failed("no zstd frame magic (28 B5 2F FD)", offset: 0)
                evidence = .missingMagic
            }
        case "br":
            // No magic either; text often decodes to a few bytes before brotli fails (`Grüße` does).
            result = Brotli.decompress(input, into: &output)
            evidence = .anyFailure
        default:
            preconditionFailure("unsupported codings are rejected before decoding")
        }

        switch result {
        case .finished(let trailing):
            // A codec that finished exactly past the budget (its last call filled the spare byte).
            guard output.count <= budget else { throw limitError(cap: cap, counted: counted) }
            // Without a magic number, a stream that stops short of the end is no evidence: about 2% of short JSON
            // texts read as a complete raw deflate stream followed by leftover bytes.
            if evidence == .anyFailure && trailing > 0 && looksUncompressed(input, firstByteRule: false) {
                return .absent
            }
            return .decoded(output.take(), trailingBytes: trailing)
        case .tooLarge:
            throw limitError(cap: cap, counted: counted)
        case .failed(let message, let offset):
            if evidence != .none && looksUncompressed(input, firstByteRule: evidence == .missingMagic) {
                return .absent
            }
            var text = "cannot undo Content-Encoding '\(place.coding)'"
            if place.count > 1 { text += " (coding \(place.index + 1) of \(place.count))" }
            text += ": \(message)"
            if let offset, !place.isBody { text += " at byte \(offset) of that coding's input" }
            throw RecordError(
                .contentDecodingFailed, text,
                location: place.isBody ? offset.map { RecordError.Location(offset: $0) } : nil)
        }
    }

    /// When a codec's failure may mean that its coding was never applied to the input.
    enum AbsenceEvidence {
        /// Never: the input starts like the coding (gzip, zstd magic), so a failure is damage.
        case none
        /// gzip, zstd: the magic is missing; the first-byte look rule is enough.
        case missingMagic
        /// deflate, br: no magic to miss, so any failure, or a stream that ends before the input does, counts; the
        /// strict look rule (text or a binary magic) must hold.
        case anyFailure
    }

    private static func limitError(cap: Int, counted: Bool) -> RecordError {
        RecordError(
            .limitExceeded,
            "decoded body longer than \(cap) bytes (maxDecodedBodyBytes)"
                + (counted ? ", counting the output of every content coding" : ""))
    }

    static func hasGzipMagic(_ input: UnsafeBufferPointer<UInt8>) -> Bool {
        input.count >= 2 && input[0] == 0x1F && input[1] == 0x8B
    }

    // MARK: Plainly uncompressed

    /// Whether `input` begins like uncompressed content (rule 2 of the file comment). `firstByteRule` admits a first
    /// non-space byte of `{`, `[`, `<` or `"` on its own.
    static func looksUncompressed(_ input: UnsafeBufferPointer<UInt8>, firstByteRule: Bool) -> Bool {
        func starts(with magic: [UInt8]) -> Bool {
            input.count >= magic.count && zip(input, magic).allSatisfy { $0 == $1 }
        }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) || starts(with: [0xFF, 0xD8, 0xFF])
            || starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8))
            || starts(with: Array("bplist".utf8))
        {
            return true
        }
        if firstByteRule {
            var start = starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0 // a UTF-8 byte order mark
            while start < input.count && [0x20, 0x09, 0x0A, 0x0D].contains(input[start]) { start += 1 }
            if start < input.count
                && [UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "<"), UInt8(ascii: "\"")]
                    .contains(input[start])
            {
                return true
            }
        }
        return isPrintableText(UnsafeBufferPointer(rebasing: input.prefix(512)), cut: input.count > 512)
    }

    /// Whether `bytes` are valid UTF-8 without control characters other than tab, line feed, form feed and carriage
    /// return (C1 controls and DEL count as control characters). `cut`: the bytes are a prefix, so a sequence cut off
    /// at their end is allowed.
    static func isPrintableText(_ bytes: UnsafeBufferPointer<UInt8>, cut: Bool) -> Bool {
        var i = 0
        while i < bytes.count {
            let lead = bytes[i]
            if lead < 0x80 {
                guard lead >= 0x20 && lead != 0x7F || lead == 0x09 || lead == 0x0A || lead == 0x0C || lead == 0x0D
                else { return false }
                i += 1
                continue
            }
            let length: Int
            var scalar: UInt32
            switch lead {
            case 0xC2...0xDF:
                length = 2
                scalar = UInt32(lead & 0x1F)
            case 0xE0...0xEF:
                length = 3
                scalar = UInt32(lead & 0x0F)
            case 0xF0...0xF4:
                length = 4
                scalar = UInt32(lead & 0x07)
            default: return false
            }
            for k in 1..<length {
                guard i + k < bytes.count else { return cut }
                let next = bytes[i + k]
                guard next & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(next & 0x3F)
            }
            // Overlong forms, surrogates, past U+10FFFF, C1 controls.
            let least: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
            guard scalar >= least, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar), scalar >= 0xA0 else {
                return false
            }
            i += length
        }
        return true
    }
}

// MARK: - What every codec shares

/// How a codec's run over one coding ended (its output is in the ``BoundedOutput`` it was given).
/// The ISIZE of a gzip member (RFC 1952 §2.3.1: the input size modulo 2^32, in its last four bytes), or nil when
/// `input` does not start like one.
private func gzipSize(_ input: UnsafeBufferPointer<UInt8>) -> Int? {
    guard input.count >= 18, input[0] == 0x1F, input[1] == 0x8B else { return nil }
    let n = input.count
    return Int(input[n - 4]) | Int(input[n - 3]) << 8 | Int(input[n - 2]) << 16 | Int(input[n - 1]) << 24
}

enum CodecResult {
    /// The stream ended; `trailing` bytes of input after it were not another member or frame.
    case finished(trailing: Int)
    /// The output would pass the budget.
    case tooLarge
    /// Not a valid stream: the library's message, and the input offset where decoding stopped if known.
    case failed(String, offset: Int?)
}

/// The output of one coding, written by its codec straight into the storage of a `[UInt8]`.
///
/// The array starts at min(budget + 1, max(4 × input, 4 KiB)) and doubles; once doubling would pass half the ceiling
/// (budget + 1 bytes), it jumps to the ceiling. Growing copies into a new array and frees the old one at once; only
/// written pages are resident, so memory in use peaks at about the budget (twice at most half of it while copying),
/// and address space at 1.5 × (the old array beside the new one's capacity). The spare byte above the budget tells a
/// stream that ends exactly at the budget from one that goes on.
struct BoundedOutput {
    private var bytes: [UInt8] = []
    /// Most bytes the coding may produce.
    let limit: Int
    private let ceiling: Int
    private var nextCapacity: Int

    /// - Parameters:
    ///   - limit: the most bytes the coding may produce.
    ///   - inputCount: the size of the coded input.
    ///   - expected: the size the input says it decodes to (a gzip member's ISIZE), used for the first storage only
    ///     when the input could decode to it (deflate expands at most 1,032 times), so a false claim costs no more
    ///     than a true bomb; storage not yet written is not resident.
    init(limit: Int, inputCount: Int, expected: Int? = nil) {
        self.limit = max(0, limit)
        ceiling = self.limit == Int.max ? Int.max : self.limit + 1
        let (quadruple, overflow) = inputCount.multipliedReportingOverflow(by: 4)
        var initial = min(ceiling, max(overflow ? Int.max : quadruple, 4096))
        if let expected, expected > initial, expected < ceiling, expected / 1032 <= inputCount { initial = expected }
        nextCapacity = initial > ceiling / 2 ? ceiling : initial
    }

    /// Bytes produced so far.
    var count: Int { bytes.count }

    /// The bytes produced; the output is empty afterwards.
    mutating func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    /// Calls `step` with the free space after the bytes produced so far, growing the storage whenever it is full,
    /// until `step` returns a result or the ceiling is reached (`.tooLarge`).
    ///
    /// `step` writes from the start of the space it is given and returns how many bytes it wrote, with nil when it
    /// filled the space and has more to write. It must make progress on every call.
    mutating func fill(
        _ step: (UnsafeMutableBufferPointer<UInt8>) -> (written: Int, result: CodecResult?)
    ) -> CodecResult {
        var result: CodecResult?
        while result == nil {
            guard bytes.count < ceiling else { return .tooLarge }
            let capacity = nextCapacity
            nextCapacity = capacity > ceiling / 4 ? ceiling : capacity * 2
            // The old storage's only reference, released as soon as it is copied: pages of the new array that
            // are not written yet are not resident, so the peak is twice the old bytes, not old plus new capacity.
            var old = take()
            bytes = [UInt8](unsafeUninitializedCapacity: capacity) { storage, initialized in
                // Exactly the capacity asked for, whatever the allocator rounded it up to.
                let buffer = UnsafeMutableBufferPointer(rebasing: storage.prefix(capacity))
                old.withUnsafeBufferPointer { old in
                    if let source = old.baseAddress { buffer.baseAddress!.initialize(from: source, count: old.count) }
                }
                initialized = old.count
                old = []
                while result == nil && initialized < buffer.count {
                    let (written, stepResult) = step(UnsafeMutableBufferPointer(rebasing: buffer[initialized...]))
                    initialized += written
                    result = stepResult
                }
            }
        }
        return bytes.count > limit ? .tooLarge : result!
    }
}

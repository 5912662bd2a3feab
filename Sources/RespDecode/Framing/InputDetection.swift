/// Picks the framing of an input from its first bytes (docs/framings.md#detection).
///
///     (white space skipped) HTTP/ ......................... http
///     WARC/ ............................................... warc
///     filedesc:// (an ARC file's first record) ............ warc (the archive framer reads ARC too)
///     1F 8B (a gzip header) ............................... warc (.warc.gz or .arc.gz, per record or as a whole)
///     28 B5 2F FD (zstd), 5? 2A 4D 18 (a skippable frame) . warc (.warc.zst)
///     04 22 4D 18 (an LZ4 frame) .......................... warc (.warc.lz4)
///     (UTF-8 BOM, white space) { then "log" as first key .. har
///     (white space) { otherwise ........................... ndjson
///     PK 03 04 (a ZIP local file header) .................. a WACZ: not a framing (``Decision/zip``)
///
/// A HAR document whose first key is not `log` is read as ndjson, and every line of it fails: `--input har` says
/// what it is (docs/framings.md#detection).
///
/// A framing is its framer (a ``RecordFramer``: a state machine over the runner's ``FramerInput``) and, in this file,
/// its case of ``InputFormat``, its line in ``decide(_:)`` and its line in
/// ``framer(for:limits:warcTypes:verifyDigests:)``.
public enum InputDetection {
    /// How many leading bytes detection wants to see (fewer at end of input is fine): enough for a BOM, an
    /// indented `{` and `"log"`.
    public static let prefixLength = 64

    /// Bytes a reader takes in while they cannot decide yet (white space before a `{`, a `WAR` split from its `C`)
    /// before the input is read as raw HTTP anyway: however the input arrives, in one read or byte by byte, the
    /// decision is the same (docs/framings.md#detection).
    public static let maxUndecidedBytes = 64 * 1024

    /// What the first bytes say.
    public enum Decision: Sendable, Hashable {
        /// This framing.
        case format(InputFormat)
        /// More bytes could still decide (`WAR`, a lone `1F`, `{` without its first key yet): read on, unless the
        /// input has ended.
        case undecided
        /// No framing starts like this.
        case unknown
        /// A ZIP file: a WACZ, whose WARC entries the runner reads one by one (``WACZArchive``), with `--input auto`
        /// or `warc`.
        case zip
    }

    /// The framing that `prefix` (the input's first bytes) calls for, or `nil` when it is not recognised — also when
    /// more bytes might have decided (see ``decide(_:)``).
    public static func detect(_ prefix: UnsafeBufferPointer<UInt8>) -> InputFormat? {
        if case .format(let format) = decide(prefix) { return format }
        return nil
    }

    /// Decides on `prefix`, saying so when more bytes are needed: a pipe may deliver `WARC/1.1` one byte at a time,
    /// and deciding on `W` would frame a whole archive as garbage.
    public static func decide(_ prefix: UnsafeBufferPointer<UInt8>) -> Decision {
        func proper(_ bytes: UnsafeBufferPointer<UInt8>, prefixOf signature: String) -> Bool {
            bytes.count < signature.utf8.count && signature.utf8.starts(with: bytes)
        }
        if prefix.count >= 2 && prefix[0] == 0x1F && prefix[1] == 0x8B { return .format(.warc) }
        if prefix.starts(with: WACZArchive.magic) { return .zip }
        if !prefix.isEmpty && prefix.count < WACZArchive.magic.count && WACZArchive.magic.starts(with: prefix) {
            return .undecided
        }
        if prefix.count == 1 && prefix[0] == 0x1F { return .undecided }
        if let frames = framesMagic(prefix) { return frames }
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        if prefix.count < 3 && bom.starts(with: prefix) { return .undecided }
        var i = prefix.starts(with: bom) ? 3 : 0
        skipWhitespace(prefix, &i)
        let rest = UnsafeBufferPointer(rebasing: prefix[i...])
        if rest.isEmpty { return .undecided }
        if rest.starts(with: "HTTP/".utf8) { return .format(.http) }
        if rest.starts(with: "WARC/".utf8) || rest.starts(with: "filedesc://".utf8) { return .format(.warc) }
        if proper(rest, prefixOf: "HTTP/") || proper(rest, prefixOf: "WARC/") || proper(rest, prefixOf: "filedesc://") {
            return .undecided
        }
        guard rest.first == UInt8(ascii: "{") else { return .unknown }
        i += 1
        skipWhitespace(prefix, &i)
        let key = UnsafeBufferPointer(rebasing: prefix[i...])
        if key.starts(with: "\"log\"".utf8) { return .format(.har) }
        if key.isEmpty || proper(key, prefixOf: "\"log\"") { return .undecided }
        return .format(.ndjson)
    }

    /// A new framer for `format`.
    /// - Parameters:
    ///   - format: the input's framing (`auto` before detection decided: raw HTTP).
    ///   - limits: the bounds every framer keeps.
    ///   - warcTypes: the WARC record types that become items (nil: all); the others are skipped and counted.
    ///   - verifyDigests: whether WARC payload digests are left for the workers to check.
    /// - Returns: the framer, with nothing read yet.
    public static func framer(
        for format: InputFormat, limits: Limits, warcTypes: Set<String>?, verifyDigests: Bool
    ) -> any RecordFramer {
        switch format {
        case .auto, .http: HTTPStreamFramer(limits: limits)
        case .warc: WARCFramer(limits: limits, types: warcTypes, verifyDigests: verifyDigests)
        case .har: HARFramer(limits: limits)
        case .ndjson: NDJSONFramer(limits: limits)
        }
    }

    /// `.warc.zst` and `.warc.lz4` by their first frame's magic number (a zstd file may start with a skippable frame,
    /// its dictionary's): `.format(.warc)`, `.undecided` for a proper prefix of one, `nil` for neither.
    private static func framesMagic(_ prefix: UnsafeBufferPointer<UInt8>) -> Decision? {
        let magics: [[UInt8]] = [[0x28, 0xB5, 0x2F, 0xFD], [0x50, 0x2A, 0x4D, 0x18], [0x04, 0x22, 0x4D, 0x18]]
        for magic in magics {
            let n = min(4, prefix.count)
            // (A skippable frame's first byte is any of 0x50 to 0x5F.)
            let matches = (0..<n).allSatisfy { k in
                k == 0 && magic[0] == 0x50 ? prefix[0] & 0xF0 == 0x50 : prefix[k] == magic[k]
            }
            guard matches && n > 0 else { continue }
            // "W" could be WARC as well: left to the rules below.
            if n == 4 { return .format(.warc) }
            if prefix[0] != UInt8(ascii: "W") { return .undecided }
        }
        return nil
    }

    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
        while i < bytes.count, bytes[i] == 0x0D || bytes[i] == 0x0A || bytes[i] == 0x20 || bytes[i] == 0x09 {
            i += 1
        }
    }
}

/// How input is framed (docs/framings.md#rules-for-every-framing).
public enum InputFormat: String, Sendable, CaseIterable {
    /// Decided per input from its first bytes.
    case auto
    /// A stream of raw HTTP/1.x responses.
    case http
    /// WARC/1.0 or 1.1 records, or ARC v1/v2 records, plain or gzip (per record or as a whole).
    case warc
    /// A HAR 1.2 document.
    case har
    /// One JSON record object per line.
    case ndjson
}

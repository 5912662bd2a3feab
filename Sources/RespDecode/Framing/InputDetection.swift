/// Picks the framing of an input from its first bytes (SPEC §2 auto).
///
///     (white space skipped) HTTP/ ......................... http
///     WARC/ ............................................... warc
///     1F 8B (a gzip header) ............................... warc (.warc.gz, per record or as a whole)
///     (UTF-8 BOM, white space) { then "log" as first key .. har
///     (white space) { otherwise ........................... ndjson
///
/// A HAR document whose first key is not `log` is read as ndjson, and every line of it fails: `--input har` says
/// what it is (README, "Input framings").
public enum InputDetection {
    /// How many leading bytes detection wants to see (fewer at end of input is fine): enough for a BOM, an
    /// indented `{` and `"log"`.
    public static let prefixLength = 64

    /// The framing that `prefix` (the input's first bytes) calls for, or `nil` when it is not recognised.
    public static func detect(_ prefix: UnsafeBufferPointer<UInt8>) -> InputFormat? {
        if prefix.count >= 2 && prefix[0] == 0x1F && prefix[1] == 0x8B { return .warc }
        var i = 0
        if prefix.count >= 3 && prefix[0] == 0xEF && prefix[1] == 0xBB && prefix[2] == 0xBF { i = 3 }
        skipWhitespace(prefix, &i)
        let rest = UnsafeBufferPointer(rebasing: prefix[i...])
        if rest.starts(with: "HTTP/".utf8) { return .http }
        if rest.starts(with: "WARC/".utf8) { return .warc }
        guard rest.first == UInt8(ascii: "{") else { return nil }
        i += 1
        skipWhitespace(prefix, &i)
        return UnsafeBufferPointer(rebasing: prefix[i...]).starts(with: "\"log\"".utf8) ? .har : .ndjson
    }

    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
        while i < bytes.count, bytes[i] == 0x0D || bytes[i] == 0x0A || bytes[i] == 0x20 || bytes[i] == 0x09 {
            i += 1
        }
    }
}

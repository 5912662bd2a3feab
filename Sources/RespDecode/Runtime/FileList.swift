/// The lines of a `--files-from` list: one input file name per line (Common Crawl's manifests, `find` output, a Spark
/// partition of either).
///
/// A line is taken as it is, spaces included, without its LF and a CR before it; blank lines are skipped. A `file:`
/// URI (`file:/data/a.warc.gz`, `file:///data/a.warc.gz`, `file://localhost/…`, as Spark and Hadoop write input names)
/// is its percent-decoded path. Names must be UTF-8, as each output line names its input. Any other URI (`s3://…`,
/// `https://…`) names a file this worker cannot open: fetching
/// is the engine's job. `-` is a file named `-`, not standard input.
public enum FileList {
    /// What a list line names.
    public enum Entry: Equatable, Sendable {
        /// Nothing (a blank line).
        case none
        /// A file, by its path.
        case path(String)
        /// Something that is not a local file name, with why.
        case invalid(String)
    }

    private static let notUTF8 = "not UTF-8: file names are taken as UTF-8 text (inputs are named on output lines)"

    /// The longest line taken as a name; a longer one is an error and is skipped (PATH_MAX is 4096).
    public static let maxLineBytes = 64 * 1024

    /// What `line` (without its LF) names.
    public static func entry(_ line: some Collection<UInt8>) -> Entry {
        var bytes = Array(line)
        if bytes.last == 0x0D { bytes.removeLast() }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return .none }
        if bytes.contains(0) { return .invalid("a file name cannot hold a NUL byte") }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .invalid(notUTF8) }
        if text.hasPrefix("file:") { return fileURI(text) }
        if let scheme = text.firstRange(of: "://"), isScheme(text[..<scheme.lowerBound]) {
            return .invalid(
                "not a local file name: respdecode reads files, it does not fetch \(text[..<scheme.lowerBound]) URIs")
        }
        return .path(text)
    }

    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// The path of a `file:` URI (RFC 8089): `file:/p`, `file:///p` or `file://localhost/p`, percent-decoded.
    private static func fileURI(_ text: String) -> Entry {
        var rest = text.dropFirst("file:".count)
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            guard let slash = rest.firstIndex(of: "/") else { return .invalid("a file: URI without a path") }
            let host = rest[..<slash]
            guard host.isEmpty || host.lowercased() == "localhost" else {
                return .invalid("a file: URI on another host (\(host)) is not a local file")
            }
            rest = rest[slash...]
        }
        guard rest.hasPrefix("/") else { return .invalid("a file: URI whose path is not absolute") }
        var path: [UInt8] = []
        var bytes = rest.utf8[...]
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                path.append(byte)
                continue
            }
            guard bytes.count >= 2, let high = bytes[bytes.startIndex].hexDigitValue,
                let low = bytes[bytes.index(after: bytes.startIndex)].hexDigitValue
            else { return .invalid("a file: URI with a bad percent escape") }
            bytes = bytes.dropFirst(2)
            path.append(high << 4 | low)
        }
        if path.contains(0) { return .invalid("a file name cannot hold a NUL byte") }
        guard let decoded = String(validating: path, as: UTF8.self) else { return .invalid(notUTF8) }
        return .path(decoded)
    }
}

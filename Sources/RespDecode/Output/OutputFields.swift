/// The top-level keys of a result line that are written (`--fields`, docs/output.md#choosing-the-keys): the others are
/// never written, and those that cost something to make (`body`'s base64, `warnings`, `trailers`) not made.
public struct OutputFields: OptionSet, Sendable, Hashable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Every key of docs/output.md#the-result-line, in the order a line has them.
    public static let names: [String] = [
        "seq", "offset", "length", "input", "id", "url", "method", "ip", "arcDate", "warcType", "warcRecordId",
        "warcDate", "warcTruncated", "refersTo", "payloadDigest", "revisitOf", "status", "contentType", "sniffed",
        "contentEncoding", "bodyBytes", "decodedBytes", "digest", "decoder", "ok", "value", "error", "body", "trailers",
        "warnings",
    ]

    // Constants, not looked up in `names`: these are tested on every key of every line.
    public static let seq = OutputFields(rawValue: 1 << 0)
    public static let offset = OutputFields(rawValue: 1 << 1)
    public static let length = OutputFields(rawValue: 1 << 2)
    public static let input = OutputFields(rawValue: 1 << 3)
    public static let id = OutputFields(rawValue: 1 << 4)
    public static let url = OutputFields(rawValue: 1 << 5)
    public static let method = OutputFields(rawValue: 1 << 6)
    public static let ip = OutputFields(rawValue: 1 << 7)
    public static let arcDate = OutputFields(rawValue: 1 << 8)
    public static let warcType = OutputFields(rawValue: 1 << 9)
    public static let warcRecordId = OutputFields(rawValue: 1 << 10)
    public static let warcDate = OutputFields(rawValue: 1 << 11)
    public static let warcTruncated = OutputFields(rawValue: 1 << 12)
    public static let refersTo = OutputFields(rawValue: 1 << 13)
    public static let payloadDigest = OutputFields(rawValue: 1 << 14)
    public static let revisitOf = OutputFields(rawValue: 1 << 15)
    public static let status = OutputFields(rawValue: 1 << 16)
    public static let contentType = OutputFields(rawValue: 1 << 17)
    public static let sniffed = OutputFields(rawValue: 1 << 18)
    public static let contentEncoding = OutputFields(rawValue: 1 << 19)
    public static let bodyBytes = OutputFields(rawValue: 1 << 20)
    public static let decodedBytes = OutputFields(rawValue: 1 << 21)
    public static let digest = OutputFields(rawValue: 1 << 22)
    public static let decoder = OutputFields(rawValue: 1 << 23)
    public static let ok = OutputFields(rawValue: 1 << 24)
    public static let value = OutputFields(rawValue: 1 << 25)
    public static let error = OutputFields(rawValue: 1 << 26)
    public static let body = OutputFields(rawValue: 1 << 27)
    public static let trailers = OutputFields(rawValue: 1 << 28)
    public static let warnings = OutputFields(rawValue: 1 << 29)

    /// Every key: a line as written without `--fields`.
    public static let all = OutputFields(rawValue: (1 << 30) - 1)

    /// Parses `--fields`' comma-separated key names (case-sensitive, as the keys are written).
    public static func parsing(_ text: String) -> Result<OutputFields, SelectionError> {
        var fields: OutputFields = []
        for part in text.split(separator: ",") {
            let name = String(part.trimmingOWS())
            guard let index = names.firstIndex(of: name) else {
                return .failure(
                    SelectionError("--fields: unknown key '\(name)'; known keys: \(names.joined(separator: ","))"))
            }
            fields.insert(OutputFields(rawValue: 1 << UInt64(index)))
        }
        guard !fields.isEmpty else { return .failure(SelectionError("--fields names no key")) }
        return .success(fields)
    }

    /// The key names, in line order, comma-separated.
    public var names: String {
        Self.names.indices.filter { rawValue & (1 << UInt64($0)) != 0 }.map { Self.names[$0] }
            .joined(separator: ",")
    }
}

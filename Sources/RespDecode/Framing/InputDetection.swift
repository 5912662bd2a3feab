/// Picks the framing of an input from its first bytes (SPEC §2 auto).
public enum InputDetection {
    /// How many leading bytes detection wants to see (fewer at end of input is fine).
    public static let prefixLength = 16

    /// The framing that `prefix` (the input's first bytes) calls for, or `nil` when it is not recognised.
    public static func detect(_ prefix: UnsafeBufferPointer<UInt8>) -> InputFormat? {
        var i = 0
        while i < prefix.count, prefix[i] == 0x0D || prefix[i] == 0x0A || prefix[i] == 0x20 || prefix[i] == 0x09 {
            i += 1
        }
        let rest = UnsafeBufferPointer(rebasing: prefix[i...])
        if rest.starts(with: "HTTP/".utf8) { return .http }
        return nil
    }

    /// A framer for `format` (`.auto` must have been resolved before).
    static func makeFramer(_ format: InputFormat, limits: Limits) -> HTTPStreamFramer {
        switch format {
        case .auto, .http: HTTPStreamFramer(limits: limits)
        }
    }
}

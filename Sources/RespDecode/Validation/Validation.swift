/// AFNetworking's response validation (`-[AFHTTPResponseSerializer validateResponse:data:error:]`), as data.
public enum Validation {
    /// The -1011 error for a status outside the acceptable set: `Request failed: not found (404)`.
    public static func statusError(_ status: Int) -> RecordError {
        RecordError(.unacceptableStatusCode, "Request failed: \(StatusPhrases.phrase(for: status)) (\(status))")
    }

    /// The -1016 error for an unacceptable MIME type; a missing one prints as `(null)`, as Objective-C's `%@` does.
    public static func contentTypeError(_ mimeType: String?) -> RecordError {
        RecordError(.unacceptableContentType, "Request failed: unacceptable content-type: \(mimeType ?? "(null)")")
    }
}

/// A set of status codes (AFNetworking's `acceptableStatusCodes`; `--select-status`), written `200-299,304` or
/// `2xx,304`.
public struct StatusCodeSet: Sendable, Hashable, CustomStringConvertible {
    public private(set) var ranges: [ClosedRange<Int>]

    /// 200–299, AFNetworking's default.
    public static let successful = StatusCodeSet(ranges: [200...299])

    public init(ranges: [ClosedRange<Int>]) { self.ranges = ranges }

    /// Parses a comma-separated list of codes, inclusive ranges and classes: `200-299,304`, `2xx` (200-299).
    public init?(parsing text: String) {
        var ranges: [ClosedRange<Int>] = []
        for part in text.split(separator: ",") {
            let trimmed = Array(part.trimmingOWS().utf8)
            if trimmed.count == 3, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(trimmed[0]),
                trimmed[1] | 0x20 == UInt8(ascii: "x"), trimmed[2] | 0x20 == UInt8(ascii: "x")
            {
                let low = Int(trimmed[0] - UInt8(ascii: "0")) * 100
                ranges.append(low...(low + 99))
                continue
            }
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingOWS() }
            guard bounds.count == 1 || bounds.count == 2,
                let low = Int(bounds[0]), let high = Int(bounds[bounds.count - 1]),
                low >= 0, low <= high, high <= 999
            else { return nil }
            ranges.append(low...high)
        }
        guard !ranges.isEmpty else { return nil }
        self.ranges = ranges
    }

    public func contains(_ status: Int) -> Bool { ranges.contains { $0.contains(status) } }

    public var description: String {
        ranges.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
            .joined(separator: ",")
    }
}

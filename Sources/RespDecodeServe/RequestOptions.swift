import NIOConcurrencyHelpers
internal import RespDecode

/// A request's query options (docs/sidecar.md#query-options): `name=value` pairs, percent-decoded, turned into a
/// configuration by the executable's option parser (``ServeSettings/requestConfiguration``), which holds the allow
/// list and refuses a raised limit. The configurations and their decoders are kept by query string (the same options
/// cost one parse), up to ``capacity`` of them.
final class RequestOptions: Sendable {
    static let capacity = 256

    private let settings: ServeSettings
    private let cache = NIOLockedValueBox<[String: (Configuration, CompoundDecoder)]>([:])

    init(settings: ServeSettings) { self.settings = settings }

    /// The configuration and decoder of `query` (the part of the target after `?`).
    func configuration(query: String) throws -> (Configuration, (any LineWriter)?) {
        if let hit = cache.withLockedValue({ $0[query] }) { return (hit.0, hit.1) }
        let configuration = try settings.requestConfiguration(try Self.pairs(query))
        let decoder = CompoundDecoder(configuration: configuration)
        cache.withLockedValue { entries in
            if entries.count >= Self.capacity { entries.removeAll() }
            entries[query] = (configuration, decoder)
        }
        return (configuration, decoder)
    }

    /// `a=1&b=x%2Cy` as pairs; `+` is a space; a name without `=` has the value `true`.
    static func pairs(_ query: String) throws -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let halves = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decode(halves[0])
            let value = halves.count > 1 ? try decode(halves[1]) : "true"
            guard !name.isEmpty else { throw RequestOptionError("a query option without a name") }
            pairs.append((name, value))
        }
        return pairs
    }

    private static func decode(_ text: Substring) throws -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        func hex(_ byte: UInt8?) -> UInt8? {
            switch byte {
            case .some(let b) where b >= 0x30 && b <= 0x39: b - 0x30
            case .some(let b) where b >= 0x41 && b <= 0x46: b - 0x41 + 10
            case .some(let b) where b >= 0x61 && b <= 0x66: b - 0x61 + 10
            default: nil
            }
        }
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = hex(iterator.next()), let low = hex(iterator.next()) else {
                    throw RequestOptionError("a bad percent escape in the query")
                }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw RequestOptionError("the query is not UTF-8")
        }
        return string
    }
}

import Foundation
import Testing

@testable import RespDecode

/// What one body decoder gave for one body: its value (JSON text), read back in order, its warnings and its error.
struct Decoded {
    var text: String?
    var warnings: [String] = []
    var error: RecordError?

    /// The value, read by the project's order-keeping reader (nil when there is none or it is not JSON).
    var value: JSONValue? { text.flatMap { try? JSONValue.parse($0, maxDepth: 100_000) } }

    /// Runs `decoder` on `body` and checks that a failure leaves the output buffer as it was.
    init(
        _ decoder: any BodyDecoder, _ body: [UInt8], mimeType: String,
        configure: (inout DecoderOptions) -> Void = { _ in }
    ) {
        var options = DecoderOptions()
        configure(&options)
        var context = DecodingContext(mimeType: mimeType, options: options)
        let out = OutputBuffer()
        out.append(ascii: "prefix")
        do {
            let wrote = try body.withUnsafeBufferPointer { try decoder.decode($0, context: &context, into: out) }
            text = wrote ? String(decoding: out.bytes[6...], as: UTF8.self) : nil
            if !wrote { #expect(out.count == 6, "no value, but bytes were written") }
        } catch {
            #expect(out.count == 6, "a failed decode must leave the output as it was")
            self.error = error as? RecordError
        }
        warnings = context.warnings
    }

    init(
        _ decoder: any BodyDecoder, _ body: String, mimeType: String,
        configure: (inout DecoderOptions) -> Void = { _ in }
    ) {
        self.init(decoder, Array(body.utf8), mimeType: mimeType, configure: configure)
    }
}

extension JSONValue {
    /// Shorthand for tests: an object of string arrays, in the order given.
    static func form(_ pairs: [(String, [String])]) -> JSONValue {
        .object(pairs.map { (key: $0.0, value: .array($0.1.map { .string($0) })) })
    }

    /// The members of an object, in order (empty for anything else).
    var members: [(key: String, value: JSONValue)] {
        if case .object(let members) = self { return members }
        return []
    }

    /// The elements of an array (empty for anything else).
    var elements: [JSONValue] {
        if case .array(let elements) = self { return elements }
        return []
    }
}

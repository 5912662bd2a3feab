import RespDecode

/// Decodes `bytes` with `decoder` as a body of type `mimeType` and returns the JSON value written, or the error.
func decodeBinaryBody(
    _ bytes: [UInt8], with decoder: any BodyDecoder, mimeType: String, limits: Limits = Limits()
) -> Result<String, RecordError> {
    var warnings: [String] = []
    return decodeBinaryBody(bytes, with: decoder, mimeType: mimeType, limits: limits, warnings: &warnings)
}

/// As ``decodeBinaryBody(_:with:mimeType:limits:)``, and sets `warnings` to the decoder's warnings.
func decodeBinaryBody(
    _ bytes: [UInt8], with decoder: any BodyDecoder, mimeType: String, limits: Limits = Limits(),
    warnings: inout [String]
) -> Result<String, RecordError> {
    var options = DecoderOptions()
    options.limits = limits
    var context = DecodingContext(mimeType: mimeType, options: options)
    let output = OutputBuffer()
    output.append(ascii: "<")
    do {
        let wrote = try bytes.withUnsafeBufferPointer { body throws(RecordError) in
            try decoder.decode(body, context: &context, into: output)
        }
        warnings = context.warnings
        return .success(wrote ? String(decoding: output.array.dropFirst(), as: UTF8.self) : "")
    } catch {
        // The output must be as it was on entry.
        precondition(output.array == Array("<".utf8), "output not rolled back")
        return .failure(error)
    }
}

/// `hex` ("c0", "c4-00", "0x1bff…" or with spaces) as bytes.
func bytes(hex: String) -> [UInt8] {
    var digits = Array(hex.lowercased().utf8.filter { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
    if hex.hasPrefix("0x") { digits.removeFirst() }
    return stride(from: 0, to: digits.count - 1, by: 2).map { k in
        func value(_ c: UInt8) -> UInt8 { c <= 0x39 ? c - 0x30 : c - 0x61 + 10 }
        return value(digits[k]) << 4 | value(digits[k + 1])
    }
}

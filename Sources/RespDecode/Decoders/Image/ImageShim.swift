internal import CShims

/// What the libpng and libjpeg wrappers share: the row callback that feeds a ``PixelAccumulator``, and reading back
/// the shim's outcome (status, message, warnings).
enum ImageShim {
    enum Failure: Error {
        /// The library rejected the data; its message.
        case invalid(String)
        /// A limit was reached (pixels, memory, scans).
        case limit(String)
        /// A valid file this library build cannot decode (12-bit, lossless JPEG).
        case unsupported(String)
    }

    /// Runs `decode` with the row callback and its context (both nil without `pixels`) and an outcome to fill, adds
    /// the library's warnings to `warnings`, and gives the failure, if any.
    static func run(
        library: String, pixels: PixelAccumulator?, warnings: inout [String],
        _ decode: (respdecode_rgba_row_fn?, UnsafeMutableRawPointer?, UnsafeMutablePointer<respdecode_image_outcome>)
            -> Int32
    ) -> Failure? {
        var outcome = respdecode_image_outcome()
        let status = decode(
            pixels == nil ? nil : addRowToAccumulator, pixels.map { Unmanaged.passUnretained($0).toOpaque() },
            &outcome)
        if outcome.warnings > 0 {
            let first = text(&outcome.first_warning)
            let count = Int(outcome.warnings)
            warnings.append(
                count > 1 ? "\(library) warning: \(first) (and \(count - 1) more)" : "\(library) warning: \(first)")
        }
        switch Int(status) {
        case RESPDECODE_IMAGE_OK: return nil
        case RESPDECODE_IMAGE_LIMIT: return .limit(text(&outcome.message))
        case RESPDECODE_IMAGE_UNSUPPORTED: return .unsupported(text(&outcome.message))
        default: return .invalid(text(&outcome.message))
        }
    }

    /// A NUL-terminated C character array of the outcome struct as a string.
    private static func text<T>(_ field: inout T) -> String {
        withUnsafeBytes(of: &field) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    }
}

/// The shims' row callback: `context` is an unretained ``PixelAccumulator`` (alive for the whole decode call).
private func addRowToAccumulator(
    _ context: UnsafeMutableRawPointer?, _ width: UInt32, _ height: UInt32, _ channels: UInt32,
    _ row: UnsafePointer<UInt8>?, _ count: UInt32, _ y: UInt32, _ x0: UInt32, _ step: UInt32,
    _ palette: UnsafePointer<UInt8>?
) {
    guard let context, let row else { return }
    Unmanaged<PixelAccumulator>.fromOpaque(context)._withUnsafeGuaranteedRef {
        $0.addRow(
            row, count: Int(count), channels: Int(channels), y: Int(y), x0: Int(x0), step: Int(step),
            width: Int(width), height: Int(height), palette: palette)
    }
}

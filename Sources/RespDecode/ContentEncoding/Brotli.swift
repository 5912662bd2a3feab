/*
 The br Content-Encoding (RFC 7932) through libbrotlidec's streaming decoder; the only Swift file that calls
 libbrotli.

 Large windows (`BROTLI_DECODER_PARAM_LARGE_WINDOW`, up to 1 GiB, not part of RFC 7932) stay off, so such a stream is
 an error and a window is at most 16 MiB. Brotli has no magic number: whether a body is plainly not brotli is told
 by the decoder failing before it produced a byte (ContentDecoding.swift).
 */
internal import CBrotli

/// libbrotlidec's streaming decoder, bounded.
enum Brotli {
    /// Decompresses the brotli stream `data` into `output`.
    ///
    /// Ends with `.finished` at the end of the stream, counting input bytes after it; `.failed` with the decoder's
    /// error and the input offset it had reached, including for a stream that ends early.
    static func decompress(_ data: UnsafeBufferPointer<UInt8>, into output: inout BoundedOutput) -> CodecResult {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else {
            return .failed("brotli could not start", offset: nil)
        }
        defer { BrotliDecoderDestroyInstance(state) }

        var availableIn = data.count
        var nextIn = data.baseAddress
        return output.fill { free -> (written: Int, result: CodecResult?) in
            var availableOut = free.count
            var nextOut = free.baseAddress
            while availableOut > 0 {
                let before = (availableIn, availableOut)
                let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                let written = free.count - availableOut
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS:
                    return (written, .finished(trailing: availableIn))
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                    // All the input was given at once: nothing more is coming.
                    return (written, .failed("the compressed data ends early (truncated)", offset: data.count))
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                    if (availableIn, availableOut) == before {
                        return (written, .failed("brotli made no progress", offset: data.count - availableIn))
                    }
                default:
                    return (written, .failed(errorMessage(state), offset: data.count - availableIn))
                }
            }
            return (free.count, nil)
        }
    }

    /// The decoder's error as words: `_ERROR_FORMAT_PADDING_1` → "format error (padding 1)".
    private static func errorMessage(_ state: OpaquePointer) -> String {
        let code = BrotliDecoderGetErrorCode(state)
        guard let name = BrotliDecoderErrorString(code).map({ String(cString: $0) }) else {
            return "brotli error \(code.rawValue)"
        }
        var words = name.drop(while: { $0 == "_" })
        if words.hasPrefix("ERROR_") { words = words.dropFirst("ERROR_".count) }
        let parts = words.split(separator: "_").map { $0.lowercased() }
        guard let kind = parts.first else { return name }
        let detail = parts.dropFirst().joined(separator: " ")
        return detail.isEmpty ? "\(kind) error" : "\(kind) error (\(detail))"
    }
}

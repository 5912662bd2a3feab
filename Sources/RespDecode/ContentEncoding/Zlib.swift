internal import CZlib

/// The only Swift file that calls zlib: inflating PNG text chunks (counting only) and gzip/deflate
/// Content-Encoding (into a bounded output). (CRC-32 is libdeflate's: ``CRC32``.)
enum Zlib {
    /// What inflating a zlib stream gave, measured without keeping the output.
    enum InflatedSize: Equatable {
        case size(Int)
        /// More than the limit: inflating stopped there.
        case tooLarge
        /// Not a complete, valid zlib stream; zlib's message.
        case invalid(String)
    }

    /// Inflates zlib streams into a small scratch buffer, counting the bytes and stopping once they pass a limit:
    /// a decompression bomb costs at most the limit in work, never memory. One counter serves many streams (the
    /// zlib state and the buffer are made once).
    final class SizeCounter {
        private var stream = z_stream()
        private var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        private let started: Bool

        init() {
            started = inflateInit_(&stream, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        }

        deinit { if started { inflateEnd(&stream) } }

        /// The size `data` inflates to, up to `limit`.
        func inflatedSize(of data: UnsafeBufferPointer<UInt8>, limit: Int) -> InflatedSize {
            guard started, inflateReset(&stream) == Z_OK else { return .invalid("zlib could not start") }
            var total = 0
            var consumed = 0
            return scratch.withUnsafeMutableBufferPointer { out -> InflatedSize in
                while true {
                    // avail_in is 32 bits: feed the input in slices.
                    if stream.avail_in == 0 && consumed < data.count {
                        let take = min(data.count - consumed, 1 << 30)
                        stream.next_in = UnsafeMutablePointer(mutating: data.baseAddress! + consumed)
                        stream.avail_in = UInt32(take)
                        consumed += take
                    }
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    total += out.count - Int(stream.avail_out)
                    if total > limit { return .tooLarge }
                    switch status {
                    case Z_STREAM_END:
                        return .size(total)
                    case Z_OK:
                        continue
                    case Z_BUF_ERROR where stream.avail_in == 0 && consumed == data.count:
                        return .invalid("the compressed data ends early")
                    default:
                        return .invalid(stream.msg.map { String(cString: $0) } ?? "zlib error \(status)")
                    }
                }
            }
        }
    }
}

extension Zlib {
    /// Which header `decompress` expects before the deflate data.
    enum Format {
        /// A gzip member or a zlib stream, told apart by their first bytes (windowBits 15 + 32); further gzip members
        /// after the first are decoded as the same body.
        case gzipOrZlib
        /// A zlib stream (RFC 1950, windowBits 15).
        case zlib
        /// Raw deflate data (RFC 1951, windowBits -15).
        case raw

        var windowBits: Int32 {
            switch self {
            case .gzipOrZlib: 15 + 32
            case .zlib: 15
            case .raw: -15
            }
        }
    }

    /// Whether `data` starts with a zlib header (RFC 1950 §2.2): method 8 (deflate), a window of at most 32 KiB, and
    /// the check bits making the first two bytes a multiple of 31.
    static func hasZlibHeader(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        guard data.count >= 2 else { return false }
        return data[0] & 0x0F == 8 && data[0] >> 4 <= 7 && (UInt16(data[0]) << 8 | UInt16(data[1])) % 31 == 0
    }

    /// Inflates `data` (Content-Encoding gzip or deflate) straight into `output`, which stops it at its limit: a
    /// bomb costs at most the limit in memory and work. The declared ISIZE is never used to size anything.
    ///
    /// Ends with `.finished` at the end of the stream (for `.gzipOrZlib`, of the last of the gzip members that
    /// follow one another), counting the input bytes after it; `.failed` with zlib's message and the input offset
    /// where zlib stopped, including for a stream that ends early (no progress is possible once the input is used up).
    static func decompress(_ data: UnsafeBufferPointer<UInt8>, format: Format, into output: inout BoundedOutput)
        -> CodecResult
    {
        // Heap-allocated: zlib's state points back at the z_stream, which therefore must not move.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        guard inflateInit2_(stream, format.windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return .failed("zlib could not start", offset: nil) }
        defer { inflateEnd(stream) }

        var fed = 0 // input bytes handed to zlib so far; `fed - avail_in` have been consumed
        return output.fill { free -> (written: Int, result: CodecResult?) in
            var written = 0
            while written < free.count {
                // avail_in and avail_out are 32 bits: hand both over in slices.
                if stream.pointee.avail_in == 0 && fed < data.count {
                    let take = min(data.count - fed, 1 << 30)
                    stream.pointee.next_in = UnsafeMutablePointer(mutating: data.baseAddress! + fed)
                    stream.pointee.avail_in = UInt32(take)
                    fed += take
                }
                let room = min(free.count - written, 1 << 30)
                stream.pointee.next_out = free.baseAddress! + written
                stream.pointee.avail_out = UInt32(room)
                let status = CZlib.inflate(stream, Z_NO_FLUSH)
                written += room - Int(stream.pointee.avail_out)
                let consumed = fed - Int(stream.pointee.avail_in)
                switch status {
                case Z_OK:
                    continue
                case Z_STREAM_END:
                    // Another gzip member right after this one is more of the same body.
                    if format == .gzipOrZlib && data.count - consumed >= 2 && data[consumed] == 0x1F
                        && data[consumed + 1] == 0x8B
                    {
                        guard inflateReset(stream) == Z_OK else {
                            return (written, .failed("zlib could not restart", offset: consumed))
                        }
                        continue
                    }
                    return (written, .finished(trailing: data.count - consumed))
                case Z_BUF_ERROR where stream.pointee.avail_in == 0 && fed == data.count:
                    return (written, .failed("the compressed data ends early (truncated)", offset: data.count))
                case Z_NEED_DICT:
                    return (written, .failed("the stream needs a preset dictionary", offset: consumed))
                default:
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                    return (written, .failed(message, offset: consumed))
                }
            }
            return (written, nil)
        }
    }
}

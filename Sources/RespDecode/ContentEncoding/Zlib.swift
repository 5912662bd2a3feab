internal import CDeflate
internal import CZlib

/// The only Swift file that calls zlib: inflating PNG text chunks (counting only) and gzip/deflate
/// Content-Encoding (into a bounded output, through libdeflate where it can: see `decompress`). (CRC-32 is
/// libdeflate's: ``CRC32``.)
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
        // Members inflated whole by libdeflate (`wholeMembers`) first; from the first one it does not take (too large
        // for the space, invalid, or with a header CRC, which zlib checks and libdeflate skips), zlib goes on from that
        // member's start, so a failure's message and offset and where output stops are zlib's as ever.
        var fed = 0 // input bytes handed to zlib so far; `fed - avail_in` have been consumed
        var stream: UnsafeMutablePointer<z_stream>?
        defer {
            if let stream {
                inflateEnd(stream)
                stream.deallocate()
            }
        }
        return output.fill { free -> (written: Int, result: CodecResult?) in
            var written = 0
            if stream == nil {
                let (produced, consumed, finished) = wholeMembers(data, format: format, into: free)
                written = produced
                fed = consumed
                if finished { return (written, .finished(trailing: data.count - consumed)) }
                // Heap-allocated: zlib's state points back at the z_stream, which therefore must not move.
                let started = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
                started.initialize(to: z_stream())
                guard
                    inflateInit2_(started, format.windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
                else {
                    started.deallocate()
                    return (written, .failed("zlib could not start", offset: nil))
                }
                stream = started
            }
            guard let stream else { return (written, .failed("zlib could not start", offset: nil)) }
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

    /// The members at the start of `data` that libdeflate inflates whole into `space` (about twice as fast as zlib
    /// here, measured on the gzip bodies of issue 22's crawl): gzip members one after another (for `.gzipOrZlib`), or
    /// the one zlib stream or raw deflate stream. libdeflate checks the same CRC-32 and length (or Adler-32) as zlib.
    /// ISA-L's igzip is no faster on the same bodies (0.99 times libdeflate's speed: docs/content-encoding.md#speed).
    /// - Returns: the bytes written, the input bytes consumed, and whether the data is finished (nothing but trailing
    ///   bytes that start no member is left); when not, zlib goes on from `consumed`.
    private static func wholeMembers(
        _ data: UnsafeBufferPointer<UInt8>, format: Format, into space: UnsafeMutableBufferPointer<UInt8>
    )
        -> (written: Int, consumed: Int, finished: Bool)
    {
        guard let decompressor = libdeflate_alloc_decompressor() else { return (0, 0, false) }
        defer { libdeflate_free_decompressor(decompressor) }
        var written = 0
        var consumed = 0
        while true {
            let rest = data.count - consumed
            let isGzip = rest >= 18 && data[consumed] == 0x1F && data[consumed + 1] == 0x8B && data[consumed + 2] == 8
            guard consumed == 0 || (format == .gzipOrZlib && isGzip) else {
                // After a member: what follows is trailing data, unless it starts a gzip member zlib must judge.
                let more = format == .gzipOrZlib && rest >= 2 && data[consumed] == 0x1F && data[consumed + 1] == 0x8B
                return (written, consumed, !more)
            }
            // FHCRC (flag bit 1): zlib checks the header CRC, libdeflate does not.
            if isGzip && data[consumed + 3] & 0x02 != 0 { return (written, consumed, false) }
            var used = 0
            var produced = 0
            let input = UnsafeRawPointer(data.baseAddress! + consumed)
            let output = UnsafeMutableRawPointer(space.baseAddress! + written)
            let room = space.count - written
            let result: libdeflate_result
            switch format {
            case .gzipOrZlib where isGzip:
                result = libdeflate_gzip_decompress_ex(decompressor, input, rest, output, room, &used, &produced)
            case .gzipOrZlib, .zlib:
                result = libdeflate_zlib_decompress_ex(decompressor, input, rest, output, room, &used, &produced)
            case .raw:
                result = libdeflate_deflate_decompress_ex(decompressor, input, rest, output, room, &used, &produced)
            }
            guard result == LIBDEFLATE_SUCCESS else { return (written, consumed, false) }
            written += produced
            consumed += used
        }
    }
}

internal import CZlib

/// The only Swift file that calls zlib.
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
    /// The CRC-32 of `data` (PNG chunks, gzip members).
    static func crc32(_ data: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var crc: UInt = CZlib.crc32(0, nil, 0)
        var rest = data
        while !rest.isEmpty {
            let take = min(rest.count, 1 << 30)
            crc = CZlib.crc32(crc, rest.baseAddress, UInt32(take))
            rest = UnsafeBufferPointer(rebasing: rest[take...])
        }
        return UInt32(truncatingIfNeeded: crc)
    }
}

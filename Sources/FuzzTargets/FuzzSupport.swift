import RespDecode

/// Limits a user running on untrusted input might choose: small enough that a bomb costs milliseconds, not seconds.
enum FuzzLimits {
    static let limits = Limits(
        maxHeaderBytes: 16 * 1024, maxBodyBytes: 1 << 20, maxDecodedBodyBytes: 4 << 20, maxPlistObjects: 100_000,
        maxValueBytes: 8 << 20, maxImagePixels: 4_000_000, maxJPEGScans: 100, maxImageMemory: 64 << 20,
        maxImageChunkBytes: 1 << 20)

    static func configuration(inflate: Bool = false) -> Configuration {
        var configuration = Configuration()
        configuration.decoding.options.imageInflate = inflate
        configuration.limits = limits
        configuration.jobs = 1
        return configuration
    }
}

/// Stops the process with `message` (libFuzzer reports it as a crash and keeps the input).
func violated(_ message: String) -> Never {
    fatalError("fuzz invariant violated: \(message)")
}

enum JSONCheck {
    private static let reader = JSONTranscoder(options: .init(stripNulls: false, maxDepth: 10_000))

    /// Stops the process unless `bytes` (one line, without its newline) is one valid JSON value.
    static func requireValid(_ bytes: UnsafeBufferPointer<UInt8>, _ what: String) {
        let scratch = OutputBuffer(capacity: bytes.count + 64)
        do {
            try reader.transcode(bytes, into: scratch)
        } catch {
            violated(
                "\(what) is not valid JSON (\(error.message)): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        }
    }
}

/// Piece sizes for feeding an input in parts, from the input's own bytes (FNV-1a), so a crash replays the same way.
struct Pieces: IteratorProtocol {
    private var state: UInt64

    init(_ data: UnsafeBufferPointer<UInt8>) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in data.prefix(4096) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        state = hash | 1
    }

    /// 1 byte a third of the time, else up to 4 KiB.
    mutating func next() -> Int? {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state % 3 == 0 ? 1 : Int((state >> 20) % 4096) + 1
    }
}

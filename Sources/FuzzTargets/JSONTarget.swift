import RespDecode

/// The JSON transcoder: what it accepts it writes as valid JSON, and transcoding that again changes nothing.
enum JSONTarget {
    static func run(_ data: UnsafeBufferPointer<UInt8>) {
        for stripNulls in [true, false] {
            let transcoder = JSONTranscoder(options: .init(stripNulls: stripNulls, maxDepth: 512))
            let first = OutputBuffer()
            do {
                try transcoder.transcode(data, into: first)
            } catch {
                if first.count != 0 { violated("a failed transcode left \(first.count) bytes of output") }
                continue
            }
            let second = OutputBuffer()
            do {
                try transcoder.transcode(first.bytes, into: second)
            } catch {
                violated(
                    "output not accepted again (\(error.message)): \(String(decoding: first.bytes.prefix(300), as: UTF8.self))"
                )
            }
            if !second.bytes.elementsEqual(first.bytes) { violated("transcoding the output changed it") }
        }
    }
}

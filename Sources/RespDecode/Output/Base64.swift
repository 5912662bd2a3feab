extension OutputBuffer {
    /// Appends the standard base64 encoding (RFC 4648 §4, padded) of `bytes`.
    public func appendBase64(_ bytes: UnsafeBufferPointer<UInt8>) {
        let n = bytes.count
        let encodedLength = (n + 2) / 3 * 4
        reserve(encodedLength)
        let out = end
        var i = 0
        var o = 0
        base64Alphabet.withUnsafeBufferPointer { alphabet in
            while i + 3 <= n {
                let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                out[o] = alphabet[Int(v >> 18 & 63)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                out[o + 2] = alphabet[Int(v >> 6 & 63)]
                out[o + 3] = alphabet[Int(v & 63)]
                i += 3
                o += 4
            }
            let rest = n - i
            if rest > 0 {
                let v = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
                out[o] = alphabet[Int(v >> 18 & 63)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                out[o + 2] = rest == 2 ? alphabet[Int(v >> 6 & 63)] : UInt8(ascii: "=")
                out[o + 3] = UInt8(ascii: "=")
                o += 4
            }
        }
        commit(o)
    }

    /// Appends the base64 encoding of `bytes`.
    public func appendBase64(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { appendBase64($0) }
    }
}

private let base64Alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

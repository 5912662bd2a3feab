/// A part's `Content-Transfer-Encoding` (RFC 2045 §6), undone before the part is decoded
/// (docs/decoding.md#multipart-transfer-encodings).
enum TransferEncoding {
    /// `7bit`, `8bit`, `binary` (or none): the bytes are the content.
    case identity
    case base64
    case quotedPrintable
    /// Any other token: the bytes are decoded as they are, with a warning.
    case unknown(String)

    init(_ field: String?) {
        guard let field else {
            self = .identity
            return
        }
        let token = String(field.trimmingOWS()).lowercased()
        switch token {
        case "", "7bit", "8bit", "binary": self = .identity
        case "base64": self = .base64
        case "quoted-printable": self = .quotedPrintable
        default: self = .unknown(token)
        }
    }

    var isIdentity: Bool {
        if case .identity = self { return true }
        return false
    }

    /// base64 with white space and line ends anywhere (RFC 2045 §6.8); nil when anything else is in it.
    static func base64(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        BaseDecoding.base64(bytes, ignoringWhitespace: true)
    }

    /// Quoted-printable (RFC 2045 §6.7): `=XY` is the byte XY (either case), `=` before a line end (after optional
    /// white space) is a soft line break; any other `=` is kept as it is, as Python's `quopri` and Go's reader in
    /// its lenient mode do.
    static func quotedPrintable(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let n = bytes.count
        var i = 0
        while i < n {
            let byte = bytes[i]
            guard byte == UInt8(ascii: "=") else {
                out.append(byte)
                i += 1
                continue
            }
            if i + 2 < n, let high = MIMEParameters.hexValue(bytes[i + 1]),
                let low = MIMEParameters.hexValue(bytes[i + 2])
            {
                out.append(high << 4 | low)
                i += 3
                continue
            }
            // A soft line break: `=`, optional spaces and tabs, then CRLF or LF (or the end of the body).
            var j = i + 1
            while j < n && (bytes[j] == 0x20 || bytes[j] == 0x09) { j += 1 }
            if j == n {
                i = j
                continue
            }
            if bytes[j] == UInt8(ascii: "\n") {
                i = j + 1
                continue
            }
            if bytes[j] == UInt8(ascii: "\r") && j + 1 < n && bytes[j + 1] == UInt8(ascii: "\n") {
                i = j + 2
                continue
            }
            out.append(byte)
            i += 1
        }
        return out
    }
}

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

    /// base64 with white space and line ends anywhere (RFC 2045 §6.8); nil when anything else is in it, when `=`
    /// is followed by more characters, or when a lone character is left over. (Framing's base64 reader is in a
    /// stage the decoders may not use, docs/contributing.md; this one is the MIME flavour.)
    static func base64(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count / 4 * 3 + 3)
        var accumulator: UInt32 = 0
        var pending = 0
        var padding = 0
        for byte in bytes {
            let value = Self.base64Values[Int(byte)]
            if value < 64 {
                guard padding == 0 else { return nil }
                accumulator = accumulator << 6 | UInt32(value)
                pending += 1
                if pending == 4 {
                    out.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                    out.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                    out.append(UInt8(truncatingIfNeeded: accumulator))
                    accumulator = 0
                    pending = 0
                }
            } else if byte == UInt8(ascii: "=") {
                padding += 1
            } else if value != whitespace {
                return nil
            }
        }
        switch pending {
        case 0: break
        case 2: out.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case 3:
            out.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            out.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default: return nil
        }
        return out
    }

    private static let whitespace: UInt8 = 0xFE
    /// Each byte's value in the base64 alphabet; 0xFE for white space, 0xFF for anything else.
    private static let base64Values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(i)
        }
        for byte in [0x20, 0x09, 0x0A, 0x0D] { table[byte] = whitespace }
        return table
    }()

    /// Quoted-printable (RFC 2045 §6.7): `=XY` is the byte XY (either case), `=` before a line end (after optional
    /// white space) is a soft line break; any other `=` is kept as it is, as Python's `quopri` and Go's reader in
    /// its lenient mode do. Spaces and tabs at the end of a line (before CRLF, LF or the end of the body) are deleted,
    /// as rule 3 of §6.7 says decoders must (Python's pure-Python `quopri.decode` deletes them too; `binascii`'s
    /// `a2b_qp` keeps them). White space before a soft line break's `=` is not at the line's end: it is kept.
    static func quotedPrintable(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let n = bytes.count
        var i = 0
        while i < n {
            let byte = bytes[i]
            if byte == 0x20 || byte == 0x09 {
                // A run of white space: kept unless a line end (or the end of the body) follows it.
                var j = i + 1
                while j < n && (bytes[j] == 0x20 || bytes[j] == 0x09) { j += 1 }
                let atLineEnd =
                    j == n || bytes[j] == UInt8(ascii: "\n")
                    || (bytes[j] == UInt8(ascii: "\r") && (j + 1 == n || bytes[j + 1] == UInt8(ascii: "\n")))
                if !atLineEnd { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<j])) }
                i = j
                continue
            }
            guard byte == UInt8(ascii: "=") else {
                out.append(byte)
                i += 1
                continue
            }
            if i + 2 < n, let high = bytes[i + 1].hexDigitValue,
                let low = bytes[i + 2].hexDigitValue
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

/// Re-indents compact JSON for `--output pretty`: two spaces per level, `"key": value`, empty containers kept on one
/// line. The input is a line this program wrote, so it is valid JSON; the printer only tracks strings and nesting.
public enum PrettyPrinter {
    /// Appends the indented form of `json` (one JSON value, no trailing line feed) and a line feed.
    public static func append(_ json: UnsafeBufferPointer<UInt8>, to out: OutputBuffer) {
        var depth = 0
        var inString = false
        var i = 0
        let n = json.count
        func newline() {
            out.append(UInt8(ascii: "\n"))
            for _ in 0..<depth { out.append(ascii: "  ") }
        }
        while i < n {
            let c = json[i]
            if inString {
                out.append(c)
                if c == UInt8(ascii: "\\"), i + 1 < n {
                    out.append(json[i + 1])
                    i += 1
                } else if c == UInt8(ascii: "\"") {
                    inString = false
                }
                i += 1
                continue
            }
            switch c {
            case UInt8(ascii: "\""):
                inString = true
                out.append(c)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                out.append(c)
                let close = c == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if i + 1 < n && json[i + 1] == close {
                    out.append(close)
                    i += 1
                } else {
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline()
                out.append(c)
            case UInt8(ascii: ","):
                out.append(c)
                newline()
            case UInt8(ascii: ":"):
                out.append(ascii: ": ")
            default:
                out.append(c)
            }
            i += 1
        }
        out.append(UInt8(ascii: "\n"))
    }
}

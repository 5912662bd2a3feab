import RespDecode

/// The html decoder, with small limits so that the cuts are reached: it never throws, its value is valid JSON, at most
/// `maxHTMLLinks` links are listed whatever the markup, and with text and links off the value has neither.
enum HTMLTarget {
    static let maxTextBytes = 4096
    static let maxHTMLLinks = 50

    static func run(_ data: UnsafeBufferPointer<UInt8>) {
        for (text, links) in [(true, true), (false, false)] {
            var configuration = FuzzLimits.configuration()
            configuration.limits.maxTextBytes = maxTextBytes
            configuration.limits.maxHTMLLinks = maxHTMLLinks
            configuration.limits.maxDepth = 256
            configuration.decoding.options.htmlText = text
            configuration.decoding.options.htmlLinks = links
            let out = OutputBuffer()
            var context = DecodingContext(
                mimeType: "text/html", url: "http://fuzz.example/a/b?c", options: configuration.decoding.options)
            let wrote: Bool
            do {
                wrote = try HTMLBodyDecoder().decode(data, context: &context, into: out)
            } catch {
                violated("the html decoder threw: \(error.message)")
            }
            guard wrote else {
                if out.count != 0 { violated("html said it wrote nothing but wrote \(out.count) bytes") }
                continue
            }
            JSONCheck.requireValid(out.bytes, "html value")
            check(out.bytes, text: text, links: links)
        }
    }

    /// The bounds, read from the value's text (a key cannot be faked inside a JSON string: its quotes are escaped
    /// there).
    private static func check(_ value: UnsafeBufferPointer<UInt8>, text: Bool, links: Bool) {
        if !links && (count("\"links\":[", in: value) > 0 || count("\"linksTotal\":", in: value) > 0) {
            violated("links written with htmlLinks off")
        }
        let listed = count("{\"url\":", in: value)
        if listed > maxHTMLLinks { violated("\(listed) links listed, more than \(maxHTMLLinks)") }
        if !text && !links && count("\"headings\":", in: value) == 0 && count("\"text\":", in: value) > 0 {
            violated("text written with htmlText off")
        }
    }

    /// How many times `needle` occurs in `bytes`.
    private static func count(_ needle: String, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let pattern = Array(needle.utf8)
        guard bytes.count >= pattern.count else { return 0 }
        var found = 0
        for start in 0...(bytes.count - pattern.count)
        where bytes[start] == pattern[0] && bytes[start..<start + pattern.count].elementsEqual(pattern) {
            found += 1
        }
        return found
    }
}

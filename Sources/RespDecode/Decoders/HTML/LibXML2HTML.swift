// The one file of the html decoder that talks to libxml2: its HTML parser in SAX mode (no tree is built) and its
// RFC 3986 reference resolution (`xmlBuildURI`). Nothing of libxml2's is visible outside it: the decoder sees an
// ``HTMLExtractor`` receiving start tags, end tags and text.
//
// Why SAX: the value is a handful of fields and the visible text, which the events give directly; a tree costs half
// the time of the parse (on the readability pages libxml2's tree parse ran at 95 MB/s, its SAX parse at 189 MB/s).
//
// Settings (docs/decoding.md#html):
// - the input is the UTF-8 text `TextDecoding` made of the body; libxml2 is told it is UTF-8 and to ignore the
//   document's own encoding declarations (`HTML_PARSE_IGNORE_ENC`), which `TextDecoding` has already weighed;
// - `HTML_PARSE_NONET`, and no error output: errors reach only our structured handler (which counts the end tags
//   that make libxml2 search its element stack), the varargs handlers are silenced in CShims;
// - libxml2 implies `<html>`, `<head>`, `<body>` (harmless to the text: they are not rendered) but with
//   `HTML_PARSE_NOIMPLIED` it would open an implied `<p>` for text after a closed top-level element, which would
//   break a line the page does not break; so implied elements stay on.
//
// Bounds libxml2 2.9.14 lacks in SAX mode (docs/reliability.md#html), each measured:
// - nesting: libxml2's own depth cap applies to tree building only (100,000 nested `<div>` parse to depth 100,002
//   in SAX mode), and every end tag that matches no open element makes it search the whole element stack (100,000
//   open `<div>` and 100,000 stray `</x>` took 12.7 s). The parse stops past `maxDepth` open elements, and once the
//   stack searches of stray end tags add up to ``maxStraySearch`` entries;
// - attributes: libxml2 compares each attribute of a start tag with all before it (100,000 attributes: 7.8 s). A
//   pre-scan finds the first start tag with more than ``maxAttributesPerElement``, or the tag where the comparisons
//   of all tags so far pass ``maxAttributePairs`` (1,500 tags of 10,000 attributes fit in 64 MiB), and the parse
//   ends before it.
// In each case the value holds what came before, its `truncated` names `document`, and a warning says why.
internal import CLibXML2
internal import CShims
import Glibc

/// One HTML parse. The extractor receives the events; this enum owns libxml2.
enum LibXML2HTML {
    /// Most attributes one start tag may have (see the top of this file): 10,000 attributes cost libxml2 at most
    /// 5·10⁷ name comparisons.
    static let maxAttributesPerElement = 10_000

    /// Most attribute comparisons (n·(n-1)/2 for a tag of n attributes) the start tags of one document may cost
    /// libxml2 together (2²⁶: about 0.1 s).
    static let maxAttributePairs = 1 << 26

    /// Most element-stack entries the searches for stray end tags may look at in one document (2²⁶: about 0.1 s).
    static let maxStraySearch = 1 << 26

    /// Parses `text` (UTF-8) and sends its events to `extractor`.
    /// - Returns: why the document was not read to its end (a bound of this file or `maxDepth`), or nil.
    static func parse(_ text: UnsafeBufferPointer<UInt8>, into extractor: HTMLExtractor, maxDepth: Int) -> String? {
        _ = processSetup
        respdecode_xml_silence_this_thread()
        var text = text
        var cut: String?
        if let found = HTMLAttributeScan.firstTag(
            exceeding: maxAttributesPerElement, pairBudget: maxAttributePairs, in: text)
        {
            text = UnsafeBufferPointer(rebasing: text[..<found.offset])
            cut =
                found.overBudget
                ? "the start tags' attributes would cost libxml2 more than \(maxAttributePairs) comparisons: "
                    + "the document was read up to the tag that passes it"
                : "a start tag has more than \(maxAttributesPerElement) attributes: the document was read up to it"
        }
        // libxml2 takes an Int32 length; a larger body is read up to 2 GiB (the body limits are far below).
        if text.count > Int(Int32.max) {
            text = UnsafeBufferPointer(rebasing: text[..<Int(Int32.max)])
            cut = "the document is larger than 2 GiB: the rest was not read"
        }
        guard let base = text.baseAddress, !text.isEmpty else { return cut }
        guard
            let ctxt = base.withMemoryRebound(
                to: CChar.self, capacity: text.count, { htmlCreateMemoryParserCtxt($0, Int32(text.count)) })
        else { return "libxml2 could not allocate a parser" }
        defer {
            if let doc = ctxt.pointee.myDoc { xmlFreeDoc(doc) }
            ctxt.pointee.myDoc = nil
            htmlFreeParserCtxt(ctxt)
        }
        let session = HTMLSession(extractor: extractor, context: ctxt, maxDepth: maxDepth)
        let retained = Unmanaged.passRetained(session)
        defer { retained.release() }
        ctxt.pointee.sax.pointee = saxHandler
        ctxt.pointee._private = retained.toOpaque()
        // UTF-8, no conversion (this also skips a byte order mark); then the options, IGNORE_ENC among them, so that
        // a `<meta charset>` does not switch the decoding.
        _ = xmlSwitchEncoding(ctxt, XML_CHAR_ENCODING_UTF8)
        _ = htmlCtxtUseOptions(ctxt, Int32(parseOptions))
        _ = htmlParseDocument(ctxt)
        return session.stopReason ?? cut
    }

    private static let parseOptions =
        HTML_PARSE_NONET.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
        | HTML_PARSE_IGNORE_ENC.rawValue

    /// Our callbacks for elements and text; script and style content (which libxml2 hands to `cdataBlock`) goes to
    /// the extractor, which keeps only JSON-LD; comments are dropped.
    nonisolated(unsafe) private static let saxHandler: htmlSAXHandler = {
        var sax = htmlSAXHandler()
        sax.startElement = startElementCallback
        sax.endElement = endElementCallback
        sax.characters = charactersCallback
        // In HTML, libxml2 calls white space in `<html>` and `<head>` "ignorable"; it still separates words.
        sax.ignorableWhitespace = charactersCallback
        sax.cdataBlock = rawTextCallback
        sax.serror = structuredErrorCallback
        sax.initialized = XML_SAX2_MAGIC
        withUnsafeMutablePointer(to: &sax) { respdecode_html_quiet_handler(UnsafeMutableRawPointer($0)) }
        return sax
    }()

    /// Resolves `reference` (already cleaned and escaped) against the absolute URL `base` with libxml2's RFC 3986
    /// resolution; nil when libxml2 cannot parse one of them.
    static func resolve(_ reference: [UInt8], against base: [UInt8]) -> [UInt8]? {
        withCString(reference) { reference in
            withCString(base) { base in
                guard let built = xmlBuildURI(reference, base) else { return nil }
                defer { respdecode_xml_free(built) }
                return Array(
                    UnsafeBufferPointer(
                        start: built, count: strlen(UnsafeRawPointer(built).assumingMemoryBound(to: CChar.self))))
            }
        }
    }

    /// Resolves the NUL-terminated `reference` against `base` as ``resolve(_:against:)`` does and calls `body` with
    /// the result (nil when libxml2 cannot parse one of them), valid during the call only.
    static func withResolved<R>(
        _ reference: UnsafePointer<UInt8>, against base: [UInt8], _ body: (UnsafeBufferPointer<UInt8>?) -> R
    ) -> R {
        withCString(base) { base in
            guard let built = xmlBuildURI(reference, base) else { return body(nil) }
            defer { respdecode_xml_free(built) }
            return body(
                UnsafeBufferPointer(
                    start: built, count: strlen(UnsafeRawPointer(built).assumingMemoryBound(to: CChar.self))))
        }
    }

    /// Calls `body` with `bytes` and a NUL after them, in a temporary buffer (on the stack when small).
    private static func withCString<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count + 1) { buffer in
            let base = buffer.baseAddress!
            bytes.withUnsafeBufferPointer { source in
                if let start = source.baseAddress { base.initialize(from: start, count: source.count) }
            }
            base[bytes.count] = 0
            return body(UnsafePointer(base))
        }
    }
}

private let processSetup: Void = { xmlInitParser() }()

/// What one parse needs in the callbacks, reached through the parser context's `_private`.
private final class HTMLSession {
    let extractor: Unmanaged<HTMLExtractor>
    let context: htmlParserCtxtPtr
    let maxDepth: Int
    @exclusivity(unchecked) var depth = 0
    @exclusivity(unchecked) var straySearch = 0
    @exclusivity(unchecked) var active = true
    var stopReason: String?

    init(extractor: HTMLExtractor, context: htmlParserCtxtPtr, maxDepth: Int) {
        self.extractor = Unmanaged.passUnretained(extractor)
        self.context = context
        self.maxDepth = maxDepth
    }

    func stop(_ reason: String) {
        if stopReason == nil { stopReason = reason }
        active = false
        xmlStopParser(context)
    }
}

@inline(__always)
private func withActiveSession(_ ctx: UnsafeMutableRawPointer?, _ body: (HTMLSession) -> Void) {
    guard let ctxt = ctx?.assumingMemoryBound(to: htmlParserCtxt.self), let me = ctxt.pointee._private else { return }
    Unmanaged<HTMLSession>.fromOpaque(me)._withUnsafeGuaranteedRef { session in
        if session.active { body(session) }
    }
}

private func startElementCallback(
    _ ctx: UnsafeMutableRawPointer?, _ name: UnsafePointer<xmlChar>?,
    _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
) {
    guard let name else { return }
    withActiveSession(ctx) { session in
        guard session.depth < session.maxDepth else {
            session.stop(
                "HTML elements nested deeper than \(session.maxDepth) (maxDepth): the rest of the document was not read"
            )
            return
        }
        session.depth += 1
        session.extractor._withUnsafeGuaranteedRef { $0.start(name, HTMLAttributes(pairs: attributes)) }
    }
}

private func endElementCallback(_ ctx: UnsafeMutableRawPointer?, _ name: UnsafePointer<xmlChar>?) {
    withActiveSession(ctx) { session in
        guard session.depth > 0 else { return }
        session.depth -= 1
        session.extractor._withUnsafeGuaranteedRef { $0.end() }
    }
}

private func charactersCallback(_ ctx: UnsafeMutableRawPointer?, _ text: UnsafePointer<xmlChar>?, _ length: Int32) {
    guard let text, length > 0 else { return }
    withActiveSession(ctx) { session in
        session.extractor._withUnsafeGuaranteedRef {
            $0.characters(UnsafeBufferPointer(start: text, count: Int(length)))
        }
    }
}

private func rawTextCallback(_ ctx: UnsafeMutableRawPointer?, _ text: UnsafePointer<xmlChar>?, _ length: Int32) {
    guard let text, length > 0 else { return }
    withActiveSession(ctx) { session in
        session.extractor._withUnsafeGuaranteedRef { $0.rawText(UnsafeBufferPointer(start: text, count: Int(length))) }
    }
}

/// Errors are not reported (libxml2 recovers from every one); an end tag that matches no open element made libxml2
/// search the whole element stack, which is counted.
private func structuredErrorCallback(_ ctx: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<xmlError>?) {
    guard let error, error.pointee.code == Int32(XML_ERR_TAG_NAME_MISMATCH.rawValue) else { return }
    withActiveSession(ctx) { session in
        session.straySearch += session.depth + 1
        if session.straySearch > LibXML2HTML.maxStraySearch {
            session.stop(
                "end tags matching no open element made libxml2 search its element stack more than "
                    + "\(LibXML2HTML.maxStraySearch) times: the rest of the document was not read")
        }
    }
}

/// A start tag's attributes as libxml2 gives them: NUL-terminated names (lowercase) and values (entity references
/// replaced; nil for an attribute without a value), valid during the callback only.
struct HTMLAttributes: Sequence, IteratorProtocol {
    fileprivate var pairs: UnsafeMutablePointer<UnsafePointer<UInt8>?>?

    /// The next attribute's name and value.
    @inline(__always)
    mutating func next() -> (name: UnsafePointer<UInt8>, value: UnsafePointer<UInt8>?)? {
        guard let p = pairs, let name = p[0] else { return nil }
        pairs = p + 2
        return (name, p[1])
    }
}

/// Finds the first start tag with more attributes than a limit, or where the attribute comparisons of all tags so far
/// pass a budget, before libxml2 sees the text (libxml2 compares a tag's attributes pairwise). A small lexer that may
/// count more attributes than libxml2 parses, never fewer: text is skipped with `memchr`, comments are skipped, and in
/// a start tag (`<` and a letter) every name counts, quoted values are skipped to their closing quote, unquoted ones
/// to white space or `>`. It does not know script or style content, so what looks like a tag there counts too; and
/// an unclosed quote or comment ends only that tag or comment (libxml2 would read to the end of input, but a quote in
/// a script must not blind the scan to the tags after it).
enum HTMLAttributeScan {
    /// The offset of the `<` of the first start tag with more than `limit` attributes (`overBudget` false), or of the
    /// one whose comparisons take the document's past `pairBudget` (`overBudget` true); nil when there is none.
    static func firstTag(
        exceeding limit: Int, pairBudget: Int, in text: UnsafeBufferPointer<UInt8>
    ) -> (offset: Int, overBudget: Bool)? {
        // Each attribute takes at least two bytes (`a ` ): a text of fewer than 2·limit bytes has no tag over the
        // limit, and one of fewer than 2·√(2·budget) bytes cannot pass the budget.
        var root = 1
        while root * root <= 2 * pairBudget { root += 1 }
        guard text.count > 2 * min(limit, root), let base = text.baseAddress else { return nil }
        // The byte loops test a class table (one load per byte) rather than five comparisons: this scan reads every
        // tag of the page before libxml2 does (docs/html-parser.md#cost).
        return classes.withUnsafeBufferPointer { table in
            firstTag(
                exceeding: limit, pairBudget: pairBudget, in: base, count: text.count, classes: table.baseAddress!)
        }
    }

    /// Classes of bytes for the scan: HTML's white space, `>`, `/`, `=`.
    private static let space: UInt8 = 1
    private static let greater: UInt8 = 2
    private static let slash: UInt8 = 4
    private static let equals: UInt8 = 8

    private static let classes: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        for byte in [0x20, 0x0A, 0x09, 0x0D, 0x0C] { table[byte] = space }
        table[0x3E] = greater
        table[0x2F] = slash
        table[0x3D] = equals
        return table
    }()

    private static func firstTag(
        exceeding limit: Int, pairBudget: Int, in base: UnsafePointer<UInt8>, count n: Int,
        classes: UnsafePointer<UInt8>
    ) -> (offset: Int, overBudget: Bool)? {
        var pairs = 0
        var i = 0
        while i < n {
            guard let found = memchr(base + i, 0x3C, n - i) else { return nil }
            let lt = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            var k = lt + 1
            guard k < n else { return nil }
            let first = base[k]
            if first == 0x21 { // <!
                if k + 2 < n && base[k + 1] == 0x2D && base[k + 2] == 0x2D {
                    guard let close = find(Array("-->".utf8), in: base, from: k + 3, to: n) else {
                        i = k + 3
                        continue
                    }
                    i = close + 3
                } else {
                    i = k
                }
                continue
            }
            guard (first | 0x20) >= 0x61 && (first | 0x20) <= 0x7A else {
                i = k
                continue
            }
            // The tag name: up to white space, `>` or `/`.
            while k < n && classes[Int(base[k])] & (space | greater | slash) == 0 { k += 1 }
            var count = 0
            while k < n {
                while k < n && classes[Int(base[k])] & (space | slash) != 0 { k += 1 }
                guard k < n, base[k] != 0x3E else { break }
                // A name: at least one byte, up to white space, `=`, `>` or `/`.
                k += 1
                while k < n && classes[Int(base[k])] == 0 { k += 1 }
                // The new name is compared with the `count` before it.
                pairs += count
                count += 1
                if count > limit { return (lt, false) }
                if pairs > pairBudget { return (lt, true) }
                while k < n && classes[Int(base[k])] == space { k += 1 }
                guard k < n, base[k] == 0x3D else { continue }
                k += 1
                while k < n && classes[Int(base[k])] == space { k += 1 }
                guard k < n else { break }
                let quote = base[k]
                if quote == 0x22 || quote == 0x27 {
                    guard let close = memchr(base + k + 1, Int32(quote), n - k - 1) else {
                        k += 1
                        break
                    }
                    k = UnsafeRawPointer(close).assumingMemoryBound(to: UInt8.self) - base + 1
                } else {
                    // An unquoted value: up to white space or `>`.
                    while k < n && classes[Int(base[k])] & (space | greater) == 0 { k += 1 }
                }
            }
            i = k
        }
        return nil
    }

    /// The offset of `needle` in `base[from..<to]`, or nil.
    private static func find(_ needle: [UInt8], in base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int? {
        guard to - from >= needle.count else { return nil }
        var i = from
        while i <= to - needle.count {
            guard let hit = memchr(base + i, Int32(needle[0]), to - needle.count + 1 - i) else { return nil }
            i = UnsafeRawPointer(hit).assumingMemoryBound(to: UInt8.self) - base
            if memcmp(base + i, needle, needle.count) == 0 { return i }
            i += 1
        }
        return nil
    }
}

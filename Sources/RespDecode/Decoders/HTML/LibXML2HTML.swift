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

    /// Parses `text` (valid UTF-8, as `TextDecoding` makes it) and sends its events to `extractor`.
    /// `droppingUnreadAttributes` false (for tests) gives libxml2 every attribute, comment and white-space byte.
    /// - Returns: why the document was not read to its end (a bound of this file or `maxDepth`), or nil.
    static func parse(
        _ text: UnsafeBufferPointer<UInt8>, into extractor: HTMLExtractor, maxDepth: Int,
        droppingUnreadAttributes: Bool = true
    ) -> String? {
        _ = processSetup
        respdecode_xml_silence_this_thread()
        let scan = HTMLAttributeScan.scan(
            text, attributeLimit: maxAttributesPerElement, pairBudget: maxAttributePairs,
            droppingUnreadAttributes: droppingUnreadAttributes)
        var text = text
        var cut: String?
        if let found = scan.cut {
            text = UnsafeBufferPointer(rebasing: text[..<found.offset])
            cut =
                found.overBudget
                ? "the start tags' attributes would cost libxml2 more than \(maxAttributePairs) comparisons: "
                    + "the document was read up to the tag that passes it"
                : "a start tag has more than \(maxAttributesPerElement) attributes: the document was read up to it"
        }
        // Script and style content is dropped before libxml2 reads it (docs/decoding.md#visible-text): the ranges
        // all lie before the cut, and libxml2 gets the text without them.
        guard !scan.dropped.isEmpty else {
            return parse(text, cut: cut, into: extractor, maxDepth: maxDepth, values: nil)
        }
        // Read attribute values and text are given aside: libxml2 copies a value one character at a time (127
        // instructions a byte, a fifth of the html decoder's time on the readability pages), and text not much
        // faster; it gets a token in their place, which the callbacks replace by the copy (docs/html-parser.md#cost).
        let compacted = HTMLAttributeScan.compact(text, dropping: scan.dropped, aside: scan.aside)
        return compacted.text.withUnsafeBufferPointer { text in
            compacted.values.withUnsafeBufferPointer { values in
                compacted.offsets.withUnsafeBufferPointer { offsets in
                    // Without values given aside, no value is a token (a page with a 0x01 byte gets none).
                    guard !compacted.offsets.isEmpty, let bytes = values.baseAddress, let offsets = offsets.baseAddress
                    else {
                        return parse(text, cut: cut, into: extractor, maxDepth: maxDepth, values: nil)
                    }
                    return parse(
                        text, cut: cut, into: extractor, maxDepth: maxDepth,
                        values: (bytes, offsets, compacted.offsets.count))
                }
            }
        }
    }

    /// `values`: the copies of the values given aside and their offsets (``HTMLAttributeScan/Compacted``), nil when
    /// there are none.
    private static func parse(
        _ text: UnsafeBufferPointer<UInt8>, cut: String?, into extractor: HTMLExtractor, maxDepth: Int,
        values: (bytes: UnsafePointer<UInt8>, offsets: UnsafePointer<Int>, count: Int)?
    ) -> String? {
        var text = text
        var cut = cut
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
        let session = HTMLSession(extractor: extractor, context: ctxt, maxDepth: maxDepth, values: values)
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
    /// The copies of the values given aside and their offsets, or nil.
    let values: (bytes: UnsafePointer<UInt8>, offsets: UnsafePointer<Int>, count: Int)?
    @exclusivity(unchecked) var depth = 0
    @exclusivity(unchecked) var straySearch = 0
    @exclusivity(unchecked) var active = true
    var stopReason: String?
    /// A start tag's attributes with its tokens resolved (NULL-terminated pairs), reused from tag to tag.
    private var resolved: UnsafeMutablePointer<UnsafePointer<UInt8>?>
    private var resolvedCapacity = 16

    init(
        extractor: HTMLExtractor, context: htmlParserCtxtPtr, maxDepth: Int,
        values: (bytes: UnsafePointer<UInt8>, offsets: UnsafePointer<Int>, count: Int)?
    ) {
        self.extractor = Unmanaged.passUnretained(extractor)
        self.context = context
        self.maxDepth = maxDepth
        self.values = values
        resolved = .allocate(capacity: resolvedCapacity)
    }

    deinit { resolved.deallocate() }

    /// `pairs` as the extractor is to see them: each token replaced by the value it stands for. The pairs libxml2
    /// gave are libxml2's to free after the callback, so a token's pair is replaced in a copy.
    @inline(__always)
    func attributes(_ pairs: UnsafeMutablePointer<UnsafePointer<UInt8>?>?) -> HTMLAttributes {
        guard let values, let pairs else { return HTMLAttributes(pairs: pairs) }
        var count = 0
        var tokens = false
        while pairs[count] != nil {
            if let value = pairs[count + 1], value[0] == HTMLAttributeScan.tokenMark { tokens = true }
            count += 2
        }
        guard tokens else { return HTMLAttributes(pairs: pairs) }
        if count + 1 > resolvedCapacity {
            resolved.deallocate()
            resolvedCapacity = count + 1
            resolved = .allocate(capacity: resolvedCapacity)
        }
        for j in stride(from: 0, to: count, by: 2) {
            resolved[j] = pairs[j]
            resolved[j + 1] = pairs[j + 1].map {
                HTMLAttributeScan.resolved(
                    $0, values: values.bytes, offsets: values.offsets, count: values.count)
            }
        }
        resolved[count] = nil
        return HTMLAttributes(pairs: resolved)
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
        let attributes = session.attributes(attributes)
        session.extractor._withUnsafeGuaranteedRef { $0.start(name, attributes) }
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
        var piece = UnsafeBufferPointer(start: text, count: Int(length))
        if length >= 4 && text[0] == 0xEE && text[1] == 0x80 && text[2] == 0x80, let values = session.values {
            // Text given aside: the token is the whole piece (libxml2 ends a NUL after it).
            if let copy = HTMLAttributeScan.copy(
                ofToken: text + 3, values: values.bytes, offsets: values.offsets, count: values.count)
            {
                piece = UnsafeBufferPointer(
                    start: copy, count: Glibc.strlen(UnsafeRawPointer(copy).assumingMemoryBound(to: CChar.self)))
            }
        }
        session.extractor._withUnsafeGuaranteedRef { $0.characters(piece) }
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

/// The pre-pass over the page before libxml2 reads it (docs/decoding.md#bounds, docs/decoding.md#visible-text):
/// it finds the first start tag with more attributes than a limit, or where the attribute comparisons of all tags so
/// far pass a budget (libxml2 compares a tag's attributes pairwise), and the content of `<script>` and `<style>`
/// elements to drop.
///
/// A small lexer that may count more attributes than libxml2 parses, never fewer: text is skipped with `memchr`,
/// comments are skipped, and in a start tag (`<` and a letter) every name counts, quoted values are skipped to their
/// closing quote, unquoted ones to white space or `>`. An unclosed quote or comment ends only that tag or comment
/// (libxml2 would read to the end of input, but a quote in a script must not blind the scan to the tags after it).
///
/// Script and style content: libxml2 2.9.14 reads it one character at a time (15 % of the html decoder's time,
/// docs/html-parser.md#cost) and, without `HTML_PARSE_RECOVER`, ends it at the first `</` and a letter, so that
/// script text leaked into the visible text. After a `<script>` or `<style>` start tag (any case; not one ending in
/// `/>`, which libxml2 closes at once, and not one whose quote is unclosed), the content up to HTML's end tag
/// (`</script` or `</style`, any case, then white space, `/` or `>`), or to the end of input, is dropped, so that
/// libxml2 sees the start tag and the end tag only. A script that may be JSON-LD, which the headline reads (its start
/// tag holds `ld+json` or a `&`, or mentions `json` past a place where the two may read tags differently:
/// ``mayBeJSONLD(_:count:readAlike:)``), is kept whole and scanned as text; a `<script>` or `<style>` in its text is
/// text to libxml2, and drops nothing.
///
/// Attributes the extractor never reads (``HTMLExtractor/readAttributes``: `class`, `id`, `data-*`, `srcset` …, two
/// in three of a page's attributes) and the text of comments are dropped too: libxml2 reads every attribute value
/// and comment one character at a time and allocates it (docs/html-parser.md#cost). Dropping must not change what
/// libxml2 makes of the rest, so it is done only where this lexer and libxml2 2.9.14 read the page alike:
/// - the attribute follows libxml2's white space (space, tab, LF, CR), its name has only the bytes libxml2 reads as
///   one (`htmlParseHTMLName`: an ASCII letter, `_`, `:` or `.` first, then those, digits and `-`; at most 99), and
///   the dropped bytes (its name, `=` and value; the white space before stays) hold no NUL, `<` or `>`, so every
///   construct libxml2 ends at a `>` (end tags, processing instructions, doctypes) ends where it did;
/// - nothing before it on the page could be read differently: the dropping stops for the rest of the page at a form
///   feed between attributes or ending an unquoted value (white space to this lexer, not to libxml2), a name libxml2
///   would not read, a `/` not before `>`, an unclosed quote or comment, an end tag, processing instruction or `<!`
///   with a `<` before its `>`, a NUL anywhere, or a tag or comment that begins in a kept JSON-LD script and ends
///   past libxml2's end of it (the first `</` and a letter); tags inside such a script drop nothing;
/// - a comment's text (between `<!--` and the first `-->` or `--!>` after it, as both read a comment) goes under the
///   same conditions; libxml2 gets `<!---->`, an empty comment where it stood;
/// - a doctype with a quoted literal that holds a `<` or does not close also stops the dropping (libxml2 reads its
///   literals to the matching quote, past `>`), and the content of a script or style whose start tag ends in a
///   `/` that belongs to an unquoted value (libxml2 opens it) drops nothing, like a kept JSON-LD script.
/// - runs of white space (libxml2's: space, tab, LF, CR) in text go the same way, each but its first byte: libxml2
///   reads text one character at a time too, and a page's indentation is a sixth of its bytes (on the readability
///   pages), which every consumer of text collapses anyway. Text here is what lies between the `>` of a start tag,
///   an end tag or an instruction (read alike, as above), or the end of a comment, and the next `<`: never a
///   doctype, script or style content, a kept JSON-LD script or anything after an element whose text is kept as
///   written (`pre`, `listing`, `plaintext`, `xmp`: the collapsing stops there for the rest of the page), and not
///   text with a run of ``maxCollapsedRun`` or more, nor text with a character libxml2 does not pass on (a control
///   other than its white space, U+FFFE, U+FFFF), around which white space adds up in libxml2's pieces of text;
/// - a kept script or style whose text libxml2 ends at an end tag not its own (`</b>` in JSON-LD) stops the dropping
///   too: libxml2 reads on as script text after it when no open element has that name, so its text is taken to run
///   to HTML's end tag, and a `<script>` or `<style>` in it is text.
/// - a read attribute's value goes aside (``Result/aside``) under the same conditions when it is quoted, at least
///   ``minAside`` bytes, printable ASCII without `<` and `>`, and every `&` in it begins `&amp;` (libxml2 2.9.14
///   copies such a value as it is, `&amp;` as `&`), on a page that may get tokens (``tokensAllowed(_:count:)``):
///   libxml2 reads a token in its place, and the start tag callback gives the extractor the value's copy. (libxml2
///   reads a `<meta>`'s values for a charset too, but with `HTML_PARSE_IGNORE_ENC` uses none.)
/// - a run of text that would have its white space collapsed goes aside whole instead when it is at least
///   ``minAside`` and less than ``maxCollapsedRun`` bytes (one piece of libxml2's), comes after the page's first
///   start tag (before it, libxml2 skips white space after comments and instructions), and libxml2 passes it on as
///   it is (``isPlainText(_:count:)``): its token reaches the `characters` callback as a piece of its own, which gives
///   the extractor the text's copy, white space as written. (Text after `</` or `<?` starts a piece of its own only
///   when a name follows them; without one libxml2 reads those bytes as text too, so the scan starts no text there.)
///   Text tokens need valid UTF-8, which `TextDecoding` makes: at an invalid byte libxml2 would read the rest of the
///   page as ISO-8859-1, and a token's mark with it.
/// libxml2 then gives the extractor the same events with the same read attributes and the same text but for the
/// length of white-space runs outside those elements; the HTML tests check that the extractor's value is the same on
/// the corpora pages and on generated pages full of the cases above.
enum HTMLAttributeScan {
    /// What the scan found: the tag to end the document before (nil when none), and the byte ranges to drop, as
    /// pairs of start and end offsets in `text`, ascending, each non-empty and all before the cut.
    struct Result {
        var cut: (offset: Int, overBudget: Bool)?
        var dropped: [Int] = []
        /// The read attribute values and runs of text given aside, ascending, each range also a pair of `dropped`.
        /// ``compact(_:dropping:aside:)`` puts a token where each stood.
        var aside: [Aside] = []
    }

    /// A range of the page given aside.
    struct Aside {
        var start: Int
        var end: Int
        /// A run of text (which libxml2 hands to `characters`), not an attribute value.
        var isText: Bool
    }

    /// What libxml2 is given: the text without the dropped ranges, a token in place of each range given aside (its
    /// mark, ``tokenMark`` for a value or ``textTokenMark`` for text, and its index among them in ``tokenDigits``), and
    /// the ranges' copies, each ended by a NUL and holding what libxml2 would have made of it (`&` for `&amp;` in a
    /// value), at `offsets[index]` in `values`.
    struct Compacted {
        var text: [UInt8]
        var values: [UInt8]
        var offsets: [Int]
    }

    /// The byte that starts a value's token. Only a token's value starts with it: no page with a 0x01 byte gets
    /// tokens, and libxml2 2.9.14 makes a character reference to a control other than its white space a NUL
    /// (`htmlParseCharRef` returns 0 for what is not an XML character), so none yields it.
    static let tokenMark: UInt8 = 0x01

    /// The bytes that start a text's token: U+E000, the first private-use character (libxml2 drops a 0x01 in text,
    /// not in values). Only a token's piece of text starts with it: no page holding it gets tokens, nor a page with a
    /// character reference to it (``tokensAllowed(_:count:)``), and no HTML 4 entity, the only ones libxml2 knows,
    /// names a private-use character.
    static let textTokenMark: [UInt8] = [0xEE, 0x80, 0x80]

    /// Whether the page may get tokens: it holds neither ``tokenMark`` nor ``textTokenMark``, nor a character
    /// reference that libxml2 2.9.14 reads as U+E000 (`&#` and decimal digits, or `&#x` or `&#X` and hexadecimal
    /// ones, the value saturating as in `htmlParseCharRef`).
    static func tokensAllowed(_ base: UnsafePointer<UInt8>, count n: Int) -> Bool {
        guard memchr(base, Int32(tokenMark), n) == nil else { return false }
        var i = 0
        while i < n, let found = memchr(base + i, 0xEE, n - i) {
            let at = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            if at + 2 < n && base[at + 1] == 0x80 && base[at + 2] == 0x80 { return false }
            i = at + 1
        }
        i = 0
        while i < n, let found = memchr(base + i, 0x26, n - i) {
            var k = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base + 1
            i = k
            guard k < n, base[k] == 0x23 else { continue }
            k += 1
            let hex = k < n && base[k] | 0x20 == 0x78
            if hex { k += 1 }
            var value = 0
            while k < n {
                let byte = base[k]
                let digit: Int
                if byte >= 0x30 && byte <= 0x39 {
                    digit = Int(byte - 0x30)
                } else if hex && byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66 {
                    digit = Int(byte | 0x20) - 0x61 + 10
                } else {
                    break
                }
                if value < 0x11_0000 { value = value * (hex ? 16 : 10) + digit }
                k += 1
            }
            if value == 0xE000 { return false }
        }
        return true
    }

    /// A token's digits, most significant first: libxml2 reads each of a token's bytes as it reads a value's (127
    /// instructions a byte), so the index is written in base 64 (a page's first 4,096 values take two digits).
    static let tokenDigits: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    /// The shortest value or text given aside (shorter ones cost libxml2 little).
    static let minAside = 8

    /// The offset of the `<` of the first start tag with more than `limit` attributes (`overBudget` false), or of the
    /// one whose comparisons take the document's past `pairBudget` (`overBudget` true); nil when there is none.
    static func firstTag(
        exceeding limit: Int, pairBudget: Int, in text: UnsafeBufferPointer<UInt8>
    ) -> (offset: Int, overBudget: Bool)? {
        scan(text, attributeLimit: limit, pairBudget: pairBudget).cut
    }

    /// The scan of `text`: see the type's description.
    static func scan(
        _ text: UnsafeBufferPointer<UInt8>, attributeLimit limit: Int, pairBudget: Int,
        droppingUnreadAttributes: Bool = true
    ) -> Result {
        guard let base = text.baseAddress, !text.isEmpty else { return Result() }
        // The byte loops test a class table (one load per byte) rather than five comparisons: this scan reads every
        // tag of the page before libxml2 does (docs/html-parser.md#cost).
        return classes.withUnsafeBufferPointer { table in
            xmlClasses.withUnsafeBufferPointer { xml in
                readNames.withUnsafeBufferPointer { read in
                    scan(
                        base, count: text.count, limit: limit, pairBudget: pairBudget, classes: table.baseAddress!,
                        xml: xml.baseAddress!, read: read, dropping: droppingUnreadAttributes)
                }
            }
        }
    }

    /// `text` without the `dropped` ranges of a ``Result``, with a token for each range of its `aside`.
    static func compact(_ text: UnsafeBufferPointer<UInt8>, dropping dropped: [Int], aside: [Aside] = []) -> Compacted {
        var removed = 0
        for pair in stride(from: 0, to: dropped.count, by: 2) { removed += dropped[pair + 1] - dropped[pair] }
        var valueBytes = 0
        var tokenBytes = 0
        for (index, range) in aside.enumerated() {
            tokenBytes += (range.isText ? textTokenMark.count : 1) + tokenLength(index)
            valueBytes += range.end - range.start + 1
        }
        var values = [UInt8](repeating: 0, count: valueBytes)
        var offsets = [Int]()
        offsets.reserveCapacity(aside.count)
        let compacted = values.withUnsafeMutableBufferPointer { values in
            [UInt8](unsafeUninitializedCapacity: text.count - removed + tokenBytes) { buffer, initialized in
                guard let source = text.baseAddress, let target = buffer.baseAddress else { return }
                var from = 0
                var to = 0
                var next = 0 // the next of `aside`
                var offset = 0 // where its copy goes in `values`
                for pair in stride(from: 0, to: dropped.count + 2, by: 2) {
                    let end = pair < dropped.count ? dropped[pair] : text.count
                    (target + to).initialize(from: source + from, count: end - from)
                    to += end - from
                    guard pair < dropped.count else { break }
                    from = dropped[pair + 1]
                    guard next < aside.count, aside[next].start == end else { continue }
                    if aside[next].isText {
                        for byte in textTokenMark {
                            target[to] = byte
                            to += 1
                        }
                    } else {
                        target[to] = tokenMark
                        to += 1
                    }
                    to += writeToken(next, to: target + to)
                    let count = from - end
                    copyDecodingAmpersands(source + end, count: count, to: values.baseAddress! + offset)
                    offsets.append(offset)
                    offset += count + 1 // the NUL is there already (after a shorter copy, more of them)
                    next += 1
                }
                initialized = to
            }
        }
        return Compacted(text: compacted, values: values, offsets: offsets)
    }

    /// Copies a value given aside as libxml2 would have given it: each `&amp;` (its only `&`s) as `&`.
    private static func copyDecodingAmpersands(
        _ source: UnsafePointer<UInt8>, count: Int, to target: UnsafeMutablePointer<UInt8>
    ) {
        var from = 0
        var to = 0
        while let found = memchr(source + from, 0x26, count - from) {
            let amp = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - source
            (target + to).update(from: source + from, count: amp + 1 - from)
            to += amp + 1 - from
            from = amp + 5
        }
        (target + to).update(from: source + from, count: count - from)
    }

    /// The number of ``tokenDigits`` of `index` (≥ 0).
    private static func tokenLength(_ index: Int) -> Int {
        var digits = 1
        var rest = index >> 6
        while rest > 0 {
            digits += 1
            rest >>= 6
        }
        return digits
    }

    /// Writes `index` (≥ 0) in ``tokenDigits`` at `target`; returns the number of digits.
    private static func writeToken(_ index: Int, to target: UnsafeMutablePointer<UInt8>) -> Int {
        let digits = tokenLength(index)
        var rest = index
        for j in stride(from: digits - 1, through: 0, by: -1) {
            target[j] = tokenDigits.utf8Start[rest & 63]
            rest >>= 6
        }
        return digits
    }

    /// The value a token stands for: `value` when it is no token, else its copy (in a ``Compacted``'s `values`, at
    /// its `offsets`, of which there are `count`).
    @inline(__always)
    static func resolved(
        _ value: UnsafePointer<UInt8>, values: UnsafePointer<UInt8>, offsets: UnsafePointer<Int>, count: Int
    ) -> UnsafePointer<UInt8> {
        guard value[0] == tokenMark else { return value }
        return copy(ofToken: value + 1, values: values, offsets: offsets, count: count) ?? value
    }

    /// The copy a token stands for, from the token's digits (NUL-terminated, as libxml2 gives them); nil when they
    /// are no index of the `count` copies (which only a page libxml2 read otherwise than the pre-scan could give: the
    /// text or value then stays as libxml2 gave it).
    static func copy(
        ofToken digits: UnsafePointer<UInt8>, values: UnsafePointer<UInt8>, offsets: UnsafePointer<Int>, count: Int
    ) -> UnsafePointer<UInt8>? {
        var index = 0
        var j = 0
        while digits[j] != 0 {
            let byte = digits[j]
            let digit: UInt8
            switch byte {
            case 0x41...0x5A: digit = byte &- 0x41 // A-Z
            case 0x61...0x7A: digit = byte &- 0x61 &+ 26 // a-z
            case 0x30...0x39: digit = byte &- 0x30 &+ 52 // 0-9
            case 0x2D: digit = 62 // -
            case 0x5F: digit = 63 // _
            default: return nil
            }
            index = index << 6 | Int(digit)
            guard index < count else { return nil }
            j += 1
        }
        return j > 0 ? values + offsets[index] : nil
    }

    /// Classes of bytes for the scan: HTML's white space, `>`, `/`, `=`.
    private static let space: UInt8 = 1
    private static let greater: UInt8 = 2
    private static let slash: UInt8 = 4
    private static let equals: UInt8 = 8

    /// Classes of bytes as libxml2 2.9.14's HTML parser reads a start tag (`htmlParseHTMLName`, `SKIP_BLANKS`), for
    /// the attributes to drop: a name's first byte (ASCII letter, `_`, `:`, `.`), a name's byte (those, digits, `-`),
    /// libxml2's white space (no form feed), and the bytes a dropped range never holds (NUL, `<`, `>`).
    private static let xmlNameStart: UInt8 = 1
    private static let xmlName: UInt8 = 2
    private static let xmlBlank: UInt8 = 4
    private static let xmlUnsafe: UInt8 = 8

    /// The longest name libxml2 reads whole (`HTML_PARSER_BUFFER_SIZE` is 100).
    private static let maxXMLName = 99

    /// The shortest run of white space left whole in text: libxml2 2.9.14 hands text on in pieces of 1,000 bytes
    /// (`HTML_PARSER_BIG_BUFFER_SIZE`), and a piece of white space only, with more to come, makes it imply a `<p>`
    /// where no element is open or `<html>` or `<head>` is; collapsing runs shorter than a piece never makes or
    /// unmakes such a piece.
    static let maxCollapsedRun = 1000

    private static let xmlClasses: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(byte)] = xmlNameStart | xmlName }
        for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(byte)] = xmlNameStart | xmlName }
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(byte)] = xmlName }
        for byte in [UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: ".")] {
            table[Int(byte)] = xmlNameStart | xmlName
        }
        table[Int(UInt8(ascii: "-"))] = xmlName
        for byte in [0x20, 0x0A, 0x09, 0x0D] { table[byte] = xmlBlank }
        for byte in [0x00, 0x3C, 0x3E] { table[byte] = xmlUnsafe }
        return table
    }()

    private static let classes: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        for byte in [0x20, 0x0A, 0x09, 0x0D, 0x0C] { table[byte] = space }
        table[0x3E] = greater
        table[0x2F] = slash
        table[0x3D] = equals
        return table
    }()

    private static func scan(
        _ base: UnsafePointer<UInt8>, count n: Int, limit: Int, pairBudget: Int, classes: UnsafePointer<UInt8>,
        xml: UnsafePointer<UInt8>, read: UnsafeBufferPointer<PackedName>, dropping: Bool
    ) -> Result {
        var result = Result()
        var pairs = 0
        var i = 0
        // Attributes are dropped only while libxml2 is known to read the page as this lexer does: anything it may
        // read otherwise ends the dropping for the rest of the page (see the type's description).
        var dropping = dropping
        // Tags and comments starting before this offset lie in a kept script, which libxml2 reads as text.
        var keepUntil = 0
        var checkedNUL = false
        // Whether values may be given aside: nil until the first is, then whether the page has no token mark.
        var markFree: Bool?
        // The state lives in this function's own variables, passed `inout` to the helpers below, not captured by
        // nested functions: captured variables are boxed, and each access to them was checked for exclusivity at
        // run time (1 % of the crawl job's instructions; docs/html-parser.md#cost).
        // Where text that both read as text begins (after a start tag, end tag, instruction or comment), or -1.
        var textFrom = -1
        // White space in text is collapsed until an element whose text is kept as written starts.
        var collapsing = true
        // Whether a start tag has come: before one, libxml2 skips white space after comments and instructions
        // (`htmlParseDocument`), so text there goes aside not, as its piece may lack its first bytes.
        var afterStartTag = false
        while i < n {
            guard let found = memchr(base + i, 0x3C, n - i) else {
                collapseBlanks(
                    base, count: n, from: textFrom, to: n, collapsing: collapsing, keepUntil: keepUntil,
                    afterStartTag: afterStartTag, xml: xml,
                    result: &result, dropping: &dropping, checkedNUL: &checkedNUL, markFree: &markFree)
                return result
            }
            let lt = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            collapseBlanks(
                base, count: n, from: textFrom, to: lt, collapsing: collapsing, keepUntil: keepUntil,
                afterStartTag: afterStartTag, xml: xml,
                result: &result, dropping: &dropping, checkedNUL: &checkedNUL, markFree: &markFree)
            textFrom = -1
            var k = lt + 1
            guard k < n else { return result }
            let first = base[k]
            if first == 0x21 { // <!
                if k + 2 < n && base[k + 1] == 0x2D && base[k + 2] == 0x2D {
                    guard let (close, closeLength) = commentEnd(base, from: k + 3, to: n) else {
                        dropping = false // libxml2 reads the rest as the comment
                        i = k + 3
                        continue
                    }
                    if lt < keepUntil && close + closeLength > keepUntil { dropping = false }
                    // The comment's text, which libxml2 copies one character at a time and no field reads: libxml2
                    // gets `<!---->`, an empty comment where it stood.
                    if dropping && lt >= keepUntil && close > k + 3
                        && noNUL(base, n, checked: &checkedNUL, dropping: &dropping)
                    {
                        result.dropped.append(k + 3)
                        result.dropped.append(close)
                    }
                    i = close + closeLength
                    textFrom = i
                } else {
                    // A doctype's quoted literals run past `>` for libxml2.
                    if dropping && closeBeforeNextTag(base, from: k, to: n, literals: true) == nil { dropping = false }
                    i = k
                }
                continue
            }
            guard (first | 0x20) >= 0x61 && (first | 0x20) <= 0x7A else {
                // An end tag or a processing instruction: libxml2 reads it to the first `>`, this lexer as text. What
                // follows that `>` is text to libxml2, a piece of its own when libxml2 reads the construct as one: a
                // name must follow `</` (`htmlParseHTMLName`) or `<?` (`htmlParseName`), else libxml2 reads the bytes
                // after `</` or `<?` as text, in the same piece as what follows the `>`.
                if dropping && (first == 0x2F || first == 0x3F) {
                    if let close = closeBeforeNextTag(base, from: k, to: n, literals: false) {
                        let next = k + 1 < n ? base[k + 1] : 0
                        let named =
                            (next | 0x20) >= 0x61 && (next | 0x20) <= 0x7A || next == 0x5F || next == 0x3A
                            || (first == 0x2F && next == 0x2E)
                        if named { textFrom = close + 1 }
                    } else {
                        dropping = false
                    }
                }
                i = k
                continue
            }
            afterStartTag = true
            // The tag name: up to white space, `>` or `/`.
            var nameBits = xmlName
            while k < n && classes[Int(base[k])] & (space | greater | slash) == 0 {
                nameBits &= xml[Int(base[k])]
                k += 1
            }
            let nameEnd = k
            if nameBits == 0 || nameEnd - lt - 1 > maxXMLName { dropping = false }
            var count = 0
            // The tag ends in `/>` outside a value (which libxml2 closes at once; a `/` ending an unquoted value does not).
            var selfClosed = false
            while k < n {
                // libxml2 skips only its own blanks here, and reads a `/` that is not before `>` as a bogus attribute.
                while k < n && classes[Int(base[k])] & (space | slash) != 0 {
                    if base[k] == 0x2F && k + 1 < n && base[k + 1] == 0x3E {
                        selfClosed = true
                    } else if dropping && xml[Int(base[k])] & xmlBlank == 0 {
                        dropping = false
                    }
                    k += 1
                }
                guard k < n, base[k] != 0x3E else { break }
                // A name: at least one byte, up to white space, `=`, `>` or `/`.
                let attributeStart = k
                var bits = xml[Int(base[k])] & xmlNameStart != 0 ? xmlName : 0
                k += 1
                while k < n && classes[Int(base[k])] == 0 {
                    bits &= xml[Int(base[k])]
                    k += 1
                }
                let attributeNameEnd = k
                if bits == 0 || attributeNameEnd - attributeStart > maxXMLName { dropping = false }
                // The new name is compared with the `count` before it.
                pairs += count
                count += 1
                if count > limit || pairs > pairBudget {
                    // The text ends before this tag: what was to be dropped in it goes too.
                    while let last = result.dropped.last, last > lt { result.dropped.removeLast(2) }
                    while let last = result.aside.last, last.end > lt { result.aside.removeLast() }
                    result.cut = (lt, count <= limit)
                    return result
                }
                skipSpace(base, &k, n, classes: classes, xml: xml, dropping: &dropping)
                var attributeEnd = attributeNameEnd
                // A quoted value's bytes, between the quotes (empty when there is none).
                var valueStart = 0
                var valueEnd = 0
                if k < n && base[k] == 0x3D {
                    k += 1
                    skipSpace(base, &k, n, classes: classes, xml: xml, dropping: &dropping)
                    guard k < n else { break }
                    let quote = base[k]
                    if quote == 0x22 || quote == 0x27 {
                        guard let close = memchr(base + k + 1, Int32(quote), n - k - 1) else {
                            dropping = false // libxml2 reads the rest of the page as the value
                            k += 1
                            break
                        }
                        valueStart = k + 1
                        k = UnsafeRawPointer(close).assumingMemoryBound(to: UInt8.self) - base + 1
                        valueEnd = k - 1
                    } else {
                        // An unquoted value: up to white space or `>` (for libxml2, its blanks or `>`).
                        while k < n && classes[Int(base[k])] & (space | greater) == 0 { k += 1 }
                        if dropping && (k == n || (base[k] != 0x3E && xml[Int(base[k])] & xmlBlank == 0)) {
                            dropping = false
                        }
                    }
                    attributeEnd = k
                }
                guard dropping && lt >= keepUntil && xml[Int(base[attributeStart - 1])] & xmlBlank != 0 else {
                    continue
                }
                if !isRead(
                    base + attributeStart, count: attributeNameEnd - attributeStart, available: n - attributeStart,
                    names: read)
                {
                    if !containsUnsafe(base, from: attributeNameEnd, to: attributeEnd, xml: xml)
                        && noNUL(base, n, checked: &checkedNUL, dropping: &dropping)
                    {
                        result.dropped.append(attributeStart)
                        result.dropped.append(attributeEnd)
                    }
                } else if valueEnd - valueStart >= minAside && isPlainValue(base, from: valueStart, to: valueEnd)
                    && noNUL(base, n, checked: &checkedNUL, dropping: &dropping)
                {
                    giveAside(
                        Aside(start: valueStart, end: valueEnd, isText: false), base, count: n, result: &result,
                        markFree: &markFree)
                }
            }
            i = k
            if lt < keepUntil && k > keepUntil { dropping = false }
            if k < n && base[k] == 0x3E {
                textFrom = k + 1
                if collapsing && isPreformatted(base + lt + 1, count: nameEnd - lt - 1) { collapsing = false }
            }
            // A script or style start tag closed by `>` (not `/>`): its content is dropped up to the end tag. Not one
            // in a kept script's text, which is script text to libxml2 (a JSON-LD article quoting `<script>`).
            guard k < n, base[k] == 0x3E, lt >= keepUntil,
                let name = rawTextName(base + lt + 1, count: nameEnd - lt - 1)
            else {
                continue
            }
            guard base[k - 1] != 0x2F else {
                // Its content is kept, as it always was; where the `/` ends an unquoted value, libxml2 opens the
                // element and reads that content as text, so nothing in it is dropped either.
                if !selfClosed {
                    keepUntil = keptTextEnd(name, base, from: k + 1, to: n, classes: classes, xml: xml, &dropping)
                }
                continue
            }
            guard name.count == 5 || !mayBeJSONLD(base + nameEnd, count: k - nameEnd, readAlike: dropping) else {
                // Kept whole: libxml2 reads it as text up to the first `</` and a letter; nothing in it is dropped.
                keepUntil = keptTextEnd(name, base, from: k + 1, to: n, classes: classes, xml: xml, &dropping)
                continue
            }
            let end = endTag(name, in: base, from: k + 1, to: n, classes: classes)
            if end > k + 1 {
                result.dropped.append(k + 1)
                result.dropped.append(end)
            }
            textFrom = -1
            i = end
        }
        collapseBlanks(
            base, count: n, from: textFrom, to: n, collapsing: collapsing, keepUntil: keepUntil,
            afterStartTag: afterStartTag, xml: xml,
            result: &result, dropping: &dropping, checkedNUL: &checkedNUL, markFree: &markFree)
        return result
    }

    /// Whether the dropping goes on; the first time, whether `base` has no NUL. Nothing is dropped from a page with a
    /// NUL, which libxml2 reads as an end in some places and not in others.
    @inline(__always)
    private static func noNUL(_ base: UnsafePointer<UInt8>, _ n: Int, checked: inout Bool, dropping: inout Bool) -> Bool
    {
        if !checked {
            checked = true
            dropping = memchr(base, 0, n) == nil
        }
        return dropping
    }

    /// Each run of libxml2's white space in the text from `textFrom` to `end` becomes its first byte (see the type's
    /// description), unless one run is as long as a buffer of libxml2's text; only while `collapsing`, and not in a
    /// kept script (before `keepUntil`).
    private static func collapseBlanks(
        _ base: UnsafePointer<UInt8>, count n: Int, from textFrom: Int, to end: Int, collapsing: Bool, keepUntil: Int,
        afterStartTag: Bool, xml: UnsafePointer<UInt8>, result: inout Result, dropping: inout Bool,
        checkedNUL: inout Bool, markFree: inout Bool?
    ) {
        guard dropping && collapsing && textFrom >= keepUntil && end - textFrom >= 2 else { return }
        // Text libxml2 passes on as it is, in one piece (shorter than its pieces of 1,000 bytes), goes aside whole.
        let length = end - textFrom
        if afterStartTag && length >= minAside && length < maxCollapsedRun
            && isPlainText(base + textFrom, count: length)
            && noNUL(base, n, checked: &checkedNUL, dropping: &dropping)
            && giveAside(
                Aside(start: textFrom, end: end, isText: true), base, count: n, result: &result, markFree: &markFree)
        {
            return
        }
        let mark = result.dropped.count
        var j = textFrom
        while true {
            let found = j + blankPairOrOther(base + j, count: end - j)
            guard found < end else { return }
            if xml[Int(base[found])] & xmlBlank == 0 {
                // A control or an 0xEF byte. libxml2 passes on no control but its white space, nor U+FFFE or
                // U+FFFF (EF BF BE, EF BF BF): white space around them adds up in its pieces of text as if they
                // were not there, so such text is left whole.
                let skipped =
                    base[found] != 0xEF
                    || (found + 2 < end && base[found + 1] == 0xBF && base[found + 2] & 0xFE == 0xBE)
                guard skipped else {
                    j = found + 1
                    continue
                }
                result.dropped.removeSubrange(mark...)
                return
            }
            var runEnd = found + 2
            while runEnd < end && xml[Int(base[runEnd])] & xmlBlank != 0 { runEnd += 1 }
            guard runEnd - found < maxCollapsedRun else {
                result.dropped.removeSubrange(mark...)
                return
            }
            guard noNUL(base, n, checked: &checkedNUL, dropping: &dropping) else { return }
            result.dropped.append(found + 1)
            result.dropped.append(runEnd)
            j = runEnd
        }
    }

    /// Gives `range` aside (drops it and records it in `aside`) when the page may get tokens (``tokensAllowed``,
    /// tested the first time, kept in `markFree`); whether it did.
    @discardableResult
    private static func giveAside(
        _ range: Aside, _ base: UnsafePointer<UInt8>, count n: Int, result: inout Result, markFree: inout Bool?
    ) -> Bool {
        if markFree == nil { markFree = tokensAllowed(base, count: n) }
        guard markFree == true else { return false }
        result.dropped.append(range.start)
        result.dropped.append(range.end)
        result.aside.append(range)
        return true
    }

    /// Whether libxml2 2.9.14 passes the text on as it is, in one piece: no `&`, no control but tab and line feed,
    /// no U+FFFE or U+FFFF, valid UTF-8, not white space only (C, SSE2: `respdecode_html_plain_text`).
    @inline(__always)
    static func isPlainText(_ bytes: UnsafePointer<UInt8>, count: Int) -> Bool {
        respdecode_html_plain_text(bytes, count) != 0
    }

    /// Skips white space at `k`; a form feed, white space to this lexer but not to libxml2, ends the dropping.
    @inline(__always)
    private static func skipSpace(
        _ base: UnsafePointer<UInt8>, _ k: inout Int, _ n: Int, classes: UnsafePointer<UInt8>,
        xml: UnsafePointer<UInt8>,
        dropping: inout Bool
    ) {
        while k < n && classes[Int(base[k])] == space {
            if xml[Int(base[k])] & xmlBlank == 0 { dropping = false }
            k += 1
        }
    }

    /// The offset of the first `>` from `from` on when it comes before any `<`, else nil (libxml2 ends end tags and
    /// processing instructions at the first `>`, this lexer reads them as text); with `literals`, a quoted string does
    /// not end it (a doctype's literals, which libxml2 reads to the matching quote), and must close, with no `<` in
    /// it either.
    private static func closeBeforeNextTag(_ base: UnsafePointer<UInt8>, from: Int, to n: Int, literals: Bool)
        -> Int?
    {
        var k = from
        var quote: UInt8 = 0
        while k < n {
            let byte = base[k]
            if byte == 0x3C { return nil }
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == 0x3E {
                return k
            } else if literals && (byte == 0x22 || byte == 0x27) {
                quote = byte
            }
            k += 1
        }
        return nil
    }

    /// The first end of a comment from `from` on, and its length: `-->`, or `--!>`, which libxml2 2.9.14 also takes
    /// (with an error); nil when there is none.
    private static func commentEnd(_ base: UnsafePointer<UInt8>, from: Int, to n: Int) -> (Int, Int)? {
        var i = from
        while i + 2 < n {
            guard let hit = memchr(base + i, 0x2D, n - 2 - i) else { return nil }
            i = UnsafeRawPointer(hit).assumingMemoryBound(to: UInt8.self) - base
            if base[i + 1] == 0x2D {
                if base[i + 2] == 0x3E { return (i, 3) }
                if i + 3 < n && base[i + 2] == 0x21 && base[i + 3] == 0x3E { return (i, 4) }
            }
            i += 1
        }
        return nil
    }

    /// Where libxml2 2.9.14 ends script text (without `HTML_PARSE_RECOVER`): the first `</` and an ASCII letter, or
    /// the end of input.
    private static func scriptTextEnd(_ base: UnsafePointer<UInt8>, from: Int, to n: Int) -> Int {
        var i = from
        while i < n {
            guard let found = memchr(base + i, 0x3C, n - i) else { return n }
            let lt = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            if lt + 2 < n && base[lt + 1] == 0x2F && (base[lt + 2] | 0x20) >= 0x61 && (base[lt + 2] | 0x20) <= 0x7A {
                return lt
            }
            i = lt + 1
        }
        return n
    }

    /// The offset of the first byte of libxml2's white space that another follows, or of the first other byte below
    /// 0x20 or 0xEF byte, in the `count` bytes at `bytes`; `count` when there is none. 32 bytes at a time (C, AVX2).
    @inline(__always)
    static func blankPairOrOther(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int {
        respdecode_html_blank_pair(bytes, count)
    }

    /// Where the text of a kept script or style (content from `from`) ends for libxml2: at the first `</` and a letter
    /// when that end tag closes it. When it does not, libxml2 reads on as script text after it (when no open element
    /// has that name), so the dropping stops for the rest of the page and the text is taken to run to HTML's end tag:
    /// a `<script>` or `<style>` quoted in it past that end tag is text too (a JSON-LD article with `</p>` and
    /// `<script>` in its body).
    private static func keptTextEnd(
        _ name: [UInt8], _ base: UnsafePointer<UInt8>, from: Int, to n: Int, classes: UnsafePointer<UInt8>,
        xml: UnsafePointer<UInt8>, _ dropping: inout Bool
    ) -> Int {
        let end = scriptTextEnd(base, from: from, to: n)
        guard !closes(name, at: end, in: base, count: n, xml: xml) else { return end }
        dropping = false
        return max(end, endTag(name, in: base, from: from, to: n, classes: classes))
    }

    /// Whether the end tag at `lt` (where libxml2 ends the text of a kept script or style) is `</` and `name` in any
    /// case as libxml2 reads a name, so that the element ends there. Any other end tag leaves it open to libxml2 when
    /// no open element has that name, and libxml2 goes on reading script text after it: for this lexer, text and
    /// tags, which must then drop nothing.
    private static func closes(
        _ name: [UInt8], at lt: Int, in base: UnsafePointer<UInt8>, count n: Int, xml: UnsafePointer<UInt8>
    ) -> Bool {
        let end = lt + 2 + name.count
        guard end <= n else { return false }
        for j in 0..<name.count where base[lt + 2 + j] | 0x20 != name[j] { return false }
        return end == n || xml[Int(base[end])] & xmlName == 0
    }

    /// Whether `base[from..<to]` is printable ASCII without `<` and `>`, whose every `&` begins `&amp;`: libxml2
    /// 2.9.14 copies such a quoted value byte for byte but for each `&amp;`, which it makes `&`
    /// (`htmlParseHTMLAttribute`), so the extractor may read it from the page instead.
    @inline(__always)
    private static func isPlainValue(_ base: UnsafePointer<UInt8>, from: Int, to: Int) -> Bool {
        var k = from
        while true {
            k += respdecode_html_value_stop(base + k, to - k)
            guard k < to else { return true }
            guard
                base[k] == 0x26 && to - k >= 5 && base[k + 1] == 0x61 && base[k + 2] == 0x6D
                    && base[k + 3] == 0x70 && base[k + 4] == 0x3B
            else { return false }
            k += 5
        }
    }

    /// Whether `base[from..<to]` holds NUL, `<` or `>`, which a dropped range never does.
    @inline(__always)
    private static func containsUnsafe(_ base: UnsafePointer<UInt8>, from: Int, to: Int, xml: UnsafePointer<UInt8>)
        -> Bool
    {
        var bits: UInt8 = 0
        var k = from
        while k < to {
            bits |= xml[Int(base[k])]
            k += 1
        }
        return bits & xmlUnsafe != 0
    }

    // MARK: attributes the extractor reads

    /// An attribute name, lowercase, as its length and up to 16 bytes little-endian.
    struct PackedName {
        var count: Int
        var low: UInt64
        var high: UInt64
    }

    /// The names of ``HTMLExtractor/readAttributes``.
    private static let readNames: [PackedName] = HTMLExtractor.readAttributes.map {
        pack($0.utf8Start, count: $0.utf8CodeUnitCount)
    }

    /// `count` (at most 16) bytes at `name`, lowercase (the bytes are libxml2 name bytes: ASCII letters, digits,
    /// `:`, `-`, `_`, `.`; `| 0x20` lowercases the letters and leaves the others, but `_`, no read name's, unequal).
    private static func pack(_ name: UnsafePointer<UInt8>, count: Int) -> PackedName {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for j in 0..<min(count, 8) { low |= UInt64(name[j] | 0x20) << (8 * j) }
        if count > 8 { for j in 8..<min(count, 16) { high |= UInt64(name[j] | 0x20) << (8 * (j - 8)) } }
        return PackedName(count: count, low: low, high: high)
    }

    /// Whether the extractor reads the attribute called `name` (`count` libxml2 name bytes, any case), which lies in
    /// a buffer with `available` bytes from `name` on. One 64-bit load and compare per read name where the buffer
    /// allows (this runs for most attributes of a page).
    @inline(__always)
    private static func isRead(
        _ name: UnsafePointer<UInt8>, count: Int, available: Int, names: UnsafeBufferPointer<PackedName>
    ) -> Bool {
        guard count <= 16 else { return false }
        let packed: PackedName
        if available >= 16 {
            let raw = UnsafeRawPointer(name)
            let lowMask: UInt64 = count >= 8 ? ~0 : (1 << (8 * UInt64(count))) - 1
            let highMask: UInt64 = count <= 8 ? 0 : count == 16 ? ~0 : (1 << (8 * UInt64(count - 8))) - 1
            let spaces: UInt64 = 0x2020_2020_2020_2020
            packed = PackedName(
                count: count, low: (UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)) | spaces) & lowMask,
                high: (UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) | spaces) & highMask)
        } else {
            packed = pack(name, count: count)
        }
        for candidate in names
        where candidate.low == packed.low && candidate.count == packed.count && candidate.high == packed.high {
            return true
        }
        return false
    }

    /// The elements whose text the extractor keeps as written (``HTMLTag/pre``: `pre`, `listing`, `plaintext`,
    /// `xmp`), lowercase.
    private static let preformatted: [[UInt8]] = HTMLTag.table.filter { $0.value.flags & HTMLTag.pre != 0 }.keys
        .sorted().map { Array($0.utf8) }

    /// Whether the `count` bytes at `name` name an element of ``preformatted`` in any case.
    private static func isPreformatted(_ name: UnsafePointer<UInt8>, count: Int) -> Bool {
        candidates: for candidate in preformatted where candidate.count == count {
            for j in 0..<count where name[j] | 0x20 != candidate[j] { continue candidates }
            return true
        }
        return false
    }

    private static let script = Array("script".utf8)
    private static let style = Array("style".utf8)

    /// `script` or `style` (lowercase) when the `count` bytes at `name` are one of them in any case, else nil.
    @inline(__always)
    private static func rawTextName(_ name: UnsafePointer<UInt8>, count: Int) -> [UInt8]? {
        guard count == 5 || count == 6, name[0] | 0x20 == 0x73 else { return nil } // s
        let candidate = count == 6 ? script : style
        for j in 1..<count where name[j] | 0x20 != candidate[j] { return nil }
        return candidate
    }

    /// Whether the script whose start tag has the `count` bytes at `bytes` after its name may be the JSON-LD the
    /// extractor reads: one whose `type`, as libxml2 gives it, is exactly `application/ld+json`. libxml2 gives an
    /// attribute value as written but for its character and entity references, so a tag without a `&` must hold
    /// `ld+json` itself (any case here, though the extractor compares exactly); any tag with a `&` may. That holds
    /// only where this lexer and libxml2 read the tags alike (`readAlike`, the dropping's condition): past a place
    /// where they may not (a bogus attribute name, a form feed), libxml2 may take a `type` from bytes this lexer
    /// reads as another tag's, and any tag that mentions `json` (any case) is kept, as all were before. Other data
    /// islands (`application/json`, the largest scripts of many pages) are dropped like any script.
    private static func mayBeJSONLD(_ bytes: UnsafePointer<UInt8>, count: Int, readAlike: Bool) -> Bool {
        if memchr(bytes, 0x26, count) != nil { return true }
        if holds("ld+json", bytes, count: count) { return true }
        return !readAlike && holds("json", bytes, count: count)
    }

    /// Whether `pattern` (lowercase ASCII) occurs in the `count` bytes at `bytes`, ASCII letters in any case.
    private static func holds(_ pattern: StaticString, _ bytes: UnsafePointer<UInt8>, count: Int) -> Bool {
        let length = pattern.utf8CodeUnitCount
        guard count >= length else { return false }
        let lowercase = pattern.utf8Start
        for j in 0...(count - length) {
            var k = 0
            while k < length {
                let byte = bytes[j + k]
                guard (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == lowercase[k] else { break }
                k += 1
            }
            if k == length { return true }
        }
        return false
    }

    /// The offset of HTML's end tag of raw-text element `name` (lowercase) in `base[from..<to]`: `</`, the name in
    /// any case, then white space, `/` or `>`; `to` when there is none.
    private static func endTag(
        _ name: [UInt8], in base: UnsafePointer<UInt8>, from: Int, to n: Int, classes: UnsafePointer<UInt8>
    ) -> Int {
        let length = name.count
        var i = from
        while i < n {
            guard let found = memchr(base + i, 0x3C, n - i) else { return n }
            let lt = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            i = lt + 1
            guard lt + 2 + length < n, base[lt + 1] == 0x2F else { continue }
            var matches = true
            for j in 0..<length where base[lt + 2 + j] | 0x20 != name[j] {
                matches = false
                break
            }
            if matches && classes[Int(base[lt + 2 + length])] & (space | slash | greater) != 0 { return lt }
        }
        return n
    }
}

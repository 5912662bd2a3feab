// The one file that talks to libxml2. Nothing of libxml2's (types, options, globals) is visible outside it: the XML and
// XML-plist decoders see a SAX-style event sink (`XMLEventSink`) and an error value (`XMLParseFailure`).
//
// Why SAX2 and not a tree: the decoders write JSON as events arrive, so no tree is built, walked and freed per record
// (measured in BENCHMARKS.md; a DOM build alone costs about what `xmllint --noout` spends).
//
// Safety settings (docs/reliability.md#xml, for libxml2 2.9.14 and later):
// - `XML_PARSE_NOENT`: entities are substituted by the parser, so libxml2's amplification checks run (without it,
//   2.9.x accepts the quadratic blowup and leaves the expansion to the caller);
// - a process-wide external entity loader that refuses everything (`XML_PARSE_NONET` does not stop `file://`), so
//   no external entity, parameter entity or DTD is ever read, whatever the options;
// - `XML_PARSE_NONET` all the same, no `DTDLOAD`/`DTDATTR`/`DTDVALID`/`XINCLUDE`, and never `XML_PARSE_HUGE` (which
//   switches the billion-laughs check off in 2.9.x);
// - errors are captured per parse (never printed): the generic error handler is silenced on every parsing thread,
//   since encoding errors bypass the parser context in 2.9.x.
internal import CLibXML2
internal import CShims
import Glibc

/// Receives one document's events; the decoders subclass it. Each method returns `false` to stop the parse (the sink
/// keeps its own reason).
///
/// A base class rather than a protocol: the callbacks reach a class instance without retaining it
/// (`Unmanaged._withUnsafeGuaranteedRef`), which an existential does not allow; a retain and release per event was a
/// fifth of the time on small XML plists.
class XMLEventSink {
    func startElement(_ element: XMLElementStart) -> Bool { true }
    func endElement() -> Bool { true }
    /// Character data: text, CDATA content and substituted entities, in document order, in pieces of any size.
    func characters(_ text: UnsafeBufferPointer<UInt8>) -> Bool { true }
}

/// An element's start tag as libxml2 reports it. Every byte sequence is UTF-8 and valid only during the callback.
struct XMLElementStart {
    fileprivate let localNamePointer: UnsafePointer<UInt8>
    fileprivate let prefixPointer: UnsafePointer<UInt8>?
    fileprivate let namespacePointer: UnsafePointer<UInt8>?
    /// Pairs (prefix or nil, URI) of the namespace declarations on this element.
    fileprivate let namespaces: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
    /// Quintuples (local name, prefix, URI, value start, value end) of the attributes.
    fileprivate let attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?

    /// Number of namespace declarations (`xmlns`, `xmlns:p`) on the element.
    let namespaceCount: Int
    /// Number of attributes, namespace declarations not counted.
    let attributeCount: Int

    var localName: UnsafeBufferPointer<UInt8> { cString(localNamePointer) }
    /// The local name as libxml2 gives it, NUL-terminated.
    var localNameCString: UnsafePointer<UInt8> { localNamePointer }
    var prefix: UnsafeBufferPointer<UInt8>? { prefixPointer.map(cString) }
    /// The element's namespace URI, if it is in one.
    var namespaceURI: UnsafeBufferPointer<UInt8>? { namespacePointer.map(cString) }

    /// The `i`th namespace declaration: its prefix (nil for the default namespace) and URI.
    func namespaceDeclaration(at i: Int) -> (prefix: UnsafeBufferPointer<UInt8>?, uri: UnsafeBufferPointer<UInt8>) {
        let pair = namespaces! + 2 * i
        return (pair[0].map(cString), pair[1].map(cString) ?? UnsafeBufferPointer(start: nil, count: 0))
    }

    /// The `i`th attribute: its prefix, local name and (normalized, entity-substituted) value.
    func attribute(at i: Int) -> (
        prefix: UnsafeBufferPointer<UInt8>?, localName: UnsafeBufferPointer<UInt8>,
        value: UnsafeBufferPointer<UInt8>
    ) {
        let fields = attributes! + 5 * i
        let start = fields[3]!
        let value = UnsafeBufferPointer(start: start, count: fields[4]! - start)
        return (fields[1].map(cString), cString(fields[0]!), value)
    }
}

extension XMLElementStart {
    /// A start tag without prefix, namespace or attributes, from `localName` (NUL-terminated): what the XML plist
    /// scanner sends (``XMLPlistScanner``; the plist reader reads no attribute).
    init(localName: UnsafePointer<UInt8>) {
        self.init(
            localNamePointer: localName, prefixPointer: nil, namespacePointer: nil, namespaces: nil, attributes: nil,
            namespaceCount: 0, attributeCount: 0)
    }
}

/// Why libxml2 rejected a document: its message and where it stopped.
struct XMLParseFailure: Error {
    /// libxml2's message, without the trailing line feed.
    var message: String
    /// 1-based line and column, 0 when libxml2 did not say.
    var line: Int
    var column: Int
    /// Bytes of the body consumed when the error was found.
    var offset: Int
}

/// One libxml2 SAX2 parse with respdecode's safety settings.
enum LibXML2 {
    /// How a parse ended.
    enum Outcome {
        /// The document is well-formed and every event was delivered.
        case parsed
        /// The sink returned `false`.
        case stoppedBySink
        /// libxml2 found the document not well-formed (or hit one of its own limits).
        case failed(XMLParseFailure)
        /// A bound of this file was passed: entity expansion (``maxEntityExpansion(forBodyBytes:)``) or attributes
        /// per start tag (``maxAttributesPerElement``).
        case limitExceeded(String)

        /// The record error of a parse that did not succeed, or nil after `.parsed`: `sinkError` when the sink
        /// stopped it, `limitExceeded` for this file's bounds, and `code` (with `prefix` before libxml2's message
        /// and its location) when libxml2 rejected the document.
        func error(code: RecordError.Code, prefix: String = "", sinkError: RecordError?) -> RecordError? {
            switch self {
            case .parsed:
                return nil
            case .stoppedBySink:
                return sinkError ?? RecordError(code, "parse stopped")
            case .limitExceeded(let message):
                return RecordError(.limitExceeded, message)
            case .failed(let failure):
                return RecordError(
                    code, prefix + failure.message,
                    location: .init(offset: failure.offset, line: failure.line, column: failure.column))
            }
        }
    }

    /// Most attributes (namespace declarations included) one start tag may have. libxml2 2.9.14 checks a start tag
    /// for duplicate attributes pairwise before any callback runs: 100,000 attributes take 1.9 s, 300,000 take 17 s
    /// (xmllint: 158 s). A pre-scan of the body enforces this bound before libxml2 sees it.
    static let maxAttributesPerElement = 10_000

    /// Most bytes of content that entity references may produce in one document: 1 MiB plus 10 times the body, at
    /// most 61 MiB (a larger body may still use entities, just not for more than that).
    ///
    /// libxml2 2.9.x's own amplification check works only when it builds a tree; in SAX mode it let the quadratic
    /// blowup (`defusedxml/quadratic.xml`, 103 KB) expand to 100 MB. Libxml2 ≥ 2.12 uses a factor of 5 over the
    /// input; 10 leaves room for documents that use entities as abbreviations.
    static func maxEntityExpansion(forBodyBytes bytes: Int) -> Int {
        min(bytes, 6 << 20) * 10 + (1 << 20)
    }

    /// Parses `body` as one XML document, sending its events to `sink`.
    /// - Parameters:
    ///   - body: the document's bytes.
    ///   - encoding: an encoding to use instead of the document's own declaration (a `charset` parameter, RFC 7303
    ///     §3); ignored when the body starts with a byte order mark. An encoding libxml2 does not know gives a
    ///     warning and is ignored.
    ///   - sink: receives the document's events.
    ///   - warnings: libxml2's warnings and recoverable errors (namespace errors, refused external entities, …).
    /// - Returns: how parsing ended: parsed, stopped by the sink, not well-formed, or past a bound of this file.
    static func parse(
        _ body: UnsafeBufferPointer<UInt8>, encoding: String?, sink: XMLEventSink, warnings: inout [String]
    ) -> Outcome {
        // libxml2 2.9.14 cannot read UTF-32 ("Document is empty", "switching encoding: encoder error"; xmllint fails
        // the same way), though the XML spec allows it and XML plists come in it (dd-plist's test files): transcode.
        if let utf32 = UTF32Text(body), let utf8 = utf32.utf8() {
            return utf8.withUnsafeBufferPointer { parseBytes($0, encoding: "UTF-8", sink: sink, warnings: &warnings) }
        }
        return parseBytes(body, encoding: encoding, sink: sink, warnings: &warnings)
    }

    private static func parseBytes(
        _ body: UnsafeBufferPointer<UInt8>, encoding: String?, sink: XMLEventSink, warnings: inout [String]
    ) -> Outcome {
        _ = processSetup
        silenceGenericErrors()
        if AttributeScan.exceeds(maxAttributesPerElement, in: body, encoding: encoding) {
            return .limitExceeded("a start tag has more than \(maxAttributesPerElement) attributes")
        }
        guard body.count <= Int(Int32.max) else {
            return .failed(XMLParseFailure(message: "document larger than 2 GiB", line: 0, column: 0, offset: 0))
        }
        // An empty buffer makes xmlCreateMemoryParserCtxt fail; libxml2 would report "Document is empty".
        guard let base = body.baseAddress, !body.isEmpty else {
            return .failed(XMLParseFailure(message: "Document is empty", line: 1, column: 1, offset: 0))
        }
        guard
            let ctxt = base.withMemoryRebound(
                to: CChar.self, capacity: body.count,
                {
                    xmlCreateMemoryParserCtxt($0, Int32(body.count))
                })
        else {
            return .failed(XMLParseFailure(message: "out of memory", line: 0, column: 0, offset: 0))
        }
        defer {
            if let doc = ctxt.pointee.myDoc { xmlFreeDoc(doc) }
            ctxt.pointee.myDoc = nil
            xmlFreeParserCtxt(ctxt)
        }
        let session = SAXSession(
            sink: sink, context: ctxt, maxEntityExpansion: maxEntityExpansion(forBodyBytes: body.count))
        let retained = Unmanaged.passRetained(session)
        defer { retained.release() }
        ctxt.pointee.sax.pointee = saxHandler
        ctxt.pointee.sax.pointee._private = sessionMarker
        ctxt.pointee._private = retained.toOpaque()
        respdecode_xml_set_current_parse(retained.toOpaque())
        defer { respdecode_xml_set_current_parse(nil) }
        _ = xmlCtxtUseOptions(ctxt, Int32(parseOptions))

        // "UTF-16" names no byte order, and libxml2's handler for it reads little-endian, so a big-endian body
        // labelled `charset=utf-16` would fail: the order is read from the first character (XML's first character
        // is ASCII, so one of its two bytes is zero); a body with a byte order mark is left to libxml2.
        var encoding = encoding
        if let label = encoding, ["utf-16", "utf16", "ucs-2", "iso-10646-ucs-2"].contains(label.lowercased()) {
            encoding = utf16ByteOrder(ofFirstCharacterIn: body).map { $0 ? "UTF-16BE" : "UTF-16LE" }
        }
        if let encoding, !startsWithByteOrderMark(body) {
            if let handler = xmlFindCharEncodingHandler(encoding) {
                _ = xmlSwitchToEncoding(ctxt, handler)
            } else {
                session.warn("charset '\(encoding)' is not known to libxml2; the document's own encoding is used")
            }
        }
        _ = xmlParseDocument(ctxt)
        warnings += session.warnings

        if let message = session.limitExceeded { return .limitExceeded(message) }
        if session.stoppedBySink { return .stoppedBySink }
        if ctxt.pointee.wellFormed == 0 || session.failure != nil {
            var failure =
                session.failure
                ?? XMLParseFailure(
                    message: "not well-formed", line: Int(ctxt.pointee.input?.pointee.line ?? 0),
                    column: Int(ctxt.pointee.input?.pointee.col ?? 0), offset: 0)
            // An encoding error reaches only the generic handler; the parser then reports a consequence ("Premature
            // end of data…"). The encoding error says what really happened.
            if let conversion = lastGenericError(), conversion.contains("conversion failed") {
                failure.message = conversion
            }
            failure.offset = min(max(failure.offset, 0), body.count)
            return .failed(failure)
        }
        return .parsed
    }

    /// Options of every parse; see the top of this file.
    private static let parseOptions =
        XML_PARSE_NOENT.rawValue | XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue
        | XML_PARSE_NOWARNING.rawValue

    private static func startsWithByteOrderMark(_ body: UnsafeBufferPointer<UInt8>) -> Bool {
        if body.count >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF { return true }
        return body.count >= 2 && ((body[0] == 0xFE && body[1] == 0xFF) || (body[0] == 0xFF && body[1] == 0xFE))
    }

    /// The handler: libxml2's own SAX2 callbacks for the prolog and DTD (they keep entity declarations, which
    /// substitution needs), ours for elements and character data, nothing for comments and processing instructions.
    nonisolated(unsafe) private static let saxHandler: xmlSAXHandler = {
        var sax = xmlSAXHandler()
        xmlSAXVersion(&sax, 2)
        sax.startElement = nil
        sax.endElement = nil
        sax.startElementNs = startElementCallback
        sax.endElementNs = endElementCallback
        sax.characters = charactersCallback
        sax.ignorableWhitespace = charactersCallback
        sax.cdataBlock = charactersCallback
        sax.getEntity = getEntityCallback
        sax.attributeDecl = attributeDeclCallback
        sax.getParameterEntity = getParameterEntityCallback
        sax.reference = nil
        sax.comment = nil
        sax.processingInstruction = nil
        sax.warning = nil
        sax.error = nil
        sax.fatalError = nil
        sax.serror = structuredErrorCallback
        return sax
    }()
}

/// Finds a start tag with too many attributes before libxml2 parses the body (libxml2 2.9 compares a tag's
/// attributes pairwise before any callback runs). A small lexer: text is skipped with `memchr`, comments, CDATA
/// sections, processing instructions, end tags and declarations are skipped, and in a start tag each `=` between a
/// name and a quoted value counts. Quoted literals in declarations are skipped too: entity text is scanned when an
/// entity is used (``SAXSession/scanEntity(_:)``), after libxml2 has resolved its character references.
///
/// UTF-16 (by byte order mark, `charset`, or the zero byte of its first character) and EBCDIC (by its `<?xm`
/// signature or an IBM/EBCDIC `charset`) are first narrowed to one byte per character; everything else is read as
/// ASCII-compatible bytes (UTF-32 is transcoded before this runs).
enum AttributeScan {
    static func exceeds(_ limit: Int, in body: UnsafeBufferPointer<UInt8>, encoding: String?) -> Bool {
        guard body.count > 2 * limit else { return false } // each attribute takes at least `a=""`
        let label = encoding?.lowercased() ?? ""
        var bigEndian: Bool?
        if body[0] == 0xFE && body[1] == 0xFF {
            bigEndian = true
        } else if body[0] == 0xFF && body[1] == 0xFE {
            bigEndian = false
        } else if label == "utf-16be" || label == "unicodefffe" {
            bigEndian = true
        } else if label == "utf-16le" {
            bigEndian = false
        } else {
            bigEndian = utf16ByteOrder(ofFirstCharacterIn: body)
        }
        if let bigEndian {
            let high = bigEndian ? 0 : 1
            let narrowed = (0..<body.count / 2).map { k -> UInt8 in
                let c = body[2 * k + 1 - high]
                return body[2 * k + high] == 0 && c < 0x80 ? c : 0x80
            }
            return narrowed.withUnsafeBufferPointer { scan($0, limit: limit) }
        }
        let ebcdic =
            (body.count >= 4 && body[0] == 0x4C && body[1] == 0x6F && body[2] == 0xA7 && body[3] == 0x94)
            || label.hasPrefix("ebcdic") || label.hasPrefix("ibm0") || label.hasPrefix("ibm-0")
            || label.hasPrefix("cp0")
            || ["ibm37", "ibm500", "ibm1047", "cp500", "cp1047", "ibm-500", "ibm-1047"].contains(label)
        if ebcdic {
            let narrowed = body.map { ebcdicToASCII[Int($0)] }
            return narrowed.withUnsafeBufferPointer { scan($0, limit: limit) }
        }
        return scan(body, limit: limit)
    }

    /// The lexer over ASCII-compatible bytes.
    static func scan(_ body: UnsafeBufferPointer<UInt8>, limit: Int) -> Bool {
        guard let base = body.baseAddress else { return false }
        let n = body.count
        /// The index of the first `byte` at or after `from`, or `n`.
        func find(_ byte: UInt8, from: Int) -> Int {
            guard from < n, let hit = memchr(base + from, Int32(byte), n - from) else { return n }
            return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
        /// The index just past the first `terminator` (2 or 3 bytes) at or after `from`, or `n`.
        func skip(past terminator: StaticString, from: Int) -> Int {
            let t = terminator.utf8Start
            let length = terminator.utf8CodeUnitCount
            var i = from
            while true {
                i = find(t[0], from: i)
                if i + length > n { return n }
                var k = 1
                while k < length && body[i + k] == t[k] { k += 1 }
                if k == length { return i + length }
                i += 1
            }
        }
        func startsWith(_ prefix: StaticString, at i: Int) -> Bool {
            let length = prefix.utf8CodeUnitCount
            guard i + length <= n else { return false }
            for k in 0..<length where body[i + k] != prefix.utf8Start[k] { return false }
            return true
        }
        var i = 0
        while true {
            let open = find(UInt8(ascii: "<"), from: i)
            guard open + 1 < n else { return false }
            let c = body[open + 1]
            if c == UInt8(ascii: "!") {
                if startsWith("<!--", at: open) {
                    i = skip(past: "-->", from: open + 4)
                } else if startsWith("<![CDATA[", at: open) {
                    i = skip(past: "]]>", from: open + 9)
                } else {
                    // A declaration: to its `>`, quoted literals skipped (`[` of an internal subset ends nothing).
                    var k = open + 2
                    while k < n && body[k] != UInt8(ascii: ">") && body[k] != UInt8(ascii: "[") {
                        if body[k] == UInt8(ascii: "\"") || body[k] == UInt8(ascii: "'") {
                            k = find(body[k], from: k + 1)
                        }
                        k += 1
                    }
                    i = k + 1
                }
            } else if c == UInt8(ascii: "?") {
                i = skip(past: "?>", from: open + 2)
            } else if c == UInt8(ascii: "/") {
                i = find(UInt8(ascii: ">"), from: open + 2) + 1
            } else if isNameStart(c) {
                // A start tag: count `name = "` up to its `>`.
                var count = 0
                var k = open + 2
                var lastNameEnd = false // the last non-space byte before here ends a name
                while k < n {
                    let b = body[k]
                    if b == UInt8(ascii: ">") || b == UInt8(ascii: "<") { break }
                    if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                        k = find(b, from: k + 1) + 1
                        lastNameEnd = false
                        continue
                    }
                    if b == UInt8(ascii: "=") && lastNameEnd {
                        var after = k + 1
                        while after < n && isSpace(body[after]) { after += 1 }
                        if after < n && (body[after] == UInt8(ascii: "\"") || body[after] == UInt8(ascii: "'")) {
                            count += 1
                            if count > limit { return true }
                        }
                    }
                    if !isSpace(b) { lastNameEnd = isNameByte(b) }
                    k += 1
                }
                i = k
            } else {
                i = open + 1
            }
        }
    }

    @inline(__always) private static func isSpace(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D
    }

    @inline(__always) private static func isNameStart(_ c: UInt8) -> Bool {
        c >= 0x80 || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) || c == 0x5F || c == 0x3A
    }

    @inline(__always) private static func isNameByte(_ c: UInt8) -> Bool {
        isNameStart(c) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x2E
    }

    /// EBCDIC (code pages 037/500/1047 agree on these) to ASCII for what the lexer looks at; letters and digits
    /// map to letters, everything else to 0x80 (a name byte).
    private static let ebcdicToASCII: [UInt8] = (0..<256).map { byte -> UInt8 in
        switch byte {
        case 0x4C: UInt8(ascii: "<")
        case 0x6E: UInt8(ascii: ">")
        case 0x7E: UInt8(ascii: "=")
        case 0x7F: UInt8(ascii: "\"")
        case 0x7D: UInt8(ascii: "'")
        case 0x5A, 0x4F: UInt8(ascii: "!")
        case 0x6F: UInt8(ascii: "?")
        case 0x61: UInt8(ascii: "/")
        case 0x60: UInt8(ascii: "-")
        case 0x40: UInt8(ascii: " ")
        case 0x05: UInt8(ascii: "\t")
        case 0x25, 0x15: UInt8(ascii: "\n")
        case 0x0D: UInt8(ascii: "\r")
        case 0x81...0x89, 0x91...0x99, 0xA2...0xA9, 0xC1...0xC9, 0xD1...0xD9, 0xE2...0xE9: UInt8(ascii: "a")
        case 0xF0...0xF9: UInt8(ascii: "0")
        default: 0x80
        }
    }
}

/// Whether a body's first character reads as big-endian UTF-16 (true), little-endian (false), or neither (nil): an
/// XML document starts with an ASCII character, so one of its two bytes is zero.
private func utf16ByteOrder(ofFirstCharacterIn body: UnsafeBufferPointer<UInt8>) -> Bool? {
    guard body.count >= 2, (body[0] == 0) != (body[1] == 0) else { return nil }
    return body[0] == 0
}

/// A body in UTF-32, recognised as XML 1.0 Appendix F does: by its byte order mark, or by `<` as its first character.
private struct UTF32Text {
    let body: UnsafeBufferPointer<UInt8>
    let bigEndian: Bool
    /// Bytes of byte order mark to skip.
    let start: Int

    init?(_ body: UnsafeBufferPointer<UInt8>) {
        guard body.count >= 4, body.count % 4 == 0 else { return nil }
        self.body = body
        switch (body[0], body[1], body[2], body[3]) {
        case (0x00, 0x00, 0xFE, 0xFF): (bigEndian, start) = (true, 4)
        case (0xFF, 0xFE, 0x00, 0x00): (bigEndian, start) = (false, 4)
        case (0x00, 0x00, 0x00, 0x3C): (bigEndian, start) = (true, 0)
        case (0x3C, 0x00, 0x00, 0x00): (bigEndian, start) = (false, 0)
        default: return nil
        }
    }

    /// The text in UTF-8 without a byte order mark, or nil when a unit is not a Unicode scalar (libxml2 then reports
    /// the document as it is).
    func utf8() -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity((body.count - start) / 4 + 16)
        var i = start
        while i < body.count {
            let unit =
                bigEndian
                ? UInt32(body[i]) << 24 | UInt32(body[i + 1]) << 16 | UInt32(body[i + 2]) << 8 | UInt32(body[i + 3])
                : UInt32(body[i + 3]) << 24 | UInt32(body[i + 2]) << 16 | UInt32(body[i + 1]) << 8 | UInt32(body[i])
            guard let scalar = Unicode.Scalar(unit) else { return nil }
            result.append(contentsOf: UTF8.encode(scalar)!)
            i += 4
        }
        return result
    }
}

/// Done once per process before the first parse.
private let processSetup: Void = {
    xmlInitParser()
    xmlSetExternalEntityLoader(refuseExternalEntity)
    // libxml2's own nesting cap is 256 (2.9.x); the decoders enforce the configured `maxDepth` (at most 1,000,000,
    // the command line's bound) themselves, so libxml2's is put just above that. Element parsing is not recursive in
    // libxml2 ≥ 2.9.11, so deep documents cost heap, not stack.
    respdecode_xml_set_max_depth(1_000_001)
}()

/// libxml2 keeps its generic error handler per thread (2.9.x `globals.c`) and prints to stderr by default; ours
/// keeps the last message of this thread instead (`lastGenericError()`), emptied here.
private func silenceGenericErrors() {
    respdecode_xml_silence_this_thread()
}

/// The last message libxml2 sent to the generic error handler on this thread since the parse began, if any.
private func lastGenericError() -> String? {
    guard let text = respdecode_xml_last_generic_error(), text.pointee != 0 else { return nil }
    // The first message only; libxml2 repeats it and adds consequences ("encoder error").
    let message = String(cString: text).split(separator: "\n").first.map(String.init) ?? ""
    return message.isEmpty ? nil : message
}

/// The address stored in our SAX handler's `_private`, so that callbacks reached from a parse that is not ours (the
/// external entity loader is process-wide) never take that parse's `_private` for a session.
/// A fixed bit pattern rather than an allocated address: a global `let` is initialised lazily, and its `swift_once`
/// check on every callback showed in profiles. libxml2 leaves `_private` NULL in handlers it makes.
@inline(__always) private var sessionMarker: UnsafeMutableRawPointer {
    UnsafeMutableRawPointer(bitPattern: 0x7265_7370)!
}

/// The session of the parse `ctxt` belongs to, if it is one of ours.
@inline(__always)
private func ourSession(_ ctxt: xmlParserCtxtPtr) -> Unmanaged<SAXSession>? {
    guard let me = ctxt.pointee._private, ctxt.pointee.sax?.pointee._private == sessionMarker else { return nil }
    return Unmanaged<SAXSession>.fromOpaque(me)
}

/// What one parse needs in the callbacks, reached through the parser context's `_private` (which libxml2 copies to
/// the contexts it makes for entity content).
private final class SAXSession {
    // Callbacks run one at a time on the parsing thread and never overlap on a property, so the hot properties skip
    // Swift's dynamic exclusivity checks (they cost a fifth of the time of a large document).
    /// Not retained: `LibXML2.parse` holds the sink for the whole parse.
    let sink: Unmanaged<XMLEventSink>
    /// The document's parser context. Content of an entity reference is parsed by a context libxml2 makes for it,
    /// so a callback whose context is another one is delivering entity content.
    let context: xmlParserCtxtPtr
    let maxEntityExpansion: Int
    @exclusivity(unchecked) var entityExpansion = 0
    /// False once the parse has stopped for any reason: later events are ignored.
    @exclusivity(unchecked) var active = true
    @exclusivity(unchecked) var stoppedBySink = false
    /// Set when one of this file's bounds stopped the parse: what was passed.
    @exclusivity(unchecked) var limitExceeded: String?
    @exclusivity(unchecked) var failure: XMLParseFailure?
    /// Attribute declarations (ATTLIST) seen in the DTD.
    @exclusivity(unchecked) var attributeDeclarations = 0
    /// Entities whose text the attribute pre-scan has read.
    var scannedEntities: Set<UnsafeMutableRawPointer> = []
    var warnings: [String] = []

    init(sink: XMLEventSink, context: xmlParserCtxtPtr, maxEntityExpansion: Int) {
        self.sink = Unmanaged.passUnretained(sink)
        self.context = context
        self.maxEntityExpansion = maxEntityExpansion
    }

    func stop() {
        stoppedBySink = true
        active = false
        xmlStopParser(context)
    }

    /// Stops the parse because a bound of this file was passed.
    func stop(exceeding message: String) {
        if limitExceeded == nil { limitExceeded = message }
        active = false
        xmlStopParser(context)
    }

    /// Counts `bytes` of entity content when `ctx` is not the document's context (or always, for content the DTD
    /// adds, such as default attributes); stops the parse past the limit.
    @inline(__always)
    func countExpansion(_ bytes: Int, in ctx: UnsafeMutableRawPointer?, always: Bool = false) -> Bool {
        guard always || ctx != UnsafeMutableRawPointer(context) else { return true }
        entityExpansion &+= bytes
        guard entityExpansion > maxEntityExpansion else { return true }
        stop(
            exceeding: "entity references, default attributes and namespaces expand to more than "
                + "\(maxEntityExpansion) bytes (1 MiB plus 10 times the body, at most 64 MiB)")
        return false
    }

    /// Runs the attribute pre-scan over a large entity's text, once per entity; stops the parse when it finds a
    /// start tag with too many attributes.
    func scanEntity(_ entity: xmlEntityPtr) -> Bool {
        let length = Int(entity.pointee.length)
        guard length > 2 * LibXML2.maxAttributesPerElement, let content = entity.pointee.content,
            scannedEntities.insert(UnsafeMutableRawPointer(entity)).inserted
        else { return true }
        guard
            AttributeScan.exceeds(
                LibXML2.maxAttributesPerElement,
                in: UnsafeBufferPointer(start: content, count: length), encoding: "UTF-8")
        else { return true }
        stop(exceeding: "a start tag in entity text has more than \(LibXML2.maxAttributesPerElement) attributes")
        return false
    }

    func warn(_ text: String) {
        // A few distinct warnings say enough; a hostile document could raise thousands.
        if warnings.count < 8 && !warnings.contains(text) { warnings.append(text) }
    }
}

/// Runs `body` with the session of the parse that `ctx` (a parser context) belongs to, while that parse is active,
/// without retaining it (the parse holds a reference for its whole length).
@inline(__always)
private func withActiveSession(_ ctx: UnsafeMutableRawPointer?, _ body: (SAXSession) -> Void) {
    guard let ctxt = ctx?.assumingMemoryBound(to: xmlParserCtxt.self), let session = ourSession(ctxt) else { return }
    session._withUnsafeGuaranteedRef { session in
        if session.active { body(session) }
    }
}

private func startElementCallback(
    _ ctx: UnsafeMutableRawPointer?, _ localName: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?,
    _ uri: UnsafePointer<xmlChar>?, _ namespaceCount: Int32,
    _ namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, _ attributeCount: Int32, _ defaultedCount: Int32,
    _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
) {
    guard let localName else { return }
    withActiveSession(ctx) { session in
        // An element costs at least its name and punctuation in the value; 16 bytes stands for that.
        guard session.countExpansion(16 + 8 * Int(attributeCount), in: ctx) else { return }
        // Namespace URIs are written with every element (docs/output.md#xml), so a long one on many elements amplifies
        // like an
        // entity: they count, wherever the element is.
        var namespaceBytes = 0
        if let uri { namespaceBytes += strlen(UnsafeRawPointer(uri).assumingMemoryBound(to: CChar.self)) }
        if namespaceCount > 0, let namespaces {
            for i in 0..<Int(namespaceCount) {
                if let declared = namespaces[2 * i + 1] {
                    namespaceBytes += strlen(UnsafeRawPointer(declared).assumingMemoryBound(to: CChar.self)) + 8
                }
            }
        }
        if namespaceBytes > 0 { guard session.countExpansion(namespaceBytes, in: ctx, always: true) else { return } }
        // Attributes defaulted by an ATTLIST declaration are DTD-made content too (libxml2's
        // `errors/quadratic-defattr.xml` expands 5 KB to 948 KB that way), wherever the element is.
        if defaultedCount > 0, let attributes {
            var bytes = 0
            for i in Int(attributeCount - defaultedCount)..<Int(attributeCount) {
                let fields = attributes + 5 * i
                if let start = fields[3], let end = fields[4] { bytes += end - start + 16 }
            }
            guard session.countExpansion(bytes, in: ctx, always: true) else { return }
        }
        let start = XMLElementStart(
            localNamePointer: localName, prefixPointer: prefix, namespacePointer: uri, namespaces: namespaces,
            attributes: attributes, namespaceCount: Int(namespaceCount), attributeCount: Int(attributeCount))
        if !session.sink._withUnsafeGuaranteedRef({ $0.startElement(start) }) { session.stop() }
    }
}

private func endElementCallback(
    _ ctx: UnsafeMutableRawPointer?, _ localName: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?,
    _ uri: UnsafePointer<xmlChar>?
) {
    withActiveSession(ctx) { session in
        if !session.sink._withUnsafeGuaranteedRef({ $0.endElement() }) { session.stop() }
    }
}

private func charactersCallback(_ ctx: UnsafeMutableRawPointer?, _ text: UnsafePointer<xmlChar>?, _ length: Int32) {
    guard let text, length > 0 else { return }
    withActiveSession(ctx) { session in
        let piece = UnsafeBufferPointer(start: text, count: Int(length))
        if !session.sink._withUnsafeGuaranteedRef({ $0.characters(piece) }) { session.stop() }
    }
}

private func structuredErrorCallback(_ ctx: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<xmlError>?) {
    guard let error, let ctxt = ctx?.assumingMemoryBound(to: xmlParserCtxt.self), let me = ourSession(ctxt) else {
        return
    }
    let session = me.takeUnretainedValue()
    var message = error.pointee.message.map { String(cString: $0) } ?? "error \(error.pointee.code)"
    while message.last == "\n" || message.last == " " { message.removeLast() }
    switch error.pointee.level {
    case XML_ERR_FATAL:
        guard session.failure == nil else { return }
        session.active = false
        // An error inside entity text is reported by the context parsing that text, with its line and column; the
        // document's context says where in the body the reference is, which is what the line should point to.
        var line = Int(error.pointee.line)
        var column = Int(error.pointee.int2)
        if ctxt != session.context, let input = session.context.pointee.input {
            line = Int(input.pointee.line)
            column = Int(input.pointee.col)
        }
        session.failure = XMLParseFailure(
            message: message, line: line, column: column, offset: Int(xmlByteConsumed(session.context)))
    default:
        session.warn("libxml2: \(message)")
    }
}

/// libxml2's own lookup, with every use of a declared entity counted against the expansion cap: once past it, the
/// parse stops and further lookups find nothing, so no more text is expanded (in content, attribute values and the
/// DTD alike; libxml2 2.9's own amplification check does not work in SAX mode).
private func getEntityCallback(_ ctx: UnsafeMutableRawPointer?, _ name: UnsafePointer<xmlChar>?) -> xmlEntityPtr? {
    counted(xmlSAX2GetEntity(ctx, name), ctx)
}

private func getParameterEntityCallback(_ ctx: UnsafeMutableRawPointer?, _ name: UnsafePointer<xmlChar>?)
    -> xmlEntityPtr?
{
    counted(xmlSAX2GetParameterEntity(ctx, name), ctx)
}

@inline(__always)
private func counted(_ entity: xmlEntityPtr?, _ ctx: UnsafeMutableRawPointer?) -> xmlEntityPtr? {
    guard let entity, entity.pointee.etype != XML_INTERNAL_PREDEFINED_ENTITY,
        let ctxt = ctx?.assumingMemoryBound(to: xmlParserCtxt.self), let me = ourSession(ctxt)
    else { return entity }
    let found = me._withUnsafeGuaranteedRef { session -> xmlEntityPtr? in
        if session.limitExceeded != nil { return nil }
        // The entity's text plus a little for the reference itself; nested references are counted as they are met.
        guard session.countExpansion(Int(entity.pointee.length) + 8, in: ctx, always: true) else { return nil }
        // Start tags inside entity text are not in the body as such (character references can make them), so the
        // attribute pre-scan reads each large entity's text once.
        if !session.scanEntity(entity) { return nil }
        return entity
    }
    // Past a limit: also stop the context that asked (entity text is parsed by contexts of its own, which libxml2
    // otherwise keeps running, falling back to its own lookup: 10 s for a 1 MB body).
    if found == nil { xmlStopParser(ctxt) }
    return found
}

/// libxml2's own handler, after counting: each ATTLIST attribute may default onto every element it names, and
/// libxml2 2.9 checks defaults against a tag's attributes pairwise (200,000 declared for one element took 20 s).
private func attributeDeclCallback(
    _ ctx: UnsafeMutableRawPointer?, _ element: UnsafePointer<xmlChar>?, _ name: UnsafePointer<xmlChar>?,
    _ type: Int32, _ def: Int32, _ defaultValue: UnsafePointer<xmlChar>?, _ tree: xmlEnumerationPtr?
) {
    if let ctxt = ctx?.assumingMemoryBound(to: xmlParserCtxt.self), let me = ourSession(ctxt) {
        let allowed = me._withUnsafeGuaranteedRef { session -> Bool in
            session.attributeDeclarations += 1
            guard session.attributeDeclarations > LibXML2.maxAttributesPerElement else { return true }
            session.stop(exceeding: "the DTD declares more than \(LibXML2.maxAttributesPerElement) attributes")
            return false
        }
        guard allowed else {
            xmlStopParser(ctxt)
            if let tree { xmlFreeEnumeration(tree) } // the handler would have taken it
            return
        }
    }
    xmlSAX2AttributeDecl(ctx, element, name, type, def, defaultValue, tree)
}

private func refuseExternalEntity(
    _ url: UnsafePointer<CChar>?, _ id: UnsafePointer<CChar>?, _ ctxt: xmlParserCtxtPtr?
) -> xmlParserInputPtr? {
    // The loader is process-wide and may be reached from contexts libxml2 makes for entities (with our `_private`
    // but not our handler); `_private` is trusted only when it is the parse running on this thread.
    if let me = ctxt?.pointee._private, me == respdecode_xml_current_parse() {
        let session = Unmanaged<SAXSession>.fromOpaque(me).takeUnretainedValue()
        let name = url.map { String(cString: $0) } ?? id.map { String(cString: $0) } ?? "?"
        session.warn("external entity '\(name)' not loaded (external entities and DTDs are never read)")
    }
    return nil
}

@inline(__always)
private func cString(_ pointer: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    var n = 0
    while pointer[n] != 0 { n += 1 }
    return UnsafeBufferPointer(start: pointer, count: n)
}

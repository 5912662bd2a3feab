/// The xml decoder (AFNetworking's `AFXMLParserResponseSerializer` types, but the document is parsed): libxml2's SAX2
/// events written straight as the JSON tree of docs/output.md#xml (see ``XMLTreeWriter``).
public struct XMLBodyDecoder: BodyDecoder {
    public let name = "xml"

    /// `application/xml`, `text/xml` (AFNetworking's two) and any `+xml` type (RFC 7303 §9.2).
    public let defaultAcceptableTypes: [MediaTypePattern] = ["application/xml", "text/xml", "*/*+xml"]
        .compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        if Self.isNoContent(body) { return false }
        let options = context.options
        let writer = XMLTreeWriter(
            output: output, keepWhitespace: options.xmlKeepWhitespace,
            maxDepth: options.limits.maxDepth, maxValueBytes: options.limits.maxValueBytes)
        let mark = output.mark
        let outcome = LibXML2.parse(body, encoding: context.charset, sink: writer, warnings: &context.warnings)
        if let error = outcome.error(code: .invalidXML, sinkError: writer.error) {
            output.rollback(to: mark)
            throw error
        }
        return true
    }
}

/// Writes one document's events as `{"name":…,"namespace":…,"attributes":{…},"children":[…]}`.
///
/// - `name` keeps the prefix (`soap:Envelope`); `namespace` is the element's namespace URI, when it has one.
/// - `attributes` holds the namespace declarations (`xmlns`, `xmlns:p`) and the attributes, in document order, with
///   entity-substituted, normalized values; it is left out when there are none.
/// - `children` holds elements and text strings in document order; adjacent text, CDATA and character or entity
///   references make one string; comments and processing instructions are left out (text on both sides of one joins
///   up). Whitespace-only text between elements (before a child element, or after one) is dropped unless
///   `keepWhitespace`; whitespace that is an element's whole content (`<s> </s>`) is kept. `children` is left out
///   when empty.
final class XMLTreeWriter: XMLEventSink {
    private let out: OutputBuffer
    private let keepWhitespace: Bool
    private let maxDepth: Int
    /// `out.count` may not pass this.
    private let valueEnd: Int
    // Events come one at a time and no two accesses to a property overlap, so Swift's dynamic exclusivity checks
    // (a tenth of the time of a large document) are skipped on the hot properties.
    /// Per open element: ``childrenOpened`` once its `"children":[` is written, ``hasElementChild`` once a child
    /// element has started.
    @exclusivity(unchecked) private var openChildren: [UInt8] = []
    private static let childrenOpened: UInt8 = 1
    private static let hasElementChild: UInt8 = 2
    /// Character data not yet written, and whether it is all white space so far.
    @exclusivity(unchecked) private var text: [UInt8] = []
    @exclusivity(unchecked) private var textIsBlank = true
    /// Why the writer stopped the parse.
    private(set) var error: RecordError?

    init(output: OutputBuffer, keepWhitespace: Bool, maxDepth: Int, maxValueBytes: Int) {
        out = output
        self.keepWhitespace = keepWhitespace
        self.maxDepth = maxDepth
        let (end, overflow) = output.count.addingReportingOverflow(maxValueBytes)
        valueEnd = overflow ? Int.max : end
        openChildren.reserveCapacity(32)
    }

    override func startElement(_ element: XMLElementStart) -> Bool {
        // White space before a child element is between elements.
        if !flushText(dropBlank: true) { return false }
        guard openChildren.count < maxDepth else {
            error = RecordError(.limitExceeded, "XML elements nested deeper than \(maxDepth)")
            return false
        }
        if !openChildren.isEmpty {
            openChild()
            openChildren[openChildren.count - 1] |= Self.hasElementChild
        }
        out.append(ascii: "{\"name\":\"")
        // XML names never hold a quote, a backslash or a control character, and libxml2 gives them as UTF-8.
        if let prefix = element.prefix {
            out.append(prefix)
            out.append(UInt8(ascii: ":"))
        }
        out.append(element.localName)
        out.append(UInt8(ascii: "\""))
        if let uri = element.namespaceURI {
            out.append(ascii: ",\"namespace\":")
            if !appendString(uri) { return false }
        }
        if element.namespaceCount + element.attributeCount > 0 {
            out.append(ascii: ",\"attributes\":{")
            for i in 0..<element.namespaceCount {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                let (prefix, uri) = element.namespaceDeclaration(at: i)
                if let prefix {
                    out.append(ascii: "\"xmlns:")
                    out.append(prefix)
                    out.append(ascii: "\":")
                } else {
                    out.append(ascii: "\"xmlns\":")
                }
                if !appendString(uri) { return false }
            }
            for i in 0..<element.attributeCount {
                if i > 0 || element.namespaceCount > 0 { out.append(UInt8(ascii: ",")) }
                let (prefix, localName, value) = element.attribute(at: i)
                out.append(UInt8(ascii: "\""))
                if let prefix {
                    out.append(prefix)
                    out.append(UInt8(ascii: ":"))
                }
                out.append(localName)
                out.append(ascii: "\":")
                if !appendString(value) { return false }
            }
            out.append(UInt8(ascii: "}"))
        }
        openChildren.append(0)
        return withinBudget()
    }

    override func endElement() -> Bool {
        // White space after a child element is between elements; white space that is all the content is kept.
        if !flushText(dropBlank: openChildren[openChildren.count - 1] & Self.hasElementChild != 0) { return false }
        if openChildren.removeLast() & Self.childrenOpened != 0 { out.append(UInt8(ascii: "]")) }
        out.append(UInt8(ascii: "}"))
        return true
    }

    override func characters(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if textIsBlank && !keepWhitespace { textIsBlank = isXMLWhitespace(bytes) }
        text.append(contentsOf: bytes)
        // Pending text counts against the value limit before it is written (it can be entity-made).
        return withinBudget(pending: text.count)
    }

    /// Writes the pending character data as a text child, unless it is only white space and that is dropped.
    private func flushText(dropBlank: Bool) -> Bool {
        defer {
            text.removeAll(keepingCapacity: text.capacity <= 1 << 20)
            textIsBlank = true
        }
        guard !text.isEmpty, !(textIsBlank && dropBlank && !keepWhitespace), !openChildren.isEmpty else { return true }
        openChild()
        return text.withUnsafeBufferPointer { appendString($0) }
    }

    /// Writes the separator before a child of the innermost open element: `,"children":[` for the first, else `,`.
    @inline(__always)
    private func openChild() {
        if openChildren[openChildren.count - 1] & Self.childrenOpened != 0 {
            out.append(UInt8(ascii: ","))
        } else {
            out.append(ascii: ",\"children\":[")
            openChildren[openChildren.count - 1] |= Self.childrenOpened
        }
    }

    /// Writes `bytes` as a JSON string, stopping at the value limit (an escaped text can be six times as long).
    private func appendString(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        out.append(UInt8(ascii: "\""))
        switch out.appendJSONStringContent(utf8: bytes, stoppingPast: valueEnd) {
        case .written:
            out.append(UInt8(ascii: "\""))
            return true
        case .invalidUTF8:
            // libxml2 hands out UTF-8 it has checked; this is a guard, not an expected path.
            error = RecordError(.invalidXML, "libxml2 produced text that is not UTF-8")
            return false
        case .pastLimit:
            return withinBudget(pending: .max)
        }
    }

    /// Whether the value, with `pending` bytes still to come, stays within the value limit; sets the error if not.
    private func withinBudget(pending: Int = 0) -> Bool {
        guard pending > valueEnd - out.count else { return true }
        error = RecordError(.limitExceeded, "XML value larger than the value limit (maxValueBytes)")
        return false
    }
}

/// Whether every byte is XML white space (#x20 | #x9 | #xD | #xA).
private func isXMLWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where byte != 0x20 && byte != 0x0A && byte != 0x09 && byte != 0x0D { return false }
    return true
}

import Glibc

/// What the html decoder does with an element (docs/decoding.md#visible-text).
struct HTMLTag {
    /// Elements with a field of the value.
    enum Kind: UInt8 {
        case other, html, title, heading, meta, base, link, a, area, img, script, iframe, form

        /// The name written as a link's `element`.
        var name: StaticString {
            switch self {
            case .a: "a"
            case .area: "area"
            case .link: "link"
            case .img: "img"
            case .script: "script"
            case .iframe: "iframe"
            case .form: "form"
            default: "other"
            }
        }
    }

    var flags: UInt16
    var kind: Kind
    /// 1-6 for h1-h6.
    var level: UInt8 = 0

    /// Not rendered: no text from the element or anything in it.
    static let skip: UInt16 = 1
    /// A block: a line break before and after.
    static let block: UInt16 = 2
    /// A paragraph-like block: a blank line before and after.
    static let paragraph: UInt16 = 4
    /// White space kept as written.
    static let pre: UInt16 = 8
    /// A table cell: a tab between cells of a row.
    static let cell: UInt16 = 16
    /// SVG or MathML: their `<title>` is not the document's.
    static let foreign: UInt16 = 32
    /// `<br>`.
    static let lineBreak: UInt16 = 64

    static let table: [String: HTMLTag] = {
        var table: [String: HTMLTag] = [:]
        // Not rendered: scripts, styles, templates, head content, embedded content, form controls.
        for name in [
            "head", "title", "script", "style", "template", "noscript", "iframe", "object", "embed", "applet",
            "frameset", "noframes", "select", "option", "optgroup", "datalist", "textarea", "button", "input",
            "meter", "progress", "param", "source", "track",
        ] {
            table[name] = HTMLTag(flags: skip, kind: .other)
        }
        for name in ["svg", "math"] { table[name] = HTMLTag(flags: skip | foreign, kind: .other) }
        // Blocks (HTML's rendering section, `display: block`, `list-item`, `table*`).
        for name in [
            "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "dir",
            "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "hr", "html",
            "legend", "li", "main", "menu", "nav", "ol", "search", "section", "summary", "table", "tbody", "tfoot",
            "thead", "tr", "ul",
        ] {
            table[name] = HTMLTag(flags: block, kind: .other)
        }
        for name in ["pre", "listing", "plaintext", "xmp"] { table[name] = HTMLTag(flags: block | pre, kind: .other) }
        table["p"] = HTMLTag(flags: block | paragraph, kind: .other)
        for level in 1...6 {
            table["h\(level)"] = HTMLTag(flags: block | paragraph, kind: .heading, level: UInt8(level))
        }
        table["td"] = HTMLTag(flags: cell, kind: .other)
        table["th"] = HTMLTag(flags: cell, kind: .other)
        table["br"] = HTMLTag(flags: lineBreak, kind: .other)
        // Elements with fields; their rendering flags are kept.
        table["html"]!.kind = .html
        table["title"]!.kind = .title
        table["form"]!.kind = .form
        table["iframe"]!.kind = .iframe
        table["script"]!.kind = .script
        table["meta"] = HTMLTag(flags: skip, kind: .meta)
        table["base"] = HTMLTag(flags: skip, kind: .base)
        table["link"] = HTMLTag(flags: skip, kind: .link)
        table["a"] = HTMLTag(flags: 0, kind: .a)
        table["area"] = HTMLTag(flags: 0, kind: .area)
        table["img"] = HTMLTag(flags: 0, kind: .img)
        return table
    }()

    static let plain = HTMLTag(flags: 0, kind: .other)
}

/// The tag of an element name, cached by the name's address: libxml2 gives every name from its dictionary (or from
/// a few static strings for implied elements), so one address is one name during a parse.
struct HTMLTagCache {
    private var keys = [UnsafePointer<UInt8>?](repeating: nil, count: 256)
    private var values = [HTMLTag](repeating: .plain, count: 256)

    mutating func tag(_ name: UnsafePointer<UInt8>) -> HTMLTag {
        let slot = Int(truncatingIfNeeded: (UInt(bitPattern: name) >> 3) & 255)
        if keys[slot] == name { return values[slot] }
        let length = strlen(UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self))
        var tag = HTMLTag.plain
        if length <= 10 {
            let key = String(decoding: UnsafeBufferPointer(start: name, count: length), as: UTF8.self)
            tag = HTMLTag.table[key] ?? .plain
        }
        keys[slot] = name
        values[slot] = tag
        return tag
    }
}

import Glibc

/// Gathers what the html value holds from the parser's events (docs/decoding.md#html): the title, `<html lang>`,
/// `<base>`, the canonical link, meta tags, links, headings and the visible text. Everything is bounded: the text
/// by `maxTextBytes`, the listed links by `maxHTMLLinks`, the rest (and the links' bytes) by `maxValueBytes`.
final class HTMLExtractor {
    /// A listed link: its fields are ranges of ``linkBytes`` (one buffer for all links rather than arrays for each:
    /// a page has a hundred links and more; docs/html-parser.md#cost).
    struct Link {
        var url: Range<Int>
        /// The attribute as written, when it differs from `url`.
        var href: Range<Int>?
        var element: HTMLTag.Kind
        var rel: Range<Int>?
        var text: Range<Int>?
    }

    // Settings.
    let wantText: Bool
    let wantLinks: Bool
    let maxLinks: Int
    let maxValueBytes: Int
    /// The record's URL when it is absolute: the first base of resolution.
    let documentURL: [UInt8]?

    // What the value holds. Here and below, what the parser's events or each link write is
    // `@exclusivity(unchecked)`: a class's stored properties are otherwise checked for exclusive access at run time at
    // every write (over 1 % of the crawl job's instructions with the pre-scan's; docs/html-parser.md#cost). No method
    // writes one of them while another access to it is under way.
    private(set) var title: [UInt8]?
    /// The article's title as Readability derives it, when it differs from `title` (docs/decoding.md#headline).
    private(set) var headline: [UInt8]?
    private(set) var lang: [UInt8]?
    private(set) var base: [UInt8]?
    private(set) var canonical: [UInt8]?
    private(set) var meta: [(key: [UInt8], content: [UInt8])] = []
    @exclusivity(unchecked) private(set) var links: [Link] = []
    /// The bytes of the links' fields.
    @exclusivity(unchecked) private(set) var linkBytes: [UInt8] = []
    @exclusivity(unchecked) private(set) var linksTotal = 0
    @exclusivity(unchecked) private(set) var headings: [(level: Int, text: [UInt8])] = []
    @exclusivity(unchecked) private(set) var text: TextBuilder
    private(set) var metaTruncated = false
    @exclusivity(unchecked) private(set) var linksTruncated = false
    /// No more links are listed: `maxHTMLLinks` reached, or the value's bytes spent.
    @exclusivity(unchecked) private var linkBudgetSpent = false
    @exclusivity(unchecked) private(set) var headingsTruncated = false

    /// The base links resolve against: `<base href>` once seen (when absolute), else the record's URL.
    private var resolutionBase: [UInt8]? {
        didSet { pathPrefix = nil }
    }
    /// What libxml2 writes before the path of an absolute-path reference resolved against `resolutionBase` (its
    /// resolution of `/` without the `/`), once asked; empty when it gives none.
    @exclusivity(unchecked) private var pathPrefix: [UInt8]?
    private var metaKeys: Set<[UInt8]> = []

    // What the headline is derived from (docs/decoding.md#headline).
    private var titleMeta = ArticleTitle.Meta()
    /// The first JSON-LD script that holds a schema.org article.
    private var jsonLD: ArticleTitle.JSONLD?
    private var h1Count = 0
    /// The text of the first `h1` (when it is not inside another heading).
    private var firstH1: [UInt8]?
    /// Bytes the value's fields other than `text` take, roughly (what `maxValueBytes` bounds).
    @exclusivity(unchecked) private var valueBytes = 0

    // Parse state. Per open element: its tag's flags (and what it opened, below).
    @exclusivity(unchecked) private var open: [UInt16] = []
    /// The depth (count of open elements) at which the current text-less subtree began, 0 when none.
    @exclusivity(unchecked) private var skipDepth = 0
    @exclusivity(unchecked) private var preDepth = 0
    @exclusivity(unchecked) private var foreignDepth = 0
    @exclusivity(unchecked) private var titleDepth = 0
    @exclusivity(unchecked) private var titleText = TextBuilder(limit: 0)
    @exclusivity(unchecked) private var headingDepth = 0
    @exclusivity(unchecked) private var headingLevel = 0
    @exclusivity(unchecked) private var headingText = TextBuilder(limit: 0)
    @exclusivity(unchecked) private var anchorDepth = 0
    /// The index in `links` of the open `<a>`'s link, or -1 when it is not listed.
    @exclusivity(unchecked) private var anchorLink = -1
    @exclusivity(unchecked) private var anchorText = TextBuilder(limit: 0)
    @exclusivity(unchecked) private var tags = HTMLTagCache()
    /// The depth of the open `<script type="application/ld+json">`, 0 when none; its text so far.
    @exclusivity(unchecked) private var jsonLDDepth = 0
    @exclusivity(unchecked) private var jsonLDText: [UInt8] = []
    @exclusivity(unchecked) private var jsonLDTooLong = false

    /// Flags of `open` beyond the tag's own: what this element started.
    private static let openedSkip: UInt16 = 1 << 12
    private static let openedPre: UInt16 = 1 << 13
    private static let openedForeign: UInt16 = 1 << 14

    /// Bytes kept of a title, heading or anchor text (the rest is cut at a character boundary), and the longest `rel`
    /// kept.
    static let maxShortTextBytes = 4096

    /// The longest link listed, as written: a longer one is counted, not listed (and `truncated` names `links`).
    /// Browsers refuse URLs past 2 MB; a crawler has no use for one of 64 KiB either, and a 50 MB `href` would
    /// otherwise be held three times (as written, cleaned, resolved).
    static let maxURLBytes = 65_536

    /// The longest URL links are resolved against (the record's URL, a `<base href>`), and the longest `base` and
    /// `canonical` kept: every relative link makes libxml2 parse the base again, so a long one would cost its length
    /// once per link. Real ones are far shorter.
    static let maxBaseURLBytes = 8192

    /// The longest JSON-LD script read for the headline: a longer one is skipped (its text is not kept past this).
    /// Article JSON-LD is a few KiB; some sites put the whole article body in it.
    static let maxJSONLDBytes = 1 << 20

    init(wantText: Bool, wantLinks: Bool, limits: Limits, url: String?) {
        self.wantText = wantText
        self.wantLinks = wantLinks
        maxLinks = max(limits.maxHTMLLinks, 0)
        maxValueBytes = max(limits.maxValueBytes, 0)
        text = TextBuilder(limit: max(limits.maxTextBytes, 0))
        if let url, url.utf8.count <= Self.maxBaseURLBytes, URLReference.hasScheme(Array(url.utf8)) {
            documentURL = URLReference.escaped(URLReference.clean(Array(url.utf8)))
        } else {
            documentURL = nil
        }
        resolutionBase = documentURL
        open.reserveCapacity(64)
    }

    // MARK: events

    func start(_ name: UnsafePointer<UInt8>, _ attributes: HTMLAttributes) {
        let tag = tags.tag(name)
        var flags = tag.flags
        let depth = open.count + 1

        if tag.kind != .other { special(tag, attributes, depth: depth) }

        if flags & HTMLTag.foreign != 0 {
            foreignDepth += 1
            flags |= Self.openedForeign
        }
        if wantText && skipDepth == 0 {
            if flags & HTMLTag.skip != 0 || Self.isHidden(attributes) {
                skipDepth = depth
                flags |= Self.openedSkip
            } else {
                if flags & HTMLTag.block != 0 { text.breakLine(flags & HTMLTag.paragraph != 0 ? 2 : 1) }
                if flags & HTMLTag.cell != 0 { text.separate() }
                if flags & HTMLTag.lineBreak != 0 { text.lineBreak() }
                if flags & HTMLTag.pre != 0 {
                    text.startPreformatted()
                    preDepth += 1
                    flags |= Self.openedPre
                }
                if tag.kind == .img || tag.kind == .area, let alt = Self.value(of: "alt", in: attributes) {
                    let bytes = UnsafeBufferPointer(start: alt, count: strlen(alt))
                    if preDepth > 0 { text.appendPreformatted(bytes) } else { text.appendCollapsing(bytes) }
                }
            }
        }
        open.append(flags)
    }

    func end() {
        guard let flags = open.popLast() else { return }
        let depth = open.count + 1
        if flags & Self.openedForeign != 0 { foreignDepth -= 1 }
        if wantText {
            if flags & Self.openedSkip != 0 {
                skipDepth = 0
            } else if skipDepth == 0 {
                if flags & Self.openedPre != 0 { preDepth -= 1 }
                if flags & HTMLTag.block != 0 { text.breakLine(flags & HTMLTag.paragraph != 0 ? 2 : 1) }
            }
        }
        if depth == titleDepth { finishTitle() }
        if depth == headingDepth { finishHeading() }
        if depth == anchorDepth { finishAnchor() }
        if depth == jsonLDDepth { finishJSONLD() }
    }

    /// The content of a `<script>` or `<style>` (libxml2's CDATA blocks): only a JSON-LD script's is kept.
    func rawText(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard jsonLDDepth != 0, !jsonLDTooLong else { return }
        if bytes.count > Self.maxJSONLDBytes - jsonLDText.count {
            jsonLDTooLong = true
            jsonLDText = []
        } else {
            jsonLDText.append(contentsOf: bytes)
        }
    }

    func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        if titleDepth != 0 { titleText.appendCollapsing(bytes) }
        if headingDepth != 0 { headingText.appendCollapsing(bytes) }
        if anchorDepth != 0 { anchorText.appendCollapsing(bytes) }
        if wantText && skipDepth == 0 {
            if preDepth > 0 { text.appendPreformatted(bytes) } else { text.appendCollapsing(bytes) }
        }
    }

    /// Ends what is still open (the parse may have stopped early).
    func finish() {
        if titleDepth != 0 { finishTitle() }
        if headingDepth != 0 { finishHeading() }
        if anchorDepth != 0 { finishAnchor() }
        if jsonLDDepth != 0 { finishJSONLD() }
        text.finish()
        findHeadline()
    }

    /// The headline (docs/decoding.md#headline), kept when it is not empty, differs from `title` and fits the value.
    private func findHeadline() {
        let literal = title.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let found = ArticleTitle.headline(
            title: literal, jsonLD: jsonLD, meta: titleMeta,
            headingMatches: { [headings] text in
                let bytes = Array(text.utf8)
                return headings.contains { $0.level <= 2 && $0.text == bytes }
            },
            h1Count: h1Count, firstH1: firstH1.map { String(decoding: $0, as: UTF8.self) } ?? "")
        guard !found.isEmpty, found != literal else { return }
        let bytes = Self.prefix(Array(found.utf8), maxBytes: Self.maxShortTextBytes)
        if spend(bytes.count) { headline = bytes }
    }

    /// At most `maxBytes` of UTF-8 `bytes`, cut before a character.
    private static func prefix(_ bytes: [UInt8], maxBytes: Int) -> [UInt8] {
        guard bytes.count > maxBytes else { return bytes }
        var end = maxBytes
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return Array(bytes[..<end])
    }

    private func finishJSONLD() {
        if jsonLD == nil && !jsonLDTooLong { jsonLD = ArticleTitle.jsonLD(jsonLDText) }
        jsonLDDepth = 0
        jsonLDText = []
        jsonLDTooLong = false
    }

    // MARK: elements with a field

    private func special(_ tag: HTMLTag, _ attributes: HTMLAttributes, depth: Int) {
        switch tag.kind {
        case .other:
            break
        case .html:
            if lang == nil, let value = Self.value(of: "lang", in: attributes), strlen(value) <= Self.maxShortTextBytes
            {
                let trimmed = Self.trimmed(value)
                if !trimmed.isEmpty && spend(trimmed.count) { lang = trimmed }
            }
        case .title:
            if title == nil && titleDepth == 0 && foreignDepth == 0 {
                titleDepth = depth
                titleText = TextBuilder(limit: Self.maxShortTextBytes)
            }
        case .heading:
            if tag.level == 1 { h1Count += 1 }
            if headingDepth == 0 {
                headingDepth = depth
                headingLevel = Int(tag.level)
                headingText = TextBuilder(limit: Self.maxShortTextBytes)
            }
        case .meta:
            metaTag(attributes)
        case .base:
            guard base == nil, let href = Self.value(of: "href", in: attributes), strlen(href) <= Self.maxBaseURLBytes
            else { return }
            let raw = Self.bytes(href)
            guard let reference = URLReference.linkTarget(raw) else { return }
            let resolved = resolve(reference)
            guard resolved.count <= Self.maxBaseURLBytes, spend(resolved.count) else { return }
            base = resolved
            if URLReference.hasScheme(resolved) { resolutionBase = resolved }
        case .link:
            guard let href = Self.value(of: "href", in: attributes) else { return }
            let rel = Self.value(of: "rel", in: attributes)
            if canonical == nil, let rel, Self.hasToken("canonical", in: rel), strlen(href) <= Self.maxBaseURLBytes,
                let reference = URLReference.linkTarget(Self.bytes(href))
            {
                let resolved = resolve(reference)
                if spend(resolved.count) { canonical = resolved }
            }
            if wantLinks { addLink(href, tag.kind, rel: rel, text: nil) }
        case .a:
            if anchorDepth != 0 { finishAnchor() }
            guard wantLinks, let href = Self.value(of: "href", in: attributes) else { return }
            anchorLink = addLink(href, tag.kind, rel: Self.value(of: "rel", in: attributes), text: nil)
            guard anchorLink >= 0 else { return }
            anchorDepth = depth
            anchorText = TextBuilder(limit: Self.maxShortTextBytes)
        case .area:
            guard wantLinks, let href = Self.value(of: "href", in: attributes), URLReference.isLinkTarget(href) else {
                return
            }
            var alt: [UInt8]?
            if let value = Self.value(of: "alt", in: attributes) {
                var builder = TextBuilder(limit: Self.maxShortTextBytes)
                builder.appendCollapsing(UnsafeBufferPointer(start: value, count: strlen(value)))
                builder.finish()
                if !builder.bytes.isEmpty { alt = builder.bytes }
            }
            addLink(href, tag.kind, rel: Self.value(of: "rel", in: attributes), text: alt)
        case .img, .script, .iframe:
            // Readability reads the first JSON-LD article; the type must be exactly this.
            if tag.kind == .script, jsonLD == nil, let type = Self.value(of: "type", in: attributes),
                Self.equals(type, "application/ld+json")
            {
                jsonLDDepth = depth
                jsonLDText = []
                jsonLDTooLong = false
            }
            guard wantLinks, let src = Self.value(of: "src", in: attributes) else { return }
            addLink(src, tag.kind, rel: nil, text: nil)
            if tag.kind == .img, anchorDepth != 0, let alt = Self.value(of: "alt", in: attributes) {
                anchorText.appendCollapsing(UnsafeBufferPointer(start: alt, count: strlen(alt)))
            }
        case .form:
            guard wantLinks, let action = Self.value(of: "action", in: attributes) else { return }
            addLink(action, tag.kind, rel: nil, text: nil)
        }
    }

    /// `<meta name|property|http-equiv content>`: the key lowercased (each term of a `property` list is a key), the
    /// first occurrence of a key wins.
    private func metaTag(_ attributes: HTMLAttributes) {
        var content: UnsafePointer<UInt8>?
        var keys: [UInt8] = []
        var isProperty = false
        var nameAttribute: UnsafePointer<UInt8>?
        var propertyAttribute: UnsafePointer<UInt8>?
        for (name, value) in attributes {
            guard let value else { continue }
            if Self.equals(name, "content") {
                content = value
            } else if Self.equals(name, "name") || Self.equals(name, "http-equiv") {
                if keys.isEmpty { keys = Self.trimmed(value) }
                if nameAttribute == nil && name[0] == UInt8(ascii: "n") { nameAttribute = value }
            } else if Self.equals(name, "property") {
                if keys.isEmpty {
                    keys = Self.trimmed(value)
                    isProperty = true
                }
                if propertyAttribute == nil { propertyAttribute = value }
            }
        }
        if let content, content[0] != 0,
            propertyAttribute.map(Self.mentionsTitle) == true || nameAttribute.map(Self.mentionsTitle) == true,
            let slot = ArticleTitle.metaSlot(
                name: nameAttribute.map(Self.bytes), property: propertyAttribute.map(Self.bytes))
        {
            // Readability keeps the last tag of a slot, trimmed (docs/decoding.md#headline).
            let value = ArticleTitle.trimmed(String(decoding: Self.bytes(content), as: UTF8.self))
            titleMeta[slot] = String(
                decoding: Self.prefix(Array(value.utf8), maxBytes: Self.maxShortTextBytes), as: UTF8.self)
        }
        guard let content, !keys.isEmpty else { return }
        let value = Self.bytes(content)
        let lowered = keys.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        let terms = isProperty ? lowered.split(whereSeparator: TextBuilder.isSpace).map(Array.init) : [lowered]
        for key in terms where !key.isEmpty && !metaKeys.contains(key) {
            guard spend(key.count + value.count + 8) else {
                metaTruncated = true
                return
            }
            metaKeys.insert(key)
            meta.append((key, value))
        }
    }

    /// Lists a link (or only counts it past the limits); returns its index in `links`, or -1.
    @discardableResult
    private func addLink(
        _ attribute: UnsafePointer<UInt8>, _ kind: HTMLTag.Kind, rel: UnsafePointer<UInt8>?, text: [UInt8]?
    ) -> Int {
        // Past the limit a link is only counted, without copying anything.
        guard URLReference.isLinkTarget(attribute) else { return -1 }
        linksTotal += 1
        // Once the count or the value's bytes are spent, no later link is listed; a link that is only too long is
        // left out on its own (docs/decoding.md#links).
        guard links.count < maxLinks, !linkBudgetSpent else {
            linkBudgetSpent = true
            linksTruncated = true
            return -1
        }
        let length = strlen(attribute)
        guard length <= Self.maxURLBytes else {
            linksTruncated = true
            return -1
        }
        let raw = UnsafeBufferPointer(start: attribute, count: length)
        var relBytes = rel.map(Self.trimmedBuffer).flatMap { $0.isEmpty ? nil : $0 }
        if let value = relBytes, value.count > Self.maxShortTextBytes { relBytes = nil }
        if URLReference.isPlain(raw) {
            // Nothing to clean or escape (the common case): the target is the attribute itself, and libxml2 resolves
            // it in place, NUL-terminated as it is.
            if let base = resolutionBase, !URLReference.hasScheme(raw) {
                // `/path?query`, the most common relative link: libxml2 gives the base's scheme and authority, then
                // the reference as it is, so it is asked once per base (docs/html-parser.md#cost).
                if URLReference.isCopiedAbsolutePath(raw), let prefix = absolutePathPrefix(base) {
                    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: prefix.count + raw.count) { url in
                        _ = url.initialize(fromContentsOf: prefix)
                        _ = UnsafeMutableBufferPointer(rebasing: url[prefix.count...]).initialize(fromContentsOf: raw)
                        return storeLink(url: UnsafeBufferPointer(url), raw: raw, kind, rel: relBytes, text: text)
                    }
                }
                return LibXML2HTML.withResolved(attribute, against: base) { resolved in
                    storeLink(url: resolved ?? raw, raw: raw, kind, rel: relBytes, text: text)
                }
            }
            return storeLink(url: raw, raw: raw, kind, rel: relBytes, text: text)
        }
        guard let reference = URLReference.linkTarget(Array(raw)) else { return -1 }
        return resolve(reference).withUnsafeBufferPointer { url in
            storeLink(url: url, raw: raw, kind, rel: relBytes, text: text)
        }
    }

    /// Lists a link whose target resolved to `url`, when it fits `maxValueBytes`; returns its index in `links`, or -1.
    private func storeLink(
        url: UnsafeBufferPointer<UInt8>, raw: UnsafeBufferPointer<UInt8>, _ kind: HTMLTag.Kind,
        rel: UnsafeBufferPointer<UInt8>?, text: [UInt8]?
    ) -> Int {
        let same = url.count == raw.count && (url.isEmpty || memcmp(url.baseAddress!, raw.baseAddress!, url.count) == 0)
        guard spend(url.count + (same ? 0 : raw.count) + (rel?.count ?? 0) + (text?.count ?? 0) + 40) else {
            linkBudgetSpent = true
            linksTruncated = true
            return -1
        }
        let urlRange = store(url)
        let hrefRange = same ? nil : store(raw)
        let relRange = rel.map(store)
        let textRange = text.map { $0.withUnsafeBufferPointer(store) }
        links.append(Link(url: urlRange, href: hrefRange, element: kind, rel: relRange, text: textRange))
        return links.count - 1
    }

    /// Appends `bytes` to `linkBytes`; returns where they are.
    private func store(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        let start = linkBytes.count
        linkBytes.append(contentsOf: bytes)
        return start..<linkBytes.count
    }

    /// ``pathPrefix`` for `base`, the current `resolutionBase`; nil when libxml2 gives none.
    private func absolutePathPrefix(_ base: [UInt8]) -> [UInt8]? {
        if pathPrefix == nil { pathPrefix = Self.pathPrefix(of: base) }
        return pathPrefix!.isEmpty ? nil : pathPrefix
    }

    /// What libxml2 writes before the path of an absolute-path reference resolved against `base`: its resolution of
    /// `/` without the `/`; empty when it gives none.
    static func pathPrefix(of base: [UInt8]) -> [UInt8] {
        let slash = LibXML2HTML.resolve([0x2F], against: base)
        return slash.flatMap { $0.count > 1 && $0.last == 0x2F ? Array($0.dropLast()) : nil } ?? []
    }

    private func resolve(_ reference: [UInt8]) -> [UInt8] {
        guard let base = resolutionBase else { return reference }
        // A reference with a scheme is absolute: libxml2 2.9's `xmlBuildURI` returns it as it is (or nil when it does
        // not parse), so it is the link either way and libxml2 is not asked (most of a page's links are absolute;
        // docs/html-parser.md#cost).
        if URLReference.hasScheme(reference) { return reference }
        return LibXML2HTML.resolve(reference, against: base) ?? reference
    }

    private func finishTitle() {
        titleText.finish()
        title = titleText.bytes
        if !spend(title!.count) { title = [] }
        titleDepth = 0
        titleText = TextBuilder(limit: 0)
    }

    private func finishHeading() {
        headingText.finish()
        if headingLevel == 1 && firstH1 == nil { firstH1 = headingText.bytes }
        if !headingText.bytes.isEmpty {
            if spend(headingText.bytes.count + 24) {
                headings.append((headingLevel, headingText.bytes))
            } else {
                headingsTruncated = true
            }
        }
        headingDepth = 0
        headingText = TextBuilder(limit: 0)
    }

    private func finishAnchor() {
        anchorText.finish()
        if anchorLink >= 0 && !anchorText.bytes.isEmpty && spend(anchorText.bytes.count) {
            links[anchorLink].text = anchorText.bytes.withUnsafeBufferPointer(store)
        }
        anchorDepth = 0
        anchorLink = -1
        anchorText = TextBuilder(limit: 0)
    }

    /// Counts `bytes` against `maxValueBytes`; false when they do not fit.
    private func spend(_ bytes: Int) -> Bool {
        guard bytes <= maxValueBytes - valueBytes else { return false }
        valueBytes += bytes
        return true
    }

    // MARK: attributes

    /// Whether the element is hidden from rendering by its attributes: `hidden`, `aria-hidden="true"`, or an inline
    /// style with `display: none` or `visibility: hidden`.
    private static func isHidden(_ attributes: HTMLAttributes) -> Bool {
        var hidden = false
        for (name, value) in attributes {
            switch name[0] {
            case 0x68 where equals(name, "hidden"): // h
                hidden = true
            case 0x61 where equals(name, "aria-hidden"): // a
                if let value, trimmed(value).map({ $0 | 0x20 }) == Array("true".utf8) { hidden = true }
            case 0x73 where equals(name, "style"): // s
                if let value, styleHides(value) { hidden = true }
            default:
                break
            }
        }
        return hidden
    }

    /// Whether an inline style declares `display:none` or `visibility:hidden` (white space and case ignored).
    private static func styleHides(_ value: UnsafePointer<UInt8>) -> Bool {
        var i = 0
        while value[i] != 0 {
            switch value[i] | 0x20 {
            case 0x64 where matches(value + i, "display:none"): return true // d
            case 0x76 where matches(value + i, "visibility:hidden"): return true // v
            default: i += 1
            }
        }
        return false
    }

    /// Whether `string` starts with `pattern` (lowercase) when white space is skipped and ASCII letters are
    /// lowercased.
    private static func matches(_ string: UnsafePointer<UInt8>, _ pattern: StaticString) -> Bool {
        var i = 0
        for k in 0..<pattern.utf8CodeUnitCount {
            while TextBuilder.isSpace(string[i]) { i += 1 }
            let byte = string[i]
            guard (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == pattern.utf8Start[k] else { return false }
            i += 1
        }
        return true
    }

    /// Whether `string` holds `title` (ASCII case ignored): a meta tag that fills a title slot does.
    private static func mentionsTitle(_ string: UnsafePointer<UInt8>) -> Bool {
        var i = 0
        while string[i] != 0 {
            if string[i] | 0x20 == UInt8(ascii: "t"), string[i + 1] | 0x20 == UInt8(ascii: "i"),
                string[i + 2] | 0x20 == UInt8(ascii: "t"), string[i + 3] | 0x20 == UInt8(ascii: "l"),
                string[i + 4] | 0x20 == UInt8(ascii: "e")
            {
                return true
            }
            i += 1
        }
        return false
    }

    /// Every attribute this extractor reads (by ``value(of:in:)``, `metaTag` and `isHidden`). libxml2 is not given
    /// the others (``HTMLAttributeScan``, docs/html-parser.md#cost): an attribute read here must be listed here.
    static let readAttributes: [StaticString] = [
        "action", "alt", "aria-hidden", "content", "hidden", "href", "http-equiv", "lang", "name", "property", "rel",
        "src", "style", "type",
    ]

    /// The value of the first attribute called `name` (lowercase); nil when absent or without a value.
    static func value(of name: StaticString, in attributes: HTMLAttributes) -> UnsafePointer<UInt8>? {
        assert(readAttributes.contains { $0.description == name.description }, "\(name) is not in readAttributes")
        for (attribute, value) in attributes where equals(attribute, name) { return value }
        return nil
    }

    @inline(__always)
    static func equals(_ string: UnsafePointer<UInt8>, _ name: StaticString) -> Bool {
        // Byte by byte: `string` may be shorter than `name` (its NUL then differs first), so nothing past it is read.
        let n = name.utf8CodeUnitCount
        let expected = name.utf8Start
        for i in 0..<n where string[i] != expected[i] { return false }
        return string[n] == 0
    }

    static func bytes(_ string: UnsafePointer<UInt8>) -> [UInt8] {
        Array(UnsafeBufferPointer(start: string, count: strlen(string)))
    }

    /// The value without ASCII white space at either end.
    static func trimmed(_ string: UnsafePointer<UInt8>) -> [UInt8] {
        let all = UnsafeBufferPointer(start: string, count: strlen(string))
        guard let first = all.firstIndex(where: { !TextBuilder.isSpace($0) }) else { return [] }
        let last = all.lastIndex(where: { !TextBuilder.isSpace($0) })!
        return Array(all[first...last])
    }

    /// The value without ASCII white space at either end, in place.
    static func trimmedBuffer(_ string: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        while TextBuilder.isSpace(string[start]) { start += 1 }
        var end = start + strlen(string + start)
        while end > start && TextBuilder.isSpace(string[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(start: string + start, count: end - start)
    }

    /// Whether a space-separated token list holds `token` (ASCII case-insensitive).
    static func hasToken(_ token: StaticString, in list: UnsafePointer<UInt8>) -> Bool {
        let wanted = UnsafeBufferPointer(start: token.utf8Start, count: token.utf8CodeUnitCount)
        let all = UnsafeBufferPointer(start: list, count: strlen(list))
        for word in all.split(whereSeparator: TextBuilder.isSpace)
        where word.count == wanted.count && zip(word, wanted).allSatisfy({ $0 | 0x20 == $1 }) {
            return true
        }
        return false
    }
}

private func strlen(_ string: UnsafePointer<UInt8>) -> Int {
    Glibc.strlen(UnsafeRawPointer(string).assumingMemoryBound(to: CChar.self))
}

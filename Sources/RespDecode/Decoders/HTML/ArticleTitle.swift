/// The article's title as Mozilla Readability derives it (docs/decoding.md#headline): the html value's `headline`.
///
/// Readability prefers, in this order: the `name` or `headline` of the page's first schema.org article in JSON-LD,
/// then title meta tags (``MetaSlot``), then a heuristic on the `<title>` text that drops a site name after a
/// separator (``fromTitle(_:headingMatches:h1Count:firstH1:)``). This is our own code, written from the description
/// of that algorithm; it keeps Readability's JavaScript semantics where they decide the outcome (JavaScript's `\s`
/// for white space, word counts that count empty pieces, UTF-16 lengths, ASCII-only word tokens for similarity).
enum ArticleTitle {
    /// The title meta tags, in Readability's order of preference.
    enum MetaSlot: Int, CaseIterable {
        case dcTitle, dctermTitle, ogTitle, weiboArticleTitle, weiboWebpageTitle, title, twitterTitle, parselyTitle
    }

    /// The title meta tags of a page: per slot, the trimmed `content` of the last tag of that slot (Readability keeps
    /// the last one; an empty one counts as none).
    struct Meta {
        var values = [String?](repeating: nil, count: MetaSlot.allCases.count)

        subscript(slot: MetaSlot) -> String? {
            get { values[slot.rawValue] }
            set { values[slot.rawValue] = newValue }
        }

        /// The first non-empty value in the order of preference.
        var preferred: String? {
            values.lazy.compactMap { $0 }.first { !$0.isEmpty }
        }
    }

    /// The `name` and `headline` strings of the first schema.org article found in a page's JSON-LD.
    struct JSONLD: Equatable {
        var name: String?
        var headline: String?
    }

    // MARK: the choice

    /// The article title: the JSON-LD article's, else the preferred meta tag's, else the `<title>` heuristic; then
    /// character references left in it are decoded once more (``unescapeEntities(_:)``). Empty when there is none.
    static func headline(
        title: String, jsonLD: JSONLD?, meta: Meta, headingMatches: (String) -> Bool, h1Count: Int, firstH1: String
    ) -> String {
        func heuristic() -> String {
            fromTitle(title, headingMatches: headingMatches, h1Count: h1Count, firstH1: firstH1)
        }
        var chosen = ""
        if let jsonLD { chosen = choose(jsonLD, heuristic: heuristic) }
        if chosen.isEmpty, let value = meta.preferred { chosen = value }
        if chosen.isEmpty { chosen = heuristic() }
        return unescapeEntities(chosen)
    }

    /// A JSON-LD article's title: `name` (trimmed), else `headline` (trimmed). When both are there and differ (some
    /// sites put their own name in `name`), `headline` wins only if it resembles the `<title>` heuristic's result
    /// (similarity over 0.75) and `name` does not; then neither is trimmed, as in Readability.
    static func choose(_ jsonLD: JSONLD, heuristic: () -> String) -> String {
        switch (jsonLD.name, jsonLD.headline) {
        case (let name?, let headline?) where name != headline:
            let title = heuristic()
            let nameMatches = similarity(name, title) > 0.75
            let headlineMatches = similarity(headline, title) > 0.75
            return headlineMatches && !nameMatches ? headline : name
        case (let name?, _):
            return trimmed(name)
        case (nil, let headline?):
            return trimmed(headline)
        case (nil, nil):
            return ""
        }
    }

    // MARK: the <title> heuristic

    /// The separators that may stand between an article's title and a site's name, each with white space on both
    /// sides.
    static let separators: Set<Unicode.Scalar> = ["|", "-", "\u{2013}", "\u{2014}", "\\", "/", ">", "\u{BB}"]
    /// The separators that suggest a hierarchy (`Site » Section » Title`) rather than a site-name suffix.
    static let hierarchicalSeparators: Set<Unicode.Scalar> = ["\\", "/", ">", "\u{BB}"]

    /// Readability's title heuristic on the `<title>` text `title` (white space already collapsed):
    /// 1. with a separator between spaces (` | `, ` - `, ` – `, ` — `, ` \ `, ` / `, ` > `, ` » `): the text before
    ///    the last one; if that has fewer than 3 words, the text after the first separator character instead;
    /// 2. else with `: `: unless an `h1` or `h2` has exactly the title's text, the text after the last colon; if that
    ///    has fewer than 3 words, the text after the first colon; but the whole title if more than 5 words precede
    ///    the first colon;
    /// 3. else, when the title is shorter than 15 or longer than 150 UTF-16 units and the page has exactly one `h1`,
    ///    that heading's text;
    /// then white space is trimmed and runs of it become one space; and a result of at most 4 words gives way to the
    /// whole title, unless the title had hierarchical separators and the result has exactly one word less than the
    /// title without its separators.
    static func fromTitle(_ title: String, headingMatches: (String) -> Bool, h1Count: Int, firstH1: String) -> String {
        let original = Array(trimmed(title).unicodeScalars)
        var current = original
        var hierarchical = false
        let separatorMatches = matches(in: original) { separators.contains($0) }
        if let last = separatorMatches.last {
            hierarchical = !matches(in: original, where: { hierarchicalSeparators.contains($0) }).isEmpty
            current = Array(original[..<last])
            if wordCount(current) < 3 {
                // The text after the first separator character (spaces around it or not).
                let first = original.firstIndex { separators.contains($0) }!
                current = Array(original[(first + 1)...])
            }
        } else if original.indices.dropLast().contains(where: { original[$0] == ":" && original[$0 + 1] == " " }) {
            if !headingMatches(String(String.UnicodeScalarView(original))) {
                let lastColon = original.lastIndex(of: ":")!
                let firstColon = original.firstIndex(of: ":")!
                current = Array(original[(lastColon + 1)...])
                if wordCount(current) < 3 {
                    current = Array(original[(firstColon + 1)...])
                } else if wordCount(original[..<firstColon]) > 5 {
                    current = original
                }
            }
        } else {
            let length = String(String.UnicodeScalarView(original)).utf16.count
            if (length > 150 || length < 15) && h1Count == 1 {
                current = Array(trimmed(firstH1).unicodeScalars)
            }
        }
        current = normalized(current)
        let words = wordCount(current)
        if words <= 4 {
            let withoutSeparators = removingMatches(in: original) { separators.contains($0) }
            if !hierarchical || words != wordCount(withoutSeparators) - 1 {
                current = original
            }
        }
        return String(String.UnicodeScalarView(current))
    }

    /// Where `<space><separator><space>` occurs, left to right without overlap: the offsets of the first space.
    private static func matches(in text: [Unicode.Scalar], where isSeparator: (Unicode.Scalar) -> Bool) -> [Int] {
        var found: [Int] = []
        var i = 0
        while i + 2 < text.count {
            if isSpace(text[i]) && isSeparator(text[i + 1]) && isSpace(text[i + 2]) {
                found.append(i)
                i += 3
            } else {
                i += 1
            }
        }
        return found
    }

    /// `text` without its `<space><separator><space>` matches.
    private static func removingMatches(
        in text: [Unicode.Scalar], where isSeparator: (Unicode.Scalar) -> Bool
    ) -> [Unicode.Scalar] {
        var result: [Unicode.Scalar] = []
        var i = 0
        for start in matches(in: text, where: isSeparator) {
            result += text[i..<start]
            i = start + 3
        }
        result += text[i...]
        return result
    }

    /// The count of pieces `text` splits into at runs of white space, empty pieces at either end included (so
    /// `" a"` has 2 and `""` has 1), as Readability counts words.
    static func wordCount<C: Collection<Unicode.Scalar>>(_ text: C) -> Int {
        var count = 1
        var inSpace = false
        for scalar in text {
            let space = isSpace(scalar)
            if space && !inSpace { count += 1 }
            inSpace = space
        }
        return count
    }

    /// Trimmed, with every run of two or more white space characters made one space (a single one is kept as is).
    private static func normalized(_ text: [Unicode.Scalar]) -> [Unicode.Scalar] {
        let text = Array(trimmed(String(String.UnicodeScalarView(text))).unicodeScalars)
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(text.count)
        var i = 0
        while i < text.count {
            if isSpace(text[i]) && i + 1 < text.count && isSpace(text[i + 1]) {
                while i < text.count && isSpace(text[i]) { i += 1 }
                result.append(" ")
            } else {
                result.append(text[i])
                i += 1
            }
        }
        return result
    }

    // MARK: similarity

    /// How much of `b`'s wording is also in `a`, from 0 to 1: `b`'s lowercased ASCII word tokens (letters, digits,
    /// `_`; anything else separates) that are not in `a`, joined by spaces, measured against all of `b`'s joined, and
    /// subtracted from 1. 0 when either has no token.
    static func similarity(_ a: String, _ b: String) -> Double {
        let tokensA = Set(tokens(a))
        let tokensB = tokens(b)
        guard !tokensA.isEmpty, !tokensB.isEmpty else { return 0 }
        func joinedLength(_ words: [Substring]) -> Int {
            words.reduce(0) { $0 + $1.utf16.count } + max(words.count - 1, 0)
        }
        let unique = tokensB.filter { !tokensA.contains($0) }
        return 1 - Double(joinedLength(unique)) / Double(joinedLength(tokensB))
    }

    private static func tokens(_ text: String) -> [Substring] {
        text.lowercased().split { character in
            // JavaScript's `\W` without the `u` flag: anything but ASCII letters, digits and `_` (per UTF-16 unit;
            // a character made of several scalars separates when any of them is not a word character).
            character.unicodeScalars.contains { scalar in
                !(("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "_")
            }
        }
    }

    // MARK: meta tags

    /// The slot a `<meta>` fills, by Readability's rules:
    /// - a `property` is searched for the first `prefix:field` (prefixes `article`, `dc`, `dcterm`, `og`, `twitter`;
    ///   fields `author`, `creator`, `description`, `published_time`, `title`, `site_name`; ASCII case ignored, white
    ///   space allowed around the colon); a found one decides (a slot when it is a title), and `name` is not read;
    /// - else a `name` must be, as a whole (white space at either end, and around the separator, allowed), `title` or
    ///   `prefix` `[-.:]` `title` with the prefixes `dc`, `dcterm`, `og`, `twitter`, `parsely`, `weibo:article`,
    ///   `weibo:webpage`; `.` counts as `:`.
    static func metaSlot(name: [UInt8]?, property: [UInt8]?) -> MetaSlot? {
        if let property {
            let (found, slot) = propertySlot(lowercased(property))
            if found { return slot }
        }
        guard let name else { return nil }
        return nameSlot(lowercased(name))
    }

    private static let propertyPrefixes: [(word: [UInt8], slot: MetaSlot?)] = [
        (Array("article".utf8), nil), (Array("dc".utf8), .dcTitle), (Array("dcterm".utf8), .dctermTitle),
        (Array("og".utf8), .ogTitle), (Array("twitter".utf8), .twitterTitle),
    ]
    private static let propertyFields: [[UInt8]] = [
        "author", "creator", "description", "published_time", "title", "site_name",
    ].map { Array($0.utf8) }

    /// Whether a `prefix:field` was found in `property`, and the slot when its field is `title`.
    private static func propertySlot(_ property: [UInt8]) -> (found: Bool, slot: MetaSlot?) {
        for start in property.indices {
            for prefix in propertyPrefixes where hasPrefix(property, prefix.word, at: start) {
                var i = skipSpaces(property, from: start + prefix.word.count)
                guard i < property.count, property[i] == UInt8(ascii: ":") else { continue }
                i = skipSpaces(property, from: i + 1)
                for field in propertyFields where hasPrefix(property, field, at: i) {
                    return (true, field == Array("title".utf8) ? prefix.slot : nil)
                }
            }
        }
        return (false, nil)
    }

    private static let namePrefixes: [(word: [UInt8], colon: MetaSlot?, dash: MetaSlot?)] = [
        (Array("dc".utf8), .dcTitle, nil), (Array("dcterm".utf8), .dctermTitle, nil), (Array("og".utf8), .ogTitle, nil),
        (Array("twitter".utf8), .twitterTitle, nil), (Array("parsely".utf8), nil, .parselyTitle),
        (Array("weibo:article".utf8), .weiboArticleTitle, nil), (Array("weibo:webpage".utf8), .weiboWebpageTitle, nil),
    ]

    private static func nameSlot(_ name: [UInt8]) -> MetaSlot? {
        let title = Array("title".utf8)
        var end = name.count
        while end > 0 && isASCIISpace(name[end - 1]) { end -= 1 }
        let start = skipSpaces(name, from: 0)
        guard start < end else { return nil }
        let name = Array(name[start..<end])
        if name == title { return .title }
        for prefix in namePrefixes where hasPrefix(name, prefix.word, at: 0) {
            let i = skipSpaces(name, from: prefix.word.count)
            guard i < name.count else { continue }
            let separator = name[i]
            guard separator == UInt8(ascii: "-") || separator == UInt8(ascii: ".") || separator == UInt8(ascii: ":")
            else { continue }
            let j = skipSpaces(name, from: i + 1)
            guard name[j...].elementsEqual(title) else { continue }
            return separator == UInt8(ascii: "-") ? prefix.dash : prefix.colon
        }
        return nil
    }

    private static func lowercased(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    }

    private static func hasPrefix(_ text: [UInt8], _ word: [UInt8], at start: Int) -> Bool {
        start + word.count <= text.count && text[start..<start + word.count].elementsEqual(word)
    }

    private static func skipSpaces(_ text: [UInt8], from start: Int) -> Int {
        var i = start
        while i < text.count && isASCIISpace(text[i]) { i += 1 }
        return i
    }

    /// JavaScript's `\s` within ASCII: tab, line feed, vertical tab, form feed, carriage return, space.
    private static func isASCIISpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
    }

    // MARK: JSON-LD

    /// The result of one `<script type="application/ld+json">`: its article's `name` and `headline`, or nil when it
    /// holds no schema.org article (Readability then tries the next script):
    /// - the text, without a `<![CDATA[` … `]]>` wrapper, must parse as JSON;
    /// - a top-level array stands for its first element whose `@type` is an article type;
    /// - `@context` must be `http(s)://schema.org` (with or without a final `/`), or an object whose `@vocab` is;
    /// - an object without `@type` but with a `@graph` array stands for the graph's first article;
    /// - the `@type` must be an article type (``isArticleType(_:)``); a `@type` that is not a string (a list) is
    ///   not one.
    static func jsonLD(_ text: [UInt8]) -> JSONLD? {
        var start = 0
        var end = text.count
        while start < end && isASCIISpace(text[start]) { start += 1 }
        while end > start && isASCIISpace(text[end - 1]) { end -= 1 }
        let open = Array("<![CDATA[".utf8)
        let close = Array("]]>".utf8)
        if hasPrefix(text, open, at: start) { start += open.count }
        if end - start >= close.count && text[(end - close.count)..<end].elementsEqual(close) { end -= close.count }
        guard start < end else { return nil }
        let parsed: JSONValue
        do {
            parsed = try text.withUnsafeBufferPointer { buffer throws(JSONValue.ParseError) in
                try JSONValue.parse(UnsafeBufferPointer(rebasing: buffer[start..<end]), maxDepth: maxJSONLDDepth)
            }
        } catch {
            return nil
        }
        return article(in: parsed)
    }

    /// How deep a JSON-LD text may nest (schema.org graphs need a handful of levels).
    static let maxJSONLDDepth = 64

    static func article(in parsed: JSONValue) -> JSONLD? {
        var object = parsed
        if case .array(let items) = parsed {
            guard let found = firstArticle(in: items) else { return nil }
            object = found
        }
        guard case .object = object else { return nil }
        var isSchemaOrg = false
        switch object["@context"] {
        case .string(let context)?:
            isSchemaOrg = isSchemaOrgURL(context)
        case .object?:
            isSchemaOrg = object["@context"]?["@vocab"]?.stringValue.map(isSchemaOrgURL) ?? false
        case .null?:
            return nil
        default:
            break
        }
        guard isSchemaOrg else { return nil }
        if object["@type"].map(isTruthy) != true, case .array(let graph)? = object["@graph"] {
            guard let found = firstArticle(in: graph) else { return nil }
            object = found
        }
        guard let type = object["@type"]?.stringValue, isArticleType(type) else { return nil }
        return JSONLD(name: object["name"]?.stringValue, headline: object["headline"]?.stringValue)
    }

    /// The first item of a JSON-LD array or `@graph` with an article `@type`; nil when there is none, or when a null
    /// item or an item whose `@type` is there but not a string stops the search first (Readability's lookup throws).
    private static func firstArticle(in items: [JSONValue]) -> JSONValue? {
        for item in items {
            if case .null = item { return nil }
            guard let type = item["@type"], isTruthy(type) else { continue }
            guard let name = type.stringValue else { return nil }
            if isArticleType(name) { return item }
        }
        return nil
    }

    /// JavaScript's truthiness of a JSON value.
    private static func isTruthy(_ value: JSONValue) -> Bool {
        switch value {
        case .null: false
        case .bool(let flag): flag
        case .string(let text): !text.isEmpty
        case .number(let text): Double(text).map { $0 != 0 && !$0.isNaN } ?? true
        case .array, .object: true
        }
    }

    private static func isSchemaOrgURL(_ text: String) -> Bool {
        ["http://schema.org", "http://schema.org/", "https://schema.org", "https://schema.org/"].contains(text)
    }

    /// The schema.org types Readability takes for an article. Its pattern is anchored only at its ends, so a type
    /// that begins with `Article`, contains one of the other names, or ends with `APIReference` is one.
    static func isArticleType(_ type: String) -> Bool {
        type.hasPrefix("Article") || type.hasSuffix("APIReference")
            || articleTypeNames.contains { type.contains($0) }
    }

    private static let articleTypeNames = [
        "AdvertiserContentArticle", "NewsArticle", "AnalysisNewsArticle", "AskPublicNewsArticle",
        "BackgroundNewsArticle", "OpinionNewsArticle", "ReportageNewsArticle", "ReviewNewsArticle", "Report",
        "SatiricalArticle", "ScholarlyArticle", "MedicalScholarlyArticle", "SocialMediaPosting", "BlogPosting",
        "LiveBlogPosting", "DiscussionForumPosting", "TechArticle",
    ]

    // MARK: text

    /// JavaScript's `\s`: ASCII white space, vertical tab, no-break spaces, the Unicode space separators, line and
    /// paragraph separators, and the byte order mark.
    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF: true
        default: false
        }
    }

    /// `text` without JavaScript white space at either end.
    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = scalars.lastIndex { !isSpace($0) }!
        return String(scalars[first...last])
    }

    /// Decodes `&quot;`, `&amp;`, `&apos;`, `&lt;`, `&gt;` and numeric references (`&#8211;`, `&#x2013;`; zero,
    /// surrogates and values past U+10FFFF become U+FFFD) still in the text: the parser has decoded the page's
    /// references once; Readability decodes these again, for titles a site escaped twice.
    static func unescapeEntities(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        let named: [String: Unicode.Scalar] = ["quot": "\"", "amp": "&", "apos": "'", "lt": "<", "gt": ">"]
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        // Named references first, then numeric ones, each in one pass over the text, as Readability does.
        var afterNamed: [Unicode.Scalar] = []
        var i = 0
        while i < scalars.count {
            if scalars[i] == "&", let semicolon = scalars[(i + 1)...].prefix(6).firstIndex(of: ";"),
                let scalar = named[String(String.UnicodeScalarView(scalars[(i + 1)..<semicolon]))]
            {
                afterNamed.append(scalar)
                i = semicolon + 1
            } else {
                afterNamed.append(scalars[i])
                i += 1
            }
        }
        i = 0
        while i < afterNamed.count {
            if afterNamed[i] == "&", i + 2 < afterNamed.count, afterNamed[i + 1] == "#",
                let (value, next) = numericReference(afterNamed, from: i + 2)
            {
                result.append(value)
                i = next
            } else {
                result.append(afterNamed[i])
                i += 1
            }
        }
        return String(result)
    }

    private static func asciiDigit(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar {
        case "0"..."9": scalar.value - 0x30
        case "a"..."f": scalar.value - 0x61 + 10
        case "A"..."F": scalar.value - 0x41 + 10
        default: nil
        }
    }

    /// A numeric reference's value after `&#`, and the offset after its `;`.
    private static func numericReference(_ text: [Unicode.Scalar], from start: Int) -> (Unicode.Scalar, Int)? {
        var i = start
        var radix: UInt32 = 10
        if text[i] == "x" || text[i] == "X" {
            radix = 16
            i += 1
        }
        let digitsStart = i
        var value: UInt32 = 0
        var overflow = false
        while i < text.count, let digit = asciiDigit(text[i]), digit < radix {
            if !overflow {
                let (product, o1) = value.multipliedReportingOverflow(by: radix)
                let (sum, o2) = product.addingReportingOverflow(digit)
                overflow = o1 || o2
                value = sum
            }
            i += 1
        }
        guard i > digitsStart, i < text.count, text[i] == ";" else { return nil }
        if overflow || value == 0 || value > 0x10FFFF || (0xD800...0xDFFF).contains(value) { value = 0xFFFD }
        return (Unicode.Scalar(value)!, i + 1)
    }
}

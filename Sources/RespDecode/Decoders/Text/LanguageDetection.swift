// Links libcld2 and libicuuc (their modules declare nothing; CShims/cld2.cpp calls them).
internal import CCLD2
internal import CICU
internal import CShims

/// The languages of a text, detected with CLD2 (Compact Language Detector 2, Debian's libcld2) as Common Crawl
/// detects them for its index's `content_languages` (docs/decoding.md#language).
///
/// Reentrant: CLD2 keeps a detection's state on the stack and only reads its tables (its header's design goals say
/// "thread safe"; LanguageDetectionTests runs detections concurrently), and ICU's `uloc_getISO3Language` returns
/// pointers into constant tables. Call it from any number of workers at once.
public enum LanguageDetection {
    /// Bytes of a text CLD2 examines at most: the first MiB, cut before a UTF-8 lead byte. CLD2 scans all it is
    /// given, at about 30 MB/s on the machine of this change (60 MB took 1.9 s), and the first MiB of a page says
    /// its language as well as the rest (docs/decoding.md#language).
    public static let maxExaminedBytes = 1 << 20

    /// Fewer letter bytes than this and no language is reported (CLD2 guesses from very little text); Common
    /// Crawl's threshold.
    public static let minTextBytes = 10

    /// A language covering less than this percentage of the text is not reported; Common Crawl's threshold.
    public static let minPercent = 2

    /// What is known of a text besides its bytes, which CLD2 weighs in (docs/decoding.md#language).
    public struct Hints: Sendable, Equatable {
        /// A `Content-Language` header's value (`"en, fr"`), or an HTML `lang`. CLD2 boosts the languages named.
        public var contentLanguage: String?
        /// The top-level domain of the page's host, without its dot (`"de"`). CLD2 boosts its usual languages.
        public var topLevelDomain: String?

        public init(contentLanguage: String? = nil, topLevelDomain: String? = nil) {
            self.contentLanguage = contentLanguage
            self.topLevelDomain = topLevelDomain
        }

        /// Hints with the top-level domain of `url`'s host (none for an IP address or a host without a dot).
        public init(contentLanguage: String? = nil, url: String?) {
            self.init(contentLanguage: contentLanguage, topLevelDomain: url.flatMap(Self.topLevelDomain(ofURL:)))
        }

        /// The last label of an absolute URL's host, lowercased, when it is letters only (`"de"`, `"com"`).
        public static func topLevelDomain(ofURL url: String) -> String? {
            var rest = Substring(url)
            guard let scheme = rest.firstRange(of: "://") else { return nil }
            rest = rest[scheme.upperBound...]
            if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
            if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
            if rest.hasPrefix("[") { return nil } // an IPv6 address
            if let colon = rest.firstIndex(of: ":") { rest = rest[..<colon] }
            if rest.hasSuffix(".") { rest = rest.dropLast() } // a fully qualified name
            guard let dot = rest.lastIndex(of: ".") else { return nil }
            let label = rest[rest.index(after: dot)...]
            guard !label.isEmpty, label.count <= 63, label.utf8.allSatisfy({ $0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A })
            else { return nil }
            return label.lowercased()
        }
    }

    /// One detected language.
    public struct Language: Sendable, Equatable {
        /// CLD2's code: ISO 639-1 mostly (`"en"`), else ISO 639-2 (`"chr"`) or CLD2's own (`"zh-Hant"`, `"sr-ME"`;
        /// `"iw"` for Hebrew and `"jw"` for Javanese, the old 639-1 codes). `"xx-Latn"` and the like: text in a
        /// script CLD2 knows no language of.
        public var code: String
        /// The ISO 639-3 code, as Common Crawl writes it (`"eng"`; JSON `iso639_3`); nil when there is none (`xx-…`,
        /// Bihari).
        public var iso639Part3: String?
        /// CLD2's name (`"ENGLISH"`, `"Japanese"`, `"X_Latin"`).
        public var name: String
        /// The share of the text's letters in this language, 1...100.
        public var percent: Int

        public init(code: String, iso639Part3: String?, name: String, percent: Int) {
            self.code = code
            self.iso639Part3 = iso639Part3
            self.name = name
            self.percent = percent
        }
    }

    /// What CLD2 made of a text.
    public struct Languages: Sendable, Equatable {
        /// Up to three languages, the largest share first; empty when CLD2 found none (no text, too little text,
        /// text it cannot tell, bytes it refused).
        public var languages: [Language]
        /// CLD2's verdict that the first language is clearly more probable than the next.
        public var reliable: Bool
        /// The letter bytes CLD2 scored (tags, digits, punctuation and spaces are not letters).
        public var textBytes: Int
        /// The bytes given to CLD2: the text's first ``LanguageDetection/maxExaminedBytes`` at most.
        public var examinedBytes: Int
        /// Bytes CLD2 refuses (invalid UTF-8, control characters, noncharacters) that it was given as spaces.
        public var replacedBytes: Int

        public init(languages: [Language], reliable: Bool, textBytes: Int, examinedBytes: Int, replacedBytes: Int) {
            self.languages = languages
            self.reliable = reliable
            self.textBytes = textBytes
            self.examinedBytes = examinedBytes
            self.replacedBytes = replacedBytes
        }

        /// Common Crawl's spelling: the ISO 639-3 codes joined by commas (`"eng,fra"`); empty when none.
        public var contentLanguages: String {
            languages.compactMap(\.iso639Part3).joined(separator: ",")
        }
    }

    /// Detects the languages of UTF-8 text: plain text, or HTML when `isPlainText` is false (CLD2 then skips tags,
    /// comments, scripts and styles, expands entities, and reads `lang` attributes as hints).
    ///
    /// The bytes should be UTF-8 from ``TextDecoding``, but are not trusted: CLD2 is called through its checking
    /// entry point, which never reads past the buffer, and bytes it refuses are given to it as spaces
    /// (``Languages/replacedBytes``). Examines the first ``maxExaminedBytes`` bytes at most.
    public static func detect(
        _ utf8: UnsafeBufferPointer<UInt8>, isPlainText: Bool, hints: Hints = Hints()
    ) -> Languages {
        var result = respdecode_language_result()
        withOptionalCString(hints.contentLanguage) { contentLanguage in
            withOptionalCString(hints.topLevelDomain) { topLevelDomain in
                respdecode_detect_language(
                    utf8.baseAddress, utf8.count, maxExaminedBytes, isPlainText ? 1 : 0, contentLanguage,
                    topLevelDomain, &result)
            }
        }
        var languages: [Language] = []
        if result.utf8_ok != 0 && Int(result.text_bytes) >= minTextBytes {
            withUnsafeBytes(of: result.languages) { raw in
                for entry in raw.bindMemory(to: respdecode_language.self) {
                    var entry = entry
                    let code = withUnsafeBytes(of: &entry.code) { string(fromNulTerminated: $0) }
                    // Unknown ends the list (Common Crawl keeps an unknown first entry, which has no ISO code and so
                    // never reaches its content_languages either).
                    if code == "un" || code == "xxx" { break }
                    guard Int(entry.percent) >= minPercent else { continue }
                    let iso = withUnsafeBytes(of: &entry.iso639_3) { string(fromNulTerminated: $0) }
                    let name = withUnsafeBytes(of: &entry.name) { string(fromNulTerminated: $0) }
                    languages.append(
                        Language(
                            code: code, iso639Part3: iso.isEmpty ? nil : iso, name: name, percent: Int(entry.percent))
                    )
                }
            }
        }
        return Languages(
            languages: languages, reliable: result.reliable != 0 && !languages.isEmpty,
            textBytes: Int(result.text_bytes), examinedBytes: Int(result.examined_bytes),
            replacedBytes: Int(result.replaced_bytes))
    }

    private static func withOptionalCString(_ string: String?, _ body: (UnsafePointer<CChar>?) -> Void) {
        guard let string else { return body(nil) }
        string.withCString { body($0) }
    }

    private static func string(fromNulTerminated bytes: UnsafeRawBufferPointer) -> String {
        let length = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[..<length], as: UTF8.self)
    }
}

extension OutputBuffer {
    /// Appends the members of a language detection (docs/decoding.md#language), each after a comma, so inside an
    /// object that already has a member:
    /// `,"languages":[{"code":"en","iso639_3":"eng","name":"ENGLISH","percent":97}],"languagesReliable":true,
    /// "contentLanguages":"eng"`. `languages` is `[]` and `languagesReliable` false when none was found;
    /// `contentLanguages` is left out when no language has an ISO 639-3 code.
    public func appendLanguages(_ detected: LanguageDetection.Languages) {
        append(ascii: ",\"languages\":[")
        for (index, language) in detected.languages.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            append(ascii: "{\"code\":")
            appendJSONString(language.code)
            if let iso = language.iso639Part3 {
                append(ascii: ",\"iso639_3\":")
                appendJSONString(iso)
            }
            append(ascii: ",\"name\":")
            appendJSONString(language.name)
            append(ascii: ",\"percent\":")
            append(decimal: language.percent)
            append(UInt8(ascii: "}"))
        }
        append(ascii: "],\"languagesReliable\":")
        if detected.reliable { append(ascii: "true") } else { append(ascii: "false") }
        let contentLanguages = detected.contentLanguages
        if !contentLanguages.isEmpty {
            append(ascii: ",\"contentLanguages\":")
            appendJSONString(contentLanguages)
        }
    }
}

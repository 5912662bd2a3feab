/// An encoding of the WHATWG Encoding Standard (https://encoding.spec.whatwg.org/#names-and-labels): what a label
/// resolves to, and how glibc's iconv converts it (docs/decoding.md#text).
enum WebEncoding: String, CaseIterable, Sendable {
    case utf8 = "UTF-8"
    case ibm866 = "IBM866"
    case iso88592 = "ISO-8859-2"
    case iso88593 = "ISO-8859-3"
    case iso88594 = "ISO-8859-4"
    case iso88595 = "ISO-8859-5"
    case iso88596 = "ISO-8859-6"
    case iso88597 = "ISO-8859-7"
    case iso88598 = "ISO-8859-8"
    case iso88598i = "ISO-8859-8-I"
    case iso885910 = "ISO-8859-10"
    case iso885913 = "ISO-8859-13"
    case iso885914 = "ISO-8859-14"
    case iso885915 = "ISO-8859-15"
    case iso885916 = "ISO-8859-16"
    case koi8r = "KOI8-R"
    case koi8u = "KOI8-U"
    case macintosh = "macintosh"
    case windows874 = "windows-874"
    case windows1250 = "windows-1250"
    case windows1251 = "windows-1251"
    case windows1252 = "windows-1252"
    case windows1253 = "windows-1253"
    case windows1254 = "windows-1254"
    case windows1255 = "windows-1255"
    case windows1256 = "windows-1256"
    case windows1257 = "windows-1257"
    case windows1258 = "windows-1258"
    case xMacCyrillic = "x-mac-cyrillic"
    case gbk = "GBK"
    case gb18030 = "gb18030"
    case big5 = "Big5"
    case eucJP = "EUC-JP"
    case iso2022JP = "ISO-2022-JP"
    case shiftJIS = "Shift_JIS"
    case eucKR = "EUC-KR"
    case replacement = "replacement"
    case utf16BE = "UTF-16BE"
    case utf16LE = "UTF-16LE"
    case xUserDefined = "x-user-defined"

    /// The WHATWG name (`windows-1252`, `Shift_JIS`, …): what `charset` says in values.
    var name: String { rawValue }

    /// The encoding a label names (https://encoding.spec.whatwg.org/#concept-encoding-get): ASCII whitespace trimmed,
    /// ASCII case ignored; nil for a label that is not in the table.
    init?(label: some StringProtocol) {
        let trimmed = label.utf8.drop { Self.isASCIIWhitespace($0) }.reversed().drop { Self.isASCIIWhitespace($0) }
        guard !trimmed.isEmpty, trimmed.count <= Self.longestLabel else { return nil }
        let lowered = String(
            decoding: trimmed.reversed().map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        guard let encoding = Self.byLabel[lowered] else { return nil }
        self = encoding
    }

    private static func isASCIIWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D || byte == 0x20
    }

    /// Every label of the Encoding Standard's table (https://encoding.spec.whatwg.org/#names-and-labels, the
    /// `encodings.json` of whatwg/encoding), lower case, with the encoding it names. Tested against that file
    /// (Tests/RespDecodeTests/Decoders/Text/TextConformanceTests.swift).
    static let labels: [(encoding: WebEncoding, labels: [String])] = [
        // The Encoding
        (.utf8, ["unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8"]),
        // Legacy single-byte encodings
        (.ibm866, ["866", "cp866", "csibm866", "ibm866"]),
        (
            .iso88592,
            [
                "csisolatin2", "iso-8859-2", "iso-ir-101", "iso8859-2", "iso88592", "iso_8859-2", "iso_8859-2:1987",
                "l2", "latin2",
            ]
        ),
        (
            .iso88593,
            [
                "csisolatin3", "iso-8859-3", "iso-ir-109", "iso8859-3", "iso88593", "iso_8859-3", "iso_8859-3:1988",
                "l3", "latin3",
            ]
        ),
        (
            .iso88594,
            [
                "csisolatin4", "iso-8859-4", "iso-ir-110", "iso8859-4", "iso88594", "iso_8859-4", "iso_8859-4:1988",
                "l4", "latin4",
            ]
        ),
        (
            .iso88595,
            [
                "csisolatincyrillic", "cyrillic", "iso-8859-5", "iso-ir-144", "iso8859-5", "iso88595", "iso_8859-5",
                "iso_8859-5:1988",
            ]
        ),
        (
            .iso88596,
            [
                "arabic", "asmo-708", "csiso88596e", "csiso88596i", "csisolatinarabic", "ecma-114", "iso-8859-6",
                "iso-8859-6-e", "iso-8859-6-i", "iso-ir-127", "iso8859-6", "iso88596", "iso_8859-6", "iso_8859-6:1987",
            ]
        ),
        (
            .iso88597,
            [
                "csisolatingreek", "ecma-118", "elot_928", "greek", "greek8", "iso-8859-7", "iso-ir-126", "iso8859-7",
                "iso88597", "iso_8859-7", "iso_8859-7:1987", "sun_eu_greek",
            ]
        ),
        (
            .iso88598,
            [
                "csiso88598e", "csisolatinhebrew", "hebrew", "iso-8859-8", "iso-8859-8-e", "iso-ir-138", "iso8859-8",
                "iso88598", "iso_8859-8", "iso_8859-8:1988", "visual",
            ]
        ),
        (.iso88598i, ["csiso88598i", "iso-8859-8-i", "logical"]),
        (.iso885910, ["csisolatin6", "iso-8859-10", "iso-ir-157", "iso8859-10", "iso885910", "l6", "latin6"]),
        (.iso885913, ["iso-8859-13", "iso8859-13", "iso885913"]),
        (.iso885914, ["iso-8859-14", "iso8859-14", "iso885914"]),
        (.iso885915, ["csisolatin9", "iso-8859-15", "iso8859-15", "iso885915", "iso_8859-15", "l9"]),
        (.iso885916, ["iso-8859-16"]),
        (.koi8r, ["cskoi8r", "koi", "koi8", "koi8-r", "koi8_r"]),
        (.koi8u, ["koi8-ru", "koi8-u"]),
        (.macintosh, ["csmacintosh", "mac", "macintosh", "x-mac-roman"]),
        (.windows874, ["dos-874", "iso-8859-11", "iso8859-11", "iso885911", "tis-620", "windows-874"]),
        (.windows1250, ["cp1250", "windows-1250", "x-cp1250"]),
        (.windows1251, ["cp1251", "windows-1251", "x-cp1251"]),
        (
            .windows1252,
            [
                "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100",
                "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252",
                "x-cp1252",
            ]
        ),
        (.windows1253, ["cp1253", "windows-1253", "x-cp1253"]),
        (
            .windows1254,
            [
                "cp1254", "csisolatin5", "iso-8859-9", "iso-ir-148", "iso8859-9", "iso88599", "iso_8859-9",
                "iso_8859-9:1989", "l5", "latin5", "windows-1254", "x-cp1254",
            ]
        ),
        (.windows1255, ["cp1255", "windows-1255", "x-cp1255"]),
        (.windows1256, ["cp1256", "windows-1256", "x-cp1256"]),
        (.windows1257, ["cp1257", "windows-1257", "x-cp1257"]),
        (.windows1258, ["cp1258", "windows-1258", "x-cp1258"]),
        (.xMacCyrillic, ["x-mac-cyrillic", "x-mac-ukrainian"]),
        // Legacy multi-byte Chinese (simplified) encodings
        (
            .gbk,
            ["chinese", "csgb2312", "csiso58gb231280", "gb2312", "gb_2312", "gb_2312-80", "gbk", "iso-ir-58", "x-gbk"]
        ),
        (.gb18030, ["gb18030"]),
        // Legacy multi-byte Chinese (traditional) encodings
        (.big5, ["big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"]),
        // Legacy multi-byte Japanese encodings
        (.eucJP, ["cseucpkdfmtjapanese", "euc-jp", "x-euc-jp"]),
        (.iso2022JP, ["csiso2022jp", "iso-2022-jp"]),
        (.shiftJIS, ["csshiftjis", "ms932", "ms_kanji", "shift-jis", "shift_jis", "sjis", "windows-31j", "x-sjis"]),
        // Legacy multi-byte Korean encodings
        (
            .eucKR,
            [
                "cseuckr", "csksc56011987", "euc-kr", "iso-ir-149", "korean", "ks_c_5601-1987", "ks_c_5601-1989",
                "ksc5601", "ksc_5601", "windows-949",
            ]
        ),
        // Legacy miscellaneous encodings
        (.replacement, ["csiso2022kr", "hz-gb-2312", "iso-2022-cn", "iso-2022-cn-ext", "iso-2022-kr", "replacement"]),
        (.utf16BE, ["unicodefffe", "utf-16be"]),
        (.utf16LE, ["csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16", "utf-16le"]),
        (.xUserDefined, ["x-user-defined"]),
    ]

    private static let byLabel: [String: WebEncoding] = {
        var table: [String: WebEncoding] = [:]
        for (encoding, labels) in labels {
            for label in labels { table[label] = encoding }
        }
        return table
    }()

    private static let longestLabel = labels.flatMap(\.labels).map(\.utf8.count).max() ?? 0

    /// The iconv name glibc converts it under (docs/decoding.md#text-conversion); nil for the encodings done by rule
    /// (UTF-8, replacement, x-user-defined).
    var iconvName: String? {
        switch self {
        case .utf8, .replacement, .xUserDefined: nil
        // Same bytes as ISO-8859-8: the -I only says the text is in logical order.
        case .iso88598i: "ISO-8859-8"
        case .macintosh: "MACINTOSH"
        case .windows874: "WINDOWS-874"
        // glibc's KOI8-U is RFC 2319's; WHATWG's adds ў/Ў at 0xAE/0xBE, patched in ``SingleByteTable``.
        case .koi8u: "KOI8-U"
        // glibc's MAC-CYRILLIC has ¤ at 0xFF where WHATWG has €, patched in ``SingleByteTable``.
        case .xMacCyrillic: "MAC-CYRILLIC"
        // WHATWG's GBK decoder is its gb18030 decoder.
        case .gbk, .gb18030: "GB18030"
        // WHATWG's Big5 is Big5 with the HKSCS extensions.
        case .big5: "BIG5-HKSCS"
        // WHATWG's Shift_JIS and EUC-KR are Microsoft's code pages 932 and 949.
        case .shiftJIS: "WINDOWS-31J"
        case .eucKR: "CP949"
        // WHATWG's EUC-JP shares Shift_JIS's index (jis0208), which has Windows' mappings (0xA1C1 is U+FF5E, 0xA1DD
        // U+FF0D, the NEC row 13 symbols are there): glibc's EUC-JP-MS, the EUC form of code page 932, has them;
        // its EUC-JP has JIS X 0208's (U+301C, U+2212) and no row 13.
        case .eucJP: "EUC-JP-MS"
        case .iso2022JP: "ISO-2022-JP"
        case .utf16BE: "UTF-16BE"
        case .utf16LE: "UTF-16LE"
        default: rawValue.uppercased()
        }
    }

    /// Whether each byte is one character (a 256-entry table converts it: ``SingleByteTable``).
    var isSingleByte: Bool {
        switch self {
        case .ibm866, .iso88592, .iso88593, .iso88594, .iso88595, .iso88596, .iso88597, .iso88598, .iso88598i,
            .iso885910, .iso885913, .iso885914, .iso885915, .iso885916, .koi8r, .koi8u, .macintosh, .windows874,
            .windows1250, .windows1251, .windows1252, .windows1253, .windows1254, .windows1255, .windows1256,
            .windows1257, .windows1258, .xMacCyrillic:
            true
        default: false
        }
    }
}

import Foundation
import Glibc
import RespDecodeTestSupport
import Testing

@testable import RespDecode

@Suite("Language detection (CLD2)")
struct LanguageDetectionTests {
    static func detect(_ text: String, isPlainText: Bool = true, hints: LanguageDetection.Hints = .init())
        -> LanguageDetection.Languages
    {
        detect(Array(text.utf8), isPlainText: isPlainText, hints: hints)
    }

    static func detect(_ bytes: [UInt8], isPlainText: Bool = true, hints: LanguageDetection.Hints = .init())
        -> LanguageDetection.Languages
    {
        bytes.withUnsafeBufferPointer { LanguageDetection.detect($0, isPlainText: isPlainText, hints: hints) }
    }

    /// This thread's CPU time in seconds (not wall time: the test machine is shared).
    static func threadCPUSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    // MARK: Known sentences

    /// Sentences written for this test (not taken from anywhere), two or three per language, in eight scripts:
    /// Latin, Cyrillic, Greek, Han, Kana, Hangul, Arabic, Hebrew, Devanagari, Thai. Expected: CLD2's code and the
    /// ISO 639-3 code.
    static let sentences: [(String, String, String)] = [
        (
            "The library on the corner of our street opens early every morning, and the children who live nearby often "
                + "come in before school to borrow books about animals, distant countries and the history of their town.",
            "en", "eng"
        ),
        (
            "Chaque matin, la boulangerie du village ouvre ses portes avant le lever du soleil, et les habitants "
                + "viennent y acheter du pain frais en échangeant les dernières nouvelles du quartier avec la boulangère.",
            "fr", "fra"
        ),
        (
            "Am Wochenende fahren wir oft mit dem Fahrrad an den See, wo wir im Schatten der alten Bäume ein Picknick "
                + "machen und den Kindern beim Schwimmen zusehen, bis die Sonne langsam untergeht.",
            "de", "deu"
        ),
        (
            "Durante las vacaciones de verano, mi familia suele viajar a la costa para descansar unos días junto al mar, "
                + "comer pescado fresco en los pequeños restaurantes del puerto y pasear por la playa al atardecer.",
            "es", "spa"
        ),
        (
            "Каждое утро мой сосед выходит гулять со своей собакой в парк, где они встречают других жителей нашего "
                + "района и долго разговаривают о погоде, работе и новостях города.",
            "ru", "rus"
        ),
        (
            "Το καλοκαίρι πηγαίνουμε συχνά στο χωριό της γιαγιάς μου, όπου περνάμε τα απογεύματα στην αυλή κάτω από τη "
                + "μεγάλη συκιά και ακούμε ιστορίες από τα παλιά χρόνια.",
            "el", "ell"
        ),
        (
            "毎朝、私は駅の近くにある小さな喫茶店でコーヒーを飲みながら新聞を読みます。店のご主人はとても親切で、いつも天気や町の出来事について"
                + "話しかけてくれます。",
            "ja", "jpn"
        ),
        (
            "我每天早上都会去家附近的公园散步，那里有很多老人在打太极拳，也有孩子们在草地上玩耍。周末的时候，我们一家人经常去市中心的图书馆看书。",
            "zh", "zho"
        ),
        (
            "주말마다 우리 가족은 가까운 산에 올라가서 맑은 공기를 마시고 점심을 먹습니다. 산 정상에서 바라보는 도시의 풍경은 언제나 아름답고 "
                + "마음을 편안하게 해 줍니다.",
            "ko", "kor"
        ),
        (
            "في كل صباح يذهب أخي إلى السوق القديم لشراء الخبز والخضروات الطازجة، ثم يجلس في المقهى القريب من البيت ليشرب "
                + "الشاي ويتحدث مع أصدقائه عن أخبار المدينة.",
            "ar", "ara"
        ),
        // CLD2 still writes Hebrew "iw"; its ISO 639-3 code is "heb".
        (
            "בכל בוקר אני הולך ברגל לעבודה דרך הפארק הגדול שליד הבית, ושם אני רואה אנשים רצים, משחקים עם הכלבים שלהם "
                + "ושותים קפה על הספסלים.",
            "iw", "heb"
        ),
        (
            "हर सुबह मेरी दादी बगीचे में फूलों को पानी देती हैं और फिर हम सब मिलकर चाय पीते हैं। उसके बाद बच्चे स्कूल जाते हैं और "
                + "बड़े लोग अपने काम पर निकल जाते हैं।",
            "hi", "hin"
        ),
        (
            "ทุกเช้าคุณแม่ของฉันจะไปตลาดใกล้บ้านเพื่อซื้อผักและผลไม้สด แล้วกลับมาทำอาหารเช้าให้ทุกคนในครอบครัวก่อนที่พวกเราจะออกไปทำงานและไปโรงเรียน",
            "th", "tha"
        ),
    ]

    @Test(arguments: sentences)
    func knownSentence(_ sample: (String, String, String)) {
        let (text, code, iso) = sample
        let detected = Self.detect(text)
        #expect(detected.languages.first?.code == code, "\(text.prefix(30)): \(detected)")
        #expect(detected.languages.first?.iso639Part3 == iso)
        #expect(detected.reliable)
        #expect(detected.contentLanguages.hasPrefix(iso))
        #expect(detected.examinedBytes == text.utf8.count)
        #expect(detected.replacedBytes == 0)
    }

    @Test func traditionalChineseIsChineseInISO639_3() {
        let text =
            "我每天早上都會去家附近的公園散步，那裡有很多老人在打太極拳，也有孩子們在草地上玩耍。週末的時候，我們一家人經常去市中心的圖書館看書。"
        let detected = Self.detect(text)
        #expect(detected.languages.first?.code == "zh-Hant", "\(detected)")
        #expect(detected.languages.first?.iso639Part3 == "zho")
    }

    @Test func twoLanguagesAreBothListed() {
        let text =
            Self.sentences[0].0 + " " + Self.sentences[0].0 + " " + Self.sentences[1].0 + " " + Self.sentences[1].0
        let detected = Self.detect(text)
        #expect(Set(detected.languages.map(\.code)) == ["en", "fr"], "\(detected)")
        #expect(Set(detected.contentLanguages.split(separator: ",")) == ["eng", "fra"])
        let total = detected.languages.map(\.percent).reduce(0, +)
        #expect(total <= 100 && total >= 90)
    }

    @Test func htmlTagsAreSkipped() {
        // The markup is English-looking; only the text is German.
        let html =
            "<html><head><style>body { font-family: sans-serif; color: black; }</style>"
            + "<script>function update() { return window.location.href; }</script></head><body><div class=\"content "
            + "main-article\"><p>" + Self.sentences[2].0 + "</p></div></body></html>"
        let detected = Self.detect(html, isPlainText: false)
        #expect(detected.languages.first?.code == "de", "\(detected)")
        #expect(detected.languages.count == 1)
    }

    @Test func hintsAreAccepted() {
        // Hints that agree with the text leave its language as it is (and are passed through without harm).
        let text = Self.sentences[3].0
        let hinted = Self.detect(text, hints: .init(contentLanguage: "es", url: "https://example.es/noticias"))
        #expect(hinted.languages.first?.code == "es")
    }

    @Test(
        arguments: [
            ("https://www.example.de/a/b?c#d", "de"),
            ("http://user:pw@news.example.CO.UK:8080/", "uk"),
            ("https://example.com./", "com"),
            ("https://localhost/", nil),
            ("http://192.168.1.1/", nil),
            ("http://[::1]/", nil),
            ("example.com", nil),
            ("https://xn--bcher-kva.example/", "example"),
        ] as [(String, String?)])
    func topLevelDomain(_ sample: (String, String?)) {
        #expect(LanguageDetection.Hints.topLevelDomain(ofURL: sample.0) == sample.1)
    }

    // MARK: Writer

    @Test func writerSpellsTheMembers() {
        let languages = LanguageDetection.Languages(
            languages: [
                .init(code: "en", iso639Part3: "eng", name: "ENGLISH", percent: 80),
                .init(code: "xx-Latn", iso639Part3: nil, name: "X_Latin", percent: 5),
                .init(code: "fr", iso639Part3: "fra", name: "FRENCH", percent: 15),
            ], reliable: true, textBytes: 1000, examinedBytes: 1200, replacedBytes: 0)
        let out = OutputBuffer()
        out.append(ascii: "{\"type\":\"text\"")
        out.appendLanguages(languages)
        out.append(UInt8(ascii: "}"))
        #expect(
            String(decoding: out.bytes, as: UTF8.self)
                == "{\"type\":\"text\",\"languages\":[{\"code\":\"en\",\"iso639_3\":\"eng\",\"name\":\"ENGLISH\","
                + "\"percent\":80},{\"code\":\"xx-Latn\",\"name\":\"X_Latin\",\"percent\":5},{\"code\":\"fr\","
                + "\"iso639_3\":\"fra\",\"name\":\"FRENCH\",\"percent\":15}],\"languagesReliable\":true,"
                + "\"contentLanguages\":\"eng,fra\"}")
    }

    @Test func writerOfNothingFound() throws {
        let out = OutputBuffer()
        out.append(ascii: "{\"type\":\"text\"")
        out.appendLanguages(Self.detect(""))
        out.append(UInt8(ascii: "}"))
        let text = String(decoding: out.bytes, as: UTF8.self)
        #expect(text == "{\"type\":\"text\",\"languages\":[],\"languagesReliable\":false}")
        _ = try JSONSerialization.jsonObject(with: Data(out.bytes))
    }

    // MARK: Hostile and odd input: never a crash, within budget

    @Test(arguments: [
        "", "a", "hi", "…", "12345 67890 !!! ???", "<", "<html", "&amp;&#xFFFFFFFF;&#0;", "<!--", "<script>",
        String(repeating: "<", count: 10000), String(repeating: "&", count: 10000),
    ])
    func littleOrNoText(_ text: String) {
        for isPlainText in [true, false] {
            let detected = Self.detect(text, isPlainText: isPlainText)
            #expect(detected.languages.isEmpty, "\(text.prefix(20)): \(detected)")
            #expect(!detected.reliable)
        }
    }

    @Test func randomBytes() {
        var random = SplitMix64(seed: 20)
        for length in [1, 2, 3, 7, 100, 4096, 100_000] {
            for _ in 0..<20 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                for isPlainText in [true, false] {
                    let detected = Self.detect(bytes, isPlainText: isPlainText)
                    #expect(detected.examinedBytes == length)
                    #expect(detected.languages.count <= 3)
                }
            }
        }
    }

    @Test func randomBytesOfValidUTF8() {
        // Any scalar but surrogates: the detector's tables see arbitrary scripts and noncharacters.
        var random = SplitMix64(seed: 21)
        for _ in 0..<50 {
            var text = String.UnicodeScalarView()
            for _ in 0..<2000 {
                if let scalar = Unicode.Scalar(UInt32.random(in: 0...0x10FFFF, using: &random)) { text.append(scalar) }
            }
            let detected = Self.detect(String(text))
            #expect(detected.languages.count <= 3)
        }
    }

    /// CLD2's checking entry point gives up on the whole text at the first byte it refuses, which is not only invalid
    /// UTF-8 but control characters and noncharacters too; those are given to it as spaces instead.
    @Test(
        arguments: [
            [0x00], [0x01], [0x0B], [0x1B], [0x7F], [0xC2, 0x80], [0xC2, 0x9F], [0xEF, 0xBF, 0xBE], [0xEF, 0xB7, 0x90],
            [0xF4, 0x8F, 0xBF, 0xBF], [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF0, 0x9F, 0x98],
            [0x80], [0xF5, 0x80, 0x80, 0x80],
        ] as [[UInt8]])
    func refusedBytesInsideText(_ refused: [UInt8]) {
        let english = Array(Self.sentences[0].0.utf8)
        let bytes = english + refused + english + refused
        let detected = Self.detect(bytes)
        #expect(detected.languages.first?.code == "en", "\(refused): \(detected)")
        #expect(detected.replacedBytes == 2 * refused.count)
    }

    @Test func allowedControlsAreNotReplaced() {
        let text = Self.sentences[1].0 + "\t\n\r\u{0C}" + Self.sentences[1].0
        let detected = Self.detect(text)
        #expect(detected.languages.first?.code == "fr")
        #expect(detected.replacedBytes == 0)
    }

    @Test func capCutsBeforeALeadByte() {
        // Two-byte characters from an odd offset: the cap falls inside one, and is moved back to its lead byte.
        let russian = Array((" " + Self.sentences[4].0).utf8)
        var bytes: [UInt8] = [0x20]
        while bytes.count < LanguageDetection.maxExaminedBytes + 1000 { bytes += russian }
        let detected = Self.detect(bytes)
        #expect(detected.examinedBytes <= LanguageDetection.maxExaminedBytes)
        #expect(detected.examinedBytes >= LanguageDetection.maxExaminedBytes - 3)
        #expect(bytes[detected.examinedBytes] & 0xC0 != 0x80)
        #expect(detected.replacedBytes == 0)
        #expect(detected.languages.first?.code == "ru", "\(detected)")
    }

    @Test func sixtyMegabytesWithinOneSecondOfCPU() {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(60 << 20)
        let pieces = Self.sentences.map { Array(($0.0 + "\n").utf8) }
        var index = 0
        while bytes.count < 60 << 20 {
            bytes += pieces[index % pieces.count]
            index += 1
        }
        bytes += [0xFF, 0x01] // refused bytes at the end, past the cap: not even looked at
        let start = Self.threadCPUSeconds()
        let plain = Self.detect(bytes, isPlainText: true)
        let html = Self.detect(bytes, isPlainText: false)
        let seconds = Self.threadCPUSeconds() - start
        print("two detections of 60 MB (plain text, html): \(seconds) s of CPU")
        #expect(seconds < 1, "\(seconds) s of CPU for two detections of 60 MB")
        #expect(plain.examinedBytes <= LanguageDetection.maxExaminedBytes)
        #expect(!plain.languages.isEmpty && !html.languages.isEmpty)
    }

    @Test func sixtyMegabytesOfRefusedBytesWithinOneSecondOfCPU() {
        // The worst case of the fallback: every byte refused, so the capped prefix is copied and rewritten.
        let bytes = [UInt8](repeating: 0x01, count: 60 << 20)
        let start = Self.threadCPUSeconds()
        let detected = Self.detect(bytes)
        let seconds = Self.threadCPUSeconds() - start
        print("60 MB of refused bytes: \(seconds) s of CPU")
        #expect(seconds < 1, "\(seconds) s")
        #expect(detected.languages.isEmpty)
        #expect(detected.replacedBytes == LanguageDetection.maxExaminedBytes)
    }

    // MARK: Reentrancy

    @Test func concurrentDetectionsAgreeWithSerialOnes() async {
        let texts = Self.sentences.map(\.0)
        let serial = texts.map { Self.detect($0) }
        let concurrent = await withTaskGroup(of: (Int, LanguageDetection.Languages).self) { group in
            for round in 0..<8 {
                for (index, text) in texts.enumerated() {
                    group.addTask { (index, Self.detect(text + String(repeating: " ", count: round))) }
                }
            }
            var results: [(Int, LanguageDetection.Languages)] = []
            for await result in group { results.append(result) }
            return results
        }
        #expect(concurrent.count == 8 * texts.count)
        for (index, result) in concurrent {
            #expect(result.languages == serial[index].languages)
        }
    }
}

/// Mozilla Readability's test pages (../shared/corpora/html/readability): CLD2's first language against the page's
/// `<html lang>`, where it has one.
@Suite("Language detection on the Readability pages", .enabled(if: Corpora.available, Corpora.skipComment))
struct LanguageDetectionCorpusTests {
    /// The page's text, crudely: scripts, styles and comments dropped, then every tag. As plain text, so that CLD2
    /// cannot read the `lang` attribute the result is compared with.
    static func crudeText(_ html: String) -> String {
        html.replacing(/<script\b[\s\S]*?<\/script>/.ignoresCase(), with: " ")
            .replacing(/<style\b[\s\S]*?<\/style>/.ignoresCase(), with: " ")
            .replacing(/<!--[\s\S]*?-->/, with: " ")
            .replacing(/<[^>]*>/, with: " ")
    }

    static func primary(_ tag: String) -> String {
        String(tag.lowercased().split(separator: "-").first ?? "")
    }

    @Test func firstLanguageAgreesWithHTMLLang() throws {
        let folder = "html/readability/test-pages"
        var compared = 0
        var agreedText = 0
        var agreedHTML = 0
        var report: [String] = []
        for page in try Corpora.files(in: folder) {
            let metadata = try JSONSerialization.jsonObject(
                with: Data(Corpora.bytes(page.appendingPathComponent("expected-metadata.json"))))
            guard let lang = (metadata as? [String: Any])?["lang"] as? String else { continue }
            let source = try Corpora.bytes(page.appendingPathComponent("source.html"))
            let text = LanguageDetectionTests.detect(Self.crudeText(String(decoding: source, as: UTF8.self)))
            let html = LanguageDetectionTests.detect(source, isPlainText: false)
            compared += 1
            let expected = Self.primary(lang)
            let fromText = Self.primary(text.languages.first?.code ?? "-")
            let fromHTML = Self.primary(html.languages.first?.code ?? "-")
            if fromText == expected { agreedText += 1 }
            if fromHTML == expected { agreedHTML += 1 }
            report.append("\(page.lastPathComponent): lang \(lang), text \(fromText), html \(fromHTML)")
        }
        print("Readability pages with lang: \(compared); text agrees on \(agreedText), html on \(agreedHTML)")
        print(report.joined(separator: "\n"))
        #expect(compared >= 20)
        // CLD2 is right on nearly all web pages of some length; these are whole articles in 8 languages, plus a few
        // synthetic pages of two or three sentences. At most one page in ten may disagree.
        #expect(Double(agreedText) >= 0.9 * Double(compared), "\(report)")
        #expect(Double(agreedHTML) >= 0.9 * Double(compared), "\(report)")
    }
}

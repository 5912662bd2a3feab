import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The XML plist scanner against libxml2 (docs/decoding.md#xml-property-lists): whatever the scanner takes must give
/// exactly what libxml2 gives (value, error and warnings), and what it does not take goes to libxml2.
@Suite("XML plist scanner")
struct XMLPlistScannerTests {
    /// The reader's result on `body`, as text: the value, or the error with its location, and the warnings.
    static func outcome(_ body: [UInt8], scanner: Bool) -> String {
        let out = OutputBuffer()
        let reader = XMLPlistReader(
            output: out, limits: .init(maxDepth: 64, maxObjects: 1000, maxValueBytes: 64 * 1024))
        var warnings: [String] = []
        do {
            try body.withUnsafeBufferPointer {
                try reader.read($0, encoding: nil, warnings: &warnings, scanner: scanner)
            }
            return "value \(String(decoding: out.bytes, as: UTF8.self)) warnings \(warnings)"
        } catch {
            return "error \(error) output \(out.count) warnings \(warnings)"
        }
    }

    /// What the scanner alone makes of `body`.
    static func scanned(_ body: [UInt8]) -> XMLPlistScanner.Outcome {
        let reader = XMLPlistReader(
            output: OutputBuffer(), limits: .init(maxDepth: 64, maxObjects: 1000, maxValueBytes: 64 * 1024))
        return body.withUnsafeBufferPointer { XMLPlistScanner.scan($0, sink: reader) }
    }

    static let apple = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <!-- settings -->
        <dict>
        \t<key>Name</key>
        \t<string>a &lt;b&gt; &amp; &apos;c&apos; &quot;d&quot; &#233;&#x1F600; é😀</string>
        \t<key>Count</key>
        \t<integer>-42</integer>
        \t<key>Ratio</key>
        \t<real>1.5e3</real>
        \t<key>On</key>
        \t<true/>
        \t<key>Off</key>
        \t<false />
        \t<key>When</key>
        \t<date>2024-05-01T12:00:00Z</date>
        \t<key>Blob</key>
        \t<data>
        \tAAEC/w==
        \t</data>
        \t<key>List</key>
        \t<array><string/><dict/><array></array></array>
        </dict>
        </plist>
        <!-- end -->

        """

    @Test func takesTheCommonFormAndAgreesWithLibxml2() {
        let body = Array(Self.apple.utf8)
        guard case .parsed = Self.scanned(body) else {
            Issue.record("the scanner did not take the common form")
            return
        }
        #expect(Self.outcome(body, scanner: true) == Self.outcome(body, scanner: false))
        #expect(Self.outcome(body, scanner: true).hasPrefix("value {\"Name\":\"a <b> & 'c' \\\"d\\\" é😀 é😀\""))
    }

    @Test func leavesEverythingElseToLibxml2() {
        let cases = [
            "\u{FEFF}<plist><true/></plist>", // byte order mark
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><plist><string>caf\u{E9}</string></plist>",
            "<?xml version=\"1.1\"?><plist><true/></plist>",
            "<plist>\r\n<true/></plist>", // line ends are normalised
            "<plist><string><![CDATA[x]]></string></plist>",
            "<!DOCTYPE plist [<!ENTITY e \"x\">]><plist><string>&e;</string></plist>",
            "<?pi x?><plist><true/></plist>",
            "<plist xmlns:a=\"u\"><a:true/></plist>",
            "<plist><string>]]></string></plist>",
            "<plist><string>\u{01}</string></plist>",
            "<plist><string>&#1;</string></plist>",
            "<plist><string>&unknown;</string></plist>",
            "<plist><strin></strin></plist>",
            "<plist a=\"1\" a=\"2\"><true/></plist>",
            "<plist><true/></plist><extra/>",
            "<plist><true/>",
            " <?xml version=\"1.0\"?><plist><true/></plist>",
            "<plist><!-- a -- b --><true/></plist>",
        ]
        for text in cases {
            let body = Array(text.utf8)
            if case .notInSubset = Self.scanned(body) {
            } else {
                Issue.record("the scanner took \(text.debugDescription)")
            }
            #expect(Self.outcome(body, scanner: true) == Self.outcome(body, scanner: false), "\(text.debugDescription)")
        }
        // Invalid UTF-8 in text.
        let bad = Array("<plist><string>".utf8) + [0xC3, 0x28] + Array("</string></plist>".utf8)
        if case .notInSubset = Self.scanned(bad) {} else { Issue.record("the scanner took invalid UTF-8") }
    }

    @Test func plistErrorsAreTheReadersInBothWays() {
        for text in [
            "<plist><foo/></plist>", "<plist><integer>x</integer></plist>", "<plist><dict><true/></dict></plist>",
            "<plist/>", "<plist><string>\(String(repeating: "x", count: 70_000))</string></plist>",
            String(repeating: "<array>", count: 70) + String(repeating: "</array>", count: 70),
        ] {
            let body = Array(text.utf8)
            #expect(Self.outcome(body, scanner: true) == Self.outcome(body, scanner: false), "\(text.prefix(60))")
        }
    }

    /// Thousands of random edits of valid plists: every one must give the same with and without the scanner, and
    /// the scanner must have taken (or stopped) a good share of them, so that the comparison means something.
    @Test func mutatedPlistsAgreeWithLibxml2() {
        var rng = SplitMix64(seed: 22)
        let seeds = [Self.apple, "<plist version=\"1.0\"><array><integer>1</integer><real>2</real></array></plist>"]
        let alphabet: [UInt8] =
            Array("<>/&;#x!-?\"'= \t\n\r]abcdeiklnprstuy019AF".utf8) + [0x00, 0x01, 0x7F, 0x80, 0xC3, 0xA9, 0xEF, 0xFF]
        var taken = 0
        for round in 0..<4000 {
            var body = Array(seeds[round % seeds.count].utf8)
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let at = Int(rng.next() % UInt64(body.count))
                switch rng.next() % 4 {
                case 0: body.remove(at: at)
                case 1: body.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                case 2: body[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                default:
                    let length = min(Int(rng.next() % 12), body.count - at)
                    body.insert(contentsOf: body[at..<(at + length)], at: at)
                }
            }
            if case .notInSubset = Self.scanned(body) {} else { taken += 1 }
            let fast = Self.outcome(body, scanner: true)
            let slow = Self.outcome(body, scanner: false)
            #expect(fast == slow, "\(String(decoding: body, as: UTF8.self).debugDescription)")
            if fast != slow { break }
        }
        // Most random edits break well-formedness (those go to libxml2 on both sides); about a sixth stay in the
        // scanner's subset.
        #expect(taken > 500, "the scanner took only \(taken) of 4000")
    }

    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func corpusFilesAgreeWithLibxml2() throws {
        var compared = 0
        for path in Corpora.allFiles(under: "plist") {
            let body = try Corpora.bytes("plist/" + path)
            guard body.first == UInt8(ascii: "<") else { continue }
            #expect(Self.outcome(body, scanner: true) == Self.outcome(body, scanner: false), "\(path)")
            compared += 1
        }
        #expect(compared > 20)
    }
}

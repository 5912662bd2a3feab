import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// What the html decoder gave for one page: the value as JSON text and as an object, and the warnings.
struct HTMLOutcome {
    var text: String?
    var value: [String: Any]
    var warnings: [String]

    subscript(key: String) -> Any? { value[key] }
    var links: [[String: String]] { (value["links"] as? [[String: String]]) ?? [] }
    var truncated: [String] { (value["truncated"] as? [String]) ?? [] }
}

/// Runs the html decoder on `html` with the record URL `url`.
func decodeHTML(
    _ html: String, url: String? = "http://example.com/dir/page.html", charset: String? = nil,
    configure: (inout DecoderOptions) -> Void = { _ in }
) throws -> HTMLOutcome {
    var options = DecoderOptions()
    configure(&options)
    var context = DecodingContext(mimeType: "text/html", charset: charset, url: url, options: options)
    let out = OutputBuffer()
    let body = Array(html.utf8)
    let wrote = try body.withUnsafeBufferPointer { try HTMLBodyDecoder().decode($0, context: &context, into: out) }
    guard wrote else { return HTMLOutcome(text: nil, value: [:], warnings: context.warnings) }
    let object = try #require(try JSONSerialization.jsonObject(with: Data(out.bytes)) as? [String: Any])
    return HTMLOutcome(text: String(decoding: out.bytes, as: UTF8.self), value: object, warnings: context.warnings)
}

@Suite("HTML decoder")
struct HTMLDecoderTests {
    @Test func inTheDefaultChainBeforeText() throws {
        let decoder = try #require(DecoderRegistry.decoder(named: "html"))
        let entry = ChainEntry(decoder: decoder)
        #expect(entry.accepts("text/html"))
        #expect(entry.accepts("application/xhtml+xml"))
        #expect(!entry.accepts("text/plain"))
        #expect(
            DecoderRegistry.defaultChainNames == [
                "json", "xml", "plist", "image", "form", "multipart", "sse", "ndjson", "msgpack", "cbor", "protobuf",
                "html", "text",
            ])
        #expect(DecoderRegistry.defaultChainNames.suffix(2) == ["html", "text"])
    }

    @Test func emptyBodyHasNoValue() throws {
        #expect(try decodeHTML("").text == nil)
        #expect(try decodeHTML(" ").text == nil)
    }

    @Test func keysInOrder() throws {
        let page = """
            <!DOCTYPE html><html lang="de"><head><title>T</title><base href="/b/">
            <link rel="canonical" href="c.html"><meta name="description" content="D"></head>
            <body><h1>H</h1><a href="x">X</a><p>Body</p></body></html>
            """
        let result = try decodeHTML(page, configure: { $0.limits.maxHTMLLinks = 0 })
        let text = try #require(result.text)
        let keys = [
            "title", "lang", "charset", "charsetSource", "base", "canonical", "meta", "linksTotal", "headings", "text",
            "truncated",
        ]
        let positions = keys.map { text.range(of: "\"\($0)\":")?.lowerBound }
        #expect(!positions.contains(nil), "\(text)")
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted(), "\(text)")
    }

    @Test func titleIsTheFirstWithWhiteSpaceCollapsed() throws {
        let result = try decodeHTML("<title>\n  A  &amp;\tB \n</title><title>second</title><p>x")
        #expect(result["title"] as? String == "A & B")
        // An SVG's <title> is not the page's.
        let svg = try decodeHTML("<body><svg><title>icon</title></svg><p>x</p></body>")
        #expect(svg["title"] == nil)
        #expect(try decodeHTML("<p>no title</p>")["title"] == nil)
        #expect(try decodeHTML("<title> </title><p>x")["title"] == nil)
    }

    @Test func langCharsetAndSource() throws {
        let result = try decodeHTML(#"<html lang=" pt-BR "><p>x"#)
        #expect(result["lang"] as? String == "pt-BR")
        // ASCII with nothing declared decodes as windows-1252, the WHATWG default (docs/decoding.md#text).
        #expect(result["charset"] as? String == "windows-1252")
        #expect(result["charsetSource"] as? String == "default")
        let declared = try decodeHTML(#"<p>café"#, charset: "utf-8")
        #expect(declared["charset"] as? String == "UTF-8")
        #expect(declared["charsetSource"] as? String == "header")
        #expect(try decodeHTML("<p>x")["lang"] == nil)
    }

    @Test func documentEncodingDeclarationsAreIgnored() throws {
        // The text handed to libxml2 is UTF-8 already; a <meta charset> must not make libxml2 re-decode it. The
        // Content-Type charset wins over the <meta> in the charset resolution, so the page is UTF-8 here.
        let result = try decodeHTML(#"<meta charset="iso-8859-1"><p>café ñ 日本</p>"#, charset: "utf-8")
        #expect(result["text"] as? String == "café ñ 日本")
        let legacy = try decodeHTML(
            #"<meta http-equiv="Content-Type" content="text/html; charset=gb2312"><title>新电脑</title>"#,
            charset: "utf-8")
        #expect(legacy["title"] as? String == "新电脑")
        // Without a header the <meta> is obeyed, once, by the resolution: the UTF-8 bytes read as windows-1252.
        let obeyed = try decodeHTML(#"<meta charset="iso-8859-1"><p>café</p>"#)
        #expect(obeyed["text"] as? String == "cafÃ©")
        #expect(obeyed["charsetSource"] as? String == "meta")
    }

    @Test func baseAndCanonicalResolve() throws {
        let result = try decodeHTML(
            #"<head><base href="../other/"><link rel="Canonical alternate" href="c?x=1"><base href="/ignored/"></head><a href="p.html">P</a>"#
        )
        #expect(result["base"] as? String == "http://example.com/other/")
        #expect(result["canonical"] as? String == "http://example.com/other/c?x=1")
        #expect(result.links.first { $0["element"] == "a" }?["url"] == "http://example.com/other/p.html")
    }

    @Test func metaKeysLowercasedFirstWins() throws {
        let page = """
            <meta name="Description" content="first"><meta name="description" content="second">
            <meta property="og:title dc:title" content="OG"><meta http-equiv="Refresh" content="5">
            <meta name="twitter:card" content="summary"><meta name="keywords"><meta charset="utf-8">
            """
        let meta = try #require(try decodeHTML(page)["meta"] as? [String: String])
        #expect(
            meta == [
                "description": "first", "og:title": "OG", "dc:title": "OG", "refresh": "5", "twitter:card": "summary",
            ])
        // Document order.
        let text = try #require(try decodeHTML(page).text)
        #expect(text.contains(#""meta":{"description":"first","og:title":"OG","dc:title":"OG","refresh":"5""#))
    }

    @Test func linksOfEveryElement() throws {
        let page = """
            <link rel="stylesheet" href="/s.css"><script src="https://cdn.example/j.js"></script>
            <a href="a.html" rel="nofollow"> Anchor  <b>text</b> </a><img src="i.png" alt="I">
            <iframe src="//frames.example/f"></iframe><form action="/search"><input name=q></form>
            <map><area href="m.html" alt=" Map  area "></map><a href="https://other.example/">Other</a>
            """
        let links = try decodeHTML(page).links
        #expect(
            links == [
                ["url": "http://example.com/s.css", "href": "/s.css", "element": "link", "rel": "stylesheet"],
                ["url": "https://cdn.example/j.js", "element": "script"],
                [
                    "url": "http://example.com/dir/a.html", "href": "a.html", "element": "a", "rel": "nofollow",
                    "text": "Anchor text",
                ],
                ["url": "http://example.com/dir/i.png", "href": "i.png", "element": "img"],
                ["url": "http://frames.example/f", "href": "//frames.example/f", "element": "iframe"],
                ["url": "http://example.com/search", "href": "/search", "element": "form"],
                ["url": "http://example.com/dir/m.html", "href": "m.html", "element": "area", "text": "Map area"],
                ["url": "https://other.example/", "element": "a", "text": "Other"],
            ])
    }

    @Test func linksThatLeadNowhereAreSkipped() throws {
        let page = """
            <a href="">e</a><a href="  ">s</a><a href="#top">f</a><a href=" JavaScript:void(0)">j</a>
            <a href="data:text/html,x">d</a><a>no href</a><a href="mailto:x@example.com">m</a><a href="?q=1#f">q</a>
            """
        let urls = try decodeHTML(page).links.map { $0["url"] }
        #expect(urls == ["mailto:x@example.com", "http://example.com/dir/page.html?q=1#f"])
    }

    @Test func absoluteReferencesAreWhatXMLBuildURIGives() throws {
        // The decoder does not ask libxml2 to resolve a reference with a scheme (docs/html-parser.md#cost), because
        // libxml2 2.9's xmlBuildURI gives such a reference back unchanged, or nil when it does not parse. A libxml2
        // that normalized absolute references would fail this.
        let base = Array("http://example.com/dir/page.html".utf8)
        let references = [
            "https://a.example/x/../y/./z?q=1#f", "HTTP://A.Example/%7e%7E", "mailto:someone@example.com",
            "a+b-c.d:x", "http://[::1", "x:%zz", "tel:+1-555-0100", "https://a.example:99999/",
        ]
        for reference in references {
            let bytes = Array(reference.utf8)
            #expect(LibXML2HTML.resolve(bytes, against: base) ?? bytes == bytes, "\(reference)")
            let link = try decodeHTML("<a href=\"\(reference)\">x</a>").links.first
            #expect(link?["url"] == reference)
            #expect(link?["href"] == nil)
        }
    }

    /// The decoder resolves `/path?query` references itself, as the base's prefix and the reference
    /// (docs/html-parser.md#cost): wherever it does, libxml2's `xmlBuildURI` gives exactly that.
    @Test func absolutePathsAreWhatXMLBuildURIGives() throws {
        let bases = [
            "http://example.com/dir/page.html", "https://User:pw@Example.COM:8080/x/y?q=1#f", "http://a.test",
            "http://a.test:080/p", "file:///tmp/x.html", "http://[::1]:80/a/b", "http://a.test/%7e/x?y",
            "https://a.test/dir/", "urn:x:y", "http://a.test/a b",
        ]
        var references = [
            "/", "/a", "/a/b/c.html", "/a?b=c&d=e", "/a?b=/c?d:e", "/a/./b", "/a/../b", "/.", "/..", "/a/.b", "/a.b/c",
            "/~u/(x)*!$'+,;=@", "/a:b", "/a%20b", "/a#f", "/a?b#c", "//host/x", "/a?%41", "/a?b[c]", "/a[b]", "/?",
            "/a?", "/a?b?c", "/@", "/a/b/", "/=",
        ]
        var generator = SplitMix64(seed: 3)
        let bytes = Array("ab/.?:@!$&'()*+,;=~-_%#[]".utf8)
        for _ in 0..<3000 {
            let length = Int(generator.next() % 12)
            references.append(
                "/"
                    + String(
                        decoding: (0..<length).map { _ in bytes[Int(generator.next() % UInt64(bytes.count))] },
                        as: UTF8.self))
        }
        if Corpora.available {
            let folder = Corpora.url("html/readability/test-pages").path
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
                let page = String(
                    decoding: try Corpora.bytes("html/readability/test-pages/\(name)/source.html"), as: UTF8.self)
                for part in page.components(separatedBy: "href=\"").dropFirst() {
                    if let end = part.firstIndex(of: "\"") { references.append(String(part[..<end])) }
                }
            }
        }
        var copied = 0
        for base in bases.map({ Array($0.utf8) }) {
            let prefix = HTMLExtractor.pathPrefix(of: base)
            for reference in references.map({ Array($0.utf8) }) {
                guard reference.withUnsafeBufferPointer(URLReference.isCopiedAbsolutePath), !prefix.isEmpty else {
                    continue
                }
                copied += 1
                #expect(
                    LibXML2HTML.resolve(reference, against: base) == prefix + reference,
                    "\(String(decoding: reference, as: UTF8.self)) against \(String(decoding: base, as: UTF8.self))")
            }
        }
        #expect(copied > 5000)
        // Through the decoder: the same links as libxml2 resolves them.
        let hrefs = ["/a/b?c=d", "/a/../b", "/a%20b", "/x#y"]
        let result = try decodeHTML(hrefs.map { "<a href=\"\($0)\">x</a>" }.joined())
        let base = Array("http://example.com/dir/page.html".utf8)
        #expect(
            result.links.map { $0["url"] }
                == hrefs.map {
                    LibXML2HTML.resolve(Array($0.utf8), against: base).map { String(decoding: $0, as: UTF8.self) }
                })
        #expect(result.links.first?["url"] == "http://example.com/a/b?c=d")
    }

    /// The vector test of link targets (C, 16 bytes at a time, then an overlapping last block) finds what the byte
    /// loop does: every byte value at every place of every length up to 64, and random targets.
    @Test func plainTargetsAreFoundAsByteByByte() {
        var checked = 0
        for count in 0...64 {
            let clean = (0..<count).map { UInt8(0x61 + $0 % 26) }
            #expect(clean.withUnsafeBufferPointer(URLReference.isPlain))
            for place in 0..<count {
                for value in 0...255 {
                    var bytes = clean
                    bytes[place] = UInt8(value)
                    let vector = bytes.withUnsafeBufferPointer(URLReference.isPlain)
                    #expect(vector == bytes.withUnsafeBufferPointer(URLReference.isPlainBytewise), "\(bytes)")
                    checked += vector ? 0 : 1
                }
            }
        }
        // 0x00-0x20, 0x7F-0xFF and 9 marks: 171 of the 256 values.
        #expect(checked == 171 * (0...64).reduce(0, +))
        var generator = SplitMix64(seed: 0x0E5C_A9E5)
        let alphabet = Array("ab/?=&%#\"<>\\^`{|}~ \u{7F}".utf8) + [0x00, 0x1F, 0x80, 0xFF]
        for _ in 0..<3000 {
            let bytes = (0..<Int(generator.next() % 80)).map { _ in
                generator.next() % 8 == 0 ? alphabet[Int(generator.next() % UInt64(alphabet.count))] : 0x61
            }
            #expect(
                bytes.withUnsafeBufferPointer(URLReference.isPlain)
                    == bytes.withUnsafeBufferPointer(URLReference.isPlainBytewise), "\(bytes)")
        }
    }

    @Test func withoutAURLLinksStayRelative() throws {
        let result = try decodeHTML(#"<a href="a b.html">x</a><a href="/c">y</a>"#, url: nil)
        #expect(result.links.map { $0["url"] } == ["a%20b.html", "/c"])
        #expect(result.links.first?["href"] == "a b.html")
    }

    @Test func hrefsAreCleanedAndEscaped() throws {
        let result = try decodeHTML("<a href=\" \n/x\ty é\n \">x</a>")
        #expect(result.links.first?["url"] == "http://example.com/xy%20%C3%A9")
    }

    @Test func aRecordURLWithSpacesStillResolves() throws {
        let result = try decodeHTML(#"<a href="b.html">x</a>"#, url: "http://example.com/a dir/page.html")
        #expect(result.links.first?["url"] == "http://example.com/a%20dir/b.html")
    }

    @Test func linksPastTheLimitAreCounted() throws {
        let page = String(repeating: #"<a href="/x">x</a>"#, count: 5) + ##"<a href="#f">f</a>"##
        let result = try decodeHTML(page, configure: { $0.limits.maxHTMLLinks = 2 })
        #expect(result.links.count == 2)
        #expect(result["linksTotal"] as? Int == 5)
        #expect(result.truncated == ["links"])
        let within = try decodeHTML(page, configure: { $0.limits.maxHTMLLinks = 5 })
        #expect(within["linksTotal"] == nil)
        #expect(within["truncated"] == nil)
    }

    @Test func optionsLeaveLinksAndTextOut() throws {
        let page = #"<title>T</title><a href="/x">x</a><p>text</p>"#
        let noLinks = try decodeHTML(page, configure: { $0.htmlLinks = false })
        #expect(noLinks["links"] == nil && noLinks["linksTotal"] == nil)
        #expect(noLinks["text"] as? String == "x\n\ntext")
        let noText = try decodeHTML(page, configure: { $0.htmlText = false })
        #expect(noText["text"] == nil)
        #expect(noText.links.count == 1)
        #expect(noText["title"] as? String == "T")
    }

    @Test func headingsInOrder() throws {
        let result = try decodeHTML("<h2> Two <i>x</i></h2><p>p</p><h1>One</h1><h6></h6><h3 hidden>Three</h3>")
        let headings = try #require(result["headings"] as? [[String: Any]])
        #expect(headings.map { $0["level"] as? Int } == [2, 1, 3])
        #expect(headings.map { $0["text"] as? String } == ["Two x", "One", "Three"])
    }

    /// The visible text of `html`.
    func text(_ html: String) throws -> String? { try decodeHTML(html)["text"] as? String }

    @Test func blocksParagraphsAndLineBreaks() throws {
        #expect(try text("<p>Hello <b>world</b></p><p>Two</p>") == "Hello world\n\nTwo")
        #expect(try text("<div>a<br>b</div><div>c</div>d") == "a\nb\nc\nd")
        #expect(try text("<p>a<br><br>b</p>") == "a\n\nb")
        #expect(try text("<h1>H</h1>text<ul><li>one</li><li>two</li></ul>") == "H\n\ntext\none\ntwo")
        #expect(try text("<span>a</span><span>b</span> <span>c</span>") == "ab c")
        // libxml2's implied elements (html, body; a p for text outside any element) break no line.
        #expect(try text("lead <b>x</b> tail") == "lead x tail")
        #expect(try text("<title>T</title>Hello <i>world</i>") == "Hello world")
        #expect(try text("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>") == "a\tb\nc")
    }

    @Test func whiteSpaceCollapsesOutsidePre() throws {
        #expect(try text("<p>  a \n\t b  </p>") == "a b")
        #expect(try text("<p>a&nbsp;&nbsp;b</p>") == "a\u{A0}\u{A0}b")
        #expect(try text("<p>x</p><pre>  a\n    b  </pre><p>y</p>") == "x\n\n  a\n    b  \n\ny")
        #expect(try text("<div>x</div><pre>\ta\n\n\tb</pre>y") == "x\n\ta\n\n\tb\ny")
        // A line feed right after <pre> is not content.
        #expect(try text("<p>x</p><pre>\n\nfirst</pre>") == "x\n\n\nfirst")
    }

    @Test func unrenderedElementsAreDropped() throws {
        let page = """
            <head><style>s</style><script>var s = "<p>no</p>";</script></head><body>
            <p>shown</p><script>js</script><noscript>ns</noscript><template>tp</template><iframe>if</iframe>
            <svg><text>svg</text></svg><object>obj</object><select><option>o</option></select><textarea>ta</textarea>
            <button>btn</button><input value="v"><label>label</label></body>
            """
        #expect(try text(page) == "shown\n\nlabel")
    }

    @Test func hiddenElementsAreDropped() throws {
        let page = """
            <p>a</p><div hidden>h</div><span aria-hidden="TRUE">ah</span><span aria-hidden="false">af</span>
            <span style="color: red; DISPLAY : none !important">dn</span><span style="visibility:hidden">vh</span>
            <div style="display:none">x<div style="display:block">y</div></div><p>b</p>
            """
        #expect(try text(page) == "a\n\naf\n\nb")
    }

    @Test func imageAltIsText() throws {
        #expect(try text(#"<p>x <img alt="A1"> y<img src="i.png"></p>"#) == "x A1 y")
        #expect(try text(#"<p>x<img alt="A1">y</p>"#) == "xA1y")
    }

    @Test func textIsCutAtACharacterBoundary() throws {
        let result = try decodeHTML("<p>ab\u{E9}cd</p><p>more</p>", configure: { $0.limits.maxTextBytes = 3 })
        #expect(result["text"] as? String == "ab")
        #expect(result.truncated == ["text"])
        let exact = try decodeHTML("<p>ab\u{E9}</p>", configure: { $0.limits.maxTextBytes = 4 })
        #expect(exact["text"] as? String == "ab\u{E9}")
        #expect(exact["truncated"] == nil)
    }

    /// libxml2 stops reading at a NUL byte without a word: a NUL in an attribute hid every link and word after it.
    @Test func aNULByteHidesNothing() throws {
        let page = "<title>T\u{0}t</title><body><a href=\"/a\u{0}b\">one</a> after <a href=/two>two</a></body>"
        let result = try decodeHTML(page)
        #expect(result["title"] as? String == "T\u{FFFD}t")
        #expect(result.links.map { $0["url"] } == ["http://example.com/a%EF%BF%BDb", "http://example.com/two"])
        #expect(result["text"] as? String == "one after two")
        #expect(result.warnings.contains("2 NUL bytes replaced by U+FFFD"), "\(result.warnings)")
        #expect(result["truncated"] == nil)
        // The copy stays within the page budget, cut at a character boundary.
        let nuls = "<p>é" + String(repeating: "\u{0}", count: 40) + "</p>"
        let cut = try decodeHTML(nuls, configure: { $0.limits.maxDecodedBodyBytes = 64 })
        #expect(cut.truncated == ["document"], "\(cut.value)")
        #expect(cut.warnings.contains { $0.contains("maxDecodedBodyBytes") }, "\(cut.warnings)")
    }

    @Test func deepNestingStopsTheDocument() throws {
        let page = "<title>T</title>" + String(repeating: "<div>", count: 50) + "deep " + "<a href=/after>x</a>"
        let result = try decodeHTML(page, configure: { $0.limits.maxDepth = 20 })
        #expect(result["title"] as? String == "T")
        #expect(result.truncated == ["document"])
        #expect(result["text"] == nil)
        #expect(result.warnings.contains { $0.contains("nested deeper than 20") })
        let fine = try decodeHTML(page, configure: { $0.limits.maxDepth = 60 })
        #expect(fine["text"] as? String == "deep x")
        #expect(fine["truncated"] == nil)
    }

    @Test func tooManyAttributesEndTheDocumentBeforeTheTag() throws {
        let attributes = (0...LibXML2HTML.maxAttributesPerElement).map { "a\($0)=\"1\"" }.joined(separator: " ")
        let result = try decodeHTML("<p>before</p><div \(attributes)>inside</div>")
        #expect(result["text"] as? String == "before")
        #expect(result.truncated == ["document"])
        #expect(result.warnings.contains { $0.contains("attributes") })
        // A quoted `>` does not end the tag for the scan.
        let quoted = (0...LibXML2HTML.maxAttributesPerElement).map { "a\($0)=\">\"" }.joined(separator: " ")
        #expect(HTMLAttributeScan.firstTag(exceeding: LibXML2HTML.maxAttributesPerElement, in: quoted) == nil)
        #expect(
            try decodeHTML("<p>x</p><div \(quoted)>in</div>").truncated == ["document"])
    }

    /// An unclosed quote or comment inside a script (text to libxml2) must not end the scan: the tag after it is
    /// still found.
    @Test func quotesAndCommentsInScriptsDoNotBlindTheAttributeScan() throws {
        let attributes = (0...LibXML2HTML.maxAttributesPerElement).map { "a\($0)" }.joined(separator: " ")
        for script in [#"<script>s='<a b="'</script>"#, #"<script>x="<!--"</script>"#, #"<style>a[x='</style>"#] {
            let page = "<p>before</p>\(script)<div \(attributes)>inside</div>"
            #expect(HTMLAttributeScan.firstTag(exceeding: LibXML2HTML.maxAttributesPerElement, in: page) != nil)
            let result = try decodeHTML(page)
            #expect(result.truncated == ["document"], "\(script)")
        }
    }

    /// Many tags each under the per-tag limit: their comparisons together are bounded, and the page is cut at the
    /// tag that passes the budget.
    @Test func attributeComparisonsAreBoundedPerDocument() throws {
        let attributes = (0..<9_000).map { "a\($0)" }.joined(separator: " ")
        let page = "<p>before</p>" + (0..<4).map { "<div \(attributes)>tag\($0)</div>" }.joined()
        let bytes = Array(page.utf8)
        let found = bytes.withUnsafeBufferPointer {
            HTMLAttributeScan.firstTag(
                exceeding: LibXML2HTML.maxAttributesPerElement, pairBudget: LibXML2HTML.maxAttributePairs, in: $0)
        }
        // 9,000 attributes are 40,495,500 comparisons: the second tag passes 2^26.
        #expect(found?.overBudget == true)
        let result = try decodeHTML(page)
        #expect(result["text"] as? String == "before\n\ntag0")
        #expect(result.truncated == ["document"])
        #expect(result.warnings.contains { $0.contains("comparisons") })
    }

    /// A link too long to list is left out on its own: the links after it are still listed.
    @Test func anOverlongLinkHidesNoOtherLink() throws {
        let long = String(repeating: "x", count: HTMLExtractor.maxURLBytes + 1)
        let result = try decodeHTML(#"<a href="/\#(long)">long</a><a href="/after">after</a>"#)
        #expect(result.links.map { $0["url"] } == ["http://example.com/after"])
        #expect(result["linksTotal"] as? Int == 2)
        #expect(result.truncated == ["links"])
    }

    /// A `<base>` or record URL longer than maxBaseURLBytes is not resolved against: every relative link would make
    /// libxml2 parse it again.
    @Test func overlongBasesAreNotResolvedAgainst() throws {
        let long = "http://example.org/" + String(repeating: "b", count: HTMLExtractor.maxBaseURLBytes)
        let page = #"<base href="\#(long)"><a href="rel">r</a>"#
        let result = try decodeHTML(page)
        #expect(result["base"] == nil)
        #expect(result.links.first?["url"] == "http://example.com/dir/rel")
        let noBase = try decodeHTML(#"<a href="rel">r</a>"#, url: long)
        #expect(noBase.links.first?["url"] == "rel")
    }

    @Test func valueBoundCutsMetaLinksAndHeadings() throws {
        let page = #"<meta name="a" content="1"><meta name="b" content="2"><a href="/x">x</a><h1>h</h1>"#
        let result = try decodeHTML(page, configure: { $0.limits.maxValueBytes = 12 })
        #expect((result["meta"] as? [String: String]) == ["a": "1"])
        #expect(result.truncated.starts(with: ["meta", "links", "headings"]))
    }
}

extension HTMLAttributeScan {
    static func firstTag(exceeding limit: Int, in text: String) -> Int? {
        Array(text.utf8).withUnsafeBufferPointer {
            firstTag(exceeding: limit, pairBudget: LibXML2HTML.maxAttributePairs, in: $0)?.offset
        }
    }
}

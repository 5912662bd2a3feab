import Foundation
import Testing

@testable import RespDecode

/// What libxml2 is given for `page`, once the pre-scan's ranges are dropped (also HTMLAttributeDropTests), with each
/// token of a value given aside shown as that value (`tokens: true` shows the tokens, as `\u{1}` and the index).
func preparedForLibXML2(_ page: String, tokens: Bool = false) -> String {
    let bytes = Array(page.utf8)
    return bytes.withUnsafeBufferPointer { text in
        let scan = HTMLAttributeScan.scan(
            text, attributeLimit: LibXML2HTML.maxAttributesPerElement, pairBudget: LibXML2HTML.maxAttributePairs)
        let compacted = HTMLAttributeScan.compact(text, dropping: scan.dropped, aside: scan.aside)
        // A page with tokens has no token marks of its own.
        guard !tokens, !scan.aside.isEmpty else { return String(decoding: compacted.text, as: UTF8.self) }
        var shown: [UInt8] = []
        var i = 0
        while i < compacted.text.count {
            let mark = HTMLAttributeScan.textTokenMark
            let isText = compacted.text[i...].starts(with: mark)
            guard isText || compacted.text[i] == HTMLAttributeScan.tokenMark else {
                shown.append(compacted.text[i])
                i += 1
                continue
            }
            let digits = Array(HTMLAttributeScan.tokenDigits.description.utf8)
            var index = 0
            i += isText ? mark.count : 1
            while i < compacted.text.count, let digit = digits.firstIndex(of: compacted.text[i]) {
                index = index * 64 + digit
                i += 1
            }
            shown += compacted.values[compacted.offsets[index]...].prefix { $0 != 0 }
        }
        return String(decoding: shown, as: UTF8.self)
    }
}

/// Script and style content dropped before libxml2 reads it (docs/decoding.md#visible-text).
@Suite("HTML script and style content")
struct HTMLRawTextTests {
    private func prepared(_ page: String) -> String { preparedForLibXML2(page) }

    @Test func contentIsDroppedAndTheTagsKept() {
        #expect(prepared("<p>a</p><script>var x = 1;</script><p>b</p>") == "<p>a</p><script></script><p>b</p>")
        #expect(prepared("<style>p { color: red }</style>x") == "<style></style>x")
        #expect(prepared("<SCRIPT type=text/javascript>x()</SCRIPT >y") == "<SCRIPT type=text/javascript></SCRIPT >y")
        #expect(prepared("<StYlE>a{}</sTyLe/>y") == "<StYlE></sTyLe/>y")
        #expect(prepared("<script></script>") == "<script></script>")
        #expect(prepared("no tags") == "no tags")
    }

    /// HTML ends script text only at `</script` and white space, `/` or `>`; libxml2 2.9.14 ended it at the first
    /// `</` and a letter, and the rest leaked into the text and links.
    @Test func onlyTheMatchingEndTagEndsTheContent() throws {
        #expect(
            prepared(#"<script>document.write("<a href='/leak'>leak</a>")</script>x"#) == "<script></script>x")
        #expect(prepared("<script>a</scriptx>b</script>c") == "<script></script>c")
        #expect(prepared("<script>a</style>b</script>c") == "<script></script>c")
        #expect(prepared("<style>a</script>b</style>c") == "<style></style>c")
        let result = try decodeHTML(
            #"<p>before</p><script>document.write("<a href='/leak'>leak</a> more")</script><p>after</p>"#)
        #expect(result["text"] as? String == "before\n\nafter")
        #expect(result.links.isEmpty)
        #expect(result["linksTotal"] as? Int ?? 0 == 0)
    }

    @Test func commentsAndScriptsDoNotConfuseEachOther() throws {
        // `<!--` inside a script does not start a comment: the end tag after it still ends the script.
        // (A comment's text is dropped too: HTMLAttributeDropTests.)
        #expect(prepared("<script>x = '<!--';</script>y<!-- z -->") == "<script></script>y<!---->")
        // A script inside a comment is no script.
        #expect(prepared("<!-- <script> -->a<b>c</b>") == "<!---->a<b>c</b>")
        let result = try decodeHTML("<!-- <script> --><p>visible</p><script>x='<!--'</script><p>too</p>")
        #expect(result["text"] as? String == "visible\n\ntoo")
    }

    @Test func quotedGreaterThanInTheStartTag() {
        #expect(
            prepared(#"<script data-x="a>b" src='c>d'>code</script>e"#) == #"<script data-x="a>b" src='c>d'></script>e"#
        )
    }

    @Test func otherNamesAreNotScripts() {
        for page in [
            "<scriptx>a</scriptx>", "<noscript>a</noscript>", "<scripts>a</scripts>", "<styles>a</styles>",
            "<sty>a</sty>", "<template>a</template>",
        ] {
            #expect(prepared(page) == page)
        }
        #expect(prepared("<noscript>a</noscript><script>b</script>") == "<noscript>a</noscript><script></script>")
        #expect(prepared("<template><script>a</script>b</template>") == "<template><script></script>b</template>")
    }

    @Test func svgScriptsAreDroppedToo() {
        #expect(
            prepared("<svg><script type=\"text/ecmascript\">alert(1)</script><text>t</text></svg>")
                == "<svg><script type=\"text/ecmascript\"></script><text>t</text></svg>")
    }

    /// An unclosed script or style runs to the end of input (libxml2 reads the rest as its content).
    @Test func anUnclosedScriptDropsTheRest() throws {
        #expect(prepared("<p>a</p><script>b</p><p>c") == "<p>a</p><script>")
        #expect(prepared("<p>a</p><style>b</styl") == "<p>a</p><style>")
        #expect(prepared("a<script>b</script") == "a<script>")
        #expect(try decodeHTML("<p>a</p><script>b</p><p>c")["text"] as? String == "a")
    }

    /// A script whose start tag libxml2 closes at once (`/>`) or ends in an unclosed quote keeps what follows.
    @Test func emptyAndBrokenStartTagsKeepTheirContent() {
        for page in ["<script/>a</script>", "<script src=x />a</script>", #"<script src="a>b</script>"#] {
            #expect(prepared(page) == page)
        }
    }

    /// JSON-LD is what the headline reads: it is kept whole.
    @Test func jsonLDIsKept() throws {
        let page =
            #"<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"From LD"}</script>"#
        #expect(prepared(page) == page)
        #expect(
            prepared(#"<script type=APPLICATION/LD+JSON>{}</script>"#)
                == #"<script type=APPLICATION/LD+JSON>{}</script>"#)
        let result = try decodeHTML("<title>T</title>" + page + "<script>var a = 1;</script><p>body</p>")
        #expect(result["headline"] as? String == "From LD")
        #expect(result["text"] as? String == "body")
    }

    /// Other JSON is no JSON-LD: a data island (`application/json`, often the largest script of a page) is dropped
    /// like any script, and the text around it is unchanged. A type written with a character reference may still be
    /// JSON-LD to libxml2: a tag with a `&` is kept.
    @Test func otherJSONIsDroppedAndReferencesKept() throws {
        let island = #"<script type="application/json" id="__NEXT_DATA__">{"html":"<p>leak</p> more"}</script>"#
        // (`id` is an attribute no field reads: dropped too.)
        #expect(prepared(island + "x") == #"<script type="application/json" ></script>x"#)
        #expect(prepared(#"<script type=json>{}</script>"#) == #"<script type=json></script>"#)
        let leaked = try decodeHTML("<p>before</p>" + island + "<p>after</p>")
        #expect(leaked["text"] as? String == "before\n\nafter")
        let referenced =
            #"<script type="application/ld&#43;json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"From LD"}</script>"#
        #expect(prepared(referenced) == referenced)
        let result = try decodeHTML("<title>T</title>" + referenced + "<p>body</p>")
        #expect(result["headline"] as? String == "From LD")
        let mentioned = #"<script data-x="a&amp;b" type="text/json">{}</script>"#
        #expect(prepared(mentioned) == #"<script  type="text/json">{}</script>"#)
    }

    /// What may be JSON-LD stays whole (a review's cases): a type with references for `+` and `j`; a `<script>`
    /// quoted in JSON-LD text, which is text to libxml2 (no content of its own to drop); and, past a bogus attribute
    /// name where libxml2 reads a quoted value this lexer does not, a tag that only mentions `json` (libxml2 takes the
    /// script's `type` from what this lexer reads as another tag).
    @Test func whatMayBeJSONLDIsKept() throws {
        let article = #"{"@context":"https://schema.org","@type":"NewsArticle","headline":"From LD"}"#
        let pages = [
            #"<script type="application/ld&#43;&#106;son">\#(article)</script>"#,
            #"<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","#
                + #""articleBody":"<script type=\"application/json\">x","headline":"From LD"}</script>"#,
            #"<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","#
                + #""articleBody":"the <script> tag","headline":"From LD"}</script>"#,
            #"<script a!=" b='"></script>' type=application/ld+json <script json>\#(article)</script>"#,
            // Past an end tag not its own, which libxml2 reads on after (a second review's case).
            #"<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","#
                + #""articleBody":"<p>Use the</p> <script> tag","headline":"From LD"}</script>"#,
            #"<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","#
                + #""articleBody":"<p>a</p><style>x","headline":"From LD"}</script>"#,
        ]
        for page in pages {
            #expect(prepared(page).hasSuffix(page.suffix(40)), "\(page)")
            let result = try decodeHTML("<title>T</title>" + page + "<p>body</p>")
            #expect(result["headline"] as? String == "From LD", "\(page)")
        }
    }

    /// The attribute bound still holds after a dropped script, and its offset is one in the text libxml2 gets.
    @Test func theAttributeBoundStillHolds() throws {
        let attributes = (0...LibXML2HTML.maxAttributesPerElement).map { "a\($0)" }.joined(separator: " ")
        let page = "<p>before</p><script>var s = '<a b=\"';</script><p>mid</p><div \(attributes)>inside</div>"
        let result = try decodeHTML(page)
        #expect(result["text"] as? String == "before\n\nmid")
        #expect(result.truncated == ["document"])
        // Tags inside a dropped script are not counted: libxml2 never sees them.
        let inScript = "<script><div \(attributes)></script><p>after</p>"
        #expect(HTMLAttributeScan.firstTag(exceeding: LibXML2HTML.maxAttributesPerElement, in: inScript) == nil)
        let kept = try decodeHTML(inScript)
        #expect(kept["text"] as? String == "after")
        #expect(kept.truncated.isEmpty)
        // A script after the cut is not dropped (the document ends before it).
        let bytes = Array((page + "<script>late</script>").utf8)
        let scan = bytes.withUnsafeBufferPointer {
            HTMLAttributeScan.scan(
                $0, attributeLimit: LibXML2HTML.maxAttributesPerElement, pairBudget: LibXML2HTML.maxAttributePairs)
        }
        let cut = try #require(scan.cut)
        #expect(scan.dropped.count == 2)
        #expect(scan.dropped.allSatisfy { $0 <= cut.offset })
    }

    // MARK: hostile input

    /// Many scripts, scripts full of `<` and `</scrip`, and one unclosed script: one pass each, bounded copies.
    @Test func manyScriptsAndNearEndTagsAreLinear() throws {
        let pages = [
            String(repeating: "<script>x</script>", count: 200_000),
            "<script>" + String(repeating: "</scrip<", count: 400_000) + "</script>x",
            "<script>" + String(repeating: "<", count: 3_000_000),
            String(repeating: "<style>", count: 400_000),
        ]
        for page in pages {
            let start = ContinuousClock.now
            let result = try decodeHTML(page)
            #expect(ContinuousClock.now - start < .seconds(1))
            #expect(result.truncated.isEmpty)
        }
    }
}

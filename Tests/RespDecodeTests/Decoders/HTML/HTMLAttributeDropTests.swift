import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Attributes the extractor never reads are not given to libxml2 (HTMLAttributeScan, docs/html-parser.md#cost), and
/// that changes nothing the extractor sees.
@Suite("HTML attributes libxml2 is not given")
struct HTMLAttributeDropTests {
    private func prepared(_ page: String, tokens: Bool = false) -> String {
        preparedForLibXML2(page, tokens: tokens)
    }

    /// Everything the extractor made of `page`, as one string, with the attributes dropped or all given to libxml2.
    static func extracted(_ page: [UInt8], dropping: Bool) -> String {
        var limits = Limits()
        limits.maxTextBytes = 1 << 20
        let extractor = HTMLExtractor(wantText: true, wantLinks: true, limits: limits, url: "http://a.test/b/c.html")
        let cut = page.withUnsafeBufferPointer {
            LibXML2HTML.parse($0, into: extractor, maxDepth: 512, droppingUnreadAttributes: dropping)
        }
        extractor.finish()
        func text(_ bytes: [UInt8]?) -> String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "nil" }
        var parts = [
            "cut \(cut ?? "nil")", "title \(text(extractor.title))", "headline \(text(extractor.headline))",
            "lang \(text(extractor.lang))", "base \(text(extractor.base))", "canonical \(text(extractor.canonical))",
            "linksTotal \(extractor.linksTotal)",
            "truncated \(extractor.metaTruncated) \(extractor.linksTruncated) \(extractor.headingsTruncated)",
            "text \(text(extractor.text.bytes))",
        ]
        parts += extractor.meta.map { "meta \(text($0.key)) = \(text($0.content))" }
        parts += extractor.headings.map { "h\($0.level) \(text($0.text))" }
        let links = extractor.linkBytes
        func range(_ r: Range<Int>?) -> String { r.map { text(Array(links[$0])) } ?? "nil" }
        parts += extractor.links.map {
            "link \($0.element) \(range($0.url)) \(range($0.href)) \(range($0.rel)) \(range($0.text))"
        }
        return parts.joined(separator: "\n")
    }

    /// Fails unless `page` gives the extractor the same with and without the dropping.
    static func expectSame(_ page: [UInt8], _ comment: @autoclosure () -> String) {
        let dropped = extracted(page, dropping: true)
        let all = extracted(page, dropping: false)
        #expect(dropped == all, "\(comment())")
    }

    // MARK: what is dropped

    @Test func unreadAttributesAreDroppedAndTheBlanksKept() {
        #expect(
            prepared(#"<div class="a b" id=x data-y='z' hidden>t</div>"#) == "<div    hidden>t</div>")
        #expect(prepared("<p\tclass=x\n>t</p>") == "<p\t\n>t</p>")
        #expect(
            prepared(#"<img src="a.png" srcset="a2.png 2x" alt="A" loading=lazy width=3>"#)
                == #"<img src="a.png"  alt="A"  >"#)
        #expect(prepared("<input disabled>") == "<input >")
    }

    @Test func everyReadAttributeIsKeptInAnyCase() {
        for name in HTMLExtractor.readAttributes {
            let lower = "\(name)"
            for spelled in [lower, lower.uppercased()] {
                let page = "<x \(spelled)=\"v\" class=c>"
                #expect(prepared(page) == "<x \(spelled)=\"v\" >", "\(spelled)")
            }
        }
        // Names close to a read one are not read.
        #expect(prepared("<a hrefx=1 xhref=2 hre=3 href=4>") == "<a    href=4>")
        #expect(prepared("<a xlink:href=1 data-href=2>") == "<a  >")
    }

    @Test func commentTextIsDropped() {
        #expect(prepared("<p>a<!-- x -->b</p><!---->c<!-- <a href=1> -- -->d") == "<p>a<!---->b</p><!---->c<!---->d")
        #expect(prepared("<!-->a-->b<!--->c-->d") == "<!---->b<!---->d")
        // Not in a kept script, which libxml2 reads as text.
        let script = #"<script type="application/ld+json">{"a":"<!-- x -->"}</script>"#
        #expect(prepared(script + "<!-- y -->") == script + "<!---->")
    }

    /// libxml2 2.9.14 also ends a comment at `--!>`: so does the scan, and the text after it is not dropped.
    @Test func aCommentEndsAtTheFirstOfBothEnds() {
        let page = #"<p>A<!-- x --!><a href="/l" class=c>L</a><!-- y -->B</p>"#
        #expect(prepared(page) == #"<p>A<!----!><a href="/l" >L</a><!---->B</p>"#)
        Self.expectSame(Array(page.utf8), page)
    }

    /// A doctype's quoted literal runs to its matching quote for libxml2, past `>`: a `<` in it, or no closing
    /// quote, stops the dropping; closed literals do not.
    @Test func doctypeLiterals() {
        for page in [
            "<!DOCTYPE html SYSTEM \"x>\n<div class=\"a\"><a href=\"/l\">L</a>",
            "<!DOCTYPE html PUBLIC \"p\" \"s><div class=a>x</div>",
        ] {
            #expect(prepared(page) == page, "\(page)")
            Self.expectSame(Array(page.utf8), page)
        }
        let xhtml =
            #"<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">"#
        #expect(prepared(xhtml + "<div class=a>x</div>") == xhtml + "<div >x</div>")
    }

    /// `<script a=1/>`: the `/` is the value's, libxml2 opens the script and reads what follows as its text, so
    /// nothing in it is dropped (a JSON-LD headline with markup in it stays as it was).
    @Test func aSlashEndingAnUnquotedValueOpensTheScript() {
        let page =
            #"<script type="application/ld+json" data-x=1/>{"@type":"NewsArticle","headline":"<span class=k>Big news"}</script><i class=2>"#
        #expect(
            prepared(page)
                == #"<script type="application/ld+json" >{"@type":"NewsArticle","headline":"<span class=k>Big news"}</script><i >"#
        )
        Self.expectSame(Array(page.utf8), page)
        #expect(prepared("<script src=x/><p class=a>y</p>") == "<script src=x/><p class=a>y</p>")
        #expect(prepared("<script src=x /><p class=a>y</p>") == "<script src=x /><p >y</p>")
    }

    @Test func valuesWithAngleBracketsAreKept() {
        #expect(prepared(#"<a title="1>2" class="<b" id=x>"#) == #"<a title="1>2" class="<b" >"#)
    }

    // MARK: values given aside

    /// A read attribute's quoted value of 8 or more bytes of printable ASCII without `<` and `>` reaches libxml2 as a
    /// token (0x01 and the value's index in base 64), and the extractor gets the value itself.
    @Test func longPlainReadValuesAreGivenAside() {
        let page =
            #"<a href="http://e.test/a/long/path.html" class=c>x</a><img src='https://e.test/i.png?w=1' alt="short">"#
        #expect(prepared(page, tokens: true) == "<a href=\"\u{1}A\" >x</a><img src='\u{1}B' alt=\"short\">")
        #expect(
            prepared(page)
                == #"<a href="http://e.test/a/long/path.html" >x</a><img src='https://e.test/i.png?w=1' alt="short">"#)
        Self.expectSame(Array(page.utf8), page)
        let links = Self.extracted(Array(page.utf8), dropping: true)
        #expect(links.contains("http://e.test/a/long/path.html") && links.contains("https://e.test/i.png?w=1"))
        // `&amp;` is the one reference a value given aside may hold: its copy holds `&`, as libxml2 would give it.
        let query = #"<a href="/search?q=a&amp;page=2&amp;x=">x</a>"#
        #expect(prepared(query, tokens: true) == "<a href=\"\u{1}A\">x</a>")
        #expect(prepared(query) == #"<a href="/search?q=a&page=2&x=">x</a>"#)
        Self.expectSame(Array(query.utf8), query)
    }

    /// A run of text of 8 bytes or more that libxml2 passes on as it is, in one piece, reaches libxml2 as a token
    /// (U+E000 and its index), and the extractor gets the text itself (its white space as written).
    @Test func textGoesAsideWhole() {
        let page = "<title>A title  here</title><p>Some text,\n  with é and 日本.</p><p>short</p>"
        #expect(
            prepared(page, tokens: true)
                == "<title>\u{E000}A</title><p>\u{E000}B</p><p>short</p>")
        #expect(prepared(page) == page)
        Self.expectSame(Array(page.utf8), page)
        let extracted = Self.extracted(Array(page.utf8), dropping: true)
        #expect(extracted.contains("title A title here") && extracted.contains("Some text, with é and 日本."))
        // Values and text share the indexes.
        let mixed = #"<a href="/a/long/path">anchor text</a>"#
        #expect(prepared(mixed, tokens: true) == "<a href=\"\u{1}A\">\u{E000}B</a>")
        Self.expectSame(Array(mixed.utf8), mixed)
    }

    @Test func otherTextStaysWithLibxml2() {
        for text in [
            "a &amp; b and more", "a \u{0C} form feed", "a carriage\r\nreturn", "a \u{FFFF} noncharacter",
            "        \n\n\t  ", "seven b", String(repeating: "long text ", count: 100),
        ] {
            let page = "<p>\(text)</p><p>x</p>"
            #expect(!prepared(page, tokens: true).contains("\u{E000}"), "\(text)")
            Self.expectSame(Array(page.utf8), page)
        }
        // Not after an element kept as written, nor where the scan and libxml2 may read text otherwise: after `</` or
        // `<?` without a name libxml2 reads the rest as text, in one piece with what follows the `>` (found in
        // review); before the first start tag libxml2 skips white space after a comment or instruction.
        for page in [
            "<html><body><p></1>hello world text</p></body></html>", "<p><?>hello world text</p>",
            "<p></ p>hello world text</p>", "<title></>My page title</title>", "<p>a</p><?1 ?>more text here<p>b",
            "<p></-x>hello world text</p>", "<!--c-->   hello world text<p>x</p>", "<?pi x?>   hello world text<p>x",
            "<pre>a</pre><p>some text here</p>", "<p>< some text here</p>", "<p class=1\u{0C}>some text here</p>",
        ] {
            #expect(!prepared(page, tokens: true).contains("\u{E000}"), "\(page)")
            Self.expectSame(Array(page.utf8), page)
        }
    }

    /// A page holding U+E000, or a character reference libxml2 reads as U+E000, gets no tokens: a piece of its text
    /// could start with the mark.
    @Test func aPageThatMayHoldTheTextMarkGetsNoTokens() {
        for mark in ["\u{E000}", "&#xE000;", "&#XE000;", "&#57344;", "&#0000057344;", "&#xe000", "&#xE000x;"] {
            let page = "<p>\(mark) B</p><p>some text here</p><a href=\"/a/long/path\">x</a>"
            #expect(prepared(page, tokens: true) == page, "\(mark)")
            Self.expectSame(Array(page.utf8), page)
        }
        // Other references do not stop it.
        let page = "<p>&#xE001; B</p><p>some text here</p>"
        #expect(prepared(page, tokens: true).contains("\u{E000}A"))
        Self.expectSame(Array(page.utf8), page)
    }

    /// A token's digits resolve only to an index of the copies there are; anything else stays as libxml2 gave it.
    @Test func tokensResolveOnlyToCopiesThereAre() {
        let values: [UInt8] = Array("first\0second\0".utf8)
        let offsets = [0, 6]
        values.withUnsafeBufferPointer { bytes in
            offsets.withUnsafeBufferPointer { offsets in
                func copy(_ digits: String) -> String? {
                    Array((digits + "\0").utf8).withUnsafeBufferPointer {
                        HTMLAttributeScan.copy(
                            ofToken: $0.baseAddress!, values: bytes.baseAddress!, offsets: offsets.baseAddress!,
                            count: 2
                        ).map { String(cString: $0) }
                    }
                }
                #expect(copy("A") == "first" && copy("B") == "second" && copy("AB") == "second")
                #expect(copy("C") == nil && copy("BA") == nil && copy("") == nil && copy(" B") == nil)
                #expect(copy("A\u{E000}") == nil && copy("_") == nil)
            }
        }
    }

    /// Indexes take as many digits as they need; every value reaches the extractor.
    @Test func manyValuesGoAsideByIndex() {
        let page = (0..<5000).map { "<a href=\"/page/number/\($0)\">\($0)</a>" }.joined()
        let tokens = prepared(page, tokens: true)
        #expect(tokens.hasPrefix("<a href=\"\u{1}A\">0</a><a href=\"\u{1}B\">1</a>"))
        #expect(tokens.contains("<a href=\"\u{1}_\">63</a><a href=\"\u{1}BA\">64</a>"))
        #expect(tokens.hasSuffix("<a href=\"\u{1}BOH\">4999</a>"))
        #expect(prepared(page) == page)
        Self.expectSame(Array(page.utf8), "5,000 links")
    }

    @Test func otherValuesStayWithLibxml2() {
        for value in [
            #""http://e.test/?a=1&quot;b=2""#, #""http://e.test/?a=1&AMP;b=2""#, #""http://e.test/?a=1&amp b=2""#,
            #""http://e.test/?a=1&b=2&amp;c""#, #""http://e.test/<long>/path""#, #""http://e.test/é/long/path""#,
            "http://e.test/unquoted/long", #""0123456""#, "\"http://e.test/tab\tin/it\"",
        ] {
            let page = "<a href=\(value)>x</a>"
            #expect(prepared(page, tokens: true) == page, "\(value)")
            Self.expectSame(Array(page.utf8), page)
        }
        // A charset named in a <meta> changes nothing (HTML_PARSE_IGNORE_ENC), given aside or not.
        for meta in [
            #"<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><p>é ü</p>"#,
            #"<meta content="text/html; charset=windows-1251" http-equiv="content-type"><title>é ü</title>"#,
        ] {
            #expect(prepared(meta, tokens: true).contains("content=\"\u{1}"), "\(meta)")
            Self.expectSame(Array(meta.utf8), meta)
            #expect(Self.extracted(Array(meta.utf8), dropping: true).contains("é ü"), "\(meta)")
        }
        // Unread attributes are dropped as before, however long.
        #expect(prepared(#"<p class="a long list of class names">"#, tokens: true) == "<p >")
    }

    /// A page with a 0x01 byte of its own gets no tokens: the extractor could not tell them from its values.
    @Test func aPageWithTheTokenMarkGetsNoTokens() {
        let page = "<a href=\"\u{1}A\">a</a><a href=\"http://e.test/a/long/path.html\">b</a>"
        #expect(prepared(page, tokens: true) == page)
        Self.expectSame(Array(page.utf8), page)
        #expect(Self.extracted(Array(page.utf8), dropping: true).contains("http://e.test/a/long/path.html"))
    }

    /// libxml2 makes a character reference to 0x01 a NUL, so no value of the page can pass for a token.
    @Test func aCharacterReferenceToTheMarkIsNoToken() {
        for reference in ["&#1;", "&#x1;", "&#X01;", "&#0000001;"] {
            let page = "<a href=\"\(reference)0\">a</a><a href=\"http://e.test/a/long/path.html\">b</a>"
            #expect(prepared(page, tokens: true).contains("\u{1}A\">b"), "\(reference)")
            Self.expectSame(Array(page.utf8), page)
        }
    }

    /// Where the scan stops the dropping, nothing more is given aside either; a cut tag's tokens go with it.
    @Test func noTokensWhereNothingIsDropped() {
        let page = "<a class=1\u{0C}href=2>x</a><a href=\"http://e.test/a/long/path.html\">y</a>"
        #expect(prepared(page, tokens: true) == page)
        Self.expectSame(Array(page.utf8), page)
        let attributes = (0..<3).map { " x\($0)=1" }.joined()
        let cut = Array(("<a href=\"http://e.test/a/long/path.html\"" + attributes + ">y</a>").utf8)
        cut.withUnsafeBufferPointer { text in
            let scan = HTMLAttributeScan.scan(text, attributeLimit: 2, pairBudget: LibXML2HTML.maxAttributePairs)
            #expect(scan.cut?.offset == 0 && scan.dropped.isEmpty && scan.aside.isEmpty)
        }
    }

    // MARK: where libxml2 might read the page otherwise, nothing more is dropped

    @Test func formFeedsStopTheDropping() {
        // A form feed is white space here, not to libxml2, which reads it as part of a bogus attribute or value.
        #expect(prepared("<a class=1\u{0C}id=2> <b class=3>") == "<a class=1\u{0C}id=2> <b class=3>")
        #expect(prepared("<a id=0 class\u{0C}=1> <b class=3>") == "<a  class\u{0C}=1> <b class=3>")
        #expect(prepared("<a id=\"0\"\u{0C}class=1> <b class=3>") == "<a \u{0C}class=1> <b class=3>")
        #expect(prepared("<a id=0\u{0C}class=1> <b class=3>") == "<a id=0\u{0C}class=1> <b class=3>")
    }

    @Test func namesLibxml2DoesNotReadStopTheDropping() {
        for name in ["@click", "[x]", "#ref", "a@b", "-x", "\u{E9}t\u{E9}", "a\"b", String(repeating: "n", count: 100)]
        {
            let page = "<a class=0 \(name)=\"1 class=2\" href=h> <b id=3>"
            #expect(prepared(page) == "<a  \(name)=\"1 class=2\" href=h> <b id=3>", "\(name)")
        }
        #expect(prepared("<a id=1 \(String(repeating: "n", count: 99))=2>") == "<a  >")
        #expect(prepared("<di@v class=1><b class=2>") == "<di@v class=1><b class=2>")
    }

    @Test func aSlashNotBeforeTheEndStopsTheDropping() {
        #expect(prepared("<br class=a /><b id=c>") == "<br  /><b >")
        #expect(prepared("<a /class=\"1 2\" id=3><b id=4>") == "<a /class=\"1 2\" id=3><b id=4>")
    }

    @Test func unclosedQuotesAndCommentsStopTheDropping() {
        #expect(prepared("<a id=1 title=\"x><b class=2>") == "<a  title=\"x><b class=2>")
        #expect(prepared("<a id=1><!-- <b class=2>") == "<a ><!-- <b class=2>")
        #expect(prepared("<!-- <b class=1> --><i class=2>") == "<!----><i >")
    }

    @Test func endTagsAndInstructionsWithATagInsideStopTheDropping() {
        // libxml2 ends them at the first `>`, inside the quoted value here; the rest is text to it.
        for page in [
            "</div <a title=\">\" class=1 href=2>", "<?php '<a title=\">\" class=1>' ?>",
            "<!DOCTYPE x \"<a title='>' class=1>\">",
        ] {
            #expect(prepared(page) == page, "\(page)")
        }
        #expect(prepared("<?xml version=\"1.0\"?><a class=1></a><b id=2>") == "<?xml version=\"1.0\"?><a ></a><b >")
    }

    @Test func aNULAnywhereStopsTheDropping() {
        #expect(prepared("<a class=1>\u{0}<b id=2>") == "<a class=1>\u{0}<b id=2>")
        #expect(prepared("<a class=1><b id=2>\u{0}") == "<a class=1><b id=2>\u{0}")
    }

    @Test func nothingIsDroppedInKeptJSONLD() {
        let script = #"<script type="application/ld+json">{"a":"<b class=\"x\">"}</script>"#
        #expect(prepared(script + "<i class=1>") == script + "<i >")
        // A tag that starts in the script and ends past libxml2's end of it (`</` and a letter).
        let straddling = #"<script type=ld+json>"<i title='</script> <b class=2>'>"</script>"#
        #expect(prepared(straddling + "<u id=3>") == straddling + "<u id=3>")
    }

    // MARK: white space in text

    @Test func whiteSpaceRunsInTextBecomeTheirFirstByte() {
        // (Text of 8 bytes or more without a reference goes aside whole instead: see below.)
        #expect(prepared("<p>a   b</p>\n  <p>d\t\te</p>") == "<p>a b</p>\n<p>d\te</p>")
        #expect(
            prepared("<p>a&amp;   b\n\n  c</p>\n  <p>d\t\te&amp;f</p>") == "<p>a&amp; b\nc</p>\n<p>d\te&amp;f</p>")
        // After an end tag, an instruction and a comment too, and up to the end.
        #expect(prepared("<b>x</b>  y<?pi z?>\r\n z<!-- c -->   w  ") == "<b>x</b> y<?pi z?>\rz<!----> w ")
        // Around references, which libxml2 reads apart from the text.
        #expect(prepared("<p>&amp;   &lt;\n\n</p>") == "<p>&amp; &lt;\n</p>")
    }

    @Test func whiteSpaceOutsideTextIsKept() {
        for page in [
            "  \n <p>a</p>", "<!DOCTYPE html  SYSTEM  \"a  b\">\n\n<p>", "<a  href=\"x  y\"   alt='t  u'  >",
            #"<script type="application/ld+json">{"a":  "b   c"}</script>"#, "<p>< b  c <i>", "<p>a  b</p>\u{0}",
        ] {
            #expect(prepared(page) == page, "\(page)")
        }
        #expect(prepared("<style>a  {}</style>  x") == "<style></style> x")
    }

    @Test func textKeptAsWrittenStopsTheCollapsing() {
        for name in ["pre", "PRE", "listing", "Plaintext", "xmp"] {
            let page = "<p>a  b</p><\(name) id=1>\n x  y</\(name)><p>c  d</p>"
            #expect(prepared(page) == "<p>a b</p><\(name) >\n x  y</\(name)><p>c  d</p>", "\(name)")
            Self.expectSame(Array(page.utf8), page)
        }
    }

    /// libxml2 hands text on in pieces of 1,000 bytes, and one of white space only, with more to come, opens an
    /// implied `<p>` in `<head>`: text with a run that long is left as it is, shorter runs collapse.
    @Test func aRunAsLongAsLibxml2sTextPieceIsLeftWithItsText() {
        let long = String(repeating: " ", count: HTMLAttributeScan.maxCollapsedRun)
        let shorter = String(repeating: "\n", count: HTMLAttributeScan.maxCollapsedRun - 1)
        #expect(prepared("<p>a  b\(long)c</p>d  e") == "<p>a  b\(long)c</p>d e")
        #expect(prepared("<p>a  b\(shorter)c</p>") == "<p>a b\nc</p>")
    }

    /// Found in review: libxml2 goes on with a JSON-LD script's text after an end tag that closes nothing (`</b>`),
    /// which the lexer read as text and tags.
    @Test func aKeptScriptEndedByAnotherEndTagStopsTheDropping() {
        let script =
            #"<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"A</b>  B   C <i class=x>"}</script>"#
        let page = script + "<title>T</title><p class=1>x  y</p>"
        #expect(prepared(page) == page)
        Self.expectSame(Array(page.utf8), page)
        let closed = #"<script type="application/ld+json">{"headline":"A"}</SCRIPT ><p class=1>x  y</p>"#
        #expect(prepared(closed) == #"<script type="application/ld+json">{"headline":"A"}</SCRIPT ><p >x y</p>"#)
    }

    /// libxml2 hands text on in pieces of 1,000 bytes; one of white space only, with more to come, opens an implied
    /// `<p>` where `<html>` is the open element: collapsing that run would join the two words.
    @Test func aPieceOfWhiteSpaceOnlyIsLeftToLibxml2() {
        for gap in [
            String(repeating: " ", count: HTMLAttributeScan.maxCollapsedRun),
            // Controls libxml2 does not pass on: 1,000 blanks in a piece all the same.
            String(repeating: "  \u{0C}", count: HTMLAttributeScan.maxCollapsedRun / 2),
            String(repeating: "  \u{1}", count: HTMLAttributeScan.maxCollapsedRun / 2),
            String(repeating: "  \u{FFFF}", count: HTMLAttributeScan.maxCollapsedRun / 2),
        ] {
            let page = "<body>a</body>" + gap + "<b>x</b>"
            #expect(prepared(page) == page)
            Self.expectSame(Array(page.utf8), "\(page.utf8.count) bytes")
            #expect(Self.extracted(Array(page.utf8), dropping: true).contains("text a\n\nx"))
        }
        // Other characters that begin with EF do not stop it.
        #expect(prepared("<p>\u{FF0C}  \u{FFFD}  x&amp;</p>") == "<p>\u{FF0C} \u{FFFD} x&amp;</p>")
    }

    @Test func textAfterEndTagsAndInstructionsLibxml2ReadsAsText() {
        #expect(prepared("<p>a</p x>  y<?x y>  z") == "<p>a</p x> y<?x y> z")
        // Not after `</` or `<?` without a name: libxml2 reads from there on as text.
        #expect(prepared("<p>a</ p>  y<? x>  z") == "<p>a</ p>  y<? x>  z")
    }

    /// The vector search against a byte loop, for every length up to 100 and a pair, control or EF at every place.
    /// The vector test of text to give aside against a byte loop (and Swift's UTF-8 check), for every length up to
    /// 70 with a byte or sequence of interest at every place.
    @Test func plainTextTestIsTheByteLoops() {
        func reference(_ bytes: [UInt8]) -> Bool {
            guard String(validating: bytes, as: UTF8.self) != nil else { return false }
            for i in bytes.indices {
                let byte = bytes[i]
                if byte < 0x20 && byte != 0x09 && byte != 0x0A { return false }
                if byte == 0x26 { return false }
                if byte == 0xEF && i + 2 < bytes.count && bytes[i + 1] == 0xBF && bytes[i + 2] & 0xFE == 0xBE {
                    return false
                }
            }
            return bytes.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A }
        }
        let pieces: [[UInt8]] = [
            [0x26], [0x0C], [0x0D], [0x00], [0x01], [0x09], [0x0A], [0x20], [0x7F], [0xEF, 0xBF, 0xBE],
            [0xEF, 0xBF, 0xBF], [0xEF, 0xBF, 0xBD], [0xEF, 0xBC, 0x8C], [0xC3, 0xA9], [0xC3], [0xA9],
            [0xE6, 0x97, 0xA5],
            [0xF0, 0x9F, 0x98, 0x80], [0xED, 0xA0, 0x80], [0xC0, 0xAF],
        ]
        for count in 0...70 {
            for filler in [UInt8(ascii: "w"), 0x20] {
                for place in 0...count {
                    for piece in pieces {
                        var bytes = [UInt8](repeating: filler, count: count)
                        bytes.insert(contentsOf: piece, at: place)
                        let plain = bytes.withUnsafeBufferPointer {
                            HTMLAttributeScan.isPlainText(
                                $0.baseAddress ?? UnsafePointer(bitPattern: 1)!, count: bytes.count)
                        }
                        #expect(plain == reference(bytes), "\(bytes)")
                    }
                }
            }
        }
    }

    @Test func blankPairSearchIsTheByteLoops() {
        func reference(_ bytes: [UInt8]) -> Int {
            func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }
            for i in bytes.indices {
                if blank(bytes[i]) {
                    if i + 1 < bytes.count && blank(bytes[i + 1]) { return i }
                } else if bytes[i] < 0x20 || bytes[i] == 0xEF {
                    return i
                }
            }
            return bytes.count
        }
        var random = SplitMix64(seed: 0xB1A4_C0DE)
        let alphabet: [UInt8] = [0x61, 0x62, 0x20, 0x0A, 0x09, 0x0D, 0x0C, 0x01, 0xEF, 0xBF, 0x7F, 0xFF, 0x1F, 0x21]
        for count in 0...100 {
            for place in 0...count {
                for kind in 0..<4 {
                    // Letters with single blanks between them, then one thing at `place`.
                    var bytes = (0..<count).map { $0 % 2 == 0 ? UInt8(ascii: "w") : UInt8(0x20) }
                    if place < count {
                        switch kind {
                        case 0: bytes[place] = 0x0A
                        case 1: bytes[place] = 0x0C
                        case 2: bytes[place] = 0xEF
                        default: bytes[place] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                        }
                    }
                    let found = bytes.withUnsafeBufferPointer {
                        HTMLAttributeScan.blankPairOrOther(
                            $0.baseAddress ?? UnsafePointer(bitPattern: 1)!, count: count)
                    }
                    #expect(found == reference(bytes), "\(bytes)")
                }
            }
            for _ in 0..<50 {
                let bytes = (0..<count).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
                let found = bytes.withUnsafeBufferPointer {
                    HTMLAttributeScan.blankPairOrOther($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, count: count)
                }
                #expect(found == reference(bytes), "\(bytes)")
            }
        }
    }

    // MARK: the extractor sees the same

    @Test func theCasesAboveGiveTheExtractorTheSame() {
        for page in [
            #"<html lang=en class=x><head><title id=t>T</title><meta name=description content=d class=m>"#
                + #"<meta property="og:title" content="OG" data-x=1><link rel=canonical href="/c" id=l></head>"#
                + #"<body class=b><h1 class=h>H</h1><p style="display:none" class=p>hidden</p>"#
                + #"<a href="/x" class=a rel=nofollow data-track='{"a":1}'>anchor <img src=i.png alt="alt" width=1></a>"#
                + #"<div hidden class=d>no</div><div aria-hidden=true id=q>no</div><form action=/f class=f></form>"#,
            "<a class=1\u{0C}href=2>x</a><a class=3 href=4>y</a>",
            "<a title=\"x>y\" class=1 href=2>z</a><a class=3 href=5>w</a>",
            "</div <a title=\">\" class=1 href=2>t",
            "<?php '<a title=\">\" class=1 alt=x>' ?>after",
            "<a @click=\"1 href=evil\" href=good class=c>x</a>",
            "<a href=\"a\u{0}b\" class=1>x</a><a class=2 href=c>d</a>",
            #"<script type=ld+json>"<i title='</script> <b class=2>'>"</script><a class=3 href=4>x</a>"#,
            "<a /class=\"1 2\" href=3>x</a>", "<a class=x/ href=y>z</a>", "<div class=\"unclosed><a href=1>x</a>",
        ] {
            Self.expectSame(Array(page.utf8), page)
        }
    }

    /// Generated pages made of the pieces that matter here (names libxml2 reads or not, white space and form feeds,
    /// quotes, slashes, `<` and `>` in values, comments, end tags, instructions, scripts, NUL): the extractor sees the
    /// same with and without the dropping on every one.
    @Test func generatedPagesGiveTheExtractorTheSame() {
        var random = SplitMix64(seed: 0x5EED_A77B)
        let names = [
            "class", "id", "href", "HREF", "alt", "src", "style", "hidden", "aria-hidden", "lang", "rel", "type",
            "name",
            "content", "property", "http-equiv", "action", "data-x", "title", "@click", "x:y", "_a", ".b", "1a", "a\"b",
            "[x]", "é",
        ]
        let values = [
            "", "=1", "=\"a b\"", "='c d'", "=x/", "=\"display:none\"", "=\"<\"", "=\">\"", "=\"a\u{0}b\"",
            "=\"unclosed",
            "=true", "= \"spaced\"", "=/p", "=\"http://e.test/q?a=1&amp;b=2\"", "='<a href=z>'",
            // Long enough to be given aside (or not: `>`, non-ASCII, unquoted, a character reference to 0x01).
            "=\"http://e.test/a/long/path.html\"", "='https://e.test/q?x=1 y'", "=\"display: none; color: red\"",
            "=\"0123456789abcdef>\"", "=\"ééééééééééé\"", "=http://e.test/unquoted/long", "=\"&#1;23456789012345\"",
        ]
        let gaps = [" ", " ", " ", "\t", "\n", "\r\n", "\u{0C}", "/", " / ", ""]
        let tags = ["a", "p", "img", "meta", "link", "base", "html", "div", "span", "area", "form", "h1", "b", "title"]
        let others = [
            "text ", "<!-- c -->", "<!-- <a class=1> -->", "</p>", "</div <b class=1>", "<?x y?>", "<?x <a class=1> ?>",
            "</div <a title=\">\" class=1 alt=2>", "<?x <a title='>' id=1 href=3>",
            "<!DOCTYPE html>", "<script>var a = '<a class=1>';</script>", "<style>p{}</style>",
            #"<script type="application/ld+json">{"headline":"<b class=\"q\">H</b>"}</script>"#, "<br/>", "\u{0}",
            "<!-- unclosed", "&amp; ", "<", "< a>", "</ a>", "<!-- a --!>", "<!-- <a class=1> --!> <b id=2>",
            "<!DOCTYPE html SYSTEM \"x>", "<!DOCTYPE html PUBLIC \"a\" \"b\">", "\" ",
            #"<script type="application/ld+json" data-x=1/>{"headline":"<b class=\"q\">H</b>"}</script>"#,
            "<script src=x/>", "<style media=a/>", "  \n\t ", "\r\n\r\n", "<pre>a  \n  b</pre>", "<xmp>x  y</xmp>",
            "&amp;  &lt; ", String(repeating: " ", count: 999) + "x", String(repeating: "\n", count: 1000),
            // Text that may go aside, or not.
            "some words of text ", "text with é and 日本 ", "text &#xE000; here ", "\u{E000} ", "a\r\nb c d e f ",
            "tab\tand\nline feed ", "</1>", "</ x>", "<?>", "<? x>", "</-y>",
        ]
        func pick<T>(_ list: [T]) -> T { list[Int(random.next() % UInt64(list.count))] }
        for round in 0..<3000 {
            var page = ""
            for _ in 0..<(1 + random.next() % 12) {
                if random.next() % 3 == 0 {
                    page += pick(others)
                    continue
                }
                let tag = pick(tags)
                page += "<" + tag
                for _ in 0..<(random.next() % 5) { page += pick(gaps) + pick(names) + pick(values) }
                page += pick(["", " ", "/", "\u{0C}"]) + ">" + pick(["word ", "two words ", "", " two  words\n\n "])
                if random.next() % 2 == 0 { page += "</\(tag)>" }
            }
            Self.expectSame(Array(page.utf8), "round \(round): \(page)")
        }
    }

    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func corporaPagesGiveTheExtractorTheSame() throws {
        var pages = 0
        let readability = Corpora.url("html/readability/test-pages").path
        for name in try FileManager.default.contentsOfDirectory(atPath: readability).sorted() {
            Self.expectSame(try Corpora.bytes("html/readability/test-pages/\(name)/source.html"), name)
            pages += 1
        }
        // html5lib's tree-construction documents: the edge cases of HTML's syntax.
        let trees = Corpora.url("html/html5lib-tests/tree-construction").path
        for file in try FileManager.default.contentsOfDirectory(atPath: trees).sorted() where file.hasSuffix(".dat") {
            let text = String(
                decoding: try Corpora.bytes("html/html5lib-tests/tree-construction/\(file)"), as: UTF8.self)
            for block in text.components(separatedBy: "#data\n").dropFirst() {
                guard let end = block.range(of: "\n#errors") else { continue }
                Self.expectSame(Array(block[..<end.lowerBound].utf8), "\(file): \(block[..<end.lowerBound])")
                pages += 1
            }
        }
        // html5lib's tokenizer inputs.
        let tokenizer = Corpora.url("html/html5lib-tests/tokenizer").path
        for file in try FileManager.default.contentsOfDirectory(atPath: tokenizer).sorted()
        where file.hasSuffix(".test") {
            let object = try JSONSerialization.jsonObject(
                with: Data(try Corpora.bytes("html/html5lib-tests/tokenizer/\(file)")))
            for test in (object as? [String: Any])?["tests"] as? [[String: Any]] ?? [] {
                guard let input = test["input"] as? String else { continue }
                Self.expectSame(Array(input.utf8), "\(file): \(input)")
                pages += 1
            }
        }
        #expect(pages > 3000)
    }
}

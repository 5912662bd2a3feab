import Foundation
import Testing

@testable import RespDecode

/// The html value's `headline` (docs/decoding.md#headline): Readability's article title, written when it differs
/// from the literal `title`.
@Suite("HTML headline")
struct HTMLHeadlineTests {
    /// The headline of a page whose `<title>` is `title` and whose body is `body`.
    func headline(title: String?, head: String = "", body: String = "<p>x</p>") throws -> String? {
        let titleTag = title.map { "<title>\($0)</title>" } ?? ""
        let page = "<html><head>\(titleTag)\(head)</head><body>\(body)</body></html>"
        return try decodeHTML(page)["headline"] as? String
    }

    // MARK: the value

    @Test func writtenAfterTitleOnlyWhenItDiffers() throws {
        let result = try decodeHTML("<title>A long article title here | Site</title><p>x")
        #expect(result["title"] as? String == "A long article title here | Site")
        #expect(result["headline"] as? String == "A long article title here")
        let text = try #require(result.text)
        #expect(text.hasPrefix(#"{"title":"A long article title here | Site","headline":"#), "\(text)")
        // The heuristic keeps this title: no headline.
        let same = try decodeHTML("<title>A long article title without a site</title><p>x")
        #expect(same["title"] != nil)
        #expect(same["headline"] == nil)
        #expect(try decodeHTML("<p>no title</p>")["headline"] == nil)
    }

    @Test func headlineWithoutTitle() throws {
        // A page without <title> can have a headline from its meta tags.
        #expect(
            try headline(title: nil, head: #"<meta property="og:title" content="From OpenGraph">"#) == "From OpenGraph")
    }

    @Test func headlineCountsAgainstTheValueLimit() throws {
        let page = "<title>A long article title here | Site</title><p>x"
        let result = try decodeHTML(page, configure: { $0.limits.maxValueBytes = 40 })
        #expect(result["title"] != nil)
        #expect(result["headline"] == nil)
    }

    // MARK: the <title> heuristic

    @Test(arguments: ["|", "-", "\u{2013}", "\u{2014}", "\\", "/", ">", "\u{BB}"])
    func siteNameAfterASeparatorIsDropped(separator: String) throws {
        #expect(
            try headline(title: "Breaking news about the economy \(separator) Example News")
                == "Breaking news about the economy")
        // Without spaces around it, it separates nothing.
        #expect(try headline(title: "Breaking news about the economy\(separator)Example News") == nil)
    }

    @Test func theLastSeparatorCounts() throws {
        #expect(
            try headline(title: "Get your code covered today | Code | Nicolas Perriault")
                == "Get your code covered today | Code")
    }

    @Test func tooShortBeforeTheSeparatorTakesWhatFollowsTheFirstSeparatorCharacter() throws {
        #expect(try headline(title: "Short - A much longer article title here") == "A much longer article title here")
        // The first separator character, even one inside a word.
        #expect(
            try headline(title: "Wi-Fi - Home of the best article titles") == "Fi - Home of the best article titles")
    }

    @Test func fourWordsOrFewerGiveTheWholeTitle() throws {
        #expect(try headline(title: "Four word title here | Example Site") == nil)
        #expect(try headline(title: "Five word title right here | Example Site") == "Five word title right here")
    }

    @Test func hierarchicalSeparatorsKeepAShortTitleThatDroppedOneWord() throws {
        // `/` is hierarchical: 3 words kept, as the title without its separators has 4.
        #expect(try headline(title: "Python docs tutorial / Intro section") == "Python docs tutorial")
        // `|` is not.
        #expect(try headline(title: "Python docs tutorial | Intro section") == nil)
    }

    @Test func colonTakesTheTextAfterTheLastColon() throws {
        #expect(
            try headline(title: "Example Site: How to test a heuristic properly")
                == "How to test a heuristic properly")
    }

    @Test func colonWithAMatchingHeadingKeepsTheTitle() throws {
        let title = "Example Site: How to test a heuristic properly"
        #expect(try headline(title: title, body: "<h1>\(title)</h1><p>x</p>") == nil)
        #expect(try headline(title: title, body: "<h2>\(title)</h2><p>x</p>") == nil)
        // An h3 is not looked at.
        #expect(try headline(title: title, body: "<h3>\(title)</h3><p>x</p>") == "How to test a heuristic properly")
    }

    @Test func colonShortAfterTheLastTakesAfterTheFirst() throws {
        #expect(try headline(title: "Tech: a long story about colons: yes") == "a long story about colons: yes")
    }

    @Test func colonAfterMoreThanFiveWordsKeepsTheTitle() throws {
        #expect(try headline(title: "One two three four five six: rest of this title here") == nil)
        #expect(try headline(title: "One two three four five: rest of this title here") == "rest of this title here")
    }

    @Test func shortOrLongTitleTakesTheOnlyH1() throws {
        #expect(
            try headline(title: "Home", body: "<h1>The real article headline here</h1>")
                == "The real article headline here")
        // Two h1: the title stays.
        #expect(try headline(title: "Home", body: "<h1>The real article headline here</h1><h1>Other</h1>") == nil)
        // 15 to 150 UTF-16 units: the title stays.
        #expect(
            try headline(title: "A medium title", body: "<h1>The real article headline here</h1>")
                == "The real article headline here")
        #expect(try headline(title: "A medium title.", body: "<h1>The real article headline here</h1>") == nil)
        let long = String(repeating: "word ", count: 31).trimmingCharacters(in: .whitespaces)
        #expect(
            try headline(title: long, body: "<h1>The real article headline here</h1>")
                == "The real article headline here")
        // An h1 of four words or fewer gives the title back.
        #expect(try headline(title: "Home", body: "<h1>Just four words here</h1>") == nil)
    }

    @Test func whiteSpaceIsNormalised() {
        let result = ArticleTitle.fromTitle(
            "Home", headingMatches: { _ in false }, h1Count: 1, firstH1: " The\u{A0}\u{A0}real  article\theadline here "
        )
        #expect(result == "The real article\theadline here")
    }

    @Test func wordsAreCountedAsReadabilityCountsThem() {
        #expect(ArticleTitle.wordCount("".unicodeScalars) == 1)
        #expect(ArticleTitle.wordCount("a b".unicodeScalars) == 2)
        #expect(ArticleTitle.wordCount(" a".unicodeScalars) == 2)
        #expect(ArticleTitle.wordCount("a \u{3000} b ".unicodeScalars) == 3)
    }

    // MARK: meta tags

    @Test func metaTagsInReadabilitysOrder() throws {
        let tags: [(String, String)] = [
            (#"name="dc.title""#, "DC"), (#"name="dcterm:title""#, "DCTERM"), (#"property="og:title""#, "OG"),
            (#"name="weibo:article:title""#, "WEIBO ARTICLE"), (#"name="weibo:webpage:title""#, "WEIBO PAGE"),
            (#"name="title""#, "TITLE"), (#"name="twitter:title""#, "TWITTER"), (#"name="parsely-title""#, "PARSELY"),
        ]
        for first in tags.indices {
            // The preferred one last in the document: order in the page does not matter.
            let head = tags[first...].reversed().map { #"<meta \#($0.0) content="\#($0.1) title text">"# }.joined()
            #expect(try headline(title: "Title Element", head: head) == "\(tags[first].1) title text", "\(first)")
        }
    }

    @Test func metaSlots() {
        func slot(name: String? = nil, property: String? = nil) -> ArticleTitle.MetaSlot? {
            ArticleTitle.metaSlot(name: name.map { Array($0.utf8) }, property: property.map { Array($0.utf8) })
        }
        #expect(slot(property: "og:title") == .ogTitle)
        #expect(slot(property: "OG : Title") == .ogTitle)
        #expect(slot(property: "dcterm:title") == .dctermTitle)
        // The first `prefix:field` of a property list decides.
        #expect(slot(property: "og:title dc:title") == .ogTitle)
        #expect(slot(property: "og:description og:title") == nil)
        // A property that names another field hides the name.
        #expect(slot(name: "twitter:title", property: "og:site_name") == nil)
        #expect(slot(name: "twitter:title", property: "fb:app_id") == .twitterTitle)
        #expect(slot(name: "DC.Title") == .dcTitle)
        #expect(slot(name: " dc : title ") == .dcTitle)
        #expect(slot(name: "dc-title") == nil)
        #expect(slot(name: "parsely-title") == .parselyTitle)
        #expect(slot(name: "parsely:title") == nil)
        #expect(slot(name: "weibo:webpage.title") == .weiboWebpageTitle)
        #expect(slot(name: "title") == .title)
        #expect(slot(name: "subtitle") == nil)
        #expect(slot(name: "og:titles") == nil)
    }

    @Test func lastMetaTagOfASlotWinsAndEmptyOnesCountAsNone() throws {
        let head = #"<meta property="og:title" content="First"><meta property="og:title" content=" Second ">"#
        #expect(try headline(title: "Title Element", head: head) == "Second")
        // No content, or empty: not a title.
        let empty = #"<meta name="dc.title"><meta name="dc.title" content=""><meta property="og:title" content="OG">"#
        #expect(try headline(title: "Title Element", head: empty) == "OG")
        // A later blank one empties the slot, and the next slot is taken.
        let blank =
            #"<meta name="dc.title" content="DC"><meta name="dc.title" content="  "><meta name="title" content="T">"#
        #expect(try headline(title: "Title Element", head: blank) == "T")
    }

    @Test func entitiesLeftInATitleAreDecoded() throws {
        #expect(
            try headline(
                title: "X", head: #"<meta property="og:title" content="Tom &amp;amp; Jerry &amp;#8211; &amp;#x41;">"#)
                == "Tom & Jerry \u{2013} A")
        #expect(
            ArticleTitle.unescapeEntities("&lt;b&gt; &quot;q&quot; &apos;a&apos; &#0; &#xD800; &#1114112; &nbsp;")
                == "<b> \"q\" 'a' \u{FFFD} \u{FFFD} \u{FFFD} &nbsp;")
        #expect(ArticleTitle.unescapeEntities("&#99999999999999999999; &#x; &# &") == "\u{FFFD} &#x; &# &")
    }

    // MARK: JSON-LD

    func jsonLD(_ json: String) -> String {
        #"<script type="application/ld+json">\#(json)</script>"#
    }

    @Test func jsonLDArticleComesFirst() throws {
        let head =
            #"<meta name="dc.title" content="From Dublin Core">"#
            + jsonLD(#"{"@context":"https://schema.org","@type":"NewsArticle","headline":" From JSON-LD "}"#)
        #expect(try headline(title: "Title Element", head: head) == "From JSON-LD")
        // `name` before `headline` when both are the same.
        let both = jsonLD(#"{"@context":"http://schema.org/","@type":"Article","name":"Name","headline":"Name"}"#)
        #expect(try headline(title: "Title Element", head: both) == "Name")
    }

    @Test func jsonLDHeadlineWinsWhenOnlyItResemblesTheTitle() throws {
        let json =
            #"{"@context":"https://schema.org","@type":"NewsArticle","name":"Example Site","headline":"A real article headline"}"#
        #expect(
            try headline(title: "A real article headline here - Example Site", head: jsonLD(json))
                == "A real article headline")
        // When neither resembles it, `name`.
        #expect(try headline(title: "Something else entirely here", head: jsonLD(json)) == "Example Site")
    }

    @Test func jsonLDThatIsNoArticleIsPassedOver() throws {
        let meta = #"<meta property="og:title" content="From OpenGraph">"#
        for json in [
            #"{"@context":"https://schema.org","@type":"WebPage","name":"Not an article"}"#,
            #"{"@context":"https://example.org","@type":"Article","name":"Not schema.org"}"#,
            #"{"@context":null,"@type":"Article","name":"Null context"}"#,
            #"{"@context":"https://schema.org","@type":["Article"],"name":"A type list"}"#,
            #"{"@context":"https://schema.org","@type":"Article","name":"Broken""#,
            #"[{"@type":"WebSite","name":"Site"}]"#,
            #""just a string""#,
        ] {
            #expect(try headline(title: "Title Element", head: meta + jsonLD(json)) == "From OpenGraph", "\(json)")
        }
        // Only the exact type attribute.
        let other =
            #"<script type="Application/LD+JSON">{"@context":"https://schema.org","@type":"Article","name":"N"}</script>"#
        #expect(try headline(title: "Title Element", head: meta + other) == "From OpenGraph")
        // An article with neither name nor headline: the meta tags decide.
        let untitled = jsonLD(#"{"@context":"https://schema.org","@type":"Article","name":7}"#)
        #expect(try headline(title: "Title Element", head: meta + untitled) == "From OpenGraph")
    }

    @Test func jsonLDShapes() throws {
        let cases = [
            // A graph.
            #"{"@context":"https://schema.org","@graph":[{"@type":"WebSite","name":"Site"},{"@type":"BlogPosting","headline":"In a graph"}]}"#,
            // An array: its first article.
            #"[{"@type":"WebSite","name":"Site"},{"@context":"https://schema.org","@type":"ReportageNewsArticle","name":"In a graph"}]"#,
            // @vocab.
            #"{"@context":{"@vocab":"http://schema.org/"},"@type":"Article","name":"In a graph"}"#,
            // A CDATA wrapper.
            #" <![CDATA[{"@context":"https://schema.org","@type":"TechArticle","name":"In a graph"}]]> "#,
        ]
        for json in cases {
            #expect(try headline(title: "Title Element", head: jsonLD(json)) == "In a graph", "\(json)")
        }
        // The first script with an article wins; scripts without one before it are passed over.
        let scripts =
            jsonLD(#"{"@context":"https://schema.org","@type":"Organization","name":"Org"}"#)
            + jsonLD(#"{"@context":"https://schema.org","@type":"Article","name":"First article"}"#)
            + jsonLD(#"{"@context":"https://schema.org","@type":"Article","name":"Second article"}"#)
        #expect(try headline(title: "Title Element", head: scripts) == "First article")
        // In the body too.
        #expect(
            try headline(
                title: "Title Element",
                body: jsonLD(#"{"@context":"https://schema.org","@type":"Article","name":"Body"}"#)) == "Body")
    }

    @Test func articleTypes() {
        for type in [
            "Article", "NewsArticle", "OpinionNewsArticle", "BlogPosting", "Report", "TechArticle", "APIReference",
            "ArticleSeries",
        ] {
            #expect(ArticleTitle.isArticleType(type), "\(type)")
        }
        for type in ["WebPage", "WebSite", "Organization", "article", "MyArticle", ""] {
            #expect(!ArticleTitle.isArticleType(type), "\(type)")
        }
    }

    @Test func similarity() {
        #expect(ArticleTitle.similarity("a b", "a b c") == 0.8)
        #expect(ArticleTitle.similarity("Example Site", "A real article headline") == 0)
        #expect(ArticleTitle.similarity("", "x") == 0)
        // Non-ASCII letters separate tokens, as JavaScript's `\W` does.
        #expect(ArticleTitle.similarity("caf", "café") == 1)
    }

    // MARK: hostile input

    @Test func oversizedJSONLDIsSkipped() throws {
        // Past maxJSONLDBytes the script is dropped, whatever it holds.
        let padding = String(repeating: " ", count: HTMLExtractor.maxJSONLDBytes)
        let json = #"{"@context":"https://schema.org","@type":"Article","name":"Too long"\#(padding)}"#
        let start = ContinuousClock.now
        #expect(try headline(title: "Title Element", head: jsonLD(json)) == nil)
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func deeplyNestedJSONLDIsNoArticle() throws {
        let json = String(repeating: "[", count: 500_000) + String(repeating: "]", count: 500_000)
        let start = ContinuousClock.now
        #expect(try headline(title: "Title Element", head: jsonLD(json)) == nil)
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func manyTitleMetaTagsAndJSONLDScripts() throws {
        // 20,000 title meta tags and 2,000 JSON-LD scripts without an article: bounded work, the last og:title.
        let metas = (0..<20_000).map { #"<meta property="og:title" content="Title \#($0)">"# }.joined()
        let scripts = String(repeating: jsonLD(#"{"@context":"https://schema.org","@type":"WebPage"}"#), count: 2_000)
        let start = ContinuousClock.now
        #expect(try headline(title: "Title Element", head: metas + scripts) == "Title 19999")
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func manyLargeJSONLDScriptsAreEachReadOnce() throws {
        // 20 scripts of about 1 MB without an article (20 MB of JSON): each parsed once, linear work.
        let items = Array(repeating: #""abcdefgh""#, count: 90_000).joined(separator: ",")
        let script = jsonLD(#"{"@context":"https://schema.org","@type":"WebPage","a":[\#(items)]}"#)
        let head = String(repeating: script, count: 20)
        let start = ContinuousClock.now
        #expect(try headline(title: "Title Element", head: head) == nil)
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func hugeTitleHeuristicIsBounded() throws {
        // The title is cut at 4 KiB before the heuristic sees it; a colon title of many words.
        let title = String(repeating: "word: ", count: 200_000)
        let start = ContinuousClock.now
        _ = try decodeHTML("<title>\(title)</title><p>x")
        #expect(ContinuousClock.now - start < .seconds(1))
    }
}

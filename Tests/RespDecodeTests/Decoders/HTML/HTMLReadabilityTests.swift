import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The 43 pages of Mozilla Readability's tests (`html/readability` in the corpora; its PROVENANCE.md says what the
/// expected values mean). Readability's `title` is its own heuristic (site-name suffixes removed, Dublin Core and
/// OpenGraph titles preferred), so a page's title must equal either it or the page's literal `<title>` (html5lib's
/// reading, in MANIFEST.observed.jsonl); `lang` is exact. Upstream reads the pages as UTF-8, so the record says so
/// (`qq` declares gb2312 but is UTF-8).
@Suite("HTML readability pages", .enabled(if: Corpora.available, Corpora.skipComment))
struct HTMLReadabilityTests {
    static let folder = "html/readability"

    struct Page {
        var name: String
        var expected: [String: Any]
        var observed: [String: Any]
        var value: [String: Any]
    }

    static func pages() throws -> [Page] {
        var observed: [String: [String: Any]] = [:]
        let manifest = try String(contentsOf: Corpora.url("\(folder)/MANIFEST.observed.jsonl"), encoding: .utf8)
        for line in manifest.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            observed[try #require(object["page"] as? String)] = object
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: Corpora.url("\(folder)/test-pages").path)
            .sorted()
        return try names.map { name in
            let directory = "\(folder)/test-pages/\(name)"
            let expected = try #require(
                try JSONSerialization.jsonObject(with: Data(Corpora.bytes("\(directory)/expected-metadata.json")))
                    as? [String: Any])
            let html = try Corpora.bytes("\(directory)/source.html")
            let outcome = try decodeHTML(
                String(decoding: html, as: UTF8.self), url: "http://fakehost/test/page.html", charset: "utf-8")
            return Page(name: name, expected: expected, observed: observed[name] ?? [:], value: outcome.value)
        }
    }

    @Test func titlesAndLanguages() throws {
        let pages = try Self.pages()
        #expect(pages.count == 43)
        var readabilityTitles = 0
        var literalTitles = 0
        var languages = 0
        for page in pages {
            let title = page.value["title"] as? String ?? ""
            let expected = page.expected["title"] as? String ?? ""
            let literal = page.observed["title"] as? String ?? ""
            if title == expected { readabilityTitles += 1 }
            if title == literal { literalTitles += 1 }
            #expect(title == expected || title == literal, "\(page.name): \(title)")
            if let lang = page.expected["lang"] as? String {
                languages += 1
                #expect(page.value["lang"] as? String == lang, "\(page.name)")
            } else {
                #expect(page.value["lang"] == nil, "\(page.name)")
            }
        }
        // Measured with libxml2 2.9.14: every literal title but qq's, whose literal title in the manifest is html5lib's
        // gbk mojibake (ours is Readability's); Readability's own title on the 22 pages where it keeps the literal one.
        #expect(literalTitles >= pages.count - 1)
        #expect(readabilityTitles >= 22)
        // 21 pages have a `lang` key, one of them null.
        #expect(languages == 20)
    }

    @Test func everyPageHasTextLinksAndItsBase() throws {
        for page in try Self.pages() {
            let text = page.value["text"] as? String ?? ""
            // 005-unescape-html-entities has one word of text.
            #expect(!text.isEmpty, "\(page.name)")
            #expect(!text.hasPrefix(" ") && !text.hasSuffix("\n"), "\(page.name)")
            if let base = page.observed["base_href"] as? String, !base.isEmpty {
                #expect(page.value["base"] != nil, "\(page.name)")
            }
            let anchors = (page.value["links"] as? [[String: Any]] ?? []).filter { $0["element"] as? String == "a" }
            let written = page.observed["a_href_count"] as? Int ?? 0
            // Fragment-only and javascript: hrefs are skipped, so never more anchors than html5lib counts.
            #expect(anchors.count <= written, "\(page.name)")
            #expect(anchors.isEmpty == (written == 0) || anchors.count < written, "\(page.name)")
        }
    }

    @Test func rawMetaValues() throws {
        // Readability's metadata pages: the meta values as written, keys lowercased.
        let page = try #require(try Self.pages().first { $0.name == "003-metadata-preferred" })
        let meta = try #require(page.value["meta"] as? [String: String])
        var seen: Set<String> = []
        for pair in page.observed["meta"] as? [[String]] ?? [] where pair.count == 2 {
            // The first occurrence of a key wins.
            guard seen.insert(pair[0].lowercased()).inserted else { continue }
            #expect(meta[pair[0].lowercased()] == pair[1], "\(pair)")
        }
        #expect(meta.count == seen.count)
    }
}

import Foundation
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// Hostile HTML bodies through the real binary with `--chain html`, under the budgets of ``HostileDocumentTests``
    /// (1 s of CPU time, 256 MB resident, one line, nothing on stderr, exit 0). libxml2 recovers from any markup, so
    /// each gives a value; docs/reliability.md#html says what each line holds.
    @Suite("Hostile HTML")
    struct HostileHTMLTests {
        static func run(_ body: String, name: String, arguments: [String] = []) throws -> [String: Any] {
            let line = try HostileDocumentTests.runLimited(
                Data(body.utf8), type: "text/html", name: name, arguments: ["--chain", "html"] + arguments)
            #expect(line["ok"] as? Bool == true, "\(name): \(line["error"] ?? "")")
            return try #require(line["value"] as? [String: Any], "\(name): no value")
        }

        @Test func deepNesting() throws {
            // libxml2's depth cap (256) applies to tree building only; in SAX mode the decoder stops at maxDepth.
            let value = try Self.run(
                "<title>T</title>" + String(repeating: "<div>", count: 100_000) + "x"
                    + String(repeating: "</div>", count: 100_000),
                name: "100,000 nested elements")
            #expect(value["title"] as? String == "T")
            #expect(value["truncated"] as? [String] == ["document"])
        }

        @Test func strayEndTagsDeepDown() throws {
            // Each end tag matching no open element makes libxml2 search its element stack: 12.7 s for 100,000 of them
            // under 100,000 open elements before the bounds.
            let value = try Self.run(
                String(repeating: "<div>", count: 500) + "x" + String(repeating: "</x>", count: 1_000_000),
                name: "1,000,000 stray end tags under 500 open elements")
            #expect(value["truncated"] as? [String] == ["document"])
            #expect(value["text"] as? String == "x")
        }

        @Test func manyAttributes() throws {
            // libxml2 compares a tag's attributes pairwise: 7.8 s for 100,000.
            let attributes = (0..<100_000).map { "a\($0)=1" }.joined(separator: " ")
            let value = try Self.run("<p>before</p><p \(attributes)>after</p>", name: "100,000 attributes on one tag")
            #expect(value["text"] as? String == "before")
            #expect(value["truncated"] as? [String] == ["document"])
        }

        @Test func manyTagsOfManyAttributes() throws {
            // Each tag under the 10,000 per tag, but together 1,000 × 40 million comparisons: the page is read up to the
            // tag whose comparisons pass 2^26.
            let attributes = (0..<9_000).map { "a\($0)" }.joined(separator: " ")
            let tag = "<p \(attributes)>t</p>"
            let value = try Self.run(
                "<p>before</p>" + String(repeating: tag, count: 1_000), name: "1,000 tags of 9,000 attributes (54 MB)")
            #expect(value["text"] as? String == "before\n\nt")
            #expect(value["truncated"] as? [String] == ["document"])
        }

        @Test func aQuoteInAScriptDoesNotHideATagOfManyAttributes() throws {
            let attributes = (0..<100_000).map { "a\($0)" }.joined(separator: " ")
            let value = try Self.run(
                #"<p>before</p><script>s='<a b="'</script><p "# + attributes + ">after</p>",
                name: "an unclosed quote in a script, then 100,000 attributes")
            #expect(value["text"] as? String == "before")
            #expect(value["truncated"] as? [String] == ["document"])
        }

        @Test func tenMillionLinksAtTheDefaultLimits() throws {
            // 10 million links are 100 MB of HTML, past the default --max-body-bytes (64 MiB): one limitExceeded line,
            // the body not read into memory. With the limit raised they cost libxml2 seconds (docs/reliability.md#html).
            let line = try HostileDocumentTests.runLimited(
                Data(String(repeating: "<a href=x>", count: 10_000_000).utf8), type: "text/html",
                name: "10,000,000 links", arguments: [])
            #expect(line["ok"] as? Bool == false)
            #expect((line["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        }

        @Test func hugeAttribute() throws {
            let value = try Self.run(
                "<a href=\"" + String(repeating: "x", count: 50_000_000) + "\">t</a>", name: "a 50 MB attribute")
            // A link longer than 64 KiB is counted, not listed.
            #expect(value["links"] == nil)
            #expect(value["linksTotal"] as? Int == 1)
            #expect(value["text"] as? String == "t")
        }

        @Test func unclosedCommentAndScript() throws {
            let comment = try Self.run(
                "<p>a</p><!--" + String(repeating: "x", count: 20_000_000), name: "unclosed comment (20 MB)")
            #expect(comment["text"] as? String == "a")
            let script = try Self.run(
                "<p>a</p><script>" + String(repeating: "x<y>", count: 5_000_000), name: "unclosed script (20 MB)")
            #expect(script["text"] as? String == "a")
        }

        @Test func entityHeavyText() throws {
            let value = try Self.run("<p>" + String(repeating: "&amp;", count: 4_000_000), name: "4,000,000 &amp;")
            #expect((value["text"] as? String)?.utf8.count == 4_000_000)
            let cut = try Self.run(
                "<p>" + String(repeating: "&eacute;", count: 2_000_000), name: "2,000,000 &eacute; past maxTextBytes",
                arguments: ["--max-text-bytes", "1m"])
            #expect((cut["text"] as? String)?.utf8.count == 1 << 20)
            #expect(cut["truncated"] as? [String] == ["text"])
        }

        @Test func millionsOfLinks() throws {
            // 2,000,000 links in 20 MB: 10,000 listed, the rest counted. (10 million, a 100 MB body, take libxml2 alone
            // 2.4 s to parse: see docs/reliability.md#html.)
            let value = try Self.run(
                String(repeating: "<a href=x>", count: 2_000_000), name: "2,000,000 links")
            #expect((value["links"] as? [Any])?.count == 10_000)
            #expect(value["linksTotal"] as? Int == 2_000_000)
            #expect(value["truncated"] as? [String] == ["links"])
        }
    }
}

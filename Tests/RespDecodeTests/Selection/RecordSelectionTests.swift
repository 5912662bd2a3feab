import Foundation
import Testing

@testable import RespDecode

/// `--select-…` (docs/output.md#selecting-records): each filter alone and together, on records as framed.
@Suite("Record selection")
struct RecordSelectionTests {
    static func record(
        status: Int = 200, contentType: String? = "application/json", url: String? = "https://a.example/api/v1/x",
        body: String = #"{"a":1}"#
    ) -> ResponseRecord {
        var headers = HeaderFields()
        if let contentType { headers.append(name: "Content-Type", value: contentType) }
        return ResponseRecord(offset: 0, status: status, headers: headers, body: Array(body.utf8), url: url)
    }

    static func selection(_ configure: (inout RecordSelection) throws -> Void) rethrows -> RecordSelection {
        var selection = RecordSelection()
        try configure(&selection)
        return selection
    }

    @Test func noFilterSelectsEverything() {
        let selection = RecordSelection()
        #expect(selection.selectsAll)
        #expect(selection.rejection(of: Self.record(status: 999, contentType: nil, url: nil, body: "")) == nil)
    }

    @Test func statusClassesCodesAndRanges() throws {
        let set = try #require(StatusCodeSet(parsing: "200, 3xx,400-499"))
        for status in [200, 300, 301, 399, 400, 404, 499] { #expect(set.contains(status), "\(status)") }
        for status in [199, 201, 299, 500, 0] { #expect(!set.contains(status), "\(status)") }
        #expect(StatusCodeSet(parsing: "5XX")?.ranges == [500...599])
        for bad in ["xx", "0xx", "3x", "3xxx", "x00", "", ","] { #expect(StatusCodeSet(parsing: bad) == nil, "\(bad)") }
        let selection = Self.selection { $0.statuses = set }
        #expect(selection.rejection(of: Self.record(status: 302)) == nil)
        #expect(selection.rejection(of: Self.record(status: 500)) == .status)
    }

    @Test func typeGlobsOnTheEssence() throws {
        let patterns = try RecordSelection.typePatterns(parsing: "IMAGE/*, */*+json").get()
        #expect(patterns == ["image/*", "*/*+json"])
        let selection = Self.selection { $0.types = patterns }
        #expect(selection.rejection(of: Self.record(contentType: "image/png")) == nil)
        #expect(selection.rejection(of: Self.record(contentType: "Image/PNG; charset=x")) == nil)
        #expect(selection.rejection(of: Self.record(contentType: "application/ld+json")) == nil)
        #expect(selection.rejection(of: Self.record(contentType: "application/json")) == .type)
        #expect(selection.rejection(of: Self.record(contentType: "text/html")) == .type)
        #expect(selection.rejection(of: Self.record(contentType: nil)) == .type)
    }

    /// The last Content-Type counts, as for decoding; `none` is a record without one (or with an empty one).
    @Test func lastContentTypeAndNone() {
        var record = Self.record(contentType: "text/html")
        record.headers.append(name: "Content-Type", value: "image/gif")
        #expect(Self.selection { $0.types = ["image/*"] }.rejection(of: record) == nil)
        let none = Self.selection { $0.types = ["none"] }
        #expect(none.rejection(of: Self.record(contentType: nil)) == nil)
        #expect(none.rejection(of: Self.record(contentType: " ; charset=utf-8")) == nil)
        #expect(none.rejection(of: Self.record(contentType: "text/plain")) == .type)
    }

    @Test func typePatternsThatAreNoTypesAreRefused() {
        for bad in ["html", "", ",", "image/*,json"] {
            #expect(throws: SelectionError.self, "\(bad)") { try RecordSelection.typePatterns(parsing: bad).get() }
        }
    }

    @Test func urlGlobMatchesTheWholeURL() {
        let selection = Self.selection { $0.urlGlob = "https://*.example/api/*" }
        #expect(selection.rejection(of: Self.record(url: "https://a.example/api/v1/x")) == nil)
        #expect(selection.rejection(of: Self.record(url: "https://a.example/api")) == .url)
        #expect(selection.rejection(of: Self.record(url: "http://a.example/api/v1")) == .url)
        // No URL (raw HTTP input): no URL filter matches.
        #expect(selection.rejection(of: Self.record(url: nil)) == .url)
    }

    @Test func urlRegexMatchesAnywhereUnlessAnchored() throws {
        let anywhere = try Self.selection { $0.urlRegex = try URLRegex("/api/v[0-9]+/") }
        #expect(anywhere.rejection(of: Self.record(url: "https://a.example/api/v12/x")) == nil)
        #expect(anywhere.rejection(of: Self.record(url: "https://a.example/api/vx/")) == .urlRegex)
        #expect(anywhere.rejection(of: Self.record(url: nil)) == .urlRegex)
        let anchored = try Self.selection { $0.urlRegex = try URLRegex("^https://(a|b)\\.example/$") }
        #expect(anchored.rejection(of: Self.record(url: "https://b.example/")) == nil)
        #expect(anchored.rejection(of: Self.record(url: "https://b.example/x")) == .urlRegex)
        #expect(anchored.rejection(of: Self.record(url: "xhttps://a.example/")) == .urlRegex)
    }

    @Test func badRegexIsRefusedWithRegerrorsMessage() {
        for bad in ["a(", "(", "[z-a]", "a{2,1}", "a\\"] {
            #expect(throws: SelectionError.self, "\(bad)") { try URLRegex(bad) }
        }
        #expect(throws: SelectionError.self) { try URLRegex("a\u{0}b") }
    }

    /// A hostile URL (1 MiB of letters, longer than any header allows) against expressions whose unanchored glibc
    /// search is quadratic (`[a-z]+\.png$` took 4.8 s on 64 KiB): the anchored form answers at once, and the same.
    @Test func longURLsMatchInLinearTime() throws {
        let url = "https://" + String(repeating: "a", count: 1 << 20)
        let start = ContinuousClock.now
        for (pattern, expected) in [
            ("[a-z]+\\.png$", false), ("(a|aa)*b", false), ("a+$", true), ("^https://a{3}", true), ("x|^h", true),
            ("a$|^z", true), ("^a", false),
        ] {
            #expect(try URLRegex(pattern).matches(url) == expected, "\(pattern)")
        }
        // glibc's fnmatch does not backtrack to earlier stars: globs are linear too.
        for glob in ["*a*a*a*a*a*b", "*[a-z]*[a-z]*.png", "https://*?*?*b"] {
            #expect(RecordSelection.urlGlobMatches(glob, url) == false, "\(glob)")
        }
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    /// The anchored form matches what the expression matches anywhere: alternatives, anchors, groups, brackets.
    @Test func anchoredFormMatchesTheSameURLs() throws {
        for (pattern, url, expected) in [
            ("b|^a", "xab", true), ("^b|c", "xab", false), ("(x|y)b$", "xab", false), ("(x|a)b$", "xab", true),
            ("[)(]", "a(b", true),
            ("[]a)]x", "zax", true), ("\\)", "a)", true), ("\\)", "a", false), ("^$", "", true), ("", "abc", true),
            ("[[:digit:]]{2}", "a12", true), ("[[:digit:]]{2}", "a1b2", false),
        ] {
            #expect(try URLRegex(pattern).matches(url) == expected, "\(pattern) on \(url)")
        }
    }

    @Test func patternsThatCannotBeWrappedAreRefused() {
        for bad in ["a)b", "(a))", "(a)\\1", "a|b)"] {
            #expect(throws: SelectionError.self, "\(bad)") { try URLRegex(bad) }
        }
    }

    /// glibc locks a compiled expression while it matches: each thread takes its own copy from the pool, and every
    /// answer stays right when many threads match at once.
    @Test func regexIsRightFromManyThreadsAtOnce() throws {
        let regex = try URLRegex("^https://[a-z]+\\.example/[0-9]+$")
        let wrong = Counter()
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            for j in 0..<500 {
                let url = j % 2 == 0 ? "https://host.example/\(i * j)" : "https://host.example/x\(i)"
                if regex.matches(url) != (j % 2 == 0) { wrong.add() }
            }
        }
        #expect(wrong.value == 0)
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    @Test func bodySizeBoundsAreInclusive() {
        let selection = Self.selection {
            $0.minBodyBytes = 3
            $0.maxBodyBytes = 5
        }
        #expect(selection.rejection(of: Self.record(body: "ab")) == .minBodyBytes)
        #expect(selection.rejection(of: Self.record(body: "abc")) == nil)
        #expect(selection.rejection(of: Self.record(body: "abcde")) == nil)
        #expect(selection.rejection(of: Self.record(body: "abcdef")) == .maxBodyBytes)
    }

    /// Several filters: a record must pass all; the one named is the first it fails, cheapest first (sizes,
    /// status, type, URL glob, URL regex).
    @Test func combinedFiltersAllMustPass() throws {
        let selection = try Self.selection {
            $0.statuses = StatusCodeSet(parsing: "2xx")
            $0.types = ["application/*"]
            $0.urlGlob = "https://*"
            $0.urlRegex = try URLRegex("/api/")
            $0.maxBodyBytes = 100
        }
        #expect(selection.rejection(of: Self.record()) == nil)
        #expect(selection.rejection(of: Self.record(url: "https://a.example/web/")) == .urlRegex)
        #expect(selection.rejection(of: Self.record(url: "http://a.example/api/")) == .url)
        #expect(selection.rejection(of: Self.record(status: 404, contentType: "text/html")) == .status)
        #expect(selection.rejection(of: Self.record(contentType: "text/html", url: "ftp://x")) == .type)
        let large = Self.record(status: 500, body: String(repeating: "x", count: 101))
        #expect(selection.rejection(of: large) == .maxBodyBytes)
    }
}

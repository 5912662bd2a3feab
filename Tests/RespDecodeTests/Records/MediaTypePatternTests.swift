import Testing

@testable import RespDecode

/// `MediaTypePattern(_:)`, the parser of `--accept`'s patterns and the decoders' own (Records/MediaType.swift), beyond
/// the Alamofire parity cases: what it rejects and how a pattern's bytes decide its kind.
@Suite("MIME type patterns")
struct MediaTypePatternTests {
    @Test(arguments: [
        "text/plain; charset=utf-8", "text/plain;", "text /plain", "text/ plain", "text/pla in", "a;b/c", "/json",
    ])
    func parametersAndInnerSpacesAreRejected(_ text: String) {
        #expect(MediaTypePattern(text) == nil)
    }

    @Test func outerWhitespaceAndCaseAreFolded() throws {
        let pattern = try #require(MediaTypePattern("  Application/JSON\t"))
        #expect(pattern.type == "application" && pattern.subtype == "json")
        #expect(pattern.matches("application/json"))
        #expect(!pattern.matches("application/jsonx"))
    }

    @Test func wildcardsAnywhereInAPartAreNotExact() throws {
        // A `*` that is not a whole part or a `*+` prefix matches nothing but itself, never as a wildcard.
        let odd = try #require(MediaTypePattern("text/pl*n"))
        #expect(odd.matches("text/pl*n"))
        #expect(!odd.matches("text/plain"))
        let suffix = try #require(MediaTypePattern("application/*+json"))
        #expect(suffix.matches("application/problem+json"))
        #expect(!suffix.matches("application/json"))
        let any = try #require(MediaTypePattern("*/*"))
        #expect(any.matches("image/png") && any.matches("x/y"))
    }
}

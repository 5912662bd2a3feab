import RespDecodeTestSupport
import Testing

extension Corpora {
    /// ``Corpora/skipMessage`` as the comment of a disabled test.
    static var skipComment: Comment { Comment(rawValue: skipMessage) }
}

/// CI sets `RESPDECODE_REQUIRE_CORPORA=1`, so that the conformance suites cannot be skipped there unnoticed.
@Test func corporaArePresentWhereRequired() {
    #expect(Corpora.missingWhileRequired == nil)
}

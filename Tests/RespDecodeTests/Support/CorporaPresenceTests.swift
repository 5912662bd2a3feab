import Foundation
import Testing

/// CI sets `RESPDECODE_REQUIRE_CORPORA=1`, so that the conformance suites cannot be skipped there unnoticed.
@Test func corporaArePresentWhereRequired() {
    if ProcessInfo.processInfo.environment["RESPDECODE_REQUIRE_CORPORA"] == "1" {
        #expect(Corpora.available, "the corpora are required here but \(Corpora.root.path) is absent")
    }
}

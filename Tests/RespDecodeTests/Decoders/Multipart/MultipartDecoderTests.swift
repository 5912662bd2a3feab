import Foundation
import Testing

@testable import RespDecode

@Suite("Multipart decoder")
struct MultipartDecoderTests {
    static let chain = ["json", "xml", "plist", "image", "multipart", "html", "text"]

    @Test func inTheDefaultChainAndAcceptsEveryMultipartType() throws {
        #expect(DecoderRegistry.defaultChainNames.contains("multipart"))
        let entry = ChainEntry(decoder: try #require(DecoderRegistry.decoder(named: "multipart")))
        for type in [
            "multipart/form-data", "multipart/mixed", "multipart/related", "multipart/alternative",
            "multipart/byteranges", "multipart/x-mixed-replace", "multipart/digest",
        ] {
            #expect(entry.accepts(type), "\(type)")
        }
        #expect(!entry.accepts("application/x-www-form-urlencoded"))
    }

    @Test func partsAreDecodedByTheChainAndAFailingPartFailsAlone() throws {
        let body =
            "--b\r\nContent-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n"
            + "{\"a\":1,\"n\":null}\r\n--b\r\nContent-Disposition: form-data; name=\"bad\"\r\n"
            + "Content-Type: application/json\r\n\r\n{oops\r\n--b\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
            + "caf\u{E9}\r\n--b--\r\n"
        let outcome = try decodeMultipart(body, contentType: "multipart/form-data; boundary=b", chain: Self.chain)
        let parts = outcome.parts
        #expect(parts.count == 3)
        #expect(parts[0]["decoder"] as? String == "json")
        #expect((parts[0]["value"] as? [String: Any])?.keys.sorted() == ["a"]) // nulls stripped as for a body
        #expect(parts[1]["decoder"] as? String == "json")
        #expect(parts[1]["value"] == nil)
        #expect((parts[1]["error"] as? [String: Any])?["code"] as? String == "invalidJSON")
        #expect((parts[1]["body"] as? [String: Any])?["base64"] as? String == "e29vcHM=")
        #expect(outcome.warnings.contains("multipart part 2 did not decode: invalidJSON"))
        // A form field without a Content-Type is text/plain (RFC 7578 §4.4).
        #expect(parts[2]["contentType"] as? String == "text/plain")
        #expect(parts[2]["decoder"] as? String == "text")
        #expect((parts[2]["value"] as? [String: Any])?["text"] as? String == "caf\u{E9}")
        #expect(parts[2]["bytes"] as? Int == 5)
        #expect(outcome.value?["closed"] == nil)
    }

    @Test func quotedBoundaryWithSemicolonsAndEscapes() throws {
        let body = "--a;b=c\r\n\r\nx\r\n--a;b=c--"
        let outcome = try decodeMultipart(body, contentType: #"multipart/mixed; boundary="a;b=c"; charset=x"#)
        #expect(outcome.value?["boundary"] as? String == "a;b=c")
        #expect(outcome.partBytes == [Array("x".utf8)])
        let escaped = try decodeMultipart(
            "--q\"t\r\n\r\ny\r\n--q\"t--", contentType: #"multipart/mixed; boundary="q\"t""#)
        #expect(escaped.value?["boundary"] as? String == "q\"t")
        #expect(escaped.parts.count == 1)
    }

    @Test func missingBoundaryIsTakenFromTheFirstLineOrRefused() throws {
        let guessed = try decodeMultipart("--xyz\r\n\r\nhi\r\n--xyz--\r\n", contentType: "multipart/mixed")
        #expect(guessed.value?["boundary"] as? String == "xyz")
        #expect(guessed.warnings.contains { $0.contains("no boundary parameter") })
        let refused = try decodeMultipart("hello\r\n", contentType: "multipart/form-data")
        #expect(refused.error?.code == .invalidMultipart)
        #expect(refused.error?.message == "the Content-Type has no boundary parameter")
    }

    @Test func noDelimiterIsAnError() throws {
        let outcome = try decodeMultipart("just text\r\n--other\r\n", contentType: "multipart/mixed; boundary=b")
        #expect(outcome.error?.code == .invalidMultipart)
    }

    @Test func longBoundaryIsReadWithAWarning() throws {
        let boundary = String(repeating: "x", count: 80)
        let outcome = try decodeMultipart(
            "--\(boundary)\r\n\r\nv\r\n--\(boundary)--", contentType: "multipart/mixed; boundary=\(boundary)")
        #expect(outcome.parts.count == 1)
        #expect(outcome.warnings.contains { $0.contains("more than RFC 2046's 70") })
    }

    @Test func preambleEpilogueAndTransportPadding() throws {
        let body =
            "This is a multi-part message in MIME format.\r\n--b \t\r\n\r\none\r\n--b\r\n\r\ntwo\r\n--b-- \r\nbye\r\n"
        let outcome = try decodeMultipart(body, contentType: "multipart/mixed; boundary=b")
        #expect(outcome.value?["preambleBytes"] as? Int == 44)
        #expect(outcome.value?["epilogueBytes"] as? Int == 5)
        #expect(outcome.partBytes == [Array("one".utf8), Array("two".utf8)])
        #expect(outcome.warnings.isEmpty)
    }

    @Test func lineFeedOnlyBodiesAreRead() throws {
        let outcome = try decodeMultipart(
            "--b\nContent-Type: text/plain\n\nline one\nline two\n--b--\n", contentType: "multipart/mixed; boundary=b")
        #expect(outcome.partBytes == [Array("line one\nline two".utf8)])
        #expect(outcome.warnings.contains { $0.contains("bare line feed") })
    }

    @Test func aPartWithoutItsEndRunsToTheEndOfTheBody() throws {
        let outcome = try decodeMultipart(
            "--b\r\n\r\nfirst\r\n--b\r\nContent-Type: image/jpeg\r\n\r\n\u{1}\u{2}\r\n--b",
            contentType: "multipart/x-mixed-replace; boundary=b")
        #expect(outcome.value?["closed"] as? Bool == false)
        #expect(outcome.partBytes == [Array("first".utf8), [1, 2]])
        #expect(outcome.warnings.contains { $0.contains("without the close delimiter") })
        // Cut inside a part, and inside the delimiter after it.
        for cut in ["--b\r\n\r\nfirst\r\n--b\r\n\r\nsecond", "--b\r\n\r\nfirst\r\n--b\r\n\r\nsecond\r\n-"] {
            let truncated = try decodeMultipart(cut, contentType: "multipart/mixed; boundary=b")
            #expect(truncated.value?["closed"] as? Bool == false)
            #expect(truncated.partBytes == [Array("first".utf8), Array("second".utf8)])
            #expect(truncated.warnings.contains { $0.contains("no closing delimiter") })
        }
    }

    @Test func malformedPartHeadersAreErrors() throws {
        for header in ["No colon here", ": empty name", "Bad<Name: x", "Folded\r\n continuation first"] {
            let body = "--b\r\n" + (header.hasPrefix("Folded") ? " x\r\n" : header + "\r\n") + "\r\nv\r\n--b--"
            let outcome = try decodeMultipart(body, contentType: "multipart/form-data; boundary=b")
            #expect(outcome.error?.code == .invalidMultipart, "\(header)")
        }
        let cut = try decodeMultipart("--b\r\nContent-Type: text/plain\r\n", contentType: "multipart/mixed; boundary=b")
        #expect(cut.error?.code == .invalidMultipart)
    }

    @Test func foldedHeaderValuesAreJoined() throws {
        let outcome = try decodeMultipart(
            "--b\r\nContent-Disposition: attachment;\r\n\tfilename=\"x.png\"\r\n\r\nv\r\n--b--",
            contentType: "multipart/mixed; boundary=b")
        #expect(outcome.parts.first?["filename"] as? String == "x.png")
        #expect(outcome.parts.first?["disposition"] as? String == "attachment")
    }

    @Test func filenameStarDecodingAndPrecedence() throws {
        let outcome = try decodeMultipart(
            "--b\r\nContent-Disposition: form-data; name=f; filename*=UTF-8''%E2%82%AC%20rates.txt; filename=\"EUR rates.txt\"\r\n\r\nv\r\n"
                + "--b\r\nContent-Disposition: form-data; name=g; filename*=iso-8859-1'en'%E9t%E9.txt\r\n\r\nw\r\n--b--",
            contentType: "multipart/form-data; boundary=b")
        #expect(outcome.parts.map { $0["filename"] as? String } == ["\u{20AC} rates.txt", "\u{E9}t\u{E9}.txt"])
    }

    @Test func transferEncodingsAreUndone() throws {
        let body =
            "--b\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n"
            + "Content-Location: https://news.example/a/page.html\r\n\r\n<p>caf=C3=A9 =\r\nau lait</p><a href=3D\"b.html\">b</a>\r\n"
            + "--b\r\nContent-Type: application/json\r\nContent-Transfer-Encoding: BASE64\r\n\r\neyJ4Ijoy\r\nfQ==\r\n"
            + "--b\r\nContent-Type: application/json\r\nContent-Transfer-Encoding: base64\r\n\r\n!!garbage!!\r\n--b--"
        let outcome = try decodeMultipart(body, contentType: "multipart/related; boundary=b", chain: Self.chain)
        let parts = outcome.parts
        #expect(parts.count == 3)
        let html = parts[0]["value"] as? [String: Any]
        #expect((html?["text"] as? String)?.hasPrefix("caf\u{E9} au lait") == true)
        // The part's Content-Location is the base of its links.
        #expect((html?["links"] as? [[String: Any]])?.first?["url"] as? String == "https://news.example/a/b.html")
        #expect(parts[0]["transferEncoding"] as? String == "quoted-printable")
        #expect(parts[1]["decodedBytes"] as? Int == 7)
        #expect((parts[1]["value"] as? [String: Any])?["x"] as? Int == 2)
        #expect((parts[2]["error"] as? [String: Any])?["code"] as? String == "invalidMultipart")
        #expect(parts[2]["decoder"] == nil)
    }

    @Test func byterangesGiveTheirOffsets() throws {
        let body =
            "--r\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-2/10\r\n\r\naaa\r\n"
            + "--r\r\nContent-Type: text/plain\r\nContent-Range: bytes 8-9/*\r\n\r\ncc\r\n"
            + "--r\r\nContent-Range: bytes x-y/z\r\n\r\nq\r\n--r--\r\n"
        let outcome = try decodeMultipart(body, contentType: "multipart/byteranges; boundary=r")
        let ranges = outcome.parts.map { $0["range"] as? [String: Int] }
        #expect(ranges == [["start": 0, "end": 2, "length": 10], ["start": 8, "end": 9], nil])
        #expect(outcome.warnings.contains { $0.contains("unreadable Content-Range") })
    }

    @Test func digestPartsDefaultToMessages() throws {
        let outcome = try decodeMultipart(
            "--d\r\n\r\nFrom: a@example.com\r\n\r\nhi\r\n--d--", contentType: "multipart/digest; boundary=d",
            chain: Self.chain)
        #expect(outcome.parts.first?["contentType"] as? String == "message/rfc822")
        #expect(outcome.parts.first?["decoder"] as? String == "raw")
    }

    @Test func nestingPastTheDepthIsAnErrorOnThatPart() throws {
        // Four levels decode by default; the fifth is a part error.
        var body = "leaf"
        var type = "text/plain"
        for level in 0..<5 {
            let boundary = "L\(level)"
            body = "--\(boundary)\r\nContent-Type: \(type)\r\n\r\n\(body)\r\n--\(boundary)--"
            type = "multipart/mixed; boundary=\(boundary)"
        }
        let outcome = try decodeMultipart(body, contentType: type, chain: Self.chain)
        var value = outcome.value
        for _ in 0..<3 {
            let part = try #require((value?["parts"] as? [[String: Any]])?.first)
            value = part["value"] as? [String: Any]
        }
        let deepest = try #require((value?["parts"] as? [[String: Any]])?.first)
        #expect(deepest["decoder"] as? String == "multipart")
        #expect((deepest["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        let shallow = try decodeMultipart(body, contentType: type, chain: Self.chain) {
            $0.limits.maxMultipartDepth = 1
        }
        #expect((shallow.parts.first?["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
    }

    @Test func partsPastTheLimitAreNotRead() throws {
        let body = String(repeating: "--b\r\n\r\nx\r\n", count: 10) + "--b--"
        let outcome = try decodeMultipart(body, contentType: "multipart/mixed; boundary=b") {
            $0.limits.maxMultipartParts = 3
        }
        #expect(outcome.parts.count == 3)
        #expect(outcome.value?["truncated"] as? [String] == ["parts"])
        let exact = try decodeMultipart(body, contentType: "multipart/mixed; boundary=b") {
            $0.limits.maxMultipartParts = 10
        }
        #expect(exact.parts.count == 10)
        #expect(exact.value?["truncated"] == nil)
    }

    @Test func theValueCountsAgainstMaxValueBytes() throws {
        let body = "--b\r\n\r\n" + String(repeating: "x", count: 2000) + "\r\n--b\r\n\r\nsmall\r\n--b--"
        let outcome = try decodeMultipart(body, contentType: "multipart/mixed; boundary=b") {
            $0.limits.maxValueBytes = 1000
        }
        #expect((outcome.parts.first?["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        #expect(outcome.partBytes.last == Array("small".utf8))
    }

    @Test func emptyBodiesAndZeroParts() throws {
        #expect(try decodeMultipart("", contentType: "multipart/mixed; boundary=b").value == nil)
        let none = try decodeMultipart("\r\n--b--\r\n", contentType: "multipart/form-data; boundary=b")
        #expect(none.value?["parts"] as? [Any] != nil && none.parts.isEmpty)
        let text = try decodeMultipart("junk\r\n--b--\r\n", contentType: "multipart/form-data; boundary=b")
        #expect(text.error?.code == .invalidMultipart)
    }

    @Test func innerBoundaryWithTheOuterAsPrefix() throws {
        let body =
            "--sep\r\nContent-Type: multipart/alternative; boundary=sep_alt\r\n\r\n--sep_alt\r\n\r\na\r\n--sep_alt--\r\n--sep--"
        let outcome = try decodeMultipart(body, contentType: "multipart/mixed; boundary=sep", chain: Self.chain)
        #expect(outcome.parts.count == 1)
        #expect(((outcome.parts.first?["value"] as? [String: Any])?["parts"] as? [Any])?.count == 1)
    }
}

import Foundation
import Testing

@testable import RespDecode

/// The reviewer's findings on the multipart decoder: transfer-decoded copies bounded per record, quoted-printable's
/// trailing white space, the guessed boundary, and the body excerpt of a part past a limit
/// (docs/decoding.md#multipart-limits, #multipart-boundaries, #multipart-transfer-encodings).
@Suite("Multipart review fixes")
struct MultipartReviewTests {
    static let chain = ["json", "multipart", "text"]

    /// `levels` multipart/mixed bodies nested in one another, each holding one part in `encoding`, the innermost of
    /// `content` as application/octet-stream.
    static func nested(_ content: String, levels: Int, encoding: String) -> (body: String, type: String) {
        var body = content
        var type = "application/octet-stream"
        for level in 0..<levels {
            let encoded = encoding == "base64" ? Data(body.utf8).base64EncodedString() : body
            body =
                "--N\(level)\r\nContent-Type: \(type)\r\nContent-Transfer-Encoding: \(encoding)\r\n\r\n\(encoded)"
                + "\r\n--N\(level)--\r\n"
            type = "multipart/mixed; boundary=N\(level)"
        }
        return (body, type)
    }

    @Test(arguments: ["quoted-printable", "base64"])
    func transferDecodedCopiesAreBoundedByTheRecordsBody(encoding: String) throws {
        let (body, type) = Self.nested(String(repeating: "x", count: 1000), levels: 4, encoding: encoding)
        let outcome = try decodeMultipart(body, contentType: type, chain: Self.chain)
        // The first level's copy fits in the body's size; the second one's would pass it.
        let first = try #require(outcome.parts.first)
        #expect(first["error"] == nil)
        let inner = try #require(((first["value"] as? [String: Any])?["parts"] as? [[String: Any]])?.first)
        #expect((inner["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        #expect((inner["body"] as? [String: Any])?["bytes"] as? Int == inner["bytes"] as? Int)
        // One level decodes whole.
        let (flat, flatType) = Self.nested("hello", levels: 1, encoding: encoding)
        let one = try decodeMultipart(flat, contentType: flatType, chain: Self.chain)
        #expect(one.parts.first?["error"] == nil)
        #expect(one.parts.first?["decodedBytes"] as? Int == 5)
    }

    @Test func quotedPrintableDeletesTrailingWhiteSpace() {
        func decode(_ text: String) -> String {
            let bytes = Array(text.utf8)
            return String(
                decoding: bytes.withUnsafeBufferPointer { TransferEncoding.quotedPrintable($0) }, as: UTF8.self)
        }
        #expect(decode("ab   \r\n") == "ab\r\n")
        #expect(decode("ab \t\ncd\t") == "ab\ncd")
        #expect(decode("a b\t c  =\r\nd") == "a b\t c  d")
        #expect(decode("x=20\r\n") == "x \r\n")
        #expect(decode("a \rb") == "a \rb")
    }

    @Test func guessedBoundaryFollowsRFC2046() throws {
        let json = "Content-Type: application/json\r\n\r\n{\"a\":1}\r\n"
        for (body, boundary) in [
            ("\r\n--XyZ\r\n\(json)--XyZ--\r\n", "XyZ"),
            ("--X y\r\n\(json)--X y--\r\n", "X y"),
            ("--XyZ \r\n\(json)--XyZ--\r\n", "XyZ"),
            ("--XyZ\t \r\n\(json)--XyZ--\r\n", "XyZ"),
        ] {
            let outcome = try decodeMultipart(body, contentType: "multipart/mixed", chain: Self.chain)
            #expect(outcome.value?["boundary"] as? String == boundary, "\(body.debugDescription)")
            #expect(outcome.parts.count == 1, "\(body.debugDescription)")
            #expect((outcome.parts.first?["value"] as? [String: Any])?["a"] as? Int == 1, "\(body.debugDescription)")
        }
        let form = try decodeMultipart(
            "\r\n--f\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--f--\r\n",
            contentType: "multipart/form-data")
        #expect(form.value?["boundary"] as? String == "f")
        #expect(form.parts.first?["name"] as? String == "a")
        // Chrome's empty form: the close delimiter, zero parts.
        let empty = try decodeMultipart("--B--\r\n", contentType: "multipart/form-data")
        #expect(empty.error == nil)
        #expect(empty.value?["boundary"] as? String == "B")
        #expect(empty.value?["parts"] as? [Any] != nil && empty.parts.isEmpty)
        // 70 characters at most; none but bchars.
        let long = String(repeating: "b", count: 71)
        #expect(try decodeMultipart("--\(long)\r\n\r\nx\r\n--\(long)--", contentType: "multipart/mixed").error != nil)
        let seventy = String(repeating: "b", count: 70)
        #expect(
            try decodeMultipart("--\(seventy)\r\n\r\nx\r\n--\(seventy)--", contentType: "multipart/mixed").value?[
                "boundary"] as? String == seventy)
        #expect(try decodeMultipart("--a<b\r\n\r\nx\r\n--a<b--", contentType: "multipart/mixed").error != nil)
    }

    @Test func aPartTooDeepCarriesItsFirstBytes() throws {
        var body = "leaf"
        var type = "text/plain"
        for level in 0..<2 {
            body = "--L\(level)\r\nContent-Type: \(type)\r\n\r\n\(body)\r\n--L\(level)--"
            type = "multipart/mixed; boundary=L\(level)"
        }
        let outcome = try decodeMultipart(body, contentType: type, chain: Self.chain) {
            $0.limits.maxMultipartDepth = 1
        }
        let part = try #require(outcome.parts.first)
        #expect((part["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        let excerpt = try #require(part["body"] as? [String: Any])
        #expect(excerpt["bytes"] as? Int == part["bytes"] as? Int)
        // A part whose value passed the room left has none.
        let large = "--b\r\n\r\n" + String(repeating: "x", count: 2000) + "\r\n--b--"
        let tooLarge = try decodeMultipart(large, contentType: "multipart/mixed; boundary=b") {
            $0.limits.maxValueBytes = 1000
        }
        #expect((tooLarge.parts.first?["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        #expect(tooLarge.parts.first?["body"] == nil)
    }
}

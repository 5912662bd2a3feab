import Foundation
import Testing

@testable import RespDecode

/// Decodes one response through the compound decoder and returns its line as a dictionary.
func decodeLine(
    status: Int, contentType: String?, body: String, configure: (inout Configuration) -> Void = { _ in }
) throws -> [String: Any] {
    var configuration = Configuration()
    configure(&configuration)
    var headers = HeaderFields()
    if let contentType { headers.append(name: "Content-Type", value: contentType) }
    let record = ResponseRecord(offset: 0, status: status, headers: headers, body: Array(body.utf8))
    let out = OutputBuffer()
    CompoundDecoder(configuration: configuration).writeLine(
        for: .record(record), source: .init(seq: 0, offset: 0, input: nil), into: out)
    #expect(out.array.last == UInt8(ascii: "\n"))
    let object = try JSONSerialization.jsonObject(with: Data(out.array), options: [.fragmentsAllowed])
    return try #require(object as? [String: Any])
}

extension Dictionary where Key == String, Value == Any {
    var errorCode: String? { (self["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String? { (self["error"] as? [String: Any])?["message"] as? String }
    var urlErrorCode: Int? { (self["error"] as? [String: Any])?["urlErrorCode"] as? Int }
    var underlyingCode: String? {
        ((self["error"] as? [String: Any])?["underlying"] as? [String: Any])?["code"] as? String
    }
    var underlyingURLErrorCode: Int? {
        ((self["error"] as? [String: Any])?["underlying"] as? [String: Any])?["urlErrorCode"] as? Int
    }
    var ok: Bool? { self["ok"] as? Bool }
    var hasValue: Bool { self["value"] != nil }
    var decoder: String? { self["decoder"] as? String }
}

/// AFNetworking's response-serialization tests that apply to a stream of captured responses
/// (docs/afnetworking.md#parity-tests), each translated into a line-level check. "Strict types" stands for a serializer
/// whose
/// `acceptableContentTypes` is set: in respdecode a type check applies when a decoder matched or with
/// `--strict-types` (docs/decoding.md#validation).
@Suite("AFNetworking parity")
struct AFNetworkingParityTests {
    // AFHTTPResponseSerializationTests.testThatAFHTTPResponseSerializationHandlesAll2XXCodes
    @Test func handlesAll2XXCodes() throws {
        for status in 200...299 {
            let line = try decodeLine(status: status, contentType: "text/html", body: "text")
            #expect(line.ok == true && line.errorCode == nil, "status \(status)")
        }
    }

    // AFHTTPResponseSerializationTests.testThatAFHTTPResponseSerializationFailsAll4XX5XXStatusCodes
    @Test func failsAll4XX5XXCodes() throws {
        for status in 400...599 {
            let line = try decodeLine(status: status, contentType: "text/html", body: "text")
            #expect(line.ok == false && line.errorCode == "unacceptableStatusCode" && line.urlErrorCode == -1011)
        }
    }

    // AFHTTPResponseSerializationTests.testResponseIsValidated
    @Test func responseIsValidated() throws {
        #expect(try decodeLine(status: 200, contentType: "text/html", body: "text").ok == true)
    }

    // AFHTTPResponseSerializationTests.testThatAFHTTPResponseSerializationSucceedsWith205WithNoResponseContentTypeAndNoResponseData
    // (first call: no type, no data passes; second call: no type with data fails)
    @Test func noContentTypeAndNoDataPasses() throws {
        let empty = try decodeLine(status: 205, contentType: nil, body: "") { $0.decoding.strictTypes = true }
        #expect(empty.ok == true && empty.errorCode == nil)
        let withData = try decodeLine(status: 205, contentType: nil, body: "test") { $0.decoding.strictTypes = true }
        #expect(withData.ok == false)
    }

    // AFHTTPResponseSerializationTests.testThatAFHTTPResponseSerializationFailsWith205WithNoResponseContentTypeAndResponseData
    @Test func noContentTypeWithDataFailsWithNull() throws {
        let line = try decodeLine(status: 205, contentType: nil, body: "test") { $0.decoding.strictTypes = true }
        #expect(line.errorCode == "unacceptableContentType" && line.urlErrorCode == -1016)
        #expect(line.errorMessage == "Request failed: unacceptable content-type: (null)")
    }

    // AFJSONResponseSerializationTests.testThatJSONResponseSerializerAcceptsApplicationJSONMimeType,
    // …AcceptsTextJSONMimeType, …AcceptsTextJavaScriptMimeType
    @Test(arguments: ["application/json", "text/json", "text/javascript"])
    func jsonAcceptsItsThreeTypes(_ type: String) throws {
        let line = try decodeLine(status: 200, contentType: type, body: #"{"foo":"bar"}"#)
        #expect(line.decoder == "json" && line.ok == true && line.errorCode == nil)
    }

    // AFJSONResponseSerializationTests.testThatJSONResponseSerializerDoesNotAcceptNonStandardJSONMimeType
    @Test func jsonDoesNotAcceptNonStandardType() throws {
        let strict = try decodeLine(status: 200, contentType: "nonstandard/json", body: #"{"foo":"bar"}"#) {
            $0.decoding.strictTypes = true
        }
        #expect(strict.errorCode == "unacceptableContentType")
        #expect(strict.errorMessage == "Request failed: unacceptable content-type: nonstandard/json")
        // Without --strict-types the compound falls back to its base class: the raw body, status checked only.
        let fallback = try decodeLine(status: 200, contentType: "nonstandard/json", body: #"{"foo":"bar"}"#)
        #expect(fallback.decoder == "raw" && fallback.ok == true)
        #expect((fallback["value"] as? [String: Any])?["text"] as? String == #"{"foo":"bar"}"#)
    }

    // AFJSONResponseSerializationTests.testThatJSONResponseSerializerReturnsDictionaryForValidJSONDictionary
    @Test func jsonReturnsDictionary() throws {
        let line = try decodeLine(status: 200, contentType: "text/json", body: #"{"foo":"bar"}"#)
        #expect((line["value"] as? [String: Any])?["foo"] as? String == "bar")
        #expect(line.errorCode == nil)
    }

    // AFJSONResponseSerializationTests.testThatJSONResponseSerializerReturnsErrorForInvalidJSON
    @Test func jsonReturnsErrorForInvalidJSON() throws {
        let line = try decodeLine(status: 200, contentType: "text/json", body: "{invalid}")
        #expect(line.errorCode == "invalidJSON" && !line.hasValue)
        #expect((line["body"] as? [String: Any])?["base64"] as? String == "e2ludmFsaWR9")
    }

    // AFJSONResponseSerializationTests.testThatJSONResponseSerializerReturnsNilObjectAndNilErrorForEmptyData
    // AFJSONResponseSerializationTests.testThatJSONResponseSerializerReturnsNilObjectAndNilErrorForSingleSpace
    @Test(arguments: ["", " "])
    func jsonEmptyOrSingleSpaceGivesNoValueAndNoError(_ body: String) throws {
        let line = try decodeLine(status: 200, contentType: "text/json", body: body)
        #expect(line.ok == true && !line.hasValue && line.errorCode == nil)
    }

    // AFJSONResponseSerializationTests.testThatJSONRemovesKeysWithNullValues
    @Test func jsonRemovesKeysWithNullValues() throws {
        let body = #"{"key":"value","nullkey":null,"array":[{"subnullkey":null}],"arrayWithNulls":[null]}"#
        let value = try #require(
            try decodeLine(status: 200, contentType: "text/json", body: body)["value"] as? [String: Any])
        #expect(value["key"] as? String == "value")
        #expect(value["nullkey"] == nil)
        #expect(((value["array"] as? [[String: Any]])?.first)?["subnullkey"] == nil)
        #expect((value["arrayWithNulls"] as? [Any])?.isEmpty == true)
    }

    // AFCompoundResponseSerializerTests.testCompoundSerializerProperlySerializesResponse
    @Test func compoundSerializesWithTheFirstMatchingDecoder() throws {
        let line = try decodeLine(status: 200, contentType: "application/json", body: #"{"key":"value"}"#)
        #expect(line.decoder == "json" && line.ok == true && line.errorCode == nil)
        #expect((line["value"] as? [String: Any])?["key"] as? String == "value")
    }

    // AFXMLParserResponseSerializerTests / AFXMLDocumentResponseSerializerTests (docs/afnetworking.md#parity-tests):
    // the same body.
    static let afXML = #"<?xml version="1.0" encoding="UTF-8"?><foo attr1="1" attr2="2"><bar>someValue</bar></foo>"#

    // …testThatXMLParserResponseSerializerAcceptsApplicationXMLMimeType / …AcceptsTextXMLMimeType
    @Test(arguments: ["application/xml", "text/xml"])
    func xmlAcceptsItsTypes(_ type: String) throws {
        let line = try decodeLine(status: 200, contentType: type, body: Self.afXML)
        #expect(line.decoder == "xml" && line.ok == true && line.errorCode == nil)
    }

    // …testThatXMLParserResponseSerializerDoesNotAcceptsNonStandardXMLMimeType (a serializer with only xml's types)
    @Test func xmlDoesNotAcceptNonStandardType() throws {
        let line = try decodeLine(status: 200, contentType: "nonstandard/xml", body: Self.afXML) {
            $0.decoding.chain = [ChainEntry(decoder: XMLBodyDecoder())]
            $0.decoding.strictTypes = true
        }
        #expect(line.errorCode == "unacceptableContentType" && line.urlErrorCode == -1016)
    }

    // …testThatXMLParserResponseSerializerReturnsNSXMLParserObjectForValidXML and the XMLDocument variant: where AF
    // hands back a parser or document object, respdecode gives the parsed tree.
    @Test func xmlReturnsTheDocument() throws {
        let line = try decodeLine(status: 200, contentType: "application/xml", body: Self.afXML)
        let value = try #require(line["value"] as? [String: Any])
        #expect(value["name"] as? String == "foo")
        #expect(value["attributes"] as? [String: String] == ["attr1": "1", "attr2": "2"])
        let bar = try #require((value["children"] as? [[String: Any]])?.first)
        #expect(bar["name"] as? String == "bar" && bar["children"] as? [String] == ["someValue"])
    }

    // AFXMLDocumentResponseSerializerTests.testThatXMLDocumentResponseSerializerReturnsErrorForInvalidXML
    // (AFXMLParserResponseSerializer never parses, so it gives no error; a pipeline needs one,
    // docs/decoding.md#parse-errors-are-reported).
    @Test func xmlReturnsErrorForInvalidXML() throws {
        let line = try decodeLine(status: 200, contentType: "application/xml", body: "<foo")
        #expect(line.ok == false && line.errorCode == "invalidXML" && !line.hasValue)
        #expect((line["body"] as? [String: Any])?["base64"] as? String == "PGZvbw==")
    }

    // AFPropertyListResponseSerializerTests.testThatPropertyListResponseSerializerAcceptsPlistData (the body as
    // produced on Linux, docs/afnetworking.md#parity-tests)
    @Test func plistAcceptsPlistData() throws {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            	<key>foo</key>
            	<string>bar</string>
            </dict>
            </plist>

            """
        let line = try decodeLine(status: 200, contentType: "application/x-plist", body: body)
        #expect(line.decoder == "plist" && line.ok == true && line.errorCode == nil)
        #expect(line["value"] as? [String: String] == ["foo": "bar"])
        #expect(line["warnings"] == nil, "the DOCTYPE's external DTD is not fetched, and that is not worth a warning")
    }

    // AFPropertyListResponseSerializerTests.testThatPropertyListResponseSerializerHandlesInvalidPlistData
    @Test func plistHandlesInvalidPlistData() throws {
        let line = try decodeLine(status: 200, contentType: "application/x-plist", body: #"{"foo":"bar"}"#)
        #expect(line.ok == false && line.errorCode != nil && !line.hasValue)
    }

    // AFPropertyListResponseSerializerTests.testThatPropertyListResponseSerializerHandles204 (a stream cannot tell a
    // nil body from an empty one; both give no value and no error here)
    @Test func plistHandles204() throws {
        let line = try decodeLine(status: 204, contentType: "application/x-plist", body: "")
        #expect(line.ok == true && line.errorCode == nil && !line.hasValue)
    }

    // docs/afnetworking.md#the-json-outcome-matrix, the JSON outcome matrix, row by row where a stream can express it.
    @Test func jsonOutcomeMatrix() throws {
        // yes / yes / valid JSON → object, no error
        #expect(try decodeLine(status: 200, contentType: "application/json", body: "[1]").ok == true)
        // no / yes / valid JSON → object AND -1011 (status errors still decode,
        // docs/decoding.md#status-errors-still-decode)
        let statusOnly = try decodeLine(status: 500, contentType: "application/json", body: #"{"a":1}"#)
        #expect(statusOnly.hasValue && statusOnly.errorCode == "unacceptableStatusCode" && statusOnly.ok == false)
        #expect(statusOnly.errorMessage == "Request failed: internal server error (500)")
        #expect(statusOnly["body"] == nil, "a decoded value makes the failing body redundant")
        // no / yes / invalid JSON → parse error with -1011 underneath
        let both = try decodeLine(status: 404, contentType: "application/json", body: "{")
        #expect(both.errorCode == "invalidJSON" && both.underlyingCode == "unacceptableStatusCode")
        #expect(both.underlyingURLErrorCode == -1011)
        // no / yes / empty or " " → -1011, no value. AF attaches the (empty) data; the line leaves an empty `body`
        // out, as it does every empty key (docs/output.md#the-result-line), and `bodyBytes` says 0.
        let empty = try decodeLine(status: 404, contentType: "application/json", body: "")
        #expect(empty.errorCode == "unacceptableStatusCode" && !empty.hasValue && empty["body"] == nil)
        #expect(empty["bodyBytes"] as? Int == 0)
        let space = try decodeLine(status: 404, contentType: "application/json", body: " ")
        #expect(space.errorCode == "unacceptableStatusCode" && !space.hasValue && space["body"] != nil)
        // no / no / non-empty → -1011 over -1016 (with a type check: --strict-types)
        // (AFJSONResponseSerializer alone: text/html is not one of its types; in the default chain html takes it.)
        let neither = try decodeLine(status: 404, contentType: "text/html", body: "not found") {
            $0.decoding.strictTypes = true
            $0.decoding.chain = [ChainEntry(decoder: JSONBodyDecoder())]
        }
        #expect(neither.errorCode == "unacceptableStatusCode" && neither.underlyingCode == "unacceptableContentType")
        #expect(neither.errorMessage == "Request failed: not found (404)")
        // MIME nil / non-empty → -1016 "(null)" (with a type check)
        let noType = try decodeLine(status: 200, contentType: nil, body: "{}") { $0.decoding.strictTypes = true }
        #expect(noType.errorMessage == "Request failed: unacceptable content-type: (null)")
        // MIME nil / empty → exempt
        #expect(try decodeLine(status: 200, contentType: nil, body: "") { $0.decoding.strictTypes = true }.ok == true)
        // yes / mismatched MIME / empty: AF says NO without an error object; docs/decoding.md#validation makes it
        // -1016.
        let mismatchedEmpty = try decodeLine(status: 200, contentType: "text/html", body: "") {
            $0.decoding.strictTypes = true
            $0.decoding.chain = [ChainEntry(decoder: JSONBodyDecoder())]
        }
        #expect(mismatchedEmpty.errorCode == "unacceptableContentType")
    }

    /// Lower-case reason phrases as on Darwin; codes the table lacks use the class phrase.
    @Test func statusMessages() {
        #expect(Validation.statusError(404).message == "Request failed: not found (404)")
        #expect(Validation.statusError(403).message == "Request failed: forbidden (403)")
        #expect(Validation.statusError(418).message == "Request failed: client error (418)")
        #expect(Validation.statusError(599).message == "Request failed: server error (599)")
        #expect(Validation.statusError(302).message == "Request failed: found (302)")
        #expect(Validation.statusError(404).urlErrorCode == -1011)
        #expect(Validation.contentTypeError("text/html").urlErrorCode == -1016)
    }

    /// AFErrorWithUnderlyingError: an error that already has an underlying one keeps it.
    @Test func chainingNeverGoesDeeperThanTheFirstError() {
        let typeError = Validation.contentTypeError("text/html")
        let statusError = Validation.statusError(404).chained(over: typeError)
        let parseError = RecordError(.invalidJSON, "bad").chained(over: statusError)
        #expect(parseError.underlying == statusError)
        #expect(statusError.chained(over: RecordError(.invalidJSON, "other")).underlying == typeError)
        #expect(typeError.chained(over: nil) == typeError)
    }
}

/// Alamofire 5.12's offline tests that apply (docs/afnetworking.md#parity-tests).
@Suite("Alamofire parity")
struct AlamofireParityTests {
    // MIMETypeTests.parsesWellFormedPair
    @Test(arguments: ["text/plain", "application/json", "image/png", "*/*", "text/*", "*/json"])
    func parsesWellFormedPair(_ text: String) throws {
        let pattern = try #require(MediaTypePattern(text))
        let parts = text.split(separator: "/")
        #expect(pattern.type == String(parts[0]) && pattern.subtype == String(parts[1]))
    }

    // MIMETypeTests.stripsParameters, MIMETypeTests.stripsWhitespace (on the response side: docs/decoding.md#mime-type)
    @Test func responseTypesLoseParametersAndWhitespace() {
        #expect(MediaType.mimeType(ofContentType: "text/plain; charset=utf-8") == "text/plain")
        #expect(MediaType.mimeType(ofContentType: "  text/plain  ") == "text/plain")
        #expect(MediaType.mimeType(ofContentType: "application/json ; charset=utf-8") == "application/json")
        #expect(MediaType.mimeType(ofContentType: "Application/JSON; charset=UTF-8") == "application/json")
        #expect(MediaType.mimeType(ofContentType: "") == nil)
    }

    // MIMETypeTests.singleComponentWithoutSlashReturnsNil, MIMETypeTests.emptyStringReturnsNil
    @Test(arguments: ["text", "", "a/b/c", "/", "text/"])
    func malformedPatternsAreRejected(_ text: String) {
        #expect(MediaTypePattern(text) == nil)
    }

    // MIMETypeTests.exactMatch, wildcardSubtypeMatchesAnySametype, wildcardSubtypeDoesNotMatchDifferentType,
    // wildcardTypeMatchesSameSubtype, fullWildcardMatchesAny, noMatchOnDifferentPair,
    // sameTypeButDifferentSubtypeNoMatch
    @Test func matching() throws {
        func matches(_ pattern: String, _ type: String) throws -> Bool {
            try #require(MediaTypePattern(pattern)).matches(type)
        }
        #expect(try matches("text/plain", "text/plain"))
        #expect(try matches("text/*", "text/plain") && matches("text/*", "text/html"))
        #expect(try !matches("text/*", "application/json"))
        #expect(try matches("*/json", "application/json"))
        #expect(try matches("*/*", "text/plain") && matches("*/*", "application/json") && matches("*/*", "image/png"))
        #expect(try !matches("application/json", "text/plain"))
        #expect(try !matches("text/plain", "text/html"))
    }

    // ValidationTests: ContentType …AcceptableContentTypeResponseSucceeds and
    // …AcceptableWildcardContentTypeResponseSucceeds
    @Test(arguments: ["application/json", "*/*", "application/*", "*/json"])
    func acceptableTypesIncludingWildcards(_ pattern: String) throws {
        let line = try decodeLine(status: 200, contentType: "application/json", body: "{}") {
            $0.decoding.chain = [ChainEntry(decoder: JSONBodyDecoder(), acceptableTypes: [MediaTypePattern(pattern)!])]
        }
        #expect(line.decoder == "json" && line.ok == true)
    }

    // ValidationTests: ContentType …UnacceptableContentTypeResponseFails (with a type check)
    @Test func unacceptableContentType() throws {
        let line = try decodeLine(status: 200, contentType: "application/xml", body: "<a/>") {
            $0.decoding.chain = [
                ChainEntry(decoder: JSONBodyDecoder(), acceptableTypes: [MediaTypePattern("application/octet-stream")!])
            ]
            $0.decoding.strictTypes = true
        }
        #expect(line.errorCode == "unacceptableContentType")
        #expect(line.errorMessage == "Request failed: unacceptable content-type: application/xml")
    }

    // ValidationTests: ContentType …NoAcceptableContentTypeResponseSucceedsWhenNoDataIsReturned
    @Test func noDataSkipsTheTypeCheck() throws {
        let line = try decodeLine(status: 204, contentType: nil, body: "") { $0.decoding.strictTypes = true }
        #expect(line.ok == true)
    }

    // ValidationTests: StatusCode …AcceptableStatusCodeResponseSucceeds / …UnacceptableStatusCodeResponseFails
    @Test func statusCodeSets() throws {
        #expect(try decodeLine(status: 200, contentType: "application/json", body: "{}").ok == true)
        let custom = try decodeLine(status: 404, contentType: nil, body: "") {
            $0.decoding.acceptableStatusCodes = StatusCodeSet(parsing: "200")!
        }
        #expect(custom.errorCode == "unacceptableStatusCode")
        #expect(StatusCodeSet(parsing: "200-299,304")?.contains(304) == true)
        #expect(StatusCodeSet(parsing: "200-299,304")?.contains(305) == false)
    }

    // ResponseSerializationTests: …JSONResponseSerializerFailsWhenDataIsInvalidJSON (Alamofire's invalid_data.json)
    @Test func invalidJSONFile() throws {
        let body = "this is not going\n\"to\" be happy json\ndata at all\n{\n    \"10\": whoops\n}"
        let line = try decodeLine(status: 200, contentType: "application/json", body: body)
        #expect(line.errorCode == "invalidJSON")
        // ResponseSerializationTests: …JSONResponseSerializerSucceedsWhenDataIsValidJSON (valid_data.json)
        let valid = try decodeLine(
            status: 200, contentType: "application/json", body: "{\n    \"team\": \"royals\",\n    \"score\": 23\n}")
        #expect((valid["value"] as? [String: Any])?["team"] as? String == "royals")
    }
}

import Foundation
import RespDecode
import RespDecodeTestSupport
import Testing

/// The msgpack-test-suite (../shared/corpora/msgpack/msgpack-test-suite, see its PROVENANCE.md): every encoding of every
/// value must decode to that value, under the mapping of docs/output.md#msgpack.
@Suite("msgpack-test-suite conformance")
struct MessagePackConformanceTests {
    static let suitePath = "msgpack/msgpack-test-suite/msgpack-test-suite.json"

    @Test("every encoding of every value decodes to the value")
    func everyEncoding() throws {
        if let problem = Corpora.missingWhileRequired { Issue.record(Comment(rawValue: problem)) }
        guard Corpora.available else {
            print(Corpora.skipMessage)
            return
        }
        let data = try Data(contentsOf: Corpora.url(Self.suitePath))
        let groups = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [[String: Any]]])
        var encodings = 0
        for (group, cases) in groups.sorted(by: { $0.key < $1.key }) {
            for testCase in cases {
                let hexes = try #require(testCase["msgpack"] as? [String])
                for hex in hexes {
                    encodings += 1
                    let result = decodeBinaryBody(
                        bytes(hex: hex), with: MessagePackBodyDecoder(), mimeType: "application/msgpack")
                    guard case .success(let json) = result else {
                        Issue.record("\(group) \(hex): \(result)")
                        continue
                    }
                    check(json, against: testCase, encoding: hex, group: group)
                }
            }
        }
        // PROVENANCE.md: 15 groups, 85 cases, 233 encodings.
        #expect(groups.count == 15)
        #expect(encodings == 233)
    }

    func check(_ json: String, against testCase: [String: Any], encoding hex: String, group: String) {
        let context = "\(group) \(hex) → \(json)"
        let parsed = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        if testCase.keys.contains("nil") {
            #expect(json == "null", "\(context)")
        } else if let value = testCase["bool"] as? Bool {
            #expect(json == (value ? "true" : "false"), "\(context)")
        } else if let bignum = testCase["bignum"] as? String {
            let isFloat = hex.hasPrefix("ca") || hex.hasPrefix("cb")
            if isFloat {
                #expect((parsed as? NSNumber)?.doubleValue == Double(bignum), "\(context)")
            } else {
                // Exactly, beyond 2^53.
                #expect(json == bignum, "\(context)")
            }
        } else if let number = testCase["number"] as? NSNumber {
            #expect((parsed as? NSNumber)?.doubleValue == number.doubleValue, "\(context)")
            // Integer encodings give integers (no ".0"), float ones reals.
            let isFloat = hex.hasPrefix("ca") || hex.hasPrefix("cb")
            #expect((json.contains(".") || json.contains("e")) == isFloat, "\(context)")
        } else if let string = testCase["string"] as? String {
            #expect(parsed as? String == string, "\(context)")
        } else if let binary = testCase["binary"] as? String {
            let expected = Data(bytes(hex: binary)).base64EncodedString()
            #expect((parsed as? [String: String]) == ["base64": expected], "\(context)")
        } else if let array = testCase["array"] {
            #expect((parsed as? NSArray)?.isEqual(array) == true, "\(context)")
        } else if let map = testCase["map"] {
            #expect((parsed as? NSDictionary)?.isEqual(map) == true, "\(context)")
        } else if let timestamp = testCase["timestamp"] as? [NSNumber] {
            #expect(
                parsed as? String == Self.iso8601(seconds: timestamp[0].int64Value, nanoseconds: timestamp[1].intValue),
                "\(context)")
        } else if let ext = testCase["ext"] as? [Any], let type = ext[0] as? Int, let data = ext[1] as? String {
            let object = parsed as? [String: Any]
            #expect(object?.count == 2, "\(context)")
            #expect(object?["ext"] as? Int == type, "\(context)")
            #expect(object?["base64"] as? String == Data(bytes(hex: data)).base64EncodedString(), "\(context)")
        } else {
            Issue.record("unknown case \(testCase)")
        }
    }

    /// The instant as ISO 8601 UTC in the proleptic Gregorian calendar (year 0 is 1 BC, as ISO 8601 and RFC 3339
    /// count), computed with Howard Hinnant's `civil_from_days` (a different algorithm from the decoder's): the
    /// fraction to the nanosecond without trailing zeros. Foundation's Gregorian calendar is not used: it switches to
    /// the Julian calendar before 1582.
    static func iso8601(seconds: Int64, nanoseconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        var text = String(
            format: "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", year, month, day, second / 3600, second / 60 % 60,
            second % 60)
        if nanoseconds != 0 {
            var fraction = String(format: "%09d", nanoseconds)
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }
}

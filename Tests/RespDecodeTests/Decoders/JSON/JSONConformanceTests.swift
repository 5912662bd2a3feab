import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The transcoder against the shared third-party corpora: JSONTestSuite's `test_parsing` and nativejson-benchmark.
///
/// Each test loops over a folder and collects every mismatch into one expectation, so a failure lists all the files.
@Suite("JSON conformance", .enabled(if: Corpora.available, Corpora.skipComment))
struct JSONConformanceTests {
    private static let parsing = "json/JSONTestSuite/test_parsing"
    private static let native = "json/nativejson-benchmark"

    private static func transcode(
        _ bytes: [UInt8], options: JSONTranscoder.Options = .init()
    ) -> Result<[UInt8], RecordError> {
        let output = OutputBuffer(capacity: 64)
        return bytes.withUnsafeBufferPointer { input in
            Result { () throws(RecordError) in
                try JSONTranscoder(options: options).transcode(input, into: output)
                return output.array
            }
        }
    }

    private static func files(_ folder: String, prefix: String) throws -> [URL] {
        try Corpora.files(in: folder, suffix: ".json").filter { $0.lastPathComponent.hasPrefix(prefix) }
    }

    // MARK: JSONTestSuite

    @Test func acceptsEveryYFile() throws {
        let files = try Self.files(Self.parsing, prefix: "y_")
        #expect(files.count == 95)
        var failures: [String] = []
        for file in files {
            let input = try Corpora.bytes(file)
            for options in [JSONTranscoder.Options(), .init(stripNulls: false)] {
                switch Self.transcode(input, options: options) {
                case .failure(let error):
                    failures.append("\(file.lastPathComponent) stripNulls=\(options.stripNulls): \(error)")
                case .success(let output):
                    if let problem = Self.checkOutput(input: input, output: output, stripNulls: options.stripNulls) {
                        failures.append("\(file.lastPathComponent) stripNulls=\(options.stripNulls): \(problem)")
                    }
                }
            }
        }
        #expect(failures.isEmpty, "y_ files not accepted or output wrong:\n\(failures.joined(separator: "\n"))")
    }

    /// The output re-parses with JSONSerialization, is the input's value (after null stripping), and is stable.
    private static func checkOutput(input: [UInt8], output: [UInt8], stripNulls: Bool) -> String? {
        guard let reparsed = try? JSONSerialization.jsonObject(with: Data(output), options: .fragmentsAllowed) else {
            return "output does not re-parse with JSONSerialization: \(String(decoding: output, as: UTF8.self))"
        }
        if let original = try? JSONSerialization.jsonObject(with: Data(input), options: .fragmentsAllowed) {
            let expected = stripNulls ? JSONValue(original).strippingNulls() : JSONValue(original)
            guard JSONValue(reparsed) == expected else {
                return "output differs in value from input: \(String(decoding: output, as: UTF8.self))"
            }
        }
        let again = transcode(output, options: .init(stripNulls: stripNulls))
        guard case .success(let twice) = again, twice == output else {
            return "output does not transcode to itself"
        }
        return nil
    }

    @Test func rejectsEveryNFile() throws {
        // Includes n_structure_no_data (empty) and n_single_space: the transcoder rejects them; the JSON decoder's
        // "empty body or one space means no content" rule (docs/decoding.md#empty-bodies) is applied before it is
        // called.
        let files = try Self.files(Self.parsing, prefix: "n_")
        #expect(files.count == 188)
        var accepted: [String] = []
        for file in files {
            let input = try Corpora.bytes(file)
            for options in [JSONTranscoder.Options(), .init(stripNulls: false)] {
                if case .success(let output) = Self.transcode(input, options: options) {
                    let text = String(decoding: output, as: UTF8.self)
                    accepted.append("\(file.lastPathComponent) stripNulls=\(options.stripNulls) → \(text)")
                }
            }
        }
        #expect(accepted.isEmpty, "n_ files accepted:\n\(accepted.joined(separator: "\n"))")
    }

    /// The implementation-defined files: each must be answered without a crash. Our answers, checked so that a change
    /// is noticed:
    ///
    /// Accepted (15): every `i_number_*` (numbers are copied as text, so size and precision do not matter:
    /// double_huge_neg_exp, huge_exp, neg_int_huge_exp, pos_double_huge_exp, real_neg_overflow, real_pos_overflow,
    /// real_underflow, too_big_neg_int, too_big_pos_int, very_big_negative_int), `i_string_UTF-16LE_with_BOM`,
    /// `i_string_utf16BE_no_BOM`, `i_string_utf16LE_no_BOM` (RFC 8259 §8.1 encodings), `i_structure_500_nested_arrays`
    /// (under the 512 limit) and `i_structure_UTF-8_BOM_empty_object`.
    ///
    /// Rejected (20): every escaped lone or mis-ordered surrogate (object_key_lone_2nd_surrogate,
    /// string_1st_surrogate_but_2nd_missing, string_1st_valid_surrogate_2nd_invalid,
    /// string_incomplete_surrogate_and_escape_valid, string_incomplete_surrogate_pair,
    /// string_incomplete_surrogates_escape_valid, string_invalid_lonely_surrogate, string_invalid_surrogate,
    /// string_inverted_surrogates_U+1D11E, string_lone_second_surrogate), because the output must be valid UTF-8; and
    /// every invalid UTF-8 input (string_UTF-8_invalid_sequence, string_UTF8_surrogate_U+D800, string_invalid_utf-8,
    /// string_iso_latin_1, string_lone_utf8_continuation_byte, string_not_in_unicode_range,
    /// string_overlong_sequence_2_bytes, string_overlong_sequence_6_bytes, string_overlong_sequence_6_bytes_null,
    /// string_truncated-utf-8).
    @Test func answersEveryIFile() throws {
        let files = try Self.files(Self.parsing, prefix: "i_")
        #expect(files.count == 35)
        let expectedAccepted: Set<String> = [
            "i_number_double_huge_neg_exp.json", "i_number_huge_exp.json", "i_number_neg_int_huge_exp.json",
            "i_number_pos_double_huge_exp.json", "i_number_real_neg_overflow.json", "i_number_real_pos_overflow.json",
            "i_number_real_underflow.json", "i_number_too_big_neg_int.json", "i_number_too_big_pos_int.json",
            "i_number_very_big_negative_int.json", "i_string_UTF-16LE_with_BOM.json", "i_string_utf16BE_no_BOM.json",
            "i_string_utf16LE_no_BOM.json", "i_structure_500_nested_arrays.json",
            "i_structure_UTF-8_BOM_empty_object.json",
        ]
        var report: [String] = []
        var accepted: Set<String> = []
        for file in files {
            let name = file.lastPathComponent
            switch Self.transcode(try Corpora.bytes(file)) {
            case .success(let output):
                accepted.insert(name)
                let text = String(decoding: output.prefix(40), as: UTF8.self)
                report.append("accept \(name) → \(text)\(output.count > 40 ? "…" : "")")
            case .failure(let error):
                report.append("reject \(name): \(error)")
            }
        }
        print("JSONTestSuite i_ outcomes:\n" + report.joined(separator: "\n"))
        #expect(accepted == expectedAccepted, "i_ outcomes changed:\n\(report.joined(separator: "\n"))")
    }

    @Test func utf16IFilesDecodeToTheirText() throws {
        let names = ["i_string_UTF-16LE_with_BOM.json", "i_string_utf16BE_no_BOM.json", "i_string_utf16LE_no_BOM.json"]
        for name in names {
            let input = try Corpora.bytes(Corpora.url(Self.parsing).appendingPathComponent(name))
            let output = try Self.transcode(input).get()
            #expect(String(decoding: output, as: UTF8.self) == "[\"é\"]", "\(name)")
        }
    }

    /// test_transform holds valid documents whose value is ambiguous; we only need a stable, crash-free answer.
    @Test func transformFilesAreStable() throws {
        var failures: [String] = []
        for file in try Corpora.files(in: "json/JSONTestSuite/test_transform", suffix: ".json") {
            let input = try Corpora.bytes(file)
            guard case .success(let output) = Self.transcode(input, options: .init(stripNulls: false)) else { continue }
            let minified = input.filter { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
            if case .success(let again) = Self.transcode(output), again != output {
                failures.append("\(file.lastPathComponent): unstable")
            }
            // None of these has whitespace inside strings, escapes that change, or nulls, so output = input minified.
            let hasEscapes = input.contains(UInt8(ascii: "\\"))
            if !hasEscapes && output != minified {
                failures.append("\(file.lastPathComponent): not the input minified")
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    // MARK: nativejson-benchmark

    @Test func jsonChecker() throws {
        var failures: [String] = []
        for file in try Corpora.files(in: "\(Self.native)/jsonchecker", suffix: ".json") {
            let name = file.lastPathComponent
            // fail01 (a top-level string) and fail18 (20 levels) only break JSON_checker's own, older rules;
            // both are valid RFC 8259 texts.
            let mustAccept = name.hasPrefix("pass") || name.hasSuffix("_EXCLUDE.json")
            let result = Self.transcode(try Corpora.bytes(file))
            switch (mustAccept, result) {
            case (true, .failure(let error)): failures.append("\(name) rejected: \(error)")
            case (false, .success): failures.append("\(name) accepted")
            default: break
            }
        }
        #expect(failures.count == 0, "jsonchecker mismatches:\n\(failures.joined(separator: "\n"))")
    }

    @Test func jsonCheckerPassFilesKeepTheirValue() throws {
        var failures: [String] = []
        for file in try Self.files("\(Self.native)/jsonchecker", prefix: "pass") {
            let input = try Corpora.bytes(file)
            for stripNulls in [true, false] {
                guard case .success(let output) = Self.transcode(input, options: .init(stripNulls: stripNulls)) else {
                    failures.append("\(file.lastPathComponent) rejected")
                    continue
                }
                if let problem = Self.checkOutput(input: input, output: output, stripNulls: stripNulls) {
                    failures.append("\(file.lastPathComponent) stripNulls=\(stripNulls): \(problem)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// The roundtrip files are tiny minified documents (`[null]`, `[-0.0]`, `[5e-324]`, `{"a":null,"foo":"bar"}`…):
    /// with nulls kept, the output must be the input byte for byte; with nulls stripped, the input minus its nulls.
    @Test func roundtripFilesComeBackUnchanged() throws {
        let files = try Corpora.files(in: "\(Self.native)/roundtrip", suffix: ".json")
        #expect(files.count == 27)
        var failures: [String] = []
        for file in files {
            let input = try Corpora.bytes(file)
            let name = file.lastPathComponent
            switch Self.transcode(input, options: .init(stripNulls: false)) {
            case .success(let output) where output == input: break
            case .success(let output): failures.append("\(name): \(String(decoding: output, as: UTF8.self))")
            case .failure(let error): failures.append("\(name): \(error)")
            }
        }
        #expect(failures.isEmpty, "roundtrip mismatches:\n\(failures.joined(separator: "\n"))")
        let stripped = try files.map { file in
            try Self.transcode(Corpora.bytes(file)).get()
        }
        #expect(String(decoding: stripped[0], as: UTF8.self) == "[]") // roundtrip01: [null]
        #expect(String(decoding: stripped[9], as: UTF8.self) == #"{"foo":"bar"}"#) // roundtrip10
    }

    @Test(arguments: ["canada.json", "citm_catalog.json", "twitter.json"])
    func acceptsLargeDocuments(name: String) throws {
        let input = try Corpora.bytes(Corpora.url(Self.native).appendingPathComponent(name))
        for stripNulls in [true, false] {
            let output = try Self.transcode(input, options: .init(stripNulls: stripNulls)).get()
            #expect(output.count < input.count)
            let problem = Self.checkOutput(input: input, output: output, stripNulls: stripNulls)
            #expect(problem == nil, "\(name) stripNulls=\(stripNulls): \(problem ?? "")")
        }
    }
}

/// A JSON value as JSONSerialization gives it, comparable without Foundation's bridging rules: numbers by their
/// NSNumber value, strings by their Unicode scalars (Swift `String ==` would equate NFC and NFD).
private indirect enum JSONValue: Equatable {
    case null
    case bool(Bool)
    case number(NSNumber)
    case string([Unicode.Scalar])
    case array([JSONValue])
    case object([String: JSONValue])

    init(_ any: Any) {
        switch any {
        case is NSNull: self = .null
        case let string as String: self = .string(Array(string.unicodeScalars))
        case let array as [Any]: self = .array(array.map(JSONValue.init))
        case let object as [String: Any]: self = .object(object.mapValues(JSONValue.init))
        case let number as NSNumber:
            // JSONSerialization on Linux gives Bool for true/false; anything else numeric is a number.
            if let bool = any as? Bool, type(of: any) == Bool.self {
                self = .bool(bool)
            } else {
                self = .number(number)
            }
        default: self = .string(Array("\(any)".unicodeScalars))
        }
    }

    func strippingNulls() -> JSONValue {
        switch self {
        case .array(let elements):
            return .array(elements.filter { $0 != .null }.map { $0.strippingNulls() })
        case .object(let members):
            return .object(members.filter { $0.value != .null }.mapValues { $0.strippingNulls() })
        default:
            return self
        }
    }

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a.isEqual(to: b) || (a.doubleValue.isNaN && b.doubleValue.isNaN)
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }
}

import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// What the plist decoder gave for one body.
struct PlistOutcome {
    var value: String?
    var error: RecordError?
}

/// Runs the plist decoder on `body` and checks that a failure leaves the output buffer as it was.
func decodePlist(_ body: [UInt8], configure: (inout Configuration) -> Void = { _ in }) -> PlistOutcome {
    var configuration = Configuration()
    configure(&configuration)
    var context = DecodingContext(mimeType: "application/x-plist", options: configuration.decoding.options)
    let out = OutputBuffer()
    out.append(ascii: "prefix")
    do {
        let wrote = try body.withUnsafeBufferPointer { try PlistBodyDecoder().decode($0, context: &context, into: out) }
        return PlistOutcome(value: wrote ? String(decoding: out.bytes[6...], as: UTF8.self) : nil, error: nil)
    } catch {
        #expect(out.count == 6, "a failed decode must leave the output as it was")
        #expect(error is RecordError)
        return PlistOutcome(value: nil, error: error as? RecordError)
    }
}

/// The property-list corpora of `../shared/corpora/plist`, against their projects' own verdicts and against the values
/// Python's plistlib reads from the same files (mapped to JSON as docs/output.md#the-result-line says: dates as ISO
/// 8601 UTC strings, data as
/// `{"base64":…}`, UIDs as `{"CF$UID":n}`, non-finite reals as strings).
@Suite("Property list conformance")
struct PlistConformanceTests {
    /// Files the corpora's projects say must be rejected (their PROVENANCE.md files). Whole folders end in `/`.
    static let mustReject: Set<String> = [
        "dd-plist/github-issue42.plist", "dd-plist/github-issue72.plist", "dd-plist/github-issue73-2.plist",
        "dd-plist/github-issue73-3.plist", "dd-plist/github-issue73-4.plist", "dd-plist/github-issue73-6.plist",
        "dd-plist/github-issue74/", "dd-plist/github-issue75/", "dd-plist/github-issue76-xml.plist",
        "dd-plist/github-issue78.plist", "dd-plist/github-issue82/",
        "libplist/test-data/amp.plist", "libplist/test-data/invalid_tag.plist",
        "libplist/test-data/malformed_dict.bplist", "libplist/test-data/recursion.bplist",
    ]

    /// dd-plist's OpenStep/GNUstep text plists that are valid in that format: accepted (their values are checked in
    /// OpenStepPlistReaderTests). `github-issue88.plist` (`"Worl\d"`) is here although dd-plist rejects it: Foundation
    /// reads an unknown escape as the character itself, and we follow Foundation (docs/decoding.md#openstep-property-lists).
    static let openStep: Set<String> = [
        "dd-plist/github-issue88.plist", "dd-plist/issue49.plist",
        "dd-plist/test-ascii.plist", "dd-plist/test1-ascii-gnustep-base64.plist",
        "dd-plist/test1-ascii-gnustep.plist", "dd-plist/test1-ascii-multiline-handling.plist",
        "dd-plist/test1-ascii.plist",
    ]

    /// dd-plist's malformed OpenStep plists: rejected as `invalidPropertyList`. (`github-issue73-5.plist` is an
    /// unterminated `/*` comment, which Foundation reads as an empty table and we reject.) Also the `test-ascii-utf-*`
    /// files, which dd-plist reads but Foundation rejects, and so do we: each has an unquoted string of non-ASCII
    /// letters (`クオート無し`), outside the unquoted character set (OpenStepPlistReaderTests checks the error is there).
    static let openStepMalformed: Set<String> = [
        "dd-plist/github-issue73-1.plist", "dd-plist/github-issue73-5.plist", "dd-plist/github-issue76.plist",
        "dd-plist/test-ascii-utf-16be.plist", "dd-plist/test-ascii-utf-16le.plist",
        "dd-plist/test-ascii-utf-32be.plist", "dd-plist/test-ascii-utf-32le.plist", "dd-plist/test-ascii-utf-8.plist",
    ]

    /// OpenStep plists, `.strings` tables and GNUstep's `<*I…>` typed values: each file gives its `expected/` value, or
    /// gnustep-base's `cases.jsonl` outcome (checked in `openStepFoldersGiveTheirExpectedValues`).
    static let openStepFolders = ["gnustep-base/", "libplist-openstep/", "sparkle-strings/"]

    /// Fuzzer finds: any verdict, but never a crash or a hang.
    static let fuzzFolders = [
        "libplist/fuzz-bplist-crashes/", "libplist/fuzz-xplist-crashes/", "libplist/fuzz-xplist-leaks/",
    ]

    static func isData(_ path: String) -> Bool {
        let name = (path as NSString).lastPathComponent
        return
            !(name.hasPrefix("LICENSE") || name.hasPrefix("COPYING") || name == "PROVENANCE.md"
            || name == "MANIFEST.observed.jsonl" || name == "cases.jsonl" || path.contains("/expected/"))
    }

    static func matches(_ path: String, _ set: Set<String>) -> Bool {
        set.contains(path) || set.contains { $0.hasSuffix("/") && path.hasPrefix($0) }
    }

    /// Every data file under the plist corpora, relative to `corpora/plist`.
    static func corpusFiles() -> [String] {
        Corpora.allFiles(under: "plist").filter(isData)
    }

    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func everyFileGetsTheProjectsVerdict() throws {
        var accepted = 0
        var rejected = 0
        var openStepAccepted = 0
        var failures: [String] = []
        for path in Self.corpusFiles() {
            let outcome = decodePlist(try Corpora.bytes("plist/" + path))
            if Self.matches(path, Self.mustReject) {
                if outcome.value != nil { failures.append("\(path): accepted, must be rejected") }
                rejected += 1
            } else if Self.matches(path, Self.openStep) {
                if outcome.value == nil { failures.append("\(path): rejected: \(outcome.error?.description ?? "-")") }
                openStepAccepted += 1
            } else if Self.matches(path, Self.openStepMalformed) {
                if outcome.error?.code != .invalidPropertyList {
                    failures.append(
                        "\(path): \(outcome.error?.code.description ?? "accepted"), want invalidPropertyList")
                }
                rejected += 1
            } else if Self.openStepFolders.contains(where: path.hasPrefix) {
                continue // checked in openStepFoldersGiveTheirExpectedValues
            } else if Self.fuzzFolders.contains(where: path.hasPrefix) {
                continue // decoded above without crashing; checked further in fuzzFilesNeverCrash
            } else {
                if outcome.value == nil { failures.append("\(path): rejected: \(outcome.error?.description ?? "-")") }
                accepted += 1
            }
        }
        print(
            "plist corpora: \(accepted) accepted, \(rejected) must-reject rejected, \(openStepAccepted) OpenStep accepted"
        )
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        // Floors, so that a corpus that went missing cannot pass quietly.
        #expect(accepted >= 80, "accepted \(accepted)")
        #expect(rejected >= 20, "rejected \(rejected)")
        #expect(openStepAccepted == Self.openStep.count)
    }

    /// libplist-openstep and sparkle-strings: exactly the value of `expected/<file>.json` (Foundation's, keys sorted
    /// there: compared as JSON values). gnustep-base: `cases.jsonl`'s outcome, and for accepted cases its value with
    /// its type (GNUstep's typed values are integers, reals and dates here, docs/output.md#plist).
    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func openStepFoldersGiveTheirExpectedValues() throws {
        var compared = 0
        var failures: [String] = []
        for folder in ["libplist-openstep", "sparkle-strings"] {
            for path in Self.corpusFiles() where path.hasPrefix(folder + "/") {
                let name = (path as NSString).lastPathComponent
                let expectedData = try Data(contentsOf: Corpora.url("plist/\(folder)/expected/\(name).json"))
                let expected = try JSONSerialization.jsonObject(with: expectedData, options: [.fragmentsAllowed])
                guard let ours = decodePlist(try Corpora.bytes("plist/" + path)).value else {
                    failures.append("\(path): rejected")
                    continue
                }
                let oursObject = try JSONSerialization.jsonObject(with: Data(ours.utf8), options: [.fragmentsAllowed])
                if !PlistlibReference.equal(oursObject, expected) { failures.append("\(path): \(ours.prefix(300))") }
                compared += 1
            }
        }
        let cases = try Data(contentsOf: Corpora.url("plist/gnustep-base/cases/cases.jsonl"))
        for line in cases.split(separator: UInt8(ascii: "\n")) {
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let file = try #require(entry["file"] as? String)
            let outcome = decodePlist(try Corpora.bytes("plist/gnustep-base/cases/" + file))
            if entry["outcome"] as? String == "reject" {
                if outcome.error?.code != .invalidPropertyList {
                    failures.append("\(file): \(outcome.value ?? outcome.error?.description ?? "-"), want a rejection")
                }
            } else {
                let want: String
                switch entry["type"] as? String {
                case "integer": want = "\(try #require(entry["value"] as? Int))"
                case "real": want = "\(try #require(entry["value"] as? Double))"
                case "date": want = "\"\(try #require(entry["value"] as? String))\""
                case "data":
                    let hex = try #require(entry["value_hex"] as? String)
                    var bytes: [UInt8] = []
                    var index = hex.startIndex
                    while index < hex.endIndex {
                        let next = hex.index(index, offsetBy: 2)
                        bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
                        index = next
                    }
                    want = "{\"base64\":\"\(Data(bytes).base64EncodedString())\"}"
                default: throw RecordError(.invalidJSON, "unknown type in cases.jsonl")
                }
                if outcome.value != want { failures.append("\(file): \(outcome.value ?? "rejected"), want \(want)") }
            }
            compared += 1
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(compared >= 16, "compared \(compared)")
    }

    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func fuzzFilesNeverCrashOrHang() throws {
        var count = 0
        for path in Self.corpusFiles() where Self.fuzzFolders.contains(where: path.hasPrefix) {
            let started = ContinuousClock.now
            let body = try Corpora.bytes("plist/" + path)
            let outcome = decodePlist(body)
            #expect(ContinuousClock.now - started < .seconds(1), "\(path) took too long")
            if body.isEmpty { // one of them is empty: no content, so no value and no error
                #expect(outcome.value == nil && outcome.error == nil)
                continue
            }
            // libplist's rule for them is only "never crash" (plistlib reads three of them); a non-empty body gives a
            // value or an error, and a failure leaves the output as it was (checked in decodePlist).
            #expect(outcome.value != nil || outcome.error != nil, "\(path): neither value nor error")
            count += 1
        }
        #expect(count >= 40)
    }

    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func valuesEqualPlistlibs() throws {
        let accepted = Self.corpusFiles().filter {
            !Self.matches($0, Self.mustReject) && !Self.matches($0, Self.openStep)
                && !Self.matches($0, Self.openStepMalformed) && !Self.fuzzFolders.contains(where: $0.hasPrefix)
                && !Self.openStepFolders.contains(where: $0.hasPrefix)
        }
        let expected = try PlistlibReference.values(of: accepted.map { Corpora.url("plist/" + $0).path })
        var compared = 0
        var mismatches: [String] = []
        for path in accepted {
            let fullPath = Corpora.url("plist/" + path).path
            guard let reference = expected[fullPath] else { continue } // plistlib cannot read it; we must, see above
            let ours = try #require(decodePlist(try Corpora.bytes("plist/" + path)).value, "\(path)")
            let oursObject = try JSONSerialization.jsonObject(with: Data(ours.utf8), options: [.fragmentsAllowed])
            if !PlistlibReference.equal(oursObject, reference) {
                mismatches.append("\(path):\n  ours     \(ours.prefix(300))\n  plistlib \(reference)")
            }
            compared += 1
        }
        print("plist corpora: \(compared) values compared with plistlib")
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        #expect(compared >= 80, "compared \(compared)")
    }
}

/// Python's plistlib as the reference reader: one `python3` process reads every file and prints, per file, the value
/// mapped to JSON as docs/output.md#the-result-line maps plists.
enum PlistlibReference {
    static let script = #"""
        import base64, datetime, json, math, plistlib, sys

        def convert(value, depth=0):
            if depth > 600:
                raise ValueError("too deep")
            if isinstance(value, bool):
                return value
            if isinstance(value, int):
                return value
            if isinstance(value, float):
                if math.isnan(value):
                    return "NaN"
                if math.isinf(value):
                    return "Infinity" if value > 0 else "-Infinity"
                return value
            if isinstance(value, str):
                return value
            if isinstance(value, bytes):
                return {"base64": base64.b64encode(value).decode()}
            if isinstance(value, datetime.datetime):
                text = value.strftime("%Y-%m-%dT%H:%M:%S")
                if value.microsecond:
                    text += ("." + "%06d" % value.microsecond).rstrip("0")
                return text + "Z"
            if isinstance(value, plistlib.UID):
                return {"CF$UID": value.data}
            if isinstance(value, dict):
                return {k: convert(v, depth + 1) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [convert(v, depth + 1) for v in value]
            raise ValueError("unexpected %r" % type(value))

        for path in sys.stdin.read().split("\n"):
            if not path:
                continue
            try:
                with open(path, "rb") as f:
                    value = convert(plistlib.load(f))
                print(json.dumps({"path": path, "value": value}))
            except Exception:
                print(json.dumps({"path": path, "error": True}))
        """#

    /// plistlib's value for each path it can read.
    static func values(of paths: [String]) throws -> [String: Any] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        do { try process.run() } catch {
            Issue.record("python3 is needed for the plistlib comparison (apt-get install python3): \(error)")
            throw error
        }
        input.fileHandleForWriting.write(Data(paths.joined(separator: "\n").utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "python3 exited \(process.terminationStatus)")
        var result: [String: Any] = [:]
        for line in data.split(separator: UInt8(ascii: "\n")) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let path = try #require(object["path"] as? String)
            if let value = object["value"] { result[path] = value }
        }
        #expect(!result.isEmpty, "plistlib read nothing")
        return result
    }

    /// Structural equality of two JSONSerialization values; numbers compare by value (plistlib's 1.0 equals our
    /// `1.0`), and a boolean never equals a number.
    static func equal(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case (let x as [String: Any], let y as [String: Any]):
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { equal(value, $0) } ?? false }
        case (let x as [Any], let y as [Any]):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (let x as String, let y as String):
            return x == y
        case (let x as NSNumber, let y as NSNumber):
            // JSONSerialization gives booleans as NSNumbers of type `c`, integers as `i`/`q`/`Q`, reals as `d`.
            let xIsBool = String(cString: x.objCType) == "c"
            let yIsBool = String(cString: y.objCType) == "c"
            return xIsBool == yIsBool && x == y
        case (is NSNull, is NSNull):
            return true
        default:
            return false
        }
    }
}

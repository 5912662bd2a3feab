import CLibXML2
import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The xml decoder against the shared third-party corpora: the W3C XML Conformance Test Suite (2013-09-23) and
/// libxml2's own regression inputs.
///
/// The decoder is libxml2 2.9.x (SAX2, entities substituted, external entities and DTDs never read, our own depth
/// limit and entity-expansion cap), so the rule is differential: **our verdict must be the expected one wherever
/// libxml2's `xmllint --noout --nonet` gives the expected one.** Where the expectation (the suite's `TYPE`, or what
/// libxml2's upstream tests expect) and libxml2 2.9.14 disagree, any verdict is allowed and the case is listed in the
/// printed summary; where xmllint gives the expected verdict and we do not, the test fails — unless the case is one
/// of the few deliberate departures (``w3cDepartures``, ``libxml2Departures``).
///
/// The W3C suite is unzipped into a temporary folder at test time (its licence allows only the unmodified archive to
/// be kept), so `unzip` is needed, and `xmllint` (Debian: libxml2-utils, built on the same libxml2) to judge the
/// differences. The libxml2 corpus carries xmllint 2.9.14's verdicts in `MANIFEST.observed.jsonl`.
@Suite("XML conformance", .enabled(if: Corpora.available, Corpora.skipComment))
struct XMLConformanceTests {
    // MARK: Deliberate departures

    // Cases where xmllint gives the expected verdict and we do not, on purpose, with the reason. Each must still be
    // hit, so that the lists cannot go stale.

    /// W3C test IDs.
    static let w3cDepartures: [String: String] = [
        "not-wf-sa-050": noContent,
        "o-p39fail3": noContent,
    ]
    /// Paths below `xml/libxml2/test/`.
    static let libxml2Departures: [String: String] = [
        "errors/empty.xml": noContent
    ]
    private static let noContent =
        "empty body: the text decoders give no value and no error for it (docs/decoding.md#empty-bodies), before libxml2 sees it"

    // MARK: W3C XML Conformance Test Suite

    /// Every `TEST` of every per-contributor catalogue that `xmlconf/xmlconf.xml` includes, decoded and compared with
    /// its `TYPE`: `not-wf` must be rejected; `valid` and `invalid` accepted (we do not validate); `error` may go
    /// either way (it is only checked not to crash). A difference from `TYPE` is allowed where xmllint, run in the
    /// file's folder, differs in the same way ("suite vs libxml2 2.9.14": XML 1.1 documents, 5th-edition name
    /// characters, errors inside external entities and DTDs that neither reads, namespace errors libxml2 only warns
    /// about).
    @Test func w3cSuite() throws {
        let version = try XMLLint.checkSameLibrary()
        let root = try Archive.extract(Corpora.url("xml/w3c-xmlts/xmlts20130923.zip"))
        defer { try? FileManager.default.removeItem(at: root) }
        let xmlconf = root.appendingPathComponent("xmlconf")
        let catalogues = try W3CCatalogue.listed(in: xmlconf.appendingPathComponent("xmlconf.xml"))
        #expect(catalogues.count == 21, "catalogues listed in xmlconf.xml: \(catalogues.map(\.relativeString))")

        var tally = Tally(reference: "suite", libxml2: "xmllint \(version)", departures: Self.w3cDepartures)
        for catalogue in catalogues {
            for test in try W3CCatalogue.tests(in: catalogue) {
                let notes = test.notes.isEmpty ? "" : "; \(test.notes)"
                let label = "\(test.id) (\(relativePath(test.file, under: xmlconf))\(notes))"
                guard let bytes = try? Corpora.bytes(test.file) else {
                    tally.failures.append("\(label): file missing")
                    continue
                }
                let expected: Verdict? =
                    switch test.type {
                    case "not-wf": .rejected
                    case "valid", "invalid": .accepted
                    default: nil
                    }
                tally.record(
                    key: test.id, group: test.type, label: label, ours: Outcome(decoding: bytes),
                    expected: expected, xmllint: { XMLLint.run(test.file) })
            }
        }
        print(tally.summary(title: "W3C XMLTS 20130923 (\(catalogues.count) catalogues)"))
        tally.expectNoFailures()
        #expect(tally.examined >= 2_500, "too few W3C cases examined")
        #expect(tally.agreements >= 2_050, "too few W3C cases with the expected verdict")
        tally.expectDeparturesHit(Self.w3cDepartures.keys)
    }

    // MARK: libxml2 regression inputs

    private static let libxml2 = "xml/libxml2"

    /// `test/<name>` (not `.ent`/`.dtd`): the documents of libxml2's parser regression tests, all well-formed.
    @Test func libxml2Documents() throws {
        let files = try Corpora.files(in: "\(Self.libxml2)/test").filter { file in
            !file.hasDirectoryPath && !["ent", "dtd"].contains(file.pathExtension)
        }
        #expect(files.count >= 125)
        let tally = try Self.libxml2Tally(files, in: "") { _ in .accepted }
        print(tally.summary(title: "libxml2 test/*"))
        tally.expectNoFailures()
        tally.expectDeparturesHit(Self.libxml2Departures.keys.filter { !$0.contains("/") })
        #expect(tally.agreements >= 125)
    }

    /// `test/errors/*.xml`: not well-formed (must be rejected) unless upstream keeps a `result/errors/<name>`
    /// output, i.e. the errors are recoverable (must be accepted).
    @Test func libxml2ErrorCases() throws {
        try checkAgainstUpstream(folder: "errors", prefix: "", minimumCount: 45)
    }

    /// `test/namespaces/err_*.xml`: namespace errors, recoverable (accepted) where upstream keeps
    /// `result/namespaces/<name>`, fatal otherwise.
    @Test func libxml2NamespaceErrors() throws {
        try checkAgainstUpstream(folder: "namespaces", prefix: "err_", minimumCount: 12)
    }

    private func checkAgainstUpstream(folder: String, prefix: String, minimumCount: Int) throws {
        let files = try Corpora.files(in: "\(Self.libxml2)/test/\(folder)", suffix: ".xml")
            .filter { $0.lastPathComponent.hasPrefix(prefix) }
        #expect(files.count >= minimumCount)
        let tally = try Self.libxml2Tally(files, in: "\(folder)/") { name in
            let result = Corpora.url("\(Self.libxml2)/result/\(folder)/\(name)")
            return FileManager.default.fileExists(atPath: result.path) ? .accepted : .rejected
        }
        print(tally.summary(title: "libxml2 test/\(folder)/\(prefix)*.xml"))
        tally.expectNoFailures()
        #expect(tally.agreements >= minimumCount / 2)
        tally.expectDeparturesHit(Self.libxml2Departures.keys.filter { $0.hasPrefix("\(folder)/") })
    }

    /// Decodes `files` and compares each with `expected(name)` and xmllint 2.9.14's verdict from the manifest.
    private static func libxml2Tally(
        _ files: [URL], in folder: String, expected: (String) -> Verdict
    ) throws -> Tally {
        let manifest = try Manifest.load(Corpora.url("\(libxml2)/MANIFEST.observed.jsonl"))
        var tally = Tally(
            reference: "upstream", libxml2: "xmllint 2.9.14 (manifest)", departures: libxml2Departures)
        for file in files {
            let key = folder + file.lastPathComponent
            guard let lint = manifest[key] else {
                tally.failures.append("\(key): not in MANIFEST.observed.jsonl")
                continue
            }
            tally.record(
                key: key, group: folder.isEmpty ? "documents" : folder, label: key,
                ours: Outcome(decoding: try Corpora.bytes(file)), expected: expected(file.lastPathComponent),
                xmllint: { lint })
        }
        return tally
    }

    /// `test/recurse/`: every `lol*.xml` (billion laughs in content, attributes, parameter entities, external
    /// entities, long names and values) must give an error or a value no larger than the entity-expansion cap, in
    /// under a second; `good*.xml` (heavy but legitimate entity use) must be accepted. `huge_dtd.xml` is left out: it
    /// needs `huge_dtd.dtd`, which libxml2's test program generates.
    @Test func libxml2EntityExpansion() throws {
        let files = try Corpora.files(in: "\(Self.libxml2)/test/recurse", suffix: ".xml")
        let attacks = files.filter { $0.lastPathComponent.hasPrefix("lol") }
        #expect(attacks.count >= 10)
        var report: [String] = []
        for file in attacks {
            let bytes = try Corpora.bytes(file)
            let start = ContinuousClock.now
            let outcome = Outcome(decoding: bytes)
            let elapsed = ContinuousClock.now - start
            let cap = LibXML2.maxEntityExpansion(forBodyBytes: bytes.count)
            let size = outcome.value?.count ?? 0
            report.append("\(file.lastPathComponent): \(outcome.text), \(size) bytes, \(elapsed)")
            #expect(elapsed < .seconds(1), "\(file.lastPathComponent) took \(elapsed)")
            #expect(size <= cap, "\(file.lastPathComponent) expanded to \(size) bytes (cap \(cap))")
        }
        let good = files.filter { $0.lastPathComponent.hasPrefix("good") }
        #expect(good.count == 2)
        let tally = try Self.libxml2Tally(good, in: "recurse/") { _ in .accepted }
        print("libxml2 test/recurse/lol*.xml:\n  " + report.joined(separator: "\n  "))
        print(tally.summary(title: "libxml2 test/recurse/good*.xml"))
        tally.expectNoFailures()
        #expect(tally.agreements == good.count)
    }

    // MARK: Canonical form of James Clark's valid documents

    /// `xmltest/valid/sa/*.xml` against their canonical form in `out/`, rebuilt from our JSON (whitespace kept):
    /// `<name a="v">children</name>`, attributes sorted, `&amp; &lt; &gt; &quot; &#9; &#10; &#13;` escaped. Files
    /// whose canonical form has a processing instruction or a `DOCTYPE` (notations) are left out: the JSON tree has
    /// neither. Differences are allowed only in ``canonicalFormDifferences``.
    @Test func jamesClarkCanonicalForms() throws {
        let root = try Archive.extract(
            Corpora.url("xml/w3c-xmlts/xmlts20130923.zip"), only: ["xmlconf/xmltest/valid/sa/*"])
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("xmlconf/xmltest/valid/sa")
        var compared = 0
        var matched = 0
        var differences: [String: String] = [:]
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".xml") }
        for name in names.sorted() {
            let canonical = try Corpora.bytes(folder.appendingPathComponent("out/\(name)"))
            let text = String(decoding: canonical, as: UTF8.self)
            if text.contains("<?") || text.contains("<!DOCTYPE") { continue }
            compared += 1
            let document = try Corpora.bytes(folder.appendingPathComponent(name))
            let outcome = Outcome(decoding: document, keepWhitespace: true)
            let ours = try outcome.value.map { try Canonical.form(ofJSON: $0) } ?? outcome.text
            if Array(ours.utf8) == canonical {
                matched += 1
            } else {
                differences[name] = "ours \(ours.debugDescription), out/ \(text.debugDescription)"
            }
        }
        print(
            "xmltest/valid/sa canonical forms: \(matched) of \(compared) match; differences:\n  "
                + differences.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n  "))
        let unexpected = differences.filter { Self.canonicalFormDifferences[$0.key] == nil }
        #expect(unexpected.isEmpty, "canonical forms that differ: \(unexpected)")
        #expect(compared >= 105 && matched >= 105)
    }

    /// Known differences from the canonical forms, both libxml2 2.9.14's behaviour.
    static let canonicalFormDifferences: [String: String] = [
        "068.xml": "`<!ENTITY e \"&#13;\">`: the CR the reference puts in the replacement text comes out as LF; "
            + "libxml2 applies end-of-line handling when it parses entity content (`xmllint --noent` does the same)",
        "097.xml": "the default of an ATTLIST after a reference to an unread external parameter entity is applied; "
            + "XML 1.0 §5.1 says a processor that does not read the entity must not process later declarations",
    ]
}

// MARK: - Verdicts

private enum Verdict: String {
    case accepted, rejected
}

/// What our decoder made of one document.
private struct Outcome {
    var verdict: Verdict
    /// The error, when rejected.
    var error: RecordError?
    /// The JSON value, when accepted (nil for "no content").
    var value: [UInt8]?

    init(decoding bytes: [UInt8], keepWhitespace: Bool = false) {
        let out = OutputBuffer()
        var context = DecodingContext(
            mimeType: "application/xml",
            options: {
                var options = DecoderOptions()
                options.xmlKeepWhitespace = keepWhitespace
                return options
            }())
        do throws(RecordError) {
            let produced = try bytes.withUnsafeBufferPointer { body throws(RecordError) in
                try XMLBodyDecoder().decode(body, context: &context, into: out)
            }
            verdict = .accepted
            value = produced ? out.array : nil
        } catch {
            verdict = .rejected
            self.error = error
        }
    }

    var text: String {
        switch verdict {
        case .accepted: value == nil ? "accepted (no content)" : "accepted"
        case .rejected: "rejected (\(error.map { "\($0.code): \(shortened($0.message))" } ?? ""))"
        }
    }
}

/// Outcomes of one corpus, by group (the W3C `TYPE`, or a libxml2 folder), with the cases worth listing.
private struct Tally {
    /// Whose expectation is compared with libxml2's: "suite" or "upstream".
    var reference: String
    /// Which xmllint judged the differences.
    var libxml2: String
    /// The deliberate departures that apply.
    var departures: [String: String]
    var examined = 0
    /// Cases that got the expected verdict.
    var agreements = 0
    /// Per group: outcome → count.
    var counts: [String: [String: Int]] = [:]
    /// Differ from the expectation as xmllint does.
    var asLibxml2: [String] = []
    var departed: [String] = []
    var departureKeys: Set<String> = []
    var failures: [String] = []

    /// Counts one case; xmllint is asked only when our verdict is not the expected one.
    mutating func record(
        key: String, group: String, label: String, ours: Outcome, expected: Verdict?,
        xmllint: () -> XMLLint.Answer
    ) {
        examined += 1
        let outcome: String
        if let expected, ours.verdict != expected {
            let lint = xmllint()
            if lint.verdict != expected {
                outcome = "\(reference) vs libxml2"
                asLibxml2.append("\(label): we \(ours.text); xmllint \(lint.text)")
            } else if let reason = departures[key] {
                outcome = "departure"
                departed.append("\(label): we \(ours.text) — \(reason)")
                departureKeys.insert(key)
            } else {
                outcome = "FAILURE"
                failures.append("\(label): we \(ours.text); xmllint \(lint.text)")
            }
        } else if expected != nil {
            outcome = "as expected"
            agreements += 1
        } else {
            outcome = ours.verdict.rawValue
        }
        counts[group, default: [:]][outcome, default: 0] += 1
    }

    func summary(title: String) -> String {
        var lines = ["\(title): \(examined) cases, \(agreements) with the expected verdict"]
        for group in counts.keys.sorted() {
            let parts = counts[group, default: [:]].sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            lines.append("  \(group): " + parts.joined(separator: ", "))
        }
        let lists = [
            ("\(reference) vs \(libxml2) (allowed: xmllint differs from the \(reference) in the same way)", asLibxml2),
            ("deliberate departures", departed), ("FAILURES", failures),
        ]
        for (name, list) in lists where !list.isEmpty {
            lines.append("\(name), \(list.count):")
            lines += list.map { "  " + $0 }
        }
        return lines.joined(separator: "\n")
    }

    func expectNoFailures(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            failures.isEmpty,
            "verdicts that differ where \(libxml2) gives the expected one:\n\(failures.joined(separator: "\n"))",
            sourceLocation: sourceLocation)
    }

    /// Every departure in `keys` was needed in this run.
    func expectDeparturesHit(_ keys: some Sequence<String>, sourceLocation: SourceLocation = #_sourceLocation) {
        let stale = Set(keys).subtracting(departureKeys)
        #expect(stale.isEmpty, "departures no longer needed: remove \(stale.sorted())", sourceLocation: sourceLocation)
    }
}

private func shortened(_ text: String) -> String {
    text.count > 120 ? text.prefix(120) + "…" : text
}

private func relativePath(_ file: URL, under folder: URL) -> String {
    let path = file.standardizedFileURL.path
    let base = folder.standardizedFileURL.path + "/"
    return path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
}

// MARK: - Tools

private struct ToolFailure: Error, CustomStringConvertible {
    var description: String
}

/// Command-line tools found on `PATH`.
private enum Tool {
    static func find(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs `tool` with `arguments` in `directory`; returns its exit status and what it wrote to standard error.
    static func run(_ tool: URL, _ arguments: [String], in directory: URL? = nil) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

private enum Archive {
    /// Unzips `zip` (or only the members matching `only`) into a new temporary folder, and returns the folder.
    static func extract(_ zip: URL, only members: [String] = []) throws -> URL {
        guard let unzip = Tool.find("unzip") else {
            throw ToolFailure(description: "unzip is not installed (apt-get install unzip): the W3C suite needs it")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("respdecode-xmlts-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let (status, errors) = try Tool.run(unzip, ["-q", zip.path] + members + ["-d", dir.path])
        guard status == 0 else {
            try? FileManager.default.removeItem(at: dir)
            throw ToolFailure(description: "unzip \(zip.lastPathComponent) failed (\(status)): \(errors)")
        }
        return dir
    }
}

/// `xmllint --noout --nonet FILE`, run in the file's folder: libxml2's own verdict with its default options.
private enum XMLLint {
    struct Answer {
        var verdict: Verdict
        var text: String
    }

    static let tool = Tool.find("xmllint")

    /// Throws unless xmllint is installed and runs on the libxml2 that the decoder uses (the differential rule means
    /// nothing otherwise); returns that version, dotted.
    static func checkSameLibrary() throws -> String {
        guard let tool else {
            throw ToolFailure(
                description: "xmllint is not installed (apt-get install libxml2-utils): it judges "
                    + "the cases where our verdict is not the suite's")
        }
        let (_, text) = try Tool.run(tool, ["--version"])
        let ours = String(cString: __xmlParserVersion().pointee!)
        guard text.contains("using libxml version \(ours)\n") else {
            throw ToolFailure(description: "xmllint does not use our libxml2 (\(ours)): \(text)")
        }
        guard let number = Int(ours) else { return ours }
        return "\(number / 10000).\(number / 100 % 100).\(number % 100)"
    }

    static func run(_ file: URL) -> Answer {
        guard let tool,
            let (status, errors) = try? Tool.run(
                tool, ["--noout", "--nonet", file.lastPathComponent], in: file.deletingLastPathComponent())
        else { return Answer(verdict: .rejected, text: "could not be run") }
        let first = shortened(errors.split(separator: "\n").first.map(String.init) ?? "")
        return status == 0
            ? Answer(verdict: .accepted, text: "accepts" + (first.isEmpty ? "" : " (\(first))"))
            : Answer(verdict: .rejected, text: "rejects (exit \(status): \(first))")
    }
}

/// `MANIFEST.observed.jsonl` of the libxml2 corpus: xmllint 2.9.14's verdict per file below `test/`.
private enum Manifest {
    static func load(_ url: URL) throws -> [String: XMLLint.Answer] {
        var answers: [String: XMLLint.Answer] = [:]
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            let entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String] ?? [:]
            guard let file = entry["file"], let verdict = entry["xmllint_default"] else { continue }
            answers[file] = XMLLint.Answer(
                verdict: verdict.hasPrefix("ok") ? .accepted : .rejected, text: shortened(verdict))
        }
        return answers
    }
}

// MARK: - W3C catalogues

private enum W3CCatalogue {
    struct Test {
        var id: String
        var type: String
        var file: URL
        /// The catalogue's hints that explain most differences: `ENTITIES`, `VERSION`, `EDITION`, `NAMESPACE`.
        var notes: String
    }

    /// The per-contributor catalogues that the master catalogue includes as external entities
    /// (`<!ENTITY name SYSTEM "path">`), in order.
    static func listed(in master: URL) throws -> [URL] {
        let text = try String(contentsOf: master, encoding: .utf8)
        let declaration = #/<!ENTITY\s+[^\s%]+\s+SYSTEM\s+"([^"]+)"\s*>/#
        return text.matches(of: declaration).compactMap { URL(string: String($0.output.1), relativeTo: master) }
    }

    /// Every `TEST` in `catalogue`, parsed with our own decoder. A catalogue is an external parsed entity (some hold
    /// several top-level `TEST`s), so its content, without a text declaration, is parsed inside one element.
    static func tests(in catalogue: URL) throws -> [Test] {
        var content = try Corpora.bytes(catalogue)[...]
        if content.starts(with: Array("<?xml ".utf8)), let end = content.firstRange(of: Array("?>".utf8)) {
            content = content[end.upperBound...]
        }
        let outcome = Outcome(decoding: Array("<catalogue>".utf8) + content + Array("</catalogue>".utf8))
        guard let value = outcome.value,
            let tree = try JSONSerialization.jsonObject(with: Data(value)) as? [String: Any]
        else { throw ToolFailure(description: "catalogue \(catalogue.relativeString) not decoded: \(outcome.text)") }
        var tests: [Test] = []
        collect(tree, base: catalogue.absoluteURL, into: &tests)
        return tests
    }

    /// Walks the JSON tree; `URI` is resolved against the catalogue, or the `xml:base` of an enclosing element.
    private static func collect(_ element: [String: Any], base: URL, into tests: inout [Test]) {
        let attributes = element["attributes"] as? [String: String] ?? [:]
        var base = base
        if let xmlBase = attributes["xml:base"], let url = URL(string: xmlBase, relativeTo: base) {
            base = url.absoluteURL
        }
        if element["name"] as? String == "TEST" {
            let uri = attributes["URI"] ?? ""
            let file =
                URL(string: uri, relativeTo: base)?.absoluteURL.standardizedFileURL
                ?? base.appendingPathComponent("unresolvable URI \(uri)")
            let notes = ["ENTITIES", "VERSION", "EDITION", "NAMESPACE"].compactMap { key in
                attributes[key].map { "\(key)=\($0)" }
            }
            tests.append(
                Test(
                    id: attributes["ID"] ?? uri, type: attributes["TYPE"] ?? "?", file: file,
                    notes: notes.joined(separator: " ")))
            return
        }
        for case let child as [String: Any] in element["children"] as? [Any] ?? [] {
            collect(child, base: base, into: &tests)
        }
    }
}

// MARK: - Canonical form

/// James Clark's canonical XML (xmltest/canonxml.html), rebuilt from our JSON tree.
private enum Canonical {
    static func form(ofJSON json: [UInt8]) throws -> String {
        var text = ""
        append(try JSONSerialization.jsonObject(with: Data(json)), to: &text)
        return text
    }

    private static func append(_ node: Any, to text: inout String) {
        if let string = node as? String { return escape(string, to: &text) }
        guard let element = node as? [String: Any], let name = element["name"] as? String else { return }
        text += "<\(name)"
        let attributes = (element["attributes"] as? [String: String] ?? [:]).sorted {
            $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars)
        }
        for (key, value) in attributes {
            text += " \(key)=\""
            escape(value, to: &text)
            text += "\""
        }
        text += ">"
        for child in element["children"] as? [Any] ?? [] { append(child, to: &text) }
        text += "</\(name)>"
    }

    private static func escape(_ string: String, to text: inout String) {
        for scalar in string.unicodeScalars {
            switch scalar {
            case "&": text += "&amp;"
            case "<": text += "&lt;"
            case ">": text += "&gt;"
            case "\"": text += "&quot;"
            case "\t": text += "&#9;"
            case "\n": text += "&#10;"
            case "\r": text += "&#13;"
            default: text.unicodeScalars.append(scalar)
            }
        }
    }
}

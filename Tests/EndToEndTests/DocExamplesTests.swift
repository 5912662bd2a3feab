import Foundation
import Testing

/// Runs the shell examples of README.md and docs/*.md and compares their output (issue 18), as jaq tests its manual.
///
/// The convention (docs/contributing.md#shell-examples-are-tests):
/// - A ```` ```console ```` block holds `$ COMMAND` lines, each followed by the exact standard output it prints. A
///   command line ending in a backslash goes on on the next line. An output line that is exactly `...` stands for
///   any number of lines (none included); use it sparingly.
/// - Each block runs in its own scratch folder holding a copy of `samples/`, with the built `respdecode` first on
///   PATH and standard input empty. Its commands run in order with `bash -c`, so a file one command writes is there
///   for the next. Each must exit 0 (show another status with `; echo "exit $?"`); standard error is not compared.
/// - An example that cannot run here (a cluster, a container engine, a tool not installed) goes in a ```` ```sh ````
///   block, and every `sh`, `bash` or `shell` block must be listed in ``exempt`` with the reason.
@Suite("Documentation examples")
struct DocExamplesTests {
    /// The `sh`/`bash` blocks that are not run, "FILE: the start of the block's first line" → why. A block missing
    /// from this list fails the test, and so does an entry that matches no block.
    static let exempt: [String: String] = [
        "README.md: bash .ci/packages && swift build": "installs packages and builds the project",
        "README.md: bash .ci/run": "is CI itself",
        "docs/clusters.md: respdecode frame crawl-*.warc.gz > records.ndjson":
            "names a crawl's files; the same commands run on samples/ in a console block",
        "docs/clusters.md: hadoop jar hadoop-streaming.jar -D mapreduce.job.reduces=0 \\": "needs Hadoop",
        "docs/clusters.md: # ndjson records: blocks of whole lines over the cores, output in input order (-k)":
            "needs GNU parallel",
        "docs/sidecar.md: # a client: send the records, half-close, read the lines until the server closes":
            "needs socat or OpenBSD netcat",
        "docs/sidecar.md: mkdir -p /run/respdecode && chown 10001:10001 /run/respdecode": "needs docker",
        "docs/container.md: docker build -t respdecode .": "needs docker and a registry",
        "docs/html-parser.md: bench/html/parser-choice/run": "a measurement: builds a C program against gumbo",
        "docs/container.md: swift build -c release --static-swift-stdlib": "builds the project",
        "docs/reliability.md: scripts/fuzz json 600": "runs for minutes",
        "docs/reliability.md: scripts/sanitize address Hostile": "rebuilds everything under a sanitizer",
        "docs/contributing.md: swift build --build-tests -Xswiftc -warnings-as-errors": "builds the project",
    ]

    /// A fenced block of a Markdown file.
    struct Block: Sendable, CustomTestStringConvertible {
        var file: String
        var line: Int
        var language: String
        var lines: [String]

        /// "FILE: first line", the first line without a trailing comment (two spaces, then `#`).
        var key: String {
            var first = Substring(lines.first ?? "")
            if let comment = first.range(of: "  #") { first = first[..<comment.lowerBound] }
            return "\(file): \(first.trimmingCharacters(in: .whitespaces))"
        }
        var testDescription: String { "\(file):\(line)" }
    }

    /// The documents whose examples are run: README.md and every docs/*.md.
    static let documents: [String] = {
        let docs = EndToEndTests.packageRoot.appendingPathComponent("docs")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []
        return ["README.md"] + names.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
    }()

    static let blocks: [Block] = documents.flatMap { name -> [Block] in
        let url = EndToEndTests.packageRoot.appendingPathComponent(name)
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return fencedBlocks(in: text, file: name)
    }

    static let consoleBlocks = blocks.filter { $0.language == "console" }

    /// The fenced blocks of `text`: a line starting with three backticks (after indentation) opens one, its info
    /// string's first word is the language, and the next such line closes it.
    static func fencedBlocks(in text: String, file: String) -> [Block] {
        var result: [Block] = []
        var open: Block?
        var indent = 0
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = raw.drop { $0 == " " }
            if trimmed.hasPrefix("```") {
                if let block = open {
                    result.append(block)
                    open = nil
                } else {
                    let info = trimmed.dropFirst(3).split(separator: " ").first.map(String.init) ?? ""
                    open = Block(file: file, line: index + 1, language: info, lines: [])
                    indent = raw.count - trimmed.count
                }
            } else if open != nil {
                // The lines of an indented block lose the fence's indentation.
                open?.lines.append(String(raw.dropFirst(indent)))
            }
        }
        return result
    }

    /// A console block's commands, each with the lines it is expected to print.
    static func commands(of block: Block) throws -> [(command: String, expected: [String])] {
        var result: [(command: String, expected: [String])] = []
        for line in block.lines {
            if let last = result.last, last.expected.isEmpty, last.command.hasSuffix("\\") {
                result[result.count - 1].command += "\n" + line
            } else if line.hasPrefix("$ ") {
                result.append((String(line.dropFirst(2)), []))
            } else {
                guard !result.isEmpty else {
                    throw ExampleError("\(block.testDescription): output before the first `$ ` command: \(line)")
                }
                result[result.count - 1].expected.append(line)
            }
        }
        return result
    }

    /// Whether `actual` is `expected`, where an `...` line of `expected` matches any number of lines.
    static func matches(_ actual: ArraySlice<String>, _ expected: ArraySlice<String>) -> Bool {
        guard let first = expected.first else { return actual.isEmpty }
        if first == "..." {
            let rest = expected.dropFirst()
            return (actual.startIndex...actual.endIndex).contains { matches(actual[$0...], rest) }
        }
        guard let line = actual.first, line == first else { return false }
        return matches(actual.dropFirst(), expected.dropFirst())
    }

    struct ExampleError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs `command` with `bash -c` in `directory`, the binary's folder first on PATH; gives its status, standard
    /// output and standard error.
    static func run(_ command: String, in directory: URL) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["timeout", "60", "bash", "-c", command]
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        let bin = EndToEndTests.binary.deletingLastPathComponent().path
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        process.environment = environment
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "respdecode-doc-stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let errors = try FileHandle(forWritingTo: errorFile)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try errors.close()
        let stderr = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), stderr)
    }

    @Test func everyShellBlockRunsOrIsExempt() {
        #expect(!Self.consoleBlocks.isEmpty, "no console block found in README.md or docs/")
        let shell = Self.blocks.filter { ["sh", "bash", "shell", "zsh"].contains($0.language) }
        func isExempt(_ block: Block, by key: String) -> Bool { block.key.hasPrefix(key) }
        for block in shell where !Self.exempt.keys.contains(where: { isExempt(block, by: $0) }) {
            Issue.record(
                """
                \(block.testDescription): a \(block.language) block that is not run; make it a console block with its \
                output, or add "\(block.key)" to DocExamplesTests.exempt with the reason
                """
            )
        }
        for key in Self.exempt.keys.sorted() where !shell.contains(where: { isExempt($0, by: key) }) {
            Issue.record("DocExamplesTests.exempt names no block: \(key)")
        }
    }

    @Test(arguments: consoleBlocks)
    func consoleExample(_ block: Block) throws {
        let commands = try Self.commands(of: block)
        #expect(!commands.isEmpty, "\(block.testDescription): a console block without a `$ ` command")
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("respdecode-doc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.copyItem(
            at: EndToEndTests.packageRoot.appendingPathComponent("samples"),
            to: scratch.appendingPathComponent("samples"))
        for (command, expected) in commands {
            let result = try Self.run(command, in: scratch)
            var actual = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if actual.last == "" { actual.removeLast() }
            #expect(
                result.status == 0, "\(block.testDescription): `\(command)` exited \(result.status): \(result.stderr)")
            if !Self.matches(actual[...], expected[...]) {
                Issue.record(
                    """
                    \(block.testDescription): `\(command)` printed
                    \(actual.joined(separator: "\n"))
                    --- expected ---
                    \(expected.joined(separator: "\n"))
                    --- standard error ---
                    \(result.stderr)
                    """
                )
            }
        }
    }

    /// Pages that links may name before they exist in the tree (none now; an entry is for a page another branch
    /// writes, removed when it lands).
    static let pendingPages: Set<String> = []

    /// GitHub's anchor for a heading: lower-cased, letters, digits, `_` and `-` kept, spaces made `-`, the rest
    /// dropped.
    static func anchor(of heading: String) -> String {
        var result = ""
        for character in heading.lowercased() {
            if character.isLetter || character.isNumber || character == "_" || character == "-" {
                result.append(character)
            } else if character == " " {
                result.append("-")
            }
        }
        return result
    }

    /// The anchors of a Markdown text's headings (outside fenced blocks), with GitHub's `-1`, `-2` for repeats.
    static func anchors(in text: String) -> Set<String> {
        var result = Set<String>()
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.drop(while: { $0 == " " }).hasPrefix("```") { inFence.toggle() }
            guard !inFence, line.hasPrefix("#") else { continue }
            let base = anchor(of: line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces))
            var candidate = base
            var n = 0
            while result.contains(candidate) {
                n += 1
                candidate = "\(base)-\(n)"
            }
            result.insert(candidate)
        }
        return result
    }

    /// Every relative link of README.md and docs/*.md names a file of the repository, and its `#anchor` a heading
    /// there: code comments cite docs/PAGE.md#anchor, so the headings are part of the contract.
    @Test func linksResolve() throws {
        let root = EndToEndTests.packageRoot
        let link = try Regex(#"\]\(([^)\s]+)\)"#)
        for document in Self.documents {
            let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
            let folder = (document as NSString).deletingLastPathComponent
            for match in text.matches(of: link) {
                let target = String(match.output[1].substring ?? "")
                if ["http://", "https://", "mailto:"].contains(where: target.hasPrefix) { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file =
                    parts[0].isEmpty
                    ? document
                    : ((folder as NSString).appendingPathComponent(String(parts[0])) as NSString).standardizingPath
                if Self.pendingPages.contains(file) { continue }
                guard let linked = try? String(contentsOf: root.appendingPathComponent(file), encoding: .utf8) else {
                    Issue.record("\(document): link to \(target): no file \(file)")
                    continue
                }
                if parts.count == 2, file.hasSuffix(".md"), !Self.anchors(in: linked).contains(String(parts[1])) {
                    Issue.record("\(document): link to \(target): \(file) has no heading with that anchor")
                }
            }
        }
    }

    /// Code comments cite the contract where it lives, docs/PAGE.md#anchor, and every such citation resolves; none
    /// cites a document outside the repository (the original SPEC.md or the gathered reference notes).
    @Test func commentsCiteDocsThatExist() throws {
        let root = EndToEndTests.packageRoot
        let citation = try Regex(#"docs/([A-Za-z0-9_-]+\.md)(#[a-z0-9_-]+)?"#)
        let outside = try Regex(
            #"SPEC §|SPEC\.md|reference/[a-z-]+\.md|(af-parity|perf-baseline|ecosystem|spike-framing-and-c-libraries)\.md"#
        )
        var cited = 0
        for folder in ["Sources", "Tests", "scripts", "bench", ".ci"] {
            let enumerator = FileManager.default.enumerator(
                at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                let relative = String(url.path.dropFirst(root.path.count + 1))
                if relative.hasPrefix("Tests/FuzzRegressions/")
                    || relative == "Tests/EndToEndTests/DocExamplesTests.swift"
                {
                    continue
                }
                guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
                if let match = text.firstMatch(of: outside) {
                    Issue.record("\(relative) cites \(text[match.range]), a document outside the repository")
                }
                for match in text.matches(of: citation) {
                    cited += 1
                    let page = "docs/" + String(match.output[1].substring ?? "")
                    guard let linked = try? String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
                    else {
                        Issue.record("\(relative) cites \(page), which does not exist")
                        continue
                    }
                    if let fragment = match.output[2].substring,
                        !Self.anchors(in: linked).contains(String(fragment.dropFirst()))
                    {
                        Issue.record("\(relative) cites \(page)\(fragment): no heading with that anchor")
                    }
                }
            }
        }
        #expect(cited >= 50, "found \(cited) citations of docs/ in the code")
    }

    /// The comparison itself: a wrong line fails, `...` takes any run of lines, and nothing else is loose.
    @Test func outputComparison() {
        #expect(Self.matches(["a", "b"], ["a", "b"]))
        #expect(!Self.matches(["a", "b"], ["a", "c"]))
        #expect(!Self.matches(["a", "b"], ["a"]))
        #expect(!Self.matches(["a"], ["a", "b"]))
        #expect(Self.matches(["a", "b", "c", "d"], ["a", "...", "d"]))
        #expect(Self.matches(["a", "d"], ["a", "...", "d"]))
        #expect(!Self.matches(["a", "b", "c"], ["a", "...", "d"]))
        #expect(Self.matches([], ["..."]))
        #expect(!Self.matches(["a "], ["a"]))
    }
}

import Foundation
import Testing

/// Runs the built `respdecode` binary as a user would: on samples/, on standard input, against closed and full
/// outputs, and with a producer that keeps its pipe open.
@Suite("End to end", .serialized)
struct EndToEndTests {
    /// The package root (holding Package.swift), found upward from this file.
    static let packageRoot: URL = {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/"
            && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path)
        {
            dir.deleteLastPathComponent()
        }
        return dir
    }()

    /// The binary: `$RESPDECODE_BIN`, or `respdecode` beside this test bundle (the test target depends on it, so
    /// SwiftPM builds it into the same products folder).
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["RESPDECODE_BIN"] { return URL(fileURLWithPath: path) }
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return bundle.deletingLastPathComponent().appendingPathComponent("respdecode")
    }()

    struct Run {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    /// Runs the binary in the package root with `arguments`, feeding `stdin` (or nothing).
    static func run(
        _ arguments: [String], stdin: Data? = nil, stdoutTo file: FileHandle? = nil, executable: String? = nil
    ) throws -> Run {
        let process = Process()
        process.executableURL = executable.map { URL(fileURLWithPath: $0) } ?? binary
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        let output = Pipe()
        let errors = Pipe()
        let input = Pipe()
        process.standardOutput = file ?? output
        process.standardError = errors
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let outData = file == nil ? output.fileHandleForReading.readDataToEndOfFile() : Data()
        let errData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: outData, stderr: String(decoding: errData, as: UTF8.self))
    }

    static func sample(_ name: String) throws -> Data {
        try Data(contentsOf: packageRoot.appendingPathComponent("samples/\(name)"))
    }

    @Test func goldenOutputOnSamples() throws {
        let result = try Self.run(["samples/capture.http"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let expected = try Self.sample("capture.expected.ndjson")
        #expect(result.stdout == expected, "\(String(decoding: result.stdout, as: UTF8.self))")
    }

    /// XML and property-list responses: namespaces, entities, CDATA, a charset parameter, a status error beside a
    /// value, parse errors, billion laughs, XML and binary plists, a reference cycle, a 204, an OpenStep plist.
    @Test func goldenOutputOnDocuments() throws {
        let result = try Self.run(["samples/documents.http"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let expected = try Self.sample("documents.expected.ndjson")
        #expect(result.stdout == expected, "\(String(decoding: result.stdout, as: UTF8.self))")
    }

    /// Image responses (made by samples/images.py): PNG with alpha, text and dpi; a progressive JPEG with EXIF
    /// orientation 6; an animated GIF; a JPEG served as image/png; a truncated PNG; a lossless WebP. Header only.
    @Test func goldenOutputOnImages() throws {
        let result = try Self.run(["samples/images.http"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(
            result.stdout == (try Self.sample("images.expected.ndjson")),
            "\(String(decoding: result.stdout, as: UTF8.self))")
    }

    /// The same images with `--inflate --scale 2`: PNG and JPEG decoded in full (byte count, mean colour and dHash,
    /// which equal a Pillow decode of the same bodies), point sizes halved and, for orientation 6, swapped.
    @Test func goldenOutputOnImagesInflated() throws {
        let result = try Self.run(["--inflate", "--scale", "2", "samples/images.http"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(
            result.stdout == (try Self.sample("images.inflate.expected.ndjson")),
            "\(String(decoding: result.stdout, as: UTF8.self))")
    }

    /// HTML pages and text in several charsets (made by samples/pages.py): the html decoder's title, lang, base,
    /// canonical, meta, links, headings and visible text; windows-1252 by header, Shift_JIS by `<meta>`, KOI8-R text,
    /// a stylesheet detected as UTF-8, and a 404 page decoded beside its status error.
    @Test func goldenOutputOnPages() throws {
        let result = try Self.run(["samples/pages.http"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let expected = try Self.sample("pages.expected.ndjson")
        #expect(result.stdout == expected, "\(String(decoding: result.stdout, as: UTF8.self))")
    }

    /// API responses past AFNetworking's four (made by samples/apis.py): a form, multipart/mixed with a JSON part and
    /// byteranges, OpenAI- and Anthropic-style event streams, JSON Lines, MessagePack, CBOR, protobuf, gRPC-Web and an
    /// OpenStep plist, each through its decoder of the default chain.
    @Test func goldenOutputOnAPIs() throws {
        let result = try Self.run(["samples/apis.http"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let expected = try Self.sample("apis.expected.ndjson")
        #expect(result.stdout == expected, "\(String(decoding: result.stdout, as: UTF8.self))")
    }

    /// `--chain json,xml,plist,image`, AFNetworking's serializers, gives the lines every sample gave before the html
    /// and text decoders joined the default chain: `NAME.af.expected.ndjson` where the default chain's lines differ
    /// (kept as they were written then), else the default golden file. apis.http came later: its AF lines give the
    /// formats past the four to the raw decoder, and its OpenStep plist to plist, as NSPropertyListSerialization does.
    @Test(arguments: [
        (["samples/capture.http"], "capture"), (["samples/pages.http"], "pages"),
        (["samples/documents.http"], "documents"), (["samples/images.http"], "images"),
        (["samples/traffic.warc.gz"], "traffic.warc"), (["samples/traffic.har"], "traffic.har"),
        (["--sniff", "samples/traffic.ndjson"], "traffic.ndjson"), (["samples/apis.http"], "apis"),
    ])
    func afNetworkingChainGivesTheLinesOfBefore(arguments: [String], name: String) throws {
        let result = try Self.run(["--chain", "json,xml,plist,image"] + arguments)
        #expect(result.status == 0)
        let af = Self.packageRoot.appendingPathComponent("samples/\(name).af.expected.ndjson")
        let expected =
            FileManager.default.fileExists(atPath: af.path)
            ? try Data(contentsOf: af) : try Self.sample("\(name).expected.ndjson")
        #expect(result.stdout == expected, "\(String(decoding: result.stdout, as: UTF8.self))")
    }

    @Test func goldenPrettyOutput() throws {
        let result = try Self.run(["--output", "pretty", "samples/capture.http"])
        #expect(result.status == 0)
        #expect(result.stdout == (try Self.sample("capture.expected.pretty")))
    }

    /// One line per record, in order: `seq` counts 0, 1, 2, … and every line is a JSON object.
    @Test func everyRecordGetsOneLineInOrder() throws {
        let result = try Self.run([], stdin: try Self.sample("capture.http"))
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == 12)
        for (i, line) in lines.enumerated() {
            let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            #expect(object?["seq"] as? Int == i)
            #expect(object?["input"] == nil, "standard input has no name")
        }
    }

    @Test func strictExitsOneWhenAnyLineFailed() throws {
        #expect(try Self.run(["--strict", "samples/capture.http"]).status == 1)
        let clean = Data("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".utf8)
        #expect(try Self.run(["--strict"], stdin: clean).status == 0)
    }

    @Test(arguments: [
        ["--chain", "nosuchdecoder"], ["--input", "carrier-pigeon"], ["--max-body-bytes", "lots"],
        ["--accept", "json=notatype"], ["--status-codes", "abc"], ["--no-such-option"],
    ])
    func usageErrorsExitTwoAndWriteNothing(_ arguments: [String]) throws {
        let result = try Self.run(arguments, stdin: try Self.sample("capture.http"))
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(!result.stderr.isEmpty)
    }

    @Test func acceptOverridesADecodersTypes() throws {
        let html = Data(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 8\r\n\r\n{\"a\":[]}".utf8)
        let plain = try Self.run([], stdin: html)
        #expect(String(decoding: plain.stdout, as: UTF8.self).contains(#""decoder":"html""#))
        let accepted = try Self.run(["--chain", "json", "--accept", "json=text/*,application/json"], stdin: html)
        #expect(accepted.status == 0)
        #expect(
            String(decoding: accepted.stdout, as: UTF8.self).contains(#""decoder":"json","ok":true,"value":{"a":[]}"#))
        #expect(try Self.run(["--chain", "json,json"], stdin: html).status == 2)
        #expect(
            try Self.run(["--chain", "json", "--accept", "xml=text/xml"], stdin: html).status == 2,
            "xml is not in the chain")
    }

    @Test func unreadableFileExitsThreeAfterTheOtherInputs() throws {
        let result = try Self.run(["does/not/exist.http", "samples/capture.http"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("does/not/exist.http"))
        #expect(result.stdout.split(separator: UInt8(ascii: "\n")).count == 12)
    }

    @Test func fullDiskExitsThreeWithAMessage() throws {
        guard let full = FileHandle(forWritingAtPath: "/dev/full") else {
            Issue.record("/dev/full cannot be opened here")
            return
        }
        let result = try Self.run(["samples/capture.http"], stdoutTo: full)
        #expect(result.status == 3)
        #expect(result.stderr.contains("No space left on device"), "\(result.stderr)")
    }

    /// `respdecode big | head -1`: the worker stops promptly and quietly once its reader is gone.
    @Test func closedOutputStopsQuietly() throws {
        var stream = Data()
        let record = Data(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"foo\":\"bar\"}".utf8)
        for _ in 0..<200_000 { stream.append(record) }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("respdecode-epipe-\(getpid()).http")
        try stream.write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }

        let process = Process()
        process.executableURL = Self.binary
        process.arguments = [input.path]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let firstBytes = output.fileHandleForReading.readData(ofLength: 100)
        try output.fileHandleForReading.close()
        let started = Date()
        process.waitUntilExit()
        #expect(!firstBytes.isEmpty)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(process.terminationStatus == 3)
        #expect(errors.fileHandleForReading.readDataToEndOfFile().isEmpty, "EPIPE is not worth a message")
    }

    /// A producer that writes one record and keeps its pipe open sees that record's line at once.
    @Test func linesAreFlushedWhileInputIsIdle() throws {
        let process = Process()
        process.executableURL = Self.binary
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(
            Data("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{\"a\":1}\n".utf8))

        // Read the line while the pipe stays open; give up after 5 seconds.
        let reader = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(5)
        var received = Data()
        var descriptor = pollfd(fd: reader.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while !received.contains(UInt8(ascii: "\n")) && Date() < deadline {
            if poll(&descriptor, 1, 100) > 0 { received.append(reader.availableData) }
        }
        #expect(String(decoding: received, as: UTF8.self).contains("\"value\":{\"a\":1}"))

        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func helpAndVersionExitZero() throws {
        let help = try Self.run(["--help"])
        #expect(help.status == 0)
        let text = String(decoding: help.stdout, as: UTF8.self)
        for option in [
            "--chain", "--accept", "--strict-types", "--keep-nulls", "--output", "--status-codes",
            "--max-header-bytes", "--max-body-bytes", "--max-depth", "--max-error-body-bytes", "--strict",
        ] {
            #expect(text.contains(option), "help lacks \(option)")
        }
        #expect(try Self.run(["--version"]).status == 0)
    }
}

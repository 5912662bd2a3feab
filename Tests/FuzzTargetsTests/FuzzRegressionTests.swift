import Foundation
import FuzzTargets
import RespDecodeTestSupport
import Testing

/// Every input the fuzzers kept (scripts/fuzz copies crashes, timeouts, leaks and out-of-memory inputs to
/// Tests/FuzzRegressions/TARGET/) goes through its target again: each was a bug, and stays fixed. The samples go
/// through the framer targets too, so the invariants are checked on real streams in every run.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let regressions = testsFolder.appendingPathComponent("FuzzRegressions")
    static let samples = testsFolder.deletingLastPathComponent().appendingPathComponent("samples")

    static func files(in folder: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().filter { !$0.hasPrefix(".") }.map { folder.appendingPathComponent($0) }
    }

    /// The kept inputs, as "target/file".
    static let kept: [String] = FuzzTarget.allCases.flatMap { target in
        files(in: regressions.appendingPathComponent(target.rawValue)).map {
            "\(target.rawValue)/\($0.lastPathComponent)"
        }
    }

    @Test(arguments: kept)
    func keptInputStaysFixed(_ name: String) throws {
        let target = try #require(FuzzTarget(rawValue: String(name.split(separator: "/")[0])))
        let data = try Data(contentsOf: Self.regressions.appendingPathComponent(name))
        // A failure stops the test process with the invariant's message (as it stopped the fuzzer).
        target.run([UInt8](data))
    }

    /// The `arc` target over a few ARC records (it puts a filedesc record before them): well-formed, without a
    /// separator, and with a length that lies.
    @Test func arcTargetKeepsTheFramerInvariants() {
        let records =
            "http://a.test/ 192.0.2.1 20240102030405 text/html 42\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}\n"
            + "dns:a.test 192.0.2.1 20240102030405 text/dns 10\n192.0.2.1\n"
            + "http://b.test/ 192.0.2.1 20240102030405 text/html 500\nHTTP/1.1 200 OK\r\n\r\n\n"
            + "http://c.test/ 192.0.2.1 20240102030405 text/html 0\n\n"
        FuzzTarget.arc.run(Array(records.utf8))
    }

    @Test(arguments: [
        ("capture.http", FuzzTarget.http), ("documents.http", .http), ("images.http", .http),
        ("traffic.warc.gz", .warc), ("traffic.har", .har), ("traffic.ndjson", .ndjson),
    ])
    func samplesKeepTheFramerInvariants(_ file: String, _ target: FuzzTarget) throws {
        let data = try Data(contentsOf: Self.samples.appendingPathComponent(file))
        #expect(!data.isEmpty)
        target.run([UInt8](data))
    }

    /// The WACZ target on the WARC sample in a WACZ, stored and deflated, and on ZIP files that are not WACZ files.
    @Test func waczTargetKeepsItsInvariants() throws {
        let warc = [UInt8](try Data(contentsOf: Self.samples.appendingPathComponent("traffic.warc.gz")))
        for deflated in [false, true] {
            FuzzTarget.wacz.run(
                ZipFiles.make([
                    ZipFiles.Entry("datapackage.json", Array(#"{"resources":[]}"#.utf8), deflated: deflated),
                    ZipFiles.Entry("archive/traffic.warc.gz", warc, deflated: deflated),
                ]))
        }
        FuzzTarget.wacz.run(ZipFiles.make([ZipFiles.Entry("data/a.txt", Array("a".utf8))]))
        FuzzTarget.wacz.run(ZipFiles.overlapping(Array(warc.prefix(500)), count: 20))
        FuzzTarget.wacz.run(Array("PK\u{3}\u{4}".utf8))
    }

    /// The serve target (an HTTP server in this process) on requests of every kind: a decode of a sample, a refused
    /// smuggling shape, garbage, nothing, a head that never ends; each gets a status line or a close, not a hang.
    @Test func serveTargetKeepsItsInvariants() throws {
        let body = [UInt8](try Data(contentsOf: Self.samples.appendingPathComponent("capture.http")))
        FuzzTarget.serve.run(
            Array("POST /decode HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        FuzzTarget.serve.run(
            Array("POST /decode HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        FuzzTarget.serve.run([0, 1, 2, 0xFF, 0x0D, 0x0A])
        FuzzTarget.serve.run([])
        FuzzTarget.serve.run(Array("GET /healthz HTTP/1.1\r\nX: ".utf8))
    }
}

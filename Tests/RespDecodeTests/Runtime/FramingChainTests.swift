import Foundation
import Glibc
import Logging
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// An input framed in pieces on the workers (Runtime/FramingChain.swift) gives the items of one framer reading it
/// whole, in order; a halt gives a prefix of them, every item whole; memory ahead of the reader is bounded.
@Suite("Framing chain")
struct FramingChainTests {
    static let quiet = Logger(label: "FramingChainTests") { _ in SwiftLogNoOpLogHandler() }

    /// An HTTP stream of `count` responses, a few KB each and every 100th about 300 KB, the last cut short.
    static func stream(_ count: Int, seed: UInt64) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        var bytes: [UInt8] = []
        for n in 0..<count {
            let size = n % 100 == 3 ? 300_000 : 100 + Int(random.next() % 4000)
            let body = String(repeating: Character(UnicodeScalar(UInt8(97 + n % 26))), count: size)
            bytes += Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(size)\r\n\r\n\(body)".utf8)
        }
        return Array(bytes.dropLast(10))
    }

    /// A temporary file holding `bytes`, opened for reading; the caller closes and removes it.
    static func file(_ bytes: [UInt8]) throws -> (fd: Int32, path: String) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "respdecode-chain-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        ).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        return (fd, path)
    }

    /// Whether `fd` is still open on the file at `path` (the number may be taken again by another test's file once it
    /// is closed, so the file it names is compared).
    static func isOpen(_ fd: Int32, _ path: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) == path
    }

    static func chain(fd: Int32, prefix: [UInt8] = []) -> FramingChain {
        FramingChain(
            framer: HTTPStreamFramer(limits: Limits()), buffer: FramerInput(prefix), ended: false, descriptor: fd,
            closesDescriptor: true, readSize: 64 * 1024, statistics: Statistics(), logger: quiet, name: "x",
            logName: "x")
    }

    /// Taken piece by piece, waiting or polling, the items are one framer's over the whole input (the truncated last
    /// record included), and the input's bytes are all counted once.
    @Test(arguments: [true, false])
    func piecesGiveTheItemsOfOneFramer(waiting: Bool) throws {
        let bytes = Self.stream(1500, seed: 7)
        var whole = HTTPStreamFramer(limits: Limits())
        let expected = whole.frameAll(bytes).map(describeFully)
        #expect(expected.count == 1500)
        #expect(expected.last?.contains("truncatedRecord") == true)

        let (fd, path) = try Self.file(Array(bytes.dropFirst(100)))
        defer { unlink(path) }
        #expect(Self.isOpen(fd, path))
        let pool = JobPool(configuration: DecodeStreamTests.configuration(jobs: 2))
        defer { pool.close() }
        let statistics = Statistics()
        let chain = FramingChain(
            framer: HTTPStreamFramer(limits: Limits()), buffer: FramerInput(bytes.prefix(100)), ended: false,
            descriptor: fd, closesDescriptor: true, readSize: 64 * 1024, statistics: statistics, logger: Self.quiet,
            name: "x", logName: "x")
        chain.start(on: pool)
        var items: [String] = []
        var pieces = 0
        var last = false
        loop: while true {
            switch chain.take(waiting: waiting, pool: pool) {
            case .piece(let piece):
                pieces += 1
                #expect(!last, "nothing after the last piece")
                last = piece.isLast
                #expect(!piece.readFailed)
                items += piece.items.map(describeFully)
            case .notReady:
                usleep(100)
            case .done:
                break loop
            }
        }
        #expect(last)
        #expect(pieces > 3, "the input went in several pieces")
        #expect(items == expected)
        #expect(statistics.snapshot.bytesRead == Int64(bytes.count - 100))
        #expect(!Self.isOpen(fd, path), "the chain closed its descriptor")
    }

    /// A halt after some pieces: what was taken and what the halt gives are a prefix of the whole input's items,
    /// without the record the halt cut; the chain is then done.
    @Test func haltGivesTheFramedPrefix() throws {
        let bytes = Self.stream(3000, seed: 8)
        var whole = HTTPStreamFramer(limits: Limits())
        let expected = whole.frameAll(bytes).map(describeFully)
        let (fd, path) = try Self.file(bytes)
        defer { unlink(path) }
        #expect(Self.isOpen(fd, path))
        let pool = JobPool(configuration: DecodeStreamTests.configuration(jobs: 2))
        defer { pool.close() }
        let chain = Self.chain(fd: fd)
        chain.start(on: pool)
        var items: [String] = []
        for _ in 0..<2 {
            guard case .piece(let piece) = chain.take(waiting: true, pool: pool) else {
                Issue.record("a piece")
                return
            }
            items += piece.items.map(describeFully)
        }
        let (rest, cut) = chain.halt()
        #expect(cut)
        #expect(rest.last?.isLast == true)
        for piece in rest { items += piece.items.map(describeFully) }
        #expect(items.count < expected.count, "the halt came before the end")
        #expect(Array(expected.prefix(items.count)) == items)
        #expect(!items.contains { $0.contains("truncatedRecord") })
        guard case .done = chain.take(waiting: true, pool: pool) else {
            Issue.record("done after a halt")
            return
        }
        #expect(!Self.isOpen(fd, path), "the halt closed the descriptor")
    }

    /// A descriptor the caller owns (`InputSource.descriptor`), a regular file framed on the workers, is left open.
    @Test func callersDescriptorStaysOpen() throws {
        let (fd, path) = try Self.file(Self.stream(500, seed: 10))
        defer {
            close(fd)
            unlink(path)
        }
        let sink = open("/dev/null", O_WRONLY)
        defer { close(sink) }
        let summary = try StreamRunner(
            configuration: DecodeStreamTests.configuration(jobs: 2), logger: Self.quiet, outputDescriptor: sink
        ).run([.descriptor(fd)])
        #expect(summary.records == 500)
        #expect(Self.isOpen(fd, path))
    }

    /// A reader that takes nothing: the chain frames `piecesAhead` pieces and waits, holding at most that many
    /// pieces' bodies (about `pieceHeldBytes` each, plus one record), whatever the input's length.
    @Test func framingWaitsForTheReader() throws {
        let bytes = Self.stream(6000, seed: 9)
        #expect(bytes.count > 20 * FramingChain.pieceHeldBytes)
        let (fd, path) = try Self.file(bytes)
        defer { unlink(path) }
        let pool = JobPool(configuration: DecodeStreamTests.configuration(jobs: 2))
        defer { pool.close() }
        let chain = Self.chain(fd: fd)
        chain.start(on: pool)
        usleep(300_000)
        let offset = lseek(fd, 0, SEEK_CUR)
        #expect(offset > 0)
        #expect(
            offset <= Int64((FramingChain.piecesAhead + 1) * (FramingChain.pieceReadBytes + 64 * 1024)),
            "read ahead of the reader: \(offset)")
        let (rest, cut) = chain.halt()
        #expect(cut)
        #expect(rest.count == FramingChain.piecesAhead + 1)
        #expect(rest.reduce(0) { $0 + $1.items.reduce(0) { $0 + $1.heldBytes } } <= 5 << 20)
    }
}

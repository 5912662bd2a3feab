import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Raw HTTP bodies over maxBodyBytes (docs/reliability.md#limits): the limitExceeded item has the status, the fields,
/// the body's size as framed and the type its first bytes show, whatever the split, and the body is not held.
@Suite("HTTP stream bodies over the limit")
struct HTTPOverLimitTests {
    static let limits = Limits(maxBodyBytes: 1000)
    static let body = Array(("{\"a\":\"" + String(repeating: "x", count: 3000) + "\"}").utf8)
    static let next = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)

    static func describe(_ item: FramedItem) -> String {
        switch item {
        case .record(let r):
            return "record @\(r.offset) \(r.status) \(r.body.count)"
        case .failure(let f):
            return
                "\(f.error.code) @\(f.offset) bytes=\(f.bytes) status=\(f.status.map(String.init) ?? "-") fields=\(f.headers?.count ?? -1) bodyBytes=\(f.bodyBytes.map(String.init) ?? "-") warnings=\(f.warnings) \(f.error.message) excerpt=\(f.excerpt.count)"
        }
    }

    static func everySplit(_ input: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        let verdict = FramerSplits.verify(
            input, randomSplits: 20, maxPiece: 301, make: { HTTPStreamFramer(limits: limits) }, describe: describe)
        #expect(verdict.mismatches == [], sourceLocation: sourceLocation)
        return verdict.items.map(describe)
    }

    static let sniffed = "[\"the body was not decoded; its first bytes look like application/json (sniffed)\"]"

    @Test func contentLengthBody() {
        let head = Array(
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 3008\r\n\r\n".utf8)
        let items = Self.everySplit(head + Self.body + Self.next)
        let total = head.count + Self.body.count
        #expect(
            items == [
                "limitExceeded @0 bytes=\(total) status=200 fields=2 bodyBytes=3008 warnings=\(Self.sniffed) Content-Length 3008 exceeds 1000 bytes (maxBodyBytes): skipped, the body not decoded excerpt=\(head.count)",
                "record @\(total) 200 2",
            ])
        // Cut short: no size, the type still.
        let cut = Self.everySplit(head + Self.body.dropLast(8))
        #expect(
            cut == [
                "limitExceeded @0 bytes=\(total - 8) status=200 fields=2 bodyBytes=- warnings=\(Self.sniffed) Content-Length 3008 exceeds 1000 bytes (maxBodyBytes): skipped, the body not decoded excerpt=\(head.count)"
            ])
    }

    @Test func chunkedAndCloseDelimitedBodies() {
        let head = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        var chunked: [UInt8] = []
        var i = 0
        while i < Self.body.count {
            let n = min(700, Self.body.count - i)
            chunked += Array("\(String(n, radix: 16))\r\n".utf8) + Self.body[i..<i + n] + Array("\r\n".utf8)
            i += n
        }
        chunked += Array("0\r\n\r\n".utf8)
        let items = Self.everySplit(head + chunked + Self.next)
        let total = head.count + chunked.count
        #expect(items.count == 2 && items[1] == "record @\(total) 200 2", "\(items)")
        #expect(
            items.first?.hasPrefix(
                "limitExceeded @0 bytes=\(total) status=200 fields=1 bodyBytes=3008 warnings=\(Self.sniffed) body of 3008 bytes longer than 1000 bytes (maxBodyBytes): the body not decoded"
            ) == true, "\(items)")
        let toEnd = Self.everySplit(Array("HTTP/1.1 200 OK\r\n\r\n".utf8) + Self.body)
        #expect(
            toEnd.first?.hasPrefix(
                "limitExceeded @0 bytes=\(19 + Self.body.count) status=200 fields=0 bodyBytes=3008 warnings=\(Self.sniffed)"
            )
                == true, "\(toEnd)")
    }

    /// The body passes; nothing of it is held but the excerpt and the sniffing prefix.
    @Test func nothingOfTheBodyIsHeld() {
        let big = [UInt8](repeating: 0x20, count: 4 << 20)
        for head in [
            "HTTP/1.1 200 OK\r\nContent-Length: \(big.count)\r\n\r\n", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n",
        ] {
            var framer = HTTPStreamFramer(limits: Self.limits)
            var most = 0
            let input = Array(head.utf8) + big
            let items = FramerSplits.feed(&framer, input, pieces: Array(repeating: 4096, count: input.count / 4096)) {
                _, input in most = max(most, input.writerIndex - input.readerIndex)
            }
            #expect(most <= 8192, "held \(most) bytes")
            guard case .failure(let failure) = items.first else {
                Issue.record("no failure")
                continue
            }
            #expect(failure.bodyBytes == Int64(big.count) && failure.warnings.isEmpty)
        }
    }
}

import Testing

@testable import RespDecode

@Suite("Framer input")
struct FramerInputTests {
    @Test func readsIntoSpareCapacityAndKeepsInputOffsets() {
        var input = FramerInput(startingAt: 100)
        let written = input.writeWithUnsafeMutableBytes(minimumWritableBytes: 8) { spare in
            #expect(spare.count >= 8)
            spare.copyBytes(from: Array("HTTP/1.1".utf8))
            return 8
        }
        #expect(written == 8 && input.readableBytes == 8 && input.readerOffset == 100)
        #expect(input.starts(with: "HTTP/", at: 0) && !input.starts(with: "HTTP/2", at: 0))
        #expect(input.isPrefix(of: "HTTP/1.1 ", at: 0) && !input.isPrefix(of: "HTTP/1.1", at: 0))
        #expect(input.firstIndex(of: UInt8(ascii: "/"), from: 0) == 4)
        input.moveReaderIndex(forwardBy: 5)
        #expect(input.readerOffset == 105 && input.offset(of: 7) == 107)
        // A failed read writes nothing.
        #expect(input.writeWithUnsafeMutableBytes(minimumWritableBytes: 1) { _ in -1 } == -1)
        #expect(input.readableBytes == 3)
    }

    /// The rule each framer used to apply to its own buffer: drop the consumed front when all of it is consumed, or
    /// when it is at least 64 KiB and at least half of what is held.
    @Test func compactsByTheAmortizedRule() {
        var input = FramerInput([UInt8](repeating: 7, count: 100))
        input.moveReaderIndex(forwardBy: 60)
        #expect(input.compact() == 0 && input.readerIndex == 60)
        input.moveReaderIndex(forwardBy: 40)
        #expect(input.compact() == 100 && input.readerIndex == 0 && input.writerIndex == 0 && input.readerOffset == 100)

        var big = FramerInput((0..<(200 * 1024)).map { UInt8(truncatingIfNeeded: $0) })
        big.moveReaderIndex(forwardBy: 64 * 1024)
        #expect(big.compact() == 0, "less than half consumed")
        big.moveReaderIndex(forwardBy: 40 * 1024)
        #expect(big.compact() == 104 * 1024)
        #expect(big.readerIndex == 0 && big.readableBytes == 96 * 1024 && big.readerOffset == 104 * 1024)
        #expect(big[0] == UInt8(truncatingIfNeeded: 104 * 1024) && big[1] == UInt8(truncatingIfNeeded: 104 * 1024 + 1))
    }

    @Test func copiesAreIndependent() {
        var a = FramerInput(Array("abc".utf8))
        let b = a
        a.write(Array("def".utf8))
        a.moveReaderIndex(forwardBy: 6)
        a.compact()
        a.write(Array("g".utf8))
        #expect(b.bytes(in: 0..<3) == Array("abc".utf8) && b.readableBytes == 3)
        #expect(a.bytes(in: 0..<1) == Array("g".utf8) && a.readerOffset == 6)
    }

    /// A span split off an input shares its memory: the input's later reads and compaction leave the span's bytes as
    /// they were, and only the bytes after the span move.
    @Test func splitSharesTheBytesAndLaterWritesLeaveThemAlone() {
        var input = FramerInput(capacity: 256 * 1024, startingAt: 1000)
        input.write((0..<(200 * 1024)).map { UInt8(truncatingIfNeeded: $0) })
        input.moveReaderIndex(forwardBy: 10)
        let base = input.withUnsafeBufferPointer { $0.baseAddress }
        let span = input.split(at: 150 * 1024)
        #expect(span.readerIndex == 10 && span.writerIndex == 150 * 1024 && span.readerOffset == 1010)
        #expect(span.withUnsafeBufferPointer { $0.baseAddress } == base, "no copy")
        #expect(input.readerIndex == 150 * 1024 && input.readableBytes == 50 * 1024)
        #expect(input.compact() == 0, "nothing moves within memory a span still holds")
        input.write([UInt8](repeating: 0xAB, count: 100 * 1024))
        #expect(input.withUnsafeBufferPointer { $0.baseAddress } != base, "the input went on in memory of its own")
        #expect(input.readerIndex == 0 && input.readerOffset == 1000 + 150 * 1024 && input.readableBytes == 150 * 1024)
        #expect(input[0] == UInt8(truncatingIfNeeded: 150 * 1024) && input[50 * 1024] == 0xAB)
        #expect(span.bytes(in: 10..<14) == [10, 11, 12, 13])
        #expect(span[150 * 1024 - 1] == UInt8(truncatingIfNeeded: 150 * 1024 - 1))
    }

    /// The memory of spans that are gone comes back to the input that was cut: its next reads go there, not into
    /// fresh pages; the recycler keeps no more free blocks than its limit.
    @Test func recycledBlocksAreReusedAndBounded() {
        let recycler = FramerInput.Recycler(limit: 2)
        var input = FramerInput(capacity: 4096, recycler: recycler)
        input.write([UInt8](repeating: 1, count: 4096))
        var span: FramerInput? = input.split(at: 4096)
        let first = span?.withUnsafeBufferPointer { $0.baseAddress }
        input.write([2]) // into a new block: the span holds the first
        #expect(recycler.freeBlocks == 0)
        span = nil
        #expect(recycler.freeBlocks == 1, "the span's block came back")
        span = input.split(at: input.writerIndex)
        input.write([3])
        #expect(input.withUnsafeBufferPointer { $0.baseAddress } == first, "the next block is the one given back")
        #expect(recycler.freeBlocks == 0 && span?.bytes(in: 0..<1) == [2])

        // Three spans' blocks given back at once: two are kept, the third freed.
        var spans: [FramerInput] = []
        for _ in 0..<3 {
            input.write([UInt8](repeating: 4, count: 4000))
            spans.append(input.split(at: input.writerIndex))
        }
        span = nil
        spans = []
        #expect(recycler.freeBlocks == 2)
        #expect(spans.isEmpty && span == nil)

        // A block grown past the largest kept is freed, not kept.
        let small = FramerInput.Recycler(limit: 2, maxBlockBytes: 8192)
        var grown = FramerInput(capacity: 4096, recycler: small)
        grown.write([UInt8](repeating: 5, count: 20000))
        grown.moveReaderIndex(forwardBy: 20000)
        span = grown.split(at: 20000)
        grown.write([6])
        span = nil
        #expect(small.freeBlocks == 0, "the 20,000-byte block went")
        #expect(span == nil)
    }

    /// A Content-Length body that is in the input whole is lent by it, not copied: the body keeps the bytes as they
    /// were however the input reads on; a body that arrives in pieces is copied together.
    @Test func wholeBodiesAreLentAndKeepTheirBytes() {
        var framer = HTTPStreamFramer()
        var input = FramerInput(capacity: 64)
        input.write(
            Array(
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nwor".utf8)
        )
        guard case .record(let first) = framer.decode(buffer: &input) else {
            Issue.record("no first record")
            return
        }
        #expect(first.body.isLent && first.body == Array("hello".utf8))
        #expect(framer.decode(buffer: &input) == nil, "the second body is not whole yet")
        // Reading on moves the unread bytes elsewhere and overwrites nothing the first body holds.
        input.write([UInt8](repeating: UInt8(ascii: "!"), count: 200))
        input.write(Array("ld".utf8))
        guard case .record(let second) = framer.decode(buffer: &input) else {
            Issue.record("no second record")
            return
        }
        #expect(!second.body.isLent && second.body == Array("wor!!!".utf8))
        #expect(first.body == Array("hello".utf8) && first.body.count == 5 && first.body[4] == UInt8(ascii: "o"))
        #expect(Array(first.body.prefix(2)) == Array("he".utf8) && first.body.bytes == Array("hello".utf8))
    }

    /// A framer consumes from the input it is lent and keeps none of it: whatever it has not consumed stays there.
    @Test func framersConsumeOnlyWhatTheyFrame() {
        var framer = HTTPStreamFramer()
        var input = FramerInput(Array("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\nContent-Le".utf8))
        #expect(framer.decode(buffer: &input).map(\.offset) == 0)
        #expect(framer.decode(buffer: &input).map(\.offset) == nil)
        #expect(input.readerOffset == 27, "the head that is not whole yet stays unconsumed")
        input.write(Array("ngth: 2\r\n\r\nhi".utf8))
        guard case .record(let record) = framer.decode(buffer: &input) else {
            Issue.record("no record")
            return
        }
        #expect(record.offset == 27 && record.body == Array("hi".utf8) && input.readableBytes == 0)
        #expect(framer.decodeLast(buffer: &input, seenEOF: true).map(\.offset) == nil)
    }
}

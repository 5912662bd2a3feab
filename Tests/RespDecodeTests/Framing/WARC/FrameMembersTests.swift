import CLZ4
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// zstd and LZ4 frames read through the member events: what they give, and that it does not depend on how the input
/// is split.
@Suite("zstd and LZ4 frames")
struct FrameMembersTests {
    /// The events for `input` fed in pieces of `pieces` bytes (cycled), the output of consecutive `.output` events
    /// joined; also how many frames were decoded whole.
    static func events<Codec: FrameCodec>(
        _ input: [UInt8], pieces: [Int], make: () -> Codec, outputSize: Int = 4096
    ) -> (events: [String], output: [UInt8], whole: Int) {
        let frames = FrameMembers(make())
        var compressed = FramerInput()
        var ended = input.isEmpty
        var out = [UInt8](repeating: 0, count: outputSize)
        var events: [String] = []
        var all: [UInt8] = []
        var pending = 0
        func flush() {
            if pending > 0 { events.append("output \(pending)") }
            pending = 0
        }
        var start = 0
        var k = 0
        while true {
            let event = out.withUnsafeMutableBufferPointer { frames.next(from: &compressed, ended: ended, into: $0) }
            switch event {
            case .output(let n):
                pending += n
                all += out[0..<n]
            case .plain(_, let n):
                // Plain runs may come in pieces: joined like output.
                flush()
                if events.last != "plain" { events.append("plain") }
                all += out[0..<n]
            case .needInput:
                let end = min(input.count, start + max(1, pieces[k % pieces.count]))
                k += 1
                compressed.write(input[start..<end])
                start = end
                if start == input.count { ended = true }
            case .end:
                flush()
                return (events, all, frames.wholeFrameCount)
            default:
                flush()
                events.append("\(event)")
            }
        }
    }

    /// Every split of `input` in two, byte by byte and some random splits give the events of the whole input.
    static func everySplitAgrees<Codec: FrameCodec>(
        _ input: [UInt8], make: () -> Codec, sourceLocation: SourceLocation = #_sourceLocation
    ) -> (events: [String], output: [UInt8], whole: Int) {
        let whole = events(input, pieces: [input.count], make: make)
        // Every split point of inputs up to 1,000 bytes; about 1,000 evenly spread ones of larger inputs.
        var splits: [[Int]] = stride(from: 0, through: input.count, by: max(1, input.count / 1000)).map {
            [$0, input.count]
        }
        splits.append([1])
        var generator = SplitMix64(seed: UInt64(input.count))
        for _ in 0..<20 {
            splits.append(FramerSplits.randomPieces(covering: input.count, maxPiece: 300, using: &generator))
        }
        for pieces in splits {
            let split = events(
                input, pieces: pieces, make: make, outputSize: 1 + pieces[0] % 5000 + (pieces[0] % 7 == 0 ? 0 : 100))
            if split.events != whole.events || split.output != whole.output {
                Issue.record(
                    "pieces \(pieces.prefix(3)): \(split.events) against \(whole.events)",
                    sourceLocation: sourceLocation)
                break
            }
        }
        return whole
    }

    /// `n` bytes of text: 1,000 random letters, repeated (so that large frames stay small).
    static func text(_ n: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        let unit = (0..<1000).map { _ in UInt8(ascii: "a") + UInt8(generator.next() % 6) }
        return (0..<n).map { unit[$0 % 1000] }
    }

    // MARK: - zstd

    @Test func zstdFramesSkippableFramesAndPlainBytes() {
        let a = Self.text(3000, seed: 1)
        let b = Self.text(FrameMembers<ZstdCodec>.wholeCapacity + 70_000, seed: 2)
        let c = Self.text(200, seed: 3)
        let input =
            FrameFixtures.zstdFrame(a) + FrameFixtures.skippable(0, Array("extension".utf8))
            + FrameFixtures.zstdFrame(b) + FrameFixtures.zstdFrame(c, checksum: false, contentSize: false)
            + FrameFixtures.zstdFrame([]) + Array("plain(\u{28}".utf8) + FrameFixtures.zstdFrame(c)
        let result = Self.everySplitAgrees(input) { ZstdCodec() }
        #expect(result.output == a + b + c + Array("plain(\u{28}".utf8) + c)
        #expect(result.events.filter { $0.hasPrefix("memberEnd") }.count == 5, "\(result.events)")
        #expect(result.events.filter { $0 == "plain" }.count == 1, "\(result.events)")
        // a, the empty frame and the last c are decoded whole; b is too large, the streamed c states no size.
        #expect(result.whole == 3)
    }

    @Test func zstdCorruptAndTruncatedFrames() {
        let a = Self.text(5000, seed: 4)
        let good = FrameFixtures.zstdFrame(a)
        var badData = good
        badData[good.count / 2] ^= 0x55
        var badChecksum = good
        badChecksum[good.count - 1] ^= 0x01
        let huge = FrameFixtures.zstdHugeWindow(windowLog: 31)
        let input = good + badData + good + badChecksum + huge + good + Array(good.dropLast(3))
        let result = Self.everySplitAgrees(input) { ZstdCodec() }
        let corrupt = result.events.filter { $0.hasPrefix("corrupt") }
        #expect(corrupt.count == 3, "\(result.events)")
        #expect(corrupt.contains { $0.contains("match checksum") }, "\(corrupt)")
        #expect(corrupt.contains { $0.contains("too much memory") }, "\(corrupt)")
        #expect(result.events.last?.hasPrefix("truncated(\(input.count - good.count + 3))") == true, "\(result.events)")
        #expect(result.events.filter { $0.hasPrefix("memberEnd") }.count == 3, "\(result.events)")
    }

    @Test func zstdDeclaredWindowOverTheLimitIsRefused() {
        let atLimit = FrameFixtures.zstdHugeWindow(windowLog: ZstdCodec.maxWindowLog)
        let over = FrameFixtures.zstdHugeWindow(windowLog: ZstdCodec.maxWindowLog + 1)
        let result = Self.everySplitAgrees(atLimit + over) { ZstdCodec() }
        #expect(
            result.events == [
                "memberStart(0)", "memberEnd(0)", "memberStart(9)",
                "corrupt(member: 9, message: \"Frame requires too much memory for decoding\")",
            ])
    }

    // MARK: - LZ4

    @Test(arguments: [false, true])
    func lz4FramesOfEveryKind(_ linked: Bool) {
        let a = Self.text(70_000, seed: 5)
        let b = Self.text(300_000, seed: 6)
        let c = Self.text(10, seed: 7)
        let input =
            FrameFixtures.lz4Frame(a, linked: linked)
            + FrameFixtures.lz4Frame(b, contentSize: false, checksum: false, blockSize: LZ4F_max256KB, linked: linked)
            + FrameFixtures.skippable(0xD, [1, 2, 3]) + FrameFixtures.lz4Frame(c, blockChecksum: true, linked: linked)
            + FrameFixtures.lz4Frame([], linked: linked) + Array("plain".utf8)
        let result = Self.everySplitAgrees(input) { LZ4Codec() }
        #expect(result.output == a + b + c + Array("plain".utf8))
        #expect(result.events.filter { $0.hasPrefix("memberEnd") }.count == 4, "\(result.events)")
        #expect(result.events.filter { $0.hasPrefix("corrupt") }.isEmpty, "\(result.events)")
    }

    @Test func lz4CorruptLyingAndTruncatedFrames() {
        let a = Self.text(5000, seed: 8)
        let good = FrameFixtures.lz4Frame(a, blockChecksum: true)
        var badBlock = good
        badBlock[good.count / 2] ^= 0x55
        // The content size (bytes 6 to 13) says one byte more than there is; the header checksum is made right.
        var lying = FrameFixtures.lz4Frame(a, checksum: false)
        lying[6] &+= 1
        lying[14] = Self.lz4HeaderChecksum(Array(lying[4..<14]))
        let input = good + badBlock + good + lying + good + Array(good.dropLast(2))
        let result = Self.everySplitAgrees(input) { LZ4Codec() }
        let corrupt = result.events.filter { $0.hasPrefix("corrupt") }
        #expect(corrupt.count == 2, "\(result.events)")
        #expect(result.events.filter { $0.hasPrefix("memberEnd") }.count == 3, "\(result.events)")
        #expect(result.events.last?.hasPrefix("truncated") == true, "\(result.events)")
    }

    /// The LZ4 frame header checksum: the second byte of XXH32 of the descriptor, seed 0.
    static func lz4HeaderChecksum(_ descriptor: [UInt8]) -> UInt8 {
        // liblz4 computes it when it writes a frame: a frame with the same descriptor gives the byte.
        var preferences = LZ4F_preferences_t()
        preferences.frameInfo.blockSizeID = LZ4F_blockSizeID_t(UInt32(descriptor[1] >> 4 & 7))
        preferences.frameInfo.blockMode = descriptor[0] & 0x20 != 0 ? LZ4F_blockIndependent : LZ4F_blockLinked
        preferences.frameInfo.contentSize = descriptor[2...9].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        preferences.frameInfo.contentChecksumFlag =
            descriptor[0] & 0x04 != 0 ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum
        preferences.frameInfo.blockChecksumFlag =
            descriptor[0] & 0x10 != 0 ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum
        var header = [UInt8](repeating: 0, count: 64)
        let context = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: 1)
        defer { context.deallocate() }
        precondition(LZ4F_createCompressionContext(context, UInt32(LZ4F_VERSION)) == 0)
        defer { LZ4F_freeCompressionContext(context.pointee) }
        let written = LZ4F_compressBegin(context.pointee, &header, header.count, &preferences)
        precondition(LZ4F_isError(written) == 0 && written == 15)
        return header[14]
    }

    // MARK: - Detection

    @Test func detection() {
        func detect(_ bytes: [UInt8], ended: Bool = false) -> MemberInflater.Detected {
            MemberInflater.detect(FramerInput(bytes), at: 0, ended: ended)
        }
        #expect(detect([0x28, 0xB5, 0x2F, 0xFD]) == .zstd)
        #expect(detect([0x5D, 0x2A, 0x4D, 0x18]) == .zstd)
        #expect(detect([0x5F, 0x2A, 0x4D, 0x18]) == .zstd)
        #expect(detect([0x04, 0x22, 0x4D, 0x18]) == .lz4)
        #expect(detect([0x1F, 0x8B]) == .gzip)
        #expect(detect([0x28, 0xB5]) == .undecided)
        #expect(detect([0x28, 0xB5], ended: true) == .none)
        #expect(detect([0x04, 0x22, 0x4D, 0x19]) == .none)
        #expect(detect(Array("WARC/1.1".utf8)) == .none)
    }
}

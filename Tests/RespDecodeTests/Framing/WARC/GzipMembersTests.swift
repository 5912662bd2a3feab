import CZlib
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The two ways a member is inflated -- whole by libdeflate, or piece by piece by zlib -- give the same events.
@Suite("gzip members")
struct GzipMembersTests {
    /// The events for `input` fed in pieces of `pieces` bytes (cycled), with the output of consecutive `.output` events
    /// joined, so that how output was cut does not count; also how many members were inflated whole. `file`: the
    /// input says it is a regular file (``FramerInput/readsWithoutWaiting``). `outputSize`: the output buffer offered
    /// to each call; from ``GzipMembers/wholeCapacity`` up, whole members are inflated straight into it, and their
    /// `.wholeMember` event is written as the `memberStart`, output and `memberEnd` it stands for.
    static func events(_ input: [UInt8], pieces: [Int], file: Bool = false, outputSize: Int = 4096) -> (
        events: [String], whole: Int
    ) {
        let (events, whole, _, _) = eventsAndHeld(input, pieces: pieces, file: file, outputSize: outputSize)
        return (events, whole)
    }

    /// ``events(_:pieces:file:outputSize:)``, with the most compressed bytes the input held unread at any time and
    /// how often libdeflate was called.
    static func eventsAndHeld(_ input: [UInt8], pieces: [Int], file: Bool = false, outputSize: Int = 4096) -> (
        events: [String], whole: Int, held: Int, attempts: Int
    ) {
        let members = GzipMembers()
        var compressed = FramerInput()
        compressed.readsWithoutWaiting = file
        var held = 0
        var ended = false
        var out = [UInt8](repeating: 0, count: outputSize)
        var events: [String] = []
        var pending: [UInt8] = []
        func flush() {
            if !pending.isEmpty { events.append("output \(pending.count) crc \(crc(pending))") }
            pending = []
        }
        var start = 0
        var k = 0
        while true {
            let event = out.withUnsafeMutableBufferPointer { members.next(from: &compressed, ended: ended, into: $0) }
            switch event {
            case .output(let n):
                pending += out[0..<n]
            case .wholeMember(let start, let n):
                flush()
                events.append("\(MemberEvent.memberStart(start))")
                pending += out[0..<n]
                flush()
                events.append("\(MemberEvent.memberEnd(start))")
            case .needInput:
                let end = min(input.count, start + max(1, pieces[k % pieces.count]))
                k += 1
                compressed.write(input[start..<end])
                held = max(held, compressed.readableBytes)
                start = end
                if start == input.count { ended = true }
            case .end:
                flush()
                return (events, members.wholeMemberCount, held, members.wholeAttemptCount)
            default:
                flush()
                events.append("\(event)")
            }
        }
    }

    static func crc(_ bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }
    }

    /// `member` (as zlib writes it: a 10-byte header, FLG 0) with FHCRC set and a header CRC, right or wrong.
    static func withHeaderCRC(_ member: [UInt8], right: Bool) -> [UInt8] {
        var header = Array(member[0..<10])
        header[3] |= 0x02
        let value = UInt16(truncatingIfNeeded: crc(header)) ^ (right ? 0 : 0x5A5A)
        return header + [UInt8(value & 0xFF), UInt8(value >> 8)] + member[10...]
    }

    @Test func wholeAndPieceByPieceAgree() throws {
        var generator = SplitMix64(seed: 7)
        let small = (0..<4).map { k in
            WARCFixtures.gzipMember(Array("member \(k) ".utf8) + Array(repeating: 0x61, count: 100 * k))
        }
        // Larger than the whole-member capacity: zlib inflates it; little-compressible so it is not tiny either.
        let largeBody = (0..<(GzipMembers.wholeCapacity + 100_000)).map { _ in
            UInt8.random(in: 0x61...0x64, using: &generator)
        }
        let large = WARCFixtures.gzipMember(largeBody)
        var corrupt = WARCFixtures.gzipMember(Array("this member is damaged".utf8))
        corrupt[12] ^= 0xFF
        var badTrailer = small[2]
        badTrailer[badTrailer.count - 6] ^= 0x01
        let input =
            small[0] + large + small[1] + small[2] + Self.withHeaderCRC(small[3], right: false) + corrupt
            + Self.withHeaderCRC(small[3], right: true) + badTrailer + Array("plain".utf8) + small[0]
        let atOnce = Self.events(input, pieces: [input.count])
        // Whole: small[0]; not large (too big), not small[1] (zlib until a member fits again), small[2]; not the FHCRC
        // members, the corrupt one or the bad trailer; small[0] after the plain run.
        #expect(atOnce.whole == 3)
        #expect(atOnce.events.filter { $0.hasPrefix("corrupt") }.count == 3, "\(atOnce.events)")
        #expect(atOnce.events.filter { $0.hasPrefix("memberEnd") }.count == 6, "\(atOnce.events)")
        for pieces in [
            [1], [7, 300, 4096], [65_536],
            [(1...5).map { _ in Int.random(in: 1...20_000, using: &generator) }].flatMap { $0 },
        ] {
            let split = Self.events(input, pieces: pieces)
            #expect(split.events == atOnce.events, "pieces \(pieces)")
        }
        // Inflated straight into an output with room for a whole member: the same events, the same members whole,
        // and `.wholeMember` events indeed given.
        for pieces in [[input.count], [7, 300, 4096], [65_536]] {
            for file in [false, true] {
                let direct = Self.events(input, pieces: pieces, file: file, outputSize: GzipMembers.wholeCapacity)
                #expect(direct.events == atOnce.events, "direct, file \(file), pieces \(pieces)")
                if file || pieces == [input.count] {
                    #expect(direct.whole == atOnce.whole, "direct, file \(file), pieces \(pieces)")
                }
            }
        }
        let members = GzipMembers()
        var compressed = FramerInput(small[1] + small[2])
        var out = [UInt8](repeating: 0, count: GzipMembers.wholeCapacity)
        let first = out.withUnsafeMutableBufferPointer { members.next(from: &compressed, ended: true, into: $0) }
        let body = Array("member 1 ".utf8) + Array(repeating: UInt8(0x61), count: 100)
        #expect(first == .wholeMember(0, count: body.count))
        #expect(Array(out[0..<body.count]) == body)
        let smaller = out.withUnsafeMutableBufferPointer {
            members.next(from: &compressed, ended: true, into: UnsafeMutableBufferPointer(rebasing: $0[0..<4096]))
        }
        #expect(smaller == .memberStart(Int64(small[1].count)), "an output too small for a whole member: a copy")
        // Each member alone, at once, agrees with zlib's verdict on it piece by piece.
        for member in small + [large, corrupt, badTrailer, Self.withHeaderCRC(small[1], right: false)] {
            #expect(Self.events(member, pieces: [member.count]).events == Self.events(member, pieces: [1]).events)
        }
        // Read from a file, pieces change nothing either: cut members wait for the rest and are inflated whole as
        // they are at once (the corrupt ones after the input ended, by zlib).
        for pieces in [[1], [7, 300, 4096], [65_536]] {
            let split = Self.events(input, pieces: pieces, file: true)
            #expect(split.events == atOnce.events, "file, pieces \(pieces)")
            #expect(split.whole == atOnce.whole, "file, pieces \(pieces)")
        }
    }

    /// From a file, a member cut by the end of each read is inflated whole once the next read completes it; from a
    /// pipe, zlib takes it at once (nothing may wait on a producer).
    @Test func membersCutByAReadWaitForTheRestOnlyInAFile() throws {
        var generator = SplitMix64(seed: 11)
        // 40 members of 2-30 KB of text (compressing to about two fifths): most cross a 16 KB read.
        let members = (0..<40).map { k in
            let count = Int.random(in: 2_000...30_000, using: &generator)
            return WARCFixtures.gzipMember(
                Array("member \(k) ".utf8) + (0..<count).map { _ in UInt8.random(in: 0x61...0x6A, using: &generator) })
        }
        let input = members.flatMap { $0 }
        let atOnce = Self.events(input, pieces: [input.count])
        #expect(atOnce.whole == 40)
        let file = Self.eventsAndHeld(input, pieces: [16_384], file: true)
        #expect(file.events == atOnce.events)
        #expect(file.whole == 40)
        // A member with no member header after it in the input is not tried before the next read: libdeflate is
        // called once for each member, never on one cut short (which it would inflate as far as it goes to find so).
        #expect(file.attempts == 40, "libdeflate called \(file.attempts) times for 40 members")
        let pipe = Self.events(input, pieces: [16_384])
        #expect(pipe.events == atOnce.events)
        #expect(pipe.whole < 40, "\(pipe.whole) of 40 members whole from a pipe")
        // A file that ends inside a member: the cut member is zlib's to report, as from a pipe.
        let cut = Array(input.dropLast(100))
        let fileCut = Self.events(cut, pieces: [16_384], file: true)
        #expect(fileCut.events == Self.events(cut, pieces: [cut.count]).events)
        #expect(fileCut.events.last?.hasPrefix("truncated") == true, "\(fileCut.events.suffix(2))")
    }

    /// A member that libdeflate never takes (corrupt) is waited for only up to `wholeCapacity + cutSlack` bytes of
    /// input, then zlib reports it: what a file's input holds stays bounded however much follows.
    @Test func aWaitingMemberHoldsABoundedInput() throws {
        var generator = SplitMix64(seed: 13)
        var corrupt = WARCFixtures.gzipMember(Array(repeating: 0x61, count: 5_000))
        corrupt[14] ^= 0xFF
        // Over 1.5 MB of valid members after it, little-compressible so that they take room.
        let valid = (0..<60).map { k in
            WARCFixtures.gzipMember(
                Array("after \(k) ".utf8) + (0..<60_000).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) })
        }
        let input = corrupt + valid.flatMap { $0 }
        #expect(input.count > 3 * (GzipMembers.wholeCapacity + GzipMembers.cutSlack))
        let file = Self.eventsAndHeld(input, pieces: [16_384], file: true)
        #expect(file.held <= GzipMembers.wholeCapacity + GzipMembers.cutSlack + 16_384, "held \(file.held) bytes")
        #expect(file.held > GzipMembers.wholeCapacity, "the corrupt member was waited for: held \(file.held) bytes")
        #expect(file.events == Self.events(input, pieces: [input.count]).events)
        #expect(file.events.filter { $0.hasPrefix("corrupt") }.count == 1, "\(file.events.prefix(3))")
    }
}

import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Malformed and hostile inputs: every one must fail cleanly (or, where noted, succeed), fast, without crashing.
@Suite struct BinaryPlistHostileTests {
    typealias B = BinaryPlistBuilder

    /// A valid file exercising every object type, for truncation and mutation.
    static let sample: [UInt8] = {
        var b = B(refSize: 1)
        let keys = ["name", "count", "big", "ratio", "float", "when", "blob", "flags", "set", "uid", "wide", "nested"]
            .map { b.ascii($0) }
        let name = b.ascii("hello \"world\"\n")
        let count = b.int(-5)
        let big = b.raw([0x14] + [UInt8](repeating: 0x12, count: 16))
        let ratio = b.real(0.1)
        let float = b.float(1.5)
        let when = b.date(123_456_789.25)
        let blob = b.data(Array(0..<20))
        let t = b.bool(true)
        let f = b.bool(false)
        let n = b.null()
        let flags = b.array([t, f, n])
        let set = b.set([count, ratio])
        let uid = b.uid([0x01, 0x02])
        let wide = b.utf16("Grüße 😀")
        let innerKey = b.ascii("k")
        let nested = b.dict([innerKey, innerKey], [flags, set])
        let top = b.dict(keys, [name, count, big, ratio, float, when, blob, flags, set, uid, wide, nested])
        return b.build(top: top)
    }()

    @Test func sampleIsValid() {
        guard case .json(let text) = outcome(Self.sample) else {
            Issue.record("sample does not read")
            return
        }
        #expect(JSONValidator.isValid(Array(text.utf8)))
        #expect(text.hasPrefix("{\"name\":\"hello \\\"world\\\"\\n\",\"count\":-5,"))
    }

    // MARK: Header and trailer

    @Test func badMagic() {
        var file = Self.sample
        file[7] = UInt8(ascii: "1")
        #expect(outcome(file) == .failure(.invalidPropertyList))
        file = Self.sample
        file[0] = UInt8(ascii: "B")
        #expect(outcome(file) == .failure(.invalidPropertyList))
        #expect(outcome(Array("bplist15".utf8) + Self.sample.dropFirst(8)) == .failure(.invalidPropertyList))
        #expect(outcome([]) == .failure(.invalidPropertyList))
        #expect(outcome(Array("bplist0".utf8)) == .failure(.invalidPropertyList))
        #expect(outcome(Array("<?xml version=\"1.0\"?>".utf8)) == .failure(.invalidPropertyList))
    }

    @Test func truncatedTrailer() {
        #expect(outcome(Array("bplist00".utf8)) == .failure(.invalidPropertyList))
        #expect(outcome(Array("bplist00".utf8) + [UInt8](repeating: 0, count: 20)) == .failure(.invalidPropertyList))
        #expect(outcome(Array("bplist00".utf8) + [UInt8](repeating: 0, count: 32)) == .failure(.invalidPropertyList))
        #expect(outcome(Array(Self.sample.dropLast(1))) == .failure(.invalidPropertyList))
    }

    /// A file whose trailer fields are replaced.
    static func patchedTrailer(
        offsetSize: Int? = nil, refSize: Int? = nil, objectCount: UInt64? = nil,
        topObject: UInt64? = nil, tableOffset: UInt64? = nil
    ) -> [UInt8] {
        var file = sample
        let t = file.count - 32
        if let offsetSize { file[t + 6] = UInt8(offsetSize) }
        if let refSize { file[t + 7] = UInt8(refSize) }
        if let objectCount { file.replaceSubrange(t + 8..<t + 16, with: B.bigEndian(objectCount, size: 8)) }
        if let topObject { file.replaceSubrange(t + 16..<t + 24, with: B.bigEndian(topObject, size: 8)) }
        if let tableOffset { file.replaceSubrange(t + 24..<t + 32, with: B.bigEndian(tableOffset, size: 8)) }
        return file
    }

    @Test func trailerFields() {
        for size in [0, 9, 16, 255] {
            #expect(outcome(Self.patchedTrailer(offsetSize: size)) == .failure(.invalidPropertyList))
            #expect(outcome(Self.patchedTrailer(refSize: size)) == .failure(.invalidPropertyList))
        }
        #expect(outcome(Self.patchedTrailer(objectCount: 0)) == .failure(.invalidPropertyList))
        #expect(outcome(Self.patchedTrailer(topObject: 1 << 40)) == .failure(.invalidPropertyList))
        #expect(outcome(Self.patchedTrailer(topObject: UInt64.max)) == .failure(.invalidPropertyList))
        #expect(outcome(Self.patchedTrailer(tableOffset: 0)) == .failure(.invalidPropertyList))
        #expect(outcome(Self.patchedTrailer(tableOffset: 8)) == .failure(.invalidPropertyList))
        #expect(
            outcome(Self.patchedTrailer(tableOffset: UInt64(Self.sample.count - 32))) == .failure(.invalidPropertyList))
        #expect(outcome(Self.patchedTrailer(tableOffset: UInt64.max)) == .failure(.invalidPropertyList))
    }

    @Test func hugeObjectCount() {
        #expect(outcome(Self.patchedTrailer(objectCount: 1 << 62)) == .failure(.invalidPropertyList))
        #expect(outcome(Self.patchedTrailer(objectCount: UInt64.max)) == .failure(.invalidPropertyList))
        #expect(
            outcome(Self.patchedTrailer(objectCount: 1 << 62, topObject: (1 << 62) - 1))
                == .failure(.invalidPropertyList))
        // Largest offsets with the largest count: 8-byte offsets times 2^61 would overflow a naive product.
        #expect(outcome(Self.patchedTrailer(offsetSize: 8, objectCount: 1 << 61)) == .failure(.invalidPropertyList))
    }

    @Test func offsetTableFarAway() {
        #expect(outcome(Self.patchedTrailer(tableOffset: 1 << 40)) == .failure(.invalidPropertyList))
        #expect(outcome(Self.patchedTrailer(tableOffset: 1 << 63)) == .failure(.invalidPropertyList))
    }

    @Test func objectOffsetsOutsideTheObjectArea() {
        for bad: UInt64 in [0, 7, 1 << 40] {
            var b = B()
            let top = b.int(1)
            var file = b.build(top: top, offsetSize: 8)
            // The table is the 8 bytes before the trailer.
            file.replaceSubrange(file.count - 40..<file.count - 32, with: B.bigEndian(bad, size: 8))
            #expect(outcome(file) == .failure(.invalidPropertyList), "offset \(bad)")
        }
        // An offset pointing into the offset table itself.
        var b = B()
        let top = b.int(1)
        var file = b.build(top: top, offsetSize: 1)
        file[file.count - 33] = UInt8(file.count - 33)
        #expect(outcome(file) == .failure(.invalidPropertyList))
        // An unreferenced object with a bad offset still makes the file invalid.
        var c = B()
        let good = c.int(1)
        _ = c.int(2)
        var file2 = c.build(top: good, offsetSize: 1)
        file2[file2.count - 33] = 200
        #expect(outcome(file2) == .failure(.invalidPropertyList))
    }

    // MARK: Declared lengths beyond the file

    @Test func arrayLength2to31() {
        #expect(singleOutcome([0xAF, 0x12, 0x7F, 0xFF, 0xFF, 0xFF]) == .failure(.invalidPropertyList))
        #expect(
            singleOutcome([0xAF, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
                == .failure(.invalidPropertyList))
        #expect(singleOutcome([0xDF, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0]) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0xCF, 0x12, 0xFF, 0xFF, 0xFF, 0xFF]) == .failure(.invalidPropertyList))
    }

    @Test func stringLength2to40() {
        let length: [UInt8] = [0x13] + B.bigEndian(1 << 40, size: 8)
        #expect(singleOutcome([0x5F] + length + Array("abc".utf8)) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x6F] + length + [0, 0x41]) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x4F] + length + [1, 2, 3]) == .failure(.invalidPropertyList))
        #expect(
            singleOutcome([0x4F, 0x13, 0x7F] + [UInt8](repeating: 0xFF, count: 7)) == .failure(.invalidPropertyList))
        #expect(
            singleOutcome([0x6F, 0x13, 0x7F] + [UInt8](repeating: 0xFF, count: 7)) == .failure(.invalidPropertyList))
    }

    @Test func objectsEndingInTheOffsetTable() {
        // Scalars whose payload runs into the offset table.
        for object: [UInt8] in [
            [0x11, 0x01], [0x13, 0, 0, 0], [0x14, 0], [0x23, 0, 0], [0x22, 0], [0x33, 0, 0, 0],
            [0x45, 1, 2], [0x55, 0x61], [0x63, 0, 0x61], [0x83, 0], [0x8F, 0], [0xA3, 0, 0],
            [0xD2, 0, 0, 0],
        ] {
            #expect(singleOutcome(object) == .failure(.invalidPropertyList), "object \(object)")
        }
    }

    // MARK: References

    @Test func referenceOutOfRange() throws {
        var b = B()
        let one = b.int(1)
        let top = b.array([one, 7])
        let result = readFull(b.build(top: top))
        guard case .failure(let error) = result else {
            Issue.record("expected an error")
            return
        }
        #expect(error.code == .invalidPropertyList)
        // The array is the second object: header (8) + int (2).
        #expect(error.location == RecordError.Location(offset: 10))

        var c = B(refSize: 8)
        let key = c.ascii("k")
        let top2 = c.dict([key], [1 << 62])
        #expect(outcome(c.build(top: top2)) == .failure(.invalidPropertyList))
        var d = B(refSize: 8)
        let value = d.int(1)
        let top3 = d.dict([Int.max], [value])
        #expect(outcome(d.build(top: top3)) == .failure(.invalidPropertyList))
    }

    @Test func selfCycle() {
        var b = B()
        let top = b.array([b.nextIndex])
        #expect(outcome(b.build(top: top)) == .failure(.invalidPropertyList))
        var c = B()
        let key = c.ascii("self")
        let dict = c.dict([key], [c.nextIndex])
        #expect(outcome(c.build(top: dict)) == .failure(.invalidPropertyList))
        // The literal 5-byte-body set that contains itself.
        #expect(outcome(B.single([0xC1, 0x00])) == .failure(.invalidPropertyList))
    }

    @Test func twoCycle() {
        var b = B()
        let first = b.array([1])
        _ = b.array([0])
        #expect(outcome(b.build(top: first)) == .failure(.invalidPropertyList))
        // A cycle below an acyclic part, through a dictionary and a set.
        var c = B()
        let leaf = c.int(1)
        let key = c.ascii("k")
        let dict = c.dict([key], [c.nextIndex + 1]) // → the array below
        let top = c.array([leaf, c.nextIndex + 1]) // → the set below
        _ = c.set([leaf, dict])
        #expect(outcome(c.build(top: top)) == .failure(.invalidPropertyList))
    }

    @Test func cycleErrorWinsOverDepthWhenShallow() {
        var b = B()
        let top = b.array([b.nextIndex])
        let limits = BinaryPlistReader.Limits(maxDepth: 2, maxObjects: 100, maxValueBytes: 1000)
        #expect(outcome(b.build(top: top), limits: limits) == .failure(.invalidPropertyList))
    }

    /// Nested one-element arrays, `depth` of them, the innermost empty; the top is the outermost.
    static func chain(_ depth: Int) -> [UInt8] {
        var b = B(refSize: 4)
        var inner = b.array([])
        for _ in 1..<depth { inner = b.array([inner]) }
        return b.build(top: inner)
    }

    @Test func depthLimit() {
        #expect(
            outcome(Self.chain(512)) == .json(String(repeating: "[", count: 512) + String(repeating: "]", count: 512)))
        #expect(outcome(Self.chain(513)) == .failure(.limitExceeded))
        #expect(outcome(Self.chain(100_000)) == .failure(.limitExceeded))
        let one = BinaryPlistReader.Limits(maxDepth: 1, maxObjects: 100, maxValueBytes: 1000)
        #expect(outcome(Self.chain(1), limits: one) == .json("[]"))
        #expect(outcome(Self.chain(2), limits: one) == .failure(.limitExceeded))
        let zero = BinaryPlistReader.Limits(maxDepth: 0, maxObjects: 100, maxValueBytes: 1000)
        #expect(outcome(Self.chain(1), limits: zero) == .failure(.limitExceeded))
        #expect(singleOutcome([0x10, 0x01]) == .json("1"))
        #expect(outcome(B.single([0x10, 0x01]), limits: zero) == .json("1"))
    }

    @Test func depthCountsDictionariesAndSets() {
        var b = B()
        let key = b.ascii("k")
        let empty = b.set([])
        let dict = b.dict([key], [empty])
        let top = b.array([dict])
        let three = BinaryPlistReader.Limits(maxDepth: 3, maxObjects: 100, maxValueBytes: 1000)
        let two = BinaryPlistReader.Limits(maxDepth: 2, maxObjects: 100, maxValueBytes: 1000)
        #expect(outcome(b.build(top: top), limits: three) == .json("[{\"k\":[]}]"))
        #expect(outcome(b.build(top: top), limits: two) == .failure(.limitExceeded))
    }

    /// `levels` arrays, each holding `fanOut` references to the one below; the bottom holds integers.
    static func dag(levels: Int, fanOut: Int) -> [UInt8] {
        var b = B()
        var below = b.int(1)
        for _ in 0..<levels { below = b.array([Int](repeating: below, count: fanOut)) }
        return b.build(top: below)
    }

    @Test func expandingDAG() {
        let file = Self.dag(levels: 7, fanOut: 10)
        #expect(file.count == 127)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(outcome(file) == .failure(.limitExceeded))
        #expect(clock.now - start < .seconds(5))
        // A small DAG within the budget expands fully: 1 + 3 + 9 + 27 = 40 objects.
        let small = Self.dag(levels: 3, fanOut: 3)
        let limits = BinaryPlistReader.Limits(maxDepth: 10, maxObjects: 40, maxValueBytes: 1000)
        let nine = "[[1,1,1],[1,1,1],[1,1,1]]"
        #expect(outcome(small, limits: limits) == .json("[\(nine),\(nine),\(nine)]"))
        let tight = BinaryPlistReader.Limits(maxDepth: 10, maxObjects: 39, maxValueBytes: 1000)
        #expect(outcome(small, limits: tight) == .failure(.limitExceeded))
    }

    @Test func objectBudgetCountsKeys() {
        var b = B()
        let key = b.ascii("a")
        let value = b.int(1)
        let top = b.dict([key], [value])
        let file = b.build(top: top)
        #expect(outcome(file, limits: .init(maxDepth: 5, maxObjects: 3, maxValueBytes: 100)) == .json("{\"a\":1}"))
        #expect(
            outcome(file, limits: .init(maxDepth: 5, maxObjects: 2, maxValueBytes: 100)) == .failure(.limitExceeded))
        #expect(
            outcome(file, limits: .init(maxDepth: 5, maxObjects: 0, maxValueBytes: 100)) == .failure(.limitExceeded))
    }

    @Test func valueByteBudget() {
        var b = B()
        let s = b.ascii(String(repeating: "x", count: 100))
        let top = b.array([s, s, s])
        let file = b.build(top: top)
        // 3 * 102 + 2 commas + 2 brackets = 310 bytes.
        let x100 = "\"" + String(repeating: "x", count: 100) + "\""
        #expect(
            outcome(file, limits: .init(maxDepth: 5, maxObjects: 100, maxValueBytes: 310))
                == .json("[" + [x100, x100, x100].joined(separator: ",") + "]"))
        #expect(
            outcome(file, limits: .init(maxDepth: 5, maxObjects: 100, maxValueBytes: 309)) == .failure(.limitExceeded))
        #expect(
            outcome(file, limits: .init(maxDepth: 5, maxObjects: 100, maxValueBytes: 150)) == .failure(.limitExceeded))
        // A large string shared many times fails on the budget, not after writing everything.
        var c = B(refSize: 2)
        let big = c.data([UInt8](repeating: 7, count: 30_000))
        let many = c.array([Int](repeating: big, count: 1_000))
        let limits = BinaryPlistReader.Limits(maxDepth: 5, maxObjects: 1_000_000, maxValueBytes: 1 << 20)
        #expect(outcome(c.build(top: many), limits: limits) == .failure(.limitExceeded))
        // Scalars only.
        let hundred = B.single([0x10, 100])
        #expect(
            outcome(hundred, limits: .init(maxDepth: 1, maxObjects: 1, maxValueBytes: 2)) == .failure(.limitExceeded))
        #expect(outcome(hundred, limits: .init(maxDepth: 1, maxObjects: 1, maxValueBytes: 3)) == .json("100"))
    }

    // MARK: Truncation and mutation

    @Test func everyTruncation() {
        let file = Self.sample
        for length in 0..<file.count {
            let result = outcome(Array(file.prefix(length)))
            #expect(result == .failure(.invalidPropertyList), "length \(length)")
        }
    }

    @Test func everySingleByteDeletion() {
        let file = Self.sample
        for index in 0..<file.count {
            var copy = file
            copy.remove(at: index)
            if case .json(let text) = outcome(copy) {
                #expect(JSONValidator.isValid(Array(text.utf8)), "deletion at \(index)")
            }
        }
    }

    @Test func randomMutations() {
        var rng = SplitMix64(seed: 0x5EED_B915)
        let limits = BinaryPlistReader.Limits(maxDepth: 64, maxObjects: 100_000, maxValueBytes: 1 << 20)
        let files = [Self.sample, Self.dag(levels: 3, fanOut: 4), Self.chain(20)]
        var accepted = 0
        for round in 0..<20_000 {
            var file = files[round % files.count]
            let edits = Int.random(in: 1...4, using: &rng)
            for _ in 0..<edits {
                let position = Int.random(in: 0..<file.count, using: &rng)
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: file[position] = 0xFF
                case 1: file[position] = 0x00
                case 2: file[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
                case 3: file[position] = 0x0F | (UInt8.random(in: 0...15, using: &rng) << 4)
                default: file[position] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            switch readFull(file, limits: limits) {
            case .success(let json):
                accepted += 1
                #expect(JSONValidator.isValid(json), "round \(round)")
            case .failure(let error):
                #expect(error.code == .invalidPropertyList || error.code == .limitExceeded)
            }
        }
        // Some mutations (inside string contents, for instance) keep the file valid.
        #expect(accepted > 0)
    }
}

public import RespDecode

/// The framing contract's first rule, checked: any split of the same input gives the same items. One verifier for
/// every framer's tests and for the fuzz targets (library's public API only).
public enum FramerSplits {
    /// Feeds `input` to `framer` the way the stream runner does — written into one ``FramerInput`` in pieces of the
    /// given sizes (the rest in one piece), decoding after each, then `decodeLast` — and returns every item.
    /// - Parameters:
    ///   - framer: the framer, fresh.
    ///   - input: the whole input.
    ///   - pieces: the sizes of the pieces written before the rest.
    ///   - fromFile: the input says it is a regular file (``FramerInput/readsWithoutWaiting``), as the stream
    ///     runner's does for one.
    ///   - observe: called after each piece is decoded, with the framer and the input (memory bounds).
    /// - Returns: every item, in order.
    public static func feed<Framer: RecordFramer>(
        _ framer: inout Framer, _ input: [UInt8], pieces: [Int] = [], fromFile: Bool = false,
        observe: ((Framer, FramerInput) -> Void)? = nil
    ) -> [FramedItem] {
        var buffer = FramerInput()
        buffer.readsWithoutWaiting = fromFile
        var items: [FramedItem] = []
        var start = 0
        for size in pieces + [input.count] where start < input.count {
            let end = min(input.count, start + size)
            buffer.write(input[start..<end])
            while let item = framer.decode(buffer: &buffer) { items.append(item) }
            observe?(framer, buffer)
            start = end
        }
        while let item = framer.decodeLast(buffer: &buffer, seenEOF: true) { items.append(item) }
        observe?(framer, buffer)
        return items
    }

    /// Random piece sizes from 1 to `maxPiece` that cover `count` bytes.
    public static func randomPieces(covering count: Int, maxPiece: Int, using generator: inout SplitMix64) -> [Int] {
        var pieces: [Int] = []
        var total = 0
        while total < count {
            let size = Int(generator.next() % UInt64(maxPiece)) + 1
            pieces.append(size)
            total += size
        }
        return pieces
    }

    /// What ``verify(_:byteByByte:randomSplits:maxPiece:seed:splits:fromFile:make:describe:state:)`` found.
    public struct Verdict {
        /// The items of the input framed whole.
        public var items: [FramedItem]
        /// One line per split that disagreed with the whole run (empty when the contract holds).
        public var mismatches: [String]
    }

    /// Frames `input` with framers from `make`: whole, byte by byte (when `byteByByte`), in each of `splits`, and in
    /// `randomSplits` random splits (pieces of 1 to `maxPiece` bytes, from `seed`). Every run must give the same
    /// items as the whole run, as `describe` tells them (and the same `state` of the framer at the end: what it
    /// counted). Stops at the first random split that disagrees. `fromFile`: every run's input says it is a regular
    /// file (see ``feed(_:_:pieces:fromFile:observe:)``).
    public static func verify<Framer: RecordFramer>(
        _ input: [UInt8], byteByByte: Bool = true, randomSplits: Int = 50, maxPiece: Int = 9, seed: UInt64? = nil,
        splits: [[Int]] = [], fromFile: Bool = false, make: () -> Framer, describe: (FramedItem) -> String,
        state: (Framer) -> String = { _ in "" }
    ) -> Verdict {
        func run(_ pieces: [Int]) -> (items: [FramedItem], summary: [String]) {
            var framer = make()
            let items = feed(&framer, input, pieces: pieces, fromFile: fromFile)
            return (items, items.map(describe) + [state(framer)])
        }
        let whole = run([])
        var mismatches: [String] = []
        func compare(_ pieces: [Int], _ name: String) -> Bool {
            let summary = run(pieces).summary
            guard summary != whole.summary else { return true }
            let k =
                zip(summary, whole.summary).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(summary.count, whole.summary.count)
            func show(_ lines: [String]) -> String { k < lines.count ? lines[k] : "(none)" }
            mismatches.append(
                "\(name) differs from whole (\(summary.count - 1) items against \(whole.summary.count - 1)); "
                    + "item \(k) whole: \(show(whole.summary)); split: \(show(summary)); pieces: \(pieces.prefix(40))")
            return false
        }
        if byteByByte { _ = compare(Array(repeating: 1, count: input.count), "byte by byte") }
        for pieces in splits { _ = compare(pieces, "a given split") }
        var generator = SplitMix64(seed: seed ?? UInt64(input.count))
        for _ in 0..<randomSplits {
            let pieces = randomPieces(covering: input.count, maxPiece: maxPiece, using: &generator)
            if !compare(pieces, "a random split") { break }
        }
        return Verdict(items: whole.items, mismatches: mismatches)
    }
}

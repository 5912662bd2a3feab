import RespDecode

/// A framer: whole input and the same input in pieces give the same lines, each valid JSON, one per item.
enum FramerTarget {
    static func run<F: RecordFramer>(_ data: UnsafeBufferPointer<UInt8>, make: () -> F) {
        let decoder = CompoundDecoder(configuration: FuzzLimits.configuration())
        var whole = make()
        whole.append(data)
        whole.finish()
        var seq = 0
        let expected = lines(&whole, decoder, seq: &seq)

        var split = make()
        var pieces = Pieces(data)
        var start = 0
        var got: [[UInt8]] = []
        seq = 0
        while start < data.count {
            let end = min(data.count, start + pieces.next()!)
            split.append(UnsafeBufferPointer(rebasing: data[start..<end]))
            got += lines(&split, decoder, seq: &seq)
            start = end
        }
        split.finish()
        got += lines(&split, decoder, seq: &seq)
        guard got == expected else {
            let k = (0..<min(got.count, expected.count)).first { got[$0] != expected[$0] } ?? min(got.count, expected.count)
            func show(_ lines: [[UInt8]]) -> String {
                k < lines.count ? String(decoding: lines[k].dropLast().prefix(400), as: UTF8.self) : "(none)"
            }
            violated(
                "\(F.self): \(expected.count) lines whole, \(got.count) in pieces; line \(k) whole: \(show(expected))"
                    + " in pieces: \(show(got))")
        }
    }

    /// The lines of the items the framer has ready, each checked.
    private static func lines<F: RecordFramer>(_ framer: inout F, _ decoder: CompoundDecoder, seq: inout Int)
        -> [[UInt8]]
    {
        var result: [[UInt8]] = []
        let out = OutputBuffer()
        while let item = framer.next() {
            out.removeAll()
            _ = decoder.writeLine(for: item, source: .init(seq: seq, offset: item.offset, input: nil), into: out)
            seq += 1
            let line = out.bytes
            guard line.last == UInt8(ascii: "\n"), !line.dropLast().contains(UInt8(ascii: "\n")) else {
                violated("\(F.self): a line is not one line")
            }
            JSONCheck.requireValid(UnsafeBufferPointer(rebasing: line.dropLast()), "\(F.self) line")
            result.append(Array(line))
        }
        return result
    }
}

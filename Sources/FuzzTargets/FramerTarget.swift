import RespDecode

/// A framer: whole input and the same input in pieces give the same lines, each valid JSON, one per item; and each
/// item written as `respdecode frame` writes it reads back, through the ndjson framer, as an item that decodes to the
/// same line (`frame` then `--input ndjson` equals a direct run, issue 8).
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
            let source = ResultLine.Source(seq: seq, offset: item.offset, input: nil)
            _ = decoder.writeLine(for: item, source: source, into: out)
            seq += 1
            let line = out.bytes
            guard line.last == UInt8(ascii: "\n"), !line.dropLast().contains(UInt8(ascii: "\n")) else {
                violated("\(F.self): a line is not one line")
            }
            JSONCheck.requireValid(UnsafeBufferPointer(rebasing: line.dropLast()), "\(F.self) line")
            let framedLine = throughFrame(item, decoder, source: source)
            guard framedLine == Array(line) else {
                violated(
                    "\(F.self): through frame \(String(decoding: framedLine.prefix(400), as: UTF8.self)) direct "
                        + String(decoding: line.prefix(400), as: UTF8.self))
            }
            result.append(Array(line))
        }
        return result
    }

    /// The line `item` decodes to after a trip through `frame`'s ndjson line and the ndjson framer; the id that
    /// `frame` gives a record without one (INPUT:OFFSET) is taken off again, as it is no part of the record.
    private static func throughFrame(_ item: FramedItem, _ decoder: CompoundDecoder, source: ResultLine.Source)
        -> [UInt8]
    {
        let framed = OutputBuffer()
        _ = RecordLineWriter().writeLine(for: item, source: source, into: framed)
        var reader = NDJSONFramer(limits: FuzzLimits.limits)
        Array(framed.bytes).withUnsafeBufferPointer { reader.append($0) }
        reader.finish()
        guard var back = reader.next(), reader.next() == nil else {
            violated("frame's line is not one ndjson record: \(String(decoding: framed.bytes.prefix(400), as: UTF8.self))")
        }
        switch (item, back) {
        case (.record(let original), .record(var record)):
            record.id = original.id
            back = .record(record)
        case (.failure(let original), .failure(var failure)):
            failure.id = original.id
            back = .failure(failure)
        default:
            violated("frame turned a \(item) into a \(back)")
        }
        let out = OutputBuffer()
        _ = decoder.writeLine(for: back, source: source, into: out)
        return Array(out.bytes)
    }
}

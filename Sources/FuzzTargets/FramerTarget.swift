import RespDecode
import RespDecodeTestSupport

/// A framer: whole input and the same input in pieces give the same lines, each valid JSON, one per item; and each
/// item written as `respdecode frame` writes it reads back, through the ndjson framer, as an item that decodes to the
/// same line (`frame` then `--input ndjson` equals a direct run, issue 8).
enum FramerTarget {
    ///
    /// An input of odd length is fed as from a regular file (``FramerInput/readsWithoutWaiting``: a gzip member cut
    /// by a piece waits for the rest), one of even length as from a pipe.
    static func run<F: RecordFramer>(_ data: UnsafeBufferPointer<UInt8>, make: () -> F) {
        let decoder = CompoundDecoder(configuration: FuzzLimits.configuration())
        var sizes = Pieces(data)
        var pieces: [Int] = []
        var covered = 0
        while covered < data.count {
            let size = sizes.next()!
            pieces.append(size)
            covered += size
        }
        let verdict = FramerSplits.verify(
            Array(data), byteByByte: false, randomSplits: 0, splits: [pieces], fromFile: data.count % 2 == 1,
            make: make,
            describe: { line(for: $0, decoder, framer: F.self) })
        if let mismatch = verdict.mismatches.first { violated("\(F.self): \(mismatch)") }
    }

    /// The line of `framed` (its `seq` 0: only the items are compared), checked: one line, valid JSON, the same after a
    /// trip through `frame`.
    private static func line<F>(for framed: FramedItem, _ decoder: CompoundDecoder, framer: F.Type) -> String {
        // As the workers do before writing a line.
        let item = framed.checkingPayloadDigest()
        let out = OutputBuffer()
        let source = ResultLine.Source(seq: 0, offset: item.offset, length: item.length, input: nil)
        _ = decoder.writeLine(for: item, source: source, into: out)
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
        return String(decoding: line.dropLast(), as: UTF8.self)
    }

    /// The line `item` decodes to after a trip through `frame`'s ndjson line and the ndjson framer; the id that
    /// `frame` gives a record without one (INPUT:OFFSET) is taken off again, as it is no part of the record.
    private static func throughFrame(_ item: FramedItem, _ decoder: CompoundDecoder, source: ResultLine.Source)
        -> [UInt8]
    {
        let framed = OutputBuffer()
        _ = RecordLineWriter().writeLine(for: item, source: source, into: framed)
        var reader = NDJSONFramer(limits: FuzzLimits.limits)
        let read = reader.frameAll(framed.bytes)
        guard read.count == 1, var back = read.first else {
            violated(
                "frame's line is not one ndjson record: \(String(decoding: framed.bytes.prefix(400), as: UTF8.self))")
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

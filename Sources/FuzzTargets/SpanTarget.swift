import RespDecode

/// `.warc.gz` spans (docs/framings.md#parallel-inflate): an input that starts with a gzip member, framed in spans of a
/// size the input chooses and taken back in order, gives the lines and skipped counts of one framer reading it whole.
enum SpanTarget {
    static func run(_ data: UnsafeBufferPointer<UInt8>) {
        guard data.count >= 4, data[0] == 0x1F, data[1] == 0x8B else { return }
        let configuration = FuzzLimits.configuration()
        let decoder = CompoundDecoder(configuration: configuration)
        var framer = WARCFramer(
            limits: configuration.limits, types: configuration.warcTypes, verifyDigests: configuration.verifyDigests)
        let input = Array(data)
        let whole = framer.frameAll(input).map { line(for: $0, decoder) }
        let last = Int(data[data.count - 1])
        let spans = SpanFraming.items(
            of: input, target: 16 + last * 8, chunk: 1 + Int(data[data.count / 2]) * 13, idleEvery: last % 4,
            configuration: configuration)
        let lines = spans.items.map { line(for: $0, decoder) }
        guard lines == whole else {
            let k =
                (0..<min(lines.count, whole.count)).first { lines[$0] != whole[$0] } ?? min(lines.count, whole.count)
            violated(
                "spans: \(lines.count) lines, whole: \(whole.count); first difference at \(k): "
                    + "\(lines.dropFirst(k).first?.prefix(300) ?? "-") against \(whole.dropFirst(k).first?.prefix(300) ?? "-")"
            )
        }
        guard spans.skipped == framer.skippedRecords else {
            violated("spans skipped \(spans.skipped), whole \(framer.skippedRecords)")
        }
    }

    private static func line(for framed: FramedItem, _ decoder: CompoundDecoder) -> String {
        let item = framed.checkingPayloadDigest()
        let out = OutputBuffer()
        _ = decoder.writeLine(
            for: item, source: ResultLine.Source(seq: 0, offset: item.offset, length: item.length, input: nil),
            into: out)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

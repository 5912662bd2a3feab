import RespDecode

/// A WACZ (a ZIP file of WARC files), opened in memory through libzip: whatever the bytes, opening either fails with
/// an error or lists WARC entries whose declared sizes keep within the archive limits; reading an entry never gives
/// more bytes than it declares, and all entries together stay within `maxArchiveRatio` times the input; and each
/// entry's bytes keep the WARC framer's invariants (FramerTarget).
enum WACZTarget {
    static let limits: Limits = {
        var limits = FuzzLimits.limits
        limits.maxArchiveEntryBytes = 16 << 20
        return limits
    }()

    static func run(_ data: UnsafeBufferPointer<UInt8>) {
        guard let archive = try? WACZArchive.open(bytes: data, limits: limits) else { return }
        let ratio = Int64(limits.maxArchiveRatio)
        let budget = max(ratio * Int64(data.count), WACZArchive.ratioAllowance)
        var total: Int64 = 0
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        for entry in archive.entries {
            if entry.refusal != nil { continue }
            if entry.size > max(ratio * entry.compressedSize, WACZArchive.ratioAllowance)
                || entry.size > Int64(limits.maxArchiveEntryBytes)
            {
                violated(
                    "wacz: \(entry.name) declares \(entry.size) bytes from \(entry.compressedSize) and was not refused")
            }
            guard let reader = try? archive.open(entry) else { continue }
            var bytes: [UInt8] = []
            while true {
                guard let n = try? reader.read(into: chunk), n > 0 else { break }
                bytes += UnsafeRawBufferPointer(rebasing: chunk[..<n])
                if Int64(bytes.count) > entry.size {
                    violated("wacz: \(entry.name) gave \(bytes.count) bytes, declaring \(entry.size)")
                }
            }
            total += Int64(bytes.count)
            if total > budget { violated("wacz: the entries gave \(total) bytes from \(data.count)") }
            bytes.withUnsafeBufferPointer { entryBytes in
                FramerTarget.run(entryBytes) { WARCFramer(limits: FuzzLimits.limits) }
            }
        }
    }
}

/// A TIFF image file directory (also the structure of EXIF blocks).
///
/// The directory keeps a view of the whole block (offsets in a TIFF file are relative to the start of its 8-byte
/// header), the byte order and where its entries are; tags are looked up by scanning the entries, so nothing is
/// allocated. Every read is bounds-checked: a value whose bytes are outside the block reads as `nil`. At most
/// ``maxEntries`` entries of a directory are looked at, and only those that lie completely inside the block.
///
/// The view is not owned: a directory is valid only while the buffer it was made from is.
struct TIFFDirectory {
    /// Entries looked at per directory; a directory that declares more has the rest ignored.
    static let maxEntries = 4096

    /// The block, from the TIFF header on.
    private let reader: ByteReader
    private let bigEndian: Bool
    /// Offset of this directory (its entry count) in the block.
    let offset: Int
    /// Entries that are looked at: at most ``maxEntries`` and only whole ones inside the block.
    private let entryCount: Int
    /// Offset of the next IFD (0 = none, or the field is outside the block).
    let nextOffset: Int

    /// Parses the 8-byte TIFF header ("II*\0" or "MM\0*") at the start of `bytes` and the IFD it points to.
    /// nil when the header is not TIFF or the IFD is out of bounds. Entry count capped (e.g. 4096 entries read).
    init?(tiff bytes: UnsafeBufferPointer<UInt8>) {
        let reader = ByteReader(bytes)
        let bigEndian: Bool
        if reader.matches("II*\0", at: 0) {
            bigEndian = false
        } else if reader.matches("MM\0*", at: 0) {
            bigEndian = true
        } else {
            return nil
        }
        guard let first = reader.u32(4, bigEndian: bigEndian) else { return nil }
        self.init(reader: reader, bigEndian: bigEndian, offset: first)
    }

    /// The directory whose entry count is at `offset`; nil when the offset is inside the header or the count is
    /// outside the block.
    private init?(reader: ByteReader, bigEndian: Bool, offset: Int) {
        guard offset >= 8, let declared = reader.u16(offset, bigEndian: bigEndian) else { return nil }
        self.reader = reader
        self.bigEndian = bigEndian
        self.offset = offset
        let whole = (reader.count - offset - 2) / 12 // ≥ 0: the count's two bytes are inside
        entryCount = min(declared, Self.maxEntries, whole)
        nextOffset = reader.u32(offset + 2 + 12 * declared, bigEndian: bigEndian) ?? 0
    }

    /// The IFD at `offset` (relative to the TIFF header start) of the same block, e.g. the next IFD or an EXIF
    /// sub-IFD.
    func directory(at offset: Int) -> TIFFDirectory? {
        TIFFDirectory(reader: reader, bigEndian: bigEndian, offset: offset)
    }

    /// First value of a BYTE/SHORT/LONG (also SBYTE/SSHORT/SLONG) tag; nil when missing or another type.
    /// The IFD type (13), which some writers use for sub-IFD pointers, reads as a LONG.
    func integer(_ tag: Int) -> Int? {
        guard let entry = find(tag), entry.count > 0, let at = valueOffset(entry) else { return nil }
        switch entry.type {
        case 1: return reader.u8(at)
        case 3: return reader.u16(at, bigEndian: bigEndian)
        case 4, 13: return reader.u32(at, bigEndian: bigEndian)
        case 6: return reader.u8(at).map { Int(Int8(truncatingIfNeeded: $0)) }
        case 8: return reader.u16(at, bigEndian: bigEndian).map { Int(Int16(truncatingIfNeeded: $0)) }
        case 9: return reader.u32(at, bigEndian: bigEndian).map { Int(Int32(truncatingIfNeeded: $0)) }
        default: return nil
        }
    }

    /// First value of a RATIONAL tag as a Double; nil when missing, another type, or the denominator is 0.
    /// SRATIONAL (10) is read too, as signed numerator and denominator.
    func rational(_ tag: Int) -> Double? {
        guard let entry = find(tag), entry.count > 0, entry.type == 5 || entry.type == 10,
            let at = valueOffset(entry), let n = reader.u32(at, bigEndian: bigEndian),
            let d = reader.u32(at + 4, bigEndian: bigEndian), d != 0
        else { return nil }
        if entry.type == 10 {
            return Double(Int32(truncatingIfNeeded: n)) / Double(Int32(truncatingIfNeeded: d))
        }
        return Double(n) / Double(d)
    }

    /// Number of values × type size of a tag (its byte count), e.g. for ICC profile tag 34675. nil when the tag is
    /// missing or its type is unknown. The bytes themselves need not be inside the block.
    func byteCount(_ tag: Int) -> Int? {
        guard let entry = find(tag), let size = Self.typeSize(entry.type) else { return nil }
        return entry.count * size
    }

    // MARK: Entries

    /// One directory entry: its offset in the block, field type and value count.
    private struct Entry {
        var at: Int
        var type: Int
        var count: Int
    }

    /// The first entry with `tag`, if any.
    private func find(_ tag: Int) -> Entry? {
        var at = offset + 2
        for _ in 0..<entryCount {
            if reader.u16(at, bigEndian: bigEndian) == tag,
                let type = reader.u16(at + 2, bigEndian: bigEndian),
                let count = reader.u32(at + 4, bigEndian: bigEndian)
            {
                return Entry(at: at, type: type, count: count)
            }
            at += 12
        }
        return nil
    }

    /// Where an entry's values start: inline in the entry when they fit in 4 bytes, else at the offset it holds.
    private func valueOffset(_ entry: Entry) -> Int? {
        guard let size = Self.typeSize(entry.type) else { return nil }
        if entry.count * size <= 4 { return entry.at + 8 }
        return reader.u32(entry.at + 8, bigEndian: bigEndian)
    }

    /// Bytes per value of a TIFF field type (BigTIFF's 8-byte types included); nil for unknown types.
    private static func typeSize(_ type: Int) -> Int? {
        switch type {
        case 1, 2, 6, 7: 1
        case 3, 8: 2
        case 4, 9, 11, 13: 4
        case 5, 10, 12, 16, 17, 18: 8
        default: nil
        }
    }
}

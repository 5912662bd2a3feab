internal import CZip
import Glibc

/// ZIP files for the WACZ tests, made at test time: well-formed ones by libzip's writer, and the hostile shapes no
/// writer makes (sizes that lie, entries that overlap) by editing or laying out the bytes here. Nothing here reads a
/// ZIP: the product reads them through libzip only.
public enum ZipFiles {
    /// One entry to write.
    public struct Entry: Sendable {
        public var name: String
        public var bytes: [UInt8]
        /// Deflated (level 9) rather than stored.
        public var deflated: Bool

        public init(_ name: String, _ bytes: [UInt8], deflated: Bool = false) {
            self.name = name
            self.bytes = bytes
            self.deflated = deflated
        }
    }

    /// A ZIP file holding `entries` in this order, as libzip writes it (no data descriptors: sizes are in the local
    /// headers).
    /// - Parameter entries: the entries.
    /// - Returns: the file's bytes.
    public static func make(_ entries: [Entry]) -> [UInt8] {
        var error = zip_error_t()
        zip_error_init(&error)
        defer { zip_error_fini(&error) }
        guard let source = zip_source_buffer_create(nil, 0, 0, &error) else { fatalError("libzip: no buffer") }
        zip_source_keep(source)
        defer { zip_source_free(source) }
        guard let archive = zip_open_from_source(source, ZIP_TRUNCATE, &error) else { fatalError("libzip: no archive") }
        for entry in entries {
            // libzip frees the copy (freep 1) once the archive is written.
            let copy = malloc(max(entry.bytes.count, 1))!
            entry.bytes.withUnsafeBytes { _ = memcpy(copy, $0.baseAddress ?? UnsafeRawPointer(copy), $0.count) }
            guard let data = zip_source_buffer(archive, copy, UInt64(entry.bytes.count), 1) else {
                fatalError("libzip: \(String(cString: zip_strerror(archive)))")
            }
            let index = zip_file_add(archive, entry.name, data, zip_flags_t(ZIP_FL_ENC_UTF_8))
            precondition(index >= 0, "libzip: \(String(cString: zip_strerror(archive)))")
            let method = entry.deflated ? ZIP_CM_DEFLATE : ZIP_CM_STORE
            precondition(zip_set_file_compression(archive, UInt64(index), method, entry.deflated ? 9 : 0) == 0)
        }
        precondition(zip_close(archive) == 0, "libzip could not write the archive")
        precondition(zip_source_open(source) == 0)
        defer { zip_source_close(source) }
        _ = zip_source_seek(source, 0, SEEK_END)
        let size = Int(zip_source_tell(source))
        _ = zip_source_seek(source, 0, SEEK_SET)
        var out = [UInt8](repeating: 0, count: size)
        let read = out.withUnsafeMutableBytes { zip_source_read(source, $0.baseAddress, UInt64(size)) }
        precondition(read == size)
        return out
    }

    /// `zip` with the uncompressed size of the entry `name` changed to `size` in its local header and its central
    /// directory entry: a size that lies (the CRC still matches the data).
    /// - Parameters:
    ///   - size: the size to declare.
    ///   - name: the entry.
    ///   - zip: a file `make` wrote.
    /// - Returns: the edited file.
    public static func declaring(size: UInt32, for name: String, in zip: [UInt8]) -> [UInt8] {
        var out = zip
        let target = Array(name.utf8)
        var edited = 0
        for start in 0..<max(out.count - 4, 0) where out[start] == 0x50 && out[start + 1] == 0x4B {
            // Local header: the name at 30, the size at 22; central directory entry: the name at 46, the size at 24.
            let (nameAt, sizeAt): (Int, Int)
            switch (out[start + 2], out[start + 3]) {
            case (3, 4): (nameAt, sizeAt) = (30, 22)
            case (1, 2): (nameAt, sizeAt) = (46, 24)
            default: continue
            }
            guard start + nameAt + target.count <= out.count,
                Array(out[(start + nameAt)..<(start + nameAt + target.count)]) == target
            else { continue }
            put32(size, into: &out, at: start + sizeAt)
            edited += 1
        }
        precondition(edited == 2, "\(name): \(edited) headers found")
        return out
    }

    /// A ZIP of `count` stored entries named `archive/overlap-N.warc` that overlap as in David Fifield's
    /// "non-recursive zip bomb": the data of each entry holds the local headers of every later one, then `warc`, so
    /// the file holds `warc` once and the entries hold it `count` times. Each local header matches its central
    /// directory entry, and every CRC is right: only the sizes, added up, show that the entries overlap.
    /// - Parameters:
    ///   - warc: the bytes at the end of every entry.
    ///   - count: how many entries.
    /// - Returns: the file's bytes.
    public static func overlapping(_ warc: [UInt8], count: Int) -> [UInt8] {
        let names = (0..<count).map { Array("archive/overlap-\(1000 + $0).warc".utf8) }
        // Entry i's data: the local headers of entries i+1… and then warc; built from the last.
        var contents: [[UInt8]] = Array(repeating: [], count: count)
        var headers: [[UInt8]] = Array(repeating: [], count: count)
        var tail = warc
        for i in (0..<count).reversed() {
            contents[i] = tail
            headers[i] = localHeader(name: names[i], data: tail)
            tail = headers[i] + tail
        }
        var file: [UInt8] = []
        var offsets: [Int] = []
        for i in 0..<count {
            offsets.append(file.count)
            file += headers[i]
        }
        file += warc
        let directoryStart = file.count
        for i in 0..<count {
            file += centralEntry(name: names[i], data: contents[i], offset: offsets[i])
        }
        file += endOfDirectory(count: count, size: file.count - directoryStart, offset: directoryStart)
        return file
    }

    /// A ZIP whose central directory lists the one stored entry `warc` `count` times, every listing at its local
    /// header, under one name: each listing matches the local header, but they all share it.
    /// - Parameters:
    ///   - warc: the entry's data.
    ///   - count: how many listings.
    /// - Returns: the file's bytes.
    public static func sharingOneEntry(_ warc: [UInt8], count: Int) -> [UInt8] {
        let name = Array("archive/shared.warc".utf8)
        var file = localHeader(name: name, data: warc) + warc
        let directoryStart = file.count
        for _ in 0..<count { file += centralEntry(name: name, data: warc, offset: 0) }
        file += endOfDirectory(count: count, size: file.count - directoryStart, offset: directoryStart)
        return file
    }

    private static func localHeader(name: [UInt8], data: [UInt8]) -> [UInt8] {
        var h: [UInt8] = [0x50, 0x4B, 3, 4]
        h += le16(20) + le16(0) + le16(0) + le16(0) + le16(0x21)
        h += le32(crc32(data)) + le32(UInt32(data.count)) + le32(UInt32(data.count))
        h += le16(UInt16(name.count)) + le16(0) + name
        return h
    }

    private static func centralEntry(name: [UInt8], data: [UInt8], offset: Int) -> [UInt8] {
        var h: [UInt8] = [0x50, 0x4B, 1, 2]
        h += le16(20) + le16(20) + le16(0) + le16(0) + le16(0) + le16(0x21)
        h += le32(crc32(data)) + le32(UInt32(data.count)) + le32(UInt32(data.count))
        h += le16(UInt16(name.count)) + le16(0) + le16(0) + le16(0) + le16(0) + le32(0) + le32(UInt32(offset))
        return h + name
    }

    private static func endOfDirectory(count: Int, size: Int, offset: Int) -> [UInt8] {
        [0x50, 0x4B, 5, 6] + le16(0) + le16(0) + le16(UInt16(count)) + le16(UInt16(count)) + le32(UInt32(size))
            + le32(UInt32(offset)) + le16(0)
    }

    private static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    private static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }

    private static func put32(_ v: UInt32, into bytes: inout [UInt8], at index: Int) {
        for i in 0..<4 { bytes[index + i] = UInt8((v >> (8 * i)) & 0xFF) }
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? (c >> 1) ^ 0xEDB8_8320 : c >> 1 }
        return c
    }

    /// CRC-32 (ISO-HDLC, the ZIP and gzip one).
    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}

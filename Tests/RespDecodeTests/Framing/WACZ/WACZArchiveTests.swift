import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Opening and reading WACZ files (docs/framings.md#wacz): the entries read, in which order, and each way a ZIP can
/// be hostile -- an error, never more bytes than declared, never a hang.
@Suite("WACZ archives")
struct WACZArchiveTests {
    static let record = Array(
        ("WARC/1.1\r\nWARC-Type: resource\r\nWARC-Target-URI: http://x.test/\r\nContent-Type: text/plain\r\n"
            + "Content-Length: 5\r\n\r\nhello\r\n\r\n").utf8)

    static func open(_ bytes: [UInt8], limits: Limits = Limits()) throws(RecordError) -> WACZArchive {
        try WACZArchive.open(bytes: bytes, limits: limits)
    }

    /// An entry's bytes read in `size`-byte pieces, and the error that stopped the reading, if one did.
    static func read(_ archive: WACZArchive, _ entry: WACZArchive.Entry, size: Int = 4096) -> ([UInt8], RecordError?) {
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
        defer { chunk.deallocate() }
        var bytes: [UInt8] = []
        do {
            let reader = try archive.open(entry)
            while true {
                let n = try reader.read(into: chunk)
                if n == 0 { return (bytes, nil) }
                bytes += UnsafeRawBufferPointer(rebasing: chunk[..<n])
            }
        } catch {
            return (bytes, error)
        }
    }

    static func error(_ body: () throws(RecordError) -> WACZArchive) -> RecordError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func warcEntriesInNameOrderOthersLeftOut() throws {
        let gz: [UInt8] = [0x1F, 0x8B, 0x08, 0x00]
        let zip = ZipFiles.make([
            ZipFiles.Entry("datapackage.json", Array("{}".utf8), deflated: true),
            ZipFiles.Entry("archive/b.warc", Self.record),
            ZipFiles.Entry("pages/pages.jsonl", Array("{}\n".utf8)),
            ZipFiles.Entry("archive/a.warc.gz", gz),
            ZipFiles.Entry("archive/notes.txt", Array("x".utf8)),
            ZipFiles.Entry("indexes/index.cdxj", Array("x".utf8)),
            ZipFiles.Entry("archive/B.warc", Self.record, deflated: true),
            ZipFiles.Entry("data/archive/c.warc", Self.record),
        ])
        let archive = try Self.open(zip)
        #expect(archive.entries.map(\.name) == ["archive/B.warc", "archive/a.warc.gz", "archive/b.warc"])
        #expect(archive.entries.map(\.stored) == [false, true, true])
        #expect(archive.entries.map(\.size) == [Int64(Self.record.count), 4, Int64(Self.record.count)])
        #expect(archive.entryCount == 8)
        #expect(archive.byteCount == Int64(zip.count))
        for entry in archive.entries {
            #expect(entry.refusal == nil)
            for size in [1, 7, 4096] {
                let (bytes, error) = Self.read(archive, entry, size: size)
                #expect(error == nil)
                #expect(bytes == (entry.name.hasSuffix(".gz") ? gz : Self.record), "\(entry.name) by \(size)")
            }
        }
    }

    @Test func aZipWithoutWARCEntriesIsNotAWACZ() {
        let zip = ZipFiles.make([
            ZipFiles.Entry("datapackage.json", Array("{}".utf8)),
            ZipFiles.Entry("data/archive/test.warc", Self.record),
        ])
        let error = Self.error { () throws(RecordError) in try Self.open(zip) }
        #expect(error?.code == .malformedRecord)
        #expect(error?.message.contains("not a WACZ") == true, "\(String(describing: error))")
    }

    @Test(arguments: [
        Array("PK\u{3}\u{4}".utf8), Array("PK\u{3}\u{4}".utf8) + Array(repeating: 0, count: 100),
        Array("WARC/1.1\r\n".utf8),
    ])
    func notAZip(_ bytes: [UInt8]) {
        let error = Self.error { () throws(RecordError) in try Self.open(bytes) }
        #expect(error?.code == .malformedRecord)
        #expect(error?.message.contains("not a readable ZIP") == true, "\(String(describing: error))")
    }

    /// No bytes at all: libzip takes them for an empty archive, which holds no WARC.
    @Test func noBytesAreNoWACZ() {
        #expect(Self.error { () throws(RecordError) in try Self.open([]) }?.code == .malformedRecord)
    }

    /// A ZIP cut short has lost its central directory: libzip cannot open it.
    @Test func aCutZipIsNotReadable() {
        let zip = ZipFiles.make([ZipFiles.Entry("archive/a.warc", Self.record)])
        for cut in [zip.count - 1, zip.count / 2, 30] {
            let error = Self.error { () throws(RecordError) in try Self.open(Array(zip.prefix(cut))) }
            #expect(error?.code == .malformedRecord, "cut at \(cut)")
        }
    }

    /// 10 MB of zeros deflated is about 1000:1: refused before reading, by its declared size; 500 KB of zeros is
    /// within the 1 MiB any entry may have.
    @Test func anEntryPastTheRatioIsRefusedUnread() throws {
        let zip = ZipFiles.make([
            ZipFiles.Entry("archive/bomb.warc", Array(repeating: 0, count: 10_000_000), deflated: true),
            ZipFiles.Entry("archive/small.warc", Array(repeating: 0, count: 500_000), deflated: true),
        ])
        let archive = try Self.open(zip)
        let bomb = try #require(archive.entries.first)
        #expect(bomb.compressedSize * 900 < bomb.size, "the bomb inflates about 1000:1")
        #expect(bomb.refusal?.code == .limitExceeded)
        #expect(bomb.refusal?.message.contains("maxArchiveRatio") == true, "\(String(describing: bomb.refusal))")
        #expect(Self.read(archive, bomb).1?.code == .limitExceeded)
        #expect(archive.entries[1].refusal == nil)
        // A ratio of 1000 lets it through.
        let lenient = try Self.open(zip, limits: Limits(maxArchiveRatio: 2000))
        #expect(lenient.entries[0].refusal == nil)
        #expect(Self.read(lenient, lenient.entries[0]).0.count == 10_000_000)
    }

    @Test func anEntryPastTheAbsoluteCapIsRefused() throws {
        let zip = ZipFiles.make([ZipFiles.Entry("archive/a.warc", Self.record)])
        let archive = try Self.open(zip, limits: Limits(maxArchiveEntryBytes: Self.record.count - 1))
        #expect(archive.entries[0].refusal?.code == .limitExceeded)
        #expect(archive.entries[0].refusal?.message.contains("maxArchiveEntryBytes") == true)
        #expect(try Self.open(zip, limits: Limits(maxArchiveEntryBytes: Self.record.count)).entries[0].refusal == nil)
    }

    /// Entries each within the 1 MiB allowance, together past ratio × the archive's size: the later ones are
    /// refused.
    @Test func theEntriesTogetherStayWithinTheRatioOfTheArchive() throws {
        let entries = (0..<4).map {
            ZipFiles.Entry("archive/\($0).warc", Array(repeating: 0, count: 900_000), deflated: true)
        }
        let zip = ZipFiles.make(entries)
        #expect(zip.count * 100 < 1 << 20)
        let archive = try Self.open(zip)
        #expect(archive.entries.map { $0.refusal == nil } == [true, false, false, false])
        #expect(archive.entries[1].refusal?.message.contains("maxArchiveRatio") == true)
    }

    /// libzip does not hold an entry to its declared size: the reader does. More bytes than declared: the declared
    /// ones, then an error; fewer: an error at the end.
    @Test func sizesThatLieAreErrors() throws {
        let zeros = [UInt8](repeating: 0, count: 200_000)
        for deflated in [true, false] {
            let zip = ZipFiles.make([ZipFiles.Entry("archive/a.warc", zeros, deflated: deflated)])
            let small = try Self.open(ZipFiles.declaring(size: 1000, for: "archive/a.warc", in: zip))
            let (bytes, error) = Self.read(small, small.entries[0])
            #expect(bytes.count == 1000)
            #expect(error?.code == .malformedRecord)
            #expect(
                error?.message.contains("more than the 1000 bytes it declares") == true, "\(String(describing: error))")

            let large = try Self.open(ZipFiles.declaring(size: 300_000, for: "archive/a.warc", in: zip))
            let (all, short) = Self.read(large, large.entries[0])
            if deflated {
                #expect(all.count == zeros.count)
                #expect(
                    short?.message.contains("ends after 200000 of the 300000 bytes") == true,
                    "\(String(describing: short))")
            } else {
                // Stored: libzip reads the compressed size (still 200,000) and stops there.
                #expect(short?.code == .malformedRecord, "\(String(describing: short))")
            }
        }
    }

    /// libzip checks the CRC-32 when it reaches the entry's end.
    @Test func aCRCErrorIsAnError() throws {
        var zip = ZipFiles.make([ZipFiles.Entry("archive/a.warc", Self.record)])
        let at = try #require(
            zip.firstIndex(of: UInt8(ascii: "h")).map { zip[$0...].firstRange(of: Array("hello".utf8)) })
        zip[try #require(at).lowerBound] = UInt8(ascii: "j")
        let archive = try Self.open(zip)
        let (bytes, error) = Self.read(archive, archive.entries[0])
        #expect(bytes.count == Self.record.count)
        #expect(error?.code == .malformedRecord)
        #expect(error?.message.contains("CRC") == true, "\(String(describing: error))")
    }

    /// Entries whose data holds the later entries (each local header matching its central directory entry, every
    /// CRC right): their sizes do not fit in the file together.
    @Test func overlappingEntriesAreRefused() {
        let zip = ZipFiles.overlapping(Self.record, count: 50)
        let error = Self.error { () throws(RecordError) in try Self.open(zip) }
        #expect(error?.code == .malformedRecord)
        #expect(error?.message.contains("overlap") == true, "\(String(describing: error))")
        // libzip refuses listings that share one local header (the same name twice).
        let shared = Self.error { () throws(RecordError) in
            try Self.open(ZipFiles.sharingOneEntry(Self.record, count: 3))
        }
        #expect(shared?.code == .malformedRecord)
        // One listing is a well-formed archive.
        #expect((try? Self.open(ZipFiles.sharingOneEntry(Self.record, count: 1)))?.entries.count == 1)
        #expect((try? Self.open(ZipFiles.overlapping(Self.record, count: 1)))?.entries.count == 1)
    }

    /// From a descriptor: read from the file's start wherever the descriptor stands; a pipe is refused.
    @Test func fromADescriptor() throws {
        let zip = ZipFiles.make([ZipFiles.Entry("archive/a.warc", Self.record, deflated: true)])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wacz-\(getpid()).wacz").path
        try Data(zip).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let fd = Glibc.open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        lseek(fd, 17, SEEK_SET)
        let archive = try WACZArchive.open(descriptor: fd, limits: Limits())
        #expect(Self.read(archive, archive.entries[0]).0 == Self.record)
        // The caller's descriptor is still open.
        #expect(fcntl(fd, F_GETFD) >= 0)

        var pipeEnds: [Int32] = [0, 0]
        try #require(pipe(&pipeEnds) == 0)
        defer {
            close(pipeEnds[0])
            close(pipeEnds[1])
        }
        let error = Self.error { () throws(RecordError) in
            try WACZArchive.open(descriptor: pipeEnds[0], limits: Limits())
        }
        #expect(error?.message.contains("random access") == true, "\(String(describing: error))")
    }
}

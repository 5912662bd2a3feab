/*
 WACZ input (docs/framings.md#wacz): a ZIP file that holds WARC files under `archive/`, read through libzip; the only
 Swift file that calls libzip. Each WARC entry is streamed out of the archive in chunks, for the WARC framer to read
 as an input of its own: nothing here parses WARC.

 A ZIP needs random access (its central directory is at the end), so an archive is opened from a regular file (or
 from bytes in memory, for the fuzz target), never from a pipe.

 What a hostile ZIP could do, and what stops it:
 - an entry that inflates without end (a ZIP bomb): its declared size is checked against `maxArchiveRatio` and
   `maxArchiveEntryBytes` before anything is read, all WARC entries of one archive together against
   `maxArchiveRatio` times the archive's size, and reading never goes past the declared size;
 - sizes that lie (libzip does not compare what it inflates with the declared size): more bytes than declared, or
   fewer, is an error for that entry;
 - entries that overlap, so that a small file holds many large entries: libzip's consistency check (each local
   header must match its central directory entry, and one name may not appear twice) and the rule that the
   entries' compressed sizes and local headers must fit in the file together;
 - a corrupt entry: libzip checks each entry's CRC-32 when its end is read.
 */
internal import CZip
import Glibc

/// A WACZ file opened for reading: its WARC entries in name order, each read as a stream (docs/framings.md#wacz).
///
/// Opening checks the ZIP's layout (`archive/*.warc` or `archive/*.warc.gz` entries) and the sizes its central
/// directory declares; an entry that a limit refuses is listed with its ``Entry/refusal`` and is not read. Signatures
/// (`datapackage-digest.json`) and the resource hashes of `datapackage.json` are not checked.
public final class WACZArchive {
    /// A WACZ starts with a ZIP local file header: `PK\x03\x04`.
    public static let magic: [UInt8] = [0x50, 0x4B, 0x03, 0x04]

    /// An entry may always inflate to this many bytes, whatever its ratio, and so may the WARC entries of one archive
    /// together (docs/framings.md#wacz): a small WARC compresses further than a large one.
    public static let ratioAllowance: Int64 = 1 << 20

    /// One WARC of the archive: an `archive/*.warc` or `archive/*.warc.gz` entry.
    public struct Entry: Sendable, Hashable {
        /// The entry's name in the archive (`archive/NAME.warc.gz`).
        public var name: String
        /// Its size once inflated, as the archive declares it.
        public var size: Int64
        /// Its size as stored in the archive.
        public var compressedSize: Int64
        /// Whether it is stored without compression (as WACZ writers store WARC files).
        public var stored: Bool
        /// Why it is not read, when a limit refuses it before reading: its one line's error.
        public var refusal: RecordError?
        /// libzip's index of the entry.
        var index: UInt64
    }

    /// The WARC entries, in name order (byte order of their UTF-8 names).
    public let entries: [Entry]
    /// The archive's size in bytes.
    public let byteCount: Int64
    /// How many entries the archive holds, WARC or not.
    public let entryCount: Int

    private let archive: OpaquePointer
    /// The bytes an in-memory archive is read from (libzip reads them in place).
    private let memory: UnsafeMutableRawBufferPointer?

    /// Opens the archive in `descriptor`, a regular file, reading from its start. The descriptor stays the caller's:
    /// the archive reads through a duplicate of it.
    /// - Parameters:
    ///   - descriptor: an open regular file.
    ///   - limits: `maxArchiveRatio` and `maxArchiveEntryBytes` refuse entries.
    /// - Returns: the archive.
    /// - Throws: `malformedRecord` when it is not a readable ZIP, its entries overlap, or it holds no WARC entry.
    public static func open(descriptor: Int32, limits: Limits) throws(RecordError) -> WACZArchive {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw RecordError(
                .malformedRecord, "a WACZ (a ZIP file) needs random access: name the file rather than pipe it")
        }
        let copy = dup(descriptor)
        guard copy >= 0, let file = fdopen(copy, "rb") else {
            if copy >= 0 { close(copy) }
            throw RecordError(.malformedRecord, "cannot read the ZIP file: \(String(cString: strerror(errno)))")
        }
        var error = zip_error_t()
        zip_error_init(&error)
        defer { zip_error_fini(&error) }
        // From offset 0 to the end of the file; freeing the source closes `file`.
        guard let source = zip_source_filep_create(file, 0, -1, &error) else {
            fclose(file)
            throw failure(opening: &error)
        }
        return try open(source, byteCount: Int64(info.st_size), memory: nil, limits: limits)
    }

    /// Opens an archive held in memory (the fuzz target's way in).
    /// - Parameters:
    ///   - bytes: the whole archive.
    ///   - limits: `maxArchiveRatio` and `maxArchiveEntryBytes` refuse entries.
    /// - Returns: the archive.
    /// - Throws: `malformedRecord` when it is not a readable ZIP, its entries overlap, or it holds no WARC entry.
    public static func open(bytes: some Collection<UInt8>, limits: Limits) throws(RecordError) -> WACZArchive {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        memory.copyBytes(from: bytes)
        var error = zip_error_t()
        zip_error_init(&error)
        defer { zip_error_fini(&error) }
        guard let source = zip_source_buffer_create(memory.baseAddress, UInt64(bytes.count), 0, &error) else {
            memory.deallocate()
            throw failure(opening: &error)
        }
        return try open(source, byteCount: Int64(bytes.count), memory: memory, limits: limits)
    }

    /// Opens the archive `source` reads (taking it over: it is freed on failure, and with the archive otherwise), and
    /// lists and checks its entries.
    private static func open(
        _ source: OpaquePointer, byteCount: Int64, memory: UnsafeMutableRawBufferPointer?, limits: Limits
    ) throws(RecordError) -> WACZArchive {
        var error = zip_error_t()
        zip_error_init(&error)
        defer { zip_error_fini(&error) }
        guard let archive = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error) else {
            zip_source_free(source)
            memory?.deallocate()
            throw failure(opening: &error)
        }
        do throws(RecordError) {
            let (entries, count) = try listEntries(archive, byteCount: byteCount, limits: limits)
            return WACZArchive(archive, entries: entries, entryCount: count, byteCount: byteCount, memory: memory)
        } catch {
            zip_discard(archive)
            memory?.deallocate()
            throw error
        }
    }

    private init(
        _ archive: OpaquePointer, entries: [Entry], entryCount: Int, byteCount: Int64,
        memory: UnsafeMutableRawBufferPointer?
    ) {
        self.archive = archive
        self.entries = entries
        self.entryCount = entryCount
        self.byteCount = byteCount
        self.memory = memory
    }

    deinit {
        zip_discard(archive)
        memory?.deallocate()
    }

    /// Whether `name` is a WARC of a WACZ: `archive/…​.warc` or `archive/…​.warc.gz`.
    public static func isWARCEntry(_ name: String) -> Bool {
        name.hasPrefix("archive/") && (name.hasSuffix(".warc") || name.hasSuffix(".warc.gz"))
    }

    /// The WARC entries of `archive` in name order, each with its refusal if a limit refuses it; and how many entries
    /// the archive holds.
    private static func listEntries(_ archive: OpaquePointer, byteCount: Int64, limits: Limits) throws(RecordError)
        -> ([Entry], Int)
    {
        let count = zip_get_num_entries(archive, 0)
        guard count >= 0 else { throw RecordError(.malformedRecord, "not a readable ZIP file") }
        var entries: [Entry] = []
        // Every entry's local header (30 bytes and its name, at least) and compressed data must fit in the file side
        // by side; entries that overlap do not.
        var footprint: Int64 = 0
        for index in 0..<UInt64(count) {
            var info = zip_stat_t()
            zip_stat_init(&info)
            guard zip_stat_index(archive, index, zip_flags_t(ZIP_FL_ENC_RAW), &info) == 0 else {
                throw RecordError(
                    .malformedRecord, "entry \(index) of the ZIP file cannot be read: \(message(archive))")
            }
            let rawName = info.name.map { strlen($0) } ?? 0
            footprint = footprint.addingSaturating(Int64(clamping: info.comp_size)).addingSaturating(
                30 + Int64(rawName))
            guard let namePointer = zip_get_name(archive, index, zip_flags_t(ZIP_FL_ENC_GUESS)) else { continue }
            let name = String(cString: namePointer)
            guard isWARCEntry(name) else { continue }
            entries.append(
                Entry(
                    name: name, size: Int64(clamping: info.size), compressedSize: Int64(clamping: info.comp_size),
                    stored: Int32(info.comp_method) == ZIP_CM_STORE, refusal: nil, index: index))
        }
        if footprint > byteCount {
            throw RecordError(
                .malformedRecord,
                "the ZIP file's entries overlap: their local headers and data need at least \(footprint) bytes, "
                    + "and the file has \(byteCount)")
        }
        guard !entries.isEmpty else {
            throw RecordError(
                .malformedRecord,
                "a ZIP file but not a WACZ: none of its \(count) entries is an archive/*.warc or archive/*.warc.gz file"
            )
        }
        entries.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        // What the WARC entries may inflate to together.
        let ratio = Int64(max(limits.maxArchiveRatio, 1))
        var budget = max(ratio.multipliedSaturating(by: byteCount), ratioAllowance)
        for i in entries.indices {
            let entry = entries[i]
            let allowed = max(ratio.multipliedSaturating(by: entry.compressedSize), ratioAllowance)
            if entry.size > Int64(limits.maxArchiveEntryBytes) {
                entries[i].refusal = RecordError(
                    .limitExceeded,
                    "\(entry.name) declares \(entry.size) bytes, more than \(limits.maxArchiveEntryBytes) "
                        + "(maxArchiveEntryBytes)")
            } else if entry.size > allowed {
                entries[i].refusal = RecordError(
                    .limitExceeded,
                    "\(entry.name) declares \(entry.size) bytes from \(entry.compressedSize) compressed, more than "
                        + "\(ratio):1 (maxArchiveRatio)")
            } else if entry.size > budget {
                entries[i].refusal = RecordError(
                    .limitExceeded,
                    "\(entry.name) declares \(entry.size) bytes, and the WARC entries before it leave \(budget) of "
                        + "the \(ratio):1 the \(byteCount)-byte archive may inflate to (maxArchiveRatio)")
            } else {
                budget -= entry.size
            }
        }
        return (entries, Int(count))
    }

    /// Opens `entry` for reading.
    /// - Parameter entry: one of ``entries``, not refused.
    /// - Returns: its reader.
    /// - Throws: `limitExceeded` for a refused entry; `malformedRecord` when libzip cannot open it (an unsupported
    ///   compression method, encryption, a damaged local header).
    public func open(_ entry: Entry) throws(RecordError) -> EntryReader {
        if let refusal = entry.refusal { throw refusal }
        guard let file = zip_fopen_index(archive, entry.index, 0) else {
            throw RecordError(.malformedRecord, "\(entry.name) cannot be read: \(Self.message(archive))")
        }
        return EntryReader(file, entry: entry, archive: self)
    }

    /// Reads one entry, never past its declared size.
    public final class EntryReader {
        /// The entry read.
        public let entry: Entry
        /// Bytes handed out so far: the offset in the entry where the next read starts.
        public private(set) var delivered: Int64 = 0
        private let file: OpaquePointer
        /// Keeps the archive open while the entry is read.
        private let archive: WACZArchive
        private var overrun = false

        fileprivate init(_ file: OpaquePointer, entry: Entry, archive: WACZArchive) {
            self.file = file
            self.entry = entry
            self.archive = archive
        }

        deinit { zip_fclose(file) }

        /// Reads the next bytes of the entry into `chunk`.
        /// - Parameter chunk: where they go.
        /// - Returns: how many were read; 0 at the end of the entry.
        /// - Throws: `malformedRecord` when the entry's data is damaged (a CRC or inflation error) or its size lies:
        ///   it inflates to more, or fewer, bytes than it declares.
        public func read(into chunk: UnsafeMutableRawBufferPointer) throws(RecordError) -> Int {
            guard !chunk.isEmpty else { return 0 }
            if overrun {
                throw RecordError(
                    .malformedRecord,
                    "\(entry.name) inflates to more than the \(entry.size) bytes it declares: its sizes lie")
            }
            // One byte more than is left: the way to find out that there is more.
            let left = (entry.size - delivered).addingReportingOverflow(1)
            let wanted = Int(clamping: min(Int64(chunk.count), left.overflow ? Int64.max : left.partialValue))
            let n = zip_fread(file, chunk.baseAddress, UInt64(wanted))
            if n < 0 {
                let why = String(cString: zip_file_strerror(file))
                throw RecordError(.malformedRecord, "\(entry.name) is damaged after \(delivered) bytes: \(why)")
            }
            if n == 0 && delivered < entry.size {
                throw RecordError(
                    .malformedRecord,
                    "\(entry.name) ends after \(delivered) of the \(entry.size) bytes it declares: its sizes lie")
            }
            var count = Int(n)
            if Int64(count) > entry.size - delivered {
                count = Int(entry.size - delivered)
                overrun = true
            }
            delivered += Int64(count)
            if count == 0 && overrun { return try read(into: chunk) }
            return count
        }
    }

    private static func message(_ archive: OpaquePointer) -> String { String(cString: zip_strerror(archive)) }

    private static func failure(opening error: inout zip_error_t) -> RecordError {
        let text = String(cString: zip_error_strerror(&error))
        return RecordError(.malformedRecord, "not a readable ZIP file (libzip: \(text))")
    }
}

extension Int64 {
    fileprivate func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    fileprivate func multipliedSaturating(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? .max : product
    }
}

import Glibc

/// Counts of the lines in one batch, made by the worker that wrote them and merged in order by the writer.
struct Tally: Sendable {
    var records = 0
    var ok = 0
    var bodyBytes = 0
    var decodedBytes = 0
    var errorsByCode: [String: Int] = [:]
    /// Per decoder: lines, and lines with `"ok":false`.
    var byDecoder: [String: DecoderCount] = [:]
    /// Records skipped by each `--select-…` filter (docs/output.md#selecting-records): not in `records`.
    var skipped: [String: Int] = [:]
    /// Records whose lines were written without decoding (`--fields` asking for no key that decoding gives,
    /// docs/output.md#choosing-the-keys): not in `records`.
    var undecoded = 0
    /// Each record's decode time in nanoseconds, when the pool times records (`serve`'s metrics); not merged.
    var decodeNanoseconds: [UInt64] = []

    struct DecoderCount: Sendable, Equatable {
        var records = 0
        var errors = 0
    }

    mutating func count(_ outcome: LineOutcome) {
        if let filter = outcome.skippedBy {
            skipped[filter, default: 0] += 1
            return
        }
        if !outcome.decoded {
            undecoded += 1
            bodyBytes += outcome.bodyBytes
            return
        }
        records += 1
        bodyBytes += outcome.bodyBytes
        decodedBytes += outcome.decodedBytes
        if outcome.ok { ok += 1 }
        if let code = outcome.errorCode { errorsByCode[code.description, default: 0] += 1 }
        byDecoder[outcome.decoder, default: DecoderCount()].records += 1
        if !outcome.ok { byDecoder[outcome.decoder, default: DecoderCount()].errors += 1 }
    }

    mutating func merge(_ other: Tally) {
        records += other.records
        ok += other.ok
        bodyBytes += other.bodyBytes
        decodedBytes += other.decodedBytes
        errorsByCode.merge(other.errorsByCode, uniquingKeysWith: +)
        skipped.merge(other.skipped, uniquingKeysWith: +)
        undecoded += other.undecoded
        for (name, count) in other.byDecoder {
            byDecoder[name, default: DecoderCount()].records += count.records
            byDecoder[name, default: DecoderCount()].errors += count.errors
        }
    }
}

/// What the process has done so far, shared by every stream of a run (and every connection of `serve`): written
/// lines are counted by the writers, input bytes by the readers. Printed by `--stats`, `--stats-interval` and SIGUSR1.
public final class Statistics: @unchecked Sendable {
    private let monitor = Monitor()
    private let started = MonotonicClock.now
    private var lines = Tally()
    private var bytesRead: Int64 = 0
    private var expectedBytes: Int64?

    public init() {}

    func add(_ tally: Tally) { monitor.withLock { lines.merge(tally) } }
    func addBytesRead(_ count: Int) { monitor.withLock { bytesRead += Int64(count) } }

    /// The total input size, when every input is a regular file: lets progress show a percentage and an ETA.
    func expect(bytes: Int64?) { monitor.withLock { expectedBytes = bytes } }

    /// A consistent copy of the counts.
    public var snapshot: Snapshot {
        monitor.withLock {
            Snapshot(
                elapsed: MonotonicClock.now - started, lines: lines, bytesRead: bytesRead,
                expectedBytes: expectedBytes)
        }
    }

    /// The counts at one moment.
    public struct Snapshot: Sendable {
        /// Seconds since the run began.
        public var elapsed: Double
        var lines: Tally
        /// Input bytes read (as stored: a `.warc.gz` counts compressed).
        public var bytesRead: Int64
        /// The input's total size, when known.
        public var expectedBytes: Int64?

        public var records: Int { lines.records }
        public var ok: Int { lines.ok }
        public var errors: Int { lines.records - lines.ok }
        public var errorsByCode: [String: Int] { lines.errorsByCode }
        /// Records skipped by each `--select-…` filter, keyed by the option's name without `--`.
        public var skipped: [String: Int] { lines.skipped }
        /// Records written without decoding (`--fields`), not in ``records``.
        public var undecoded: Int { lines.undecoded }

        var recordsPerSecond: Double { elapsed > 0 ? Double(lines.records) / elapsed : 0 }
        var megabytesPerSecond: Double { elapsed > 0 ? Double(bytesRead) / 1e6 / elapsed : 0 }

        /// One JSON line (with its line feed): `{"stats":{…}}`, for `--stats-interval`, SIGUSR1 and log scrapers.
        public var jsonLine: String {
            func object(_ pairs: [(String, String)]) -> String {
                "{" + pairs.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
            }
            let codes = errorsByCode.sorted { $0.key < $1.key }.map { ($0.key, String($0.value)) }
            let decoders = lines.byDecoder.sorted { $0.key < $1.key }.map {
                ($0.key, object([("records", String($0.value.records)), ("errors", String($0.value.errors))]))
            }
            var fields: [(String, String)] = [
                ("elapsed", fixed(elapsed, 3)), ("records", String(records)), ("ok", String(ok)),
                ("errors", String(errors)), ("errorsByCode", object(codes)), ("byDecoder", object(decoders)),
            ]
            if !skipped.isEmpty {
                fields.append(
                    ("skipped", object(skipped.sorted { $0.key < $1.key }.map { ($0.key, String($0.value)) })))
            }
            if undecoded > 0 { fields.append(("undecoded", String(undecoded))) }
            fields.append(("bytesIn", String(bytesRead)))
            if let expectedBytes { fields.append(("bytesTotal", String(expectedBytes))) }
            fields += [
                ("bodyBytes", String(lines.bodyBytes)), ("decodedBytes", String(lines.decodedBytes)),
                ("recordsPerSecond", fixed(recordsPerSecond, 1)), ("mbPerSecond", fixed(megabytesPerSecond, 2)),
            ]
            return object([("stats", object(fields))]) + "\n"
        }

        /// The end-of-run summary of `--stats`, for people.
        public var summary: String {
            var text = "respdecode: \(records) records, \(ok) ok, \(errors) errors in \(fixed(elapsed, 3)) s"
            text += " (\(fixed(recordsPerSecond, 0)) records/s, \(fixed(megabytesPerSecond, 1)) MB/s)\n"
            text += "  bytes in \(bytesRead), bodies \(lines.bodyBytes), decoded \(lines.decodedBytes)\n"
            if !errorsByCode.isEmpty {
                text += "  errors by code: "
                text += errorsByCode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                text += "\n"
            }
            if !skipped.isEmpty {
                text += "  skipped by "
                text += skipped.sorted { $0.key < $1.key }.map { "--\($0.key) \($0.value)" }.joined(separator: ", ")
                text += " (not in the records above)\n"
            }
            if undecoded > 0 {
                text += "  \(undecoded) more written without decoding (--fields asks for no key that needs it)\n"
            }
            if !lines.byDecoder.isEmpty {
                text += "  by decoder: "
                text += lines.byDecoder.sorted { $0.key < $1.key }
                    .map { "\($0.key) \($0.value.records) (\($0.value.errors) errors)" }.joined(separator: ", ")
                text += "\n"
            }
            return text
        }

        /// The live progress line: percent and ETA when the input size is known, records/s otherwise.
        var progressLine: String {
            var text = "respdecode: \(records) records, \(errors) errors, \(fixed(recordsPerSecond, 0)) records/s"
            if let expectedBytes, expectedBytes > 0 {
                let fraction = min(1, Double(bytesRead) / Double(expectedBytes))
                text += ", \(fixed(fraction * 100, 1)) %"
                if fraction > 0.001 && elapsed > 0.5 {
                    text += ", ETA \(Int((elapsed / fraction - elapsed).rounded())) s"
                }
            }
            return text
        }
    }
}

/// `value` with `digits` decimals (no Foundation formatter in the library).
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "0" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
    if digits > 0 {
        let fraction = Int(scaled) - whole * Int(scale)
        let digitsText = String(fraction)
        text += "." + String(repeating: "0", count: digits - digitsText.count) + digitsText
    }
    return text
}

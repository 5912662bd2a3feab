/// Scalar conversions shared by the binary and the XML property list readers: reals, dates and wide integers as JSON
/// text, and the XML `<date>` text format. Standard library only, with the calendar arithmetic done here (proleptic
/// Gregorian, UTC), so that both readers give the same text for the same value.
///
/// Each writer comes twice: as an `OutputBuffer` method, and as a function writing through a pointer (for readers
/// that keep their own cursor into reserved room) with a bound on how much it writes.

extension OutputBuffer {
    /// Appends a property list real as a JSON number: the shortest text that reads back as the same `Double`
    /// (Python's `repr`, Swift's `description`: `1.0`, `0.1`, `1e+16`, `5e-324`, `-0.0`). JSON has no non-finite
    /// numbers, so infinities and NaN become the JSON strings `"Infinity"`, `"-Infinity"` and `"NaN"`.
    func appendPlistReal(_ value: Double) {
        reserve(PlistText.maxRealBytes)
        commit(PlistText.writeReal(value, to: end))
    }

    /// Appends a property list date, given as seconds since 2001-01-01T00:00:00Z, as a JSON string in ISO 8601 UTC:
    /// `"2001-01-01T00:00:00Z"`, or with the fraction of a second when there is one, to the microsecond and without
    /// trailing zeros (`"2001-01-01T00:00:05.5Z"`).
    ///
    /// The seconds are rounded to microseconds exactly as Python's `datetime.timedelta(seconds:)` does (whole seconds
    /// exactly, the fraction scaled in floating point, then round-half-even), so the text matches `plistlib`.
    ///
    /// - Returns: `false`, appending nothing, when the value is not finite or falls outside the years 1…9999.
    func appendPlistDate(secondsSinceReferenceDate seconds: Double) -> Bool {
        reserve(PlistText.maxDateBytes)
        guard let n = PlistText.writeDate(secondsSinceReferenceDate: seconds, to: end) else { return false }
        commit(n)
        return true
    }

    /// Appends an unsigned 64-bit integer in decimal.
    func appendDecimal(_ value: UInt64) {
        reserve(PlistText.maxDecimalBytes)
        commit(PlistText.writeDecimal(value, to: end))
    }

    /// Appends the signed 128-bit integer `high << 64 | low` (two's complement) in decimal.
    func appendDecimal(high: Int64, low: UInt64) {
        reserve(PlistText.maxDecimalBytes)
        commit(PlistText.writeDecimal(high: high, low: low, to: end))
    }

    /// Appends the signed 128-bit integer in decimal.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func appendDecimal(_ value: Int128) {
        appendDecimal(high: Int64(truncatingIfNeeded: value >> 64), low: UInt64(truncatingIfNeeded: value))
    }
}

/// The pointer-level writers behind the `OutputBuffer` methods. Each writes at most its `max…Bytes` bytes at `out`
/// and returns how many it wrote.
enum PlistText {
    /// Most bytes `writeReal` writes (`"-Infinity"` is 11, `-1.7976931348623157e+308` is 24).
    static let maxRealBytes = 32
    /// Most bytes `writeDate` writes: `"YYYY-MM-DDTHH:MM:SS.ffffffZ"` with its quotes.
    static let maxDateBytes = 29
    /// Most bytes the decimal writers write: a sign and the 39 digits of 2^127.
    static let maxDecimalBytes = 40

    /// Writes `value` as `OutputBuffer.appendPlistReal` does.
    static func writeReal(_ value: Double, to out: UnsafeMutablePointer<UInt8>) -> Int {
        guard value.isFinite else {
            if value.isNaN { return copy("\"NaN\"", to: out) }
            return value < 0 ? copy("\"-Infinity\"", to: out) : copy("\"Infinity\"", to: out)
        }
        // Whole numbers below 10^16 print as their digits plus ".0" (Swift and Python switch to exponent notation
        // from 1e16 on); this skips building a String for a common case.
        if value.magnitude < 1e16 && value == value.rounded(.towardZero) {
            var n = 0
            if value.sign == .minus {
                out[0] = UInt8(ascii: "-")
                n = 1
            }
            n += writeDecimal(UInt64(value.magnitude), to: out + n)
            out[n] = UInt8(ascii: ".")
            out[n + 1] = UInt8(ascii: "0")
            return n + 2
        }
        var text = value.description
        return text.withUTF8 { utf8 in
            let n = min(utf8.count, maxRealBytes)
            out.update(from: utf8.baseAddress!, count: n)
            return n
        }
    }

    private static func copy(_ text: StaticString, to out: UnsafeMutablePointer<UInt8>) -> Int {
        out.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        return text.utf8CodeUnitCount
    }

    /// Writes the date as `OutputBuffer.appendPlistDate` does; `nil` (having written nothing defined) when it is not
    /// representable.
    static func writeDate(secondsSinceReferenceDate seconds: Double, to out: UnsafeMutablePointer<UInt8>) -> Int? {
        guard let micro = PlistCalendar.microsecondsSinceYear1(secondsSinceReferenceDate: seconds) else { return nil }
        let dayMicroseconds = PlistCalendar.microsecondsPerDay
        let (year, month, day) = PlistCalendar.civilDate(daysSinceYear1: Int(micro / dayMicroseconds))
        var rest = micro % dayMicroseconds
        let fraction = Int(rest % 1_000_000)
        rest /= 1_000_000
        let second = Int(rest % 60)
        let minute = Int(rest / 60 % 60)
        let hour = Int(rest / 3600)

        @inline(__always) func put2(_ value: Int, _ at: Int) {
            out[at] = UInt8(truncatingIfNeeded: value / 10) &+ 0x30
            out[at + 1] = UInt8(truncatingIfNeeded: value % 10) &+ 0x30
        }
        out[0] = UInt8(ascii: "\"")
        put2(year / 100, 1)
        put2(year % 100, 3)
        out[5] = UInt8(ascii: "-")
        put2(month, 6)
        out[8] = UInt8(ascii: "-")
        put2(day, 9)
        out[11] = UInt8(ascii: "T")
        put2(hour, 12)
        out[14] = UInt8(ascii: ":")
        put2(minute, 15)
        out[17] = UInt8(ascii: ":")
        put2(second, 18)
        var n = 20
        if fraction != 0 {
            out[n] = UInt8(ascii: ".")
            n += 1
            var digits = fraction
            var width = 6
            while digits % 10 == 0 {
                digits /= 10
                width -= 1
            }
            var divisor = 100_000
            for _ in 0..<width {
                out[n] = UInt8(truncatingIfNeeded: fraction / divisor % 10) &+ 0x30
                n += 1
                divisor /= 10
            }
        }
        out[n] = UInt8(ascii: "Z")
        out[n + 1] = UInt8(ascii: "\"")
        return n + 2
    }

    /// Writes a signed 64-bit integer in decimal.
    @inline(__always)
    static func writeDecimal(_ value: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        if value < 0 {
            out[0] = UInt8(ascii: "-")
            return 1 + writeDecimal(value.magnitude, to: out + 1)
        }
        return writeDecimal(UInt64(value), to: out)
    }

    /// Writes an unsigned 64-bit integer in decimal.
    @inline(__always)
    static func writeDecimal(_ value: UInt64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        if value < 10 {
            out[0] = UInt8(truncatingIfNeeded: value) &+ 0x30
            return 1
        }
        return writeDigits(value, minimumWidth: 1, to: out)
    }

    /// Writes `value` in decimal, left-padded with zeros to `minimumWidth` digits (at most 20).
    static func writeDigits(_ value: UInt64, minimumWidth: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 1
        var probe = value
        while probe >= 10 {
            probe /= 10
            count += 1
        }
        count = max(count, minimumWidth)
        var rest = value
        var i = count
        while i > 0 {
            i -= 1
            out[i] = UInt8(truncatingIfNeeded: rest % 10) &+ 0x30
            rest /= 10
        }
        return count
    }

    /// Writes the signed 128-bit integer `high << 64 | low` (two's complement) in decimal.
    static func writeDecimal(high: Int64, low: UInt64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        // Values that fit 64 bits: the sign-extension of `low` is all of `high`.
        if high == Int64(bitPattern: low) >> 63 {
            return writeDecimal(Int64(bitPattern: low), to: out)
        }
        let negative = high < 0
        // The magnitude as an unsigned (hi, lo) pair: two's complement negation when negative.
        var hi = UInt64(bitPattern: high)
        var lo = low
        if negative {
            hi = ~hi
            lo = ~lo
            let (sum, carry) = lo.addingReportingOverflow(1)
            lo = sum
            if carry { hi &+= 1 }
        }
        // Split into base-10^19 chunks, least significant first; 2^127 needs at most three.
        let chunkBase: UInt64 = 10_000_000_000_000_000_000
        var low0: UInt64 = 0
        var low1: UInt64 = 0
        var chunkCount = 0
        while hi != 0 {
            let quotientHigh = hi / chunkBase
            let (quotientLow, remainder) = chunkBase.dividingFullWidth((high: hi % chunkBase, low: lo))
            if chunkCount == 0 { low0 = remainder } else { low1 = remainder }
            chunkCount += 1
            hi = quotientHigh
            lo = quotientLow
        }
        // `lo` is now the most significant chunk; the others follow, most significant first, zero-padded.
        var n = 0
        if negative {
            out[0] = UInt8(ascii: "-")
            n = 1
        }
        n += writeDigits(lo, minimumWidth: 1, to: out + n)
        if chunkCount == 2 { n += writeDigits(low1, minimumWidth: 19, to: out + n) }
        if chunkCount >= 1 { n += writeDigits(low0, minimumWidth: 19, to: out + n) }
        return n
    }
}

/// Parses the text of an XML property list `<date>` element as Python's `plistlib` does and returns the seconds since
/// 2001-01-01T00:00:00Z, or `nil` when `plistlib` would reject it.
///
/// `plistlib` matches (from the start, not to the end), with ASCII digits,
///
///     (\d\d\d\d)(?:-(\d\d)(?:-(\d\d)(?:T(\d\d)(?::(\d\d)(?::(\d\d))?)?)?)?)?Z
///
/// then builds `datetime(*fields)`. So:
/// - the year, month and day are required: `2001Z` and `2001-02Z` match the pattern but `datetime` then fails for the
///   missing month or day; hour, minute and second may be left off (from the right) and default to 0;
/// - the fields are range-checked like `datetime`: year 1…9999, month 1…12, day within the month (leap years of the
///   proleptic Gregorian calendar), hour 0…23, minute 0…59, second 0…59;
/// - anything after the `Z` is ignored (the pattern is matched, not full-matched); nothing may precede the year.
func parsePlistXMLDate(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
    let n = bytes.count
    var i = 0
    /// Reads `width` ASCII digits at `i`.
    func number(_ width: Int) -> Int? {
        guard n - i >= width else { return nil }
        var value = 0
        for k in 0..<width {
            let digit = bytes[i + k] &- 0x30
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        i += width
        return value
    }
    /// Consumes `separator` followed by two digits, if both are there (the pattern's optional groups back off
    /// entirely when the digits are missing, leaving the separator to be matched against `Z`).
    func field(after separator: UInt8) -> Int? {
        guard i < n, bytes[i] == separator else { return nil }
        let start = i
        i += 1
        if let value = number(2) { return value }
        i = start
        return nil
    }
    guard let year = number(4) else { return nil }
    // The optional groups nest, so each one is tried only when the one before it matched.
    var month: Int?
    var day: Int?
    var hour: Int?
    var minute: Int?
    var second: Int?
    month = field(after: UInt8(ascii: "-"))
    if month != nil { day = field(after: UInt8(ascii: "-")) }
    if day != nil { hour = field(after: UInt8(ascii: "T")) }
    if hour != nil { minute = field(after: UInt8(ascii: ":")) }
    if minute != nil { second = field(after: UInt8(ascii: ":")) }
    guard i < n, bytes[i] == UInt8(ascii: "Z") else { return nil }
    guard let month, let day else { return nil }
    let h = hour ?? 0
    let m = minute ?? 0
    let s = second ?? 0
    guard year >= 1, (1...12).contains(month), day >= 1, day <= PlistCalendar.daysInMonth(month, year: year),
        h < 24, m < 60, s < 60
    else { return nil }
    let days = PlistCalendar.daysSinceYear1(year: year, month: month, day: day) - PlistCalendar.referenceDays
    return Double(days * 86_400 + h * 3_600 + m * 60 + s)
}

/// Calendar arithmetic of the proleptic Gregorian calendar, in days counted from 0001-01-01 (day 0).
enum PlistCalendar {
    /// Days from 0001-01-01 to 2001-01-01, the property list reference date.
    static let referenceDays = daysSinceYear1(year: 2001, month: 1, day: 1)
    /// Days from 0001-01-01 to 10000-01-01: the end of the representable range.
    static let endDays = daysSinceYear1(year: 10_000, month: 1, day: 1)
    static let microsecondsPerDay: Int64 = 86_400_000_000

    /// Cumulative days before each month in a common year (index 0 is January).
    private static let daysBeforeMonth = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365]

    static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// The length of `month` (1…12) of `year`.
    static func daysInMonth(_ month: Int, year: Int) -> Int {
        if month == 2 { return isLeap(year) ? 29 : 28 }
        return daysBeforeMonth[month] - daysBeforeMonth[month - 1]
    }

    /// Days from 0001-01-01 to the given date (year ≥ 1, month 1…12, day valid).
    static func daysSinceYear1(year: Int, month: Int, day: Int) -> Int {
        let y = year - 1
        var days = y * 365 + y / 4 - y / 100 + y / 400
        days += daysBeforeMonth[month - 1] + (month > 2 && isLeap(year) ? 1 : 0)
        return days + day - 1
    }

    /// The date `days` days after 0001-01-01 (`days` ≥ 0).
    static func civilDate(daysSinceYear1 days: Int) -> (year: Int, month: Int, day: Int) {
        // Whole 400-, 100-, 4- and 1-year periods; the last day of a 400- or 4-year period belongs to the long
        // (leap) last year, hence the clamps.
        var rest = days
        let periods400 = rest / 146_097
        rest %= 146_097
        let periods100 = min(rest / 36_524, 3)
        rest -= periods100 * 36_524
        let periods4 = rest / 1_461
        rest %= 1_461
        let years = min(rest / 365, 3)
        rest -= years * 365
        let year = periods400 * 400 + periods100 * 100 + periods4 * 4 + years + 1
        let leapDay = isLeap(year) ? 1 : 0
        var month = 1
        while month < 12 {
            let before = daysBeforeMonth[month] + (month >= 2 ? leapDay : 0)
            if rest < before { break }
            month += 1
        }
        let before = daysBeforeMonth[month - 1] + (month > 2 ? leapDay : 0)
        return (year, month, rest - before + 1)
    }

    /// Microseconds from 0001-01-01T00:00:00Z to the instant `seconds` after the reference date, rounded as Python's
    /// `timedelta(seconds:)` rounds; `nil` if not finite or outside 0001-01-01…9999-12-31T23:59:59.999999.
    static func microsecondsSinceYear1(secondsSinceReferenceDate seconds: Double) -> Int64? {
        // 10^12 s is about 31,700 years, well past the range either way, and keeps the products below in Int64.
        guard seconds.isFinite, seconds.magnitude < 1e12 else { return nil }
        let whole = seconds.rounded(.towardZero)
        let scaled = (seconds - whole) * 1_000_000
        let wholeMicro = scaled.rounded(.towardZero)
        let leftover = scaled - wholeMicro
        var micro = Int64(whole) * 1_000_000 + Int64(wholeMicro)
        // Round the leftover (|leftover| < 1) to a whole microsecond, ties to the even total.
        if leftover > 0.5 || (leftover == 0.5 && micro & 1 != 0) {
            micro += 1
        } else if leftover < -0.5 || (leftover == -0.5 && micro & 1 != 0) {
            micro -= 1
        }
        let total = Int64(referenceDays) * microsecondsPerDay + micro
        guard total >= 0, total < Int64(endDays) * microsecondsPerDay else { return nil }
        return total
    }
}

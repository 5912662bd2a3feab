import RespDecodeTestSupport
import Testing

@testable import RespDecode

@Suite struct PlistScalarsTests {
    func text(_ write: (OutputBuffer) -> Void) -> String {
        let output = OutputBuffer(capacity: 16)
        write(output)
        return String(decoding: output.array, as: UTF8.self)
    }

    func date(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { parsePlistXMLDate($0) }
    }

    // MARK: XML date text

    @Test func fullDates() {
        #expect(date("2001-01-01T00:00:00Z") == 0)
        #expect(date("2001-01-01T00:00:01Z") == 1)
        #expect(date("2000-12-31T23:59:59Z") == -1)
        #expect(date("1970-01-01T00:00:00Z") == -978_307_200)
        #expect(date("2000-02-29T00:00:00Z") == Double(-307 * 86_400))
        #expect(date("0001-01-01T00:00:00Z") == -63_113_904_000)
        #expect(date("9999-12-31T23:59:59Z") == 252_423_993_599)
        #expect(date("2001-02-03T04:05:06Z") == Double((31 + 2) * 86_400 + 4 * 3_600 + 5 * 60 + 6))
    }

    @Test func partialDates() {
        // Hour, minute and second may be left off from the right; they default to 0.
        #expect(date("2001-01-02Z") == 86_400)
        #expect(date("2001-01-02T03Z") == Double(86_400 + 3 * 3_600))
        #expect(date("2001-01-02T03:04Z") == Double(86_400 + 3 * 3_600 + 4 * 60))
        // Year alone or year and month match plistlib's pattern, but datetime() then lacks the month or day.
        #expect(date("2001Z") == nil)
        #expect(date("2001-02Z") == nil)
    }

    @Test func textAfterTheZIsIgnored() {
        // plistlib uses re.match, which anchors only at the start.
        #expect(date("2001-01-01T00:00:00Zjunk") == 0)
        #expect(date("2001-01-01T00:00:00Z ") == 0)
        #expect(date("2001-01-02Z\n") == 86_400)
    }

    @Test func malformedDateText() {
        for bad in [
            "", "Z", "2001", "2001-01-01", "2001-01-01T00:00:00", " 2001-01-01T00:00:00Z", "01-01-01Z",
            "2001-1-01Z", "2001-01-1Z", "2001-01-01T0:00:00Z", "2001-01-01T00:0:00Z", "2001-01-01T00:00:0Z",
            "2001-01-01T00:00:00.5Z", "2001-01-01 00:00:00Z", "2001-01-01T00:00:00+00:00",
            "2001/01/01Z", "2001-01-01t00:00:00Z", "2001-01-01T00:00:00z", "２００１-01-01Z", "200a-01-01Z",
            "2001-01-01T00:00:00:00Z", "2001-01-01T24Z", "-001-01-01Z", "+2001-01-01Z",
        ] {
            #expect(date(bad) == nil, "\(bad)")
        }
    }

    @Test func dateFieldRanges() {
        #expect(date("0000-01-01T00:00:00Z") == nil)
        #expect(date("2001-00-01T00:00:00Z") == nil)
        #expect(date("2001-13-01T00:00:00Z") == nil)
        #expect(date("2001-01-00T00:00:00Z") == nil)
        #expect(date("2001-01-32T00:00:00Z") == nil)
        #expect(date("2001-04-31T00:00:00Z") == nil)
        #expect(date("2001-04-30T00:00:00Z") != nil)
        #expect(date("2001-02-29T00:00:00Z") == nil)
        #expect(date("2004-02-29T00:00:00Z") != nil)
        #expect(date("2000-02-29T00:00:00Z") != nil)
        #expect(date("1900-02-29T00:00:00Z") == nil)
        #expect(date("2100-02-29T00:00:00Z") == nil)
        #expect(date("2400-02-29T00:00:00Z") != nil)
        #expect(date("2001-01-01T24:00:00Z") == nil)
        #expect(date("2001-01-01T23:60:00Z") == nil)
        #expect(date("2001-01-01T23:59:60Z") == nil)
        #expect(date("2001-01-01T23:59:59Z") == 86_399)
    }

    @Test func dateTextRoundTripsThroughTheWriter() {
        for sample in [
            "1583-10-15T12:34:56Z", "1600-02-29T00:00:00Z", "1999-12-31T23:59:59Z", "2024-02-29T09:08:07Z",
            "0004-02-29T00:00:00Z", "0100-03-01T00:00:00Z", "4000-12-31T00:00:00Z",
        ] {
            guard let seconds = date(sample) else {
                Issue.record("\(sample) did not parse")
                continue
            }
            #expect(text { _ = $0.appendPlistDate(secondsSinceReferenceDate: seconds) } == "\"" + sample + "\"")
        }
    }

    // MARK: Calendar

    @Test func calendarRoundTripsEveryDay() {
        var expected = (year: 1, month: 1, day: 1)
        for days in 0..<PlistCalendar.endDays {
            let civil = PlistCalendar.civilDate(daysSinceYear1: days)
            guard civil == expected else {
                Issue.record("day \(days): \(civil), expected \(expected)")
                return
            }
            guard PlistCalendar.daysSinceYear1(year: civil.year, month: civil.month, day: civil.day) == days else {
                Issue.record("day \(days) does not round-trip")
                return
            }
            // Next day by hand.
            if expected.day < PlistCalendar.daysInMonth(expected.month, year: expected.year) {
                expected.day += 1
            } else if expected.month < 12 {
                expected = (expected.year, expected.month + 1, 1)
            } else {
                expected = (expected.year + 1, 1, 1)
            }
        }
        #expect(expected == (10_000, 1, 1))
        #expect(PlistCalendar.referenceDays == 730_485)
    }

    // MARK: Date writer

    @Test func dateWriter() {
        #expect(text { _ = $0.appendPlistDate(secondsSinceReferenceDate: 0) } == "\"2001-01-01T00:00:00Z\"")
        #expect(
            text { _ = $0.appendPlistDate(secondsSinceReferenceDate: 59.999999) } == "\"2001-01-01T00:00:59.999999Z\"")
        #expect(text { _ = $0.appendPlistDate(secondsSinceReferenceDate: 0.1) } == "\"2001-01-01T00:00:00.1Z\"")
        #expect(
            text { _ = $0.appendPlistDate(secondsSinceReferenceDate: -0.000001) } == "\"2000-12-31T23:59:59.999999Z\"")
        #expect(text { _ = $0.appendPlistDate(secondsSinceReferenceDate: 0.0000005) } == "\"2001-01-01T00:00:00Z\"")
        #expect(
            text { _ = $0.appendPlistDate(secondsSinceReferenceDate: 0.0000015) } == "\"2001-01-01T00:00:00.000002Z\"")
        #expect(
            text { _ = $0.appendPlistDate(secondsSinceReferenceDate: 0.0000025) } == "\"2001-01-01T00:00:00.000002Z\"")
        #expect(
            text { _ = $0.appendPlistDate(secondsSinceReferenceDate: 252_423_993_599.5) }
                == "\"9999-12-31T23:59:59.5Z\"")
        let output = OutputBuffer()
        #expect(!output.appendPlistDate(secondsSinceReferenceDate: 252_423_993_600))
        #expect(!output.appendPlistDate(secondsSinceReferenceDate: -63_113_904_000.5))
        #expect(!output.appendPlistDate(secondsSinceReferenceDate: .nan))
        #expect(!output.appendPlistDate(secondsSinceReferenceDate: .infinity))
        #expect(!output.appendPlistDate(secondsSinceReferenceDate: -1e18))
        #expect(output.count == 0)
    }

    // MARK: Numbers

    @Test func reals() {
        #expect(text { $0.appendPlistReal(1) } == "1.0")
        #expect(text { $0.appendPlistReal(-1) } == "-1.0")
        #expect(text { $0.appendPlistReal(0) } == "0.0")
        #expect(text { $0.appendPlistReal(-0.0) } == "-0.0")
        #expect(text { $0.appendPlistReal(9_999_999_999_999_998) } == "9999999999999998.0")
        #expect(text { $0.appendPlistReal(-9_999_999_999_999_998) } == "-9999999999999998.0")
        #expect(text { $0.appendPlistReal(1e16) } == "1e+16")
        #expect(text { $0.appendPlistReal(-1e16) } == "-1e+16")
        #expect(text { $0.appendPlistReal(2.5e-7) } == "2.5e-07")
        #expect(text { $0.appendPlistReal(0.3) } == "0.3")
        #expect(text { $0.appendPlistReal(1.0 / 3) } == "0.3333333333333333")
        #expect(text { $0.appendPlistReal(.infinity) } == "\"Infinity\"")
        #expect(text { $0.appendPlistReal(-.infinity) } == "\"-Infinity\"")
        #expect(text { $0.appendPlistReal(-.nan) } == "\"NaN\"")
    }

    @Test func realsAreValidJSONAndRoundTrip() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let value = Double(bitPattern: rng.next())
            guard value.isFinite else { continue }
            let written = text { $0.appendPlistReal(value) }
            #expect(JSONValidator.isValid(Array(written.utf8)), "\(written)")
            #expect(Double(written) == value, "\(written)")
        }
    }

    @Test func wideDecimals() {
        #expect(text { $0.appendDecimal(high: 0, low: 0) } == "0")
        #expect(text { $0.appendDecimal(high: -1, low: UInt64.max) } == "-1")
        #expect(text { $0.appendDecimal(high: 0, low: UInt64.max) } == "18446744073709551615")
        #expect(text { $0.appendDecimal(high: 1, low: 0) } == "18446744073709551616")
        #expect(text { $0.appendDecimal(high: -1, low: 0) } == "-18446744073709551616")
        #expect(text { $0.appendDecimal(high: -1, low: 1 << 63) } == "-9223372036854775808")
        #expect(text { $0.appendDecimal(high: -1, low: (1 << 63) - 1) } == "-9223372036854775809")
        #expect(
            text { $0.appendDecimal(high: Int64.max, low: UInt64.max) } == "170141183460469231731687303715884105727")
        #expect(text { $0.appendDecimal(high: Int64.min, low: 0) } == "-170141183460469231731687303715884105728")
        // 10^19 = 0x8AC7230489E80000; 10^38 = 0x4B3B4CA85A86C47A098A224000000000.
        #expect(
            text { $0.appendDecimal(high: 0x4B3B_4CA8_5A86_C47A, low: 0x098A_2240_0000_0000) }
                == "100000000000000000000000000000000000000")
        #expect(
            text { $0.appendDecimal(high: 0x4B3B_4CA8_5A86_C47A, low: 0x098A_2240_0000_0001) }
                == "100000000000000000000000000000000000001")
        #expect(text { $0.appendDecimal(UInt64(10_000_000_000_000_000_000)) } == "10000000000000000000")
        #expect(text { $0.appendDecimal(UInt64(0)) } == "0")
    }

    @Test func int128Decimals() {
        #expect(text { $0.appendDecimal(Int128.max) } == "170141183460469231731687303715884105727")
        #expect(text { $0.appendDecimal(Int128.min) } == "-170141183460469231731687303715884105728")
        #expect(text { $0.appendDecimal(Int128(0)) } == "0")
        var rng = SplitMix64(seed: 7)
        for _ in 0..<5_000 {
            let bits = UInt128(rng.next()) << 64 | UInt128(rng.next())
            let value = Int128(bitPattern: bits) >> Int.random(in: 0..<128, using: &rng)
            #expect(text { $0.appendDecimal(value) } == String(value))
        }
    }
}

import Glibc

/// The form decoder: an `application/x-www-form-urlencoded` body read by the WHATWG URL Standard's urlencoded parser
/// (https://url.spec.whatwg.org/#concept-urlencoded-parser), written as an object of arrays in first-seen name order:
/// `a=1&b=x+y&a=2` is `{"a":["1","2"],"b":["x y"]}` (docs/output.md#form, docs/decoding.md#form).
///
/// Our own code: the parser is a dozen lines of the standard, and no C library on Debian implements it (libcurl's
/// `curl_easy_unescape` has no `+` rule and no U+FFFD decoding). The parser rejects nothing, so the decoder has no
/// parse error; the charset parameter is ignored, as the standard's parser ignores it.
public struct FormBodyDecoder: BodyDecoder {
    public let name = "form"

    public let defaultAcceptableTypes: [MediaTypePattern] = ["application/x-www-form-urlencoded"]
        .compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        // An empty body, or exactly one space, means "no content" (docs/decoding.md#empty-bodies).
        if Self.isNoContent(body) { return false }
        let limits = context.options.limits
        let replacements = try FormParser(body: body, maxFields: limits.maxFormFields).write(
            into: output, maxValueBytes: limits.maxValueBytes)
        if let warning = utf8ReplacementWarning(replacements) { context.warnings.append(warning) }
        return true
    }
}

/// One form body: its name-value pairs percent-decoded, names grouped by a hash table. A name or value without `+`
/// or `%` is used where it is in the body; the others are decoded into one scratch buffer of the body's size
/// (decoding never lengthens a sequence), so no pair costs an allocation of its own.
struct FormParser {
    /// A decoded name, hashed by its bytes.
    struct Name: Hashable {
        let start: UnsafePointer<UInt8>
        let count: Int

        static func == (lhs: Name, rhs: Name) -> Bool {
            lhs.count == rhs.count && memcmp(lhs.start, rhs.start, lhs.count) == 0
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(bytes: UnsafeRawBufferPointer(start: start, count: count))
        }
    }

    /// The group (index in `names`) of each distinct name: open addressing on a seeded multiply-mix hash of the
    /// bytes. Measured: Swift's Dictionary, hashing with SipHash through `Hasher`, was a fifth of a form's decoding
    /// (bench/form/run). The seed is random per process, so a body cannot be built to collide; should a probe still
    /// run long (64 slots), the table gives way to a Dictionary, whose hashing is keyed SipHash.
    struct NameTable {
        static let seed = UInt64.random(in: .min ... .max)
        /// Group + 1 per slot (0: empty); a power of two long.
        var slots = [Int32](repeating: 0, count: 64)
        var count = 0
        var fallback: [Name: Int]?
        /// The probe length at which the table gives way to a Dictionary (a parameter for the tests).
        var probeLimit = 64

        mutating func group(of name: Name, in names: inout [Name]) -> Int {
            if fallback != nil { return fallbackGroup(of: name, in: &names) }
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: Self.hash(name)) & mask
            var probes = 0
            while true {
                let entry = Int(slots[slot])
                if entry == 0 { break }
                let other = names[entry - 1]
                if other.count == name.count && memcmp(other.start, name.start, name.count) == 0 { return entry - 1 }
                slot = (slot + 1) & mask
                probes += 1
                if probes >= probeLimit {
                    fallback = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
                    return fallbackGroup(of: name, in: &names)
                }
            }
            let group = names.count
            names.append(name)
            slots[slot] = Int32(truncatingIfNeeded: group + 1)
            count += 1
            if count * 2 > slots.count { grow(names) }
            return group
        }

        private mutating func fallbackGroup(of name: Name, in names: inout [Name]) -> Int {
            if let known = fallback![name] { return known }
            let group = names.count
            names.append(name)
            fallback![name] = group
            return group
        }

        private mutating func grow(_ names: [Name]) {
            slots = [Int32](repeating: 0, count: slots.count * 2)
            let mask = slots.count - 1
            for (group, name) in names.enumerated() {
                var slot = Int(truncatingIfNeeded: Self.hash(name)) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = Int32(truncatingIfNeeded: group + 1)
            }
        }

        @inline(__always)
        private static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
            let product = a.multipliedFullWidth(by: b)
            return product.high ^ product.low
        }

        /// A multiply-mix of the bytes, eight at a time, from the seed.
        static func hash(_ name: Name) -> UInt64 {
            var h = seed ^ (UInt64(name.count) &* 0x9E37_79B9_7F4A_7C15)
            let raw = UnsafeRawPointer(name.start)
            var i = 0
            while name.count - i >= 8 {
                h = mix(h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self), 0xA076_1D64_78BD_642F)
                i += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < name.count {
                tail |= UInt64(name.start[i]) << shift
                shift += 8
                i += 1
            }
            return mix(h ^ tail, 0xE703_7ED1_A0B4_28DB)
        }
    }

    let body: UnsafeBufferPointer<UInt8>
    let maxFields: Int

    /// Parses the body and writes its value; returns the number of U+FFFD replacements written.
    /// - Throws: `limitExceeded` past `maxFields` pairs or `maxValueBytes` of value; `output` is then as it was.
    func write(into output: OutputBuffer, maxValueBytes: Int) throws(RecordError) -> Int {
        let n = body.count
        guard let source = body.baseAddress else { return 0 }
        var scratch: UnsafeMutablePointer<UInt8>?
        defer { scratch?.deallocate() }
        var used = 0
        var groups = NameTable()
        var groupNames: [Name] = []
        var pairGroup: [Int32] = []
        var values: [Name] = []

        /// The decoded bytes of `source[from..<to]`: in place when nothing needs decoding.
        func decoded(from: Int, to end: Int) -> Name {
            var i = from
            while i < end && source[i] != UInt8(ascii: "+") && source[i] != UInt8(ascii: "%") { i += 1 }
            if i == end { return Name(start: source + from, count: end - from) }
            let buffer = scratch ?? UnsafeMutablePointer<UInt8>.allocate(capacity: n)
            scratch = buffer
            let first = used
            memcpy(buffer + used, source + from, i - from)
            used = Self.percentDecode(source, from: i, to: end, into: buffer, at: used + i - from)
            return Name(start: UnsafePointer(buffer + first), count: used - first)
        }

        var position = 0
        while position < n {
            // Each sequence runs to the next `&`; empty ones are skipped (the standard's steps 1-2).
            let ampersand =
                memchr(source + position, 0x26, n - position).map {
                    UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - source
                } ?? n
            defer { position = ampersand + 1 }
            if ampersand == position { continue }
            if pairGroup.count >= maxFields {
                throw RecordError(
                    .limitExceeded, "more than \(maxFields) form fields (maxFormFields)",
                    location: RecordError.Location(offset: position))
            }
            // Split at the first `=`: no `=` means the whole sequence is the name and the value is empty.
            let equals =
                memchr(source + position, 0x3D, ampersand - position).map {
                    UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - source
                } ?? ampersand
            let name = decoded(from: position, to: equals)
            values.append(equals < ampersand ? decoded(from: equals + 1, to: ampersand) : Name(start: source, count: 0))
            let group = groups.group(of: name, in: &groupNames)
            pairGroup.append(Int32(truncatingIfNeeded: group))
        }

        // The pairs of each name together, in first-seen order of the names and input order within a name: a
        // counting sort on the group.
        var next = [Int](repeating: 0, count: groupNames.count + 1)
        for group in pairGroup { next[Int(group) + 1] += 1 }
        for index in 1..<next.count { next[index] += next[index - 1] }
        let groupStart = next
        var order = [Int](repeating: 0, count: pairGroup.count)
        for (pair, group) in pairGroup.enumerated() {
            order[next[Int(group)]] = pair
            next[Int(group)] += 1
        }

        let mark = output.mark
        let (valueEnd, overflow) = output.count.addingReportingOverflow(max(maxValueBytes, 0))
        let limit = overflow ? Int.max : valueEnd
        var replacements = 0
        let tooLarge = RecordError(
            .limitExceeded, "the form's value is larger than \(maxValueBytes) bytes (maxValueBytes)")
        output.append(UInt8(ascii: "{"))
        for (group, name) in groupNames.enumerated() {
            if group > 0 { output.append(UInt8(ascii: ",")) }
            output.append(UInt8(ascii: "\""))
            guard
                let nameReplacements = output.appendLossyJSONStringContent(
                    utf8: UnsafeBufferPointer(start: name.start, count: name.count), stoppingPast: limit)
            else {
                output.rollback(to: mark)
                throw tooLarge
            }
            replacements += nameReplacements
            output.append(ascii: "\":[")
            for index in groupStart[group]..<groupStart[group + 1] {
                let pair = order[index]
                if index > groupStart[group] { output.append(UInt8(ascii: ",")) }
                output.append(UInt8(ascii: "\""))
                guard
                    let valueReplacements = output.appendLossyJSONStringContent(
                        utf8: UnsafeBufferPointer(start: values[pair].start, count: values[pair].count),
                        stoppingPast: limit)
                else {
                    output.rollback(to: mark)
                    throw tooLarge
                }
                replacements += valueReplacements
                output.append(UInt8(ascii: "\""))
            }
            output.append(UInt8(ascii: "]"))
        }
        output.append(UInt8(ascii: "}"))
        if output.count > limit {
            output.rollback(to: mark)
            throw tooLarge
        }
        return replacements
    }

    /// Decodes `source[from..<to]` into `scratch` at `at`: `+` is a space, `%` and two hex digits is that byte, any
    /// other `%` stays as it is (https://url.spec.whatwg.org/#percent-decode). Returns the end of what was written.
    @inline(__always)
    static func percentDecode(
        _ source: UnsafePointer<UInt8>, from: Int, to end: Int, into scratch: UnsafeMutablePointer<UInt8>, at: Int
    ) -> Int {
        var i = from
        var o = at
        while i < end {
            let byte = source[i]
            if byte == UInt8(ascii: "+") {
                scratch[o] = 0x20
            } else if byte == UInt8(ascii: "%"), end - i >= 3, let high = source[i + 1].hexDigitValue,
                let low = source[i + 2].hexDigitValue
            {
                scratch[o] = high << 4 | low
                i += 2
            } else {
                scratch[o] = byte
            }
            o += 1
            i += 1
        }
        return o
    }

}

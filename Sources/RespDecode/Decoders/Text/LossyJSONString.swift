extension OutputBuffer {
    /// Appends the escaped content of a JSON string (no quotes) for bytes decoded as UTF-8 with replacement: each
    /// maximal subpart of an invalid sequence becomes one U+FFFD, as WHATWG's UTF-8 decoder does
    /// (https://encoding.spec.whatwg.org/#utf-8-decode, docs/decoding.md#text-replacements). Used by the form and sse
    /// decoders, whose standards decode that way.
    ///
    /// - Returns: the number of replacements, or nil (and nothing appended) once `count` passes `limit`.
    func appendLossyJSONStringContent(utf8 bytes: UnsafeBufferPointer<UInt8>, stoppingPast limit: Int) -> Int? {
        switch appendJSONStringContent(utf8: bytes, validate: true, stoppingPast: limit) {
        case .written: return 0
        case .pastLimit: return nil
        case .invalidUTF8: break
        }
        // Only invalid UTF-8 gets here: valid runs are copied unvalidated, each bad subpart becomes U+FFFD.
        let mark = self.mark
        var replacements = 0
        var runStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            i = TextDecoding.firstNonASCII(bytes, from: i)
            guard i < n else { break }
            let length = utf8SequenceLength(bytes, at: i)
            if length > 0 {
                i += length
                continue
            }
            if runStart < i {
                appendJSONStringContent(utf8: UnsafeBufferPointer(rebasing: bytes[runStart..<i]), validate: false)
            }
            // A run of invalid bytes (a binary body) is written in blocks, with one check of the room per block.
            var invalid = true
            while invalid {
                let block = min(n - i, 4096)
                reserve(3 * block)
                var out = end
                for _ in 0..<block {
                    out[0] = 0xEF
                    out[1] = 0xBF
                    out[2] = 0xBD
                    out += 3
                    replacements += 1
                    i += TextDecoding.maximalSubpart(bytes, at: i)
                    invalid = i < n && bytes[i] >= 0x80 && utf8SequenceLength(bytes, at: i) == 0
                    if !invalid { break }
                }
                commit(end.distance(to: out))
                if count > limit {
                    rollback(to: mark)
                    return nil
                }
            }
            runStart = i
            if count > limit {
                rollback(to: mark)
                return nil
            }
        }
        if appendJSONStringContent(
            utf8: UnsafeBufferPointer(rebasing: bytes[runStart..<n]), validate: false, stoppingPast: limit) != .written
        {
            rollback(to: mark)
            return nil
        }
        return replacements
    }
}

/// The one warning a decoder that reads UTF-8 with replacement puts on the line: "N invalid byte sequences in UTF-8
/// replaced by U+FFFD" (docs/decoding.md#text-replacements), as the text decoder words it.
func utf8ReplacementWarning(_ replacements: Int) -> String? {
    TextInfo(charset: "UTF-8", source: .header, replacements: replacements).replacementWarning
}

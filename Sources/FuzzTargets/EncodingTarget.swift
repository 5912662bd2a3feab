import RespDecode

/// Content-Encoding: the first byte picks the codings (one to three of gzip, deflate, br, zstd), the rest is the body.
/// The result must stay within the decoded-size limit.
enum EncodingTarget {
    static let codings = ["gzip", "deflate", "br", "zstd"]

    static func run(_ data: UnsafeBufferPointer<UInt8>) {
        guard let selector = data.first else { return }
        var chosen = [codings[Int(selector & 3)]]
        if selector & 0x10 != 0 { chosen.append(codings[Int(selector >> 2 & 3)]) }
        if selector & 0x20 != 0 { chosen.append(codings[Int(selector >> 6 & 3)]) }
        let body = UnsafeBufferPointer(rebasing: data.dropFirst())
        let limits = FuzzLimits.limits
        do {
            let outcome = try ContentDecoding.decode(body, codings: chosen, limits: limits)
            if outcome.body.count > limits.maxDecodedBodyBytes {
                violated("\(chosen) gave \(outcome.body.count) bytes, over the limit \(limits.maxDecodedBodyBytes)")
            }
        } catch {
            // A refusal is an answer; it must carry a message.
            if error.message.isEmpty { violated("\(chosen): an error without a message") }
        }
    }
}

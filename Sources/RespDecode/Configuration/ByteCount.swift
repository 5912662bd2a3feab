/// Byte sizes as people write them in options and config files: `4096`, `64KiB`, `64MiB`, `1GiB` (also `K`, `M`,
/// `G`, `KB`, `MB`, `GB`, all binary multiples).
public enum ByteCount {
    public static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmingOWS()
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let number = Int(digits) else { return nil }
        let unit = trimmed.dropFirst(digits.count).lowercased()
        let multiplier: Int
        switch unit {
        case "", "b": multiplier = 1
        case "k", "kb", "kib": multiplier = 1 << 10
        case "m", "mb", "mib": multiplier = 1 << 20
        case "g", "gb", "gib": multiplier = 1 << 30
        default: return nil
        }
        let (value, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : value
    }
}

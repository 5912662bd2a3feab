// The Foundation peer of bench/openstep/run: reads a file of bodies (each a 4-byte big-endian length and the bytes),
// parses each with PropertyListSerialization and writes it as JSON with JSONSerialization, as an app would, and prints
// how many bodies parsed. Compiled at bench time (`swiftc -O`); not part of the package.
import Foundation

let path = CommandLine.arguments[1]
let data = try! Data(contentsOf: URL(fileURLWithPath: path))
/// The value with data as `{"base64": …}`, as respdecode maps it (JSONSerialization cannot write Data).
func jsonReady(_ value: Any) -> Any {
    switch value {
    case let data as Data: return ["base64": data.base64EncodedString()]
    case let array as [Any]: return array.map(jsonReady)
    case let dictionary as [String: Any]: return dictionary.mapValues(jsonReady)
    default: return value
    }
}

var offset = 0
var parsed = 0
var failed = 0
var written = 0
while offset + 4 <= data.count {
    let length = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    let body = data.subdata(in: offset + 4..<offset + 4 + length)
    offset += 4 + length
    do {
        let value = try PropertyListSerialization.propertyList(from: body, options: [], format: nil)
        let json = try JSONSerialization.data(withJSONObject: jsonReady(value), options: [.fragmentsAllowed])
        written += json.count
        parsed += 1
    } catch {
        failed += 1
    }
}
print("\(parsed) parsed, \(failed) failed, \(written) JSON bytes")

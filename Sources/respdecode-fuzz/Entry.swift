/*
 respdecode-fuzz: the fuzz targets of FuzzTargets as one binary.

 Built for libFuzzer (scripts/fuzz: `swift build --product respdecode-fuzz --sanitize=fuzzer --sanitize=address
 -Xswiftc -DFUZZING`), the target is named by RESPDECODE_FUZZ_TARGET. Built normally, it replays files:

     respdecode-fuzz TARGET FILE...       runs each file through TARGET; a violated invariant stops it (a trap)
 */
import FuzzTargets

#if FUZZING
    import Glibc

    nonisolated(unsafe) private var selected: FuzzTarget?

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        if selected == nil {
            let name = getenv("RESPDECODE_FUZZ_TARGET").map { String(cString: $0) } ?? ""
            guard let target = FuzzTarget(rawValue: name) else {
                fatalError("RESPDECODE_FUZZ_TARGET must be one of \(FuzzTarget.allCases.map(\.rawValue))")
            }
            selected = target
        }
        selected!.run(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
        return 0
    }
#else
    import Foundation

    @main
    struct Replay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
                FileHandle.standardError.write(
                    "usage: respdecode-fuzz TARGET FILE...   (TARGET: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")))\n"
                        .data(using: .utf8)!)
                exit(2)
            }
            for path in arguments.dropFirst() {
                guard let data = FileManager.default.contents(atPath: path) else {
                    FileHandle.standardError.write("respdecode-fuzz: cannot read \(path)\n".data(using: .utf8)!)
                    exit(2)
                }
                target.run([UInt8](data))
                print("\(name) \(path): ok")
            }
        }
    }
#endif

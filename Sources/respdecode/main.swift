import ArgumentParser
import Glibc
import RespDecode

// Usage and configuration errors exit 2 (docs/output.md#exit-status), not ArgumentParser's 64; help and --version exit
// 0.
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    // A bare `respdecode --help` documents the options of decoding, which is what a bare `respdecode` does.
    if arguments.count == 1, ["-h", "--help", "-help", "help"].contains(arguments[0]) {
        print(RespDecodeCommand.decodeHelp(), terminator: "")
        exit(0)
    }
    if let files = Invocation.plainFiles(arguments) {
        try Invocation.runPlain(files)
    } else {
        var command = try Invocation.parse(arguments)
        try command.run()
    }
} catch let code as ExitCode {
    exit(code.rawValue)
} catch let error as ConfigFileError {
    Descriptors.write("respdecode: \(error)\n", to: STDERR_FILENO)
    exit(2)
} catch {
    if RespDecodeCommand.exitCode(for: error) == .success { RespDecodeCommand.exit(withError: error) }
    Descriptors.write("respdecode: " + RespDecodeCommand.fullMessage(for: error) + "\n", to: STDERR_FILENO)
    exit(2)
}

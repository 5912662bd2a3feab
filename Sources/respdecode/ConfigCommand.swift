import ArgumentParser
import Glibc
import RespDecode

/// `respdecode config [--config FILE] [OPTIONS]`: prints the effective configuration -- the defaults, then the
/// file's options, then the command line's -- as a config file, every key with its value.
struct ConfigCommand: DecodeOptionsCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract:
            "Print the effective configuration (defaults, then --config FILE, then the options given) as a config file.",
        usage: "respdecode config [--config <file>] [<options>]",
        discussion: """
            Writes a JSON object on standard output with one key for every option of decoding (the option's long name \
            without dashes) and its effective value, in a stable order. Given back with --config, it sets the same \
            configuration; edit it to make one of your own. Keys whose value is null, and keys left out, keep their \
            defaults. "jobs" is written as the number of cores of this machine: leave it out of a file meant for \
            other machines.
            """
    )

    @OptionGroup var options: DecodeOptions

    func run() throws {
        if let failed = Descriptors.write(try options.effectiveConfigFile(), to: STDOUT_FILENO) {
            if failed != EPIPE {
                Descriptors.write(
                    "respdecode: cannot write output: \(String(cString: strerror(failed)))\n",
                    to: STDERR_FILENO)
            }
            throw ExitCode(3)
        }
    }
}

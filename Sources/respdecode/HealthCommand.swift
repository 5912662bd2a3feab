import ArgumentParser
import Glibc
import RespDecode

/// `respdecode health [--listen ADDRESS | --http ADDRESS]`: exit 0 when a server answers as it should, 1 otherwise;
/// with no address, the server PID 1 runs, or 0 when PID 1 runs none (docs/sidecar.md#respdecode-health).
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Check that 'respdecode serve' answers: exit 0 if it does, 1 if not.",
        usage: "respdecode health [--listen <address> | --http <address>] [--timeout <seconds>]",
        discussion: """
            --listen: connects, half-closes without sending anything, and expects the server to close the connection \
            cleanly with no bytes (an empty stream has no lines) within the timeout. --http: sends GET /healthz and \
            expects a 200 status line within the timeout.

            With neither, checks the server of this container: when PID 1 is 'respdecode serve', the address of its \
            --http (preferred) or --listen, from its command line or its --config file, read from /proc/1/cmdline; \
            when PID 1 is anything else (a batch run), there is nothing to check: a line on standard error, exit 0. \
            That makes 'respdecode health' the image's HEALTHCHECK.

            Exit status: 0 when the server answers as it should; 1 when it does not (connection refused, no socket, \
            timeout, unexpected bytes, another HTTP status), with the reason in one line on standard error; 2 for a \
            usage error. For Docker's HEALTHCHECK and Kubernetes exec probes.
            """
    )

    @Option(
        help: ArgumentHelp(
            "A stream listener's address: unix:PATH or tcp:HOST:PORT, as given to serve --listen.",
            valueName: "address"))
    var listen: String?

    @Option(
        help: ArgumentHelp(
            "An HTTP listener's address: unix:PATH or tcp:HOST:PORT, as given to serve --http; asks GET /healthz.",
            valueName: "address"))
    var http: String?

    @Option(
        help: ArgumentHelp(
            "Seconds to wait for the connection and the answer, above 0 and at most 3600.",
            valueName: "seconds"))
    var timeout = 2.0

    /// The environment variable naming a file to read instead of /proc/1/cmdline, for tests
    /// (docs/sidecar.md#respdecode-health). Relative paths in it start from the working directory, not PID 1's.
    static let cmdlineVariable = "RESPDECODE_HEALTH_CMDLINE"

    static func address(_ text: String, _ option: String) throws -> ListenAddress {
        do {
            return try ListenAddress(parsing: text)
        } catch {
            throw ValidationError("\(option) \(error.message)")
        }
    }

    func validate() throws {
        guard timeout.isFinite, timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be a number of seconds above 0 and at most 3600")
        }
        if listen != nil && http != nil { throw ValidationError("give --listen or --http, not both") }
        if let listen { _ = try Self.address(listen, "--listen") }
        if let http { _ = try Self.address(http, "--http") }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        do {
            let target: HealthCheck.Target
            if let listen {
                target = .stream(try Self.address(listen, "--listen"))
            } else if let http {
                target = .http(try Self.address(http, "--http"))
            } else {
                let found: HealthCheck.Target?
                if let file = getenv(Self.cmdlineVariable).map({ String(cString: $0) }), !file.isEmpty {
                    found = try HealthCheck.targetOfPID1(cmdlinePath: file, workingDirectory: nil)
                } else {
                    found = try HealthCheck.targetOfPID1()
                }
                guard let found else {
                    StatisticsReporter.writeError(
                        "respdecode health: PID 1 is not respdecode serve: nothing to check\n")
                    return
                }
                target = found
            }
            try HealthCheck.probe(target, timeout: timeout)
        } catch let error as HealthError {
            StatisticsReporter.writeError("respdecode health: \(error)\n")
            throw ExitCode(1)
        }
    }
}

internal import Glibc
public import Logging

/// A unix socket's file, as bound: removed at the end only if it is still ours (`serve`).
public struct UnixSocketFile: Sendable {
    public let path: String
    let device: UInt
    let inode: UInt

    /// Removes a socket file that no server answers on; refuses anything else at `path`.
    public static func clearStale(_ path: String, logger: Logger) throws(ServeError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ServeError(.pathInUse, "\(path) exists and is not a socket: not replacing it")
        }
        let address = ListenAddress.unix(path: path)
        guard let probe = address.makeSocket() else {
            throw ServeError(.cannotListen, "cannot make a socket for \(address): \(systemError())")
        }
        _ = fcntl(probe, F_SETFL, O_NONBLOCK)
        let connected = address.socketAddress().withPointer { connect(probe, $0, $1) }
        let reason = errno
        close(probe)
        // EAGAIN: a server whose backlog is full.
        if connected == 0 || reason == EAGAIN {
            throw ServeError(.alreadyListening, "a server is already listening on \(address)")
        }
        guard reason == ECONNREFUSED else {
            throw ServeError(.cannotListen, "cannot tell whether \(address) is in use: \(systemError(reason))")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw ServeError(.cannotListen, "cannot remove the stale socket \(path): \(systemError())")
        }
        logger.notice("removed the stale socket \(path)")
    }

    /// The socket file at `path` as it is now (its device and inode), or nil when there is none.
    public static func identity(of path: String) -> UnixSocketFile? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return UnixSocketFile(path: path, device: UInt(info.st_dev), inode: UInt(info.st_ino))
    }

    /// Removes the socket file, if it is still this one (not replaced by another server's).
    public func remove() {
        let file = self
        var info = stat()
        guard lstat(file.path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK, UInt(info.st_dev) == file.device,
            UInt(info.st_ino) == file.inode
        else { return }
        unlink(file.path)
    }
}

import CLinux
import Glibc

/// Whole-file replacement that a crash at any moment cannot tear: the new contents go to a
/// temporary file in the same directory, which is fsynced, renamed over the old file (rename is
/// atomic within a file system), and the directory is fsynced so the rename itself survives a
/// power cut. A reader sees the old contents or the new, never a mix or an empty file.
public enum AtomicFile {
    /// A failed step, naming the file and the errno.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let operation: String
        public let path: String
        public let errno: Errno

        public var description: String { "\(operation) \(path): \(errno)" }
    }

    /// The temporary file `write` uses for `path` (left behind only by a crash mid-write; the next
    /// write truncates it).
    public static func temporaryPath(for path: String) -> String { path + ".tmp" }

    /// Replaces the file at `path` with `bytes`, readable and writable by the owner only when
    /// `mode` is 0o600. Returns once the new contents and the rename are on disk.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Failure) {
        let temporary = temporaryPath(for: path)
        do {
            try writeAndSync(bytes, to: temporary, mode: mode)
        } catch {
            unlink(temporary)
            throw error
        }
        do {
            _ = try retryingInterrupts { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw Failure(operation: "rename", path: path, errno: error)
        }
        let directory = directoryName(path)
        do {
            let dir = try FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY)
            _ = try retryingInterrupts { fsync(dir.rawValue) }
        } catch {
            throw Failure(operation: "fsync directory", path: directory, errno: error)
        }
    }

    private static func writeAndSync(_ bytes: [UInt8], to temporary: String, mode: mode_t) throws(Failure) {
        var step = "create"
        do throws(Errno) {
            let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: mode)
            // O_CREAT applies the mode only to a new file, and the umask may have narrowed it.
            step = "chmod"
            _ = try retryingInterrupts { fchmod(fd.rawValue, mode) }
            step = "write"
            try fd.writeAll(bytes)
            step = "fsync"
            _ = try retryingInterrupts { fsync(fd.rawValue) }
        } catch {
            throw Failure(operation: step, path: temporary, errno: error)
        }
    }

    /// The whole file, or nil when it does not exist.
    public static func read(_ path: String, limit: Int = 16 << 20) throws(Failure) -> [UInt8]? {
        do throws(Errno) {
            let fd = try FileDescriptor.open(path, O_RDONLY)
            var contents: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let result: Result<Int, Errno> = chunk.withUnsafeMutableBytes { raw in
                    do throws(Errno) { return .success(try fd.read(into: raw)) } catch { return .failure(error) }
                }
                let count = try result.get()
                if count == 0 { return contents }
                contents += chunk[0..<count]
                if contents.count > limit { throw Errno(rawValue: EFBIG) }
            }
        } catch {
            if error == .noSuchFileOrDirectory { return nil }
            throw Failure(operation: "read", path: path, errno: error)
        }
    }

    /// The directory part of `path` ("." when it has none).
    static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

/// Creates `path` and its missing parents; the last component gets `mode` (e.g. 0o700 for a state
/// directory), parents 0o755. Returns an error naming the component that could not be made.
public func makeDirectories(_ path: String, mode: mode_t) throws(AtomicFile.Failure) {
    var prefix = path.hasPrefix("/") ? "" : "."
    let components = path.split(separator: "/")
    for (index, component) in components.enumerated() {
        prefix += "/" + component
        let isLast = index == components.count - 1
        if mkdir(prefix, isLast ? mode : 0o755) == -1 {
            let error = Errno.current
            guard error.rawValue == EEXIST else {
                throw AtomicFile.Failure(operation: "create directory", path: prefix, errno: error)
            }
        }
    }
    var info = stat()
    guard stat(path, &info) == 0 else {
        throw AtomicFile.Failure(operation: "stat", path: path, errno: Errno.current)
    }
    guard info.st_mode & S_IFMT == S_IFDIR else {
        throw AtomicFile.Failure(operation: "create directory", path: path, errno: Errno(rawValue: ENOTDIR))
    }
}

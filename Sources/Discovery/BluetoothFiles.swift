import Glibc
import Posix

/// Small-file and directory reads for the Bluetooth code (sysfs attributes, BlueZ's storage).
enum BluetoothFiles {
    /// The whole file as text (sysfs attributes are at most a page; BlueZ `info` files a few KiB).
    /// Reads at most `limit` bytes.
    static func read(_ path: String, limit: Int = 65_536) throws(Errno) -> String {
        let file = try FileDescriptor.open(path, O_RDONLY)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let result: Result<Int, Errno> = chunk.withUnsafeMutableBytes { raw in
                do throws(Errno) { return .success(try file.read(into: raw)) } catch { return .failure(error) }
            }
            let count = try result.get()
            if count == 0 { break }
            bytes += chunk[0..<min(count, limit - bytes.count)]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Names in a directory, without `.` and `..`, sorted.
    static func entries(_ path: String) throws(Errno) -> [String] {
        let directory = try pointerOrErrno { opendir(path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Joins path components with exactly one `/` between them.
    static func join(_ base: String, _ components: String...) -> String {
        var path = base
        for component in components {
            while path.hasSuffix("/") && path.count > 1 { path.removeLast() }
            path += (path == "/" ? "" : "/") + component
        }
        return path
    }
}

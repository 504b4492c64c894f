import CLinux
import Glibc
import Posix

/// A pipe whose ends are owned descriptors (non-blocking, close-on-exec).
struct Pipe: ~Copyable {
    let readEnd: FileDescriptor
    let writeEnd: FileDescriptor

    init() throws {
        var fds: [CInt] = [-1, -1]
        guard clinux_pipe2(&fds, O_NONBLOCK | O_CLOEXEC) == 0 else { throw Errno.current }
        readEnd = FileDescriptor(adopting: fds[0])
        writeEnd = FileDescriptor(adopting: fds[1])
    }
}

/// A fresh private directory under /tmp, removed (with its contents) by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/tmm-posix-tests-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current }
        path = String(cString: made)
    }

    func remove() {
        guard let dir = opendir(path) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { unlink(path + "/" + name) }
        }
        closedir(dir)
        rmdir(path)
    }
}

/// Fills a sockaddr_un for `name` (leading "@": abstract namespace) and calls `body` with it.
func withUnixAddress<R>(_ name: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    var bytes = Array(name.utf8)
    let abstract = bytes.first == UInt8(ascii: "@")
    if abstract { bytes[0] = 0 } else { bytes.append(0) }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
}

/// A bound AF_UNIX datagram socket (the receiving end systemd would hold).
func datagramSocket(boundTo name: String) throws -> FileDescriptor {
    let fd = socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw Errno.current }
    let descriptor = FileDescriptor(adopting: fd)
    let result = withUnixAddress(name) { Glibc.bind(fd, $0, $1) }
    guard result == 0 else { throw Errno.current }
    return descriptor
}

/// Reads what is there now (the descriptor must be readable) as bytes.
func readAvailable(_ descriptor: borrowing FileDescriptor, limit: Int = 4096) throws -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: limit)
    let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor.rawValue, $0.baseAddress, $0.count) }
    guard count >= 0 else { throw Errno.current }
    return Array(buffer[0..<count])
}

/// Writes `text` to a raw descriptor.
func write(_ text: String, to fd: CInt) {
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    precondition(written == bytes.count, "short write in a test helper")
}

/// True when the kernel has IPv6 loopback configured (containers may not).
var hasIPv6Loopback: Bool {
    guard let file = fopen("/proc/net/if_inet6", "r") else { return false }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, CInt(line.count), file) != nil {
        if String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).hasPrefix(
            "00000000000000000000000000000001")
        {
            return true
        }
    }
    return false
}

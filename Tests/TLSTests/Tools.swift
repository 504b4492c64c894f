import Foundation

/// An independent tool's run: `openssl`, or a Python peer (PythonTools: Debian's `cryptography` and `ssl`).
struct ToolRun {
    let status: Int32
    let output: String
    let errors: String
}

enum Tools {
    /// Runs `executable` to completion (input from `input`), capturing both outputs.
    static func run(_ executable: String, _ arguments: [String], input: String = "") throws -> ToolRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        // Read both pipes to the end before waiting: a full pipe would stall the child.
        let errorData = Locked(Data())
        let errorsRead = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errorData.set(stderr.fileHandleForReading.readDataToEndOfFile())
            errorsRead.signal()
        }
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        errorsRead.wait()
        process.waitUntilExit()
        return ToolRun(
            status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
            errors: String(decoding: errorData.value, as: UTF8.self))
    }

    /// A fresh private directory under the test temporary area.
    static func temporaryDirectory(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "tmm-tls-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// A value handed from one thread to another once.
final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    func set(_ value: T) { lock.withLock { stored = value } }
    var value: T { lock.withLock { stored } }
}

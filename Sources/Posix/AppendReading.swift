// No imports: the TLS fuzz target compiles this file into its own module.

extension Array where Element == UInt8 {
    /// Appends what `read` writes into up to `maxCount` bytes of the array's spare capacity
    /// (nothing is zero-filled first): `read` returns how many bytes it wrote and what to
    /// report. The one place a reader fills an array in place (sockets, TLS sessions).
    public mutating func appendReading<Result, Failure: Error>(
        maxCount: Int, _ read: (UnsafeMutableRawBufferPointer) throws(Failure) -> (count: Int, result: Result)
    ) throws(Failure) -> Result {
        var outcome: Swift.Result<Result, Failure>?
        append(addingCapacity: maxCount) { output in
            output.withUnsafeMutableBufferPointer { spare, initialized in
                do throws(Failure) {
                    let (count, result) = try read(UnsafeMutableRawBufferPointer(spare))
                    initialized = count
                    outcome = .success(result)
                } catch {
                    outcome = .failure(error)
                }
            }
        }
        return try outcome!.get()
    }
}

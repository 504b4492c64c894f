import CRFCOMM
import Input

extension BluetoothAddress {
    /// From the kernel's `bdaddr_t` (little-endian).
    public init(kernel address: bdaddr_t) {
        let b = address.b
        self.init(bytes: (b.5, b.4, b.3, b.2, b.1, b.0))
    }

    /// The kernel's `bdaddr_t` for this address (little-endian).
    public var kernelValue: bdaddr_t {
        let b = bytes
        return bdaddr_t(b: (b[5], b[4], b[3], b[2], b[1], b[0]))
    }
}

// BluetoothAddress (Input) in the kernel's form: Discovery's bdaddr_t conversion (little-endian)
// and the RFCOMM ABI layout CRFCOMM declares.
import CRFCOMM
import Discovery
import Input
import TestSupport
import Testing

@Suite("Bluetooth addresses in the kernel's structs", .tags(.unit))
struct BluetoothKernelTests {
    @Test func bdaddrIsLittleEndian() throws {
        // BlueZ's str2ba puts the first text group in b[5].
        let address = try BluetoothAddress(parsing: "00:11:22:33:44:55")
        let kernel = address.kernelValue
        let b = kernel.b
        #expect([b.0, b.1, b.2, b.3, b.4, b.5] == [0x55, 0x44, 0x33, 0x22, 0x11, 0x00])
        #expect(BluetoothAddress(kernel: kernel) == address)
    }

    /// The kernel's layout (include/net/bluetooth/rfcomm.h; not packed except bdaddr_t) as the
    /// compiler laid out CRFCOMM's structs, seen from C and from Swift.
    @Test func rfcommStructsHaveTheKernelLayout() {
        let layout = crfcomm_layout()
        #expect(layout.bdaddr_size == 6)
        #expect(layout.dev_req_size == 24)
        #expect(
            [layout.dev_req_flags, layout.dev_req_src, layout.dev_req_dst, layout.dev_req_channel] == [4, 8, 14, 20])
        #expect(layout.dev_info_size == 24)
        #expect(
            [
                layout.dev_info_flags, layout.dev_info_state, layout.dev_info_src, layout.dev_info_dst,
                layout.dev_info_channel,
            ] == [4, 8, 10, 16, 22])
        #expect(layout.dev_list_entries == 4)
        #expect(MemoryLayout<bdaddr_t>.size == 6)
        #expect(MemoryLayout<rfcomm_dev_req>.size == 24)
        #expect(MemoryLayout<rfcomm_dev_req>.offset(of: \.dst) == 14)
        #expect(MemoryLayout<rfcomm_dev_req>.offset(of: \.channel) == 20)
        #expect(MemoryLayout<rfcomm_dev_info>.size == 24)
        #expect(MemoryLayout<rfcomm_dev_info>.offset(of: \.src) == 10)
        #expect(MemoryLayout<rfcomm_dev_info>.offset(of: \.channel) == 22)
        #if arch(x86_64) || arch(arm64)
            // _IOW('R', 200, int) etc. with the generic _IOC encoding.
            #expect(layout.create_dev == 0x4004_52C8)
            #expect(layout.release_dev == 0x4004_52C9)
            #expect(layout.get_dev_list == 0x8004_52D2)
            #expect(layout.get_dev_info == 0x8004_52D3)
        #endif
        #expect(CRFCOMM_AF_BLUETOOTH == 31)
        #expect(CRFCOMM_BTPROTO_RFCOMM == 3)
        #expect(CRFCOMM_FLAG_REUSE_DLC == 1 && CRFCOMM_FLAG_RELEASE_ONHUP == 2)
    }
}

/// What a client may make the server hold before its TLS handshake is done: everything read from
/// the socket before then goes into OpenSSL, which keeps a handshake message until the whole of
/// it has come and sizes its buffer by the length the message's header *declares* (up to 128 KiB
/// for a ClientHello), so a few bytes announcing a large ClientHello, or the first 120 KiB of one
/// that never ends, pinned that much memory per connection until the handshake timed out.
///
/// Two bounds, checked on the bytes before OpenSSL sees them:
///
/// - **A ClientHello declares at most `maxClientHello` (16 KiB) of body**: one full TLS record.
///   Real clients send 0.35-2 KiB (measured: `openssl s_client` 3.0 350 bytes, Python 3.11 and
///   curl on OpenSSL 3.0 508, Chromium 156 1,922 with its X25519MLKEM768 key share), a few
///   hundred bytes more with a resumption ticket; so 16 KiB leaves room for eight times the
///   largest (more post-quantum key shares, large tickets) and still keeps one hello to the size
///   of one record.
/// - **At most `maxInput` (32 KiB) reach OpenSSL before the handshake completes**: the two
///   ClientHellos of a HelloRetryRequest, their record headers, the client's ChangeCipherSpec and
///   Finished, and a socket read of application data that follows its Finished, with room to
///   spare; a client cannot keep a handshake busy with endless records either.
///
/// Only the plaintext ClientHellos can be read here: the scan follows the record layer and stops
/// at the first sign that the rest may be encrypted (an application-data record, any handshake
/// message other than a ClientHello, a ChangeCipherSpec once TLS 1.2 was chosen) or that the
/// stream is not TLS records at all (left to OpenSSL, which refuses it with an alert).
struct HandshakeInputLimit {
    static let maxClientHello = 16_384
    static let maxInput = 32_768

    private static let changeCipherSpec: UInt8 = 20
    private static let alert: UInt8 = 21
    private static let handshake: UInt8 = 22
    private static let applicationData: UInt8 = 23
    private static let clientHello: UInt8 = 1

    /// Bytes taken so far.
    private(set) var received = 0
    /// Still reading record and handshake headers.
    private var scanning = true
    /// The record header being read (its bytes so far) and the rest of the current record's body.
    private var recordHeader: [UInt8] = []
    private var recordType: UInt8 = 0
    private var recordLeft = 0
    /// The handshake header being read, and the rest of the current handshake message's body.
    private var messageHeader: [UInt8] = []
    private var messageLeft = 0

    /// Takes the next bytes from the client; returns why they are refused, or nil.
    /// `negotiatedTLS12`: the server has chosen TLS 1.2 (after that, a ChangeCipherSpec means the
    /// client's next handshake record is encrypted).
    mutating func admit(_ bytes: UnsafeRawBufferPointer, negotiatedTLS12: Bool) -> String? {
        received += bytes.count
        if received > Self.maxInput {
            return "the client sent more than \(Self.maxInput) bytes without finishing the handshake"
        }
        var index = 0
        while scanning, index < bytes.count {
            if recordLeft == 0 {
                recordHeader.append(bytes[index])
                index += 1
                if recordHeader.count == 5 { startRecord(negotiatedTLS12: negotiatedTLS12) }
                continue
            }
            let take = min(recordLeft, bytes.count - index)
            if recordType == Self.handshake,
                let refusal = scanMessages(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
            {
                return refusal
            }
            recordLeft -= take
            index += take
        }
        return nil
    }

    private mutating func startRecord(negotiatedTLS12: Bool) {
        recordType = recordHeader[0]
        recordLeft = Int(recordHeader[3]) << 8 | Int(recordHeader[4])
        recordHeader.removeAll(keepingCapacity: true)
        switch recordType {
        case Self.handshake, Self.alert:
            break
        case Self.changeCipherSpec:
            if negotiatedTLS12 { scanning = false }
        default:
            // Application data (encrypted from here on), or not TLS at all: OpenSSL's to judge.
            scanning = false
        }
    }

    private mutating func scanMessages(_ body: UnsafeRawBufferPointer) -> String? {
        var index = 0
        while scanning, index < body.count {
            if messageLeft > 0 {
                let skip = min(messageLeft, body.count - index)
                messageLeft -= skip
                index += skip
                continue
            }
            messageHeader.append(body[index])
            index += 1
            guard messageHeader.count == 4 else { continue }
            let type = messageHeader[0]
            let length = Int(messageHeader[1]) << 16 | Int(messageHeader[2]) << 8 | Int(messageHeader[3])
            messageHeader.removeAll(keepingCapacity: true)
            guard type == Self.clientHello else {
                // TLS 1.2's ClientKeyExchange (or garbage): what follows may be encrypted.
                scanning = false
                return nil
            }
            if length > Self.maxClientHello {
                return "a ClientHello of \(length) bytes (at most \(Self.maxClientHello) are accepted)"
            }
            messageLeft = length
        }
        return nil
    }
}

import TestSupport
import Testing
import TMMProtocol

private func text(_ body: (inout JSONWriter) -> Void) -> String {
    String(decoding: RESTBodies.bytes(body), as: UTF8.self)
}

@Suite("REST bodies", .tags(.unit))
struct RESTBodiesTests {
    static let da2 = ReceiverInfo(
        isReceiverConfigured: true, isConnected: false, bluetoothName: "DA2-5820",
        bluetoothAddress: "00:11:22:33:44:55", receiverBrand: "Trimble", receiverModel: "DA2",
        receiverSerialNumber: "5820123456", isSigninRequired: true, isSignedIn: true)

    @Test func receiverInfoIsTheDocumentExample() {
        // §8.4, without the line break.
        #expect(
            text { RESTBodies.writeReceiverInfo(Self.da2, to: &$0) }
                == #"""
                {"isReceiverConfigured":true,"isConnected":false,"bluetoothName":"DA2-5820",\#
                "bluetoothAddress":"00:11:22:33:44:55","receiverBrand":"Trimble","receiverModel":"DA2",\#
                "receiverSerialNumber":"5820123456","isSigninRequired":true,"isSignedIn":true}
                """#
        )
    }

    @Test func receiverInfoNone() {
        #expect(
            text { RESTBodies.writeReceiverInfo(.none, to: &$0) }
                == #"""
                {"isReceiverConfigured":false,"isConnected":false,"bluetoothName":null,"bluetoothAddress":null,\#
                "receiverBrand":null,"receiverModel":null,"receiverSerialNumber":null,"isSigninRequired":false,\#
                "isSignedIn":false}
                """#
        )
    }

    @Test func receiverInfoEscapes() {
        let info = ReceiverInfo(isReceiverConfigured: true, isConnected: true, bluetoothName: "a\"b\\c\n")
        #expect(text { RESTBodies.writeReceiverInfo(info, to: &$0) }.contains(#""bluetoothName":"a\"b\\c\u000a""#))
    }

    @Test func positionStream() {
        #expect(text { RESTBodies.writePositionStream(port: 9639, to: &$0) } == #"{"port":9639}"#)
        #expect(
            text { RESTBodies.writePublicKey(n: "sXch-_", e: "AQAB", to: &$0) }
                == #"{"kty":"RSA","use":"enc","alg":"RSA-OAEP-256","n":"sXch-_","e":"AQAB"}"#)
        var ports = PortAssignment.defaults
        ports.locationV2 = 9651
        #expect(RESTBodies.StreamFormat(queryValue: "locationV1")?.port(in: ports) == 9635)
        #expect(RESTBodies.StreamFormat(queryValue: "LOCATIONV2")?.port(in: ports) == 9651)
        #expect(RESTBodies.StreamFormat(queryValue: "locationV3") == nil)
        #expect(RESTBodies.StreamFormat(queryValue: "") == nil)
    }

    @Test func tmmInfo() {
        var ports = PortAssignment.defaults
        ports.api = 9650
        #expect(
            text { RESTBodies.writeTMMInfo(version: "0.1.0", ports: ports, receiver: .none, to: &$0) }
                == #"""
                {"name":"tmm-bridge","version":"0.1.0","schemaVersion":1,"locationPort":9635,\#
                "locationSecurePort":9636,"apiPort":9650,"apiSecurePort":9638,\#
                "locationV2Port":9639,"locationV2SecurePort":9640,\#
                "receiver":{"isReceiverConfigured":false,"isConnected":false,"bluetoothName":null,\#
                "bluetoothAddress":null,"receiverBrand":null,"receiverModel":null,"receiverSerialNumber":null,\#
                "isSigninRequired":false,"isSignedIn":false}}
                """#
        )
    }

    @Test func pongAndErrors() {
        #expect(text { RESTBodies.writePong(to: &$0) } == #"{"result":"pong"}"#)
        #expect(
            text { RESTBodies.writeError("Unauthorized", to: &$0) }
                == #"{"error":"Unauthorized","Reason":"Unauthorized"}"#)
        #expect(
            text { RESTBodies.writeError("Not Found", reason: "no route \"/x\"", to: &$0) }
                == #"{"error":"Not Found","Reason":"no route \"/x\""}"#)
    }

    @Test func writerReuse() {
        var writer = JSONWriter(reservingCapacity: 64)
        RESTBodies.writePositionStream(port: 9635, to: &writer)
        writer.reset()
        RESTBodies.writePong(to: &writer)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"result":"pong"}"#)
    }
}

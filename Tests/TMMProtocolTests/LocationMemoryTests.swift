// The location encoders remember the identity fields and the satellite view between messages
// (LocationMemory): whatever the sequence of epochs, an encoder's message must be exactly what a
// writer without memory writes for the same position. And every reservation of the encoders must
// hold the widest message they can write.
import Foundation
import GNSS
import TestSupport
import Testing
import TMMProtocol

/// The message `Message` writes for `position` into a writer that remembers nothing.
private func withoutMemory<Message: LocationMessage>(
    _: Message.Type, _ position: Position,
    _ identity: ReceiverIdentity
) -> String {
    var writer = JSONWriter()
    Message.write(position, identity: identity, to: &writer)
    return String(decoding: writer.bytes, as: UTF8.self)
}

extension SplitMix64 {
    /// A number in 0..<n.
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

@Suite("Location encoders' memory", .tags(.unit))
struct LocationMemoryTests {
    /// 2,000 epochs whose sky changes the way receivers' skies do (one SNR, an angle, a use mark,
    /// a satellite rising or setting, a whole constellation replaced, the same sky again, an empty
    /// sky, unknown values): each message equals the one written without memory.
    @Test(arguments: [1, 2, 3])
    func everyMessageEqualsOneWrittenWithoutMemory(seed: UInt64) {
        var random = SplitMix64(state: seed)
        var v2 = LocationV2Encoder()
        var v1 = LocationV1Encoder()
        var satellites: [Satellite] = []
        for id in 1...24 {
            let constellation: Constellation = id % 3 == 0 ? .glonass : .gps
            let snr = UInt8(30 + id % 20)
            satellites.append(
                Satellite(
                    id: UInt16(id), constellation: constellation, elevation: Int16(id * 3),
                    azimuth: Int16(id * 14), snr: snr, used: id % 2 == 0))
        }
        for epoch in 0..<2000 {
            switch random.below(10) {
            case 0: break  // the same sky again
            case 1 where !satellites.isEmpty:  // one SNR changes, or becomes unknown
                let i = random.below(satellites.count)
                satellites[i].snr = random.below(5) == 0 ? nil : UInt8(random.below(60))
            case 2 where !satellites.isEmpty:
                let i = random.below(satellites.count)
                satellites[i].elevation = random.below(4) == 0 ? nil : Int16(random.below(90))
                satellites[i].azimuth = Int16(random.below(360))
            case 3 where !satellites.isEmpty:
                satellites[random.below(satellites.count)].used.toggle()
            case 4 where satellites.count < SkyView.capacity:  // a satellite rises, anywhere in the list
                satellites.insert(
                    Satellite(
                        id: UInt16(100 + random.below(900)), constellation: .galileo,
                        elevation: 5, azimuth: Int16(random.below(360)), snr: 20),
                    at: random.below(satellites.count + 1))
            case 5 where !satellites.isEmpty:  // one sets
                satellites.remove(at: random.below(satellites.count))
            case 6:  // a constellation's set replaced
                satellites.removeAll { $0.constellation == .glonass }
                for id in 0..<random.below(10) {
                    satellites.append(
                        Satellite(
                            id: UInt16(65 + id), constellation: .glonass,
                            elevation: Int16(random.below(90)), snr: UInt8(random.below(50))))
                }
            case 7:
                satellites.removeAll()
            default:  // every SNR moves by a little
                for i in satellites.indices where random.below(3) == 0 {
                    satellites[i].snr = UInt8(20 + random.below(30))
                }
            }
            var position = Sample.fix
            position.latitude = -43.5 + Double(epoch) * 1e-7
            position.sky = SkyView()
            for satellite in satellites { position.sky.merge(satellite) }
            v2.encode(position, identity: Sample.identity)
            v1.encode(position, identity: Sample.identity)
            let expectedV2 = withoutMemory(LocationV2.self, position, Sample.identity)
            let expectedV1 = withoutMemory(LocationV1.self, position, Sample.identity)
            #expect(String(decoding: v2.bytes, as: UTF8.self) == expectedV2, "V2, seed \(seed), epoch \(epoch)")
            #expect(String(decoding: v1.bytes, as: UTF8.self) == expectedV1, "V1, seed \(seed), epoch \(epoch)")
            if String(decoding: v2.bytes, as: UTF8.self) != expectedV2 { return }
        }
    }

    /// 3,000 epochs whose remembered parts change now and then (accuracies, satellite counts,
    /// DOPs, differential fields, quality and fix, heights; unknown, NaN and infinite values
    /// included) while the position changes every epoch: each message equals the one written
    /// without memory.
    @Test(arguments: [4, 5])
    func rememberedPartsFollowEveryChange(seed: UInt64) {
        var random = SplitMix64(state: seed)
        var v2 = LocationV2Encoder()
        var v1 = LocationV1Encoder()
        var position = Sample.fix
        func value(_ current: Double?) -> Double? {
            switch random.below(8) {
            case 0: nil
            case 1: .nan
            case 2: -.infinity
            case 3: 0
            case 4: -0.0
            default: (current ?? 1) + Double(random.below(3)) * 0.001
            }
        }
        for epoch in 0..<3000 {
            position.latitude = -43.5 + Double(epoch) * 1e-7
            position.time = Sample.time(2024, 2, 22, 18, 0, epoch % 60)
            switch random.below(12) {
            case 0: position.sigmaLatitude = value(position.sigmaLatitude)
            case 1: position.sigmaAltitude = value(position.sigmaAltitude)
            case 2: position.pdop = value(position.pdop)
            case 3: position.hdop = value(position.hdop)
            case 4: position.vdop = value(position.vdop)
            case 5: position.diffAge = value(position.diffAge)
            case 6: position.diffStationID = random.below(3) == 0 ? nil : random.below(1100)
            case 7: position.quality = FixQuality.allCases[random.below(FixQuality.allCases.count)]
            case 8: position.satellitesInUse = random.below(4) == 0 ? nil : random.below(40)
            case 9: position.mslHeight = value(position.mslHeight)
            case 10: position.undulation = value(position.undulation)
            default: break  // nothing remembered changes
            }
            v2.encode(position, identity: Sample.identity)
            v1.encode(position, identity: Sample.identity)
            let expectedV2 = withoutMemory(LocationV2.self, position, Sample.identity)
            let expectedV1 = withoutMemory(LocationV1.self, position, Sample.identity)
            #expect(String(decoding: v2.bytes, as: UTF8.self) == expectedV2, "V2, seed \(seed), epoch \(epoch)")
            #expect(String(decoding: v1.bytes, as: UTF8.self) == expectedV1, "V1, seed \(seed), epoch \(epoch)")
            if String(decoding: v2.bytes, as: UTF8.self) != expectedV2 { return }
        }
    }

    /// A receiver swapped for another (a new model and serial number) and back: the identity
    /// fields follow at once.
    @Test func identityChangesAreWrittenAtOnce() {
        let other = ReceiverIdentity(receiverModel: "Other \"model\"\n", receiverSerialNumber: nil, appVersion: "9.9.9")
        var v2 = LocationV2Encoder()
        var v1 = LocationV1Encoder()
        for identity in [Sample.identity, other, other, Sample.identity, other] {
            v2.encode(Sample.fix, identity: identity)
            v1.encode(Sample.fix, identity: identity)
            #expect(String(decoding: v2.bytes, as: UTF8.self) == withoutMemory(LocationV2.self, Sample.fix, identity))
            #expect(String(decoding: v1.bytes, as: UTF8.self) == withoutMemory(LocationV1.self, Sample.fix, identity))
        }
    }

    /// Every field at its widest (numbers too large for their decimals, `Int.min` satellites in
    /// use, a full sky of the widest satellite objects, identity strings that escape every byte):
    /// the encoders' reservations hold it (writing past one would trap) and the JSON parses.
    @Test func widestMessagesFitTheirReservations() throws {
        var position = Position()
        position.quality = .rtkFixed
        position.time = Sample.time(9999, 12, 31, 23, 59, 59, nanoseconds: 999_000_000)
        let widest = -8.99e18  // 22 bytes at any number of decimals: `-8990000000000000000.0`
        position.latitude = widest
        position.longitude = widest
        position.mslHeight = widest
        position.undulation = widest
        position.ellipsoidalHeight = widest
        position.speed = widest
        position.bearing = widest
        position.diffAge = widest
        position.diffStationID = 9999
        position.pdop = widest
        position.hdop = widest
        position.vdop = widest
        position.sigmaLatitude = 6e18
        position.sigmaLongitude = 6e18
        position.sigmaAltitude = widest
        position.satellitesInUse = Int.min
        for id in 0..<SkyView.capacity {
            position.sky.merge(
                Satellite(
                    id: UInt16(65_535 - id), constellation: .irnss, elevation: -32_768,
                    azimuth: -32_768, snr: 255, used: false))
        }
        let control = String(repeating: "\u{01}", count: 40)
        let identity = ReceiverIdentity(receiverModel: control, receiverSerialNumber: control, appVersion: control)
        var v2 = LocationV2Encoder(reservingCapacity: 64)
        var v1 = LocationV1Encoder(reservingCapacity: 64)
        for _ in 0..<2 {  // the first message formats everything, the second copies from memory
            v2.encode(position, identity: identity)
            v1.encode(position, identity: identity)
            for bytes in [v2.bytes, v1.bytes] {
                let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
                #expect((object?["satelliteView"] as? [Any])?.count == SkyView.capacity)
                #expect(object?["latitude"] as? Double == widest)
            }
        }
        #expect(String(decoding: v2.bytes, as: UTF8.self).contains(#""totalSatInUse":-9223372036854775808,"#))
    }

    /// Digit counts on both sides of every power of ten: the length estimate from the binary
    /// length is off by one exactly there.
    @Test func integersAroundEveryPowerOfTen() {
        var power = 1
        for _ in 0..<18 {
            power *= 10
            for value in [power - 1, power, power + 1, -power, -(power - 1)] {
                var writer = JSONWriter(reservingCapacity: 8)
                writer.integer(value)
                #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
            }
        }
    }
}

/// Why a line was not accepted as an NMEA 0183 sentence, or why a sentence did not decode.
///
/// Each case is named after the rule the input broke; the framer and the decoders never repair
/// input, they reject it with one of these and the caller counts it.
public enum NMEAError: Error, Equatable, Sendable {
    /// The line does not begin with `$`.
    case missingStart
    /// Longer than `NMEASentence.maxLength` bytes (terminator excluded).
    case tooLong(Int)
    /// A byte outside printable ASCII (0x20...0x7E), or a second `$`, at this offset.
    case invalidByte(offset: Int)
    /// The address field (`GPGGA`, `PTNL`) is empty or not upper-case letters and digits.
    case invalidAddress
    /// More than `NMEASentence.maxFields` fields.
    case tooManyFields
    /// A `*` not followed by exactly two hexadecimal digits at the end of the line.
    case malformedChecksum
    /// The checksum after `*` does not match the XOR of the bytes between `$` and `*`.
    case badChecksum(expected: UInt8, computed: UInt8)
    /// The sentence has fewer fields than its decoder needs.
    case tooFewFields(needed: Int, found: Int)
    /// Field `index` (0 is the address) is not valid for its type.
    case invalidField(index: Int)
    /// The sentence is not one the typed decoders know (counted, not an error for callers).
    case unsupportedSentence
}

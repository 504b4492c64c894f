import BridgeCore
import HTTP1
import Posix
import TMMProtocol
import WebSocket

/// What a WebSocket client subscribed to.
enum Channel: Equatable {
    /// LocationV1 once per second (`locationPort`, `/`).
    case locationV1
    /// LocationV2 at the receiver's rate (`locationV2Port`, `/` and `/locationV2`).
    case locationV2
    /// `/events` on `locationV2Port`.
    case events
}

/// One accepted client socket and everything the loop knows about it. Loop-confined: created,
/// used and dropped on the io thread; the socket closes when the object goes away.
final class Connection {
    /// A request answered later: `PUT /api/v1/receiver {"isConnected":true}` waits for the
    /// receiver to connect, bounded by `deadline`.
    /// Also a 401 held back by `AuthenticationBudget` (`prepared`: the response, sent at `deadline`).
    struct DeferredReply {
        var deadline: Int64
        var keepAlive: Bool
        var version: HTTPVersion
        var prepared: [UInt8]? = nil
        /// The input side's ticket for the gpsd commands the request queued, until they are done
        /// (`InputChange.receiverControlFinished`).
        var awaitingTicket: Int? = nil
        /// `PUT isConnected:true`: answered once a receiver is connected (or at `deadline`);
        /// `isConnected:false` is answered when its commands are done.
        var connecting = false
    }

    /// The client's bytes pass through this (see Transport.swift); the socket closes with it.
    let transport: any Transport
    let server: TMMServer
    /// Reads HTTP requests; every connection starts with HTTP, WebSocket ports too.
    var reader = HTTPRequestReader()
    /// The WebSocket state machine once the connection is upgraded (then HTTP is over). Kept in
    /// its own stored property so it is mutated in place, never copied.
    var webSocket: WebSocketConnection?
    /// What the WebSocket client receives.
    var channel: Channel?

    /// HTTP input not yet consumed; requests start at `inputStart`.
    var input: [UInt8] = []
    var inputStart = 0
    /// Complete requests read but not answered yet (only while a reply is deferred).
    var pendingRequests: [HTTPRequest] = []
    /// The rest of the batch the pending requests came from.
    var pendingBatchEnd = 0
    var pendingBatchError: HTTPRequestError?
    var pendingBatchEndsConnection = false
    var deferred: DeferredReply?
    /// A request that expects `100 Continue` waits behind the batch (see answerContinue).
    var pendingContinue = false
    var authenticationBudget = AuthenticationBudget()
    /// What the `Origin` of the request being answered allows (`allowed-origins`): the CORS
    /// headers of its response. Set before each request is answered; a deferred reply keeps it,
    /// since nothing else is answered meanwhile.
    var origin = HTTPOriginDecision.any

    var output = OutboundQueue()
    /// The selector currently also waits for writability.
    var wantsWritable = false
    /// What the selector waits for now (kept to skip redundant epoll_ctl calls).
    var interest: SelectorInterest = .readable
    /// Where the connection is in its life (one value instead of three flags).
    var lifecycle = Lifecycle.open

    /// Last time bytes arrived or the client took some of our output (HTTP idle timeout).
    var lastActivity: Int64
    /// When the request now in progress began (HTTP request timeout); nil between requests.
    var requestStartedAt: Int64?

    /// Index in the hub's list for its channel, while subscribed.
    var hubSlot = -1
    /// Since when the client has been behind by more than the hard limit.
    var overHardLimitSince: Int64?

    init(transport: any Transport, server: TMMServer, now: Int64) {
        self.transport = transport
        self.server = server
        lastActivity = now
    }

    var fd: CInt { transport.descriptor }

    /// True while a WebSocket client may be sent data frames.
    var canReceiveFrames: Bool {
        if lifecycle != .open { return false }
        return webSocket?.canSend ?? false
    }
}

@available(*, unavailable, message: "a connection belongs to the io thread")
extension Connection: Sendable {}

/// Where a connection is in its life: open, or ending. Ending goes in two steps: its queued
/// output goes out (`closing`), then its write side is shut and its input read and dropped until
/// the client closes (`draining`), so a response is not lost to a reset caused by unread input.
/// Each step is cut off at its deadline.
enum Lifecycle: Equatable {
    case open
    case closing(deadline: Int64)
    case draining(deadline: Int64)

    /// Set once the connection is to end.
    var isEnding: Bool { self != .open }
    var isDraining: Bool { if case .draining = self { true } else { false } }
    /// When an ending connection is closed whatever its state.
    var deadline: Int64? {
        switch self {
        case .open: nil
        case .closing(let deadline), .draining(let deadline): deadline
        }
    }
}

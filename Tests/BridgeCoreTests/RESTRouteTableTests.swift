// The REST table itself (`RESTRouter.routes`): one row per path, each method once, and the
// access-code rule the 100-continue check uses agreeing with the one the call carries.
import HTTP1
import TestSupport
import Testing

@testable import BridgeCore

@Suite("REST route table", .tags(.unit))
struct RESTRouteTableTests {
    private func head(_ method: String, _ target: String) -> (HTTPRequest, [UInt8])? {
        let bytes = Array("\(method) \(target) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        var reader = HTTPRequestReader()
        guard case .request(let request) = try? reader.next(in: bytes.span, from: 0) else { return nil }
        return (request, bytes)
    }

    @Test func eachPathHasOneRowAndEachMethodOneEndpoint() {
        let paths = RESTRouter.routes.map(\.path)
        #expect(Set(paths).count == paths.count, "two rows for one path")
        for route in RESTRouter.routes {
            let methods = route.endpoints.map(\.method)
            #expect(!methods.isEmpty, "\(route.written) has no method")
            #expect(Set(methods.map(\.name)).count == methods.count, "\(route.written) lists a method twice")
            #expect(
                !methods.contains(.head) && !methods.contains(.options),
                "\(route.written): HEAD and OPTIONS come from the router, not from rows")
            #expect(HTTPPath(route.written) == route.path)
        }
    }

    /// `RESTRouter.needsAuthentication` (asked before `100 Continue`) and the routed call's flag
    /// come from the same row; the preflight never needs a code, an unknown method never does.
    @Test func theAccessCodeRuleBeforeTheBodyIsTheCallsRule() throws {
        for route in RESTRouter.routes {
            for endpoint in route.endpoints {
                let methods = endpoint.method == .get ? [endpoint.method.name, "HEAD"] : [endpoint.method.name]
                for method in methods {
                    let (request, bytes) = try #require(head(method, route.written))
                    let needsCode = RESTRouter.needsAuthentication(request.head, in: bytes.span)
                    #expect(needsCode == route.needsAuthentication, "\(method) \(route.written)")
                    if case .call(let call, _) = RESTRouter.route(request, in: bytes.span) {
                        #expect(call.needsAuthentication == route.needsAuthentication, "\(method) \(route.written)")
                    }
                }
            }
            let (options, optionsBytes) = try #require(head("OPTIONS", route.written))
            let preflightNeedsCode = RESTRouter.needsAuthentication(options.head, in: optionsBytes.span)
            #expect(!preflightNeedsCode, "OPTIONS \(route.written)")
            let (brew, brewBytes) = try #require(head("BREW", route.written))
            let unknownMethodNeedsCode = RESTRouter.needsAuthentication(brew.head, in: brewBytes.span)
            #expect(!unknownMethodNeedsCode, "BREW \(route.written)")
        }
    }

    /// Only the public key (§4.2) and the operator dashboard's page, which shows nothing secret
    /// (docs/dashboard.md), are served without an access code.
    @Test func onlyThePublicKeyAndTheDashboardPageNeedNoAccessCode() {
        let open = RESTRouter.routes.filter { !$0.needsAuthentication }.map(\.written)
        #expect(open == ["/", "/dashboard.css", "/dashboard.js", "/api/v1/publicKey"])
    }
}

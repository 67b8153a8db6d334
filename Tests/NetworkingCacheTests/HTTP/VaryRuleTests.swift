import Networking
import Testing

@testable import NetworkingCache

@Suite struct VaryRuleTests {
    @Test func readsTheFieldNames() {
        #expect(VaryRule.fields(of: [:]) == .none)
        #expect(VaryRule.fields(of: ["Vary": "Accept-Language, accept"]) == .names(["accept", "accept-language"]))
        #expect(VaryRule.fields(of: ["Vary": "Accept, *"]) == .any)
        #expect(VaryRule.fields(of: ["Vary": " , "]) == .none)
    }

    @Test func matchesOnTrimmedValuesAndAbsence() {
        let stored = VaryRule.capture(["accept-language"], from: ["Accept-Language": " fr "])
        #expect(stored == [VaryField(name: "accept-language", value: VaryRule.digest("fr", of: "accept-language"))])
        #expect(VaryRule.matches(stored, request: ["accept-language": "fr"]))
        #expect(!VaryRule.matches(stored, request: ["Accept-Language": "en"]))
        #expect(!VaryRule.matches(stored, request: [:]))
        let absent = VaryRule.capture(["accept-language"], from: [:])
        #expect(VaryRule.matches(absent, request: ["X-Other": "1"]))
        #expect(!VaryRule.matches(absent, request: ["Accept-Language": ""]))
        #expect(VaryRule.variantTag(stored) != VaryRule.variantTag(absent))
    }

    @Test func whatASharedExchangeMayHandToEveryCaller() {
        func answer(_ headers: HTTPHeaders, sent: HTTPHeaders) -> TransportResponse {
            var response = TransportResponse(statusCode: 200, headers: headers)
            response.requestHeaders = sent
            return response
        }
        let seen: HTTPHeaders = ["Accept": "application/json"]
        let signed: HTTPHeaders = ["Accept": "application/json", "Authorization": "Bearer a"]
        #expect(VaryRule.isShareable(answer(["Cache-Control": "no-store"], sent: signed), seen: seen, keyKeepsUsersApart: true))
        #expect(!VaryRule.isShareable(answer(["Vary": "*"], sent: seen), seen: seen, keyKeepsUsersApart: true))
        // A credential added after the cache: shared only when the key holds whose it is.
        #expect(VaryRule.isShareable(answer(["Vary": "Authorization"], sent: signed), seen: seen, keyKeepsUsersApart: true))
        #expect(!VaryRule.isShareable(answer(["Vary": "Authorization"], sent: signed), seen: seen, keyKeepsUsersApart: false))
        #expect(VaryRule.credentialAddedAfterTheCache(seen: seen, sent: signed))
        #expect(!VaryRule.credentialAddedAfterTheCache(seen: signed, sent: signed))
        #expect(!VaryRule.credentialAddedAfterTheCache(seen: seen, sent: nil))
    }
}

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
}

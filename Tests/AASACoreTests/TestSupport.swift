import Foundation
import Testing

@testable import AASACore

/// Loads one site.json from text.
func loadSite(_ json: String, domain: String = "shop.example") -> LoadedDomain {
    SiteConfigLoader().loadDomain(
        domain: domain, source: SourceText(name: "\(domain)/site.json", bytes: Array(json.utf8)))
}

/// Parses an Apple-format file from text, failing the test on errors.
func readAssociation(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> AssociationFile? {
    let source = SourceText(name: "aasa.json", bytes: Array(json.utf8))
    do {
        let parsed = try JSONParser().parse(source)
        let reader = JSONReader(source: source)
        let file = AssociationFile.read(parsed.root, reader: reader)
        #expect(!reader.diagnostics.hasErrors, "\(reader.diagnostics)", sourceLocation: sourceLocation)
        return file
    } catch {
        Issue.record("\(error)", sourceLocation: sourceLocation)
        return nil
    }
}

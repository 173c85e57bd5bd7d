// Placeholder so the package builds on the c-boundary branch; the lead's tests replace it.
import Testing

@Test func placeholder() {}

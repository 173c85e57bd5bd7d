// Placeholder so the package builds on the c-boundary branch; the lead's executable replaces it.

/// The bounds every Apple pattern, substitution variable and file keeps, checked before anything is compiled.
///
/// Matching one URL against one pattern costs at most the pattern's step width (the automaton states one URL
/// character can visit) times the URL's length; both are capped, so a request's matching cost is bounded by
/// ``maximumDomainWidth`` × ``MatchURL/maximumLength`` whatever a tenant writes. Real files stay far below every
/// limit: in the corpus and the repository's fixtures the longest pattern has 37 characters, 4 wildcards and 3
/// variable uses, no variable has more than 3 values, and the widest file has a step width of 530 and 498 states.
/// docs/configuration.md#pattern-limits lists them.
public enum PatternLimits {
    /// Characters (Unicode scalars) of one pattern as written.
    public static let maximumLength = 1_024
    /// Wildcards of one pattern: each run of `*` (a run counts once) and each `?`, plus those in the values of the
    /// variables it uses, once per use.
    public static let maximumWildcards = 32
    /// `$(name)` uses in one pattern.
    public static let maximumVariableUses = 8
    /// Values of one substitution variable.
    public static let maximumVariableValues = 1_024
    /// UTF-8 bytes of all values of one substitution variable together.
    public static let maximumVariableBytes = 16_384
    /// Step width of one pattern's automaton: the most states one character of the URL can visit. A literal, `?`
    /// or a `*` run counts 1 or 2, a variable whose values have no wildcards the fan-out of its values' prefix tree
    /// at each depth, other variables every state and edge they add. Patterns that compare directly (literals, or
    /// literals then `*`) run no automaton and count 0.
    public static let maximumWidth = 512
    /// Automaton states of one pattern: 1 per literal or `?`, 2 per `*`, and what each variable use adds (its
    /// values' prefix tree). Bounds what compiling it, and comparing it in a change review, holds.
    public static let maximumStates = 4_096
    /// Automaton states of every pattern of one file together, counted once per rule that uses it.
    public static let maximumDomainStates = 65_536
    /// Step widths of every pattern of one file together, counted once per rule that uses it: a URL no rule
    /// matches is tried against all of them.
    public static let maximumDomainWidth = 16_384
}

package op

// LinkStyle says which tools the links of an answer name: the praxec pair
// (praxec.query and praxec.submit) or the aura_* tools (with a fresh
// idempotency key). The service's mission projections and the catalogue's
// search and describe both render their links in one.
type LinkStyle int

// The link styles.
const (
	// StylePraxec names the praxec pair.
	StylePraxec LinkStyle = iota
	// StyleAura names the aura_* tools.
	StyleAura
)

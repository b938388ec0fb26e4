package skills

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// Version ordering
//
// A skill version is written the way semantic versions are: numeric
// components separated by dots (any number of them, at least one: 1, 1.2,
// 1.2.3), an optional pre-release after "-" and optional build metadata
// after "+", at most 32 characters in all. Numeric components have no
// leading zeros.
//
// Versions are ordered as Semantic Versioning 2.0.0 orders them, extended
// to any number of components: the components are compared numerically, a
// missing component counting as 0 (so 1.2 and 1.2.0 are the same version);
// a version with a pre-release precedes the same version without one
// (1.0.0-rc.1 < 1.0.0); pre-releases are compared identifier by
// identifier, numeric identifiers numerically and below alphanumeric ones,
// which compare in ASCII order, and a shorter list of identifiers precedes a
// longer one it begins; build metadata is ignored. Two files of one skill
// whose versions compare equal are refused at load.

// versionPattern is the grammar of a version.
var versionPattern = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*` +
	`(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?` +
	`(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// maxVersionLen bounds a version string (the contract's version argument
// takes at most 32 characters).
const maxVersionLen = 32

// semver is a parsed version.
type semver struct {
	core []string // numeric components, no leading zeros, trailing zeros dropped
	pre  []string
}

// parseVersion parses s; ok is false when s is not a version.
func parseVersion(s string) (semver, bool) {
	if len(s) == 0 || len(s) > maxVersionLen || !versionPattern.MatchString(s) {
		return semver{}, false
	}
	s, _, _ = strings.Cut(s, "+")
	core, pre, hasPre := strings.Cut(s, "-")
	v := semver{core: strings.Split(core, ".")}
	for len(v.core) > 1 && v.core[len(v.core)-1] == "0" {
		v.core = v.core[:len(v.core)-1]
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
	}
	return v, true
}

// ValidVersion reports whether s is a well-formed skill version.
func ValidVersion(s string) bool {
	_, ok := parseVersion(s)
	return ok
}

// CompareVersions orders two well-formed versions: negative when a
// precedes b, zero when they are the same version, positive otherwise. A
// malformed version sorts before every well-formed one.
func CompareVersions(a, b string) int {
	va, oka := parseVersion(a)
	vb, okb := parseVersion(b)
	switch {
	case !oka && !okb:
		return strings.Compare(a, b)
	case !oka:
		return -1
	case !okb:
		return 1
	}
	return va.compare(vb)
}

// compareNumeric compares two decimal strings without leading zeros.
func compareNumeric(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

func (a semver) compare(b semver) int {
	for i := range max(len(a.core), len(b.core)) {
		x, y := "0", "0"
		if i < len(a.core) {
			x = a.core[i]
		}
		if i < len(b.core) {
			y = b.core[i]
		}
		if c := compareNumeric(x, y); c != 0 {
			return c
		}
	}
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1
	case len(b.pre) == 0:
		return -1
	}
	for i := range min(len(a.pre), len(b.pre)) {
		x, y := a.pre[i], b.pre[i]
		xn, yn := isNumeric(x), isNumeric(y)
		var c int
		switch {
		case xn && yn:
			c = compareNumeric(x, y)
		case xn:
			c = -1
		case yn:
			c = 1
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a.pre), len(b.pre))
}

func isNumeric(s string) bool {
	return s != "" && !slices.ContainsFunc([]byte(s), func(c byte) bool { return c < '0' || c > '9' })
}

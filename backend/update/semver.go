package update

import (
	"regexp"
	"strconv"
	"strings"
)

type semver struct {
	major, minor, patch int
	pre                 []string // dot-separated pre-release identifiers; none for a release
}

var (
	semverRE = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$`)
	// git describe past a tag: v1.2.3-4-gabcdef (4 commits after v1.2.3).
	describeRE = regexp.MustCompile(`-[0-9]+-g[0-9a-f]+$`)
)

func parseSemver(s string) (semver, bool) {
	m := semverRE.FindStringSubmatch(s)
	if m == nil {
		return semver{}, false
	}
	var v semver
	v.major, _ = strconv.Atoi(m[1])
	v.minor, _ = strconv.Atoi(m[2])
	v.patch, _ = strconv.Atoi(m[3])
	if m[4] != "" {
		v.pre = strings.Split(m[4], ".")
		for _, id := range v.pre {
			if id == "" {
				return semver{}, false
			}
		}
	}
	return v, true
}

// Newer says whether latest is a newer version than current. A current
// version from `git describe` past a tag (v1.2.3-4-gabc, maybe -dirty)
// counts as that tag; a current that is no version at all (a build without
// a tag, "dev") is older than any release.
func Newer(latest, current string) bool {
	l, ok := parseSemver(latest)
	if !ok {
		return false
	}
	current = strings.TrimSuffix(current, "-dirty")
	current = describeRE.ReplaceAllString(current, "")
	c, ok := parseSemver(current)
	if !ok {
		return true
	}
	return compare(l, c) > 0
}

func compare(a, b semver) int {
	for _, d := range []int{a.major - b.major, a.minor - b.minor, a.patch - b.patch} {
		if d != 0 {
			return sign(d)
		}
	}
	// A release is newer than its pre-releases.
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		if c := compareIdent(a.pre[i], b.pre[i]); c != 0 {
			return c
		}
	}
	return sign(len(a.pre) - len(b.pre))
}

// compareIdent orders pre-release identifiers as semver does: numbers
// numerically and below words, words in ASCII order.
func compareIdent(a, b string) int {
	an, aErr := strconv.ParseUint(a, 10, 64)
	bn, bErr := strconv.ParseUint(b, 10, 64)
	switch {
	case aErr == nil && bErr == nil:
		if an == bn {
			return 0
		}
		if an < bn {
			return -1
		}
		return 1
	case aErr == nil:
		return -1
	case bErr == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func sign(d int) int {
	switch {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}

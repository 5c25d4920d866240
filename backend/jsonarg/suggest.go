package jsonarg

import (
	"reflect"
	"strings"
)

// fieldNames lists the JSON names of the struct fields reachable from t, in
// declaration order, nested ones included: encoding/json does not say at
// which depth an unknown field was found.
func fieldNames(t reflect.Type) []string {
	var names []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if ft := f.Type; f.Anonymous && name == "" {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft) // an embedded struct's fields are the outer one's
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			names = append(names, name)
			walk(f.Type)
		}
	}
	walk(t)
	return names
}

// nearest is the name closest to the misspelt one, when it is a likely
// typo: at most one edit away, two for names of six letters or more, or the
// only name that is it with a suffix after an underscore ("run" for
// "run_id"). Case is ignored, as encoding/json ignores it when matching.
func nearest(misspelt string, names []string) string {
	var stem string
	for _, n := range names {
		if misspelt != "" && len(n) > len(misspelt)+1 && strings.EqualFold(n[:len(misspelt)+1], misspelt+"_") {
			if stem != "" {
				stem = ""
				break
			}
			stem = n
		}
	}
	if stem != "" {
		return stem
	}
	limit := 1
	if len(misspelt) >= 6 {
		limit = 2
	}
	best, bestDist := "", limit+1
	for _, n := range names {
		// 0 is a name at another depth than the refused one: no typo.
		if d := distance(strings.ToLower(misspelt), strings.ToLower(n)); d > 0 && d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// distance is the optimal string alignment distance of a and b: insertions,
// deletions, substitutions and swaps of two neighbouring bytes each count
// one, so "paht" is one edit from "path".
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 1 << 30 // no suggestion for a name that long; keeps the work bounded
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Nearest is the name among names that misspelt is a likely typo of (see
// the refusal of an unknown field), "" when none is close.
func Nearest(misspelt string, names []string) string { return nearest(misspelt, names) }

package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Acts reports whether a call of the named tool of Catalog acts (see
// Tool.Acts); a name it does not hold never acts.
func Acts(name string, input json.RawMessage) bool {
	t, _ := Find(Catalog(), name)
	return t.WouldAct(input)
}

// Preview describes a call of the named tool of Catalog for an approval
// card (see Tool.Preview).
func Preview(env *Env, name string, input json.RawMessage) (title, kind, detail string) {
	t, ok := Find(Catalog(), name)
	if !ok {
		t.Name = name
	}
	return t.Describe(env, input)
}

// WouldAct reports whether this call of t changes something outside the
// conversation.
func (t Tool) WouldAct(input json.RawMessage) bool { return t.Acts != nil && t.Acts(input) }

// Describe is t's preview of a call: its own, or the input as indented
// JSON.
func (t Tool) Describe(env *Env, input json.RawMessage) (title, kind, detail string) {
	if t.Preview != nil {
		return t.Preview(env, input)
	}
	var b bytes.Buffer
	json.Indent(&b, input, "", "  ")
	return "Use " + t.Name, "text", b.String()
}

// always is the Acts of a tool every call of which acts.
func always(json.RawMessage) bool { return true }

// args reads a held call's input for its preview. The call has not been
// checked yet, so what does not decode shows as empty rather than failing
// the card.
type args map[string]any

func argsOf(input json.RawMessage) args {
	var in args
	_ = json.Unmarshal(input, &in)
	return in
}

func (a args) str(k string) string { s, _ := a[k].(string); return s }

// sortedPairs lists the string map at a[k] as key, value pairs in key order.
func (a args) sortedPairs(k string) [][2]string {
	m, _ := a[k].(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k, fmt.Sprint(m[k])}
	}
	return pairs
}

// maxDiffLines bounds the quadratic line matching; longer files are shown as
// a whole replacement.
const maxDiffLines = 2000

// UnifiedDiff renders the change from old to next as a unified diff with 3
// lines of context.
func UnifiedDiff(name, old, next string) string {
	a, b := splitLines(old), splitLines(next)
	ops := diffLines(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
	const context = 3
	// Group the edit script into hunks around changes.
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-context)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run-end > 2*context || run == len(ops) {
				end = min(len(ops), end+context)
				break
			}
			end = run
		}
		aStart, bStart, aLen, bLen := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aStart+1, aLen, bStart+1, bLen)
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			out.WriteByte('\n')
		}
		i = end
	}
	return strings.TrimSuffix(out.String(), "\n")
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
	a, b int // line index in old and new where the op sits
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLines is a longest-common-subsequence line diff.
func diffLines(a, b []string) []diffOp {
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		var ops []diffOp
		for i, l := range a {
			ops = append(ops, diffOp{'-', l, i, 0})
		}
		for j, l := range b {
			ops = append(ops, diffOp{'+', l, len(a), j})
		}
		return ops
	}
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]): // removals first, as diff(1) shows them
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}

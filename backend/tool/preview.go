package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Preview describes a tool call for an approval card: a one-line title, how
// to show the detail (command, target, diff or text) and the detail itself.
// write_file and append_file show the change to the file as a unified diff.
func Preview(env *Env, name string, input json.RawMessage) (title, kind, detail string) {
	var in map[string]any
	json.Unmarshal(input, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	switch name {
	case "run_command":
		detail = str("command")
		if envs, ok := in["env"].(map[string]any); ok && len(envs) > 0 {
			keys := make([]string, 0, len(envs))
			for k := range envs {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var b strings.Builder
			for _, k := range keys {
				fmt.Fprintf(&b, "%s=%v ", k, envs[k])
			}
			detail = b.String() + detail
		}
		return "Run a command", "command", detail
	case "db_execute", "space_db_execute":
		where := "its own database"
		if name == "space_db_execute" {
			where = "the shared database"
		}
		detail = str("sql")
		if args, ok := in["args"]; ok {
			b, _ := json.Marshal(args)
			detail += "\n-- args: " + string(b)
		}
		return "Change " + where, "command", detail
	case "fetch_url":
		method := strings.ToUpper(str("method"))
		if method == "" {
			method = "GET"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s", method, str("url"))
		if h, ok := in["headers"].(map[string]any); ok {
			keys := make([]string, 0, len(h))
			for k := range h {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "\n%s: %v", k, h[k])
			}
		}
		if body := str("body"); body != "" {
			b.WriteString("\n\n" + body)
		}
		return "Send a " + method + " request", "target", b.String()
	case "write_file", "append_file":
		p, content := str("path"), str("content")
		var old []byte
		if _, full, err := resolvePath(env, p); err == nil {
			old, _ = os.ReadFile(full)
		}
		next := content
		verb := "Write"
		if name == "append_file" {
			next, verb = string(old)+content, "Append to"
		}
		return verb + " " + p, "diff", UnifiedDiff(p, string(old), next)
	case "delete_file":
		return "Delete " + str("path"), "target", str("path")
	case "update_soul":
		return "Rewrite its soul", "text", str("soul")
	case "call_agent":
		return "Ask " + str("handle"), "text", str("message")
	case "remember":
		return "Remember a fact", "text", str("text")
	case "forget":
		return "Forget a memory", "target", str("id")
	case "upsert_skill":
		return "Save skill " + str("name"), "text", str("skill_md")
	}
	var b bytes.Buffer
	json.Indent(&b, input, "", "  ")
	return "Use " + name, "text", b.String()
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

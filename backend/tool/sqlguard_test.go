package tool

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

func TestCheckSQL(t *testing.T) {
	tests := []struct {
		name, sql string
		err       string // "" means allowed
	}{
		{"select", "SELECT * FROM t WHERE a = ?", ""},
		{"attach in a string", "SELECT 'attach' AS word", ""},
		{"attach in a string with escaped quote", "SELECT 'it''s ATTACH time'", ""},
		{"attach in a quoted identifier", `SELECT "attach" FROM t`, ""},
		{"attach in a bracket identifier", "SELECT [detach] FROM t", ""},
		{"attach in a backtick identifier", "SELECT `attach` FROM t", ""},
		{"attach in a line comment", "SELECT 1 -- ATTACH 'x' AS y\n", ""},
		{"attach in a block comment", "SELECT 1 /* ATTACH 'x' AS y */", ""},
		{"attach as part of a word", "SELECT attached, attachment, attach_id FROM t", ""},
		{"vacuum", "VACUUM", ""},
		{"insert into", "INSERT INTO t VALUES (1)", ""},
		{"pragma read", "PRAGMA user_version", ""},
		{"pragma table_info", "PRAGMA table_info(t)", ""},
		{"pragma schema table_info", "pragma main.table_info('t')", ""},
		{"pragma function", "SELECT * FROM pragma_table_info('t')", ""},
		{"trigger body", "CREATE TRIGGER x AFTER INSERT ON t BEGIN UPDATE t SET a = 1; END", ""},
		{"comment opener in a string", "SELECT '/*' , 1 /* attach */", ""},
		{"dollar parameter", "SELECT $attach", ""},

		{"attach", "ATTACH DATABASE 'other.db' AS o", "ATTACH is not allowed"},
		{"attach lowercase", "attach 'x' as y", "ATTACH is not allowed"},
		{"attach mixed case after comment", "/* hi */ AtTaCh 'x' AS y", "ATTACH is not allowed"},
		{"attach after line comment", "-- note\nATTACH 'x' AS y", "ATTACH is not allowed"},
		{"attach after whitespace", "\t\r\n  ATTACH 'x' AS y", "ATTACH is not allowed"},
		{"attach in second statement", "SELECT 1; ATTACH 'x' AS y", "ATTACH is not allowed"},
		{"attach glued to comment", "SELECT 1;/**/ATTACH'x'AS y", "ATTACH is not allowed"},
		{"attach after string", "SELECT 'a';ATTACH 'x' AS y", "ATTACH is not allowed"},
		{"detach", "DETACH DATABASE o", "DETACH is not allowed"},
		{"load_extension", "SELECT load_extension('/tmp/evil.so')", "load_extension is not allowed"},
		{"load_extension upper with spaces", "select LOAD_EXTENSION ( 'x' )", "load_extension is not allowed"},
		{"load_extension quoted", `SELECT "load_extension"('x')`, "load_extension is not allowed"},
		{"load_extension bracketed", `SELECT [load_extension]('x')`, "load_extension is not allowed"},
		{"pragma set", "PRAGMA journal_mode = DELETE", "PRAGMA journal_mode = … is not allowed"},
		{"pragma set query_only off", "pragma QUERY_ONLY=0", "PRAGMA query_only = … is not allowed"},
		{"pragma set with schema", "PRAGMA main.user_version = 7", "PRAGMA user_version = … is not allowed"},
		{"pragma set call form", "PRAGMA writable_schema(1)", "PRAGMA writable_schema(…) is not allowed"},
		{"pragma set with comment", "PRAGMA /* x */ foreign_keys /* y */ = off", "PRAGMA foreign_keys = … is not allowed"},
		{"pragma after select", "SELECT 1; PRAGMA query_only = 0", "PRAGMA query_only = … is not allowed"},
		{"vacuum into", "VACUUM INTO '/tmp/copy.db'", "VACUUM INTO is not allowed"},
		{"vacuum schema into", "vacuum main into 'x.db'", "VACUUM INTO is not allowed"},
		{"vacuum into after comment", "VACUUM /* c */ INTO 'x'", "VACUUM INTO is not allowed"},
		{"empty", "  ", "sql is empty"},
		{"NUL", "SELECT 1\x00ATTACH 'x' AS y", "NUL byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSQL(tt.sql)
			if tt.err == "" {
				if err != nil {
					t.Errorf("CheckSQL(%q) = %v, want allowed", tt.sql, err)
				}
				return
			}
			wantErr(t, err, fault.ErrInvalid, tt.err)
		})
	}
}

func TestStatementCount(t *testing.T) {
	tests := []struct {
		sql  string
		want int
	}{
		{"SELECT 1", 1},
		{"SELECT 1;", 1},
		{"SELECT 1; SELECT 2", 2},
		{"SELECT ';'; -- ; \n", 1},
		{" ; ; ", 0},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			if got := statementCount(tt.sql); got != tt.want {
				t.Errorf("statementCount(%q) = %d, want %d", tt.sql, got, tt.want)
			}
		})
	}
}

// endsOutside reports whether s leaves the tokenizer outside any literal,
// quoted identifier or comment: then a keyword appended after a newline is
// a keyword.
func endsOutside(s string) bool {
	const probe = "\nzzprobe "
	toks := tokenize(s + probe)
	return len(toks) > 0 && toks[len(toks)-1] == token{tokWord, "zzprobe"}
}

func FuzzSQLGuard(f *testing.F) {
	seeds := []string{"SELECT 1", "SELECT 'attach'", "/* x */", "-- y", `"a""b"`, "[x", "'unterminated", "PRAGMA a.b(c)",
		"VACUUM INTO", "SELECT load_extension('x')", "ATTACH ':memory:' AS a", "x'00'", "`a``b`", "SELECT 1; PRAGMA x = 1"}
	for _, s := range seeds {
		f.Add(s, "AS other")
	}
	db, err := sql.Open("sqlite", "file:fuzz?mode=memory")
	if err != nil {
		f.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	f.Cleanup(func() { db.Close() })

	f.Fuzz(func(t *testing.T, prefix, suffix string) {
		// Never panics, whatever it is given.
		allowed := CheckSQL(prefix) == nil
		// A text with no semicolon holds at most one statement.
		if n := Statements(prefix); n < 0 || (!strings.Contains(prefix, ";") && n > 1) {
			t.Fatalf("Statements(%q) = %d", prefix, n)
		}

		// An ATTACH token outside literals and comments is always refused.
		if endsOutside(prefix) {
			for _, kw := range []string{"ATTACH", "attach", "DeTaCh"} {
				s := prefix + "\n" + kw + " " + suffix
				if !strings.Contains(s, "\x00") && CheckSQL(s) == nil {
					t.Fatalf("CheckSQL(%q) allowed a %s token", s, kw)
				}
			}
		}

		// And SQLite agrees: whatever the guard allows attaches nothing.
		if !allowed || len(prefix) > 2000 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		db.ExecContext(ctx, prefix)
		rows, err := db.Query("PRAGMA database_list")
		if err != nil {
			return
		}
		defer rows.Close()
		for rows.Next() {
			var seq int
			var name, file string
			rows.Scan(&seq, &name, &file)
			if name != "main" && name != "temp" {
				t.Fatalf("CheckSQL allowed %q, which attached %q", prefix, name)
			}
		}
	})
}

func TestStatements(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want int
	}{
		{"SELECT 1", 1},
		{"SELECT 1;", 1},
		{"  ;; ", 0},
		{"INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)", 2},
		{"INSERT INTO t VALUES ('a;b')", 1},
		{"SELECT 1; -- a comment; still one", 1},
		{`SELECT ";" FROM t`, 1},
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET x = CASE WHEN 1 THEN 2 END; DELETE FROM u; END", 1},
		{"CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM u; END; SELECT 1", 2},
	} {
		if got := Statements(tc.sql); got != tc.want {
			t.Errorf("Statements(%q) = %d, want %d", tc.sql, got, tc.want)
		}
	}
}

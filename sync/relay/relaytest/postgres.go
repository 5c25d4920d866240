package relaytest

import (
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// PostgresEnv names the environment variable holding the postgres:// URL
// of a database the tests may create schemas in (build/postgres.sh starts
// one; CI sets it). Tests that need PostgreSQL skip without it.
const PostgresEnv = "RERUN_TEST_POSTGRES"

// PostgresSchema makes a schema of its own for the test, dropped when it
// ends, and returns the URL that uses it; it skips the test when
// RERUN_TEST_POSTGRES is not set.
func PostgresSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " is not set (a postgres:// URL of a database the tests may create schemas in; build/postgres.sh starts one)")
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToLower(t.Name()))
	schema := "relaytest_" + name[:min(len(name), 30)] + "_" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	if _, err := db.Exec(`CREATE SCHEMA "` + schema + `"`); err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	t.Cleanup(func() {
		db, _ := sql.Open("pgx", base)
		defer db.Close()
		db.Exec(`DROP SCHEMA "` + schema + `" CASCADE`)
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s must be a postgres:// URL: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

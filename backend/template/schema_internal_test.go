package template

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The shipped schema (what any other tool checks template.json with) and
// the manifest's own checks (what every template made in the app goes
// through) must agree on what is valid.
func TestSchemaAndChecksAgree(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		valid    bool
	}{
		{"as it is", "", "", true},
		{"paid", `"price":"free"`, `"price":"paid"`, true},
		{"no price", `"price":"free",`, ``, true},
		{"once", `"kind":"cron","cron":"0 9 * * *"`, `"kind":"once","at":"2031-05-01T10:00:00Z"`, true},
		{"trigger", `"connectors"`, `"triggers":[{"name":"Hook","instruction":"x","methods":["PUT"]}],"connectors"`, true},
		{"ask_first", `"price":"free"`, `"price":"free","ask_first":{"shell":false}`, true},
		{"model", `"price":"free"`, `"price":"free","model":{"provider":"openai","model":"gpt-4o"}`, true},
		{"variable url", `"help":"The mail API key."`, `"help":"x","url":"https://mail.example/keys"`, true},
		{"empty name", `"name":"Inbox helper"`, `"name":"  "`, false},
		{"long name", `"name":"Inbox helper"`, `"name":"` + strings.Repeat("n", 81) + `"`, false},
		{"long description", `"description":"Answers mail."`, `"description":"` + strings.Repeat("d", 2001) + `"`, false},
		{"price", `"price":"free"`, `"price":"gratis"`, false},
		{"capability", `"skills"]`, `"teleport"]`, false},
		{"ask_first family", `"price":"free"`, `"price":"free","ask_first":{"browser":true}`, false},
		{"schedule kind", `"kind":"cron"`, `"kind":"hourly"`, false},
		{"cron without expression", `"cron":"0 9 * * *"`, `"cron":""`, false},
		{"once without at", `"kind":"cron","cron":"0 9 * * *"`, `"kind":"once"`, false},
		{"catch_up", `"timezone":""`, `"timezone":"","catch_up":"always"`, false},
		{"trigger method", `"connectors"`, `"triggers":[{"name":"Hook","instruction":"x","methods":["TRACE"]}],"connectors"`, false},
		{"trigger without instruction", `"connectors"`, `"triggers":[{"name":"Hook"}],"connectors"`, false},
		{"connector id", `"github"`, `"GitHub!"`, false},
		{"variable name", `"MAIL_KEY"`, `"mail_key"`, false},
		{"variable url", `"help":"The mail API key."`, `"help":"x","url":"ftp://keys"`, false},
		{"too many schedules", `"schedules":[`, `"schedules":[` + strings.Repeat(`{"name":"S","instruction":"x","kind":"cron","cron":"@daily"},`, 50), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good, err := os.ReadFile("testdata/good.template.json")
			if err != nil {
				t.Fatal(err)
			}
			data := []byte(strings.Replace(string(good), tc.old, tc.new, 1))
			var doc any
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			schemaErr := validateSchema(doc)
			var m Manifest
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			checkErr := m.check(nil)
			if (schemaErr == nil) != tc.valid || (checkErr == nil) != tc.valid {
				t.Fatalf("schema says %v; checks say %v; want valid=%v from both", schemaErr, checkErr, tc.valid)
			}
			if tc.valid { // what the checks normalise still follows the schema
				out, _ := m.manifestJSON()
				var again any
				json.Unmarshal(out, &again)
				if err := validateSchema(again); err != nil {
					t.Fatalf("the normalised manifest breaks the schema: %v", err)
				}
			}
		})
	}
}

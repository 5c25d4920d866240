package template

import (
	"archive/zip"
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

func seedZip(f *testing.F, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			f.Fatal(err)
		}
		w.Write([]byte(data))
	}
	zw.Close()
	return buf.Bytes()
}

// FuzzReadPackage feeds the package reader arbitrary files: it must refuse
// them with a fault.ErrInvalid saying why, never panic, and what it accepts
// must write back into a package that reads the same.
func FuzzReadPackage(f *testing.F) {
	good := &Package{Manifest: blankManifest(), Soul: "# Helper\n",
		Skills: map[string]map[string][]byte{"reply": {"SKILL.md": []byte("---\nname: reply\ndescription: Reply to mail.\n---\nBe kind.\n"), "refs/a.md": []byte("a")}},
		Files:  map[string][]byte{"faq.md": []byte("Q? A."), "bin/x": {0, 1, 2, 255}}}
	good.Name = "Helper"
	good.Schedules = []Schedule{{Name: "Digest", Instruction: "Sum up.", Kind: "cron", Cron: "@daily"}}
	good.Variables = []Variable{{Name: "MAIL_KEY", Help: "The key."}}
	data, err := good.pack(time.Time{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(seedZip(f, map[string]string{"template.json": `{"schema_version":1,"name":"x"}`}))
	f.Add(seedZip(f, map[string]string{"template.json": `{"schema_version":1,"name":"x","memories":[]}`, "../x": "y"}))
	f.Add(seedZip(f, map[string]string{"template.json": `{"name":`, "files/a/../../b": "y"}))
	f.Add([]byte("PK\x05\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadPackage(data)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("refused without saying what is wrong: %v", err)
			}
			return
		}
		out, err := p.pack(time.Time{})
		if err != nil {
			t.Fatalf("an accepted package does not write back: %v", err)
		}
		q, err := ReadPackage(out)
		if err != nil {
			t.Fatalf("an accepted package, written back, is refused: %v", err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("written back, the package reads differently:\n%+v\n%+v", p, q)
		}
	})
}

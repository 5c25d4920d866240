package app

import (
	"os"
	"path/filepath"
	"testing"
)

func TestHasGPU(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  bool
	}{
		{"none", nil, false},
		{"a card but no render node", []string{"dri/card0"}, false},
		{"render node", []string{"dri/card0", "dri/renderD128"}, true},
		{"nvidia", []string{"nvidia0", "nvidiactl"}, true},
		{"nvidia control only", []string{"nvidiactl"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(dev, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := hasGPU(dev); got != tc.want {
				t.Errorf("hasGPU(%v) = %v, want %v", tc.files, got, tc.want)
			}
		})
	}
}

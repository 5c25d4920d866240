package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// A half-red, half-transparent square keeps its halves at every size, and the
// transparent side never bleeds dark into the red one.
func TestScaleKeepsColourAndAlpha(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 512, 512))
	for y := 0; y < 512; y++ {
		for x := 0; x < 256; x++ {
			src.SetNRGBA(x, y, color.NRGBA{R: 255, A: 255})
		}
	}
	for _, n := range Sizes {
		img := Scale(src, n)
		if img.Bounds().Dx() != n || img.Bounds().Dy() != n {
			t.Fatalf("size %d: got %v", n, img.Bounds())
		}
		left, right := img.NRGBAAt(0, n/2), img.NRGBAAt(n-1, n/2)
		if left != (color.NRGBA{R: 255, A: 255}) || right.A != 0 {
			t.Errorf("size %d: left %v right %v", n, left, right)
		}
		if mid := img.NRGBAAt(n/2-1, n/2); mid.R < 250 || mid.G != 0 {
			t.Errorf("size %d: the red half darkened at its edge: %v", n, mid)
		}
	}
}

func TestRunWritesEveryHicolorSize(t *testing.T) {
	out := t.TempDir()
	if err := run("../../app/icon.png", out, "rerun"); err != nil {
		t.Fatal(err)
	}
	for _, n := range Sizes {
		f, err := os.Open(filepath.Join(out, "hicolor", fmt.Sprintf("%dx%d", n, n), "apps", "rerun.png"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != n || cfg.Height != n {
			t.Errorf("size %d: %v %dx%d", n, err, cfg.Width, cfg.Height)
		}
	}
}

func TestRunRefusesWhatIsNotASquarePNG(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.png")
	os.WriteFile(bad, []byte("not a png"), 0o644)
	if err := run(bad, dir, "x"); err == nil {
		t.Error("a file that is not a PNG was accepted")
	}
	f, _ := os.Create(filepath.Join(dir, "wide.png"))
	png.Encode(f, image.NewNRGBA(image.Rect(0, 0, 600, 512)))
	f.Close()
	if err := run(filepath.Join(dir, "wide.png"), dir, "x"); err == nil {
		t.Error("a 600x512 image was accepted")
	}
}

package main

import (
	"bytes"
	"encoding/binary"
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

// The .ico's directory names every size at an offset inside the file; the
// small images are 32-bit bitmaps of twice their height (colour + mask), the
// 256 one a PNG of 256x256.
func TestWriteIcoDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rerun.ico")
	if err := writeFile("../../app/icon.png", out, WriteIco); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if le.Uint16(data[0:]) != 0 || le.Uint16(data[2:]) != 1 || int(le.Uint16(data[4:])) != len(IcoSizes) {
		t.Fatalf("header % x", data[:6])
	}
	for i, n := range IcoSizes {
		e := data[6+16*i:]
		size, off := int(le.Uint32(e[8:])), int(le.Uint32(e[12:]))
		if off+size > len(data) {
			t.Fatalf("size %d: image at %d+%d runs past the file (%d bytes)", n, off, size, len(data))
		}
		img := data[off : off+size]
		if n == 256 {
			cfg, err := png.DecodeConfig(bytes.NewReader(img))
			if e[0] != 0 || err != nil || cfg.Width != 256 || cfg.Height != 256 {
				t.Errorf("256: entry width %d, png %v %dx%d", e[0], err, cfg.Width, cfg.Height)
			}
			continue
		}
		w, h, bpp := le.Uint32(img[4:]), le.Uint32(img[8:]), le.Uint16(img[14:])
		if int(e[0]) != n || int(w) != n || int(h) != 2*n || bpp != 32 {
			t.Errorf("size %d: entry %d, bitmap %dx%d at %d bpp", n, e[0], w, h, bpp)
		}
		if want := 40 + 4*n*n + (n+31)/32*4*n; size != want {
			t.Errorf("size %d: %d bytes, want %d", n, size, want)
		}
	}
}

// The .icns header gives the file's length, and each entry a PNG of its size.
func TestWriteIcnsEntries(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rerun.icns")
	if err := writeFile("../../app/icon.png", out, WriteIcns); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	if string(data[:4]) != "icns" || int(be.Uint32(data[4:])) != len(data) {
		t.Fatalf("header %q length %d, file %d bytes", data[:4], be.Uint32(data[4:]), len(data))
	}
	off := 8
	for _, want := range icnsTypes {
		kind, n := string(data[off:off+4]), int(be.Uint32(data[off+4:]))
		cfg, err := png.DecodeConfig(bytes.NewReader(data[off+8 : off+n]))
		if kind != want.kind || err != nil || cfg.Width != want.size {
			t.Errorf("entry %s: got %s, png %v %dpx, want %dpx", want.kind, kind, err, cfg.Width, want.size)
		}
		off += n
	}
	if off != len(data) {
		t.Errorf("entries end at %d, file is %d bytes", off, len(data))
	}
}

// Command icons writes the app icon at the sizes Linux desktops look for:
// DIR/hicolor/NxN/apps/NAME.png for each size, scaled down from one PNG with
// an area-averaging filter (standard library only, so it moves no module);
// with -ico, a Windows .ico instead (the installer's and rerun.exe's icon);
// with -icns, a macOS .icns (Rerun.app's icon).
//
//	go run ./build/icons -in app/icon.png -out build/dist/icons -name rerun
//	go run ./build/icons -in app/icon.png -ico build/dist/rerun.ico
//	go run ./build/icons -in app/icon.png -icns build/dist/rerun.icns
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"os"
	"path/filepath"
)

// Sizes are the hicolor theme's usual application icon sizes.
var Sizes = []int{16, 22, 24, 32, 48, 64, 128, 256, 512}

func main() {
	in := flag.String("in", "app/icon.png", "source PNG (square, at least 512x512)")
	out := flag.String("out", "build/dist/icons", "folder to write hicolor/NxN/apps/NAME.png into")
	name := flag.String("name", "rerun", "icon name")
	ico := flag.String("ico", "", "write a Windows .ico to this path instead")
	icns := flag.String("icns", "", "write a macOS .icns to this path instead")
	flag.Parse()
	var err error
	switch {
	case *ico != "":
		err = writeFile(*in, *ico, WriteIco)
	case *icns != "":
		err = writeFile(*in, *icns, WriteIcns)
	default:
		err = run(*in, *out, *name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "icons:", err)
		os.Exit(1)
	}
}

func run(in, out, name string) error {
	src, err := load(in)
	if err != nil {
		return err
	}
	for _, n := range Sizes {
		path := filepath.Join(out, "hicolor", fmt.Sprintf("%dx%d", n, n), "apps", name+".png")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := write(path, Scale(src, n)); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes the icon at in to out with one of the writers.
func writeFile(in, out string, encode func(io.Writer, image.Image) error) error {
	src, err := load(in)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := encode(f, src); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// load reads the source icon: a square PNG at least as large as the
// largest size written.
func load(in string) (image.Image, error) {
	f, err := os.Open(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (want a PNG file)", in, err)
	}
	b := src.Bounds()
	if b.Dx() != b.Dy() || b.Dx() < Sizes[len(Sizes)-1] {
		return nil, fmt.Errorf("%s is %dx%d: want a square icon of at least %dx%d", in, b.Dx(), b.Dy(), Sizes[len(Sizes)-1], Sizes[len(Sizes)-1])
	}
	return src, nil
}

func write(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Scale returns src scaled to n×n: each target pixel is the average of the
// source area it covers, weighted by how much of each source pixel falls
// inside it, in premultiplied alpha so transparent edges do not darken.
func Scale(src image.Image, n int) *image.NRGBA {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	dst := image.NewRGBA64(image.Rect(0, 0, n, n))
	fx, fy := float64(sw)/float64(n), float64(sh)/float64(n)
	for y := 0; y < n; y++ {
		y0, y1 := float64(y)*fy, float64(y+1)*fy
		for x := 0; x < n; x++ {
			x0, x1 := float64(x)*fx, float64(x+1)*fx
			var r, g, bl, a, w float64
			for sy := int(y0); float64(sy) < y1 && sy < sh; sy++ {
				wy := min(y1, float64(sy+1)) - max(y0, float64(sy))
				for sx := int(x0); float64(sx) < x1 && sx < sw; sx++ {
					wx := min(x1, float64(sx+1)) - max(x0, float64(sx))
					c := color.RGBA64Model.Convert(src.At(b.Min.X+sx, b.Min.Y+sy)).(color.RGBA64)
					k := wx * wy
					r += k * float64(c.R)
					g += k * float64(c.G)
					bl += k * float64(c.B)
					a += k * float64(c.A)
					w += k
				}
			}
			dst.SetRGBA64(x, y, color.RGBA64{R: round(r / w), G: round(g / w), B: round(bl / w), A: round(a / w)})
		}
	}
	out := image.NewNRGBA(dst.Bounds())
	draw.Draw(out, out.Bounds(), dst, image.Point{}, draw.Src)
	return out
}

func round(v float64) uint16 {
	if v >= 65535 {
		return 65535
	}
	return uint16(v + 0.5)
}

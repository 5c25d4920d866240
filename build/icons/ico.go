package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/png"
	"io"
)

// IcoSizes are the sizes of a Windows icon: the shell picks 16 to 48 for
// lists and menus, 256 for large views.
var IcoSizes = []int{16, 24, 32, 48, 64, 128, 256}

// WriteIco writes src as a Windows .ico with one image per IcoSizes entry:
// 32-bit BGRA bitmaps below 256 (every reader, NSIS included, takes those)
// and a PNG at 256, as Windows Vista and later store it.
func WriteIco(w io.Writer, src image.Image) error {
	var images [][]byte
	for _, n := range IcoSizes {
		img := Scale(src, n)
		if n >= 256 {
			var b bytes.Buffer
			if err := png.Encode(&b, img); err != nil {
				return err
			}
			images = append(images, b.Bytes())
			continue
		}
		images = append(images, dib(img))
	}
	var out bytes.Buffer
	le := binary.LittleEndian
	out.Write(le.AppendUint16(nil, 0)) // reserved
	out.Write(le.AppendUint16(nil, 1)) // type: icon
	out.Write(le.AppendUint16(nil, uint16(len(images))))
	offset := 6 + 16*len(images)
	for i, n := range IcoSizes {
		side := byte(n)
		if n >= 256 {
			side = 0 // 0 means 256
		}
		out.Write([]byte{side, side, 0, 0})
		out.Write(le.AppendUint16(nil, 1))  // colour planes
		out.Write(le.AppendUint16(nil, 32)) // bits per pixel
		out.Write(le.AppendUint32(nil, uint32(len(images[i]))))
		out.Write(le.AppendUint32(nil, uint32(offset)))
		offset += len(images[i])
	}
	for _, b := range images {
		out.Write(b)
	}
	_, err := w.Write(out.Bytes())
	return err
}

// dib is an icon image as a device-independent bitmap: a BITMAPINFOHEADER
// whose height counts the colour rows and the mask rows, the BGRA rows bottom
// up, then the 1-bit AND mask (all zero: the alpha channel says what shows).
func dib(img *image.NRGBA) []byte {
	n := img.Bounds().Dx()
	le := binary.LittleEndian
	var b bytes.Buffer
	b.Write(le.AppendUint32(nil, 40))
	b.Write(le.AppendUint32(nil, uint32(n)))
	b.Write(le.AppendUint32(nil, uint32(2*n)))
	b.Write(le.AppendUint16(nil, 1))
	b.Write(le.AppendUint16(nil, 32))
	b.Write(make([]byte, 24)) // no compression; sizes and palette unset
	for y := n - 1; y >= 0; y-- {
		for x := 0; x < n; x++ {
			c := img.NRGBAAt(x, y)
			b.Write([]byte{c.B, c.G, c.R, c.A})
		}
	}
	stride := (n + 31) / 32 * 4
	b.Write(make([]byte, stride*n))
	return b.Bytes()
}

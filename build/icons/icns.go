package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/png"
	"io"
)

// icnsTypes are the PNG entries of a macOS .icns, by pixel size (the @2x
// types hold the same pixels as the next size up).
var icnsTypes = []struct {
	kind string
	size int
}{
	{"icp4", 16}, {"icp5", 32}, {"icp6", 64}, {"ic07", 128}, {"ic08", 256}, {"ic09", 512},
	{"ic11", 32}, {"ic12", 64}, {"ic13", 256}, {"ic14", 512},
}

// WriteIcns writes src as a macOS .icns of PNG images (macOS 10.7 and
// later read those): a header, then type, length and PNG per entry.
func WriteIcns(w io.Writer, src image.Image) error {
	var body bytes.Buffer
	be := binary.BigEndian
	for _, t := range icnsTypes {
		var b bytes.Buffer
		if err := png.Encode(&b, Scale(src, t.size)); err != nil {
			return err
		}
		body.WriteString(t.kind)
		body.Write(be.AppendUint32(nil, uint32(8+b.Len())))
		body.Write(b.Bytes())
	}
	var out bytes.Buffer
	out.WriteString("icns")
	out.Write(be.AppendUint32(nil, uint32(8+body.Len())))
	out.Write(body.Bytes())
	_, err := w.Write(out.Bytes())
	return err
}

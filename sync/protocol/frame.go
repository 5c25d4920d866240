package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrFrame: a WebSocket message that is not a frame.
var ErrFrame = errors.New("malformed frame")

// Encode returns the message for f, followed by a newline and payload when
// payload is not nil.
func Encode(f Frame, payload []byte) []byte {
	b, err := json.Marshal(f)
	if err != nil {
		panic(err) // a Frame always marshals
	}
	if payload != nil {
		b = append(b, '\n')
		b = append(b, payload...)
	}
	return b
}

// Decode splits a message into its frame and payload (nil when there is
// none). json.Marshal never writes a raw newline, so the first one ends the
// frame.
func Decode(msg []byte) (Frame, []byte, error) {
	head, payload, _ := bytes.Cut(msg, []byte("\n"))
	var f Frame
	if err := json.Unmarshal(head, &f); err != nil {
		return Frame{}, nil, fmt.Errorf("%w: %v", ErrFrame, err)
	}
	if f.Type == "" {
		return Frame{}, nil, fmt.Errorf("%w: no type", ErrFrame)
	}
	return f, payload, nil
}

// SealDelivery returns the delivery frame for d, signed with key at now.
// The relay signs each time it sends, so a delivery that waited days is
// still inside the receiver's window.
func SealDelivery(key []byte, d Delivery, now time.Time) []byte {
	payload, err := json.Marshal(d)
	if err != nil {
		panic(err) // a Delivery always marshals
	}
	ts := now.Unix()
	return Encode(Frame{Type: TypeDelivery, ID: d.ID, Timestamp: ts, Signature: Sign(key, d.ID, ts, payload)}, payload)
}

// OpenDelivery verifies a delivery frame and its payload against key at
// now, and returns the delivery. A payload whose id is not the frame's is
// refused: the signature covers the frame's id.
func OpenDelivery(key []byte, f Frame, payload []byte, now time.Time) (Delivery, error) {
	if f.Type != TypeDelivery {
		return Delivery{}, fmt.Errorf("%w: %q is not a delivery", ErrFrame, f.Type)
	}
	if err := Verify(key, f.ID, f.Timestamp, f.Signature, payload, now, Tolerance); err != nil {
		return Delivery{}, err
	}
	var d Delivery
	if err := json.Unmarshal(payload, &d); err != nil {
		return Delivery{}, fmt.Errorf("%w: delivery payload: %v", ErrFrame, err)
	}
	if d.ID != f.ID {
		return Delivery{}, fmt.Errorf("%w: payload id %q is not the frame's %q", ErrFrame, d.ID, f.ID)
	}
	return d, nil
}

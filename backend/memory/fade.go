package memory

import (
	"math"
	"time"
)

// Defaults of Config's fading parameters.
const (
	DefaultHalfLife = 14 * 24 * time.Hour
	DefaultFloor    = 0.05
	DefaultBoost    = 0.3
)

// Strength is a memory's strength at now, from its stored strength s0 (as of
// reinforcedAt) and its recall count (see the package doc for the formula).
func (c Config) Strength(s0 float64, recalls int, reinforcedAt, now time.Time) float64 {
	dt := now.Sub(reinforcedAt)
	if dt <= 0 {
		return s0
	}
	hl := c.halfLife(recalls)
	return s0 * math.Exp2(-float64(dt)/float64(hl))
}

// halfLife grows linearly with the recalls: each use buys a longer life.
func (c Config) halfLife(recalls int) time.Duration {
	return c.HalfLife * time.Duration(1+recalls)
}

// reinforce is the stored strength after a recall at a moment when the
// strength had faded to s.
func (c Config) reinforce(s float64) float64 { return math.Min(1, s+c.Boost) }

// Lifetime is how long a memory of stored strength s0 and recall count
// recalls lasts without another recall before it falls under the floor.
func (c Config) Lifetime(s0 float64, recalls int) time.Duration {
	if s0 <= c.Floor {
		return 0
	}
	return time.Duration(math.Log2(s0/c.Floor) * float64(c.halfLife(recalls)))
}

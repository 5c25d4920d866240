package httpapi_test

import (
	"fmt"
	"testing"
)

// BenchmarkBoard is the request every window makes on load and on each change:
// the whole board of a workspace with 5 boxes and 20 agents.
func BenchmarkBoard(b *testing.B) {
	e := newEnv(b)
	base := "/api/workspaces/" + e.ws
	for i := 0; i < 5; i++ {
		var bx struct{ ID string }
		e.do(b, "POST", base+"/boxes", fmt.Sprintf(`{"name":"Box %d"}`, i), &bx)
		for j := 0; j < 4; j++ {
			e.do(b, "POST", base+"/agents", fmt.Sprintf(`{"name":"Agent %d-%d","box_id":%q,"soul":"# soul"}`, i, j, bx.ID), nil)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := e.do(b, "GET", base+"/board", "", nil); got != 200 {
			b.Fatalf("board: %d", got)
		}
	}
}

// BenchmarkMoveAgent is a drag on the board: one PATCH, one soul-less update.
func BenchmarkMoveAgent(b *testing.B) {
	e := newEnv(b)
	base := "/api/workspaces/" + e.ws
	var other struct{ ID string }
	e.do(b, "POST", base+"/boxes", `{"name":"Other"}`, &other)
	var a struct{ ID string }
	e.do(b, "POST", base+"/agents", fmt.Sprintf(`{"name":"Mover","box_id":%q}`, e.box), &a)
	boxes := []string{other.ID, e.box}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := e.do(b, "PATCH", base+"/agents/"+a.ID, fmt.Sprintf(`{"box_id":%q}`, boxes[i%2]), nil); got != 200 {
			b.Fatalf("move: %d", got)
		}
	}
}

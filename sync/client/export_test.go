package client

// Hooks are called, when set, at the points where a desktop can die; the
// end-to-end tests stop the process there and kill it.
type Hooks struct {
	Received, Delivered func(id string)
	Recorded            func(ids []string) // committed to the seen-set, not yet acked
	Tokens              func(n int)        // token hashes registered
}

func SetHooks(c *Client, h Hooks) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks = hooks{received: h.Received, delivered: h.Delivered, recorded: h.Recorded, tokens: h.Tokens}
}

package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// loginTTL is how long a one-time login code opens the UI.
const loginTTL = 2 * time.Minute

// logins are one-time codes that sign a browser in, for an address handed
// to another program (the default browser opening a popped-out Desktop).
// The UI token itself never goes there: a program's command line can be
// read by every user of the computer (ps), and the browser keeps its for
// as long as it runs. A code is good for one sign-in, within loginTTL.
type logins struct {
	mu    sync.Mutex
	codes map[[32]byte]time.Time // by the code's hash: until when it is good
}

// issue returns a new code, good until now+loginTTL.
func (l *logins) issue(now time.Time) string {
	b := make([]byte, 32)
	rand.Read(b)
	code := base64.RawURLEncoding.EncodeToString(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.codes == nil {
		l.codes = map[[32]byte]time.Time{}
	}
	for h, until := range l.codes {
		if now.After(until) {
			delete(l.codes, h)
		}
	}
	l.codes[hashOf(code)] = now.Add(loginTTL)
	return code
}

// use says whether code is good at now, and spends it.
func (l *logins) use(code string, now time.Time) bool {
	h := hashOf(code)
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.codes[h]
	delete(l.codes, h)
	return ok && !now.After(until)
}

func hashOf(code string) [32]byte { return sha256.Sum256([]byte(code)) }

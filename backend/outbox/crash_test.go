package outbox_test

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/outbox"
	"github.com/rerun-build/rerun-desktop/internal/mailpittest"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// TestOutboxProcess is the process TestCrashMidSendSendsOnce kills: it
// raises one card whose mail goes to a server that never confirms it.
func TestOutboxProcess(t *testing.T) {
	dir := os.Getenv("RERUN_OUTBOX_DIR")
	if dir == "" {
		t.Skip("run by TestCrashMidSendSendsOnce")
	}
	key, _ := hex.DecodeString(os.Getenv("RERUN_OUTBOX_KEY"))
	f := open(t, filepath.Join(dir, "workspace.db"), key, outbox.Deps{}, outbox.Config{})
	f.out.Start()
	f.card(t, notify.Question, questionCard, "Has a question for you", "", true)
	select {} // until SIGKILL
}

// stallingSMTP speaks SMTP until the message's final dot, then never
// answers: the sender is killed mid-send, after the server has the mail.
func stallingSMTP(t *testing.T) (port int, gotData <-chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan struct{})
	var once sync.Once
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				c.Write([]byte("220 stalling ESMTP\r\n"))
				inData := false
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					line = strings.TrimRight(line, "\r\n")
					switch verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0]); {
					case inData && line == ".":
						once.Do(func() { close(got) })
						// never answer: the client waits for the 250
					case inData:
					case verb == "DATA":
						inData = true
						c.Write([]byte("354 go ahead\r\n"))
					case verb == "QUIT":
						c.Write([]byte("221 bye\r\n"))
						return
					default:
						c.Write([]byte("250 ok\r\n"))
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, got
}

// A process killed mid-send (the row recorded as sending, the server holding
// the mail but not having confirmed it) sends that mail after the restart,
// with the same send id (Message-ID), once; a later start sends nothing
// again.
func TestCrashMidSendSendsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	key := make([]byte, 32)
	rand.Read(key)
	path := filepath.Join(dir, "workspace.db")
	port, gotData := stallingSMTP(t)
	e := outbox.Email{Host: "127.0.0.1", Port: port, TLS: outbox.NoTLS, From: "rerun@example.com", To: "me@example.com"}
	f := open(t, path, key, outbox.Deps{}, outbox.Config{})
	f.setEmail(t, e)
	f.close()

	child := exec.Command(os.Args[0], "-test.run=^TestOutboxProcess$")
	child.Env = append(os.Environ(), "RERUN_OUTBOX_DIR="+dir, "RERUN_OUTBOX_KEY="+hex.EncodeToString(key))
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	waittest.Recv(t, "the killed process's mail reaches the server", gotData)
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()

	mp := mailpittest.Start(t, mailpittest.Options{})
	f = open(t, path, key, outbox.Deps{}, outbox.Config{})
	var id, status string
	var attempts int
	if err := f.db.QueryRow(`SELECT id, status, attempts FROM outbox`).Scan(&id, &status, &attempts); err != nil {
		t.Fatal(err)
	}
	if status != outbox.Sending || attempts != 1 {
		t.Fatalf("after the crash: %s after %d attempts, want sending after 1 (recorded before sending)", status, attempts)
	}
	e.Port = mp.Port
	f.setEmail(t, e)
	f.out.Start()
	waittest.Until(t, "the interrupted mail is sent after the restart", func() bool { return len(mp.Messages(t)) == 1 })
	if got := mp.Messages(t)[0].MessageID; got != outbox.MessageID(id) {
		t.Errorf("Message-ID %q, want %q: a retry is the same message", got, outbox.MessageID(id))
	}
	waittest.Until(t, "the row is recorded as sent", func() bool {
		f.db.QueryRow(`SELECT status, attempts FROM outbox WHERE id = ?`, id).Scan(&status, &attempts)
		return status == outbox.Sent
	})
	if attempts != 2 {
		t.Errorf("%d attempts, want 2", attempts)
	}
	f.close()

	// Another start: the sent row stays sent; a new card's mail is the only new one.
	f = open(t, path, key, outbox.Deps{}, outbox.Config{})
	f.out.Start()
	f.card(t, notify.Question, questionCard, "Has another question", "", true)
	waittest.Until(t, "the new card's mail arrives", func() bool { return len(mp.Messages(t)) >= 2 })
	list := mp.Messages(t)
	if len(list) != 2 || list[0].MessageID == list[1].MessageID {
		t.Errorf("messages after the second restart: %+v, want the first once and the new one", list)
	}
	f.close()
	if len(mp.Messages(t)) != 2 {
		t.Errorf("a mail was sent twice")
	}
}

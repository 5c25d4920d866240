package relay_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// The phone app's seal (common.js, WebCrypto) and protocol's open each
// other's records: Node runs the app's own file.
func TestPhoneAppSealsLikeProtocol(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	key := protocol.PhoneKey(bytes.Repeat([]byte{9}, 32))
	card, _ := protocol.SealPhone(key, protocol.SealCard, []byte(`{"id":"nt_1","title":"Approve?"}`))
	common, _ := filepath.Abs("phoneapp/common.js")
	script := `
const fs = require('node:fs');
globalThis.self = globalThis;
eval(fs.readFileSync(process.argv[2], 'utf8'));
const P = globalThis.rerunPhone;
(async () => {
  const card = await P.openSealed(process.argv[3], 'card', Buffer.from(process.argv[4], 'base64'));
  const sealed = await P.seal(process.argv[3], 'answer', { v: 1, pause_id: 'pa_1', seen: card.title });
  console.log(Buffer.from(sealed).toString('base64'));
})().catch((e) => { console.error(e); process.exit(1); });`
	path := filepath.Join(t.TempDir(), "seal.js")
	os.WriteFile(path, []byte(script), 0o600)
	out, err := exec.Command(node, path, common, base64.RawURLEncoding.EncodeToString(key), base64.StdEncoding.EncodeToString(card)).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	sealed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("node printed %q", out)
	}
	plain, err := protocol.OpenPhone(key, protocol.SealAnswer, sealed)
	if err != nil {
		t.Fatal(err)
	}
	var a struct{ Seen string }
	json.Unmarshal(plain, &a)
	if a.Seen != "Approve?" {
		t.Errorf("the app opened the card as %s", plain)
	}
}

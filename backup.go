package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/backup"
	"github.com/rerun-build/rerun-desktop/backend/envconfig"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

const backupUsage = `Usage:
  rerun backup [--workspace WS] [--out FILE] [--passphrase-file F] [--data-dir DIR]
  rerun restore FILE [--name NAME] [--passphrase-file F] [--data-dir DIR]

backup writes one workspace (default: the current one) to one file encrypted
under a passphrase (default file: rerun-<name>-<date>.rerun-backup).
restore checks a backup in full and adds it as a new workspace.
The passphrase comes from --passphrase-file, else $RERUN_BACKUP_PASSPHRASE,
else a prompt. Stop the running app (or rerun serve) first: both need the
data directory to themselves; in the app use Settings → Backups.
`

// backupCommand is `rerun backup` and `rerun restore`.
func backupCommand(verb string, args []string) error {
	fs := flag.NewFlagSet("rerun "+verb, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, backupUsage) }
	dataDir := fs.String("data-dir", "", "")
	ws := fs.String("workspace", "", "")
	out := fs.String("out", "", "")
	name := fs.String("name", "", "")
	passFile := fs.String("passphrase-file", "", "")
	var positional []string
	for len(args) > 0 { // flags may come after the file
		if err := fs.Parse(args); err != nil {
			os.Exit(2)
		}
		if fs.NArg() == 0 {
			break
		}
		positional, args = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	if verb == "restore" && len(positional) != 1 || verb == "backup" && len(positional) != 0 {
		fmt.Fprint(os.Stderr, backupUsage)
		os.Exit(2)
	}
	dir, err := envconfig.DataDir(*dataDir)
	if err != nil {
		return err
	}
	pass, err := passphrase(*passFile, verb == "backup")
	if err != nil {
		return err
	}
	ctx := context.Background()
	home, err := workspace.Open(ctx, workspace.Config{DataDir: dir, Keychain: envconfig.Keychain()})
	if err != nil {
		return err
	}
	defer home.Close()
	if verb == "restore" {
		info, err := home.Restore(ctx, positional[0], pass, *name)
		if err != nil {
			return err
		}
		fmt.Printf("restored workspace %q (%s); API keys are not restored: create new ones with rerun key create\n", info.Name, info.ID)
		return nil
	}
	id := home.Current()
	if *ws != "" {
		w, err := home.ByName(*ws)
		if err != nil {
			return err
		}
		id = w.Info().ID
	}
	b, err := home.Backups(id)
	if err != nil {
		return err
	}
	if *out == "" {
		*out = backup.FileName(b.Name, time.Now())
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create the backup file: %w", err)
	}
	res, err := b.Backup(ctx, pass, version, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(*out)
		return err
	}
	st, _ := os.Stat(*out)
	fmt.Printf("backed up workspace %q to %s: %d files, %d bytes, in %s\n", b.Name, *out, res.Files, st.Size(), res.Took)
	return nil
}

// passphrase reads the backup passphrase from file, the environment or a
// prompt (twice when making a backup).
func passphrase(file string, twice bool) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read the passphrase file: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	if p := envconfig.BackupPassphrase(); p != "" {
		return p, nil
	}
	in := bufio.NewReader(os.Stdin)
	ask := func(prompt string) (string, error) {
		fmt.Fprint(os.Stderr, prompt)
		if exec.Command("stty", "-echo").Run() == nil { // no echo on a terminal
			defer func() { exec.Command("stty", "echo").Run(); fmt.Fprintln(os.Stderr) }()
		}
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return "", errors.New("no passphrase given (use --passphrase-file or RERUN_BACKUP_PASSPHRASE)")
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	p, err := ask("Backup passphrase: ")
	if err != nil || !twice {
		return p, err
	}
	again, err := ask("Again: ")
	if err != nil {
		return "", err
	}
	if again != p {
		return "", errors.New("the two passphrases differ; nothing was written")
	}
	return p, nil
}

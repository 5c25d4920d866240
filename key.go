package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/envconfig"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

const keyUsage = `Usage:
  rerun key create [NAME] [--workspace WS] [--data-dir DIR] print a new API key (shown once)
  rerun key list [--workspace WS] [--data-dir DIR]
  rerun key revoke ID-OR-PREFIX [--workspace WS] [--data-dir DIR]

An API key reaches one workspace (default: the current one) through the MCP
endpoint POST http://127.0.0.1:7777/api/mcp/account (or the port "rerun serve"
printed when 7777 was taken).
`

// keyCommand manages API keys from a terminal, for scripts.
func keyCommand(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, keyUsage)
		os.Exit(2)
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("rerun key", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, keyUsage) }
	dataDir := fs.String("data-dir", "", "")
	ws := fs.String("workspace", "", "")
	var positional []string
	for len(args) > 0 { // flags may come after the name
		if err := fs.Parse(args); err != nil {
			os.Exit(2)
		}
		if fs.NArg() == 0 {
			break
		}
		positional, args = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	dir, err := envconfig.DataDir(*dataDir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	keys, info, closeDB, err := workspace.Keys(ctx, dir, *ws)
	if err != nil {
		return err
	}
	defer closeDB()
	switch {
	case verb == "create" && len(positional) <= 1:
		name := "created by rerun key create, " + time.Now().Format("2006-01-02 15:04")
		if len(positional) == 1 {
			name = positional[0]
		}
		plain, k, err := keys.Create(ctx, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "API key %q for workspace %q (%s). It is shown only now:\n", k.Name, info.Name, k.ID)
		fmt.Println(plain)
		return nil
	case verb == "list" && len(positional) == 0:
		list, err := keys.List(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPREFIX\tNAME\tCREATED\tLAST USED\tREVOKED")
		for _, k := range list {
			fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name, k.CreatedAt.Local().Format(time.DateTime), when(k.LastUsedAt), when(k.RevokedAt))
		}
		return tw.Flush()
	case verb == "revoke" && len(positional) == 1:
		k, err := keys.Revoke(ctx, positional[0])
		if err != nil {
			return err
		}
		fmt.Printf("revoked %s (%s)\n", k.ID, k.Name)
		return nil
	}
	fmt.Fprint(os.Stderr, keyUsage)
	return errors.New("unknown key command or wrong arguments")
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}

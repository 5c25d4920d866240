package retention

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
)

// AgentDisk is what one agent takes on disk, in bytes.
type AgentDisk struct {
	AgentID  string `json:"agent_id"`
	Handle   string `json:"handle"`
	Name     string `json:"name"`
	Files    int64  `json:"files"`    // its folder and skills
	Database int64  `json:"database"` // its own database (agent.db)
	Browser  int64  `json:"browser"`  // its Chromium profile
	// Runs is its share of workspace.db: its runs' and steps' text.
	Runs     int64 `json:"runs"`
	RunCount int   `json:"run_count"`
	Total    int64 `json:"total"`
}

// Disk is what the workspace takes on disk, in bytes.
type Disk struct {
	Agents []AgentDisk `json:"agents"`
	// Database is workspace.db with its write-ahead log; Free the pages in
	// it that pruning freed and vacuuming has not given back yet.
	Database int64 `json:"database"`
	Free     int64 `json:"free"`
	Shared   int64 `json:"shared"`    // the shared folder
	SharedDB int64 `json:"shared_db"` // the shared database
	Total    int64 `json:"total"`     // the whole workspace folder
}

// DiskUse measures the workspace's folder and its agents' shares.
func (s *Service) DiskUse(ctx context.Context) (Disk, error) {
	out := Disk{Agents: []AgentDisk{}}
	rows, err := s.db.QueryContext(ctx, `SELECT a.id, a.handle, a.name,
		(SELECT count(*) FROM runs r WHERE r.agent_id = a.id),
		(SELECT coalesce(sum(length(r.input) + length(r.output) + length(r.error)), 0) FROM runs r WHERE r.agent_id = a.id),
		(SELECT coalesce(sum(length(st.data)), 0) FROM runs r JOIN steps st ON st.run_id = r.id WHERE r.agent_id = a.id)
		FROM agents a ORDER BY a.created_at, a.id`)
	if err != nil {
		return out, fmt.Errorf("read disk use: %w", err)
	}
	for rows.Next() {
		var a AgentDisk
		var runText, stepText int64
		if err := rows.Scan(&a.AgentID, &a.Handle, &a.Name, &a.RunCount, &runText, &stepText); err != nil {
			rows.Close()
			return out, fmt.Errorf("read disk use: %w", err)
		}
		a.Runs = runText + stepText
		out.Agents = append(out.Agents, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("read disk use: %w", err)
	}
	for i := range out.Agents {
		a := &out.Agents[i]
		dir := filepath.Join(s.dirs.Agents, a.AgentID)
		a.Files = size(filepath.Join(dir, "files")) + size(filepath.Join(dir, "skills"))
		a.Database = size(filepath.Join(dir, "agent.db")) + size(filepath.Join(dir, "agent.db-wal"))
		a.Browser = size(filepath.Join(dir, "browser"))
		a.Total = a.Files + a.Database + a.Browser + a.Runs
	}
	db := filepath.Join(s.dirs.Workspace, "workspace.db")
	out.Database = size(db) + size(db+"-wal")
	var free, page int64
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT freelist_count FROM pragma_freelist_count), (SELECT page_size FROM pragma_page_size)`).Scan(&free, &page); err == nil {
		out.Free = free * page
	}
	out.Shared = size(filepath.Join(s.dirs.Workspace, "shared"))
	out.SharedDB = size(filepath.Join(s.dirs.Workspace, "shared.db")) + size(filepath.Join(s.dirs.Workspace, "shared.db-wal"))
	out.Total = size(s.dirs.Workspace)
	return out, nil
}

// size is the bytes of the regular files at or under path (0 when absent).
func size(path string) int64 {
	var n int64
	_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable or gone: count what can be read
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

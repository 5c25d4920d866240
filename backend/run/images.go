package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm"
)

// maxImages bounds the images one tool call keeps.
const maxImages = 4

// keepImages writes a tool call's images into the agent's folder.
func (s *Service) keepImages(r *Run, c ToolCall, images []llm.Image) []ImageRef {
	var refs []ImageRef
	for i, img := range images {
		if i == maxImages {
			break
		}
		ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}[img.MediaType]
		if ext == "" {
			s.log.Warn("tool image of an unknown type dropped", "run", r.ID, "type", img.MediaType)
			continue
		}
		rel := filepath.Join("shots", fmt.Sprintf("%s-%s-%d%s", r.ID, safeName(c.ID), i, ext))
		full := filepath.Join(s.agents.Dir(r.AgentID), rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			s.log.Warn("keep tool image", "run", r.ID, "err", err)
			continue
		}
		if err := os.WriteFile(full, img.Data, 0o600); err != nil {
			s.log.Warn("keep tool image", "run", r.ID, "err", err)
			continue
		}
		refs = append(refs, ImageRef{MediaType: img.MediaType, Path: filepath.ToSlash(rel), Size: len(img.Data)})
	}
	return refs
}

// safeName keeps the letters, digits, - and _ of a tool call id for a file
// name.
func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return -1
	}, id)
}

// ImagePath is where an image a tool returned is kept.
func (s *Service) ImagePath(agentID string, ref ImageRef) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(ref.Path))
	if !strings.HasPrefix(clean, "shots"+string(filepath.Separator)) || strings.Contains(clean, "..") {
		return "", fault.Invalid("not an image of a tool result")
	}
	return filepath.Join(s.agents.Dir(agentID), clean), nil
}

//go:build !windows

package browser

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkIdleMemory measures the memory of an idle agent browser showing
// a small page, over its whole process tree: USS is the memory only it
// uses (what a further agent costs), PSS adds its share of the Chromium
// binary and libraries.
func BenchmarkIdleMemory(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	s, m, env := setup(b, "idle")
	must(b, m, env, "browser_open", map[string]any{"url": s.URL})
	br, _ := m.Lookup("idle")
	pid := br.running().pid
	time.Sleep(3 * time.Second) // let start-up work finish
	var uss, pss, procs int
	for b.Loop() {
		uss, pss, procs = treeMemory(pid)
	}
	b.ReportMetric(float64(uss)/1024, "MB-uss")
	b.ReportMetric(float64(pss)/1024, "MB-pss")
	b.ReportMetric(float64(procs), "processes")
}

// treeMemory sums USS and PSS (KiB) of the processes in pid's group.
func treeMemory(pid int) (uss, pss, procs int) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, pgrp, ok := procStat(p); !ok || pgrp != pid {
			continue
		}
		procs++
		rollup, err := os.ReadFile("/proc/" + e.Name() + "/smaps_rollup")
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(rollup), "\n") {
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			v, _ := strconv.Atoi(f[1])
			switch f[0] {
			case "Private_Clean:", "Private_Dirty:":
				uss += v
			case "Pss:":
				pss += v
			}
		}
	}
	return uss, pss, procs
}

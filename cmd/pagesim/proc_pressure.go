package main

import (
	"io"

	"github.com/pagesim/pagesim/engine/mm"
)

// init registers /proc/pressure/memory (kernel/sched/psi.c psi_show) of the
// machine.
func init() {
	registerProcFile(&procFile{name: "pressure", summary: "/proc/pressure/memory: PSI some and full averages and totals",
		write: func(w io.Writer, m *mm.Machine) error { return m.WritePressure(w) }})
}

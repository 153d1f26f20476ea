package tracefmt

// report.go writes a recording's tracepoint events as `trace-cmd report`
// prints a trace.dat (trace-cmd v3, tracecmd/trace-read.c @3ce20923b3ef):
//
//	cpus=2
//	            qemu-5     [000] ..... 12345.678901: mm_compaction_begin:  zone_start=0x1 ...
//
// A header line "cpus=N", then one line per event: the comm (at most 15
// characters, TASK_COMM_LEN) right-aligned in 16 columns, "-", the PID
// left-aligned in 5, the CPU in brackets, the latency flags
// (TEP_PRINT_LATENCY: pagesim's events run with interrupts on and no
// preemption count, "....."), the timestamp in seconds rounded to the
// microsecond (libtraceevent's print_event_time with "%6.1000d": ns + 500,
// divided by 1000), the event name followed by ": " and padded to 20
// columns (print_event_name), then the fields as the event's TP_printk
// prints them. trace-cmd merges the per-CPU buffers by timestamp, the
// lower CPU first on a tie (tracecmd_read_next_data), and so does
// WriteReport.
//
// Several machines recorded on clocks of their own (a script that boots
// twice) are written as `trace-cmd report -i A -i B` prints two files:
// each header and each line start with the input's name right-aligned to
// the longest name and ": " (print_handle_file), and the lines of both
// merge by timestamp. Events the recording's budget dropped are reported
// at the end the way trace-cmd reports lost events, "CPU:N [M EVENTS
// DROPPED]".

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// taskCommLen is TASK_COMM_LEN less its NUL.
const taskCommLen = 15

// WriteReport writes rec's tracepoint events as trace-cmd report does.
func WriteReport(w io.Writer, rec *mm.Recording) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	// One input for a sequential recording (a scenario's phases share a
	// clock), one per machine otherwise.
	multi := len(rec.Machines) > 1 && !rec.Sequential
	names := make([]string, len(rec.Machines))
	width := 0
	for i := range rec.Machines {
		names[i] = inputName(rec, i)
		width = max(width, len(names[i]))
	}
	prefix := func(i int) string {
		if !multi {
			return ""
		}
		return fmt.Sprintf("%*s: ", width, names[i])
	}
	if multi {
		for i := range rec.Machines {
			fmt.Fprintf(bw, "%scpus=%d\n", prefix(i), len(rec.Machines[i].CPUNode))
		}
	} else {
		cpus := 0
		for i := range rec.Machines {
			cpus = max(cpus, len(rec.Machines[i].CPUNode))
		}
		fmt.Fprintf(bw, "cpus=%d\n", cpus)
	}

	type ref struct {
		t       sim.Time
		input   int32
		cpu     int16
		machine int32
		idx     int32
	}
	var refs []ref
	for mi := range rec.Machines {
		m := &rec.Machines[mi]
		in := int32(0)
		if multi {
			in = int32(mi)
		}
		for i := range m.Events {
			e := &m.Events[i]
			refs = append(refs, ref{t: m.Offset + e.Time, input: in, cpu: e.CPU, machine: int32(mi), idx: int32(i)})
		}
	}
	slices.SortStableFunc(refs, func(a, b ref) int {
		switch {
		case a.t != b.t:
			return cmpTime(a.t, b.t)
		case a.input != b.input:
			return int(a.input - b.input)
		}
		return int(a.cpu) - int(b.cpu)
	})
	for _, r := range refs {
		m := &rec.Machines[r.machine]
		bw.WriteString(prefix(int(r.machine)))
		writeReportLine(bw, &m.Events[r.idx], m.Offset)
	}
	for mi := range rec.Machines {
		for cpu, n := range rec.Machines[mi].Dropped {
			if n > 0 {
				fmt.Fprintf(bw, "%sCPU:%d [%d EVENTS DROPPED]\n", prefix(mi), cpu, n)
			}
		}
	}
	return bw.Flush()
}

// ReportLine formats one event as a line of trace-cmd report (without
// the newline), its time moved by offset.
func ReportLine(e *mm.TraceEvent, offset sim.Time) string {
	var b lineBuf
	writeReportLine(&b, e, offset)
	return string(b[:len(b)-1])
}

type lineBuf []byte

func (b *lineBuf) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

func writeReportLine(w io.Writer, e *mm.TraceEvent, offset sim.Time) {
	comm := e.Comm
	if len(comm) > taskCommLen {
		comm = comm[:taskCommLen]
	}
	usecs := (int64(offset+e.Time) + 500) / 1000
	name := e.Name()
	pad := ""
	if len(name) < 20 {
		pad = "                    "[:20-len(name)]
	}
	fmt.Fprintf(w, "%16s-%-5d [%03d] ..... %5d.%06d: %s: %s%s\n", comm, e.PID, e.CPU, usecs/1000000, usecs%1000000, name, pad, e.Fields())
}

func inputName(rec *mm.Recording, i int) string {
	if n := rec.Machines[i].Name; n != "" {
		return n
	}
	return fmt.Sprintf("machine%d", i+1)
}

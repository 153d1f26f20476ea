package mm

// vmscan.go models mm/vmscan.c. (Filled in by the reclaim work; the
// foundation only needs the wakeup hooks.)

import "github.com/pagesim/pagesim/engine/sim"

// wakeupKswapd is wakeup_kswapd().
func (m *Machine) wakeupKswapd(t *sim.Task, z *Zone, gfp GFP, order Order, highest ZoneType) {}

// kswapdActive reports whether the node's kswapd is running (not waiting
// on kswapd_wait).
func (m *Machine) kswapdActive(n *Node) bool { return false }

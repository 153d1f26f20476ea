package mm

// huge_memory.go models the transparent hugepage settings of
// mm/huge_memory.c: /sys/kernel/mm/transparent_hugepage/enabled, defrag and
// the per-size hugepages-<size>kB/enabled knobs (mTHP), and
// vma_thp_gfp_mask(), which turns the defrag setting into the GFP mask of a
// THP or mTHP fault (alloc_hugepage_direct_gfpmask() before v5.11).

import (
	"fmt"
	"strings"

	"github.com/pagesim/pagesim/engine/internal/enum"
)

// THPEnabled is a value of .../enabled.
type THPEnabled uint8

const (
	THPAlways THPEnabled = iota
	THPMadvise
	THPNever
	THPInherit // per-size knobs only
)

var thpEnabledNames = []string{"always", "madvise", "never", "inherit"}

// String returns the value as sysfs spells it.
func (e THPEnabled) String() string { return enum.Name(thpEnabledNames, e) }

// THPDefrag is a value of .../defrag.
type THPDefrag uint8

const (
	DefragAlways THPDefrag = iota
	DefragDefer
	DefragDeferMadvise
	DefragMadvise
	DefragNever
)

var thpDefragNames = []string{"always", "defer", "defer+madvise", "madvise", "never"}

// String returns the value as sysfs spells it.
func (d THPDefrag) String() string { return enum.Name(thpDefragNames, d) }

// THPSettings are the transparent_hugepage sysfs knobs.
type THPSettings struct {
	set     bool
	Enabled THPEnabled
	Defrag  THPDefrag
	// PerSize[order] is hugepages-<4<<order>kB/enabled for orders 2..9.
	PerSize [HPAGE_PMD_ORDER + 1]THPEnabled
}

// DefaultTHPSettings are the Kconfig defaults of a distribution kernel:
// enabled=always (TRANSPARENT_HUGEPAGE_ALWAYS), defrag=madvise, the
// 2048kB size inherits, smaller sizes never.
func DefaultTHPSettings() THPSettings {
	s := THPSettings{set: true, Enabled: THPAlways, Defrag: DefragMadvise}
	for o := range s.PerSize {
		s.PerSize[o] = THPNever
	}
	s.PerSize[HPAGE_PMD_ORDER] = THPInherit
	return s
}

// orderEnabled returns the effective enabled value of an order.
func (s *THPSettings) orderEnabled(order Order) THPEnabled {
	e := s.PerSize[order]
	if e == THPInherit {
		return s.Enabled
	}
	return e
}

// hugepagePMDEnabled is hugepage_pmd_enabled(): PMD-size THP is enabled
// (always or madvise), which is when khugepaged runs.
func (s *THPSettings) hugepagePMDEnabled() bool {
	e := s.orderEnabled(HPAGE_PMD_ORDER)
	return e == THPAlways || e == THPMadvise
}

// THPKnobNames lists the sysfs knobs by dotted path.
func THPKnobNames() []string {
	out := []string{"transparent_hugepage.enabled", "transparent_hugepage.defrag"}
	for o := 2; o <= HPAGE_PMD_ORDER; o++ {
		out = append(out, fmt.Sprintf("transparent_hugepage.hugepages-%dkB.enabled", 4<<o))
	}
	return out
}

func normaliseTHPName(name string) string {
	name = strings.TrimPrefix(strings.TrimSpace(name), "/sys/kernel/mm/")
	return strings.ReplaceAll(name, "/", ".")
}

// IsTHPKnob reports whether name is a THP sysfs knob.
func IsTHPKnob(name string) bool {
	name = normaliseTHPName(name)
	for _, n := range THPKnobNames() {
		if n == name {
			return true
		}
	}
	return false
}

// parseChoice reads a knob's value, one of choices, as the index of its
// name.
func parseChoice[T enum.Integer](name, v string, choices []string) (T, error) {
	v = strings.TrimSpace(v)
	if i, ok := enum.Parse[T](choices, v); ok {
		return i, nil
	}
	return 0, fmt.Errorf("%s: %q is not one of %s", name, v, strings.Join(choices, ", "))
}

// SetKnob writes a THP knob by name (transparent_hugepage.defrag=madvise).
func (s *THPSettings) SetKnob(name, value string) error {
	name = normaliseTHPName(name)
	switch name {
	case "transparent_hugepage.enabled":
		v, err := parseChoice[THPEnabled](name, value, thpEnabledNames[:THPInherit])
		if err != nil {
			return err
		}
		s.Enabled = v
		return nil
	case "transparent_hugepage.defrag":
		v, err := parseChoice[THPDefrag](name, value, thpDefragNames)
		if err != nil {
			return err
		}
		s.Defrag = v
		return nil
	}
	for o := 2; o <= HPAGE_PMD_ORDER; o++ {
		if name == fmt.Sprintf("transparent_hugepage.hugepages-%dkB.enabled", 4<<o) {
			// Every per-size knob takes always/inherit/madvise/never.
			v, err := parseChoice[THPEnabled](name, value, thpEnabledNames)
			if err != nil {
				return err
			}
			s.PerSize[o] = v
			return nil
		}
	}
	return fmt.Errorf("unknown THP knob %q", name)
}

// GetKnob reads a THP knob the way sysfs prints it, with the active choice
// in brackets ("always [madvise] never").
func (s *THPSettings) GetKnob(name string) (string, error) {
	name = normaliseTHPName(name)
	bracket := func(choices []string, cur int) string {
		parts := make([]string, len(choices))
		for i, c := range choices {
			if i == cur {
				parts[i] = "[" + c + "]"
			} else {
				parts[i] = c
			}
		}
		return strings.Join(parts, " ")
	}
	switch name {
	case "transparent_hugepage.enabled":
		return bracket(thpEnabledNames[:3], int(s.Enabled)), nil
	case "transparent_hugepage.defrag":
		return bracket(thpDefragNames, int(s.Defrag)), nil
	}
	for o := 2; o <= HPAGE_PMD_ORDER; o++ {
		if name == fmt.Sprintf("transparent_hugepage.hugepages-%dkB.enabled", 4<<o) {
			order := []THPEnabled{THPAlways, THPInherit, THPMadvise, THPNever}
			names := []string{"always", "inherit", "madvise", "never"}
			cur := 0
			for i, e := range order {
				if e == s.PerSize[o] {
					cur = i
				}
			}
			return bracket(names, cur), nil
		}
	}
	return "", fmt.Errorf("unknown THP knob %q", name)
}

// SetTHPKnob writes a THP knob on a running machine and, like the kernel's
// sysfs store handlers, restarts khugepaged's min_free_kbytes logic.
func (m *Machine) SetTHPKnob(name, value string) error {
	if err := m.THP.SetKnob(name, value); err != nil {
		return err
	}
	m.setRecommendedMinFreeKbytes()
	return nil
}

// vmaTHPGFPMask is vma_thp_gfp_mask(): the mask of a THP or mTHP fault from
// the defrag setting and whether the VMA is madvised (VM_HUGEPAGE).
func (s *THPSettings) vmaTHPGFPMask(madvised bool) GFP {
	switch s.Defrag {
	case DefragAlways:
		if madvised {
			return GFP_TRANSHUGE
		}
		return GFP_TRANSHUGE | __GFP_NORETRY
	case DefragDefer:
		return GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM
	case DefragDeferMadvise:
		if madvised {
			return GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM
		}
		return GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM
	case DefragMadvise:
		if madvised {
			return GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM
		}
		return GFP_TRANSHUGE_LIGHT
	}
	return GFP_TRANSHUGE_LIGHT
}

// VMATHPGFPMask exports vma_thp_gfp_mask for the machine's settings.
func (m *Machine) VMATHPGFPMask(madvised bool) GFP { return m.THP.vmaTHPGFPMask(madvised) }

// anonOrders is thp_vma_allowable_orders() for an anonymous fault: the
// orders of mask (a bitmask, bit n for order n) that the per-size settings
// allow for a VMA with these flags.
func (s *THPSettings) anonOrders(madvised, noHuge bool, mask uint64) uint64 {
	var orders uint64
	for o := Order(2); o <= HPAGE_PMD_ORDER; o++ {
		if mask&(1<<o) != 0 && s.thpOrderAllowed(o, madvised, noHuge) {
			orders |= 1 << o
		}
	}
	return orders
}

// thpOrderAllowed is thp_vma_allowable_order() for an anonymous VMA: the
// order's enabled setting (or the top-level one when it inherits), honouring
// MADV_HUGEPAGE and MADV_NOHUGEPAGE.
func (s *THPSettings) thpOrderAllowed(order Order, madvised, noHuge bool) bool {
	if noHuge || order < 2 || order > HPAGE_PMD_ORDER {
		return false
	}
	switch s.orderEnabled(order) {
	case THPAlways:
		return true
	case THPMadvise:
		return madvised
	}
	return false
}

// MTHPStats are the per-size counters of
// /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats/.
type MTHPStats struct {
	AnonFaultAlloc          uint64
	AnonFaultFallback       uint64
	AnonFaultFallbackCharge uint64
}

package mm

import "github.com/pagesim/pagesim/engine/sim"

// testTask returns a task on cpu for calling the allocator directly.
func (m *Machine) testTask(cpu int) *sim.Task {
	return m.World.NewTask("test", cpu, nil, sim.Never)
}

package sandboxtest

import "github.com/gradegate/gradegate/gate/sandbox"

// ReapOrphans makes the test process reap the orphans of its process
// tree, as gradegate itself does (sandbox.ReapOrphans says why) and as a
// CI runner's init does.
func ReapOrphans() { sandbox.ReapOrphans() }

//go:build !perfinject

package connect4

// perfInject is the no-op of normal builds: the compiler inlines it away,
// so RandomPlayout's loop is unchanged. perfinject.go (-tags perfinject)
// replaces it with extra work for the performance gate's self-test.
func perfInject(uint64) {}

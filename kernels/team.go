package kernels

// Team is a budget of kernel threads owned by one user, such as one CPU
// backend: its calls split their work over at most Threads() goroutines,
// the caller's included. The zero Team has no budget of its own and uses
// the package default (SetThreads). Teams share the package's pooled
// workers and its count of threads busy in calls in flight, so calls of
// several teams running at once still only use threads that the others
// leave idle; a team's budget bounds its own calls and nobody else's.
//
// A Team is a small value: copy it freely. It is safe for concurrent use.
type Team struct {
	n int // threads; 0: the package default
}

// NewTeam returns a team of n threads (n <= 0: the package default; at
// most 64).
func NewTeam(n int) Team {
	if n <= 0 {
		return Team{}
	}
	return Team{n: min(n, maxThreads)}
}

// Threads is the team's thread budget.
func (t Team) Threads() int { return threadsOf(t.n) }

// threadsOf returns the thread budget limit stands for: itself, or the
// package default when it is 0.
func threadsOf(limit int) int {
	if limit > 0 {
		return limit
	}
	return Threads()
}

// IdleThreads returns how many of the team's threads no call in flight is
// using now (at least 1: the caller's own). It is a hint for callers
// choosing how many parts to split work into; Parallel checks again when
// it runs.
func (t Team) IdleThreads() int { return idleThreads(t.n) }

// Parallel is the package's Parallel on the team's budget.
func (t Team) Parallel(parts int, task Task) { parallel(t.n, parts, task) }

// GemmBiasAct is the package's GemmBiasAct on the team's budget.
func (t Team) GemmBiasAct(m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, residual []float32, relu bool, c []float32, ldc int) {
	gemmBiasAct(t.n, m, n, k, a, lda, b, ldb, bias, residual, relu, c, ldc)
}

// Conv3x3BiasAct is the package's Conv3x3BiasAct on the team's budget.
func (t Team) Conv3x3BiasAct(src []float32, batch, cin, h, w int, wts []float32, cout int, bias, residual []float32, relu bool, dst []float32) {
	conv3x3BiasAct(t.n, src, batch, cin, h, w, wts, cout, bias, residual, relu, dst)
}

// Conv3x3BiasActBF16 is the package's Conv3x3BiasActBF16 on the team's
// budget.
func (t Team) Conv3x3BiasActBF16(src []float32, batch, cin, h, w int, wts *BF16Matrix, bias, residual []float32, relu bool, dst []float32) {
	conv3x3BiasActBF16(t.n, src, batch, cin, h, w, wts, bias, residual, relu, dst)
}

// Conv3x3Winograd is the package's Conv3x3Winograd on the team's budget.
func (t Team) Conv3x3Winograd(src []float32, batch, cin, h, w int, u []float32, cout int, bias, residual []float32, relu bool, dst []float32) {
	checkWinogradWeights(u, cin, cout)
	winograd(t.n, winoArgs{u: u}, "Conv3x3Winograd", src, batch, cin, h, w, cout, bias, residual, relu, dst)
}

// Conv3x3Winograd34 is the package's Conv3x3Winograd34 on the team's
// budget.
func (t Team) Conv3x3Winograd34(src []float32, batch, cin, h, w int, u []float32, cout int, bias, residual []float32, relu bool, dst []float32) {
	checkWinograd34Weights(u, cin, cout)
	winograd34(t.n, w34Args{u: u}, "Conv3x3Winograd34", src, batch, cin, h, w, cout, bias, residual, relu, dst)
}

// Conv3x3WinogradBF16 is the package's Conv3x3WinogradBF16 on the team's
// budget.
func (t Team) Conv3x3WinogradBF16(src []float32, batch, cin, h, w int, u *WinogradBF16, bias, residual []float32, relu bool, dst []float32) {
	checkWinogradBF16(u, cin)
	winograd(t.n, winoArgs{ub: u}, "Conv3x3WinogradBF16", src, batch, cin, h, w, u.cout, bias, residual, relu, dst)
}

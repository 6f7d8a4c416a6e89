//go:build darwin || linux

package cuda

import "testing"

// TestSignaturesAcceptedByPurego registers every binding's Go signature
// with a dummy address (never called): purego validates argument kinds and
// counts (register and stack slots) at registration and panics on a
// signature it cannot call, so this catches such mistakes without a GPU.
func TestSignaturesAcceptedByPurego(t *testing.T) {
	var d driverAPI
	var n nvrtcAPI
	var b cublasAPI
	syms := append(append(d.symbols(), n.symbols()...), b.symbols()...)
	syms = append(syms, symbol{&b.cublasSetWorkspace, []string{"cublasSetWorkspace_v2"}})
	for _, s := range syms {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: purego rejects the signature: %v", s.names[0], r)
				}
			}()
			registerFunc(s.fptr, 1)
		}()
	}
	if d.cuLaunchKernel == nil || b.cublasGemmEx == nil {
		t.Error("registration left the function variables nil")
	}
}

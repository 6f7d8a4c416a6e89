module github.com/canopy-go/canopy

go 1.26

require (
	github.com/chzyer/readline v1.5.1 // indirect
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20250417193237-f615e6bd150b // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	golang.org/x/sys v0.41.0 // indirect
)

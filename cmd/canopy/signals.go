package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals are the signals that stop a run command cleanly: Ctrl-C
// (SIGINT), and SIGTERM and SIGHUP, which timeout(1), systemd, docker
// stop, batch schedulers and closed terminals send. Every command that
// writes a run or prints partial results treats them alike.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signalContext returns a context canceled by the first of stopSignals,
// with a cause naming it ("interrupt", "terminated", "hangup": see
// signalName), so that the command can save what it has and say how to
// continue. The first signal also restores the default action: a second
// one ends the process at once, as it would without Canopy's handler.
// stop releases the signals; call it when the run ends.
func signalContext() (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch) // the next signal takes its default action
			cancel(signalError{s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		select {
		case <-done:
		default:
			close(done)
		}
		cancel(context.Canceled)
	}
}

// signalError is the cause of a signalContext's end.
type signalError struct{ sig os.Signal }

func (e signalError) Error() string { return e.sig.String() + " signal received" }

// signalName is the name of the signal that ended ctx ("interrupt",
// "terminated", "hangup"), or "interrupted" when none did.
func signalName(ctx context.Context) string {
	if e, ok := context.Cause(ctx).(signalError); ok {
		return e.sig.String()
	}
	return "interrupted"
}

// interrupted is the error of a run stopped by ctx's signal: what
// happened and how to continue (e.g. "run the same command to continue
// runs/zero").
func interrupted(ctx context.Context, how string) error {
	return fmt.Errorf("interrupted (%s); %s", signalName(ctx), how)
}

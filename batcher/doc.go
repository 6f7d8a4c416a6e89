// Package batcher merges single-position evaluation requests from many
// search goroutines into batches for a nets.Backend (lc0's multiplexing
// backend, KataGo's NN evaluator server).
//
// Producers write their encoded input row straight into a slot of a ring
// the batcher owns (no copy); consumer goroutines take the ready slots as
// one contiguous batch, run the backend on the ring memory in place and
// hand each producer its own policy and value row. The ring is a bounded
// lock-free multi-producer queue (Vyukov style: slots claimed by CAS on a
// tail counter, per-slot sequence numbers publish them), so submitting a
// request takes no lock, starts no goroutine and allocates nothing.
//
// Two ways to wait for results:
//
//   - Evaluate blocks the calling goroutine (one request per goroutine).
//   - Reserve/Commit (or Submit) with a Client is asynchronous: one worker
//     goroutine keeps many leaves of many trees in flight, collects
//     finished requests with Client.Wait or Client.Poll, reads them with
//     Result and frees the slot with Release.
//
// A lone search (a Client with one or two requests in flight: an agent
// in an arena, the web UI's analysis) gains nothing from the hand-off to
// a consumer on another core and pays two goroutine wake-ups for it, so
// with one consumer and no wait for fuller batches its Wait runs the
// ready rows itself, on its own goroutine, whenever the consumer is idle;
// the consumer and such clients never run the backend at once, so a
// backend that is not safe for concurrent use stays so.
//
// It is for feeding one backend from many searches. It is not a network
// cache (see nets.Cache) and does not reorder or deduplicate positions.
package batcher

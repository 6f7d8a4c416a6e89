package pyapi

import (
	"encoding/json"
	"sort"
	"sync"
	"time"
)

// object is an open library object.
type object interface {
	// close releases the object's goroutines and engines. It is called
	// once, by Library.Close.
	close() error
	// info describes the object for Python (shapes, sizes).
	info() any
}

// stepper is an object that Step advances (an environment).
type stepper interface{ step() error }

// pump is an object that runs a Python evaluator by inverted control
// (session.go).
type pump interface {
	wait(timeout time.Duration) (int64, error)
	submit() error
	cancel()
}

// exchanger is an object that reads or writes Python's arrays on request
// (results, self-play data, network evaluation).
type exchanger interface {
	exchange(op string, args json.RawMessage, bufs [][]byte) (any, error)
}

// Library is the table of open objects behind the Python package. It is
// safe for concurrent use; each object is used by one caller at a time
// (the Python package serialises calls per object).
type Library struct {
	mu   sync.Mutex
	next int64
	objs map[int64]object
}

// NewLibrary returns an empty library.
func NewLibrary() *Library { return &Library{objs: map[int64]object{}} }

// Live is the number of open handles.
func (l *Library) Live() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.objs)
}

func (l *Library) add(o object) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	l.objs[l.next] = o
	return l.next
}

func (l *Library) get(h int64) (object, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.objs[h]
	if !ok {
		return nil, runtimeErrorf("handle %d is closed or was never opened: the object was close()d; create a new one", h)
	}
	return o, nil
}

// Close closes handle h. Closing a closed handle is an error (the Python
// package never does: its close() is idempotent).
func (l *Library) Close(h int64) error {
	l.mu.Lock()
	o, ok := l.objs[h]
	delete(l.objs, h)
	l.mu.Unlock()
	if !ok {
		return runtimeErrorf("handle %d is already closed", h)
	}
	return asError(o.close(), "RuntimeError")
}

// CloseAll closes every open handle (interpreter exit).
func (l *Library) CloseAll() {
	l.mu.Lock()
	hs := make([]int64, 0, len(l.objs))
	for h := range l.objs {
		hs = append(hs, h)
	}
	l.mu.Unlock()
	sort.Slice(hs, func(i, j int) bool { return hs[i] < hs[j] })
	for _, h := range hs {
		_ = l.Close(h)
	}
}

// request is the JSON of Call and Open.
type request struct {
	Method string          `json:"method"`
	Handle int64           `json:"handle"`
	Args   json.RawMessage `json:"args"`
}

func decode(args json.RawMessage, v any) error {
	if len(args) == 0 {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return valueErrorf("bad arguments: %v", err)
	}
	return nil
}

// Call runs a control call: req is {"method", "handle", "args"} as JSON
// and the reply is JSON. Methods: games, agents, game_info, live, close,
// cancel, info, reset.
func (l *Library) Call(req []byte) ([]byte, error) {
	var r request
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, valueErrorf("malformed request: %v", err)
	}
	out, err := l.call(r)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, runtimeErrorf("encoding the reply of %s: %v", r.Method, err)
	}
	return b, nil
}

func (l *Library) call(r request) (any, error) {
	switch r.Method {
	case "games":
		return Games()
	case "agents":
		var a struct {
			Game string `json:"game"`
		}
		if err := decode(r.Args, &a); err != nil {
			return nil, err
		}
		return Agents(a.Game)
	case "game_info":
		var a struct {
			Game string `json:"game"`
		}
		if err := decode(r.Args, &a); err != nil {
			return nil, err
		}
		g, err := newGame(a.Game)
		if err != nil {
			return nil, err
		}
		return gameInfo(g), nil
	case "live":
		return map[string]int{"handles": l.Live()}, nil
	case "close":
		return nil, l.Close(r.Handle)
	}
	o, err := l.get(r.Handle)
	if err != nil {
		return nil, err
	}
	switch r.Method {
	case "info":
		return o.info(), nil
	case "cancel":
		p, ok := o.(pump)
		if !ok {
			return nil, valueErrorf("handle %d (%T) runs no evaluator", r.Handle, o)
		}
		p.cancel()
		return nil, nil
	case "reset":
		e, ok := o.(*VecEnv)
		if !ok {
			return nil, valueErrorf("handle %d is not an environment", r.Handle)
		}
		var a struct {
			Seed *uint64 `json:"seed"`
		}
		if err := decode(r.Args, &a); err != nil {
			return nil, err
		}
		return nil, e.reset(a.Seed)
	}
	return nil, valueErrorf("unknown method %q", r.Method)
}

// Open creates an object from req ({"method": kind, "args"}) on Python's
// buffers bufs (in the order the kind documents) and returns its handle
// and its info as JSON. Kinds: env (env.go), search (search.go),
// selfplay (selfplay.go), net (net.go).
func (l *Library) Open(req []byte, bufs [][]byte) (int64, []byte, error) {
	var r request
	if err := json.Unmarshal(req, &r); err != nil {
		return 0, nil, valueErrorf("malformed request: %v", err)
	}
	var o object
	var err error
	switch r.Method {
	case "env":
		o, err = openEnv(r.Args, bufs)
	case "search":
		o, err = l.openSearch(r.Args, bufs)
	case "selfplay":
		o, err = openSelfPlay(r.Args, bufs)
	case "net":
		o, err = openNet(r.Args, bufs)
	default:
		err = valueErrorf("unknown kind %q (want env, search, selfplay or net)", r.Method)
	}
	if err != nil {
		return 0, nil, asError(err, "ValueError")
	}
	info, err := json.Marshal(o.info())
	if err != nil {
		o.close()
		return 0, nil, runtimeErrorf("encoding the info of a new %s: %v", r.Method, err)
	}
	return l.add(o), info, nil
}

// Step advances environment h with the actions in its actions buffer.
func (l *Library) Step(h int64) error {
	o, err := l.get(h)
	if err != nil {
		return err
	}
	s, ok := o.(stepper)
	if !ok {
		return valueErrorf("handle %d is not an environment", h)
	}
	return asError(s.step(), "RuntimeError")
}

// Wait events of an evaluator session (a positive value is a batch of
// that many rows to evaluate).
const (
	WaitTimeout = 0  // nothing yet: call Wait again
	WaitDone    = -3 // the run is over (results can be read)
	WaitData    = -2 // self-play data is staged (exchange "take")
)

// Wait blocks up to timeout for the next event of session h: a batch to
// evaluate (its size), WaitData, WaitDone or WaitTimeout.
func (l *Library) Wait(h int64, timeout time.Duration) (int64, error) {
	o, err := l.get(h)
	if err != nil {
		return 0, err
	}
	p, ok := o.(pump)
	if !ok {
		return 0, valueErrorf("handle %d runs no evaluator", h)
	}
	n, err := p.wait(timeout)
	return n, asError(err, "RuntimeError")
}

// Submit hands the evaluator's outputs, written into session h's logits
// and values buffers, back to the search.
func (l *Library) Submit(h int64) error {
	o, err := l.get(h)
	if err != nil {
		return err
	}
	p, ok := o.(pump)
	if !ok {
		return valueErrorf("handle %d runs no evaluator", h)
	}
	return asError(p.submit(), "ValueError")
}

// Exchange runs op on object h with Python's buffers bufs (which it may
// read or write during the call) and returns a JSON reply.
func (l *Library) Exchange(h int64, op string, args []byte, bufs [][]byte) ([]byte, error) {
	o, err := l.get(h)
	if err != nil {
		return nil, err
	}
	x, ok := o.(exchanger)
	if !ok {
		return nil, valueErrorf("handle %d has no operation %q", h, op)
	}
	out, err := x.exchange(op, args, bufs)
	if err != nil {
		return nil, asError(err, "ValueError")
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, runtimeErrorf("encoding the reply of %s: %v", op, err)
	}
	return b, nil
}

// Recovered turns a recovered panic value into the error Python raises:
// the shim's exported functions recover every panic with it, so a bug
// on the Go side is an exception, never a dead interpreter.
func Recovered(v any) error {
	return runtimeErrorf("internal error in Canopy (please report it): %v", v)
}

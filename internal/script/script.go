// Package script runs a container's server-side JavaScript (stored
// procedures and triggers) in goja sandboxes, with the Cosmos DB
// server-side API (getContext(), the collection's document operations,
// the __ query API) and bounds on time, memory and operations. It knows
// nothing of storage: the caller hands each run a Collection, which
// performs the operations in the caller's transaction.
package script

import (
	_ "embed"
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/ebbdb/ebb/internal/clock"
)

// Collection is what a script's operations act on: one logical partition
// of one container, in one transaction. Links are as the script wrote
// them; the Collection resolves and checks them. Every method reports a
// failure the script caused as an *OpError.
type Collection interface {
	SelfLink() string
	AltLink() string
	Create(link string, doc []byte, autoID bool) ([]byte, error)
	Upsert(link string, doc []byte, autoID bool, ifMatch string) ([]byte, error)
	Replace(docLink string, doc []byte, ifMatch string) ([]byte, error)
	Delete(docLink string, ifMatch string) error
	Read(docLink string, ifNoneMatch string) ([]byte, error)
	// Query runs one page of query (a query body; nil reads every
	// document) and returns its rows as a JSON array.
	Query(link string, query []byte, pageSize int, continuation string) (rows []byte, next string, err error)
	// SizeInMB and MaxSizeInMB are the collection's size and quota, as
	// the service reports them to callbacks.
	SizeInMB() int
	MaxSizeInMB() int
}

// OpError is a failed operation: its status code and message, as the
// script's callback sees them (err.number and the {"Errors"} body).
type OpError struct {
	Status  int
	Message string
}

func (e *OpError) Error() string { return e.Message }

// Error is a run that failed: the status the client gets, the substatus
// (a thrown Error's number, 0 for none) and the message.
type Error struct {
	Status, SubStatus int
	Message           string
}

func (e *Error) Error() string { return e.Message }

// Budgets bound one run.
type Budgets struct {
	// Time is the longest a run may take (the service allows about 5
	// seconds); a run over it is stopped and answered 408.
	Time time.Duration
	// Operations is how many collection operations a run may start;
	// past it, operations are not accepted (they return false).
	Operations int
	// Memory is how far the Go heap may grow while a run is in progress
	// before the run is stopped.
	Memory int64
}

// DefaultBudgets are the service's time bound and Ebb's others.
var DefaultBudgets = Budgets{Time: 5 * time.Second, Operations: 10000, Memory: 256 << 20}

// acceptFraction is how much of its time a run may use before its
// operations stop being accepted, so that a script written for the
// service's bounded execution can return with a continuation first.
const acceptFraction = 0.8

const (
	// maxString bounds one string-building call (repeat, padStart).
	maxString = 16 << 20
	// maxResponseBody is the largest response body a script may set.
	maxResponseBody = 2 << 20
	// maxLog bounds what console.log keeps for the response header.
	maxLog = 8 << 10
	// maxCallStack bounds recursion.
	maxCallStack = 4096
	// memoryPoll is how often a run's memory is checked.
	memoryPoll = 10 * time.Millisecond
)

// Runner runs scripts. It is safe for concurrent use.
type Runner struct {
	budgets Budgets
	// clock measures the budgets: real time, never a manual clock.
	clock    clock.Clock
	programs *programCache
	pool     *pool
}

// NewRunner returns a Runner with budgets b (zero fields: the default)
// measured on c.
func NewRunner(b Budgets, c clock.Clock) *Runner {
	if b.Time <= 0 {
		b.Time = DefaultBudgets.Time
	}
	if b.Operations <= 0 {
		b.Operations = DefaultBudgets.Operations
	}
	if b.Memory <= 0 {
		b.Memory = DefaultBudgets.Memory
	}
	return &Runner{budgets: b, clock: c, programs: newProgramCache(256), pool: newPool(maxIdleRuntimes)}
}

// Budgets returns the runner's budgets.
func (r *Runner) Budgets() Budgets { return r.budgets }

// Call is one run of a script.
type Call struct {
	// Kind names the script in messages ("stored procedure").
	Kind string
	// ID and Version (its _etag) identify the compiled program.
	ID, Version, Source string
	// Args is the JSON array of the function's arguments.
	Args []byte
	// RequestBody is what getRequest().getBody() returns (a trigger's
	// document), as JSON; nil for none. OperationType is
	// getRequest().getOperationType().
	RequestBody   []byte
	OperationType string
	// ResponseBody is what getResponse().getBody() returns at first (a
	// post-trigger's stored document), as JSON; nil for none.
	ResponseBody []byte
	Collection   Collection
	// Scope names what the script belongs to (its container), so that
	// runtimes are reused only for the same script.
	Scope string
}

// Result is what a run produced.
type Result struct {
	// Body is the response body as JSON (nil when there is none, or it
	// is the one the call began with, unchanged).
	Body []byte
	// RequestBody is the request body the script set (setBody); nil
	// when it set none.
	RequestBody []byte
	// Log is what the script wrote with console.log.
	Log string
	// Operations is how many collection operations it ran.
	Operations int
}

var (
	//go:embed sandbox.js
	sandboxSource string
	//go:embed prelude.js
	preludeSource string
)

var (
	sandboxProgram = sync.OnceValue(func() *goja.Program { return goja.MustCompile("sandbox.js", sandboxSource, true) })
	preludeProgram = sync.OnceValue(func() *goja.Program { return goja.MustCompile("prelude.js", preludeSource, true) })
)

// sandbox is a runtime prepared for a container's JavaScript
// (sandbox.js), with what reports a value the script threw.
type sandbox struct {
	vm       *goja.Runtime
	describe goja.Callable
	// safeString is sandbox.js's, for the prelude.
	safeString goja.Value
}

func newSandbox() (*sandbox, error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStack)
	v, err := vm.RunProgram(sandboxProgram())
	if err != nil {
		return nil, fmt.Errorf("script: sandbox: %w", err)
	}
	setup, ok := goja.AssertFunction(v)
	if !ok {
		return nil, errors.New("script: sandbox.js is not a function")
	}
	o, err := setup(goja.Undefined(), vm.ToValue(maxString))
	if err != nil {
		return nil, fmt.Errorf("script: sandbox: %w", err)
	}
	api := o.ToObject(vm)
	describe, ok := goja.AssertFunction(api.Get("describe"))
	if !ok {
		return nil, errors.New("script: sandbox.js has no describe")
	}
	return &sandbox{vm: vm, describe: describe, safeString: api.Get("safeString")}, nil
}

// Compile checks that source is one JavaScript function that compiles,
// as the service takes a script's body: "function (…) {…}", named or
// not, or an arrow function, with nothing else but comments and
// semicolons around it. Its error names the line and column as the
// source has them.
func Compile(id, source string) error {
	_, err := compile(id, source)
	return err
}

// mainPrefix makes the script's function the value of a variable: so an
// anonymous function is valid, and one statement is all there may be.
// It adds to the first line only, so the lines keep their numbers.
const (
	mainName   = "__ebbScriptMain"
	mainPrefix = "var " + mainName + " = "
)

func compile(id, source string) (*goja.Program, error) {
	text := mainPrefix + source + "\n;" + mainName
	prog, err := parser.ParseFile(nil, id, text, 0)
	if err != nil {
		return nil, syntaxError(err, source)
	}
	if err := checkOneFunction(prog); err != nil {
		return nil, err
	}
	p, err := goja.Compile(id, text, false)
	if err != nil {
		return nil, syntaxError(err, source)
	}
	return p, nil
}

// checkOneFunction checks that the program compile made of a body is
// the variable holding one function and then the variable, and nothing
// else: no code that runs outside the function.
func checkOneFunction(prog *ast.Program) error {
	notOne := errors.New("the body must be one JavaScript function (function (…) {…}), with no statement outside it")
	var stmts []ast.Statement
	for _, st := range prog.Body {
		if _, empty := st.(*ast.EmptyStatement); !empty {
			stmts = append(stmts, st)
		}
	}
	if len(stmts) != 2 {
		return notOne
	}
	v, ok := stmts[0].(*ast.VariableStatement)
	if !ok || len(v.List) != 1 {
		return notOne
	}
	switch v.List[0].Initializer.(type) {
	case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
		return nil
	}
	return notOne
}

// syntaxError is the parser's first error at its position in source:
// the first line is len(mainPrefix) columns to the right in what was
// parsed, and the line after the last is compile's.
func syntaxError(err error, source string) error {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return err
	}
	e := list[0]
	line, col := e.Position.Line, e.Position.Column
	if line == 1 {
		col = max(col-len(mainPrefix), 1)
	}
	if lines := strings.Count(source, "\n") + 1; line > lines {
		return fmt.Errorf("%s (at the end of the body)", e.Message)
	}
	return fmt.Errorf("%s (line %d, column %d)", e.Message, line, col)
}

// errTimeout, errMemory and errCanceled are the reasons a run is
// interrupted.
var (
	errTimeout  = errors.New("time budget")
	errMemory   = errors.New("memory budget")
	errCanceled = errors.New("canceled")
)

// Run runs call's function to its end, callbacks included. Done, if not
// nil, is closed when the caller no longer wants the result (the
// request's context).
func (r *Runner) Run(done <-chan struct{}, call Call) (Result, error) {
	rt, err := r.runtime(call)
	if err != nil {
		return Result{}, err
	}
	h := &host{vm: rt.sb.vm, call: call, r: r, start: r.clock.Elapsed()}
	res, err := rt.run(done, h)
	if err != nil {
		// A failed run may have left the runtime anywhere: drop it.
		return Result{}, err
	}
	r.pool.put(rt)
	return res, nil
}

// run is one call on rt, with h as its host.
func (rt *runtime) run(done <-chan struct{}, h *host) (Result, error) {
	call, r, vm := h.call, h.r, rt.sb.vm
	rt.cur = h
	defer func() { rt.cur = nil }()
	stop := r.watch(vm, done)
	res, err := rt.call(h)
	stop()
	vm.ClearInterrupt() // one that fired as the run ended
	if err != nil {
		return Result{}, rt.sb.failure(call.Kind, call.ID, r.budgets, err)
	}
	if len(res.Body) > maxResponseBody {
		return Result{}, &Error{Status: 413, Message: fmt.Sprintf("The %s's response body is %d bytes; the most it may be is %d.", call.Kind, len(res.Body), maxResponseBody)}
	}
	return res, nil
}

// call runs the script's function with the call's arguments and bodies.
func (rt *runtime) call(h *host) (Result, error) {
	call, c := h.call, rt.control
	u := goja.Undefined()
	vm := rt.sb.vm
	if _, err := c.begin(u, vm.ToValue(string(call.RequestBody)), vm.ToValue(string(call.ResponseBody)), vm.ToValue(call.OperationType)); err != nil {
		return Result{}, err
	}
	if _, err := c.run(u, rt.fn, vm.ToValue(string(call.Args))); err != nil {
		return Result{}, err
	}
	res := Result{Log: h.log.String(), Operations: h.ops}
	body, err := c.responseJSON(u)
	if err != nil {
		return Result{}, err
	}
	if s := body.String(); s != "" {
		res.Body = []byte(s)
	}
	req, err := c.requestJSON(u)
	if err != nil {
		return Result{}, err
	}
	if s := req.String(); s != "" {
		res.RequestBody = []byte(s)
	}
	return res, nil
}

// watch interrupts vm when its time or memory budget runs out or done
// closes, until the returned stop is called.
func (r *Runner) watch(vm *goja.Runtime, done <-chan struct{}) (stop func()) {
	quit := make(chan struct{})
	finished := make(chan struct{})
	deadline, cancel := r.clock.After(r.budgets.Time)
	base := heapBytes()
	go func() {
		defer close(finished)
		defer cancel()
		for {
			poll, cancelPoll := r.clock.After(memoryPoll)
			select {
			case <-quit:
				cancelPoll()
				return
			case <-deadline:
				cancelPoll()
				vm.Interrupt(errTimeout)
				return
			case <-done:
				cancelPoll()
				vm.Interrupt(errCanceled)
				return
			case <-poll:
				if heapBytes()-base > r.budgets.Memory {
					vm.Interrupt(errMemory)
					return
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

// heapBytes is the Go heap's live and not yet swept objects.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// control is the prelude's control object.
type control struct {
	begin, run, responseJSON, requestJSON goja.Callable
}

// failure turns what stopped the run of a script (kind and id name it)
// into the client's error.
func (sb *sandbox) failure(kind, id string, budgets Budgets, err error) error {
	// A stored procedure's or trigger's writes are rolled back; a
	// function writes nothing.
	rolledBack := "; nothing it wrote was committed"
	if kind == functionKind {
		rolledBack = ""
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if f, ok := ie.Value().(*hostFailure); ok {
			return f.err
		}
		switch ie.Value() {
		case errTimeout:
			msg := fmt.Sprintf("The %s '%s' ran past its time budget of %v and was stopped%s.", kind, id, budgets.Time, rolledBack)
			if kind != functionKind {
				msg += " Return earlier (operations return false when the budget is nearly spent) and continue in another call."
			}
			return &Error{Status: 408, Message: msg}
		case errMemory:
			return &Error{Status: 400, Message: fmt.Sprintf("The %s '%s' used more than its memory budget of %d MB and was stopped%s.", kind, id, budgets.Memory>>20, rolledBack)}
		case errCanceled:
			return &Error{Status: 408, Message: fmt.Sprintf("The %s '%s' was stopped because the request was canceled.", kind, id)}
		}
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		// The service's engine (Chakra) names it so; goja's error cannot
		// be caught by the script, and neither can Chakra's.
		return &Error{Status: 400, Message: "Encountered exception while executing function. Exception = Error: Out of stack space"}
	}
	var ex *goja.Exception
	if !errors.As(err, &ex) {
		return &Error{Status: 400, Message: fmt.Sprintf("Encountered exception while executing function. Exception = %v", err)}
	}
	text, stack, number := ex.Error(), "", 0
	if d, derr := sb.describe(goja.Undefined(), ex.Value()); derr == nil {
		if o, ok := d.Export().(map[string]any); ok {
			text, _ = o["text"].(string)
			stack, _ = o["stack"].(string)
			number = toInt(o["number"])
		}
	}
	msg := "Encountered exception while executing function. Exception = " + text
	if stack = scriptFrames(stack); stack != "" {
		msg += "\r\nStack trace: " + stack
	}
	return &Error{Status: 400, SubStatus: number, Message: msg}
}

// scriptFrames is a stack trace without the frames of the prelude and of
// native code, which are Ebb's, not the script's.
func scriptFrames(stack string) string {
	lines := strings.Split(stack, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if strings.Contains(l, "prelude.js:") || strings.Contains(l, "sandbox.js:") || strings.Contains(l, "(native)") || strings.TrimSpace(l) == "" {
			continue
		}
		kept = append(kept, l)
	}
	if len(kept) <= 1 {
		return "" // only the message line
	}
	return strings.Join(kept, "\n")
}

func toInt(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// hostFailure is an error the run must end with as it is (a storage
// failure). It interrupts the script, which cannot catch it.
type hostFailure struct{ err error }

func (f *hostFailure) Error() string { return f.err.Error() }

// host is the Go side of one run: what the prelude's operations act on.
type host struct {
	vm    *goja.Runtime
	call  Call
	r     *Runner
	start time.Duration
	ops   int
	log   strings.Builder
}

// runtime is a sandbox with the prelude installed and one script's
// function evaluated in it, which serves one call at a time (cur) and
// then goes back to the runner's pool for the next call of the same
// script.
type runtime struct {
	key     string
	sb      *sandbox
	control control
	fn      goja.Value
	cur     *host
}

// runtime returns a runtime for call's script: an idle one from the
// pool, or a new one.
func (r *Runner) runtime(call Call) (*runtime, error) {
	key := call.Scope + "\x00" + call.Kind + "\x00" + call.ID + "\x00" + call.Version
	if rt := r.pool.get(key); rt != nil {
		return rt, nil
	}
	prog, err := r.programs.get(call.ID, call.Version, call.Source)
	if err != nil {
		return nil, &Error{Status: 400, Message: fmt.Sprintf("The %s '%s' does not compile: %v", call.Kind, call.ID, err)}
	}
	sb, err := newSandbox()
	if err != nil {
		return nil, err
	}
	rt := &runtime{key: key, sb: sb}
	if err := rt.install(); err != nil {
		return nil, err
	}
	// The program only defines the function: nothing of the script runs.
	if rt.fn, err = sb.vm.RunProgram(prog); err != nil {
		return nil, sb.failure(call.Kind, call.ID, r.budgets, err)
	}
	return rt, nil
}

// install runs the prelude with the host functions, which act on the
// call in progress (rt.cur).
func (rt *runtime) install() error {
	vm := rt.sb.vm
	v, err := vm.RunProgram(preludeProgram())
	if err != nil {
		return fmt.Errorf("script: prelude: %w", err)
	}
	setup, ok := goja.AssertFunction(v)
	if !ok {
		return errors.New("script: prelude is not a function")
	}
	coll := func() Collection { return rt.cur.call.Collection }
	o := vm.NewObject()
	for name, fn := range map[string]any{
		"accept":      func() bool { return rt.cur.accept() },
		"log":         func(s string) { rt.cur.writeLog(s) },
		"selfLink":    func() string { return coll().SelfLink() },
		"altLink":     func() string { return coll().AltLink() },
		"sizeInMB":    func() int { return coll().SizeInMB() },
		"maxSizeInMB": func() int { return coll().MaxSizeInMB() },
		"create": func(link, doc string, autoID bool) []any {
			return rt.cur.result(coll().Create(link, []byte(doc), !autoID))
		},
		"upsert": func(link, doc string, noAutoID bool, ifMatch string) []any {
			return rt.cur.result(coll().Upsert(link, []byte(doc), !noAutoID, ifMatch))
		},
		"replace": func(link, doc, ifMatch string) []any {
			return rt.cur.result(coll().Replace(link, []byte(doc), ifMatch))
		},
		"remove": func(link, ifMatch string) []any {
			return rt.cur.result(nil, coll().Delete(link, ifMatch))
		},
		"read": func(link, ifNoneMatch string) []any {
			return rt.cur.result(coll().Read(link, ifNoneMatch))
		},
		"query": func(link, query string, pageSize int, continuation string) []any {
			var q []byte
			if query != "" {
				q = []byte(query)
			}
			rows, next, err := coll().Query(link, q, pageSize, continuation)
			if err != nil {
				return rt.cur.result(nil, err)
			}
			return []any{200, string(rows), next}
		},
		"maxResponseBody": maxResponseBody,
	} {
		if err := o.Set(name, fn); err != nil {
			return err
		}
	}
	cv, err := setup(goja.Undefined(), o, rt.sb.safeString)
	if err != nil {
		return fmt.Errorf("script: prelude: %w", err)
	}
	co := cv.ToObject(vm)
	c := &rt.control
	for name, f := range map[string]*goja.Callable{"begin": &c.begin, "run": &c.run, "responseJSON": &c.responseJSON, "requestJSON": &c.requestJSON} {
		if *f, ok = goja.AssertFunction(co.Get(name)); !ok {
			return fmt.Errorf("script: prelude has no %s", name)
		}
	}
	return nil
}

// accept counts an operation and reports whether it may run: the
// service stops accepting a script's operations as it nears its bounds.
func (h *host) accept() bool {
	if h.ops >= h.r.budgets.Operations {
		return false
	}
	if h.r.clock.Elapsed()-h.start > time.Duration(acceptFraction*float64(h.r.budgets.Time)) {
		return false
	}
	h.ops++
	return true
}

func (h *host) writeLog(s string) {
	if h.log.Len()+len(s) > maxLog {
		return
	}
	if h.log.Len() > 0 {
		h.log.WriteString("\n")
	}
	h.log.WriteString(s)
}

// result is an operation's outcome as the prelude takes it: [status,
// body]. An error that is not the script's fault stops the run.
func (h *host) result(body []byte, err error) []any {
	if err == nil {
		return []any{200, string(body)}
	}
	var oe *OpError
	if errors.As(err, &oe) {
		return []any{oe.Status, oe.Message}
	}
	h.vm.Interrupt(&hostFailure{err: err})
	return []any{500, err.Error()}
}

// programCache keeps compiled programs by script id and version.
type programCache struct {
	mu    sync.Mutex
	max   int
	progs map[string]*goja.Program
}

func newProgramCache(max int) *programCache {
	return &programCache{max: max, progs: make(map[string]*goja.Program)}
}

func (c *programCache) get(id, version, source string) (*goja.Program, error) {
	key := id + "\x00" + version
	c.mu.Lock()
	p, ok := c.progs[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := compile(id, source)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.progs) >= c.max {
		for k := range c.progs {
			delete(c.progs, k) // any one: the cache only saves compiling
			break
		}
	}
	c.progs[key] = p
	return p, nil
}

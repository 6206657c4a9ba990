package script

import (
	"fmt"
	"math"

	"github.com/dop251/goja"

	"github.com/ebbdb/ebb/internal/query"
)

// functionKind names a user-defined function in messages.
const functionKind = "user-defined function"

// maxValueDepth bounds the nesting of a function's result (a cyclic
// object has no bound), and maxArrayLength its arrays (a length can be
// set far beyond the elements an array holds).
const (
	maxValueDepth  = 128
	maxArrayLength = 1 << 20
)

// FunctionDef is a user-defined function: its id, version (_etag) and
// JavaScript.
type FunctionDef struct {
	ID, Version, Source string
}

// Functions runs the user-defined functions of one query page: a
// query.UDFs. It makes its runtime at the first call, compiles each
// function once (the runner caches the program by version), and keeps
// both until Close; the time and memory budgets bound all its calls
// together. It is used on one goroutine.
type Functions struct {
	r    *Runner
	done <-chan struct{}
	defs map[string]FunctionDef
	sb   *sandbox
	fns  map[string]goja.Callable
	stop func()
}

// Functions returns the functions defs for one page; done, if not nil,
// closes when the page's request is gone.
func (r *Runner) Functions(done <-chan struct{}, defs []FunctionDef) *Functions {
	m := make(map[string]FunctionDef, len(defs))
	for _, d := range defs {
		m[d.ID] = d
	}
	return &Functions{r: r, done: done, defs: m, fns: map[string]goja.Callable{}}
}

// Close releases the runtime.
func (f *Functions) Close() {
	if f.stop != nil {
		f.stop()
	}
}

// Call implements query.UDFs.
func (f *Functions) Call(name string, args []query.Value) (query.Value, error) {
	fn, err := f.function(name)
	if err != nil {
		return query.Value{}, err
	}
	vm := f.sb.vm
	in := make([]goja.Value, len(args))
	for i, a := range args {
		in[i] = toJS(vm, a)
	}
	out, err := fn(goja.Undefined(), in...)
	if err != nil {
		return query.Value{}, f.sb.failure(functionKind, name, f.r.budgets, err)
	}
	v, err := fromJS(out, 0)
	if err != nil {
		return query.Value{}, &Error{Status: 400, Message: fmt.Sprintf("The result of the user-defined function '%s' %v.", name, err)}
	}
	return v, nil
}

// function returns the compiled function name, making the runtime first.
func (f *Functions) function(name string) (goja.Callable, error) {
	if fn, ok := f.fns[name]; ok {
		return fn, nil
	}
	def, ok := f.defs[name]
	if !ok {
		return nil, &Error{Status: 400, Message: fmt.Sprintf("The user-defined function '%s' does not exist.", name)}
	}
	if f.sb == nil {
		sb, err := newSandbox()
		if err != nil {
			return nil, err
		}
		f.sb, f.stop = sb, f.r.watch(sb.vm, f.done)
	}
	prog, err := f.r.programs.get(def.ID, def.Version, def.Source)
	if err != nil {
		return nil, &Error{Status: 400, Message: fmt.Sprintf("The %s '%s' does not compile: %v", functionKind, name, err)}
	}
	v, err := f.sb.vm.RunProgram(prog)
	if err != nil {
		return nil, f.sb.failure(functionKind, name, f.r.budgets, err)
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, &Error{Status: 400, Message: fmt.Sprintf("The body of the %s '%s' is not a function.", functionKind, name)}
	}
	f.fns[name] = fn
	return fn, nil
}

// toJS is a query value as JavaScript sees it: undefined stays
// undefined, objects keep their members' order.
func toJS(vm *goja.Runtime, v query.Value) goja.Value {
	switch v.Kind() {
	case query.Null:
		return goja.Null()
	case query.Bool:
		return vm.ToValue(v.Bool())
	case query.Number:
		return vm.ToValue(v.Number())
	case query.String:
		s, _ := v.AsString()
		return vm.ToValue(s)
	case query.Array:
		elems := v.Elems()
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i] = toJS(vm, e)
		}
		return vm.NewArray(out...)
	case query.Object:
		o := vm.NewObject()
		for _, m := range v.Members() {
			_ = o.Set(m.Name, toJS(vm, m.Value))
		}
		return o
	}
	return goja.Undefined()
}

// fromJS is a function's result as a query value, as JSON.stringify
// would write it: functions and undefined members are left out, an
// undefined array element is null, a number that is not finite is
// undefined.
func fromJS(v goja.Value, depth int) (query.Value, error) {
	if depth > maxValueDepth {
		return query.Value{}, fmt.Errorf("nests deeper than %d levels (or refers to itself)", maxValueDepth)
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		return query.UndefinedValue(), nil
	case goja.IsNull(v):
		return query.NullValue(), nil
	}
	o, isObject := v.(*goja.Object)
	if !isObject {
		switch x := v.Export().(type) {
		case bool:
			return query.BoolValue(x), nil
		case int64:
			return query.NumberValue(float64(x)), nil
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return query.UndefinedValue(), nil
			}
			return query.NumberValue(x), nil
		case string:
			return query.StringValue(x), nil
		}
		return query.UndefinedValue(), nil // a symbol, a big integer
	}
	if _, isFunc := goja.AssertFunction(o); isFunc {
		return query.UndefinedValue(), nil
	}
	if o.ClassName() == "Array" {
		n := o.Get("length").ToInteger()
		if n > maxArrayLength {
			return query.Value{}, fmt.Errorf("is an array of %d elements; the most Ebb takes is %d", n, maxArrayLength)
		}
		elems := make([]query.Value, n)
		for i := range elems {
			e, err := fromJS(o.Get(fmt.Sprint(i)), depth+1)
			if err != nil {
				return query.Value{}, err
			}
			if !e.IsDefined() {
				e = query.NullValue()
			}
			elems[i] = e
		}
		return query.NewArray(elems...), nil
	}
	var members []query.Member
	for _, k := range o.Keys() {
		e, err := fromJS(o.Get(k), depth+1)
		if err != nil {
			return query.Value{}, err
		}
		if e.IsDefined() {
			members = append(members, query.Member{Name: k, Value: e})
		}
	}
	return query.NewObject(members...), nil
}

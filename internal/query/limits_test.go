package query

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// inList is "SELECT * FROM c WHERE c.v IN (0, 1, …)" with n items.
func inList(n int) string {
	var b strings.Builder
	b.WriteString("SELECT * FROM c WHERE c.v IN (")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(")")
	return b.String()
}

// joins is a query with n JOIN clauses, half of them in a subquery.
func joins(n int) string {
	var outer, inner strings.Builder
	outer.WriteString("SELECT VALUE c.id FROM c")
	inner.WriteString("SELECT VALUE 1 FROM x IN c.arr")
	for i := range n {
		j := " JOIN j" + strconv.Itoa(i) + " IN c.arr"
		if i%2 == 0 {
			outer.WriteString(j)
		} else {
			inner.WriteString(j)
		}
	}
	return outer.String() + " WHERE EXISTS(" + inner.String() + ")"
}

// padded is a valid query of exactly n characters, n of them at least
// the few the query needs; pad is the character it is padded with.
func padded(n int, pad string) string {
	const q = "SELECT * FROM c WHERE c.s = '"
	k := n - len(q) - 1
	return q + strings.Repeat(pad, k) + "'"
}

// TestLimits pins the service's limits: at each limit the query is
// accepted, one beyond it is refused before it runs, with the service's
// wording.
func TestLimits(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		wantErr string // "" for accepted
	}{
		{"text at the limit", padded(MaxQueryLength, "x"), ""},
		{"text over the limit", padded(MaxQueryLength+1, "x"), "The SQL query text exceeded the maximum limit of 524288 characters."},
		// é is two bytes and one character: the limit counts characters.
		{"multibyte text at the limit", padded(MaxQueryLength, "é"), ""},
		{"joins at the limit", joins(MaxJoins), ""},
		{"joins over the limit", joins(MaxJoins + 1), "The SQL query exceeded the maximum number of joins. The allowed limit is 10."},
		{"IN list at the limit", inList(MaxInItems), ""},
		{"IN list over the limit", inList(MaxInItems + 1), "The SQL query exceeded the maximum number of items in an IN expression. The allowed limit is 16000; this one has 16001."},
		{"IN list far over the limit", inList(100_000), "The SQL query text exceeded the maximum limit of 524288 characters."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.text)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v, want success", err)
				}
				return
			}
			var qe *Error
			if !errors.As(err, &qe) || qe.Kind != LimitError || err.Error() != tt.wantErr {
				t.Fatalf("Parse = %v, want the limit error %q", err, tt.wantErr)
			}
		})
	}
}

// TestFilterLimits: patch conditions are held to the same limits.
func TestFilterLimits(t *testing.T) {
	if _, err := ParseFilter("FROM c WHERE c.s = '" + strings.Repeat("x", MaxQueryLength) + "'"); err == nil {
		t.Error("ParseFilter accepted a condition longer than the query limit")
	}
	if _, err := ParseFilter(strings.Replace(inList(MaxInItems+1), "SELECT * FROM c", "FROM c", 1)); err == nil {
		t.Error("ParseFilter accepted an IN list over the limit")
	}
}

func TestCheckParameterCount(t *testing.T) {
	if err := CheckParameterCount(MaxParameters); err != nil {
		t.Errorf("CheckParameterCount(%d) = %v, want nil", MaxParameters, err)
	}
	err := CheckParameterCount(MaxParameters + 1)
	want := "The query has 32001 parameters, more than the 32000 allowed."
	if err == nil || err.Error() != want {
		t.Errorf("CheckParameterCount(%d) = %v, want %q", MaxParameters+1, err, want)
	}
}

// TestBindManyParameters: binding is linear in the parameters (a map by
// name, not a search per parameter), and the last value of a name wins.
func TestBindManyParameters(t *testing.T) {
	var b strings.Builder
	b.WriteString("SELECT VALUE c.v FROM c WHERE c.v IN (")
	params := make([]Param, 0, MaxInItems+1)
	for i := range MaxInItems {
		if i > 0 {
			b.WriteByte(',')
		}
		name := "@p" + strconv.Itoa(i)
		b.WriteString(name)
		params = append(params, Param{Name: name, Value: NumberValue(float64(i))})
	}
	b.WriteString(")")
	params = append(params, Param{Name: "@p7", Value: NumberValue(-7)})
	p := mustPlan(t, b.String(), params...)
	got := flatten(pages(t, b.String(), docs(`{"v":7}`, `{"v":-7}`, `{"v":15999}`, `{"v":16000}`), 10, params...))
	if strings.Join(got, " ") != "-7 15999" {
		t.Errorf("rows %v, want [-7 15999]", got)
	}
	if v := p.params[7]; v.num != -7 {
		t.Errorf("@p7 bound to %v, want the last value given, -7", v.JSON())
	}
}

func mustPlan(t *testing.T, text string, params ...Param) *Plan {
	t.Helper()
	q, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	p, err := q.Bind(params)
	if err != nil {
		t.Fatalf("Bind(%q): %v", text, err)
	}
	return p
}

package query

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Date and time functions. Cosmos DB represents date-times as ISO 8601
// UTC strings with seven fractional digits (YYYY-MM-DDThh:mm:ss.fffffffZ),
// timestamps as milliseconds since the Unix epoch and ticks as 100 ns
// units since the Unix epoch. "Now" is Env.Now, the same for every call in
// one query, so the *Static forms are the same as the plain ones.

const (
	tick          = 100 * time.Nanosecond
	ticksPerMs    = 10_000
	ticksPerSec   = 10_000_000
	ticksPerDay   = 86400 * ticksPerSec
	dateTimeShape = "2006-01-02T15:04:05.0000000Z"
)

var (
	minDateTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// formatDateTime formats t in the Cosmos shape, or returns undefined if t
// is outside years 1-9999.
func formatDateTime(t time.Time) Value {
	t = t.UTC()
	if t.Before(minDateTime) || t.After(maxDateTime) {
		return undefinedValue
	}
	return StringValue(t.Truncate(tick).Format(dateTimeShape))
}

// parseDateTime accepts YYYY-MM-DD, optionally followed by Thh:mm (or
// " hh:mm": IS_DATETIME("2024-12-12 20:21:25") is true in the query
// reference, learn.microsoft.com/cosmos-db/query/is-datetime), :ss and
// .f (1 to 7 digits), then optionally Z or an offset ±hh:mm.
func parseDateTime(s string) (time.Time, bool) {
	num := func(i, n int) (int, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	if !ok1 || !ok2 || !ok3 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	var h, mi, sec, frac int
	i := 10
	if i < len(s) && (s[i] == 'T' || s[i] == ' ') {
		var ok4, ok5 bool
		h, ok4 = num(11, 2)
		mi, ok5 = num(14, 2)
		if !ok4 || !ok5 || s[13] != ':' {
			return time.Time{}, false
		}
		i = 16
		if i < len(s) && s[i] == ':' {
			var ok bool
			if sec, ok = num(17, 2); !ok {
				return time.Time{}, false
			}
			i = 19
			if i < len(s) && s[i] == '.' {
				i++
				start := i
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				n := i - start
				if n == 0 || n > 7 {
					return time.Time{}, false
				}
				frac, _ = num(start, n)
				for ; n < 7; n++ {
					frac *= 10
				}
			}
		}
	}
	offset := 0
	if i < len(s) {
		switch s[i] {
		case 'Z':
			i++
		case '+', '-':
			oh, ok1 := num(i+1, 2)
			om, ok2 := num(i+4, 2)
			if !ok1 || !ok2 || s[i+3] != ':' || oh > 23 || om > 59 {
				return time.Time{}, false
			}
			offset = oh*3600 + om*60
			if s[i] == '-' {
				offset = -offset
			}
			i += 6
		}
	}
	if i != len(s) || y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, frac*100, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), true
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

var unixEpoch = time.Unix(0, 0).UTC()

// ticksOf returns 100 ns units since the Unix epoch.
func ticksOf(t time.Time) int64 {
	return t.Unix()*ticksPerSec + int64(t.Nanosecond()/100)
}

func fromTicks(ticks int64) time.Time {
	sec := ticks / ticksPerSec
	rem := ticks % ticksPerSec
	if rem < 0 {
		rem += ticksPerSec
		sec--
	}
	return time.Unix(sec, rem*100).UTC()
}

// datePart normalizes a DateTimePart name (year, yyyy, yy, month, mm, m,
// day, dd, d, hour, hh, minute, mi, n, second, ss, s, millisecond, ms,
// microsecond, mcs, nanosecond, ns) to its long form, or "".
func datePart(v Value) string {
	if v.kind != String {
		return ""
	}
	switch strings.ToLower(v.str) {
	case "year", "yyyy", "yy":
		return "year"
	case "month", "mm", "m":
		return "month"
	case "day", "dd", "d":
		return "day"
	case "hour", "hh":
		return "hour"
	case "minute", "mi", "n":
		return "minute"
	case "second", "ss", "s":
		return "second"
	case "millisecond", "ms":
		return "millisecond"
	case "microsecond", "mcs":
		return "microsecond"
	case "nanosecond", "ns":
		return "nanosecond"
	}
	return ""
}

// partTicks is the length of the fixed-length parts, in ticks.
var partTicks = map[string]int64{
	"day":         ticksPerDay,
	"hour":        3600 * ticksPerSec,
	"minute":      60 * ticksPerSec,
	"second":      ticksPerSec,
	"millisecond": ticksPerMs,
	"microsecond": 10,
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// addMonths adds months the .NET way: the day is clamped to the length of
// the target month (Jan 31 + 1 month = Feb 28/29).
func addMonths(t time.Time, months int) time.Time {
	y, m, d := t.Date()
	total := y*12 + int(m) - 1 + months
	ny, nm := total/12, total%12+1
	if total < 0 {
		return time.Time{}
	}
	if dm := daysIn(ny, nm); d > dm {
		d = dm
	}
	h, mi, s := t.Clock()
	return time.Date(ny, time.Month(nm), d, h, mi, s, t.Nanosecond(), time.UTC)
}

func dateArg(v Value) (time.Time, bool) {
	if v.kind != String {
		return time.Time{}, false
	}
	return parseDateTime(v.str)
}

// dateTimeAdd is DateTimeAdd(part, n, t), or with back DateTimeAdd(part,
// -n, t): undefined for an unknown part, an n that is not an integer, or
// a result outside years 1 to 9999.
func dateTimeAdd(partArg, nArg Value, t time.Time, back bool) Value {
	part := datePart(partArg)
	n, ok := int64Arg(nArg)
	if part == "" || !ok || (back && n == math.MinInt64) {
		return undefinedValue
	}
	if back {
		n = -n
	}
	switch part {
	case "year":
		if n > 10000 || n < -10000 {
			return undefinedValue
		}
		return formatDateTime(addMonths(t, int(n)*12))
	case "month":
		if n > 120000 || n < -120000 {
			return undefinedValue
		}
		return formatDateTime(addMonths(t, int(n)))
	case "nanosecond":
		return formatDateTime(fromTicks(ticksOf(t) + n/100))
	}
	unit := partTicks[part]
	if math.Abs(float64(n)*float64(unit)) > 4e18 {
		return undefinedValue
	}
	return formatDateTime(fromTicks(ticksOf(t) + n*unit))
}

func registerDateFunctions() {
	now := func(c *evalCtx, _ *CallExpr, _ []Value) Value { return formatDateTime(c.env.now) }
	nowTs := func(c *evalCtx, _ *CallExpr, _ []Value) Value {
		return NumberValue(float64(floorDiv(ticksOf(c.env.now), ticksPerMs)))
	}
	nowTicks := func(c *evalCtx, _ *CallExpr, _ []Value) Value { return NumberValue(float64(ticksOf(c.env.now))) }
	register("GetCurrentDateTime", 0, 0, now)
	register("GetCurrentDateTimeStatic", 0, 0, now)
	register("GetCurrentTimestamp", 0, 0, nowTs)
	register("GetCurrentTimestampStatic", 0, 0, nowTs)
	register("GetCurrentTicks", 0, 0, nowTicks)
	register("GetCurrentTicksStatic", 0, 0, nowTicks)

	register("DateTimeAdd", 3, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		t, ok := dateArg(a[2])
		if !ok {
			return undefinedValue
		}
		return dateTimeAdd(a[0], a[1], t, false)
	})
	// NOW() is the query's instant and NOW(part, n) that instant moved by
	// n parts, its only two forms (one argument is a wrong count); AGO(part,
	// n) is the instant n parts before it (learn.microsoft.com/cosmos-db/
	// query/now and ago).
	register("NOW", 0, 2, func(c *evalCtx, _ *CallExpr, a []Value) Value {
		if len(a) == 0 {
			return formatDateTime(c.env.now)
		}
		return dateTimeAdd(a[0], a[1], c.env.now, false)
	}).only = []int{0, 2}
	register("AGO", 2, 2, func(c *evalCtx, _ *CallExpr, a []Value) Value {
		return dateTimeAdd(a[0], a[1], c.env.now, true)
	})
	register("DateTimeDiff", 3, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		part := datePart(a[0])
		s, ok1 := dateArg(a[1])
		e, ok2 := dateArg(a[2])
		if part == "" || !ok1 || !ok2 {
			return undefinedValue
		}
		switch part {
		case "year":
			return NumberValue(float64(e.Year() - s.Year()))
		case "month":
			return NumberValue(float64((e.Year()-s.Year())*12 + int(e.Month()) - int(s.Month())))
		case "nanosecond":
			return NumberValue(float64((ticksOf(e) - ticksOf(s)) * 100))
		}
		unit := partTicks[part]
		return NumberValue(float64(floorDiv(ticksOf(e), unit) - floorDiv(ticksOf(s), unit)))
	})
	register("DateTimePart", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		part := datePart(a[0])
		t, ok := dateArg(a[1])
		if part == "" || !ok {
			return undefinedValue
		}
		var n int
		switch part {
		case "year":
			n = t.Year()
		case "month":
			n = int(t.Month())
		case "day":
			n = t.Day()
		case "hour":
			n = t.Hour()
		case "minute":
			n = t.Minute()
		case "second":
			n = t.Second()
		case "millisecond":
			n = t.Nanosecond() / 1e6
		case "microsecond":
			n = t.Nanosecond() / 1e3
		case "nanosecond":
			n = t.Nanosecond()
		}
		return NumberValue(float64(n))
	})
	register("DateTimeFromParts", 3, 7, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		var p [7]int
		limits := [7][2]int{{1, 9999}, {1, 12}, {1, 31}, {0, 23}, {0, 59}, {0, 59}, {0, ticksPerSec - 1}}
		for i, v := range a {
			n, ok := intArg(v)
			if !ok || n < limits[i][0] || n > limits[i][1] {
				return undefinedValue
			}
			p[i] = n
		}
		if p[2] > daysIn(p[0], p[1]) {
			return undefinedValue
		}
		return formatDateTime(time.Date(p[0], time.Month(p[1]), p[2], p[3], p[4], p[5], p[6]*100, time.UTC))
	})
	register("DateTimeBin", 2, 4, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		t, ok := dateArg(a[0])
		part := datePart(a[1])
		if !ok || part == "" {
			return undefinedValue
		}
		size := int64(1)
		if len(a) > 2 {
			n, ok := int64Arg(a[2])
			if !ok || n <= 0 {
				return undefinedValue
			}
			size = n
		}
		origin := unixEpoch
		if len(a) > 3 {
			o, ok := dateArg(a[3])
			if !ok {
				return undefinedValue
			}
			origin = o
		}
		switch part {
		case "year", "month":
			per := int64(1)
			if part == "year" {
				per = 12
			}
			months := int64((t.Year()-origin.Year())*12 + int(t.Month()) - int(origin.Month()))
			if addMonths(origin, int(months)).After(t) {
				months--
			}
			binned := floorDiv(months, per*size) * per * size
			return formatDateTime(addMonths(origin, int(binned)))
		}
		unit := int64(1)
		if part != "nanosecond" {
			unit = partTicks[part]
		}
		if float64(unit)*float64(size) > 4e18 {
			return undefinedValue
		}
		width := unit * size
		d := ticksOf(t) - ticksOf(origin)
		return formatDateTime(fromTicks(ticksOf(origin) + floorDiv(d, width)*width))
	})
	register("DateTimeToTicks", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		t, ok := dateArg(a[0])
		if !ok {
			return undefinedValue
		}
		return NumberValue(float64(ticksOf(t)))
	})
	register("DateTimeToTimestamp", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		t, ok := dateArg(a[0])
		if !ok {
			return undefinedValue
		}
		return NumberValue(float64(floorDiv(ticksOf(t), ticksPerMs)))
	})
	register("TicksToDateTime", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Number || math.Abs(a[0].num) > 4e18 {
			return undefinedValue
		}
		return formatDateTime(fromTicks(int64(a[0].num)))
	})
	register("TimestampToDateTime", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Number || math.Abs(a[0].num) > 4e14 {
			return undefinedValue
		}
		return formatDateTime(fromTicks(int64(a[0].num) * ticksPerMs))
	})

	register("IS_DATETIME", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		_, ok := dateArg(a[0])
		return BoolValue(ok)
	})
	part := func(of func(time.Time) int) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			t, ok := dateArg(a[0])
			if !ok {
				return undefinedValue
			}
			return NumberValue(float64(of(t)))
		}
	}
	register("YEAR", 1, 1, part(time.Time.Year))
	register("MONTH", 1, 1, part(func(t time.Time) int { return int(t.Month()) }))
	register("DAY", 1, 1, part(time.Time.Day))
	register("DateTimeFormat", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		t, ok := dateArg(a[0])
		if !ok || a[1].kind != String {
			return undefinedValue
		}
		out, ok := formatCustom(t, a[1].str)
		if !ok {
			return undefinedValue
		}
		return StringValue(out)
	})
}

// formatCustom formats t by a custom date and time format in .NET's
// notation, which DateTimeFormat takes: yyyy, MM, dd, HH, mm, ss, f…
// and F… (fractions, F… without trailing zeros), and the rest of that
// notation (y to yyyyy, M to MMMM, d to dddd, h, H, m, s, t, tt, K, z
// to zzz; English names); a character after \ and text in '…' or "…"
// are literal, as is any other character. The query reference shows
// DateTimeFormat("2024-10-10 14:40:20", "To\\da\\y i\\s: yyyy-MM-ddTHH:mm:ss.FFF")
// as "Today is: 2024-10-10T14:40:20.", the point kept before an empty
// fraction (learn.microsoft.com/cosmos-db/query/datetimeformat). It
// reports false for an unterminated quote or a trailing \.
func formatCustom(t time.Time, format string) (string, bool) {
	var b strings.Builder
	pad := func(v, width int) {
		s := strconv.Itoa(v)
		for i := len(s); i < width; i++ {
			b.WriteByte('0')
		}
		b.WriteString(s)
	}
	// named writes a run of n M's or d's: the name from 4, its first
	// three letters at 3, else the number padded to n digits.
	named := func(n int, name string, num int) {
		switch {
		case n >= 4:
			b.WriteString(name)
		case n == 3:
			b.WriteString(name[:3])
		default:
			pad(num, n)
		}
	}
	for i := 0; i < len(format); {
		c := format[i]
		n := 1
		for i+n < len(format) && format[i+n] == c {
			n++
		}
		switch c {
		case 'y':
			y := t.Year()
			if n <= 2 {
				y %= 100
			}
			pad(y, n)
		case 'M':
			named(n, t.Month().String(), int(t.Month()))
		case 'd':
			named(n, t.Weekday().String(), t.Day())
		case 'H':
			pad(t.Hour(), min(n, 2))
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			pad(h, min(n, 2))
		case 'm':
			pad(t.Minute(), min(n, 2))
		case 's':
			pad(t.Second(), min(n, 2))
		case 't':
			ampm := "AM"
			if t.Hour() >= 12 {
				ampm = "PM"
			}
			b.WriteString(ampm[:min(n, 2)])
		case 'f', 'F':
			if n > 7 {
				return "", false
			}
			digits := strconv.Itoa(t.Nanosecond()/100 + 10_000_000)[1 : 1+n]
			if c == 'F' {
				digits = strings.TrimRight(digits, "0")
			}
			b.WriteString(digits)
		case 'K':
			b.WriteByte('Z')
			n = 1
		case 'z':
			// Every date-time is UTC.
			switch {
			case n == 1:
				b.WriteString("+0")
			case n == 2:
				b.WriteString("+00")
			default:
				b.WriteString("+00:00")
			}
		case '\\':
			if i+1 >= len(format) {
				return "", false
			}
			b.WriteByte(format[i+1])
			i += 2
			continue
		case '\'', '"':
			end := strings.IndexByte(format[i+1:], c)
			if end < 0 {
				return "", false
			}
			b.WriteString(format[i+1 : i+1+end])
			i += end + 2
			continue
		default:
			b.WriteString(format[i : i+n])
		}
		i += n
	}
	return b.String(), true
}

package query

import (
	"math"
)

// Spatial functions over GeoJSON Point, LineString, Polygon and
// MultiPolygon values with [longitude, latitude] positions, on the WGS-84
// ellipsoid as the service measures them: a distance is the geodesic
// between two positions (Vincenty's inverse formula), an area the
// ellipsoid's, computed on the sphere of equal area through authalic
// latitudes. They agree with the query reference's examples to 8 cm in
// 1,907 km (ST_DISTANCE) and 0.0001% (ST_AREA). Containment and
// intersection treat edges as straight lines in longitude/latitude.

// The WGS-84 ellipsoid: equatorial radius and flattening, in meters.
const (
	wgs84A = 6378137.0
	wgs84F = 1 / 298.257223563
)

// earthRadius is the radius of the sphere of the ellipsoid's mean
// radius, for the great-circle fallback of a geodesic that does not
// converge (positions nearly antipodal).
const earthRadius = 6371008.8

type geoKind uint8

const (
	geoPoint geoKind = iota + 1
	geoLine
	geoPolygon
	geoMultiPolygon
)

type pos struct{ lon, lat float64 }

// geometry is a decoded GeoJSON value: points for Point and LineString,
// rings for Polygon, polygons for MultiPolygon.
type geometry struct {
	kind  geoKind
	pts   []pos
	polys [][][]pos // each polygon: outer ring, then holes
}

// decodeGeo decodes a GeoJSON geometry; reason says why it is invalid.
func decodeGeo(v Value) (g geometry, reason string) {
	if v.kind != Object {
		return g, "the value is not a GeoJSON object"
	}
	t, ok := v.Get("type").AsString()
	if !ok {
		return g, "the 'type' property is missing or not a string"
	}
	coords := v.Get("coordinates")
	if coords.kind != Array {
		return g, "the 'coordinates' property is missing or not an array"
	}
	switch t {
	case "Point":
		p, r := decodePos(coords)
		if r != "" {
			return g, r
		}
		return geometry{kind: geoPoint, pts: []pos{p}}, ""
	case "LineString":
		pts, r := decodePositions(coords)
		if r != "" {
			return g, r
		}
		if len(pts) < 2 {
			return g, "a LineString needs at least two positions"
		}
		return geometry{kind: geoLine, pts: pts}, ""
	case "Polygon":
		poly, r := decodePolygon(coords)
		if r != "" {
			return g, r
		}
		return geometry{kind: geoPolygon, polys: [][][]pos{poly}}, ""
	case "MultiPolygon":
		g = geometry{kind: geoMultiPolygon}
		for _, pc := range coords.ref.elems {
			poly, r := decodePolygon(pc)
			if r != "" {
				return geometry{}, r
			}
			g.polys = append(g.polys, poly)
		}
		if len(g.polys) == 0 {
			return geometry{}, "a MultiPolygon needs at least one polygon"
		}
		return g, ""
	}
	return g, "the type '" + t + "' is not supported"
}

func decodePos(v Value) (pos, string) {
	es := v.Elems()
	if v.kind != Array || len(es) < 2 || es[0].kind != Number || es[1].kind != Number {
		return pos{}, "a position must be an array of two numbers"
	}
	p := pos{lon: es[0].num, lat: es[1].num}
	// The service's reason for a latitude out of range, as the query
	// reference shows it for ST_ISVALIDDETAILED
	// (learn.microsoft.com/cosmos-db/query/st-isvaliddetailed), and the
	// same words for a longitude.
	if p.lat < -90 || p.lat > 90 {
		return pos{}, "Latitude values must be between -90 and 90 degrees."
	}
	if p.lon < -180 || p.lon > 180 {
		return pos{}, "Longitude values must be between -180 and 180 degrees."
	}
	return p, ""
}

func decodePositions(v Value) ([]pos, string) {
	if v.kind != Array {
		return nil, "expected an array of positions"
	}
	pts := make([]pos, 0, len(v.ref.elems))
	for _, e := range v.ref.elems {
		p, r := decodePos(e)
		if r != "" {
			return nil, r
		}
		pts = append(pts, p)
	}
	return pts, ""
}

func decodePolygon(v Value) ([][]pos, string) {
	if v.kind != Array || len(v.ref.elems) == 0 {
		return nil, "a Polygon needs at least one ring"
	}
	var rings [][]pos
	for _, rv := range v.ref.elems {
		ring, r := decodePositions(rv)
		if r != "" {
			return nil, r
		}
		if len(ring) < 4 {
			return nil, "a ring needs at least four positions"
		}
		if ring[0] != ring[len(ring)-1] {
			return nil, "a ring must end where it starts"
		}
		rings = append(rings, ring)
	}
	return rings, ""
}

// geodesic is the distance in meters between two positions on the
// WGS-84 ellipsoid, by Vincenty's inverse formula; for the nearly
// antipodal positions where it does not converge, the great-circle
// distance.
func geodesic(p, q pos) float64 {
	const rad = math.Pi / 180
	b := wgs84A * (1 - wgs84F)
	l := (q.lon - p.lon) * rad
	u1 := math.Atan((1 - wgs84F) * math.Tan(p.lat*rad))
	u2 := math.Atan((1 - wgs84F) * math.Tan(q.lat*rad))
	sinU1, cosU1 := math.Sincos(u1)
	sinU2, cosU2 := math.Sincos(u2)
	lambda := l
	for range 200 {
		sinL, cosL := math.Sincos(lambda)
		x, y := cosU2*sinL, cosU1*sinU2-sinU1*cosU2*cosL
		sinSigma := math.Sqrt(x*x + y*y)
		if sinSigma == 0 {
			return 0 // the same position
		}
		cosSigma := sinU1*sinU2 + cosU1*cosU2*cosL
		sigma := math.Atan2(sinSigma, cosSigma)
		sinAlpha := cosU1 * cosU2 * sinL / sinSigma
		cos2Alpha := 1 - sinAlpha*sinAlpha
		cos2SigmaM := 0.0 // on the equator
		if cos2Alpha != 0 {
			cos2SigmaM = cosSigma - 2*sinU1*sinU2/cos2Alpha
		}
		c := wgs84F / 16 * cos2Alpha * (4 + wgs84F*(4-3*cos2Alpha))
		prev := lambda
		lambda = l + (1-c)*wgs84F*sinAlpha*(sigma+c*sinSigma*(cos2SigmaM+c*cosSigma*(-1+2*cos2SigmaM*cos2SigmaM)))
		if math.Abs(lambda-prev) > 1e-12 {
			continue
		}
		u := cos2Alpha * (wgs84A*wgs84A - b*b) / (b * b)
		aa := 1 + u/16384*(4096+u*(-768+u*(320-175*u)))
		bb := u / 1024 * (256 + u*(-128+u*(74-47*u)))
		dSigma := bb * sinSigma * (cos2SigmaM + bb/4*(cosSigma*(-1+2*cos2SigmaM*cos2SigmaM)-
			bb/6*cos2SigmaM*(-3+4*sinSigma*sinSigma)*(-3+4*cos2SigmaM*cos2SigmaM)))
		return b * aa * (sigma - dSigma)
	}
	return haversine(p, q)
}

// haversine is the great-circle distance between two positions in meters.
func haversine(a, b pos) float64 {
	const rad = math.Pi / 180
	dLat := (b.lat - a.lat) * rad
	dLon := (b.lon - a.lon) * rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(a.lat*rad)*math.Cos(b.lat*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadius * math.Asin(math.Min(1, math.Sqrt(h)))
}

// vertices returns every position of g.
func (g geometry) vertices() []pos {
	if g.kind == geoPoint || g.kind == geoLine {
		return g.pts
	}
	var out []pos
	for _, poly := range g.polys {
		for _, ring := range poly {
			out = append(out, ring...)
		}
	}
	return out
}

// segments returns every edge of g.
func (g geometry) segments() [][2]pos {
	var out [][2]pos
	add := func(pts []pos) {
		for i := 0; i+1 < len(pts); i++ {
			out = append(out, [2]pos{pts[i], pts[i+1]})
		}
	}
	if g.kind == geoLine {
		add(g.pts)
	}
	for _, poly := range g.polys {
		for _, ring := range poly {
			add(ring)
		}
	}
	return out
}

// ringContains is the even-odd rule for p in ring.
func ringContains(ring []pos, p pos) bool {
	in := false
	for i, j := 0, len(ring)-1; i < len(ring); j, i = i, i+1 {
		a, b := ring[i], ring[j]
		if (a.lat > p.lat) != (b.lat > p.lat) {
			x := a.lon + (p.lat-a.lat)/(b.lat-a.lat)*(b.lon-a.lon)
			if p.lon < x {
				in = !in
			}
		}
	}
	return in
}

// contains reports whether p is inside an area of g (outer ring, not in a
// hole).
func (g geometry) contains(p pos) bool {
	for _, poly := range g.polys {
		if !ringContains(poly[0], p) {
			continue
		}
		inHole := false
		for _, hole := range poly[1:] {
			if ringContains(hole, p) {
				inHole = true
				break
			}
		}
		if !inHole {
			return true
		}
	}
	return false
}

func segmentsCross(a, b [2]pos) bool {
	cross := func(o, p, q pos) float64 {
		return (p.lon-o.lon)*(q.lat-o.lat) - (p.lat-o.lat)*(q.lon-o.lon)
	}
	d1 := cross(b[0], b[1], a[0])
	d2 := cross(b[0], b[1], a[1])
	d3 := cross(a[0], a[1], b[0])
	d4 := cross(a[0], a[1], b[1])
	if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) {
		return true
	}
	onSeg := func(o, p, q pos) bool {
		return math.Min(o.lon, p.lon) <= q.lon && q.lon <= math.Max(o.lon, p.lon) &&
			math.Min(o.lat, p.lat) <= q.lat && q.lat <= math.Max(o.lat, p.lat)
	}
	return (d1 == 0 && onSeg(b[0], b[1], a[0])) || (d2 == 0 && onSeg(b[0], b[1], a[1])) ||
		(d3 == 0 && onSeg(a[0], a[1], b[0])) || (d4 == 0 && onSeg(a[0], a[1], b[1]))
}

func (g geometry) isArea() bool { return g.kind == geoPolygon || g.kind == geoMultiPolygon }

// The spatial functions compare every position or edge of one geometry
// with every one of the other, work that grows with the product of their
// sizes within one evaluation. Each pass over the other geometry is
// counted to the page's meter (meter.go), so two large geometries cannot
// run past the request's budget; once the meter halts, a function's
// answer is never used, so it returns at once with any.

// size is the number of positions of g.
func (g geometry) size() int {
	n := len(g.pts)
	for _, poly := range g.polys {
		for _, ring := range poly {
			n += len(ring)
		}
	}
	return n
}

// passCost is the meter's units for one pass over n positions doing
// steps of about 1/per of a FROM/JOIN step each.
func passCost(n, per int) int { return 1 + n/per }

// within reports whether every position of a lies inside area b.
func within(m *meter, a, b geometry) bool {
	if !b.isArea() {
		return false
	}
	cost := passCost(b.size(), 32)
	for _, p := range a.vertices() {
		if !m.spend(cost) || !b.contains(p) {
			return false
		}
	}
	return true
}

// anyInside reports whether some position of g lies inside area.
func anyInside(m *meter, g, area geometry) bool {
	cost := passCost(area.size(), 32)
	for _, p := range g.vertices() {
		if !m.spend(cost) {
			return false
		}
		if area.contains(p) {
			return true
		}
	}
	return false
}

func intersects(m *meter, a, b geometry) bool {
	if a.kind == geoPoint && b.kind == geoPoint {
		return a.pts[0] == b.pts[0]
	}
	if within(m, a, b) || within(m, b, a) {
		return true
	}
	if a.isArea() && anyInside(m, b, a) || b.isArea() && anyInside(m, a, b) {
		return true
	}
	bs := b.segments()
	cost := passCost(len(bs), 8)
	for _, s := range a.segments() {
		if !m.spend(cost) {
			return false
		}
		for _, t := range bs {
			if segmentsCross(s, t) {
				return true
			}
		}
	}
	if a.kind == geoPoint || b.kind == geoPoint {
		p, other := a, b
		if b.kind == geoPoint {
			p, other = b, a
		}
		for _, s := range other.segments() {
			if segmentsCross(s, [2]pos{p.pts[0], p.pts[0]}) {
				return true
			}
		}
	}
	return false
}

// ringArea is the area enclosed by a ring on the WGS-84 ellipsoid, in
// square meters: the ring's area on the sphere of the ellipsoid's
// surface area, its positions moved to their authalic latitudes (the
// latitudes that keep every area).
func ringArea(ring []pos) float64 {
	const rad = math.Pi / 180
	sum := 0.0
	for i := 0; i+1 < len(ring); i++ {
		a, b := ring[i], ring[i+1]
		sum += (b.lon - a.lon) * rad * (2 + sinAuthalic(a.lat) + sinAuthalic(b.lat))
	}
	return math.Abs(sum * authalicRadius * authalicRadius / 2)
}

// authalicQPole is authalicQ at the pole, and authalicRadius the radius
// of the sphere with the WGS-84 ellipsoid's surface area.
var (
	authalicQPole  = authalicQ(1)
	authalicRadius = wgs84A * math.Sqrt(authalicQPole/2)
)

// sinAuthalic is the sine of the authalic latitude of a geodetic
// latitude in degrees.
func sinAuthalic(lat float64) float64 {
	return authalicQ(math.Sin(lat*math.Pi/180)) / authalicQPole
}

// authalicQ is q(φ) of the authalic latitude's formula, of sin φ.
func authalicQ(s float64) float64 {
	e2 := wgs84F * (2 - wgs84F)
	e := math.Sqrt(e2)
	return (1 - e2) * (s/(1-e2*s*s) - 1/(2*e)*math.Log((1-e*s)/(1+e*s)))
}

func registerSpatialFunctions() {
	geo2 := func(f func(m *meter, a, b geometry) Value) func(*evalCtx, *CallExpr, []Value) Value {
		return func(c *evalCtx, _ *CallExpr, args []Value) Value {
			a, r1 := decodeGeo(args[0])
			b, r2 := decodeGeo(args[1])
			if r1 != "" || r2 != "" {
				return undefinedValue
			}
			return f(&c.m, a, b)
		}
	}
	register("ST_DISTANCE", 2, 2, geo2(func(m *meter, a, b geometry) Value {
		if intersects(m, a, b) {
			return NumberValue(0)
		}
		best := math.Inf(1)
		bv := b.vertices()
		cost := passCost(len(bv), 2)
		for _, p := range a.vertices() {
			if !m.spend(cost) {
				return undefinedValue
			}
			for _, q := range bv {
				best = math.Min(best, geodesic(p, q))
			}
		}
		return NumberValue(best)
	}))
	register("ST_WITHIN", 2, 2, geo2(func(m *meter, a, b geometry) Value { return BoolValue(within(m, a, b)) }))
	register("ST_INTERSECTS", 2, 2, geo2(func(m *meter, a, b geometry) Value { return BoolValue(intersects(m, a, b)) }))
	register("ST_ISVALID", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		_, r := decodeGeo(a[0])
		return BoolValue(r == "")
	})
	register("ST_ISVALIDDETAILED", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		_, r := decodeGeo(a[0])
		o := newObjectCap(2)
		o.addMember("valid", BoolValue(r == ""))
		if r != "" {
			o.addMember("reason", StringValue(r))
		}
		return o
	})
	register("ST_AREA", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		g, r := decodeGeo(a[0])
		if r != "" {
			return undefinedValue
		}
		area := 0.0
		for _, poly := range g.polys {
			area += ringArea(poly[0])
			for _, hole := range poly[1:] {
				area -= ringArea(hole)
			}
		}
		return NumberValue(area)
	})
}

package query

import "testing"

func TestSpatialFunctions(t *testing.T) {
	const (
		origin = "{type: 'Point', coordinates: [0, 0]}"
		north  = "{type: 'Point', coordinates: [0, 1]}"
		inside = "{type: 'Point', coordinates: [0.5, 0.5]}"
		square = "{type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}"
		holed  = "{type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[1, 1], [3, 1], [3, 3], [1, 3], [1, 1]]]}"
		far    = "{type: 'Polygon', coordinates: [[[10, 10], [11, 10], [11, 11], [10, 10]]]}"
		cross  = "{type: 'LineString', coordinates: [[-1, 0.5], [2, 0.5]]}"
	)
	runExprCases(t, []exprCase{
		// On the WGS-84 ellipsoid: a degree of latitude at the equator,
		// a degree of longitude along it, and a quarter meridian.
		{"ROUND(ST_DISTANCE(" + origin + ", " + north + ") * 10) / 10", "110574.4"},
		{"ROUND(ST_DISTANCE(" + origin + ", {type: 'Point', coordinates: [1, 0]}) * 100) / 100", "111319.49"},
		{"ROUND(ST_DISTANCE(" + origin + ", {type: 'Point', coordinates: [0, 90]}) * 1000) / 1000", "10001965.729"},
		// Antipodes, where the geodesic formula does not converge: the
		// great circle.
		{"ST_DISTANCE(" + origin + ", {type: 'Point', coordinates: [180, 0]}) > 2e7", "true"},
		{"ST_DISTANCE(" + origin + ", " + origin + ")", "0"},
		{"ST_DISTANCE(" + inside + ", " + square + ")", "0"},
		{"ST_DISTANCE(" + far + ", " + square + ") > 1000000", "true"},
		{"ST_DISTANCE(" + origin + ", 'x')", "undefined"},
		{"ST_WITHIN(" + inside + ", " + square + ")", "true"},
		{"ST_WITHIN({type: 'Point', coordinates: [2, 2]}, " + square + ")", "false"},
		{"ST_WITHIN({type: 'Point', coordinates: [2, 2]}, " + holed + ")", "false"},
		{"ST_WITHIN({type: 'Point', coordinates: [0.5, 2]}, " + holed + ")", "true"},
		{"ST_WITHIN(" + square + ", " + inside + ")", "false"},
		{"ST_INTERSECTS(" + cross + ", " + square + ")", "true"},
		{"ST_INTERSECTS(" + far + ", " + square + ")", "false"},
		{"ST_INTERSECTS(" + square + ", " + inside + ")", "true"},
		{"ST_INTERSECTS(" + origin + ", " + origin + ")", "true"},
		{"ST_ISVALID(" + square + ")", "true"},
		{"ST_ISVALID({type: 'Point', coordinates: [200, 0]})", "false"},
		{"ST_ISVALID({type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]]})", "false"},
		{"ST_ISVALID({type: 'Circle', coordinates: [0, 0]})", "false"},
		{"ST_ISVALID('x')", "false"},
		{"ST_ISVALIDDETAILED(" + origin + ")", `{"valid":true}`},
		{"ST_ISVALIDDETAILED({type: 'Point', coordinates: [0, 95]})", `{"valid":false,"reason":"Latitude values must be between -90 and 90 degrees."}`},
		{"ST_ISVALIDDETAILED({type: 'Point', coordinates: [190, 5]})", `{"valid":false,"reason":"Longitude values must be between -180 and 180 degrees."}`},
		{"ST_AREA(" + square + ") BETWEEN 1.23e10 AND 1.24e10", "true"},
		// A degree square at the equator on the ellipsoid: 12,308 km²
		// (12,364 on the sphere of the mean radius).
		{"ST_AREA({type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}) BETWEEN 12308e6 AND 12309e6", "true"},
		{"ST_AREA(" + holed + ") < ST_AREA({type: 'Polygon', coordinates: [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]]})", "true"},
		{"ST_AREA(" + origin + ")", "0"},
		{"ST_AREA(1)", "undefined"},
	})
}

package resource

import (
	"testing"

	"github.com/ebbdb/ebb/internal/engine/dberr"
)

func TestCheckOfferID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{RIDString([]byte{1, 2, 3}), true},
		{"AbCD", true},
		{"Ab-D", true}, // '-' stands for '/'
		{"AbC", false},
		{"AbCD=", false},
		{"AAAAAQ==", false}, // a database's id, not an offer's
		{"not-an-offer", false},
		{"", false},
	} {
		err := CheckOfferID(tc.id)
		if tc.ok != (err == nil) || (err != nil && !dberr.IsKind(err, dberr.KindBadRequest)) {
			t.Errorf("CheckOfferID(%q) = %v; want ok %v (else a bad request)", tc.id, err, tc.ok)
		}
	}
}

package gateway

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/engine"
)

// Users and permissions (engine/users.go), and the resource tokens
// permissions hand out: a request signed with one is checked here
// (checkResourceToken) instead of against the master keys.

func (g *Gateway) userRoutes() []route {
	users := "/dbs/{db}/users"
	perms := users + "/{user}/permissions"
	return []route{
		{"GET " + users, g.listUsers, accessSigned},
		{"POST " + users, g.createOrQueryUsers, accessSigned},
		{"GET " + users + "/{user}", g.readUser, accessSigned},
		{"PUT " + users + "/{user}", g.replaceUser, accessSigned},
		{"DELETE " + users + "/{user}", g.deleteUser, accessSigned},
		{"GET " + perms, g.listPermissions, accessSigned},
		{"POST " + perms, g.createOrQueryPermissions, accessSigned},
		{"GET " + perms + "/{id}", g.readPermission, accessSigned},
		{"PUT " + perms + "/{id}", g.replacePermission, accessSigned},
		{"DELETE " + perms + "/{id}", g.deletePermission, accessSigned},
	}
}

func (g *Gateway) listUsers(w http.ResponseWriter, r *http.Request) error {
	rows, rid, err := g.eng.Users(r.Context(), r.PathValue("db"))
	if err != nil {
		return err
	}
	return writeFeed(w, "Users", rid, rowList(rows), 1, "")
}

func (g *Gateway) createOrQueryUsers(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	if isQuery(r) {
		res, err := g.eng.QueryUsers(r.Context(), r.PathValue("db"), body)
		if err != nil {
			return err
		}
		return writePage(w, "Users", res)
	}
	res, err := g.eng.CreateUser(r.Context(), r.PathValue("db"), body)
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusCreated, res)
}

func (g *Gateway) readUser(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.ReadUser(r.Context(), r.PathValue("db"), r.PathValue("user"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

func (g *Gateway) replaceUser(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	res, err := g.eng.ReplaceUser(r.Context(), r.PathValue("db"), r.PathValue("user"), body, header(r.Header, "If-Match"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

func (g *Gateway) deleteUser(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.DeleteUser(r.Context(), r.PathValue("db"), r.PathValue("user"), header(r.Header, "If-Match"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusNoContent, res)
}

// tokenExpiry reads x-ms-documentdb-expiry-seconds: how long the tokens
// of the permissions in the answer are valid, an hour by default and at
// most five, as the service allows.
func tokenExpiry(r *http.Request) (time.Duration, error) {
	v := header(r.Header, "X-Ms-Documentdb-Expiry-Seconds")
	if v == "" {
		return engine.DefaultTokenExpiry, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || time.Duration(n)*time.Second > engine.MaxTokenExpiry {
		return 0, &engine.Error{Kind: engine.KindBadRequest, Message: "The x-ms-documentdb-expiry-seconds header must be a whole number of seconds from 1 to " + strconv.Itoa(int(engine.MaxTokenExpiry/time.Second)) + "; got '" + v + "'."}
	}
	return time.Duration(n) * time.Second, nil
}

func (g *Gateway) listPermissions(w http.ResponseWriter, r *http.Request) error {
	expiry, err := tokenExpiry(r)
	if err != nil {
		return err
	}
	rows, rid, err := g.eng.Permissions(r.Context(), r.PathValue("db"), r.PathValue("user"), expiry)
	if err != nil {
		return err
	}
	return writeFeed(w, "Permissions", rid, rowList(rows), 1, "")
}

func (g *Gateway) createOrQueryPermissions(w http.ResponseWriter, r *http.Request) error {
	expiry, err := tokenExpiry(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	db, user := r.PathValue("db"), r.PathValue("user")
	if isQuery(r) {
		res, err := g.eng.QueryPermissions(r.Context(), db, user, body, expiry)
		if err != nil {
			return err
		}
		return writePage(w, "Permissions", res)
	}
	res, err := g.eng.CreatePermission(r.Context(), db, user, body, expiry)
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusCreated, res)
}

func (g *Gateway) readPermission(w http.ResponseWriter, r *http.Request) error {
	expiry, err := tokenExpiry(r)
	if err != nil {
		return err
	}
	res, err := g.eng.ReadPermission(r.Context(), r.PathValue("db"), r.PathValue("user"), r.PathValue("id"), expiry)
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

func (g *Gateway) replacePermission(w http.ResponseWriter, r *http.Request) error {
	expiry, err := tokenExpiry(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	res, err := g.eng.ReplacePermission(r.Context(), r.PathValue("db"), r.PathValue("user"), r.PathValue("id"), body, header(r.Header, "If-Match"), expiry)
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

func (g *Gateway) deletePermission(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.DeletePermission(r.Context(), r.PathValue("db"), r.PathValue("user"), r.PathValue("id"), header(r.Header, "If-Match"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusNoContent, res)
}

// checkResourceToken authorizes a request signed with a resource token:
// the token's signature here, what its permission grants in the engine.
// A permission grants a container or what is in one, never users or
// permissions: those take a master key.
func (g *Gateway) checkResourceToken(r *http.Request) error {
	payload, err := g.opts.Verifier.OpenResourceToken(header(r.Header, "Authorization"))
	if err != nil {
		return err
	}
	ref := itemRef(r)
	return g.eng.AuthorizeResourceToken(payload, engine.TokenRequest{
		Path: strings.Trim(r.URL.Path, "/"), Write: writes(r), Method: r.Method, PK: ref.PK, HasPK: ref.HasPK,
	})
}

// isResourceToken reports whether r is signed with a resource token.
func isResourceToken(r *http.Request) bool {
	return auth.IsResourceToken(header(r.Header, "Authorization"))
}

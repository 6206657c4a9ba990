// Package query implements the Azure Cosmos DB for NoSQL query language:
// JSON values with Cosmos semantics, a lexer and recursive-descent parser,
// a checker, an evaluator and a paging executor over an ordered document
// source. It is a pure library (standard library only): the engine hands it
// query text, parameters, a Source of visible documents, a continuation
// token, the request's context and a page budget, and gets back rows, the
// next token and metrics.
//
// # Values
//
// Value is a JSON value or undefined. Numbers are float64, as in Cosmos
// DB; a number parsed from JSON keeps its literal so an unchanged document
// re-encodes byte for byte. Objects keep member order. ParseJSON is strict
// RFC 8259 (no duplicate member names, valid UTF-8, depth at most
// MaxJSONDepth); it converts the input to a string once and makes every
// unescaped string a substring of it, and carves array and object bodies
// from per-document slabs, so parsing a document costs a handful of
// allocations. Arrays and objects are shared by copies of a Value and
// edited in place by the mutators (Set, Delete, Insert, ...); Clone makes a
// deep copy. Computed numbers print like JavaScript (1e+21, 0.1), which is
// what Cosmos DB emits; NaN and infinities cannot be represented and
// become undefined.
//
// # Grammar coverage
//
//	SELECT [DISTINCT] [TOP n|@p] (* | VALUE expr | expr [[AS] name], ...)
//	[FROM source [JOIN source]...] [WHERE expr] [GROUP BY expr, ...]
//	[ORDER BY expr [ASC|DESC], ...] [OFFSET n|@p LIMIT n|@p]
//
//	source: container [[AS] alias]       FROM c, FROM root r, FROM docs c
//	        path [[AS] alias]            FROM c.children ch (one row: the value)
//	        alias IN path                FROM x IN c.arr, JOIN t IN c.tags
//	        (SELECT ...) [[AS] alias]    in subqueries (rows of the subquery)
//
// Keywords are case-insensitive; identifiers and parameter names are not.
// Expressions: property paths (c.a.b, c["x y"], c[@p], c.arr[0], any
// expression as index), object and array constructors, parameters,
// literals (strings in either quote with JSON escapes plus \', decimal and
// 0x hexadecimal numbers, true, false, null, undefined), arithmetic, the
// comparisons = != <> < <= > >=, AND OR NOT, [NOT] IN (...), [NOT] BETWEEN,
// [NOT] LIKE with % _ [a-z] [^a] and ESCAPE, ?:, ?? (the left side if
// defined), || (string concatenation), bitwise & | ^ ~ << >> >>> (on 32-bit
// integers, as JavaScript), scalar, EXISTS and ARRAY subqueries correlated
// to the aliases around them, and the system functions registered in
// functions*.go, datetime.go and spatial.go (names case-insensitive),
// including the aggregates COUNT, SUM, AVG, MIN, MAX and COUNTIF. Comments
// are -- to end of line and /* ... */. SELECT without FROM evaluates once
// (SELECT VALUE 1+1). As in Cosmos DB, a reserved word cannot follow '.'
// (c.value is a syntax error; c["value"] is the way to write it), and
// there is no "==".
//
// Operator precedence, loosest first: ?:, ??, OR, AND, NOT, comparisons
// and IN/LIKE/BETWEEN, ||, |, ^, &, shifts, + -, * / %, unary - + ~, then
// property access and indexing.
//
// Every error, syntactic or semantic, is a *Error with byte offset, line
// and column ("Syntax error at line 1, column 15: expected FROM, found
// 'FORM'"); Error.List holds all errors found (at most MaxErrors, one per
// position). The parser never panics and cannot loop: expect always
// advances, and nesting deeper than MaxDepth is an error. The checker
// rejects unknown functions and wrong argument counts ("the ABS function
// requires 1 argument, found 2"), unresolved identifiers, aggregates
// outside SELECT or nested, non-grouped references in GROUP BY queries,
// duplicate output names, SELECT * with JOIN or without FROM, ORDER BY with
// GROUP BY or aggregates (as Cosmos DB does), and udf.* calls.
//
// # Semantics
//
// Undefined propagates: a missing property, an operator applied to the
// wrong types, comparing values of different types, or a function given
// the wrong argument types all yield undefined rather than an error. AND,
// OR and NOT are three-valued (false AND undefined is false, true OR
// undefined is true, anything else involving undefined or a non-boolean is
// undefined); WHERE keeps a row only when its condition is true. = and !=
// compare arrays and objects deeply (objects regardless of member order);
// < <= > >= are undefined for them. Undefined properties are left out of
// projected objects, so SELECT c.missing FROM c yields {}; SELECT VALUE of
// an undefined value yields no row, and such rows do not count for OFFSET,
// TOP or LIMIT. Array constructors drop undefined elements.
//
// Projection names: an alias if given; otherwise the last property name of
// a path (c.a → "a", c.b.x → "x", c["x y"] → "x y", c → "c"); otherwise
// $1, $2, ... counting only the unnamed items. Aggregates: COUNT(e) counts
// defined values, COUNTIF(e) rows where e is true; SUM and AVG are
// undefined if any input is defined but not a number; MIN and MAX compare
// with the value order below and are undefined if an input is an array or
// object; over no input COUNT, COUNTIF and SUM give 0 and the others
// undefined. Without GROUP BY an aggregate query yields one row; with
// VALUE, SELECT VALUE COUNT(1) FROM c gives [n], and SELECT COUNT(1) FROM c
// gives [{"$1": n}]. GROUP BY groups by Equal values (undefined is a group
// of its own) and emits groups in order of first appearance.
//
// # Value ordering
//
// Compare (ORDER BY, MIN, MAX) orders by type first: undefined < null <
// false < true < numbers < strings < arrays < objects. Numbers compare
// numerically, strings by code point (their UTF-8 bytes; Cosmos DB
// compares UTF-16 code units, which differs only between supplementary
// characters and U+E000–U+FFFF). Arrays, which Cosmos DB does not order,
// compare element-wise with a shorter prefix first; objects compare by
// their members in name order (name, then value), a shorter prefix first.
// ORDER BY includes rows whose key is undefined: first ascending, last
// descending.
//
// # Executor and paging
//
// Plan.Page runs one page. Documents come from the Source in storage-key
// order and each is parsed once per scan, and only as far as needed: the
// checker works out which top-level members the query reads (c.a, c["b"],
// also inside subqueries); unless the query uses the whole document (SELECT
// c, DocumentId(c), c[@p], a projected SELECT *) only those members are
// decoded, the rest skipped unvalidated, and parsing stops when all were
// found. SELECT * without WHERE does not parse at all. A Source's documents
// are trusted to be valid JSON (they were validated when written). A
// streaming page, where nothing of a document outlives it, has one
// parser (pageParser) that reads each document in place and reuses its
// buffers for the next; the other modes keep values across documents
// and parse each into memory of its own.
//
// Each row is written once, as it is produced, into the page's Body
// (body.go): the rows joined by commas, in 64 KB chunks from a pool,
// which a server sends as they are, with Body.Size as the length, and
// then releases for the next page. For SELECT * over the document (with
// or without WHERE) the row is the stored bytes, never re-encoded. Four
// modes:
//
//   - Streaming (no ORDER BY, aggregate, GROUP BY or DISTINCT): rows are
//     emitted in source order until the page holds MaxItemCount rows, and
//     then a continuation is returned whenever the page is exactly full, even
//     if nothing remains (the next page is then empty without one); this is
//     what the Go SDK tests assert. The token holds the storage key to resume
//     strictly after. A document with several rows (JOIN) may straddle pages:
//     the token then holds the key of the document before it, the document's
//     key and the FROM/JOIN combination to resume at (an index per source,
//     the first combination that has not produced its row), and the next
//     page starts its loops there, so the rows before it are neither
//     returned again nor evaluated again. Rows still to skip for OFFSET and
//     rows returned for TOP/LIMIT travel in the token.
//
//   - ORDER BY: rows are totally ordered by (sort keys, storage key, row
//     index within the document). Each page scans the source once and keeps
//     a max-heap of the (rows still needed on this page + 1) smallest rows
//     strictly after the position in the token, so memory is bounded by the
//     page size; the extra row tells whether more remain, and a continuation
//     is returned only then. TOP/LIMIT shrink the heap to what is left. A
//     large OFFSET is skipped in passes of at most 1024 rows, each a scan.
//
//   - Materialized (aggregates, GROUP BY, DISTINCT): the whole result is
//     computed on every page (aggregates in constant memory, GROUP BY and
//     DISTINCT in memory proportional to the number of groups or distinct
//     rows) and the page is the slice at the offset held in the token. An
//     aggregate without GROUP BY is one row, so one page.
//
//   - No FROM: one evaluation, paged like materialized results.
//
// # Budget and cancellation
//
// Page takes the request's context and, in PageRequest.Budget, a bound on
// the page's execution time as Env.Elapsed measures it. The evaluator
// counts its work (meter.go): each document, each step of every FROM/JOIN
// loop, in the query and in its subqueries, and long IN lists; every
// thousand or so units it checks the context and the clock. The check sits
// in the loop that enumerates FROM/JOIN combinations, so it fires within
// one document too (a three-way JOIN over a 1,000-element array is 10⁹
// combinations in one document), and a cancelled request stops within
// about a thousand units of work. What the page then does depends on the
// mode:
//
//   - A cancelled context ends any page with the context's error.
//   - Streaming: the page returns the rows it has, with a continuation that
//     resumes at the document and FROM/JOIN combination where it stopped,
//     which may be a page with no rows at all when none passed WHERE. If it
//     completed no combination and no document (one row took the whole
//     budget), resuming would only stop there again, so Page returns a
//     *BudgetError instead.
//   - ORDER BY over an OrderedSource: the page returns the rows that are
//     final (those of runs read to their end, and of a sorted run as they
//     came) with a continuation after the last; with none, or over any other
//     source, where no row is final before the whole source has been read,
//     a *BudgetError with AllRows set.
//   - Materialized and no FROM: a *BudgetError with AllRows set; nothing of
//     the result is known before every row has been seen.
//
// # Limits
//
// Parse refuses a query text longer than MaxQueryLength characters, the
// checker more than MaxJoins JOIN clauses and IN lists of more than
// MaxInItems items, and CheckParameterCount more than MaxParameters
// parameters: the service's limits (limits.go), enforced before anything
// runs, as *Error values of Kind LimitError worded as the service words
// them. Bind matches parameters by name through a map and IndexHints drops
// duplicate IN values through a set, so the work before execution is
// linear in the size of the request.
//
// Tokens (token_codec.go) are versioned, carry a hash of the query text and
// the bound parameter values, and end in a CRC-32; anything malformed,
// altered or belonging to another query or parameter set is
// ErrBadContinuation. A token does not pin a snapshot: documents written
// between pages are seen or not according to where they fall relative to
// the resume position.
//
// # Sharing queries
//
// A Query is immutable once Parse returns it: the checker is the last to
// write its syntax tree (compiled LIKE patterns and regular expressions
// of constant arguments included), and evaluation keeps its state in the
// page's own context. One Query therefore serves any number of pages at
// once, each bound (Bind, BindComputed) to its own parameters and
// computed properties. Cache (cache.go) keeps Queries by text for a
// server, bounded by entries and by bytes of text, least recently used
// out first; TestCacheConcurrent runs one cache's queries of every mode
// from many goroutines with their own parameters (run it with -race).
//
// # Computed properties
//
// A container's computed properties (computed.go) are compiled once,
// with its definition (CompileComputed, which enforces the service's
// rules on them), and handed to BindComputed with each query over its
// items. The checker marks the member accesses of the outermost query's
// item (c.a, c["a"], c[@p], in subqueries too), and the plan records
// whether any of them names a computed property; only then does the
// evaluator resolve them (a query that reads none runs exactly as
// before, at the cost of a nil check per marked access). A computed
// property's value is its expression over the item, evaluated at most
// once per item, counted by the meter, and never seen by SELECT *, SELECT
// c or the stored bytes. The members the evaluator decodes are the
// query's with each computed property's name replaced by the members its
// expression reads. A definition's expression reads the stored item only:
// its accesses are never resolved as computed properties, so no
// evaluation reaches another definition or itself.
//
// # Index hints
//
// Plan.IndexHints (hints.go) names the top-level AND terms of the WHERE
// that only documents with certain values at a certain path can satisfy:
// path = constant, path IN (constants), the comparisons < <= > >= and
// BETWEEN against a constant, STARTSWITH(path, constant) (case-sensitive),
// IS_DEFINED(path) and ARRAY_CONTAINS(path, constant), where path is a
// property path from the root alias of a query over the whole document
// and a constant is a literal or parameter holding a JSON scalar. The
// engine may then hand Page a Source that yields only the documents its
// index lists for one hint, in index order; since the executor still
// evaluates the whole WHERE, the rows are the same, only their order
// where the query leaves it open (no ORDER BY) may differ. Continuations
// hold whatever keys the Source yields, so they resume the same access
// path; telling index and scan tokens apart is the engine's business.
//
// # Decisions
//
//   - Functions: positions and lengths in string functions count code
//     points. RegexMatch uses Go's RE2 syntax (no look-around or
//     backreferences; such patterns yield undefined) with the modifiers i, m,
//     s and x. FullTextContains, FullTextContainsAll and FullTextContainsAny
//     match case-insensitively on words (runs of letters and digits); a
//     multi-word term must appear as consecutive words; on a path of the
//     container's fullTextPolicy the words are the English analyzer's
//     (fulltext.go: no stop words, stemmed), elsewhere as written.
//     DocumentId returns the "id" of the object it is given. Date-times are
//     parsed from YYYY-MM-DD[Thh:mm[:ss[.fffffff]]][Z|±hh:mm] and always
//     formatted as YYYY-MM-DDThh:mm:ss.fffffffZ; ticks are 100 ns since the
//     Unix epoch; the current time is Env.Now, identical for every call in
//     a query, so the *Static functions equal the plain ones. REPLICATE
//     results are capped at 10,000 characters. The spatial functions
//     (ST_DISTANCE, ST_WITHIN, ST_INTERSECTS, ST_ISVALID, ST_ISVALIDDETAILED,
//     ST_AREA) work on GeoJSON Point, LineString, Polygon and MultiPolygon
//     on the WGS-84 ellipsoid (spatial.go: geodesic meters, areas through
//     authalic latitudes; edges straight in longitude/latitude for
//     containment and intersection). VectorDistance is in
//     functions_vector.go, FullTextScore and ORDER BY RANK in fulltext.go,
//     RRF in hybrid.go.
//   - Parameters the query refers to but the request lacks are undefined.
//     TOP, OFFSET and LIMIT given by a parameter must be non-negative
//     integers (Bind fails otherwise). TOP and OFFSET/LIMIT may be combined:
//     OFFSET applies first, then the smaller of TOP and LIMIT.
//   - A subquery in the FROM clause of the outermost query is rejected
//     unless the query counts the rows of a DISTINCT subquery, the
//     service's count of distinct values (dcount.go); subqueries in JOIN
//     and inside expressions are supported.
//   - Filter (patch conditions) is FROM source [WHERE expr]; a document
//     matches if any row satisfies the condition.
//
// # Testing
//
// Table tests cover the scanner, the parser and its error positions, the
// checker, every function, value ordering and the executor's paging over an
// in-memory Source (JOIN rows straddling pages, multi-key ORDER BY with
// ties, TOP/OFFSET/LIMIT across pages, tokens from another query).
// testdata/budget (TestBudget, datadriven) pages queries of every mode
// under budgets on a clock that moves a millisecond per read, with the
// meter's check interval shrunk, and checks that the pages together are
// one unbudgeted run's rows; meter_test.go also ends a 10⁹-combination
// JOIN by budget and by cancellation, the latter asserting that the
// evaluator reads its clock no more after the cancellation (no test
// measures wall time). limits_test.go pins each limit at and beyond it.
// testdata/computed (TestComputed) plays computed property definitions,
// the service's refusals among them, and every clause that reads them;
// FuzzComputed compiles and evaluates arbitrary definitions.
// FuzzParse and FuzzParseJSON (seed corpora in testdata/fuzz) check that no
// input panics or hangs and that ParseJSON and AppendJSON round-trip.
// BenchmarkSelectStar streams 5,000 1-KB documents through SELECT * FROM c.
package query

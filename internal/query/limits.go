package query

import (
	"strconv"
	"unicode/utf8"
)

// The service's limits on a query. Parse and Bind enforce them, so a
// query beyond one is refused before anything runs; each error is a
// *Error of Kind LimitError, worded as the service words it where its
// wording is known.

// MaxQueryLength is the longest query text, in characters. Azure Cosmos
// DB documents "Maximum length of SQL query: 512 KB" (Azure Cosmos DB
// service quotas, learn.microsoft.com/azure/cosmos-db/concepts-limits,
// "SQL query limits") and answers a longer text with 400 and "The SQL
// query text exceeded the maximum limit of 524288 characters." (error
// code SC3020; the .NET SDK's QueryPartitionProviderTests set
// maxSqlQueryInputLength to 524288 and assert this message).
const MaxQueryLength = 512 << 10

// MaxJoins is the most JOIN clauses a query may have, its subqueries'
// included: "Maximum JOINs per query: 10" (concepts-limits). The service
// answers more with 400 and "The SQL query exceeded the maximum number of
// joins. The allowed limit is 10." (code SC3002, as the emulator words it
// with its own limit of 5 in
// github.com/Azure/azure-cosmos-db-emulator-docker/issues/65).
const MaxJoins = 10

// MaxInItems is the most items an IN list may have:
// maxInExpressionItemsCount in the queryEngineConfiguration the service
// advertises at GET / (16000 in the account responses the SDKs' tests
// record; Ebb advertises the same). The service's wording for a longer
// list is not documented; Ebb's follows SC3002's.
const MaxInItems = 16000

// MaxParameters is the most parameters a query request may carry. The
// service documents no limit; Ebb's is twice MaxInItems, so that an IN
// list of parameters at the service's limit fits beside whatever other
// parameters the query has, while reading and binding them stays cheap.
const MaxParameters = 2 * MaxInItems

// checkLength refuses a query text longer than MaxQueryLength characters.
func checkLength(text string) error {
	if len(text) <= MaxQueryLength || utf8.RuneCountInString(text) <= MaxQueryLength {
		return nil
	}
	var l errorList
	l.add(LimitError, text, 0, "The SQL query text exceeded the maximum limit of "+strconv.Itoa(MaxQueryLength)+" characters.")
	return l.err()
}

// CheckParameterCount refuses a request with more than MaxParameters
// parameters; the engine calls it before it reads their values.
func CheckParameterCount(n int) error {
	if n <= MaxParameters {
		return nil
	}
	return &Error{Kind: LimitError, Line: 1, Col: 1,
		Msg: "The query has " + strconv.Itoa(n) + " parameters, more than the " + strconv.Itoa(MaxParameters) + " allowed."}
}

// Package discovery is the gateway's catalogue: one index of the workflows,
// capabilities and connections a model can find with search and read with
// describe, and the lexicon of terms it can look up. It builds both from
// the configuration and the compiled workflows once, at start, and answers
// searches from precomputed inverted indexes, so a search over tens of
// thousands of entries costs microseconds. It knows nothing of HTTP, MCP,
// scopes or links: the service layer renders its answers.
//
// This package must not import package gateway, httpapi or mcpadapter.
//
// # Search and its scoring
//
// A query is split into tokens: lower case, cut at every character that is
// not a letter or a digit ("github.list_issues" gives github, list and
// issues), without tokens of one character and without a few English stop
// words (a, an, and, the, of, to, ...). Each entry is tokenized the same way
// when the index is built. The score of an entry is the sum, over the
// distinct query tokens, of the weights of the fields in which the token
// occurs (each field counts once per token), plus a bonus when the whole
// query is the entry's id:
//
//	what matches                          weight
//	the whole query is the id (any case)    10  (ExactIDWeight)
//	a token of the id                        6  (IDTokenWeight)
//	a token of the title                     4  (TitleTokenWeight)
//	a token of an alias                      4  (AliasTokenWeight)
//	a token of a tag                         3  (TagTokenWeight)
//	a token of the description               1  (DescriptionTokenWeight)
//
// So "deploy" scores the example workflow deploy_pipeline (id token, title
// "Deploy Pipeline", tag deploy, and its description) 6+4+3+1 = 14.
//
// Entries that score 0 are left out. Results are ordered by score, highest
// first, then by id (byte order), so equal scores always come back in the
// same order; the limit defaults to 10 and is at most 100. An empty (or
// blank) query lists every entry of the requested kinds in id order, each
// with score 0; a query with no usable token and no exact id finds nothing.
//
// The lexicon is searched the same way with its own fields: the whole query
// being the term, one of its refs or one of its aliases 10, a term token 6,
// a ref or alias token 4, a bounded-context token 3, a definition token 1;
// ties are broken by term.
//
// # Lexicon
//
// Terms, refs and aliases are matched by config.TermKey: without regard to
// case or repeated spaces. A lookup of a ref or an alias answers the term
// that declares it. A term name always resolves to its own term, never as
// another term's alias.
//
// The lexicon has two layers: the configuration's terms, and an overlay of
// terms defined at run time (kept in the store by the service layer, so
// every replica and every restart sees them). An overlay term replaces the
// configuration's term of the same key; when two terms claim one alias, the
// overlay's claim wins, then the first term in key order.
package discovery

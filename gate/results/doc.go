// Package results is the results document, schema gradegate.results/v1: its
// types, the streamed writer and its spool of case rows, the reader, and
// the row checks that hold a document read back to the schema.
package results
